#!/usr/bin/env bats
# tests/ipv6-host.bats - IPv6 as the host has it. On an IPv6-only host
# (hack/sandbox.sh's SANDBOX_IPV6_ONLY=1: no IPv4 address or route, the
# resolver on ::1) tapir as pasta, with and without -6, podman 5's default
# pasta line and tapir run start, and reach the host's loopback, a "remote"
# IPv6 address (fd19::1 on the sandbox's lo) and the host's resolver. On a
# dual-stack host every forward keeps the client's family: an IPv6 client
# reaches a guest service that listens on IPv6 only, an IPv4 client one
# that listens on IPv4 only, and pasta's address options take IPv6 values
# (-a, -g, --dns-forward, --map-guest-addr, --map-host-loopback). Each
# pasta scenario runs with trixie's pasta too, as the reference
# (tests/pasta.bats); tapir run's have none.

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib

REF_PASTA=/var/cache/tapir/trixie/passt/pasta

setup_file() {
	[[ -x "$REF_PASTA" ]] || {
		echo "ipv6-host: $REF_PASTA is missing (hack/install-deps.sh runs hack/trixie-peers.sh)" >&2
		return 1
	}
	export REF_PASTA
}

# What the IPv6-only host serves: a TCP service on its ::1 only, one on the
# "remote" fd19::1, and a resolver on ::1 that knows host.tapir.test.
# shellcheck disable=SC2034 # used inside the sandbox
V6_HOST='
ip -6 addr add fd19::1/128 dev lo nodad
bg_start lo6 socat TCP6-LISTEN:18090,bind=[::1],ipv6only=1,fork,reuseaddr \
	SYSTEM:"echo host-lo6"
bg_start far6 socat TCP6-LISTEN:18092,bind=[fd19::1],fork,reuseaddr \
	SYSTEM:"echo far6"
bg_start dns dnsmasq --no-daemon --port=53 --listen-address=::1 \
	--bind-interfaces --no-resolv --no-hosts --user=root \
	--address=/host.tapir.test/fd18::1
wait_for 5 bash -c "ss -Hltn | grep -q \"\\[fd19::1\\]:18092\" &&
	ss -Hlun | grep -q \"\\[::1\\]:53\""
'

# What the guest checks on the IPv6-only host; $1 is the gateway that
# stands for the host's loopback.
# shellcheck disable=SC2034 # used inside the sandbox
V6_GUEST='
gw=$1
echo "addr4: $(ip -4 -o addr show scope global | wc -l)"
echo "route6: $(ip -6 route show default | cut -d" " -f1-5)"
echo "gw: $(timeout 3 socat -T2 - TCP6:[$gw]:18090 </dev/null 2>&1)"
echo "far: $(timeout 3 socat -T2 - TCP6:[fd19::1]:18092 </dev/null 2>&1)"
echo "dns: $(timeout 5 busybox nslookup -type=AAAA host.tapir.test "$gw" 2>&1 |
	grep -c "^Address: *fd18::1$")"
'

export V6_GUEST

# v6only_pasta DRIVER [OPTION...]: DRIVER --config-net on the IPv6-only host.
# DNS through the gateway is checked unless NO_DNS=1: trixie's pasta sends
# it to resolv.conf's first nameserver, the sandbox's fe80::1%lo, which
# nothing reaches, where tapir passes over it to ::1 (docs/engines.md).
v6only_pasta() {
	SANDBOX_IPV6_ONLY=1 run in_sandbox "$V6_HOST"'
		drv=$1
		shift
		as_user timeout -k 1 20 $drv "$@" --config-net -- \
			sh -c "$V6_GUEST" guest fd18::fe
		echo "rc: $?"
	' "$@"
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "rc: 0"
	has_line "addr4: 0"
	has_line "route6: default via fd18::fe dev sbx0"
	has_line "gw: host-lo6"
	has_line "far: far6"
	[ "${NO_DNS:-}" = 1 ] || has_line "dns: 1"
}

