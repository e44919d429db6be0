#!/usr/bin/env bats
# tests/ipv6-host.bats - IPv6 as the host has it. On an IPv6-only host
# (hack/sandbox.sh's SANDBOX_IPV6_ONLY=1: no IPv4 address or route, the
# resolver on ::1) tapir as pasta, with and without -6, podman 5's default
# pasta line and tapir run start, and reach the host's loopback, a "remote"
# IPv6 address (fd19::1 on the sandbox's lo) and the host's resolver;
# podman 5.4 from the trixie root (tests/pasta.bash) publishes a port
# there, and rootlesskit 2.0.2 --net=pasta, which passes IPv4 options,
# starts (the drivers differ there: docs/engines.md). On a
# dual-stack host every forward keeps the client's family: an IPv6 client
# reaches a guest service that listens on IPv6 only, an IPv4 client one
# that listens on IPv4 only, and pasta's address options take IPv6 values
# (-a, -g, --dns-forward, --map-guest-addr, --map-host-loopback). Each
# pasta scenario runs with trixie's pasta too, as the reference
# (tests/pasta.bats); tapir run's have none.

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib
load trixie

setup_file() {
	trixie_setup ipv6-host
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

# pasta_ifname DRIVER: a forward bound to an address and an interface.
pasta_ifname() {
	run in_sandbox '
		bg_start_user p $1 --config-net -t "[::1]%lo/18080" \
			-- sh -c "$FAMILY_GUEST"
		wait_for 10 bash -c "ss -Hltn | grep -q :18080"
		echo "bound: $(ss -Hltn "sport = :18080" | awk "{print \$4}")"
		for i in 1 2 3 4 5 6 7 8 9 10; do
			out=$(timeout 3 socat -T2 - TCP6:[::1]:18080 </dev/null 2>/dev/null) &&
				[ -n "$out" ] && break
			sleep 0.3
		done
		echo "tcp6 [::1]: $out"
		bg_stop p
	' "$1"
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "bound: [::1]%lo:18080"
	has_line "tcp6 [::1]: tcp6"
}

@test "dual-stack host: -t ADDR%IF/PORT binds the forward to the interface too: tapir as pasta" {
	pasta_ifname "$TAPIR_BIN pasta"
}

@test "dual-stack host: -t ADDR%IF/PORT binds the forward to the interface too: trixie pasta (reference)" {
	pasta_ifname "$REF_PASTA"
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

# What podman 5.4 runs on the IPv6-only host, as the test user in the
# trixie root: a web server published on 18080 that listens on [::] with
# IPv6 only (busybox httpd binds :: as the sysctl says), and a second
# container's view: its copy of the host's IPv6, the resolvers podman
# wrote, the host through host.containers.internal and through a name
# that resolver answers for. Then, once the test tried the port, removal
# and what is left of it.
# shellcheck disable=SC2034 # used inside the sandbox
PODMAN6_SCENARIO='
podman import "$PT_DIR/rootfs.tar" "$IMG" >/dev/null
podman run -d --name web --sysctl net.ipv6.bindv6only=1 -p 18080:80 \
	"$IMG" sh -c "$SERVE" >/dev/null
podman run --rm "$IMG" sh -c "
	echo addr4: \$(ip -4 -o addr show | grep -vc \" lo \")
	echo addr6: \$(ip -6 -o addr show scope global | awk \"{print \\\$2, \\\$4}\")
	echo route6: \$(ip -6 route show default | awk \"{print \\\$1, \\\$2, \\\$3, \\\$4, \\\$5}\")
	echo resolv: \$(sed -n \"s/^nameserver //p\" /etc/resolv.conf | xargs)
	echo hci: \$(nc -w 3 host.containers.internal 18092 </dev/null 2>&1)
	echo dns: \$(nc -w 3 far.tapir.test 18092 </dev/null 2>&1)
" >"$PT_DIR/inside.txt" 2>&1 || true
podman exec web sh -c "wget -qO- http://127.0.0.1/ >/dev/null 2>&1 &&
	echo web 127.0.0.1: open || echo web 127.0.0.1: refused" \
	>>"$PT_DIR/inside.txt" 2>&1 || true
touch "$PT_DIR/ready"
for i in $(seq 900); do [ -e "$PT_DIR/go-on" ] && break; sleep 0.1; done
podman rm -f -t 0 web >/dev/null
'"$PODMAN_END"

# podman6 DRIVER: PODMAN6_SCENARIO with DRIVER as podman's pasta ("tapir"
# or "pasta", tests/pasta.bash's pt_engine), and from the host: the tap's
# holder and the published port from IPv6 and IPv4 clients. podman finds
# no usable resolver in the host's resolv.conf (::1 is loopback,
# fe80::1%lo scoped) and no IPv4 in the namespace for its --dns-forward
# 169.254.1.1, so it writes the public resolvers it falls back to; the
# first IPv6 one, 2001:4860:4860::8888, is put on the sandbox's lo here,
# where a resolver answers, so that the container's query stays inside.
podman6() {
	SANDBOX_IPV6_ONLY=1 run pt "$V6_HOST"'
		ip -6 addr add 2001:4860:4860::8888/128 dev lo nodad
		bg_start pubdns dnsmasq --no-daemon --port=53 \
			--listen-address=2001:4860:4860::8888 --bind-interfaces \
			--no-resolv --no-hosts --user=root \
			--address=/far.tapir.test/fd19::1
		wait_for 5 bash -c "ss -Hlun | grep -q \"\\[2001:4860:4860::8888\\]:53\""
		pt_engine "$1" "$2"
		pt_wait ready 120
		cat "$PT_DIR/inside.txt"
		echo "holder: $(pt_holder sbx0 | cut -d" " -f2 | xargs)"
		get() { curl -sS --max-time 5 "$1" 2>&1 | head -n 1; }
		for a in "[::1]" "[fd18::1]" 127.0.0.1; do
			echo "fwd $a: $(get "http://$a:18080/")"
		done
		pt_finish
	' "$DRIVER" "$PODMAN6_SCENARIO"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$(sed -n 's/^holder: //p' <<<"$output")" =~ ^$HOLDER_RE$ ]]
	has_line "addr4: 0"
	has_line "addr6: sbx0 fd18::1/64"
	has_line "route6: default via fd18::fe dev sbx0"
	has_line "resolv: 8.8.8.8 8.8.4.4 2001:4860:4860::8888 2001:4860:4860::8844"
	# podman names the host's address that the copy does not shadow.
	has_line "hci: far6"
	has_line "dns: far6"
	has_line "web 127.0.0.1: refused"
	has_line "fwd [::1]: container page"
	has_line "fwd [fd18::1]: container page"
	has_line "containers left: 0"
	has_line "drivers left: 0"
	has_line "user left: "
}

@test "IPv6-only host: podman 5.4 --network pasta (default) starts; host.containers.internal, DNS and -p to an IPv6-only service from IPv6 clients: tapir as pasta" {
	DRIVER=tapir HOLDER_RE=$PT_TAPIR_RE podman6
	# The forward takes IPv4 clients too, to the container's IPv6
	# address; pasta's listens on IPv6 only (docs/engines.md).
	has_line "fwd 127.0.0.1: container page"
}

@test "IPv6-only host: podman 5.4 --network pasta (default) starts; host.containers.internal, DNS and -p to an IPv6-only service from IPv6 clients: trixie pasta (reference)" {
	DRIVER=pasta HOLDER_RE=$PT_PASTA_RE podman6
	grep -q "^fwd 127.0.0.1: curl: (7) " <<<"$output"
}

# What runs inside rootlesskit's namespace on the IPv6-only host: once the
# tap is up, the layout rootlesskit gave it, the host's loopback through
# the namespace's (-T auto, pasta's default) and through the gateway,
# DNS through rootlesskit's 10.0.2.3, and a TCP server for the implicit
# port driver.
# shellcheck disable=SC2034 # used inside the sandbox
RK6_INSIDE=$RK_TAP_UP'
echo "route6: $(ip -6 route show default | wc -l)"
for a in 127.0.0.1 10.0.2.2; do
	echo "lo4 $a: $(timeout 3 socat -T2 - TCP4:$a:18085 </dev/null 2>&1)"
done
echo "lo6: $(timeout 3 socat -T2 - TCP6:[::1]:18090 </dev/null 2>&1)"
echo "dns: $(timeout 5 busybox nslookup -type=AAAA host.tapir.test 10.0.2.3 2>&1 |
	grep -c "^Address: *fd18::1$")"
socat TCP4-LISTEN:8081,fork,reuseaddr SYSTEM:"echo from-namespace" &
touch "$SCEN_DIR/inside.ready"
sleep 600
'

export RK6_INSIDE

# rk6 DRIVER: rootlesskit 2.0.2 --net=pasta --port-driver=implicit on the
# IPv6-only host, with DRIVER as its pasta (it passes -a 10.0.2.100 -n 24
# -g 10.0.2.2 --dns-forward 10.0.2.3 --ipv4-only and configures tap0
# itself); then the published port, and what DRIVER makes of the same
# options with --config-net.
rk6() {
	SANDBOX_IPV6_ONLY=1 run in_sandbox "$V6_HOST"'
		mkdir -m 0777 "$SCEN_DIR/tmp" "$SCEN_DIR/bin"
		ln -s "$1" "$SCEN_DIR/bin/pasta"
		bg_start lo4 socat TCP4-LISTEN:18085,bind=127.0.0.1,fork,reuseaddr \
			SYSTEM:"echo host-lo4"
		wait_for 5 tcp_listening 18085
		bg_start_user rk env TMPDIR="$SCEN_DIR/tmp" "$RK2" --net=pasta \
			--pasta-binary="$SCEN_DIR/bin/pasta" --mtu=65520 \
			--port-driver=implicit -- sh -c "$RK6_INSIDE"
		wait_for 30 test -e "$SCEN_DIR/inside.ready"
		cat "$SCEN_DIR/rk.log"
		echo "holder: $(tap_holders tap0 | cut -d" " -f2)"
		wait_for 5 tcp_listening 8081
		echo "fwd tcp: $(socat -T2 - TCP4:127.0.0.1:8081 </dev/null 2>&1)"
		bg_stop rk
		wait_for 5 bash -c "! ps -u $TAPIR_TEST_USER -o pid= | grep -q ." || true
		echo "left: $(ps -u "$TAPIR_TEST_USER" -o comm= | xargs)"
		as_user timeout -k 1 10 "$SCEN_DIR/bin/pasta" --config-net -a 10.0.2.100 -n 24 \
			-g 10.0.2.2 --ipv4-only -- sh -c "echo config-net: \
				\$(ip -4 -o addr show scope global | awk \"{print \\\$4}\")" 2>&1
	' "$DRIVER"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$(sed -n 's/^holder: //p' <<<"$output")" =~ ^$(readlink -f "$DRIVER")(\.avx2)?$ ]]
	# rootlesskit's own layout, IPv4 only, whatever its pasta does.
	has_line "addr4: 10.0.2.100/24"
	has_line "route4: default via 10.0.2.2 dev tap0"
	has_line "route6: 0"
	has_line "lo4 127.0.0.1: host-lo4"
	has_line "fwd tcp: from-namespace"
	has_line "left: "
}

@test "IPv6-only host: rootlesskit 2.0.2 --net=pasta starts; its -a layout stands, 10.0.2.2 and -T auto reach the host's 127.0.0.1, DNS through 10.0.2.3: tapir as pasta" {
	DRIVER=$TAPIR_BIN rk6
	has_line "lo4 10.0.2.2: host-lo4"
	has_line "dns: 1"
	# --ipv4-only: nothing on the namespace's ::1.
	grep -q "^lo6: .*Connection refused" <<<"$output"
	has_line "config-net: 10.0.2.100/24"
}

@test "IPv6-only host: rootlesskit 2.0.2 --net=pasta starts; pasta's local mode: -T auto reaches the host's 127.0.0.1 and ::1, not 10.0.2.2 nor DNS: trixie pasta (reference)" {
	DRIVER=$REF_PASTA rk6
	# With no IPv4 route pasta drops -a, -g and --dns-forward for its
	# local mode, 169.254.2.1/16 via 169.254.2.2 with IPv6 on despite
	# --ipv4-only; rootlesskit's own 10.0.2.100/24 then has no gateway
	# nor resolver behind it (docs/engines.md).
	grep -q "^lo4 10.0.2.2: .*Connection refused" <<<"$output"
	has_line "dns: 0"
	has_line "lo6: host-lo6"
	has_line "config-net: 169.254.2.1/16"
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
