#!/usr/bin/env bats
# tests/api.bats - the API socket over real connections: every request and
# every error through `tapir api`, raw clients (podman's, rootlesskit's and
# worse) through socat, an idle client during a transfer, the socket file's
# removal on every clean exit, and `tapir api`'s own errors. The request
# logic itself is unit-tested in tests/unit/test_api.c, the client's every
# order of reply, hang-up and send error in tests/unit/test_apiclient.c.

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib

# tools: apipeer (a server that ends each exchange one set way)
setup() {
	TOOLS=${TAPIR_BIN_DIR:-$TAPIR_ROOT/build/tools}
	export TOOLS
}

# Helpers for the snippets. call NAME JSON: one request through `tapir api`,
# printed as "NAME rc=STATUS REPLY". raw NAME: stdin to the socket through
# socat (stdin's EOF is the client's SHUT_WR), printed as "NAME REPLY".
# run_tapir ARGS...: `tapir run -a $S ARGS...` as the test user.
HELPERS='
	S=$SCEN_DIR/api.sock
	call() {
		local rc=0 out
		out=$(as_user "$TAPIR_BIN" api "$S" "$2" 2>&1) || rc=$?
		echo "$1 rc=$rc $out"
	}
	raw() {
		echo "$1 $(timeout 10 socat -t 0.2 - "UNIX-CONNECT:$S")"
	}
	run_tapir() {
		bg_start_user tapir "$TAPIR_BIN" run -a "$S" "$@"
		wait_for 5 test -S "$S"
	}
'

