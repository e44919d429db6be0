#!/usr/bin/env bats
# UDP through tapir: guest datagrams leave on connected host sockets, replies
# come back from the address the guest sent to; big datagrams cross as
# fragments in both directions. Every scenario runs in its own sandbox, with
# socat echo servers on the sandbox host and the guest side unprivileged.

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib

# udpcheck HOST PORT FILE...: inside the namespace, send each FILE as one
# datagram on one connected socket and require an identical echo. bash's
# /dev/udp connects, so an echo from any other address would not count.
# dd with a 64 KiB block writes a file in one write(), reads one datagram.
UDPCHECK='
host=$1 port=$2
shift 2
exec 3<>"/dev/udp/$host/$port"
for f in "$@"; do
	n=$(stat -c %s "$f")
	dd if="$f" bs=65536 count=1 status=none >&3
	if ! timeout 3 dd bs=65536 count=1 status=none <&3 >"$f.$$"; then
		echo "no echo of $n bytes from $host:$port"
		exit 1
	fi
	cmp -s "$f" "$f.$$" || { echo "echo of $n bytes differs"; exit 1; }
	echo "echo-ok $host $port $n"
done
'

# icmpunreach: the namespace's count of ICMP destination-unreachable
# messages received (InDestUnreachs).
ICMPUNREACH="awk '/^Icmp: [0-9]/ { print \$5 }' /proc/net/snmp"

# The guest's IPv6 set-up by hand: a route via fd00::2 and its MAC, so that
# the test needs neither router advertisements nor neighbour discovery.
V6CONF='ip -6 addr add fd00::100/64 dev tap0 nodad 2>/dev/null || true
ip -6 neigh replace fd00::2 lladdr 52:56:00:00:00:02 dev tap0
ip -6 route replace default via fd00::2 dev tap0'

SCRIPTS=("$UDPCHECK" "$ICMPUNREACH" "$V6CONF")

# Sets up, inside the sandbox: $SCEN_DIR/udpcheck, $SCEN_DIR/icmpunreach and
# $SCEN_DIR/v6conf (the scripts above, given as "${SCRIPTS[@]}"), with
# $check, $unreach and $v6conf to run them; payload files d100,
# d60000 and d65507 (random bytes), and echo servers on 198.18.0.1:7777,
# 127.0.0.1:7778 and [fd18::1]:7779. socat's PIPE hands each datagram back
# whole (one write into an empty pipe, one read).
SETUP='
printf "%s" "$1" >"$SCEN_DIR/udpcheck"
printf "%s" "$2" >"$SCEN_DIR/icmpunreach"
printf "%s" "$3" >"$SCEN_DIR/v6conf"
for n in 100 60000 65507; do
	head -c "$n" /dev/urandom >"$SCEN_DIR/d$n"
