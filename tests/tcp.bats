#!/usr/bin/env bats
# TCP through tapir: guest connections become host sockets and back.
# Every scenario runs in its own sandbox; the guest side runs unprivileged.

load lib

# tools: manyconn (echo server and many-connection client), pattern (bytes)
setup() {
	TOOLS=${TAPIR_BIN_DIR:-$TAPIR_ROOT/build/tools}
	export TOOLS
}

@test "tcp: curl reaches nginx via 10.0.2.2 (host loopback) and the host's address" {
	run in_sandbox '
		nginx_start web 127.0.0.1:8080 198.18.0.1:8081
		as_user "$TAPIR_BIN" run -- sh -c "
			curl -sS --max-time 5 http://10.0.2.2:8080/ &&
			curl -sS --max-time 5 http://198.18.0.1:8081/"
	'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "tapir test page" ]
	[ "${lines[1]}" = "tapir test page" ]
}

@test "tcp: over IPv6, fd00::2 reaches host ::1 and fd18::1 the host itself" {
	run in_sandbox '
		nginx_start web "[::1]:8080" "[fd18::1]:8081"
		as_user "$TAPIR_BIN" run -6 -- sh -c "
			curl -sS --max-time 5 http://[fd00::2]:8080/ &&
			curl -sS --max-time 5 http://[fd18::1]:8081/ &&
			curl -sS --max-time 5 -o /dev/null -w %{remote_ip}\\\\n http://[fd00::2]:8080/"
	'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "tapir test page" ]
	[ "${lines[1]}" = "tapir test page" ]
	[ "${lines[2]}" = "fd00::2" ]
}

@test "tcp: works through rootlesskit as slirp4netns, with --disable-host-loopback" {
	run in_sandbox '
		nginx_start web 198.18.0.1:8081
		as_user rootlesskit --net=slirp4netns --slirp4netns-binary="$TAPIR_BIN" \
			--mtu=1500 --disable-host-loopback -- \
			curl -sS --max-time 5 http://198.18.0.1:8081/
	'
	[ "$status" -eq 0 ]
	# rootlesskit warns about resolv.conf on stderr first.
	[ "${lines[-1]}" = "tapir test page" ]
}

@test "tcp: iperf3 in both directions" {
	run in_sandbox '
		bg_start iperf iperf3 -s -B 127.0.0.1
		wait_for 5 tcp_listening 5201
		as_user "$TAPIR_BIN" run -- sh -c "
			iperf3 -c 10.0.2.2 -t 2 -J > $SCEN_DIR/up.json &&
			iperf3 -c 10.0.2.2 -t 2 -R -J > $SCEN_DIR/down.json"
		jq ".end.sum_received.bytes" "$SCEN_DIR/up.json" "$SCEN_DIR/down.json"
	'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" -gt 1000000 ]
	[ "${lines[1]}" -gt 1000000 ]
}