@test "IPv6-only host: pasta --config-net starts without IPv4; the gateway, a remote IPv6 address and the resolver answer: tapir as pasta" {
	v6only_pasta "$TAPIR_BIN pasta"
	has_line "tapir: the host has no IPv4 default route: IPv6 only, as with -6"
}

@test "IPv6-only host: pasta --config-net starts without IPv4; the gateway, a remote IPv6 address and the resolver answer: trixie pasta (reference)" {
	NO_DNS=1 v6only_pasta "$REF_PASTA"
}

@test "IPv6-only host: pasta -6 --config-net: tapir as pasta" {
	v6only_pasta "$TAPIR_BIN pasta" -6
}

@test "IPv6-only host: pasta -6 --config-net: trixie pasta (reference)" {
	NO_DNS=1 v6only_pasta "$REF_PASTA" -6
}

# v6only_podman DRIVER: podman 5's default pasta line (as tests/pasta.bats
# podman_default runs it) on the IPv6-only host: it starts, its IPv4-only
# options aside, and the namespace reaches a remote IPv6 address.
v6only_podman() {
	SANDBOX_IPV6_ONLY=1 run in_sandbox "$V6_HOST"'
		holder=$(userns_holder)
		as_user $1 --config-net --dns-forward 169.254.1.1 \
			-t none -u none -T none -U none --no-map-gw --quiet \
			--map-guest-addr 169.254.1.2 "$holder" && echo "rc: 0"
		nsrun "$holder" sh -c "$V6_GUEST" guest fd18::fe
	' "$1"
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "rc: 0"
	has_line "addr4: 0"
	has_line "route6: default via fd18::fe dev sbx0"
	has_line "far: far6"
}

@test "IPv6-only host: podman 5's default pasta line starts, the namespace reaches IPv6: tapir as pasta" {
	v6only_podman "$TAPIR_BIN pasta"
}

@test "IPv6-only host: podman 5's default pasta line starts, the namespace reaches IPv6: trixie pasta (reference)" {
	v6only_podman "$REF_PASTA"
}

@test "IPv6-only host: tapir run turns IPv6 on by itself; fe80::2, a remote IPv6 address and DNS through fd00::3 answer; -p reaches an IPv6-only service" {
	SANDBOX_IPV6_ONLY=1 run in_sandbox "$V6_HOST"'
		bg_start_user run "$TAPIR_BIN" run -p 18080:18080 -- sh -c "
			socat TCP6-LISTEN:18080,ipv6only=1,fork,reuseaddr \
				SYSTEM:\"echo guest6\" &
			sh -c \"\$1\" guest fd00::2 >\"$SCEN_DIR/guest.txt\"
			sleep 20" guest "$V6_GUEST"
		wait_for 10 grep -q "^dns:" "$SCEN_DIR/guest.txt"
		cat "$SCEN_DIR/guest.txt"
		for addr in "[::1]" "[fd18::1]"; do
			echo "fwd $addr: $(timeout 3 socat -T2 - TCP6:$addr:18080 </dev/null 2>&1)"
		done
		bg_stop run
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "addr4: 1"
	grep -q "^route6: default via fe80::2 dev tap0" <<<"$output"
	has_line "gw: host-lo6"
	has_line "far: far6"
	has_line "dns: 1"
	has_line "fwd [::1]: guest6"
	has_line "fwd [fd18::1]: guest6"
}

# What the guest serves on the dual-stack host: TCP and UDP, each once on
# IPv6 only and once on IPv4 only.
# shellcheck disable=SC2034 # used inside the sandbox
FAMILY_GUEST='
socat TCP6-LISTEN:18080,ipv6only=1,fork,reuseaddr SYSTEM:"echo tcp6" &
socat TCP4-LISTEN:18083,fork,reuseaddr SYSTEM:"echo tcp4" &
socat UDP6-RECVFROM:18081,ipv6only=1,fork SYSTEM:"echo udp6" &
socat UDP4-RECVFROM:18084,fork SYSTEM:"echo udp4" &
sleep 30
'

