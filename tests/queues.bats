#!/usr/bin/env bats
# tests/queues.bats - a multi-queue tap (--queues 2): get_stats splits the
# tap counters by queue, tapir answers each flow on the queue its frames
# come in on, so that the kernel's flow steering keeps the flow there, and
# both queues carry traffic both ways.

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib

# tools: manyconn (echo server and many-connection client), collide (host
# clients that look alike to the guest)
setup() {
	TOOLS=${TAPIR_BIN_DIR:-$TAPIR_ROOT/build/tools}
	export TOOLS
}

# The guest side, as root of the namespace `tapir run --queues 2 -a S`
# made: $1 connections one after another, each echoing 256 KiB through
# manyconn ($2, checked byte for byte), each printed as "flow N RX0 RX1 TX0
# TX1", the bytes each queue carried during it.
SEQUENTIAL='
set -euo pipefail
S=$SCEN_DIR/api.sock
queues() {
	"$TAPIR_BIN" api "$S" "{\"execute\":\"get_stats\"}" |
		jq -r "[.return.queues[] | .rx_bytes, .tx_bytes] | @tsv"
}
for i in $(seq "$1"); do
	read -r r0 t0 r1 t1 < <(queues)
	"$2" client 10.0.2.2 7777 1 262144 0 >/dev/null
	read -r R0 T0 R1 T1 < <(queues)
	echo "flow $i $((R0 - r0)) $((R1 - r1)) $((T0 - t0)) $((T1 - t1))"
done
'

@test "queues: --queues 2 keeps each connection on one queue both ways, and uses both queues" {
	run in_sandbox '
		bg_start echo "$TOOLS/manyconn" server 7777
		wait_for 5 tcp_listening 7777
		printf "%s" "$1" >"$SCEN_DIR/guest"
		chmod a+r "$SCEN_DIR/guest"
		as_user "$TAPIR_BIN" run --queues 2 -a "$SCEN_DIR/api.sock" -- \
			bash "$SCEN_DIR/guest" 16 "$TOOLS/manyconn"
	' "$SEQUENTIAL"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c "^flow " <<<"$output")" -eq 16 ]
	# A connection's queue carries at least 95 % of its bytes in each
	# direction (the rest: ARP or neighbour discovery on the other
	# queue), and the same queue both ways. Over 16 connections both
	# queues are used: all on one would happen once in 30 000 runs.
	run awk '
		$1 == "flow" {
			rq = ($3 >= $4) ? 0 : 1; tq = ($5 >= $6) ? 0 : 1
			rx = $3 + $4; tx = $5 + $6
			if (rq != tq || rx < 262144 || tx < 262144 ||
			    (rq ? $4 : $3) < 0.95 * rx || (tq ? $6 : $5) < 0.95 * tx) {
				print "split: " $0; bad = 1
			}
			used[rq]++
		}
		END {
			print "queue0 " used[0] + 0 " queue1 " used[1] + 0
			exit bad || !used[0] || !used[1]
		}' <<<"$output"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "queues: --queues 2 carries 16 parallel connections byte-exact, frames on both queues both ways, counters adding up" {
	run in_sandbox '
		bg_start echo "$TOOLS/manyconn" server 7777
		wait_for 5 tcp_listening 7777
		S=$SCEN_DIR/api.sock
		# The counters are read until they hold the 16 MiB each way (a
		# thread slowed down past get_stats 200 ms, under TSan, is given
		# its previous copy).
		as_user "$TAPIR_BIN" run --queues 2 -a "$S" -- sh -c "
			$TOOLS/manyconn client 10.0.2.2 7777 16 1048576 0
			for _ in \$(seq 50); do
				\"\$TAPIR_BIN\" api $S \"{\\\"execute\\\":\\\"get_stats\\\"}\" \
					>$SCEN_DIR/stats.json
				jq -e \".return.tap | .rx_bytes >= 16777216 and
					.tx_bytes >= 16777216\" $SCEN_DIR/stats.json \
					>/dev/null && break
				sleep 0.2
			done"
		jq -r ".return.queues | length" "$SCEN_DIR/stats.json"
		jq -r ".return.queues[] | \"\(.rx_frames) \(.tx_frames)\"" \
			"$SCEN_DIR/stats.json"
		jq -r ".return | [([.queues[].rx_bytes] | add) == .tap.rx_bytes,
			([.queues[].tx_bytes] | add) == .tap.tx_bytes,
			([.queues[].tx_frames] | add) == .tap.tx_frames] | @tsv" \
			"$SCEN_DIR/stats.json"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "connected 16, verified 16"
	has_line 2
	# Each queue: frames read from the guest and written to it (16
	# connections all on one queue: once in 30 000 runs).
	[ "$(awk 'NF == 2 && $1 > 0 && $2 > 0' <<<"$output" | wc -l)" -eq 2 ]
	has_line "$(printf 'true\ttrue\ttrue')"
}

