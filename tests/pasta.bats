#!/usr/bin/env bats
# tests/pasta.bats - tapir run as pasta. Debian 13's rootlesskit 2.0.2
# (--net=pasta, port drivers none and implicit) runs, as the test user,
# tapir through a link named pasta, and then trixie's own pasta (built from
# its source package by hack/trixie-peers.sh) through the same checks, as
# the reference. Then pasta's lifecycle as podman relies on it (the first
# process returns once the interface is configured, --pid, no stdio held,
# exit when the netns file or the PID goes), and bad command lines.
#
# podman 5.4 and Docker 26 are not run here yet (they need the trixie
# root); docs/engines.md says so.

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib

TRIXIE=/var/cache/tapir/trixie
RK2=$TRIXIE/rootlesskit/usr/bin/rootlesskit
REF_PASTA=$TRIXIE/passt/pasta

setup_file() {
	[[ -x "$RK2" && -x "$REF_PASTA" ]] || {
		echo "pasta: $RK2 or $REF_PASTA is missing (hack/install-deps.sh runs hack/trixie-peers.sh)" >&2
		return 1
	}
	head -c 100M /dev/urandom >"$BATS_FILE_TMPDIR/big"
	chmod 0644 "$BATS_FILE_TMPDIR/big"
	chmod 0755 "$BATS_FILE_TMPDIR"
	export PASTA_BIG=$BATS_FILE_TMPDIR/big RK2 REF_PASTA
}

# What runs inside rootlesskit's namespace, as the test user: waits for
# the tap's carrier (rootlesskit does not wait for the driver), checks
# the paths out (the host's loopback-only web server through -T auto,
# pasta's default, too), starts a TCP and a UDP server for the implicit
# port driver, and says so in $SCEN_DIR/inside.ready.
# shellcheck disable=SC2034 # used inside the sandbox
INSIDE='
	i=0
	until ip link show tap0 | grep -q LOWER_UP || [ $i -ge 50 ]; do
		sleep 0.1; i=$((i + 1))
	done
	echo "addr4: $(ip -4 -o addr show dev tap0 | awk "{print \$4}" | xargs)"
	echo "route4: $(ip -4 route show default | sed "s/ *\$//")"
	ping -c1 -W2 "$SANDBOX_HOST_IP4" >/dev/null && echo "ping: ok"
	echo "http: $(curl -sS --max-time 5 "http://$SANDBOX_HOST_IP4:8080/")"
	echo "dns: $(curl -sS --max-time 5 "http://host.tapir.test:8080/")"
	echo "udp: $(echo tapir-udp | socat -T2 - "UDP4:$SANDBOX_HOST_IP4:5353")"
	echo "host lo: $(curl -sS --max-time 5 "http://127.0.0.1:8085/")"
	echo "big: $(curl -sS --max-time 60 "http://$SANDBOX_HOST_IP4:8080/big" | sha256sum | cut -d" " -f1)"
	socat TCP4-LISTEN:8081,fork,reuseaddr SYSTEM:"echo from-namespace" &
	socat -T2 UDP4-RECVFROM:8082,fork EXEC:cat &
	touch "$SCEN_DIR/inside.ready"
	sleep 600
'