# What the host's clients try: each service from its own family, at the
# host's loopback and at its address on sbx0. A service is retried for a
# while: the guest's servers start after the forwards.
# shellcheck disable=SC2034 # used inside the sandbox
FAMILY_CLIENTS='
try() {
	local out i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		out=$(timeout 3 "$@" 2>/dev/null) && [[ -n "$out" ]] && break
		sleep 0.3
	done
	echo "$out"
}
for a in "[::1]" "[fd18::1]"; do
	echo "tcp6 $a: $(try socat -T2 - TCP6:$a:18080 </dev/null)"
	echo "udp6 $a: $(echo x | try socat -T1 - UDP6:$a:18081)"
done
for a in 127.0.0.1 198.18.0.1; do
	echo "tcp4 $a: $(try socat -T2 - TCP4:$a:18083 </dev/null)"
	echo "udp4 $a: $(echo x | try socat -T1 - UDP4:$a:18084)"
done
'

export FAMILY_GUEST FAMILY_CLIENTS

# family_checks: what every forward form must show.
family_checks() {
	echo "$output"
	[ "$status" -eq 0 ]
	local a
	for a in "[::1]" "[fd18::1]"; do
		has_line "tcp6 $a: tcp6"
		has_line "udp6 $a: udp6"
	done
	for a in 127.0.0.1 198.18.0.1; do
		has_line "tcp4 $a: tcp4"
		has_line "udp4 $a: udp4"
	done
}

# pasta_family DRIVER: -t and -u forwards on every address, both families.
pasta_family() {
	run in_sandbox '
		bg_start_user p $1 --config-net -t 18080,18083 -u 18081,18084 \
			-- sh -c "$FAMILY_GUEST"
		wait_for 10 bash -c "ss -Hltn | grep -q :18083"
		eval "$FAMILY_CLIENTS"
		bg_stop p
	' "$1"
	family_checks
}

@test "dual-stack host: -t and -u reach an IPv6-only guest service from IPv6 clients, an IPv4-only one from IPv4 clients: tapir as pasta" {
	pasta_family "$TAPIR_BIN pasta"
}

@test "dual-stack host: -t and -u reach an IPv6-only guest service from IPv6 clients, an IPv4-only one from IPv4 clients: trixie pasta (reference)" {
	pasta_family "$REF_PASTA"
}

@test "dual-stack host: -t auto reaches an IPv6-only guest service from IPv6 clients, an IPv4-only one from IPv4 clients: tapir as pasta" {
	run in_sandbox '
		bg_start_user p "$TAPIR_BIN" pasta --config-net -t auto -u auto \
			-- sh -c "$FAMILY_GUEST"
		wait_for 10 bash -c "ss -Hltn | grep -q :18083 &&
			ss -Hlun | grep -q :18084"
		eval "$FAMILY_CLIENTS"
		bg_stop p
	'
	family_checks
}

@test "dual-stack host: tapir run -6 -p and the API's add_hostfwd keep the client's family" {
	run in_sandbox '
		api="$SCEN_DIR/api.sock"
		bg_start_user r "$TAPIR_BIN" run -6 -a "$api" -p 18080:18080 \
			-p 18084:18084/udp -- sh -c "$FAMILY_GUEST"
		wait_for 10 test -S "$api"
		for f in "tcp 0.0.0.0 18083" "udp :: 18081"; do
			set -- $f
			as_user "$TAPIR_BIN" api "$api" "{\"execute\":\"add_hostfwd\",\"arguments\":{\"proto\":\"$1\",\"host_addr\":\"$2\",\"host_port\":$3,\"guest_port\":$3}}"
		done
		eval "$FAMILY_CLIENTS"
		bg_stop r
	'
	family_checks
}

# What -T and -U reach on the dual-stack host: a TCP service on the host's
# ::1 only, one on its 127.0.0.1 only, and a UDP one on ::1 only, each
# asked for from the namespace's loopback of its own family.
# shellcheck disable=SC2034 # used inside the sandbox
NS_LOOPBACK='
bg_start h6 socat TCP6-LISTEN:18082,bind=[::1],ipv6only=1,fork,reuseaddr \
	SYSTEM:"echo host6"