# Shell functions of the placement tests, for a script that sets S to the
# API socket.
# queues [RX TX]: "RX0 TX0 RX1 TX1", once the queues together count at
# least RX and TX bytes (for 10 s at most): get_stats waits 200 ms for
# each thread copy of its counters, and a thread slowed down more than
# that (ThreadSanitizer) is given its previous copy.
# settled N: wait until tapir has N TCP flows (placement counts
# connections still closing).
# rounds FLOWS BYTES CMD...: 3 rounds of CMD, which moves BYTES on each of
# 4 connections both ways, each started once tapir is back to FLOWS TCP
# flows, each printed as "round N RX0 RX1 TX0 TX1", the bytes each queue
# carried during it.
ROUNDS='
queues() {
	local now
	for _ in $(seq 50); do
		now=$("$TAPIR_BIN" api "$S" "{\"execute\":\"get_stats\"}" |
			jq -r "[.return.queues[] | .rx_bytes, .tx_bytes] | @tsv")
		read -r a b c d <<<"$now"
		[ $((a + c)) -ge "${1:-0}" ] && [ $((b + d)) -ge "${2:-0}" ] && break
		sleep 0.2
	done
	echo "$now"
}
settled() {
	for _ in $(seq 50); do
		[ "$("$TAPIR_BIN" api "$S" "{\"execute\":\"get_stats\"}" |
			jq .return.flows.tcp)" -eq "$1" ] && return
		sleep 0.1
	done
	echo "not settled: TCP flows are not $1 after 5 s"
	return 1
}
rounds() {
	local flows=$1 bytes=$2 round r0 t0 r1 t1 R0=0 T0=0 R1=0 T1=0
	shift 2
	for round in 1 2 3; do
		settled "$flows" || exit 1
		read -r r0 t0 r1 t1 < <(queues $((R0 + R1)) $((T0 + T1)))
		"$@" || true
		read -r R0 T0 R1 T1 < <(queues $((r0 + r1 + 4 * bytes)) \
			$((t0 + t1 + 4 * bytes)))
		echo "round $round $((R0 - r0)) $((R1 - r1)) $((T0 - t0)) $((T1 - t1))"
	done
}
'

# even_rounds: $output has 3 "round" lines, each queue 40-60 % of each
# round bytes both ways; the lines that are not are printed.
even_rounds() {
	run awk '
		$1 == "round" {
			rx = $3 + $4; tx = $5 + $6
			if ($3 < 0.4 * rx || $4 < 0.4 * rx || $5 < 0.4 * tx ||
			    $6 < 0.4 * tx) {
				print "uneven: " $0; bad = 1
			}
			n++
		}
		END { exit bad || n != 3 }' <<<"$output"
	echo "$output"
	[ "$status" -eq 0 ]
}

# The guest side of the placement test: an idle connection held open (as
# iperf3 holds its control connection), then 3 rounds of 4 parallel
# connections each echoing 8 MiB through manyconn ($1).
PLACED="$ROUNDS"'
set -euo pipefail
S=$SCEN_DIR/api.sock
exec 3<>/dev/tcp/10.0.2.2/7777
rounds 1 8388608 "$1" client 10.0.2.2 7777 4 8388608 0
exec 3>&-
'

@test "queues: --queues 2 places new connections: 4 parallel transfers beside an idle one split 2 and 2, each queue 40-60 % of the bytes both ways" {
	run in_sandbox '
		bg_start echo "$TOOLS/manyconn" server 7777
		wait_for 5 tcp_listening 7777
		printf "%s" "$1" >"$SCEN_DIR/guest"
		chmod a+r "$SCEN_DIR/guest"
		as_user "$TAPIR_BIN" run --queues 2 -a "$SCEN_DIR/api.sock" -- \
			bash "$SCEN_DIR/guest" "$TOOLS/manyconn"
	' "$PLACED"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c "^connected 4, verified 4" <<<"$output")" -eq 3 ]
	# tun alone (its hash) puts 3 or 4 of the 4 on one queue in 5 of 8
	# rounds: all 3 rounds even would happen by chance once in 19 runs.
	even_rounds
}

@test "queues: --queues 2 places connections accepted on a forward too: 4 parallel ones split 2 and 2, 3 rounds" {
	run in_sandbox "$ROUNDS"'
		S=$SCEN_DIR/api.sock
		as_user "$TAPIR_BIN" run --queues 2 -p 127.0.0.1:17777:7777 \
			-a "$S" -- sh -c "
			$TOOLS/manyconn server 7777 & echo ready >$SCEN_DIR/ready
			while [ ! -e $SCEN_DIR/done ]; do sleep 0.1; done" &
		run_pid=$!
		wait_for 10 test -e "$SCEN_DIR/ready"
		wait_for 5 test -S "$S"
		# The guest server answers: one small echo first.
		for _ in $(seq 50); do
			"$TOOLS/manyconn" client 127.0.0.1 17777 1 1 0 >/dev/null 2>&1 &&
				break
			sleep 0.1
		done
		rounds 0 8388608 "$TOOLS/manyconn" client 127.0.0.1 17777 4 8388608 0
		touch "$SCEN_DIR/done"
		wait "$run_pid"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c "^connected 4, verified 4" <<<"$output")" -eq 3 ]
	# Placed by their hash (before), 3 of 4 went to one thread in about
	# half of the rounds.
	even_rounds
}