@test "api: every request succeeds or errs as documented; the daemon keeps serving" {
	run in_sandbox "$HELPERS"'
		run_tapir -- sleep 60
		fwd() { # NAME ARGUMENTS
			call "$1" "{\"execute\":\"add_hostfwd\",\"arguments\":$2}"
		}
		call list-empty "{\"execute\":\"list_hostfwd\"}"
		fwd add "{\"proto\":\"tcp\",\"host_addr\":\"127.0.0.1\",\"host_port\":18080,\"guest_addr\":\"10.0.2.100\",\"guest_port\":80}"
		fwd add-udp "{\"proto\":\"udp\",\"host_addr\":\"127.0.0.1\",\"host_port\":18080,\"guest_port\":80}"
		fwd add-v6 "{\"proto\":\"tcp\",\"host_addr\":\"::1\",\"host_port\":18080,\"guest_addr\":\"\",\"guest_port\":80}"
		call list "{\"execute\":\"list_hostfwd\"}"
		fwd dup "{\"proto\":\"tcp\",\"host_addr\":\"127.0.0.1\",\"host_port\":18080,\"guest_port\":81}"
		fwd overlap "{\"proto\":\"tcp\",\"host_addr\":\"0.0.0.0\",\"host_port\":18080,\"guest_port\":80}"
		fwd privileged "{\"proto\":\"tcp\",\"host_port\":80,\"guest_port\":80}"
		call no-args "{\"execute\":\"add_hostfwd\"}"
		fwd args-array "[]"
		fwd bad-proto "{\"proto\":\"sctp\",\"host_port\":18081,\"guest_port\":80}"
		fwd bad-host-addr "{\"proto\":\"tcp\",\"host_addr\":\"localhost\",\"host_port\":18081,\"guest_port\":80}"
		fwd port-string "{\"proto\":\"tcp\",\"host_port\":\"18081\",\"guest_port\":80}"
		fwd port-range "{\"proto\":\"tcp\",\"host_port\":70000,\"guest_port\":80}"
		fwd bad-guest-addr "{\"proto\":\"tcp\",\"host_port\":18081,\"guest_addr\":\"fd00::100\",\"guest_port\":80}"
		fwd guest-port-zero "{\"proto\":\"tcp\",\"host_port\":18081,\"guest_port\":0}"
		call remove-unknown "{\"execute\":\"remove_hostfwd\",\"arguments\":{\"id\":99}}"
		call remove-string "{\"execute\":\"remove_hostfwd\",\"arguments\":{\"id\":\"1\"}}"
		call remove "{\"execute\":\"remove_hostfwd\",\"arguments\":{\"id\":1}}"
		call remove-again "{\"execute\":\"remove_hostfwd\",\"arguments\":{\"id\":1}}"
		fwd add-again "{\"proto\":\"tcp\",\"host_addr\":\"127.0.0.1\",\"host_port\":18082,\"guest_port\":80}"
		call not-json "hello"
		call not-object "[1,2]"
		call no-execute "{\"arguments\":{}}"
		call unknown "{\"execute\":\"quit\"}"
		call too-large "{\"execute\":\"list_hostfwd\",\"pad\":\"$(head -c 5000 /dev/zero | tr "\0" a)\"}"
		call stats "{\"execute\":\"get_stats\"}" >"$SCEN_DIR/stats"
		call info "{\"execute\":\"get_info\"}" >"$SCEN_DIR/info"
		cut -d" " -f1,2 "$SCEN_DIR/stats" "$SCEN_DIR/info"
		cut -d" " -f3- "$SCEN_DIR/stats" | jq -c "[(.return | keys_unsorted),
			(.return.tap | keys_unsorted),
			(.return.to_guest.tcp | keys_unsorted),
			(.return.drops.bad_checksum | type),
			(.return.flows.udp | type), (.return.tap.rx_frames > 0),
			(.return.queues | length == (env.TAPIR_QUEUES // \"1\" | tonumber)),
			([.return.queues[].rx_frames] | add) == .return.tap.rx_frames]"
		cut -d" " -f3- "$SCEN_DIR/info" | jq -r --arg s "$S" ".return |
			\"info \(.driver) \(.version) \(.pid > 0) \(.mode) \(.ifname) \(.mtu) \(.cidr) \(.options.forward_mode) \(.forwards.count) \(.options.api_socket == \$s)\""
		echo "listening: $(ss -Hltn "sport = :18080 or sport = :18082" | awk "{print \$4}" | sort | xargs)"
		echo "udp: $(ss -Hlun "sport = :18080" | awk "{print \$4}" | xargs)"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line 'list-empty rc=0 {"return":{"entries":[]},"entries":[]}'
	has_line 'add rc=0 {"return":{"id":1}}'
	has_line 'add-udp rc=0 {"return":{"id":2}}'
	has_line 'add-v6 rc=0 {"return":{"id":3}}'
	e1='{"id":1,"proto":"tcp","host_addr":"127.0.0.1","host_port":18080,"guest_addr":"10.0.2.100","guest_port":80}'
	e2='{"id":2,"proto":"udp","host_addr":"127.0.0.1","host_port":18080,"guest_addr":"10.0.2.100","guest_port":80}'
	e3='{"id":3,"proto":"tcp","host_addr":"::1","host_port":18080,"guest_addr":"10.0.2.100","guest_port":80}'
	has_line "list rc=0 {\"return\":{\"entries\":[$e1,$e2,$e3]},\"entries\":[$e1,$e2,$e3]}"
	has_line 'dup rc=1 {"error":{"desc":"bad request: add_hostfwd: slirp_add_hostfwd failed (tcp 127.0.0.1:18080 -> 10.0.2.100:81: port already forwarded (id 1))"}}'
	has_line 'overlap rc=1 {"error":{"desc":"bad request: add_hostfwd: slirp_add_hostfwd failed (tcp 0.0.0.0:18080 -> 10.0.2.100:80: bind: Address already in use)"}}'
	has_line 'privileged rc=1 {"error":{"desc":"bad request: add_hostfwd: slirp_add_hostfwd failed (tcp 0.0.0.0:80 -> 10.0.2.100:80: bind: Permission denied (ports below the sysctl net.ipv4.ip_unprivileged_port_start, 1024 by default, need privilege: use a higher port, or lower it))"}}'
	for name in no-args args-array bad-proto; do
		has_line "$name rc=1 {\"error\":{\"desc\":\"bad request: add_hostfwd: bad arguments.proto\"}}"
	done
	has_line 'bad-host-addr rc=1 {"error":{"desc":"bad request: add_hostfwd: bad arguments.host_addr"}}'
	has_line 'port-string rc=1 {"error":{"desc":"bad request: add_hostfwd: bad arguments.host_port"}}'
	has_line 'port-range rc=1 {"error":{"desc":"bad request: add_hostfwd: bad arguments.host_port"}}'
	has_line 'bad-guest-addr rc=1 {"error":{"desc":"bad request: add_hostfwd: bad arguments.guest_addr"}}'
	has_line 'guest-port-zero rc=1 {"error":{"desc":"bad request: add_hostfwd: bad arguments.guest_port"}}'
	for name in remove-unknown remove-string remove-again; do
		has_line "$name rc=1 {\"error\":{\"desc\":\"bad request: remove_hostfwd: bad arguments.id\"}}"
	done
	has_line 'remove rc=0 {"return":{}}'
	has_line 'add-again rc=0 {"return":{"id":4}}'
	has_line 'not-json rc=1 {"error":{"desc":"bad request: cannot parse JSON"}}'
	has_line 'not-object rc=1 {"error":{"desc":"bad request: json_object() failed"}}'
	has_line 'no-execute rc=1 {"error":{"desc":"bad request: no execute found"}}'
	has_line 'unknown rc=1 {"error":{"desc":"bad request: unknown execute"}}'
	has_line 'too-large rc=1 {"error":{"desc":"bad request: too large message"}}'
	has_line 'stats rc=0'
	has_line 'info rc=0'
	has_line '[["tap","to_host","to_guest","drops","flows","queues","conditions"],["rx_frames","rx_bytes","tx_frames","tx_bytes"],["packets","bytes"],"number","number",true,true,true]'
	has_line 'info tapir 0.1.0 true run tap0 1500 10.0.2.0/24 tap 3 true'
	# Forward 1 was removed: its port is free again; 3 and 4 listen.
	has_line 'listening: 127.0.0.1:18082 [::1]:18080'
	has_line 'udp: 127.0.0.1:18080'
}

@test "api: raw clients: newline without SHUT_WR, SHUT_WR, multi-line, BOM, empty, too large" {
	run in_sandbox "$HELPERS"'
		run_tapir -- sleep 60
		list="{\"execute\":\"list_hostfwd\"}"
		# podman: JSON and a newline, then it waits for the reply with
		# its side still open (the sleep holds the stdin of socat).
		start=$(date +%s%N)
		raw podman < <(printf "%s\n" "$list"; sleep 5)
		echo "podman-ms $((($(date +%s%N) - start) / 1000000))"
		# A complete object without a newline is answered too.
		start=$(date +%s%N)
		raw no-newline < <(printf "%s" "$list"; sleep 5)
		echo "no-newline-ms $((($(date +%s%N) - start) / 1000000))"
		printf "%s\n" "$list" | raw rootlesskit
		printf "{\n  \"execute\":\n  \"list_hostfwd\"\n}\n" | raw multi-line
		printf "\xef\xbb\xbf%s" "$list" | raw bom
		printf "%s\ntrailing garbage" "$list" | raw trailing
		printf "" | raw empty
		printf "garbage\n" | raw garbage
		{ printf "{\"execute\":\"list_hostfwd\",\"pad\":\""
		  head -c 5000 /dev/zero | tr "\0" a
		  printf "\"}\n"; } | raw too-large
		# Compact JSON, no trailing newline.
		printf "%s\n" "$list" | timeout 10 socat -t 0.2 - "UNIX-CONNECT:$S" \
			>"$SCEN_DIR/reply"
		echo "reply: $(stat -c %s "$SCEN_DIR/reply") bytes, last $(tail -c 1 "$SCEN_DIR/reply" | od -An -tx1 | tr -d " ")"
		call alive "{\"execute\":\"get_info\"}" | cut -d" " -f1,2
	'
	echo "$output"
	[ "$status" -eq 0 ]
	empty='{"return":{"entries":[]},"entries":[]}'
	for name in podman no-newline rootlesskit multi-line bom trailing; do
		has_line "$name $empty"
	done
	has_line 'empty {"error":{"desc":"bad request: cannot parse JSON"}}'
	has_line 'garbage {"error":{"desc":"bad request: cannot parse JSON"}}'
	has_line 'too-large {"error":{"desc":"bad request: too large message"}}'
	# Answered at once, not when the client gives up after 5 s.
	ms=$(grep '^podman-ms ' <<<"$output" | cut -d" " -f2)
	[ "$ms" -lt 2000 ]
	ms=$(grep '^no-newline-ms ' <<<"$output" | cut -d" " -f2)
	[ "$ms" -lt 2000 ]
	has_line "reply: ${#empty} bytes, last 7d"
	has_line 'alive rc=0'
}

@test "api: an idle client stalls neither an iperf3 transfer nor a second client" {
	run in_sandbox "$HELPERS"'
		run_tapir --forward-mode=splice -p 127.0.0.1:15201:5201 -- iperf3 -s
		pid=$(as_user "$TAPIR_BIN" api "$S" "{\"execute\":\"get_info\"}" |
			jq .return.target.pid)
		wait_for 5 eval "nsenter -t $pid -n ss -Hltn | grep -q :5201"
		# Connected, silent, and never shutting down its side.
		bg_start idle bash -c "sleep 20 | socat - UNIX-CONNECT:$S"
		wait_for 5 eval "ss -Hx state connected | grep -qF \"$S\""
		iperf3 -c 127.0.0.1 -p 15201 -t 12 -i 1 -J >"$SCEN_DIR/iperf.json" &
		iperf=$!
		sleep 4
		start=$(date +%s%N)
		call second "{\"execute\":\"get_info\"}" | cut -d" " -f1,2
		echo "second-ms $((($(date +%s%N) - start) / 1000000))"
		wait "$iperf"
		jq -r "\"intervals \(.intervals | length) min-bps \([.intervals[].sum.bits_per_second] | min | floor)\"" \
			"$SCEN_DIR/iperf.json"
		# The idle client is still connected: nobody gave up on it.
		ss -Hx state connected | grep -cF "$S" | xargs echo "still-connected:"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "second rc=0"
	ms=$(grep '^second-ms ' <<<"$output" | cut -d" " -f2)
	[ "$ms" -lt 1000 ]
	[[ "$output" =~ intervals\ ([0-9]+)\ min-bps\ ([0-9]+) ]]
	[ "${BASH_REMATCH[1]}" -ge 12 ]
	[ "${BASH_REMATCH[2]}" -gt 0 ]
	[[ "$output" =~ still-connected:\ ([0-9]+) ]]
	[ "${BASH_REMATCH[1]}" -ge 1 ]
}

@test "api: the socket file goes away on SIGTERM, exit fd, target exit, -p failure" {
	run in_sandbox '
		pid=$(userns_holder)
		a="$SCEN_DIR/a.sock"
		bg_start_user term "$TAPIR_BIN" -a "$a" "$pid" tap0
		wait_for 5 test -S "$a"
		bg_stop term
		test -e "$a" || echo "sigterm: removed"
		# The exit fd: a pipe whose only writer is a short sleep.
		bg_start_user exitfd bash -c "exec 7< <(sleep 1); exec \"\$0\" -e 7 -a $a $pid tap1" "$TAPIR_BIN"
		wait_for 5 test -S "$a"
		wait_for 5 eval "! test -e $a"
		echo "exit-fd: removed"
		# A -p port that cannot be bound: nothing is left either.
		bg_start blocker socat TCP-LISTEN:18090,bind=127.0.0.1,reuseaddr -
		wait_for 5 eval "ss -Hltn \"sport = :18090\" | grep -q ."
		rc=0
		as_user "$TAPIR_BIN" -a "$a" -p 127.0.0.1:18090:80 "$pid" tap2 \
			2>"$SCEN_DIR/err" || rc=$?
		echo "publish rc=$rc lines=$(wc -l <"$SCEN_DIR/err") socket=$(test -e "$a" && echo left || echo none)"
		cat "$SCEN_DIR/err"
		bg_start_user target "$TAPIR_BIN" -a "$a" "$pid" tap3
		wait_for 5 test -S "$a"
		bg_stop holder
		wait_for 5 eval "! test -e $a"
		echo "target-exit: removed"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "sigterm: removed"
	has_line "exit-fd: removed"
	has_line "publish rc=1 lines=1 socket=none"
	has_line "tapir: publish: tcp 127.0.0.1:18090 -> 10.0.2.100:80: bind: Address already in use"
	has_line "target-exit: removed"
}

@test "api: a live socket is refused with one line and keeps serving; a stale one is replaced; a file or directory in the way is refused and kept" {
	run in_sandbox "$HELPERS"'
		run_tapir -- sleep 60
		first=$(bg_pid tapir)
		second() { # NAME: a second instance on $S, as the test user
			local rc=0
			as_user "$TAPIR_BIN" run -a "$S" -- true \
				2>"$SCEN_DIR/$1.err" || rc=$?
			echo "$1 rc=$rc lines=$(wc -l <"$SCEN_DIR/$1.err")"
			sed "s/^/$1: /" "$SCEN_DIR/$1.err"
		}
		second live
		call first-still "{\"execute\":\"list_hostfwd\"}"
		bg_stop tapir
		echo "after first: $(test -e "$S" && echo left || echo gone)"
		# What a killed run leaves: a socket nobody listens on.
		as_user python3 -c "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$S"
		second stale
		echo "after stale: $(test -e "$S" && echo left || echo gone)"
		as_user rm -f "$S"
		as_user sh -c "echo keep >\"$S\""
		second file
		echo "file kept: $(cat "$S")"
		rm -f "$S"
		as_user mkdir "$S"
		second dir
		echo "dir kept: $(test -d "$S" && echo yes || echo no)"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "live rc=125 lines=1"
	grep -q "^live: tapir: API socket .*/api.sock: another instance serves it; stop it or choose another path$" <<<"$output"
	has_line 'first-still rc=0 {"return":{"entries":[]},"entries":[]}'
	has_line "after first: gone"
	has_line "stale rc=0 lines=0"
	has_line "after stale: gone"
	has_line "file rc=125 lines=1"
	grep -q "^file: tapir: API socket .*/api.sock: a file is in the way; give a path where tapir may create a socket$" <<<"$output"
	has_line "file kept: keep"
	has_line "dir rc=125 lines=1"
	grep -q "^dir: tapir: API socket .*/api.sock: a directory is in the way; give a path where tapir may create a socket$" <<<"$output"
	has_line "dir kept: yes"
}

# The servers are tests/tools/apipeer, which answers only once the request
# is there. socat SYSTEM:"echo -n junk" was flaky: its child could print
# and exit before socat's transfer loop began, and socat, writing our
# request into the dead child's socket, got EPIPE and exited without
# passing on the reply it held (2 runs in 200 on an idle machine); a shell
# slower than socat's 0.5 s after our EOF did the same.
@test "api: tapir api: exit 2 with one line when there is no reply" {
	run in_sandbox '
		peer() { # NAME MODE [REPLY]: start apipeer, wait until it listens
			bg_start "$1" "$TOOLS/apipeer" "$SCEN_DIR/$1.sock" "${@:2}"
			wait_for 5 test -S "$SCEN_DIR/$1.sock"
		}
		rc=0
		as_user "$TAPIR_BIN" api "$SCEN_DIR/none.sock" "{}" 2>&1 || rc=$?
		echo "rc=$rc"
		rc=0
		as_user "$TAPIR_BIN" api "$SCEN_DIR/none.sock" 2>&1 || rc=$?
		echo "rc=$rc"
		# A server that hangs up without answering.
		peer mute mute
		rc=0
		as_user "$TAPIR_BIN" api "$SCEN_DIR/mute.sock" "{}" 2>&1 || rc=$?
		echo "rc=$rc"
		# A reply that is not JSON is an error reply, printed as is.
		peer junk answer junk
		rc=0
		as_user "$TAPIR_BIN" api "$SCEN_DIR/junk.sock" "{}" \
			2>"$SCEN_DIR/junk.err" || rc=$?
		echo "rc=$rc"
		# A server that replies and closes with the request unread: the
		# reply, then a reset, which ends it like EOF.
		peer unread unread "{\"error\":{\"desc\":\"busy\"}}"
		rc=0
		as_user "$TAPIR_BIN" api "$SCEN_DIR/unread.sock" "{}" 2>&1 || rc=$?
		echo "rc=$rc"
		# After the lines checked: what tapir said, should they differ.
		sed "s/^/junk stderr: /" "$SCEN_DIR/junk.err"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "tapir: api: connect "*"/none.sock: No such file or directory" ]]
	[ "${lines[1]}" = "rc=2" ]
	[ "${lines[2]}" = "tapir: usage: tapir api SOCKET JSON" ]
	[ "${lines[3]}" = "rc=2" ]
	[[ "${lines[4]}" == "tapir: api: "*"mute.sock closed the connection without a reply" ]]
	[ "${lines[5]}" = "rc=2" ]
	[ "${lines[6]}" = "junk" ]
	[ "${lines[7]}" = "rc=1" ]
	[ "${lines[8]}" = '{"error":{"desc":"busy"}}' ]
	[ "${lines[9]}" = "rc=1" ]
	[ "${lines[10]}" = "junk stderr: tapir: api: the reply is not a JSON object" ]
}
