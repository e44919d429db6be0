#!/usr/bin/env bats
# tests/fault.bats - faults around a running tapir: peers on either side
# that reset mid-transfer, fds running out, the target killed, the API
# socket file removed, the tap deleted, a flood of silent API clients, and
# a forward removed under live connections.
#
# In each case tapir either keeps serving the other flows, shown by a new
# connection and a ping afterwards, or exits with one line. It never spins:
# its CPU use over idle seconds after the fault (from /proc/PID/stat) stays
# under 5 % of a core. And nothing leaks: /proc/PID/fd comes back to its
# count before the fault, and VmRSS to within RSS_SLACK_KB of it (freed heap
# is not always returned to the kernel; with ASan, freed memory sits in the
# quarantine, so the slack is larger there and LeakSanitizer checks leaks at
# exit instead).
#
# tapir runs as the unprivileged test user, attached to a user+net
# namespace as rootlesskit and podman run slirp4netns, unless the case is
# about `tapir run`.

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib

setup() {
	TOOLS=${TAPIR_BIN_DIR:-$TAPIR_ROOT/build/tools}
	export TOOLS
	RSS_SLACK_KB=4096
	if ldd "$TAPIR_BIN" | grep -q libasan; then
		RSS_SLACK_KB=$((128 * 1024))
	fi
	# ASan runs several times slower: room for it in every bound.
	export SANDBOX_TIMEOUT=300
}

# Helpers for the snippets, inside the sandbox:
#   attach ARGS...     nginx on host 127.0.0.1:8080 (with a 16 MB file,
#                      /big), a user+net namespace $G, and tapir attached
#                      to it as the test user with --configure and the API
#                      socket $S, plus ARGS; $T is tapir's pid
#   guest CMD...       CMD as the test user in $G's namespaces
#   guest_bg NAME CMD...  the same in the background (bg_start_user)
#   other_flows LABEL  a new HTTP fetch and a ping from the guest, printed
#                      as "LABEL http: ..." and "LABEL ping: ok"
#   baseline           remember tapir's fd count and RSS
#   settle LABEL       wait (up to 15 s) for the fd count to come back,
#                      then print "LABEL fds=N base=B cpu=C rss_growth_kb=R",
#                      C being tapir's CPU % over 3 idle seconds
#   warm_up            a whole 16 MB download and upload through tapir, so
#                      that what tapir keeps after any transfer (buffers,
#                      heap) is in the baseline
#   api JSON           one request to $S as the test user
FAULT='
	S=$SCEN_DIR/api.sock
	attach() {
		nginx_start web 127.0.0.1:8080
		head -c 16777216 /dev/zero >"$SCEN_DIR/web/www/big"
		G=$(userns_holder)
		start_tapir t --configure --mtu 1500 -a "$S" "$@" "$G" tap0
		T=$(bg_pid t)
	}
	guest() {
		nsrun "$G" "$@"
	}
	guest_bg() {
		local name=$1
		shift
		bg_start_user "$name" nsenter -t "$G" -U -n \
			--preserve-credentials -- "$@"
	}
	guest_listening() {
		nsenter -t "$G" -n ss -Hltn "sport = :$1" | grep -q .
	}
	other_flows() {
		echo "$1 http: $(guest curl -sS --max-time 10 http://10.0.2.2:8080/)"
		guest ping -c1 -W5 10.0.2.2 >/dev/null && echo "$1 ping: ok"
	}
	fd_count() {
		find "/proc/$T/fd" -mindepth 1 -maxdepth 1 | wc -l
	}
	rss_kb() {
		awk "/^VmRSS:/ {print \$2}" "/proc/$T/status"
	}
	fds_back() {
		(($(fd_count) <= BASE_FDS))
	}
	baseline() {
		BASE_FDS=$(fd_count)
		BASE_RSS=$(rss_kb)
	}
	settle() {
		wait_for 15 fds_back || true
		echo "$1 fds=$(fd_count) base=$BASE_FDS cpu=$(cpu_percent "$T" 3) rss_growth_kb=$(($(rss_kb) - BASE_RSS))"
	}
	warm_up() {
		bg_start warm socat -u TCP-LISTEN:7100,reuseaddr OPEN:/dev/null
		wait_for 5 tcp_listening 7100
		guest curl -sS --max-time 60 -o /dev/null http://10.0.2.2:8080/big
		guest bash -c "head -c 16777216 /dev/zero |
			timeout 60 socat -u - TCP:10.0.2.2:7100"
		bg_stop warm
	}
	api() {
		as_user timeout 10 "$TAPIR_BIN" api "$S" "$1"
	}