@test "queues: TAPIR_QUEUES sets the default, --queues wins, a bad value is one clear line" {
	run in_sandbox '
		q="ip -d link show dev tap0 | grep -o \"numqueues [0-9]*\" || echo single"
		TAPIR_QUEUES=2 as_user "$TAPIR_BIN" run -- sh -c "$q"
		TAPIR_QUEUES=2 as_user "$TAPIR_BIN" run --queues 1 -- sh -c "$q"
		TAPIR_QUEUES=17 as_user "$TAPIR_BIN" run -- true 2>&1 || echo "exit $?"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "numqueues 2" ]
	[ "${lines[1]}" = "single" ]
	[ "${lines[2]}" = 'tapir: TAPIR_QUEUES must be an integer in 1..16 or "auto", not "17"' ]
	# tapir run: 125 for its own errors, as podman and docker run.
	[ "${lines[3]}" = "exit 125" ]
}

@test "queues: --queues auto and TAPIR_QUEUES=auto give one queue per online CPU, at most 8" {
	# What sysconf(_SC_NPROCESSORS_ONLN) says, not nproc: auto counts
	# the CPUs online, not those this process may run on.
	local want
	want=$(getconf _NPROCESSORS_ONLN)
	[ "$want" -le 8 ] || want=8
	run in_sandbox '
		# In the namespace: how many queues get_stats counts ($1: socket).
		cat >"$SCEN_DIR/count" <<-"EOF"
			"$TAPIR_BIN" api "$1" "{\"execute\":\"get_stats\"}" |
				jq -r ".return.queues | length"
		EOF
		chmod a+r "$SCEN_DIR/count"
		c=$SCEN_DIR/count
		a1=$SCEN_DIR/a1.sock a2=$SCEN_DIR/a2.sock a3=$SCEN_DIR/a3.sock
		as_user "$TAPIR_BIN" run --queues auto -a "$a1" -- sh "$c" "$a1"
		TAPIR_QUEUES=auto as_user "$TAPIR_BIN" run -a "$a2" -- sh "$c" "$a2"
		TAPIR_QUEUES=auto as_user "$TAPIR_BIN" run --queues 1 -a "$a3" -- \
			sh "$c" "$a3"
		as_user "$TAPIR_BIN" run --queues automatic -- true 2>&1 ||
			echo "exit $?"
	'
	echo "want $want"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$want" ]
	[ "${lines[1]}" = "$want" ]
	[ "${lines[2]}" = 1 ]
	[ "${lines[3]}" = 'tapir: queues must be an integer in 1..16 or "auto", not "automatic"' ]
	[ "${lines[4]}" = "exit 125" ]
}

