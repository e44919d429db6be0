#!/usr/bin/env bats
# tests/lifecycle.bats - how tapir tells its caller it is ready and when it
# exits, as slirp4netns does: "1" on the ready fd, then close; exit 0 when
# the exit fd hangs up (data on it is ignored), on SIGTERM or SIGINT, and
# when the target namespace goes away; the API socket is removed each time.
# Connections still open then end in a reset at both ends, except that a
# host peer gets the whole stream, and a FIN, where the guest had ended it.

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib

# start_tapir NAME ARGS...: tapir ARGS as the test user in the background,
# with -r 3 writing to $SCEN_DIR/NAME.ready, and with FD4=FILE set, FILE
# open for reading as its fd 4. Returns once "1" is there, and fails,
# showing tapir's output, if tapir exits or takes over 5 s.
start_tapir() {
	local name=$1
	shift
	bg_start_user "$name" bash -c '
		[[ -z "$2" ]] || exec 4<"$2"
		exec "${@:3}" 3>"$1"' bash \
		"$SCEN_DIR/$name.ready" "${FD4:-}" "$TAPIR_BIN" -r 3 "$@"
	if ! wait_for 5 tapir_ready_or_gone "$name" ||
		[[ "$(cat "$SCEN_DIR/$name.ready")" != 1 ]]; then
		echo "tapir $* did not get ready; its output:" >&2
		cat "$SCEN_DIR/$name.log" >&2
		return 1
	fi
}

# tapir_ready_or_gone NAME: true once NAME wrote its ready byte or exited.
tapir_ready_or_gone() {
	[[ "$(cat "$SCEN_DIR/$1.ready" 2>/dev/null)" == 1 ]] ||
		! _scen_alive "$(bg_pid "$1")"
}