bg_start h4 socat TCP4-LISTEN:18083,bind=127.0.0.1,fork,reuseaddr \
	SYSTEM:"echo host4"
bg_start u6 socat UDP6-RECVFROM:18085,bind=[::1],ipv6only=1,fork \
	SYSTEM:"echo udp6"
wait_for 5 bash -c "ss -Hltn | grep -q :18083 && ss -Hlun | grep -q :18085"
as_user timeout -k 1 20 $1 --config-net $2 -- sh -c "
	sleep 1
	echo \"tcp [::1]: \$(timeout 3 socat -T2 - TCP6:[::1]:18082 </dev/null 2>&1)\"
	echo \"tcp 127.0.0.1: \$(timeout 3 socat -T2 - TCP4:127.0.0.1:18083 </dev/null 2>&1)\"
	echo \"udp [::1]: \$(echo x | timeout 3 socat -T2 - UDP6:[::1]:18085 2>&1)\""
'

# ns_loopback DRIVER ARGS: NS_LOOPBACK's checks.
ns_loopback() {
	run in_sandbox "$NS_LOOPBACK" "$@"
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "tcp [::1]: host6"
	has_line "tcp 127.0.0.1: host4"
	has_line "udp [::1]: udp6"
}

@test "dual-stack host: -T and -U answer on the namespace's ::1 too, and reach the host's loopback of the client's family: tapir as pasta" {
	ns_loopback "$TAPIR_BIN pasta" "-T 18082,18083 -U 18085"
}

@test "dual-stack host: -T and -U answer on the namespace's ::1 too, and reach the host's loopback of the client's family: trixie pasta (reference)" {
	ns_loopback "$REF_PASTA" "-T 18082,18083 -U 18085"
}

@test "dual-stack host: -T auto and -U auto answer on the namespace's ::1 for what the host binds on ::1 or ::: tapir as pasta" {
	ns_loopback "$TAPIR_BIN pasta" "-T auto -U auto"
}

# What the dual-stack host serves for pasta's IPv6 address options: a TCP
# service on its ::1 only, one on its own fd18::1 only, and a resolver on
# 127.0.0.1 and ::1 that knows host.tapir.test.
# shellcheck disable=SC2034 # used inside the sandbox
V6_OPTS='
bg_start lo6 socat TCP6-LISTEN:18090,bind=[::1],ipv6only=1,fork,reuseaddr \
	SYSTEM:"echo host-lo6"
bg_start own6 socat TCP6-LISTEN:18091,bind=[fd18::1],ipv6only=1,fork,reuseaddr \
	SYSTEM:"echo host-own6"
bg_start dns dnsmasq --no-daemon --port=53 --listen-address=127.0.0.1 \
	--listen-address=::1 --bind-interfaces --no-resolv --no-hosts \
	--user=root --address=/host.tapir.test/fd18::1
wait_for 5 bash -c "ss -Hltn | grep -q :18091 && ss -Hlun | grep -q \"\\[::1\\]:53\""
as_user timeout -k 1 20 $1 --config-net $2 -- bash -c "$V6_OPTS_GUEST" guest "$3" "${4:-}"
'

# What the guest shows: its global addresses and IPv6 default route, what
# each [ADDR]:PORT of $1 answers, and whether a raw query for
# host.tapir.test/AAAA over UDP and TCP to each address of $2 is answered.
# shellcheck disable=SC2034 # used inside the sandbox
V6_OPTS_GUEST='
ip -o addr show scope global | awk "{print \"addr:\", \$4}"
echo "route6: $(ip -6 route show default | cut -d" " -f1-3)"
for t in $1; do
	echo "$t: $(timeout 3 socat -T2 - TCP6:$t </dev/null 2>&1 |
		grep -o "host-.*\|refused")"