'

# settled LABEL: $output has LABEL's settle line, with the fds back at the
# baseline, CPU under 5 % and RSS within RSS_SLACK_KB.
settled() {
	local re="^$1 fds=([0-9]+) base=([0-9]+) cpu=([0-9]+) rss_growth_kb=(-?[0-9]+)$"
	local line
	line=$(grep -E "$re" <<<"$output") || {
		echo "no settle line for $1"
		return 1
	}
	[[ "$line" =~ $re ]]
	if ((BASH_REMATCH[1] > BASH_REMATCH[2])); then
		echo "$1: fds leaked"
		return 1
	fi
	if ((BASH_REMATCH[3] >= 5)); then
		echo "$1: tapir spins"
		return 1
	fi
	if ((BASH_REMATCH[4] > RSS_SLACK_KB)); then
		echo "$1: RSS grew over $RSS_SLACK_KB kB"
		return 1
	fi
}

# cut_short SENDER RECEIVER: SENDER's line shows an rstpeer send-rst that
# wrote at least 32 MiB and reset with bytes unsent (its sink, given
# 30 MiB, stops reading there for 2 s: the window shuts, the bytes stay),
# and RECEIVER's a sink that saw the reset after fewer bytes than were
# written: the reset came mid-stream, as on a direct connection.
cut_short() {
	local sent unsent got
	[[ "$output" =~ $1:\ send-rst\ end=done\ bytes=([0-9]+)\ unsent=([0-9]+) ]] || {
		echo "$1: no send-rst that ended with its reset (end=done)"
		return 1
	}
	sent=${BASH_REMATCH[1]} unsent=${BASH_REMATCH[2]}
	((sent >= 33554432 && unsent > 0)) || {
		echo "$1: wrote $sent, $unsent unsent at the reset"
		return 1
	}
	got=$(sed -En "s/^$2: sink end=reset bytes=([0-9]+)$/\1/p" <<<"$output")
	[ -n "$got" ] || {
		echo "no reset seen by $2"
		return 1
	}
	((got < sent)) || {
		echo "$2: got all $got of $sent bytes: the reset cut nothing"
		return 1
	}
}

# flows_ok LABEL: the new connection and the ping after LABEL worked.
flows_ok() {
	has_line "$1 http: tapir test page" && has_line "$1 ping: ok"
}

@test "fault: a host peer resets mid-transfer (download, upload, on a forward): the guest sees the reset, the rest goes on" {
	run in_sandbox "$FAULT"'
		attach -p 127.0.0.1:18080:80
		warm_up
		other_flows warm
		baseline
		# Download: the host server resets after 32 MB, with data still
		# queued; the guest reader must get the reset, not hang.
		bg_start h2g "$TOOLS/rstpeer" server 7101 send-rst 33554432
		wait_for 5 tcp_listening 7101
		echo "h2g guest: $(guest "$TOOLS/rstpeer" client 10.0.2.2 7101 sink 31457280)"
		wait_for 10 test -s "$SCEN_DIR/h2g.log"
		echo "h2g host: $(cat "$SCEN_DIR/h2g.log")"
		other_flows h2g
		settle h2g
		# Upload: the host server reads 16 MB, then resets while the
		# guest still writes.
		bg_start g2h "$TOOLS/rstpeer" server 7102 recv-rst 16777216
		wait_for 5 tcp_listening 7102
		echo "g2h guest: $(guest "$TOOLS/rstpeer" client 10.0.2.2 7102 source)"
		wait_for 10 test -s "$SCEN_DIR/g2h.log"
		echo "g2h host: $(cat "$SCEN_DIR/g2h.log")"
		other_flows g2h
		settle g2h
		# The host client of a port forward resets mid-upload.
		guest_bg gsink "$TOOLS/rstpeer" server 80 sink 31457280
		wait_for 5 guest_listening 80
		echo "fwd host: $("$TOOLS/rstpeer" client 127.0.0.1 18080 send-rst 33554432)"
		wait_for 10 test -s "$SCEN_DIR/gsink.log"
		echo "fwd guest: $(cat "$SCEN_DIR/gsink.log")"
		other_flows fwd
		settle fwd
	'
	echo "$output"
	[ "$status" -eq 0 ]
	flows_ok warm
	cut_short "h2g host" "h2g guest"
	grep -Eq '^g2h guest: source end=reset bytes=[0-9]+$' <<<"$output"
	has_line "g2h host: recv-rst end=done bytes=16777216"
	cut_short "fwd host" "fwd guest"
	for label in h2g g2h fwd; do
		flows_ok "$label"
		settled "$label"
	done
}