# now_ms: the clock in milliseconds.
now_ms() {
	local t=${EPOCHREALTIME/[.,]/}
	echo $((10#$t / 1000))
}

# exits_within SECONDS NAME: wait for bg process NAME to exit and print
# "NAME: status S after T ms", T counted from $T0 (now_ms).
exits_within() {
	local pid rc=0
	pid=$(bg_pid "$2")
	wait_for "$1" eval '! _scen_alive '"$pid" || true
	if _scen_alive "$pid"; then
		echo "$2: still running after $1 s"
		return 0
	fi
	wait "$pid" || rc=$?
	echo "$2: status $rc after $(($(now_ms) - T0)) ms"
}

# sbx SNIPPET [ARGS...]: in_sandbox with the helpers above defined.
sbx() {
	local script=$1
	shift
	in_sandbox "$(declare -f start_tapir tapir_ready_or_gone now_ms \
		exits_within)
		$script" "$@"
}

# exited_fast NAME: $output says NAME exited with status 0 within 1 s.
exited_fast() {
	[[ "$output" =~ $1:\ status\ 0\ after\ ([0-9]+)\ ms ]] &&
		((BASH_REMATCH[1] < 1000))
}

# A host peer of a connection tapir still carries when it stops: prints
# "eof N" for an end of stream, "reset N" for a reset, N the bytes read
# before it. `listen PORT` takes one client on 127.0.0.1:PORT; `connect
# PORT` connects there. With FILE, it reads nothing until FILE exists,
# with a small receive buffer: what the guest sent then waits in tapir's
# host socket, where a reset would throw it away.
# shellcheck disable=SC2034 # passed into the sandbox
PEER_PY='
import os, socket, sys, time
mode, port, late = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
s = socket.socket()
if late:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
if mode == "listen":
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(1)
    s, _ = s.accept()
else:
    s.settimeout(5)
    s.connect(("127.0.0.1", port))
    s.settimeout(None)
for _ in range(300):
    if not late or os.path.exists(late[0]):
        break
    time.sleep(0.1)
n = 0
try:
    while True:
        b = s.recv(65536)
        if not b:
            print("eof", n, flush=True)
            break
        n += len(b)
except ConnectionResetError:
    print("reset", n, flush=True)
'

# stopped_mid_stream MODE: tapir run --forward-mode=MODE carries four
# streams to host peers, and stops when its command is killed. Two are
# endless: one the guest opened (up), one through a -p forward (down).
# Two are 100000 bytes the guest sent whole and closed, to peers that
# read only after tapir is gone (upfin, downfin). Prints what each peer
# saw, how the guest's endless senders ended, and any sanitizer report of
# tapir's.
stopped_mid_stream() {
	run sbx '
		printf "%s" "$1" >"$SCEN_DIR/peer.py"
		peer() { bg_start "$1" python3 "$SCEN_DIR/peer.py" "${@:2}"; }
		peer up listen 7011
		peer upfin listen 7013 "$SCEN_DIR/stopped"
		wait_for 5 tcp_listening 7011
		wait_for 5 tcp_listening 7013
		bg_start_user t "$TAPIR_BIN" run --forward-mode="$2" \
			-p 127.0.0.1:7012:7012 -p 127.0.0.1:7014:7014 -- bash -c "
			(socat -u /dev/zero TCP-LISTEN:7012,reuseaddr
				echo \$? >$SCEN_DIR/guest-down) &
			head -c 100000 /dev/zero |
				socat -u - TCP-LISTEN:7014,reuseaddr &
			for i in \$(seq 50); do
				ss -Hltn \"sport = :7012 or sport = :7014\" |
					grep -c . | grep -qx 2 && break
				sleep 0.1
			done
			touch $SCEN_DIR/ns-ready
			(socat -u /dev/zero TCP:10.0.2.2:7011
				echo \$? >$SCEN_DIR/guest-up) &
			head -c 100000 /dev/zero | socat -u - TCP:10.0.2.2:7013 &
			wait"
		wait_for 10 test -e "$SCEN_DIR/ns-ready"
		peer down connect 7012
		peer downfin connect 7014 "$SCEN_DIR/stopped"
		# Each endless stream is flowing, the others have had time.
		wait_for 10 eval "[ \$(ss -Htn state established \
			\"( sport = :7011 or dport = :7012 )\" | wc -l) -ge 2 ]"
		sleep 1
		T0=$(now_ms)
		kill -TERM "$(bg_pid t)"
		exits_within 5 t
		touch "$SCEN_DIR/stopped"
		for p in up down upfin downfin; do
			wait_for 10 eval "! _scen_alive $(bg_pid $p)"
			echo "$p: $(cat "$SCEN_DIR/$p.log")"
		done
		for p in up down; do
			wait_for 5 test -e "$SCEN_DIR/guest-$p"
			echo "guest $p: status $(cat "$SCEN_DIR/guest-$p")"
		done
		echo "sanitizer: $(grep -c -E "Sanitizer|runtime error" "$SCEN_DIR/t.log")"
	' "$PEER_PY" "$1"
	echo "$output"
	[ "$status" -eq 0 ]
	# A FIN would say the guest sent all it meant to: the peer would
	# take a cut stream for a whole one.
	[[ "$output" =~ up:\ reset\ ([0-9]+) ]]
	((BASH_REMATCH[1] > 0))
	[[ "$output" =~ down:\ reset\ ([0-9]+) ]]
	((BASH_REMATCH[1] > 0))
	# A stream the guest ended arrives whole, however late it is read.
	[[ "$output" == *"upfin: eof 100000"* ]]
	[[ "$output" == *"downfin: eof 100000"* ]]
	# The guest's ends are reset too, not left to retransmit.
	[[ "$output" =~ guest\ up:\ status\ [1-9] ]]
	[[ "$output" =~ guest\ down:\ status\ [1-9] ]]
	[[ "$output" == *"sanitizer: 0"* ]]
}

@test "ready fd: exactly \"1\", no newline, then closed while tapir runs" {
	run sbx '
		pid=$(userns_holder)
		mkfifo -m 0666 "$SCEN_DIR/ready"
		timeout 5 cat "$SCEN_DIR/ready" >"$SCEN_DIR/got" &
		reader=$!
		bg_start_user t bash -c '\''exec "${@:2}" 3>"$1"'\'' bash \
			"$SCEN_DIR/ready" "$TAPIR_BIN" -r 3 "$pid" tap0
		T0=$(now_ms)
		rc=0
		wait "$reader" || rc=$?
		echo "reader: status $rc after $(($(now_ms) - T0)) ms"
		echo "bytes: $(od -An -tx1 "$SCEN_DIR/got" | xargs)"
		_scen_alive "$(bg_pid t)" && echo "tapir still runs"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	# EOF, not the 5 s timeout: tapir closed it, and so did everything
	# it started.
	[[ "$output" =~ reader:\ status\ 0\ after\ ([0-9]+)\ ms ]]
	((BASH_REMATCH[1] < 2000))
	[[ "$output" == *"bytes: 31"$'\n'* ]]
	[[ "$output" == *"tapir still runs"* ]]
}

@test "exit fd: data is ignored, the last writer closing ends tapir (0)" {
	run sbx '
		pid=$(userns_holder)
		fifo=$SCEN_DIR/exit
		mkfifo -m 0666 "$fifo"
		# The one writer, like conmon holding its end for podman.
		bg_start writer bash -c "exec sleep 600 >\"\$1\"" bash "$fifo"
		FD4=$fifo start_tapir t -e 4 "$pid" tap0
		echo data >"$fifo"
		sleep 1
		_scen_alive "$(bg_pid t)" && echo "alive after data"
		T0=$(now_ms)
		bg_stop writer
		exits_within 3 t
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"alive after data"* ]]
	exited_fast t
}