@test "tcp: a closed port is refused at once" {
	run in_sandbox '
		start=$(date +%s%N)
		as_user "$TAPIR_BIN" run -- bash -c \
			"exec 3<>/dev/tcp/10.0.2.2/9" 2>&1 || true
		echo "ms=$((($(date +%s%N) - start) / 1000000))"
	'
	[ "$status" -eq 0 ]
	[[ "$output" == *"Connection refused"* ]]
	ms=${output##*ms=}
	[ "$ms" -lt 3000 ]
}

@test "tcp: --disable-host-loopback blocks 10.0.2.2 with net-unreachable, nothing else" {
	run in_sandbox '
		nginx_start web 127.0.0.1:8080 198.18.0.1:8081
		as_user "$TAPIR_BIN" run --disable-host-loopback -- bash -c "
			exec 3<>/dev/tcp/10.0.2.2/8080 && echo LOOPBACK-REACHED
			curl -sS --max-time 5 http://198.18.0.1:8081/
			setpriv --no-new-privs ping -c1 -W2 10.0.2.2 >/dev/null && echo PING-OK
		" 2>&1
	'
	[ "$status" -eq 0 ]
	[[ "$output" == *"Network is unreachable"* ]]
	[[ "$output" != *"LOOPBACK-REACHED"* ]]
	[[ "$output" == *"tapir test page"* ]]
	[[ "$output" == *"PING-OK"* ]]
}

@test "tcp: 1000 concurrent connections all carry data, tapir RSS stays bounded" {
	run in_sandbox '
		bg_start echo "$TOOLS/manyconn" server 7777
		wait_for 5 tcp_listening 7777
		bg_start_user tapir "$TAPIR_BIN" run -- sh -c \
			"ulimit -n 4096; $TOOLS/manyconn client 10.0.2.2 7777 1000 20000 3000 > $SCEN_DIR/client.out"
		pid=$(bg_pid tapir)
		# Peak RSS while the client opens, uses and holds its connections;
		# the loop ends when tapir exits with the client (at most 60 s).
		max=0
		for _ in $(seq 600); do
			kb=$(awk "/^VmRSS/ {print \$2}" /proc/$pid/status 2>/dev/null) || break
			[ -n "$kb" ] || break
			[ "$kb" -gt "$max" ] && max=$kb
			sleep 0.1
		done
		wait_for 30 test -s "$SCEN_DIR/client.out"
		cat "$SCEN_DIR/client.out"
		echo "rss_kb=$max"
	'
	[ "$status" -eq 0 ]
	[[ "$output" == *"connected 1000, verified 1000"* ]]
	rss=${output##*rss_kb=}
	[ "$rss" -gt 0 ]
	# The table is preallocated (a few MB); sockets live in the kernel.
	# ASan's shadow memory and quarantine need more room.
	limit=65536
	ldd "$TAPIR_BIN" | grep -q libasan && limit=$((512 * 1024))
	[ "$rss" -lt "$limit" ]
}

@test "tcp: 19 000 concurrent connections through one queue, past the old table of 16 384, each with a round trip; under 2 KB of tapir RSS each" {
	run in_sandbox '
		bg_start echo "$TOOLS/manyconn" server 7777
		wait_for 5 tcp_listening 7777
		# The hard fd limit here is 20 000 for everyone: 19 000 sockets
		# in the guest, in tapir and in the server. The client starts
		# after a second, so that the first samples are tapir at rest.
		bg_start_user tapir "$TAPIR_BIN" run --queues 1 -- sh -c \
			"sleep 1; $TOOLS/manyconn client 10.0.2.2 7777 19000 64 3000 > $SCEN_DIR/client.out"
		pid=$(bg_pid tapir)
		rest=0 hwm=0 fds=0
		for _ in $(seq 1200); do
			kb=$(awk "/^VmHWM/ {print \$2}" /proc/$pid/status 2>/dev/null) || break
			[ -n "$kb" ] || break
			[ "$rest" -gt 0 ] || rest=$kb
			hwm=$kb
			n=$(ls /proc/$pid/fd 2>/dev/null | wc -l)
			[ "$n" -gt "$fds" ] && fds=$n
			sleep 0.1
		done
		wait_for 30 test -s "$SCEN_DIR/client.out"
		cat "$SCEN_DIR/client.out"
		echo "rest_kb=$rest hwm_kb=$hwm fds=$fds"
		echo "per_conn_bytes=$(((hwm - rest) * 1024 / 19000))"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "connected 19000, verified 19000"
	fds=$(sed -n "s/.* fds=//p" <<<"$output")
	[ "$fds" -gt 19000 ]
	per=$(sed -n "s/^per_conn_bytes=//p" <<<"$output")
	# A sanitizer's shadow and quarantine are not tapir's: ASan's build
	# links libasan; make check-tsan runs a wrapper, with TSAN_OPTIONS.
	if [ -z "${TSAN_OPTIONS:-}" ] &&
		! ldd "$TAPIR_BIN" 2>/dev/null | grep -q libasan; then
		[ "$per" -lt 2048 ]
	fi
}

@test "tcp: --max-flows 100 and TAPIR_MAX_FLOWS=100 (one queue): the connections past 100 get a reset at once, counted as flow_limit; a bad value is one line" {
	run in_sandbox '
		bg_start echo "$TOOLS/manyconn" server 7777
		wait_for 5 tcp_listening 7777
		S=$SCEN_DIR/api.sock
		guest="$TOOLS/manyconn client 10.0.2.2 7777 150 64 1000
			\"\$TAPIR_BIN\" api $S {\\\"execute\\\":\\\"get_stats\\\"} |
				jq .return.drops.flow_limit"
		echo "option: $(as_user "$TAPIR_BIN" run --queues 1 --max-flows 100 -a "$S" \
			-- sh -c "$guest" | xargs)"
		rm -f "$S"
		echo "env: $(as_user env TAPIR_QUEUES=1 TAPIR_MAX_FLOWS=100 "$TAPIR_BIN" run \
			-a "$S" -- sh -c "$guest" | xargs)"
		as_user env TAPIR_MAX_FLOWS=lots "$TAPIR_BIN" run -- true 2>&1 ||
			echo "exit $?"
		as_user "$TAPIR_BIN" run --max-flows 0 -- true 2>&1 ||
			echo "exit $?"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "option: connected 150, verified 100 50"
	has_line "env: connected 150, verified 100 50"
	has_line "tapir: TAPIR_MAX_FLOWS must be an integer in 1..4194304, not \"lots\""
	has_line "tapir: --max-flows must be an integer in 1..4194304, not \"0\""
	[ "$(grep -c "^exit 125$" <<<"$output")" -eq 2 ]
}

# transfer_exact ARGS [KERNEL]: 2 GB each way between the guest and a host
# listener, compared by checksum at both ends; with KERNEL, tapir runs as
# on that older Linux (tests/tools/oldkernel.so), and must say so.
# TAPIR_TEST_TRANSFER_MB (default 2048) sets the size: `make check-tsan`
# sends less, as ThreadSanitizer's tapir needs over 120 s for 2 GB with
# offloads off, and races need concurrency rather than volume.
transfer_exact() {
	local size=$((${TAPIR_TEST_TRANSFER_MB:-2048} << 20))
	run in_sandbox '
		args=$1 kernel=${2:-}
		env=()
		if [ -n "$kernel" ]; then
			read -ra env <<<"$(oldkernel_env "$kernel")"
			as_user env "${env[@]}" "$TAPIR_BIN" --version | grep "^tcp-peek:"
		fi
		size=$((${TAPIR_TEST_TRANSFER_MB:-2048} << 20))
		# host <- guest
		bg_start sink bash -c "socat -u TCP-LISTEN:7001,reuseaddr STDOUT | cksum > $SCEN_DIR/up.rx"
		# host -> guest
		bg_start source bash -c "$TOOLS/pattern $size 2 | tee >(cksum > $SCEN_DIR/down.tx) | socat -u STDIN TCP-LISTEN:7002,reuseaddr"
		wait_for 5 bash -c "ss -ltn | grep -q :7002"
		as_user env "${env[@]}" "$TAPIR_BIN" run $args -- bash -c "
			$TOOLS/pattern $size 1 | tee >(cksum > $SCEN_DIR/up.tx) | socat -u STDIN TCP:10.0.2.2:7001 &&
			socat -u TCP:10.0.2.2:7002 STDOUT | cksum > $SCEN_DIR/down.rx"
		wait_for 20 test -s "$SCEN_DIR/up.rx"
		wait_for 20 test -s "$SCEN_DIR/down.tx"
		cat "$SCEN_DIR/up.tx" "$SCEN_DIR/up.rx" "$SCEN_DIR/down.tx" "$SCEN_DIR/down.rx"
	' "$@"
	echo "$output"
	[ "$status" -eq 0 ]
	if [ -n "${2:-}" ]; then
		[ "${lines[0]}" = "tcp-peek: ipv4 discard, ipv6 discard" ]
		lines=("${lines[@]:1}")
	fi
	[ "${#lines[@]}" -eq 4 ]
	[ "${lines[0]}" = "${lines[1]}" ]
	[ "${lines[2]}" = "${lines[3]}" ]
	[[ "${lines[0]}" == *" $size" ]]
	[[ "${lines[2]}" == *" $size" ]]
}

@test "tcp: 2 GB each way byte-exact, MTU 1500, offloads on" {
	transfer_exact "--mtu 1500 --offload on"
}

@test "tcp: 2 GB each way byte-exact, MTU 65520, offloads on" {
	transfer_exact "--mtu 65520 --offload on"
}

@test "tcp: 2 GB each way byte-exact, MTU 1500, offloads off" {
	transfer_exact "--mtu 1500 --offload off"
}

@test "tcp: 2 GB each way byte-exact, MTU 65520, offloads off" {
	transfer_exact "--mtu 65520 --offload off"
}

@test "tcp: 2 GB each way byte-exact without SO_PEEK_OFF (Linux 5.10), MTU 1500, offloads on" {
	transfer_exact "--mtu 1500 --offload on" 5.10
}

@test "tcp: 2 GB each way byte-exact without SO_PEEK_OFF (Linux 5.10), MTU 65520, offloads on" {
	transfer_exact "--mtu 65520 --offload on" 5.10
}

@test "tcp: 2 GB each way byte-exact without SO_PEEK_OFF (Linux 5.10), MTU 1500, offloads off" {
	transfer_exact "--mtu 1500 --offload off" 5.10
}

@test "tcp: 2 GB each way byte-exact without SO_PEEK_OFF (Linux 5.10), MTU 65520, offloads off" {
	transfer_exact "--mtu 65520 --offload off" 5.10
}

# 200 MB each, scaled like transfer_exact by TAPIR_TEST_TRANSFER_MB (25 MB
# under `make check-tsan`, where 200 MB came near the 120 s limit).
@test "tcp: IPv6 and IPv4 downloads byte-exact where only IPv4 has SO_PEEK_OFF (Linux 6.10)" {
	local size=$(((${TAPIR_TEST_TRANSFER_MB:-2048} * 200 / 2048) << 20))
	run in_sandbox '
		read -ra env <<<"$(oldkernel_env 6.10)"
		size=$(((${TAPIR_TEST_TRANSFER_MB:-2048} * 200 / 2048) << 20))
		bg_start src6 bash -c "$TOOLS/pattern $size 4 | socat -u STDIN TCP6-LISTEN:7006,bind=[::1],reuseaddr"
		bg_start src4 bash -c "$TOOLS/pattern $size 4 | socat -u STDIN TCP4-LISTEN:7004,bind=127.0.0.1,reuseaddr"
		wait_for 5 tcp_listening 7006
		wait_for 5 tcp_listening 7004
		echo "want $("$TOOLS/pattern" $size 4 | cksum)"
		cat >"$SCEN_DIR/guest" <<-EOF
			"$TAPIR_BIN" api "$SCEN_DIR/api.sock" "{\"execute\":\"get_info\"}" |
				jq -c .return.kernel.tcp_peek
			echo "got6 \$(socat -u "TCP6:[fd00::2]:7006" STDOUT | cksum)"
			echo "got4 \$(socat -u TCP4:10.0.2.2:7004 STDOUT | cksum)"
		EOF
		chmod a+r "$SCEN_DIR/guest"
		as_user env "${env[@]}" "$TAPIR_BIN" run -6 -a "$SCEN_DIR/api.sock" \
			-- bash "$SCEN_DIR/guest"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line '{"ipv4":"peek-offset","ipv6":"discard"}'
	want=$(sed -n 's/^want //p' <<<"$output")
	[[ "$want" == *" $size" ]]
	has_line "got6 $want"
	has_line "got4 $want"
}

@test "tcp: a host server that speaks first is heard at once, on both peek paths" {
	run in_sandbox '
		# The banner goes out the moment the connection is accepted,
		# before the guest has sent anything.
		bg_start banner socat TCP-LISTEN:7003,bind=127.0.0.1,reuseaddr,fork \
			SYSTEM:"echo SSH-2.0-tapir-test; sleep 5"
		wait_for 5 tcp_listening 7003
		for kernel in "" 5.10; do
			env=()
			[ -n "$kernel" ] && read -ra env <<<"$(oldkernel_env "$kernel")"
			as_user env "${env[@]}" "$TAPIR_BIN" run -- bash -c "
				timeout 3 socat -u TCP:10.0.2.2:7003 STDOUT | head -n 1" |
				sed "s/^/kernel=${kernel:-this} /"
		done
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "kernel=this SSH-2.0-tapir-test"
	has_line "kernel=5.10 SSH-2.0-tapir-test"
}

@test "tcp: an idle connection with keepalive probes stays up" {
	run in_sandbox '
		bg_start echo "$TOOLS/manyconn" server 7777
		wait_for 5 tcp_listening 7777
		# Probes every second, dead after 2 unanswered: 5 s idle would
		# kill the connection if tapir ignored them.
		as_user "$TAPIR_BIN" run -- bash -c "
			(sleep 5; echo still-alive) |
			socat -t 2 - TCP:10.0.2.2:7777,keepalive,keepidle=1,keepintvl=1,keepcnt=2
		" 2>&1
	'
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "still-alive" ]
}

# CONNECT HOST... (python3): connect to port 80 of each HOST, print
# "HOST err: TEXT SECONDS" or "HOST connected".
CONNECT='
import socket, sys, time
for host in sys.argv[1:]:
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    s.settimeout(8)
    t = time.time()
    try:
        s.connect((host, 80))
        print(host, "connected")
    except OSError as e:
        print(host, "err:", e.strerror or e, "%.0f" % (time.time() - t))
'

@test "tcp: no route on the host (IPv4 and IPv6), or a neighbour that never answers: the guest's connect fails at once with the host's error, not Connection refused" {
	run in_sandbox '
		# No default routes: 203.0.113.1 and fd19::1 have no route at
		# all. Nobody has .66 on the link: ARP and NDP give up after one
		# probe of 0.2 s, and the host says host unreachable.
		ip route del default
		ip -6 route del default
		for v in ipv4 ipv6; do
			sysctl -qw net.$v.neigh.sbx0.mcast_solicit=1 \
				net.$v.neigh.sbx0.retrans_time_ms=200
		done
		printf "%s" "$1" >"$SCEN_DIR/connect.py"
		chmod a+r "$SCEN_DIR/connect.py"
		as_user "$TAPIR_BIN" run -6 -- python3 "$SCEN_DIR/connect.py" \
			203.0.113.1 fd19::1 198.18.0.66 fd18::66
	' "$CONNECT"
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "203.0.113.1 err: Network is unreachable 0"
	has_line "fd19::1 err: Network is unreachable 0"
	has_line "198.18.0.66 err: No route to host 0"
	has_line "fd18::66 err: No route to host 0"
}