done
q="\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00"
q+="\x04host\x05tapir\x04test\x00\x00\x1c\x00\x01"
for a in $2; do
	for p in udp tcp; do
		if [ $p = tcp ]; then l="\x00\x21"; else l=; fi
		n=$(printf "$l$q" | timeout 3 socat -T2 - ${p^^}6:[$a]:53 |
			od -An -tx1 | tr -d " \n" | grep -c "fd180*1$")
		echo "dns $p $a: $n"
	done
done
'

export V6_OPTS_GUEST

# v6_opts DRIVER ARGS TRIES [DNS]: V6_OPTS with DRIVER --config-net ARGS.
v6_opts() {
	run in_sandbox "$V6_OPTS" "$@"
	echo "$output"
	[ "$status" -eq 0 ]
}

# v6_given DRIVER: -a and -g of IPv6.
v6_given() {
	v6_opts "$1" "-a fd00::5 -g fd00::1" "[fd00::1]:18090 [fd18::1]:18091"
	has_line "addr: 198.18.0.1/24"
	has_line "addr: fd00::5/64"
	has_line "route6: default via fd00::1"
	has_line "[fd00::1]:18090: host-lo6"
	has_line "[fd18::1]:18091: host-own6"
}

@test "dual-stack host: IPv6 -a and -g give the guest its own /64 and gateway, which reaches the host's ::1; the host's own address is no longer shadowed: tapir as pasta" {
	v6_given "$TAPIR_BIN pasta"
}

@test "dual-stack host: IPv6 -a and -g give the guest its own /64 and gateway, which reaches the host's ::1; the host's own address is no longer shadowed: trixie pasta (reference)" {
	v6_given "$REF_PASTA"
}

# v6_only_given DRIVER: -6 and -a alone, the host's gateway kept.
v6_only_given() {
	v6_opts "$1" "-6 -a fd00::5" "[fd18::fe]:18090"
	has_line "addr: fd00::5/64"
	! grep -q "^addr: 198" <<<"$output"
	has_line "route6: default via fd18::fe"
	has_line "[fd18::fe]:18090: host-lo6"
}

@test "dual-stack host: -6 and an IPv6 -a alone: the host's gateway, outside the prefix, still reaches the host's ::1: tapir as pasta" {
	v6_only_given "$TAPIR_BIN pasta"
}

@test "dual-stack host: -6 and an IPv6 -a alone: the host's gateway, outside the prefix, still reaches the host's ::1: trixie pasta (reference)" {
	v6_only_given "$REF_PASTA"
}

# v6_maps DRIVER [ARGS]: --map-guest-addr, --dns-forward and
# --map-host-loopback of IPv6. trixie's pasta sends IPv6 DNS to
# resolv.conf's first IPv6 nameserver, the sandbox's unreachable
# fe80::1%lo: its test names ::1 with --dns-host.
v6_maps() {
	v6_opts "$1" "--map-guest-addr fd00::99 --dns-forward fd00::53 \
		--map-host-loopback fd00::2 ${2:-}" \
		"[fd00::99]:18091 [fd00::99]:18090 [fd00::2]:18090 [fd18::fe]:18090" \
		fd00::53
	has_line "[fd00::99]:18091: host-own6"
	has_line "[fd00::99]:18090: refused"
	has_line "[fd00::2]:18090: host-lo6"
	has_line "[fd18::fe]:18090: "
	has_line "dns udp fd00::53: 1"
	has_line "dns tcp fd00::53: 1"
}

@test "dual-stack host: IPv6 --map-guest-addr reaches the host's own address, --dns-forward its resolver over UDP and TCP, --map-host-loopback its ::1 in the gateway's place: tapir as pasta" {
	v6_maps "$TAPIR_BIN pasta"
}

@test "dual-stack host: IPv6 --map-guest-addr reaches the host's own address, --dns-forward its resolver over UDP and TCP, --map-host-loopback its ::1 in the gateway's place: trixie pasta (reference)" {
	v6_maps "$REF_PASTA" "--dns-host ::1"
}