@test "fault: the guest resets mid-transfer (upload, download): the host peer sees the reset, the rest goes on" {
	run in_sandbox "$FAULT"'
		attach
		warm_up
		baseline
		bg_start up "$TOOLS/rstpeer" server 7103 sink 31457280
		wait_for 5 tcp_listening 7103
		echo "up guest: $(guest "$TOOLS/rstpeer" client 10.0.2.2 7103 send-rst 33554432)"
		wait_for 10 test -s "$SCEN_DIR/up.log"
		echo "up host: $(cat "$SCEN_DIR/up.log")"
		other_flows up
		settle up
		bg_start down "$TOOLS/rstpeer" server 7104 source
		wait_for 5 tcp_listening 7104
		echo "down guest: $(guest "$TOOLS/rstpeer" client 10.0.2.2 7104 recv-rst 16777216)"
		wait_for 10 test -s "$SCEN_DIR/down.log"
		echo "down host: $(cat "$SCEN_DIR/down.log")"
		other_flows down
		settle down
	'
	echo "$output"
	[ "$status" -eq 0 ]
	cut_short "up guest" "up host"
	has_line "down guest: recv-rst end=done bytes=16777216"
	grep -Eq '^down host: source end=reset bytes=[0-9]+$' <<<"$output"
	for label in up down; do
		flows_ok "$label"
		settled "$label"
	done
}