# rk_pasta DRIVER PORT_DRIVER: rootlesskit 2.0.2 --net=pasta with DRIVER
# as the pasta binary, the checks above inside, then from the host: the
# published ports (implicit), the tap's holder, and what is left after
# rootlesskit goes.
rk_pasta() {
	run in_sandbox '
		mkdir -m 0777 "$SCEN_DIR/tmp" "$SCEN_DIR/bin"
		ln -s "$1" "$SCEN_DIR/bin/pasta"
		nginx_start web "$SANDBOX_HOST_IP4:8080" 127.0.0.1:8085
		ln "$PASTA_BIG" "$SCEN_DIR/web/www/big" 2>/dev/null ||
			cp "$PASTA_BIG" "$SCEN_DIR/web/www/big"
		echo "want: $(sha256sum <"$PASTA_BIG" | cut -d" " -f1)"
		bg_start dnsmasq dnsmasq --no-daemon --port=53 \
			--listen-address=127.0.0.1 --bind-interfaces --no-resolv \
			--no-hosts --user=root \
			--address="/host.tapir.test/$SANDBOX_HOST_IP4"
		bg_start udpecho socat -T5 "UDP4-RECVFROM:5353,bind=$SANDBOX_HOST_IP4,fork" EXEC:cat
		wait_for 5 bash -c "ss -Hlun | grep -q 127.0.0.1:53"
		bg_start_user rk env TMPDIR="$SCEN_DIR/tmp" "$RK2" --net=pasta \
			--pasta-binary="$SCEN_DIR/bin/pasta" --mtu=65520 \
			--disable-host-loopback --port-driver="$2" \
			-- sh -c "$3"
		wait_for 90 test -e "$SCEN_DIR/inside.ready"
		cat "$SCEN_DIR/rk.log"
		echo "holder: $(tap_holders tap0 | cut -d" " -f2)"
		if [ "$2" = implicit ]; then
			wait_for 5 tcp_listening 8081
			echo "fwd tcp: $(socat -T2 - TCP4:127.0.0.1:8081 </dev/null)"
			wait_for 5 bash -c "ss -Hlun | grep -q :8082"
			echo "fwd udp: $(echo back | socat -T2 - UDP4:127.0.0.1:8082)"
		else
			sleep 2
			echo "listening 8081: $(ss -Hltn "sport = :8081" | wc -l)"
		fi
		bg_stop rk
		sleep 1
		echo "left: $(ps -u "$TAPIR_TEST_USER" -o comm= | xargs)"
	' "$DRIVER" "$PORT_DRIVER" "$INSIDE"
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "addr4: 10.0.2.100/24"
	has_line "route4: default via 10.0.2.2 dev tap0"
	has_line "ping: ok"
	has_line "http: tapir test page"
	has_line "dns: tapir test page"
	has_line "udp: tapir-udp"
	# -T auto, pasta's default: rootlesskit passes no -T.
	has_line "host lo: tapir test page"
	grep -qx "big: $(sed -n 's/^want: //p' <<<"$output")" <<<"$output"
	has_line "holder: $(readlink -f "$DRIVER")"
	has_line "left: "
	if [[ "$PORT_DRIVER" == implicit ]]; then
		has_line "fwd tcp: from-namespace"
		has_line "fwd udp: back"
	else
		has_line "listening 8081: 0"
	fi
}

@test "rootlesskit 2.0.2 --net=pasta --port-driver=implicit: tapir as pasta" {
	DRIVER=$TAPIR_BIN PORT_DRIVER=implicit rk_pasta
}

@test "rootlesskit 2.0.2 --net=pasta --port-driver=none: tapir as pasta" {
	DRIVER=$TAPIR_BIN PORT_DRIVER=none rk_pasta
}

@test "rootlesskit 2.0.2 --net=pasta --port-driver=implicit: trixie pasta (reference)" {
	DRIVER=$REF_PASTA PORT_DRIVER=implicit rk_pasta
}

@test "rootlesskit 2.0.2 --net=pasta --port-driver=none: trixie pasta (reference)" {
	DRIVER=$REF_PASTA PORT_DRIVER=none rk_pasta
}

