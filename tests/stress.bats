#!/usr/bin/env bats
# tests/stress.bats - tapir when things go wrong around it: a reader that
# stalls, a tap that disappears, a process out of fds. It must not spin,
# flood its log, or hang its clients; CPU use is read from /proc.

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib

setup() {
	TOOLS=${TAPIR_BIN_DIR:-$TAPIR_ROOT/build/tools}
	export TOOLS
}

# stall_download ENV...: a guest connection that never reads a 1 GB
# download; prints tapir's CPU use in % over 8 s once the host socket's
# buffer is full. ENV (NAME=VALUE words, maybe none) is tapir's.
STALL_DOWNLOAD='
	stall_download() {
		bg_start source bash -c "$TOOLS/pattern $((1 << 30)) 3 |
			socat -u STDIN TCP-LISTEN:7002,reuseaddr"
		wait_for 5 tcp_listening 7002
		bg_start_user tapir env "$@" "$TAPIR_BIN" run -- bash -c \
			"exec 3<>/dev/tcp/10.0.2.2/7002; sleep 60"
		wait_for 20 sendq_full 7002
		echo "cpu=$(cpu_percent "$(bg_pid tapir)" 8)"
		bg_stop tapir
		bg_stop source
	}
'

# stall_upload ENV...: a host server that never reads a 1 GB upload from
# the guest; prints tapir's CPU use in % over 8 s once it is stuck.
STALL_UPLOAD='
	stall_upload() {
		bg_start sink bash -c "socat -u TCP-LISTEN:7001,reuseaddr STDOUT |
			sleep 60"
		wait_for 5 tcp_listening 7001
		bg_start_user tapir env "$@" "$TAPIR_BIN" run -- bash -c \
			"$TOOLS/pattern $((1 << 30)) 1 | socat -u STDIN TCP:10.0.2.2:7001"
		wait_for 20 sendq_full 7001
		echo "cpu=$(cpu_percent "$(bg_pid tapir)" 8)"
		bg_stop tapir
		bg_stop sink
	}
'

# cpu_lines: the cpu=N values of $output, one per line.
cpu_lines() {
	sed -n 's/^cpu=//p' <<<"$output"
}

@test "stress: a guest that stops reading a download costs tapir under 5% CPU (SO_PEEK_OFF and discard)" {
	run in_sandbox "$STALL_DOWNLOAD"'
		stall_download
		stall_download $(oldkernel_env 5.10)
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(cpu_lines | wc -l)" -eq 2 ]
	for cpu in $(cpu_lines); do
		[ "$cpu" -lt 5 ]
	done
}

@test "stress: a host server that stops reading an upload costs tapir under 5% CPU" {
	run in_sandbox "$STALL_UPLOAD"'
		stall_upload
		stall_upload $(oldkernel_env 5.10)
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(cpu_lines | wc -l)" -eq 2 ]
	for cpu in $(cpu_lines); do
		[ "$cpu" -lt 5 ]
	done
}

@test "stress: the tap deleted in the namespace: tapir exits within 1 s, status 1, one line naming the tap" {
	run in_sandbox '
		pid=$(userns_holder)
		start_tapir t --configure --mtu 1500 "$pid" tap0
		t=$(bg_pid t)
		start=$(date +%s%N)
		nsrun "$pid" ip link del tap0
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

@test "stress: out of fds: guest SYNs, API clients and forward clients are refused at once, quietly, and served again once fds free up" {
	run in_sandbox '
		S=$SCEN_DIR/api.sock
		bg_start echo "$TOOLS/manyconn" server 7777
		wait_for 5 tcp_listening 7777
		# A hard limit too (tapir raises its soft limit to the hard
		# one): room for about 10 connections over what tapir needs
		# itself. The guest, which inherits the limit, tries 20 and
		# holds them until "release" appears, then reports whether a
		# new one works.
		bg_start_user tapir prlimit --nofile=24:24 "$TAPIR_BIN" run \
			-a "$S" -p 127.0.0.1:18080:80 -- bash -c "
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
			sleep 30
		"
		wait_for 30 test -s "$SCEN_DIR/held"
		cat "$SCEN_DIR/held"
		pid=$(bg_pid tapir)
		start=$(date +%s%N)
		as_user timeout 5 "$TAPIR_BIN" api "$S" "{\"execute\":\"get_info\"}" \
			>"$SCEN_DIR/api1" 2>&1 || true
		echo "api1: $(cat "$SCEN_DIR/api1")"
		rc=0
		timeout 5 curl -sS -o /dev/null http://127.0.0.1:18080/ 2>/dev/null || rc=$?
		echo "curl_rc=$rc"
		echo "refusals_ms=$((($(date +%s%N) - start) / 1000000))"
		echo "cpu=$(cpu_percent "$pid" 4)"
		touch "$SCEN_DIR/release"
		wait_for 10 test -s "$SCEN_DIR/again"
		cat "$SCEN_DIR/again"
		as_user "$TAPIR_BIN" api "$S" "{\"execute\":\"get_info\"}" |
			jq -r "\"api2: \" + .return.driver"
		echo "log_lines=$(grep -c . "$SCEN_DIR/tapir.log" || true)"
		sed "s/^/log: /" "$SCEN_DIR/tapir.log"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	# Some connections got through, the rest were refused (RST).
	[[ "$output" =~ ok=([0-9]+)\ refused=([0-9]+) ]]
	((BASH_REMATCH[1] >= 3 && BASH_REMATCH[2] >= 5))
	grep -q '^api1: .*too many open files' <<<"$output"
	# The forward's client is reset (curl 56, or 7 if the reset came
	# before its connect returned), not left hanging (28).
	grep -Eqx 'curl_rc=(56|7)' <<<"$output"
	ms=$(sed -n 's/^refusals_ms=//p' <<<"$output")
	[ "$ms" -lt 3000 ]
	cpu=$(sed -n 's/^cpu=//p' <<<"$output")
	[ "$cpu" -lt 5 ]
	has_line "again=ok"
	has_line "api2: tapir"
	# One line per kind of refusal, not one per SYN or client.
	lines=$(sed -n 's/^log_lines=//p' <<<"$output")
	[ "$lines" -le 3 ]
}