# Moved here from tests/stress.bats, with the fd, RSS and CPU checks after
# the recovery added.
@test "fault: out of fds: guest SYNs, API clients (twice in a row) and forward clients are refused at once, quietly, and served again once fds free up" {
	run in_sandbox "$FAULT"'
		bg_start echo "$TOOLS/manyconn" server 7777
		wait_for 5 tcp_listening 7777
		# A hard limit too (tapir raises its soft limit to the hard
		# one): room for about 10 connections over what tapir needs
		# itself, with one tap queue (each more takes fds of its own:
		# the ASan pass sets TAPIR_QUEUES=2). The guest, which inherits
		# the limit, says it started, waits for "go",
		# tries 20 and holds them until "release" appears, then
		# reports whether a new one works and closes it too.
		bg_start_user tapir prlimit --nofile=24:24 "$TAPIR_BIN" run \
			--queues 1 -a "$S" -p 127.0.0.1:18080:80 -- bash -c "
			touch $SCEN_DIR/started
			while [ ! -e $SCEN_DIR/go ]; do sleep 0.1; done
			ok=0 refused=0
			for i in \$(seq 20); do
				if exec {fd}<>/dev/tcp/10.0.2.2/7777; then
					ok=\$((ok + 1))
				else
					refused=\$((refused + 1))
				fi
			done 2>/dev/null
			echo ok=\$ok refused=\$refused > $SCEN_DIR/held
			while [ ! -e $SCEN_DIR/release ]; do sleep 0.1; done
			for fd in /proc/self/fd/*; do
				n=\${fd##*/}
				[ \$n -gt 2 ] && eval \"exec \$n>&-\"
			done
			sleep 0.5
			exec 3<>/dev/tcp/10.0.2.2/7777 && echo again=ok > $SCEN_DIR/again
			exec 3>&-
			sleep 60
		"
		# Once the command runs, tapir is past its set-up.
		wait_for 10 test -e "$SCEN_DIR/started"
		T=$(bg_pid tapir)
		baseline
		touch "$SCEN_DIR/go"
		wait_for 30 test -s "$SCEN_DIR/held"
		cat "$SCEN_DIR/held"
		start=$(date +%s%N)
		# Twice in a row: the spare fd must come back after a refusal,
		# also in the sandbox, whose root has no /dev/null.
		for n in 1 1b; do
			as_user timeout 5 "$TAPIR_BIN" api "$S" "{\"execute\":\"get_info\"}" \
				>"$SCEN_DIR/api$n" 2>&1 || true
			echo "api$n: $(cat "$SCEN_DIR/api$n")"
		done
		rc=0
		timeout 5 curl -sS -o /dev/null http://127.0.0.1:18080/ 2>/dev/null || rc=$?
		echo "curl_rc=$rc"
		echo "refusals_ms=$((($(date +%s%N) - start) / 1000000))"
		echo "cpu=$(cpu_percent "$T" 4)"
		touch "$SCEN_DIR/release"
		wait_for 10 test -s "$SCEN_DIR/again"
		cat "$SCEN_DIR/again"
		api "{\"execute\":\"get_info\"}" | jq -r "\"api2: \" + .return.driver"
		settle recovered
		echo "log_lines=$(grep -c . "$SCEN_DIR/tapir.log" || true)"
		sed "s/^/log: /" "$SCEN_DIR/tapir.log"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	# Some connections got through, the rest were refused (RST).
	[[ "$output" =~ ok=([0-9]+)\ refused=([0-9]+) ]]
	((BASH_REMATCH[1] >= 3 && BASH_REMATCH[2] >= 5))
	grep -q '^api1: .*too many open files' <<<"$output"
	grep -q '^api1b: .*too many open files' <<<"$output"
	# The forward's client is reset (curl 56, or 7 if the reset came
	# before its connect returned), not left hanging (28).
	grep -Eqx 'curl_rc=(56|7)' <<<"$output"
	ms=$(sed -n 's/^refusals_ms=//p' <<<"$output")
	[ "$ms" -lt 3000 ]
	cpu=$(sed -n 's/^cpu=//p' <<<"$output")
	[ "$cpu" -lt 5 ]
	has_line "again=ok"
	has_line "api2: tapir"
	settled recovered
	# One line per kind of refusal, not one per SYN or client.
	nlines=$(sed -n "s/^log_lines=//p" <<<"$output")
	[ "$nlines" -le 3 ]
}

@test "fault: the target killed with SIGKILL: tapir exits within 2 s with one line (attach), or with status 137 (run)" {
	run in_sandbox "$FAULT"'
		G=$(userns_holder)
		start_tapir t --configure -a "$S" "$G" tap0
		T=$(bg_pid t)
		start=$(date +%s%N)
		kill -KILL "$G"
		wait_for 10 eval "! _scen_alive $T" || true
		echo "attach ms=$((($(date +%s%N) - start) / 1000000))"
		rc=0
		wait "$T" || rc=$?
		echo "attach rc=$rc socket=$(test -e "$S" && echo left || echo gone)"
		sed "s/^/attach log: /" "$SCEN_DIR/t.log"
		# tapir run: the command is the target.
		bg_start_user r "$TAPIR_BIN" run -a "$S" -- sleep 60
		wait_for 10 test -S "$S"
		R=$(bg_pid r)
		cmd=$(api "{\"execute\":\"get_info\"}" | jq .return.target.pid)
		start=$(date +%s%N)
		kill -KILL "$cmd"
		wait_for 10 eval "! _scen_alive $R" || true
		echo "run ms=$((($(date +%s%N) - start) / 1000000))"
		rc=0
		wait "$R" || rc=$?
		echo "run rc=$rc socket=$(test -e "$S" && echo left || echo gone)"
		sed "s/^/run log: /" "$SCEN_DIR/r.log"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	for mode in attach run; do
		[[ "$output" =~ $mode\ ms=([0-9]+) ]]
		((BASH_REMATCH[1] < 2000))
	done
	has_line "attach rc=0 socket=gone"
	[ "$(grep -c '^attach log: ' <<<"$output")" -eq 1 ]
	grep -Eq '^attach log: tapir: target PID [0-9]+ exited: stopping$' <<<"$output"
	# As a shell reports a command killed by a signal; the command's
	# status is the line that says it.
	has_line "run rc=137 socket=gone"
	[ "$(grep -c '^run log: ' <<<"$output")" -eq 0 ]
}