# podman_default DRIVER: podman 5's default command line (no -a: the
# namespace copies the host's outbound interface, sbx0), with a PID for
# --netns. Checks the copy, that 169.254.1.2 reaches the host's own
# address but not what listens on its loopback only, a neighbour in the
# copied subnet, DNS through 169.254.1.1, and ping.
podman_default() {
	run in_sandbox '
		mkdir -m 0777 "$SCEN_DIR/bin"
		ln -s "$1" "$SCEN_DIR/bin/pasta"
		ip addr add 198.18.0.7/24 dev sbx1
		nginx_start web "$SANDBOX_HOST_IP4:8080" 127.0.0.1:8081 198.18.0.7:8080
		bg_start dnsmasq dnsmasq --no-daemon --port=53 \
			--listen-address=127.0.0.1 --bind-interfaces --no-resolv \
			--no-hosts --user=root \
			--address="/host.tapir.test/$SANDBOX_HOST_IP4"
		wait_for 5 bash -c "ss -Hlun | grep -q 127.0.0.1:53"
		holder=$(userns_holder)
		as_user "$SCEN_DIR/bin/pasta" --config-net --dns-forward 169.254.1.1 \
			-t none -u none -T none -U none --no-map-gw --quiet \
			--map-guest-addr 169.254.1.2 "$holder" && echo "rc: 0"
		in_ns() { nsrun "$holder" "$@"; }
		echo "ifname: $(in_ns ip -o link show | awk -F": " "\$2 != \"lo\" {print \$2}")"
		echo "addr4: $(in_ns ip -4 -o addr show dev sbx0 | awk "{print \$4}")"
		echo "route4: $(in_ns ip -4 route show default | sed "s/ *\$//")"
		echo "$(in_ns ip -o link show dev sbx0 | grep -o "mtu [0-9]*" | sed "s/ /: /")"
		echo "host: $(in_ns curl -sS --max-time 3 http://169.254.1.2:8080/ 2>&1)"
		in_ns curl -sS --max-time 3 http://169.254.1.2:8081/ >/dev/null 2>&1 ||
			echo "host loopback: refused"
		echo "neighbour: $(in_ns curl -sS --max-time 3 http://198.18.0.7:8080/ 2>&1)"
		echo "dns: $(in_ns busybox nslookup host.tapir.test 169.254.1.1 2>&1 | grep -c "Address.*$SANDBOX_HOST_IP4")"
		in_ns ping -c1 -W2 169.254.1.2 >/dev/null && echo "ping: ok"
	' "$DRIVER"
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "rc: 0"
	has_line "ifname: sbx0"
	has_line "addr4: 198.18.0.1/24"
	has_line "route4: default via 198.18.0.254 dev sbx0"
	has_line "mtu: 65520"
	has_line "host: tapir test page"
	has_line "host loopback: refused"
	has_line "neighbour: tapir test page"
	has_line "dns: 1"
	has_line "ping: ok"
}

@test "podman 5's default pasta line: the host's interface copied, --map-guest-addr, DNS: tapir as pasta" {
	DRIVER=$TAPIR_BIN podman_default
}

@test "podman 5's default pasta line: the host's interface copied, --map-guest-addr, DNS: trixie pasta (reference)" {
	DRIVER=$REF_PASTA podman_default
}

# podman's command line for `--network pasta:-a,...` (the layout given,
# so tapir and pasta agree on it), with the target and --pid appended.
PODMAN_ARGS='--config-net -a 10.0.2.100 -n 24 -g 10.0.2.2 --dns-forward 10.0.2.3 -m 1500 -t none -u none -T none -U none --no-map-gw --quiet'

@test "pasta mode: the first process exits 0 once tap0 is configured; --pid; no stdio held; exit with the PID" {
	run in_sandbox '
		mkdir -m 0777 "$SCEN_DIR/bin"
		ln -s "$TAPIR_BIN" "$SCEN_DIR/bin/pasta"
		holder=$(userns_holder)
		# $(...) ends only when every holder of its pipe has: the
		# daemon must not keep it.
		out=$(timeout 10 setpriv --reuid="$(id -u "$TAPIR_TEST_USER")" \
			--regid="$(id -g "$TAPIR_TEST_USER")" --init-groups \
			"$SCEN_DIR/bin/pasta" $2 --pid "$SCEN_DIR/p.pid" \
			"$holder" 2>&1) && echo "rc: 0" || echo "rc: $?"
		echo "output: $out"
		echo "addr4: $(nsrun "$holder" ip -4 -o addr show dev tap0 | awk "{print \$4}")"
		pid=$(cat "$SCEN_DIR/p.pid")
		echo "exe: $(readlink "/proc/$pid/exe")"
		echo "stdio: $(readlink "/proc/$pid/fd/0" "/proc/$pid/fd/1" "/proc/$pid/fd/2" | sort -u | xargs)"
		nsrun "$holder" ping -c1 -W2 "$SANDBOX_HOST_IP4" >/dev/null && echo "ping: ok"
		kill "$holder"
		wait_for 5 bash -c "! kill -0 $pid 2>/dev/null" && echo "gone: yes"
	' "$TAPIR_BIN" "$PODMAN_ARGS"
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "rc: 0"
	has_line "output: "
	has_line "addr4: 10.0.2.100/24"
	has_line "exe: $(readlink -f "$TAPIR_BIN")"
	has_line "stdio: /dev/null"
	has_line "ping: ok"
	has_line "gone: yes"
}