done
chmod a+r "$SCEN_DIR"/*
bg_start echo4 socat -b 65535 UDP4-RECVFROM:7777,bind=198.18.0.1,fork PIPE
bg_start echolo socat -b 65535 UDP4-RECVFROM:7778,bind=127.0.0.1,fork PIPE
bg_start echo6 socat -b 65535 UDP6-RECVFROM:7779,bind=[fd18::1],fork PIPE
wait_for 5 bash -c "[ \$(ss -Hlun | grep -c \":777[789] \") -eq 3 ]"
D="$SCEN_DIR/d100 $SCEN_DIR/d60000 $SCEN_DIR/d65507"
check="bash $SCEN_DIR/udpcheck"
unreach="bash $SCEN_DIR/icmpunreach"
v6conf="bash $SCEN_DIR/v6conf"
'

@test "udp: echo of 100, 60000 and 65507 bytes via 198.18.0.1 and 10.0.2.2, MTU 1500 and 65520" {
	run in_sandbox "$SETUP"'
		for mtu in 1500 65520; do
			echo "mtu $mtu"
			as_user "$TAPIR_BIN" run --mtu="$mtu" -- sh -c "
				$check 198.18.0.1 7777 $D && $check 10.0.2.2 7778 $D"
		done
	' "${SCRIPTS[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^echo-ok 198.18.0.1 7777 ' <<<"$output")" -eq 6 ]
	[ "$(grep -c '^echo-ok 10.0.2.2 7778 ' <<<"$output")" -eq 6 ]
	[[ "$output" == *"echo-ok 10.0.2.2 7778 65507"* ]]
}

@test "udp: the same without vnet headers (--offload=off)" {
	run in_sandbox "$SETUP"'
		as_user "$TAPIR_BIN" run --offload=off -- sh -c "
			$check 198.18.0.1 7777 $D && $check 10.0.2.2 7778 $D"
	' "${SCRIPTS[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^echo-ok ' <<<"$output")" -eq 6 ]
}

@test "udp: without tap USO (Linux 6.1), the offloads fall back to TSO, echoes stay byte-exact" {
	run in_sandbox "$SETUP"'
		read -ra env <<<"$(oldkernel_env 6.1)"
		S=$SCEN_DIR/api.sock
		info="\"$TAPIR_BIN\" api $S {\\\"execute\\\":\\\"get_info\\\"}"
		for mtu in 1500 65520; do
			as_user env "${env[@]}" "$TAPIR_BIN" run --mtu="$mtu" -a "$S" \
				-- sh -c "$info | jq -c .return.offloads.flags &&
				$check 198.18.0.1 7777 $D && $check 10.0.2.2 7778 $D"
		done
	' "${SCRIPTS[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -cxF '["csum","tso4","tso6"]' <<<"$output")" -eq 2 ]
	[ "$(grep -c '^echo-ok ' <<<"$output")" -eq 12 ]
}

@test "udp: IPv6 echo to fd18::1 with --enable-ipv6 (small at MTU 1500, 60000 bytes at 65520)" {
	run in_sandbox "$SETUP"'
		as_user "$TAPIR_BIN" run --enable-ipv6 -- sh -c "
			$v6conf &&
			$check fd18::1 7779 $SCEN_DIR/d100"
		as_user "$TAPIR_BIN" run --enable-ipv6 --mtu=65520 -- sh -c "
			$v6conf &&
			$check fd18::1 7779 $SCEN_DIR/d100 $SCEN_DIR/d60000"
	' "${SCRIPTS[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^echo-ok fd18::1 7779 100$' <<<"$output")" -eq 2 ]
	[[ "$output" == *"echo-ok fd18::1 7779 60000"* ]]
}

@test "udp: IPv6 60000-byte echo at MTU 1500 (fragments both ways)" {
	run in_sandbox "$SETUP"'
		as_user "$TAPIR_BIN" run --enable-ipv6 -- sh -c "
			$v6conf &&
			$check fd18::1 7779 $SCEN_DIR/d60000"
	' "${SCRIPTS[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"echo-ok fd18::1 7779 60000"* ]]
}

@test "udp: a closed host port answers port-unreachable: Connection refused" {
	run in_sandbox "$SETUP"'
		as_user "$TAPIR_BIN" run -- bash -c "
			exec 3<>/dev/udp/198.18.0.1/9
			echo probe >&3
			timeout 3 dd bs=65536 count=1 status=none <&3
			echo dd-status=\$?" 2>&1
	' "${SCRIPTS[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"Connection refused"* ]]
	[[ "$output" != *"dd-status=124"* ]]
}

# RECVERR HOST PORT (python3): inside the guest, send one datagram on a
# connected socket with every ICMP error reported, as glibc's resolver has
# its sockets (IP_RECVERR; without it Linux reports refusals only), and
# print what the receive says: "HOST err: TEXT" (the errno the guest's
# ICMP error became), "HOST timeout" after 5 s, or "HOST answer: ...".
RECVERR='
import socket, sys
host, port = sys.argv[1], int(sys.argv[2])
v6 = ":" in host
s = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_DGRAM)
# IPV6_RECVERR is 25, IP_RECVERR 11 (linux/in6.h, linux/in.h)
s.setsockopt(socket.IPPROTO_IPV6 if v6 else socket.IPPROTO_IP, 25 if v6 else 11, 1)
s.settimeout(5)
s.connect((host, port))
s.send(b"probe")
try:
    print(host, "answer:", s.recv(64))
except socket.timeout:
    print(host, "timeout")
except OSError as e:
    print(host, "err:", e.strerror)
'

# recverr_probe PRE HOST4 HOST6 PORT: in the sandbox, run the snippet PRE
# as root, then RECVERR from a guest of tapir run -6 to HOST4 and HOST6,
# each on PORT.
recverr_probe() {
	run in_sandbox "$SETUP"'
		printf "%s" "$4" >"$SCEN_DIR/recverr.py"
		chmod a+r "$SCEN_DIR/recverr.py"
		eval "$5"
		as_user "$TAPIR_BIN" run -6 -- sh -c "
			$v6conf
			python3 $SCEN_DIR/recverr.py $6 $8
			python3 $SCEN_DIR/recverr.py $7 $8"
	' "${SCRIPTS[@]}" "$RECVERR" "$@"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "udp: a closed port on the host's loopback, via 10.0.2.2 and fd00::2: the guest's receive fails with Connection refused" {
	recverr_probe : 10.0.2.2 fd00::2 9
	has_line "10.0.2.2 err: Connection refused"
	has_line "fd00::2 err: Connection refused"
}

@test "udp: a neighbour of the host that never answers (IPv4 and IPv6): the guest's receive fails with No route to host, not a timeout" {
	# Nobody has .66 on the sandbox host's link: its ARP and NDP give up
	# (after one probe, to be quick) and the host itself makes the error,
	# host unreachable, which tapir must pass on.
	recverr_probe 'for v in ipv4 ipv6; do
			sysctl -qw net.$v.neigh.sbx0.mcast_solicit=1 \
				net.$v.neigh.sbx0.retrans_time_ms=200
		done' 198.18.0.66 fd18::66 53
	has_line "198.18.0.66 err: No route to host"
	has_line "fd18::66 err: No route to host"
}

# LATEREPLY PORT (python3): answer one datagram on PORT half a second late,
# then print the guest's ICMP destination-unreachables received since it
# started listening ("in-dest-unreachs=N"), waiting up to 5 s for one.
LATEREPLY='
import socket, sys, time
def unreachs():
    with open("/proc/net/snmp") as f:
        rows = [l.split() for l in f if l.startswith("Icmp:")]
    return int(rows[1][rows[0].index("InDestUnreachs")])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", int(sys.argv[1])))
before = unreachs()
open(sys.argv[2], "w").close()
data, peer = s.recvfrom(64)
time.sleep(0.5)
s.sendto(b"late", peer)
for i in range(50):
    if unreachs() > before:
        break
    time.sleep(0.1)
print("in-dest-unreachs=%d" % (unreachs() - before))
'

@test "udp: a published port whose host client has gone: the guest's reply gets port unreachable" {
	run in_sandbox '
		# The guest answers half a second late; by then the host client
		# has closed its socket, and the host refuses the reply.
		printf "%s" "$1" >"$SCEN_DIR/late.py"
		chmod a+r "$SCEN_DIR/late.py"
		chmod a+w "$SCEN_DIR"
		as_user "$TAPIR_BIN" run -p 127.0.0.1:9101:9101/udp -- \
			python3 "$SCEN_DIR/late.py" 9101 "$SCEN_DIR/ready" &
		run=$!
		wait_for 10 test -e "$SCEN_DIR/ready"
		wait_for 5 bash -c "ss -Hlun | grep -q 127.0.0.1:9101"
		echo ping | socat -u - UDP4:127.0.0.1:9101
		wait "$run"
	' "$LATEREPLY"
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "in-dest-unreachs=1"
}

@test "udp: --disable-host-loopback: 10.0.2.2 is net-unreachable, 198.18.0.1 still works" {
	run in_sandbox "$SETUP"'
		bg_start sink socat -u UDP4-RECV:7780,bind=127.0.0.1 \
			OPEN:"$SCEN_DIR/sink.out",creat,append
		wait_for 5 bash -c "ss -Hlun | grep -q 127.0.0.1:7780"
		as_user "$TAPIR_BIN" run --disable-host-loopback -- bash -c "
			before=\$($unreach)
			exec 3<>/dev/udp/10.0.2.2/7780
			echo probe >&3
			for i in 1 2 3 4 5 6 7 8 9 10; do
				[ \$($unreach) -gt \$before ] && break
				sleep 0.1
			done
			echo in-dest-unreachs=\$((\$($unreach) - before))
			$check 198.18.0.1 7777 $SCEN_DIR/d100"
		sleep 0.2
		echo "sink bytes: $(stat -c %s "$SCEN_DIR/sink.out" 2>/dev/null || echo 0)"
	' "${SCRIPTS[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"in-dest-unreachs=1"* ]]
	[[ "$output" == *"echo-ok 198.18.0.1 7777 100"* ]]
	[[ "$output" == *"sink bytes: 0"* ]]
}

@test "udp: a published port (-p .../udp) echoes host datagrams from the guest" {
	run in_sandbox "$SETUP"'
		# The guest answers from 10.0.2.2, which --disable-host-loopback
		# must not block: replies belong to the forwarded flow.
		bg_start_user fwd "$TAPIR_BIN" run --disable-host-loopback \
			-p 127.0.0.1:9100:9100/udp -- \
			socat -b 65535 UDP4-RECVFROM:9100,fork PIPE
		wait_for 5 bash -c "exec 3<>/dev/udp/127.0.0.1/9100; echo up >&3
			timeout 0.3 dd bs=64 count=1 status=none <&3 | grep -q up"
		$check 127.0.0.1 9100 $D
	' "${SCRIPTS[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^echo-ok 127.0.0.1 9100 ' <<<"$output")" -eq 3 ]
}

@test "udp: through rootlesskit as slirp4netns, MTU 65520" {
	run in_sandbox "$SETUP"'
		as_user rootlesskit --net=slirp4netns \
			--slirp4netns-binary="$TAPIR_BIN" --mtu=65520 \
			--disable-host-loopback -- $check 198.18.0.1 7777 $D
	' "${SCRIPTS[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^echo-ok 198.18.0.1 7777 ' <<<"$output")" -eq 3 ]
}

# PMTU (python3): from the guest, three 1400-byte datagrams to the echo on
# [fd19::1]:7781, each answered or not, and the path MTU the guest then
# has for it (IPV6_MTU, 24): "try N echo|err: TEXT|timeout mtu M".
PMTU='
import socket
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.settimeout(2)
s.connect(("fd19::1", 7781))
for i in range(3):
    try:
        s.send(b"x" * 1400)
        r = "echo %d" % len(s.recv(65535))
    except socket.timeout:
        r = "timeout"
    except OSError as e:
        r = "err: " + e.strerror
    print("try", i, r, "mtu", s.getsockopt(socket.IPPROTO_IPV6, 24))
'

@test "udp: an IPv6 datagram too big for the host's path: the guest gets packet too big with the path's MTU, and its next datagrams arrive" {
	run in_sandbox '
		# fd19::1 is a host behind a 1280-byte link, in a namespace of
		# its own; the guest'"'"'s MTU is 1500.
		bg_start far unshare -n sleep 600
		far=$(bg_pid far)
		wait_for 5 _scen_other_netns "$far"
		ip link add v6a mtu 1280 type veth peer name v6b mtu 1280 \
			netns "/proc/$far/ns/net"
		ip -6 addr add fd19::2/64 dev v6a nodad
		ip link set v6a up
		nsenter -t "$far" -n sh -c "ip link set lo up; ip link set v6b up
			ip -6 addr add fd19::1/64 dev v6b nodad"
		bg_start echo nsenter -t "$far" -n \
			socat -b 65535 UDP6-RECVFROM:7781,bind=[fd19::1],fork PIPE
		bg_start sink nsenter -t "$far" -n \
			socat -u -b 65535 UDP6-RECV:7782,bind=[fd19::1] \
			OPEN:"$SCEN_DIR/oneshot",creat,append
		wait_for 5 nsenter -t "$far" -n sh -c "ss -Hlun | grep -q :7782"
		printf "%s" "$1" >"$SCEN_DIR/pmtu.py"
		chmod a+r "$SCEN_DIR/pmtu.py"
		# First a sender with a socket of its own for one datagram,
		# gone before the guest can hear about the path.
		printf "%s\n" "import socket" "socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).sendto(b\"y\" * 1400, (\"fd19::1\", 7782))" \
			>"$SCEN_DIR/oneshot.py"
		chmod a+r "$SCEN_DIR/oneshot.py"
		as_user "$TAPIR_BIN" run -6 -- sh -c "
			python3 $SCEN_DIR/oneshot.py
			python3 $SCEN_DIR/pmtu.py
			grep Icmp6InPktTooBigs /proc/net/snmp6 | tr -s \" \t\" \" \""
		wait_for 5 test -s "$SCEN_DIR/oneshot"
		echo "one-shot: $(wc -c <"$SCEN_DIR/oneshot")"
	' "$PMTU"
	echo "$output"
	[ "$status" -eq 0 ]
	# The first one says why (a connected socket hears of the packet
	# too big), and goes on fragmented by the host, as does a
	# one-datagram sender's, whose socket is gone by then.
	has_line "try 0 err: Message too long mtu 1280"
	has_line "try 1 echo 1400 mtu 1280"
	has_line "try 2 echo 1400 mtu 1280"
	grep -qE "^Icmp6InPktTooBigs [1-9]" <<<"$output"
	has_line "one-shot: 1400"
}