@test "fault: the API socket file removed: the datapath and forwards go on, no spin, and tapir leaves a new file at that path alone" {
	run in_sandbox "$FAULT"'
		attach -p 127.0.0.1:18080:80
		guest_bg echo socat TCP-LISTEN:80,fork,reuseaddr SYSTEM:cat
		wait_for 5 guest_listening 80
		other_flows before
		baseline
		rm "$S"
		other_flows removed
		echo "removed fwd: $(echo hello | timeout 10 socat -t 2 - TCP:127.0.0.1:18080)"
		rc=0
		api "{\"execute\":\"get_info\"}" >"$SCEN_DIR/api.out" 2>&1 || rc=$?
		echo "removed api rc=$rc lines=$(wc -l <"$SCEN_DIR/api.out")"
		settle removed
		# Another program now owns the path (a restarted engine, say):
		# tapir exiting must not remove that file.
		bg_start other socat UNIX-LISTEN:"$S",fork OPEN:/dev/null
		wait_for 5 test -S "$S"
		bg_stop t
		echo "after exit: $(test -S "$S" && echo kept || echo removed)"
		echo "log_lines=$(grep -c . "$SCEN_DIR/t.log" || true)"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	flows_ok before
	flows_ok removed
	has_line "removed fwd: hello"
	# tapir api: "connect ...: No such file or directory", status 2.
	has_line "removed api rc=2 lines=1"
	settled removed
	has_line "after exit: kept"
	has_line "log_lines=0"
}

# Moved here from tests/stress.bats.
@test "fault: the tap deleted in the namespace: tapir exits within 1 s, status 1, one line naming the tap" {
	run in_sandbox '
		pid=$(userns_holder)
		start_tapir t --configure --mtu 1500 "$pid" tap0
		t=$(bg_pid t)
		nsrun "$pid" ip link del tap0
		# From when the tap is gone: the namespace tools take their
		# own time to start on a loaded machine.
		start=$(date +%s%N)
		wait_for 3 bash -c "! kill -0 $t 2>/dev/null"
		echo "ms=$((($(date +%s%N) - start) / 1000000))"
		rc=0
		wait "$t" || rc=$?
		echo "rc=$rc"
		sed "s/^/log: /" "$SCEN_DIR/t.log"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	ms=$(sed -n 's/^ms=//p' <<<"$output")
	[ "$ms" -lt 1000 ]
	has_line "rc=1"
	[ "$(grep -c '^log: ' <<<"$output")" -eq 1 ]
	grep -q '^log: tapir: tap tap0 is gone' <<<"$output"
}