@test "pasta mode: --netns FILE as podman runs it (root in its user namespace); exit once FILE is removed" {
	run in_sandbox '
		mkdir -m 0777 "$SCEN_DIR/bin" "$SCEN_DIR/ns"
		ln -s "$TAPIR_BIN" "$SCEN_DIR/bin/pasta"
		as_user unshare -rm --propagation private bash -c "
			set -e
			d=\$1
			unshare -n sleep 600 &
			sleep 0.3
			touch \$d/ns/netns \$d/ns/other
			mount --bind /proc/\$!/ns/net \$d/ns/netns
			\$d/bin/pasta $2 --netns \$d/ns/netns --pid \$d/p.pid
			echo rc: \$?
			pid=\$(cat \$d/p.pid)
			echo addr4: \$(nsenter --net=\$d/ns/netns ip -4 -o addr show dev tap0 | awk \"{print \\\$4}\")
			rm \$d/ns/other
			sleep 1.5
			kill -0 \$pid && echo after other: alive
			umount \$d/ns/netns
			rm \$d/ns/netns
			for i in \$(seq 50); do kill -0 \$pid 2>/dev/null || break; sleep 0.1; done
			kill -0 \$pid 2>/dev/null || echo gone: yes
			kill %1
		" bash "$SCEN_DIR"
	' "$TAPIR_BIN" "$PODMAN_ARGS"
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "rc: 0"
	has_line "addr4: 10.0.2.100/24"
	has_line "after other: alive"
	has_line "gone: yes"
}

@test "pasta mode: bad command lines exit 1 with one line naming the fault; nothing left behind" {
	run in_sandbox '
		mkdir -m 0777 "$SCEN_DIR/bin"
		ln -s "$TAPIR_BIN" "$SCEN_DIR/bin/pasta"
		holder=$(userns_holder)
		try() {
			local out rc=0
			out=$(as_user "$SCEN_DIR/bin/pasta" "$@" 2>&1) || rc=$?
			echo "$* => rc $rc, $(wc -l <<<"$out") line: $out"
		}
		try --foo "$holder"
		try -t 70000 "$holder"
		try -a 300.1.1.1 "$holder"
		try --config-net
		try --config-net 999999
		try --config-net -a 10.0.2.100 -n 24 --map-guest-addr 10.0.2.7 "$holder"
		try --host-lo-to-ns-lo --version
		try -a 10.0.2.100 -n 24 -g 10.0.3.2 "$holder"
		try -6 "$holder"
		try -T 8080 "$holder"
		try --version
		echo "left: $(ps -u "$TAPIR_TEST_USER" -o pid=,comm= | grep -v " sleep$" | xargs)"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" =~ "--foo "[0-9]+" => rc 1, 1 line: tapir: unrecognized option '--foo'" ]]
	[[ "$output" =~ "-t 70000 "[0-9]+" => rc 1, 1 line: tapir: -t 70000: " ]]
	[[ "$output" =~ "-a 300.1.1.1 "[0-9]+" => rc 1, 1 line: tapir: -a: bad address \"300.1.1.1\"" ]]
	[[ "$output" == *"--config-net => rc 1, 1 line: tapir: missing PID, --netns or command"* ]]
	[[ "$output" == *"--config-net 999999 => rc 1, 1 line: tapir: target PID 999999: No such file or directory"* ]]
	[[ "$output" =~ "--map-guest-addr 10.0.2.7 "[0-9]+" => rc 1, 1 line: tapir: --map-guest-addr 10.0.2.7: in the guest's network" ]]
	[[ "$output" == *"--host-lo-to-ns-lo --version => rc 1, 1 line: tapir: unrecognized option '--host-lo-to-ns-lo'"* ]]
	[[ "$output" =~ "-g 10.0.3.2 "[0-9]+" => rc 1, 1 line: tapir: -a 10.0.2.100/24 and -g 10.0.3.2: the gateway must be" ]]
	[[ "$output" =~ "-6 "[0-9]+" => rc 1, 1 line: tapir: -6: " ]]
	[[ "$output" =~ "-T 8080 "[0-9]+" => rc 1, 1 line: tapir: -T and -U with ports are not supported" ]]
	[[ "$output" == *"--version => rc 0, "*" line: tapir version "* ]]
	has_line "left: "
}