@test "exit fd not open (-e 99): exit 0 at once" {
	run sbx '
		pid=$(userns_holder)
		T0=$(now_ms)
		rc=0
		as_user timeout 5 bash -c '\''exec "${@:2}" 3>"$1"'\'' bash \
			"$SCEN_DIR/ready" "$TAPIR_BIN" -r 3 -e 99 "$pid" tap0 || rc=$?
		echo "t: status $rc after $(($(now_ms) - T0)) ms"
		echo "ready: $(cat "$SCEN_DIR/ready")"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	exited_fast t
	# It got as far as ready: the exit fd is checked in the loop.
	[[ "$output" == *"ready: 1"* ]]
}

@test "SIGTERM and SIGINT: exit 0" {
	run sbx '
		pid=$(userns_holder)
		for sig in TERM INT; do
			start_tapir "$sig" "$pid" "tap$sig"
			T0=$(now_ms)
			kill -s "$sig" "$(bg_pid "$sig")"
			exits_within 3 "$sig"
		done
	'
	echo "$output"
	[ "$status" -eq 0 ]
	exited_fast TERM
	exited_fast INT
}

@test "the target namespace goes away: exit 0" {
	run sbx '
		pid=$(userns_holder)
		start_tapir t -c "$pid" tap0
		T0=$(now_ms)
		bg_stop holder
		exits_within 3 t
	'
	echo "$output"
	[ "$status" -eq 0 ]
	exited_fast t
}

@test "path mode under /proc/PID/: that process exiting ends tapir, exit 0" {
	# rootlesskit's detach mode passes /proc/<child>/root/<statedir>/netns.
	run sbx '
		pid=$(userns_holder)
		start_tapir t -c --netns-type=path \
			--userns-path=/proc/$pid/ns/user /proc/$pid/ns/net tap0
		T0=$(now_ms)
		bg_stop holder
		exits_within 3 t
	'
	echo "$output"
	[ "$status" -eq 0 ]
	exited_fast t
}

@test "-a SOCK: the socket listens at ready and is gone after every exit" {
	run sbx '
		pid=$(userns_holder)
		sock=$SCEN_DIR/api.sock
		fifo=$SCEN_DIR/exit
		mkfifo -m 0666 "$fifo"
		bg_start writer bash -c "exec sleep 600 >\"\$1\"" bash "$fifo"
		FD4=$fifo start_tapir hup -a "$sock" -e 4 "$pid" tap0
		if [[ ! -S "$sock" ]]; then
			echo "no-api-socket"
			exit 0
		fi
		echo "listening at ready"
		T0=$(now_ms)
		bg_stop writer
		exits_within 3 hup
		[[ -e "$sock" ]] && echo "hup: socket left"
		for sig in TERM INT; do
			start_tapir "$sig" -a "$sock" "$pid" "tap$sig"
			T0=$(now_ms)
			kill -s "$sig" "$(bg_pid "$sig")"
			exits_within 3 "$sig"
			[[ -e "$sock" ]] && echo "$sig: socket left"
		done
		rc=0
		as_user "$TAPIR_BIN" -a "$sock" -e 99 "$pid" tap0 || rc=$?
		echo "e99: status $rc"
		[[ -e "$sock" ]] && echo "e99: socket left"
		start_tapir gone -a "$sock" "$pid" tap0
		T0=$(now_ms)
		bg_stop holder
		exits_within 3 gone
		[[ -e "$sock" ]] && echo "gone: socket left"
		true
	'
	echo "$output"
	[ "$status" -eq 0 ]
	if [[ "$output" == *no-api-socket* ]]; then
		skip "API socket not implemented yet"
	fi
	[[ "$output" == *"listening at ready"* ]]
	exited_fast hup
	exited_fast TERM
	exited_fast INT
	exited_fast gone
	[[ "$output" == *"e99: status 0"* ]]
	[[ "$output" != *"socket left"* ]]
}

@test "stopped mid-stream: a host peer sees a reset where the guest had not ended its stream, the whole stream where it had (forwards through the tap)" {
	stopped_mid_stream tap
}

@test "stopped mid-stream: a host peer sees a reset where the guest had not ended its stream, the whole stream where it had (spliced forwards)" {
	stopped_mid_stream splice
}