@test "fault: 10000 API clients that send nothing: no fd exhaustion, no spin; a fresh client and the datapath are served" {
	run in_sandbox "$FAULT"'
		attach
		other_flows before
		baseline
		# The flood holds its 10000 clients for up to 120 s, until
		# bg_stop; the shell needs the fds for them.
		ulimit -n 20000
		bg_start flood "$TOOLS/apiflood" "$S" 10000 120
		wait_for 120 grep -q "^connected" "$SCEN_DIR/flood.log"
		echo "flood: $(cat "$SCEN_DIR/flood.log")"
		echo "held fds=$(fd_count) base=$BASE_FDS"
		start=$(date +%s%N)
		echo "fresh: $(api "{\"execute\":\"get_info\"}" | jq -r .return.driver)"
		echo "fresh ms=$((($(date +%s%N) - start) / 1000000))"
		other_flows held
		echo "held cpu=$(cpu_percent "$T" 3)"
		bg_stop flood
		settle flooded
		echo "log_lines=$(grep -c . "$SCEN_DIR/t.log" || true)"
		sed "s/^/log: /" "$SCEN_DIR/t.log"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	flows_ok before
	has_line "flood: connected 10000, failed 0"
	# At most API_MAX_CONNS (64) clients are open in tapir.
	[[ "$output" =~ held\ fds=([0-9]+)\ base=([0-9]+) ]]
	((BASH_REMATCH[1] <= BASH_REMATCH[2] + 64))
	has_line "fresh: tapir"
	[[ "$output" =~ fresh\ ms=([0-9]+) ]]
	((BASH_REMATCH[1] < 3000))
	flows_ok held
	[[ "$output" =~ held\ cpu=([0-9]+) ]]
	((BASH_REMATCH[1] < 5))
	settled flooded
	has_line "log_lines=0"
}

@test "fault: a forward removed under live connections: they go on, new connects are refused, no fd is left (tap and splice)" {
	run in_sandbox "$FAULT"'
		add='\''{"execute":"add_hostfwd","arguments":{"proto":"tcp","host_addr":"127.0.0.1","host_port":18080,"guest_port":80}}'\''
		remove='\''{"execute":"remove_hostfwd","arguments":{"id":1}}'\''
		echo_on() { # FD TEXT: TEXT comes back on the connection FD
			local line=""
			echo "$2" >&"$1"
			read -r -t 10 line <&"$1" || true
			[ "$line" = "$2" ]
		}
		attach --forward-mode=tap
		guest_bg echo socat TCP-LISTEN:80,fork,reuseaddr SYSTEM:cat
		wait_for 5 guest_listening 80
		for mode in tap splice; do
			if [ "$mode" = splice ]; then
				bg_stop t
				wait_for 10 eval "! nsenter -t $G -n ip link show tap0 >/dev/null 2>&1"
				# Another name: start_tapir waits for "1" in
				# NAME.ready, which the first one wrote.
				start_tapir s --configure --mtu 1500 -a "$S" \
					--forward-mode=splice "$G" tap0
				T=$(bg_pid s)
			fi
			echo "$mode add: $(api "$add")"
			# One connection first, so that the pool of namespace
			# sockets (splice) is in the baseline.
			exec {w}<>/dev/tcp/127.0.0.1/18080
			echo_on "$w" warm && echo "$mode warm: ok"
			exec {w}>&-
			sleep 1
			baseline
			exec {c1}<>/dev/tcp/127.0.0.1/18080
			exec {c2}<>/dev/tcp/127.0.0.1/18080
			exec {c3}<>/dev/tcp/127.0.0.1/18080
			for c in $c1 $c2 $c3; do
				echo_on "$c" before || echo "$mode before: failed"
			done
			echo "$mode remove: $(api "$remove")"
			listening=$(ss -Hltn "sport = :18080" | grep -c . || true)
			echo "$mode listeners: $listening"
			if bash -c "exec 3<>/dev/tcp/127.0.0.1/18080" 2>/dev/null; then
				echo "$mode new: connected"
			else
				echo "$mode new: refused"
			fi
			ok=0
			for c in $c1 $c2 $c3; do
				echo_on "$c" after && ok=$((ok + 1))
			done
			echo "$mode live after remove: $ok"
			exec {c1}>&- {c2}>&- {c3}>&-
			other_flows "$mode"
			settle "$mode"
		done
	'
	echo "$output"
	[ "$status" -eq 0 ]
	for mode in tap splice; do
		has_line "$mode add: {\"return\":{\"id\":1}}"
		has_line "$mode warm: ok"
		! has_line "$mode before: failed" || false
		has_line "$mode remove: {\"return\":{}}"
		has_line "$mode listeners: 0"
		has_line "$mode new: refused"
		has_line "$mode live after remove: 3"
		flows_ok "$mode"
		settled "$mode"
	done
}