@test "queues: under rootlesskit 1.1.0, TAPIR_QUEUES=2 gives its tap0 two queues, up, and fetches work" {
	run in_sandbox '
		mkdir -m 0777 "$SCEN_DIR/tmp"
		export TMPDIR=$SCEN_DIR/tmp
		nginx_start web 127.0.0.1:8080
		TAPIR_QUEUES=2 as_user rootlesskit --net=slirp4netns \
			--slirp4netns-binary="$TAPIR_BIN" -- sh -c "
			ip -d link show tap0 | grep -o \"<.*> \|multi_queue numqueues [0-9]*\"
			curl -sS --max-time 5 http://10.0.2.2:8080/"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "multi_queue numqueues 2"
	[[ "$output" == *",UP,LOWER_UP> "* ]]
	has_line "tapir test page"
}

# The guest side of the idle test: an echo-once server on 8080, published
# on the sandbox's 127.0.0.1:18080, and 8 clients that reach it through
# that forward (10.0.2.2 is the sandbox's loopback), each answered at once
# and again after 7 s of silence. Prints tapir's thread count first, and
# its no_flow drops once every client has both answers, while all 16
# connections are still open: a frame counted then belonged to a live
# connection that was not found. (Once they close, a late duplicate ACK
# may rightly find none, more often in a tapir slowed by ThreadSanitizer.)
# A thread takes its name when it first runs, which under a sanitizer can
# be after the command started: the count is read until it is 1, for 5 s
# at most.
IDLE='
set -euo pipefail
for _ in $(seq 20); do
	n=$(cat /proc/$PPID/task/*/comm | grep -c "^tapir-q" || true)
	[ "$n" -ge 1 ] && break
	sleep 0.25
done
echo "datapath threads: $n"
socat TCP-LISTEN:8080,reuseaddr,fork \
	SYSTEM:"read l; echo got-\$l; sleep 7; echo late-\$l" &
srv=$!
for _ in $(seq 50); do
	ss -ltn | grep -q ":8080 " && break
	sleep 0.1
done
clients=
for i in $(seq 8); do
	(
		exec 3<>/dev/tcp/10.0.2.2/18080
		echo "c$i" >&3
		for _ in 1 2; do
			IFS= read -r -t 20 line <&3 && echo "$line"
		done
		for _ in $(seq 300); do
			[ -e "$SCEN_DIR/release" ] && break
			sleep 0.1
		done
	) >"$SCEN_DIR/idle.$i" 2>&1 &
	clients="$clients $!"
done
for _ in $(seq 300); do
	[ "$(cat "$SCEN_DIR"/idle.* | grep -c "^late-")" -eq 8 ] && break
	sleep 0.1
done
"$TAPIR_BIN" api "$SCEN_DIR/api.sock" "{\"execute\":\"get_stats\"}" |
	jq -r ".return.drops.no_flow // 0 | \"no_flow \(.)\""
touch "$SCEN_DIR/release"
wait $clients
kill "$srv"
cat "$SCEN_DIR"/idle.*
'

@test "queues: --queues 2 runs a thread per queue; forwarded connections that sat idle past tun's steering still reach the guest" {
	run in_sandbox '
		printf "%s" "$1" >"$SCEN_DIR/guest"
		chmod a+r "$SCEN_DIR/guest"
		as_user "$TAPIR_BIN" run --queues 2 --forward-mode=tap \
			-p 127.0.0.1:18080:8080 -a "$SCEN_DIR/api.sock" -- \
			bash "$SCEN_DIR/guest"
	' "$IDLE"
	echo "$output"
	[ "$status" -eq 0 ]
	# The main thread and a datapath thread named for queue 1.
	has_line "datapath threads: 1"
	# tun steers a flow's frames from the guest to the queue tapir last
	# wrote it on, for ~3 s; after 7 s of silence the guest's "late"
	# segment goes to the queue its hash picks, which for about half of
	# the connections is the other thread's: it is handed over, not reset.
	for i in $(seq 8); do
		has_line "got-c$i"
		has_line "late-c$i"
	done
	# Without the ring: no_flow 20.
	has_line "no_flow 0"
}

# The guest side of the fragments test: a UDP echo server on 7, published
# on the sandbox's 127.0.0.1:17007 (its 20000-byte replies are fragments,
# which tun steers by addresses alone, not by flow); then one guest port
# sending 100 and 20000 bytes in turn to the sandbox's port 9999, which
# answers with the port it saw them from.
FRAGMENTS='
set -euo pipefail
socat -b 65535 UDP4-RECVFROM:7,fork PIPE &
for _ in $(seq 50); do
	ss -lun | grep -q ":7 " && break
	sleep 0.1
done
echo ready >"$SCEN_DIR/ready"
for _ in $(seq 100); do
	[ -e "$SCEN_DIR/done" ] && break
	sleep 0.1
done
# A datagram may be lost or late on a loaded machine (TSan runs 8
# threads on 2 CPUs): up to 5 tries each, and of a late answer that
# comes with the answer to the next try, the first.
for size in 100 20000 100 20000; do
	for _ in 1 2 3 4 5; do
		port=$(head -c "$size" /dev/zero | timeout 6 socat -b 65535 \
			-T 3 - UDP4:10.0.2.2:9999,sourceport=4444 |
			head -n 1 || true)
		[ -n "$port" ] && break
	done
	echo "from $port"
done
'

@test "queues: --queues 8: datagrams reassembled from fragments find their flow on another thread (a UDP forward's replies, an outbound flow)" {
	run in_sandbox '
		bg_start echo socat -b 65535 UDP4-RECVFROM:9999,fork \
			SYSTEM:"echo \$SOCAT_PEERPORT"
		printf "%s" "$1" >"$SCEN_DIR/guest"
		chmod a+r "$SCEN_DIR/guest"
		as_user "$TAPIR_BIN" run --queues 8 -p 127.0.0.1:17007:7/udp -- \
			bash "$SCEN_DIR/guest" &
		run_pid=$!
		wait_for 10 test -e "$SCEN_DIR/ready"
		for size in 5 20000 20000 20000; do
			head -c "$size" /dev/urandom >"$SCEN_DIR/dgram"
			for _ in 1 2 3; do
				timeout 5 socat -b 65535 -T 2 \
					"OPEN:$SCEN_DIR/dgram,rdonly!!CREATE:$SCEN_DIR/echo" \
					UDP4:127.0.0.1:17007 || true
				cmp -s "$SCEN_DIR/dgram" "$SCEN_DIR/echo" && break
			done
			cmp -s "$SCEN_DIR/dgram" "$SCEN_DIR/echo" &&
				echo "echo $size ok"
			rm -f "$SCEN_DIR/echo"
		done
		touch "$SCEN_DIR/done"
		wait "$run_pid"
	' "$FRAGMENTS"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c "^echo .* ok$" <<<"$output")" -eq 4 ]
	# One flow: every datagram left from the same host port.
	[ "$(grep -c "^from [0-9]" <<<"$output")" -eq 4 ]
	[ "$(grep "^from " <<<"$output" | sort -u | wc -l)" -eq 1 ]
}

# The guest side of the collision test: an echo server on 7777 (manyconn,
# $1) until the sandbox says done.
ECHO_GUEST='
"$1" server 7777 &
echo ready >"$SCEN_DIR/ready"
for _ in $(seq 600); do
	[ -e "$SCEN_DIR/done" ] && break
	sleep 0.1
done
kill $!
'

# Every loopback client of a forward, and every IPv6 client of it, reaches
# the guest as 10.0.2.2 with its own port: two clients with the same port
# look like one connection to the guest. The second must be refused,
# whichever thread the first one is on; before, the second went to the
# least busy thread, the guest's challenge ACK for its SYN came back there,
# and that thread's RST ended the first one.
@test "queues: --queues 1, 2 and 4: 200 host clients that look to the guest like established forwarded connections are refused, and end none of them (IPv4, IPv6 beside IPv4, IPv6)" {
	run in_sandbox '
		ip addr add fd01::1/128 dev lo
		printf "%s" "$1" >"$SCEN_DIR/guest"
		chmod a+r "$SCEN_DIR/guest"
		collide() {
			"$TOOLS/collide" 200 "$@" || true
		}
		for q in 1 2 4; do
			S=$SCEN_DIR/api$q.sock
			rm -f "$SCEN_DIR/ready" "$SCEN_DIR/done"
			as_user "$TAPIR_BIN" run --queues "$q" --forward-mode=tap \
				-p 127.0.0.1:17777:7777 -a "$S" -- \
				bash "$SCEN_DIR/guest" "$TOOLS/manyconn" &
			run_pid=$!
			wait_for 10 test -e "$SCEN_DIR/ready"
			wait_for 5 test -S "$S"
			"$TAPIR_BIN" api "$S" "{\"execute\":\"add_hostfwd\",\"arguments\":{\"proto\":\"tcp\",\"host_addr\":\"::1\",\"host_port\":17777,\"guest_port\":7777}}" >/dev/null
			for _ in $(seq 50); do
				"$TOOLS/manyconn" client 127.0.0.1 17777 1 1 0 \
					>/dev/null 2>&1 && break
				sleep 0.1
			done
			# Ports of their own per round: no TIME_WAIT in the way.
			base=$((20000 + q * 1000))
			echo "q$q v4: $(collide "$base" 127.0.0.1 127.0.0.1 17777 \
				127.0.0.2 127.0.0.1 17777)"
			echo "q$q v6+v4: $(collide $((base + 300)) ::1 ::1 17777 \
				127.0.0.1 127.0.0.1 17777)"
			echo "q$q v6: $(collide $((base + 600)) ::1 ::1 17777 \
				fd01::1 ::1 17777)"
			echo "q$q refused $("$TAPIR_BIN" api "$S" \
				"{\"execute\":\"get_stats\"}" |
				jq .return.drops.flow_limit)"
			touch "$SCEN_DIR/done"
			wait "$run_pid"
		done
	' "$ECHO_GUEST"
	echo "$output"
	[ "$status" -eq 0 ]
	for q in 1 2 4; do
		has_line "q$q v4: pairs 200, established 200, refused 200, intact 200"
		has_line "q$q v6+v4: pairs 200, established 200, refused 200, intact 200"
		has_line "q$q v6: pairs 200, established 200, refused 200, intact 200"
		has_line "q$q refused 600"
	done
}

# A thread takes its name (tapir-qN) when it first runs, which under ASan
# can be after the command started: the count is read until it is 15
# (for 5 s at most).
@test "queues: --queues 16 under tapir run's sandbox and seccomp filter: 16 threads start and stop cleanly" {
	run in_sandbox '
		as_user "$TAPIR_BIN" run --queues 16 -- sh -c "
			for i in \$(seq 20); do
				n=\$(cat /proc/\$PPID/task/*/comm | grep -c ^tapir-q)
				[ \$n -ge 15 ] && break
				sleep 0.25
			done
			echo \"datapath threads: \$n\"
			grep -E \"^Seccomp:\" /proc/\$PPID/status
			curl -sS --max-time 5 http://10.0.2.2:1/ 2>&1 | head -c 0"
		echo "exit $?"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "datapath threads: 15"
	has_line "Seccomp:	2"
	has_line "exit 0"
}
