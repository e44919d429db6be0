#!/usr/bin/env bats
# tests/pasta-ports.bats - tapir run as pasta: its port forwards at the
# edges. As many ports as the fd limit allows (the whole port space of
# both protocols where it allows that), and a clear line where it does
# not, -t lists and -t auto alike; -T/-U auto bound before the command
# starts and before --pid is written; the scans of either side leaving
# out tapir's own sockets of the other; -u auto following a TCP-only
# listener, as pasta's does. Everything runs as the test user, `tapir
# pasta` in the sandbox.

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib

@test "pasta ports: -t and -u over 1024-65535 (as far as RLIMIT_NOFILE lets): first, middle and last port answer, TCP and UDP, 127.0.0.1 and ::1; under a lower limit, one line says how far it got" {
	# A systemd user session may open 524288 files
	# (DefaultLimitNOFILE=1024:524288): where root may, this test lets
	# the user have 140000, enough for the whole range. Where root may
	# not (CAP_SYS_RESOURCE withheld: this CI's hard limit is 20000),
	# the range stops where the limit does.
	ulimit -Hn 140000 2>/dev/null || true
	run in_sandbox '
		# One socket a port and protocol (:: takes IPv4 too); 2048
		# fds left for everything else.
		hard=$(as_user bash -c "ulimit -Hn")
		last=65535
		if ((hard < 2 * 64512 + 2048)); then
			last=$((1024 + (hard - 2048) / 2 - 1))
		fi
		mid=$(((1024 + last) / 2))
		echo "range: 1024-$last"
		printf "%s\n" \
			"for p in 1024 $mid $last; do" \
			"  socat TCP6-LISTEN:\$p,ipv6only=0,fork,reuseaddr SYSTEM:\"echo tcp-\$p\" &" \
			"  \"$TAPIR_BIN_DIR/udpecho\" \$p &" \
			"done" \
			"while [ \$(ss -Hltun \"( sport = :1024 or sport = :$mid or sport = :$last )\" | wc -l) -lt 6 ]; do sleep 0.1; done" \
			"touch $SCEN_DIR/ready" \
			"sleep 600" >"$SCEN_DIR/cmd.sh"
		bg_start_user tapir "$TAPIR_BIN" pasta --config-net \
			-t "1024-$last" -u "1024-$last" -T none -U none \
			-- sh "$SCEN_DIR/cmd.sh"
		wait_for 60 test -e "$SCEN_DIR/ready"
		echo "forwards: $(ss -Hltn "( sport >= :1024 and sport <= :$last )" | wc -l) tcp, $(ss -Hlun "( sport >= :1024 and sport <= :$last )" | wc -l) udp"
		for p in 1024 $mid $last; do
			echo "tcp $p: $(socat -T2 - TCP4:127.0.0.1:$p </dev/null 2>&1)"
			echo "tcp6 $p: $(socat -T2 - TCP6:[::1]:$p </dev/null 2>&1)"
			echo "udp $p: $(echo "udp-$p" | socat -T2 - UDP4:127.0.0.1:$p 2>&1)"
			echo "udp6 $p: $(echo "udp-$p" | socat -T2 - UDP6:[::1]:$p 2>&1)"
		done
		bg_stop tapir
		# Past the limit: one line that says how far it got and why.
		rc=0
		(ulimit -n 4096 && as_user "$TAPIR_BIN" pasta --config-net \
			-t 1024-65535 -u 1024-65535 -- true) 2>"$SCEN_DIR/err" || rc=$?
		echo "full: rc $rc, $(wc -l <"$SCEN_DIR/err") line"
		echo "full: $(cat "$SCEN_DIR/err")"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	last=$(sed -n "s/^range: 1024-//p" <<<"$output")
	mid=$(((1024 + last) / 2))
	n=$((last - 1023))
	has_line "forwards: $n tcp, $n udp"
	for p in 1024 "$mid" "$last"; do
		has_line "tcp $p: tcp-$p"
		has_line "tcp6 $p: tcp-$p"
		has_line "udp $p: udp-$p"
		has_line "udp6 $p: udp-$p"
	done
	has_line "full: rc 125, 1 line"
	grep -Eq "^full: tapir: -t: [0-9]+ of 64512 ports forwarded, then no more files: RLIMIT_NOFILE is 4096" <<<"$output"
}

@test "pasta ports: -T and -U auto answer before the command starts, and before --pid is written (a command; a daemon on a PID; a command with --pid)" {
	run in_sandbox '
		bg_start svc socat TCP4-LISTEN:8201,bind=127.0.0.1,fork,reuseaddr \
			SYSTEM:"echo host-tcp"
		bg_start uecho "$TAPIR_BIN_DIR/udpecho" 8202
		wait_for 5 bash -c "ss -Hltn \"src 127.0.0.1:8201\" | grep -q . && ss -Hlun \"sport = :8202\" | grep -q ."
		# The command`s first act: bash connects at once, no program
		# to load first.
		try="exec 3<>/dev/tcp/127.0.0.1/8201 && read -t 2 l <&3 && echo \"tcp: \$l\";
			exec 4<>/dev/udp/127.0.0.1/8202 && echo back >&4 &&
			echo \"udp: \$(timeout 2 dd bs=64 count=1 status=none <&4 2>&1)\""
		as_user "$TAPIR_BIN" pasta --config-net -t none -u none \
			-- bash -c "$try" 2>&1 | sed "s/^/command /" || true
		# A daemon: as soon as it returned, the PID file written.
		holder=$(userns_holder)
		as_user "$TAPIR_BIN" pasta --config-net -t none -u none \
			--pid "$SCEN_DIR/p.pid" "$holder"
		nsenter -t "$holder" -n bash -c "$try" 2>&1 | sed "s/^/daemon /" || true
		echo "pid file: $(test -s "$SCEN_DIR/p.pid" && echo written)"
		kill "$(cat "$SCEN_DIR/p.pid")"
		# A command and --pid: the moment the file has the PID, the
		# command runs and its namespace answers.
		bg_start_user cmdpid "$TAPIR_BIN" pasta --config-net -t none \
			-u none --pid "$SCEN_DIR/c.pid" -- sleep 600
		end=$((SECONDS + 10))
		while [ ! -s "$SCEN_DIR/c.pid" ] && ((SECONDS < end)); do :; done
		tp=$(cat "$SCEN_DIR/c.pid")
		cmd=""
		for k in $(cat "/proc/$tp/task/$tp/children" 2>/dev/null); do
			[ "$(cat "/proc/$k/comm" 2>/dev/null)" = sleep ] && cmd=$k
		done
		if [ -n "$cmd" ]; then
			nsenter -t "$cmd" -n bash -c "$try" 2>&1 | sed "s/^/--pid /" || true
		else
			echo "--pid: no command yet"
		fi
		bg_stop cmdpid
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "command tcp: host-tcp"
	has_line "command udp: back"
	has_line "daemon tcp: host-tcp"
	has_line "daemon udp: back"
	has_line "pid file: written"
	has_line "--pid tcp: host-tcp"
	has_line "--pid udp: back"
}

@test "pasta ports: -t/-u auto with --host-lo-to-ns-lo leave tapir's own -T/-U sockets alone: no host port flaps, a restarted host service gets its port" {
	run in_sandbox '
		bg_start svc socat TCP4-LISTEN:8099,bind=127.0.0.1,fork,reuseaddr \
			SYSTEM:"echo host"
		wait_for 5 tcp_listening 8099
		# rootlesskit 2.3 passes -t auto -u auto --host-lo-to-ns-lo,
		# and -T/-U auto; -T and -U lists bind their ports at once.
		printf "%s\n" "echo \$\$ >$SCEN_DIR/ns.pid" "exec sleep 600" \
			>"$SCEN_DIR/cmd.sh"
		bg_start_user tapir "$TAPIR_BIN" pasta --config-net -t auto \
			-u auto -T 8097 -U 8098 --host-lo-to-ns-lo \
			-- sh "$SCEN_DIR/cmd.sh"
		wait_for 5 test -s "$SCEN_DIR/ns.pid"
		ns=$(cat "$SCEN_DIR/ns.pid")
		sleep 1.5
		# Three rescans of each side: the host ports stay free, the
		# namespace listeners stay.
		host=0 nsl=0
		for i in $(seq 30); do
			host=$((host + $(ss -Hltn "sport = :8097" | wc -l) + $(ss -Hlun "sport = :8098" | wc -l)))
			nsl=$((nsl + $(nsrun "$ns" ss -Hltn "src 127.0.0.1:8097" | wc -l) + $(nsrun "$ns" ss -Hlun "src 127.0.0.1:8098" | wc -l)))
			sleep 0.1
		done
		echo "host sockets on 8097/8098 seen: $host"
		echo "namespace listeners seen: $nsl of 60"
		# -T auto: the host service restarts; tapir never takes its port.
		taken=0
		for i in 1 2 3; do
			bg_stop svc
			for j in $(seq 15); do
				ss -Hltn "src 127.0.0.1:8099" | grep -q . && taken=$((taken + 1))
				sleep 0.1
			done
			bg_start svc socat TCP4-LISTEN:8099,bind=127.0.0.1,fork,reuseaddr \
				SYSTEM:"echo host"
			wait_for 5 tcp_listening 8099 || true
			sleep 1.2
		done
		echo "8099 held while its service was down: $taken"
		echo "service: $(socat -T2 - TCP4:127.0.0.1:8099 </dev/null 2>&1)"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "host sockets on 8097/8098 seen: 0"
	has_line "namespace listeners seen: 60 of 60"
	has_line "8099 held while its service was down: 0"
	has_line "service: host"
}

@test "pasta ports: -u auto forwards UDP P when only TCP P listens in the namespace: the first datagram to a UDP service started later gets through" {
	run in_sandbox '
		# The host holds UDP 8302: for a port only TCP has bound in the
		# namespace, that is no news worth a line.
		bg_start uecho "$TAPIR_BIN_DIR/udpecho" 8302
		printf "%s\n" \
			"socat TCP4-LISTEN:8301,fork,reuseaddr SYSTEM:\"echo t\" &" \
			"socat TCP4-LISTEN:8302,fork,reuseaddr SYSTEM:\"echo t\" &" \
			"touch $SCEN_DIR/tcp-up" \
			"while [ ! -e $SCEN_DIR/go ]; do sleep 0.1; done" \
			"\"$TAPIR_BIN_DIR/udpecho\" 8301 &" \
			"while ! ss -Hlun \"sport = :8301\" | grep -q .; do sleep 0.05; done" \
			"touch $SCEN_DIR/udp-up" \
			"sleep 600" >"$SCEN_DIR/cmd.sh"
		bg_start_user tapir "$TAPIR_BIN" pasta --config-net -T none \
			-U none -- sh "$SCEN_DIR/cmd.sh"
		wait_for 5 test -e "$SCEN_DIR/tcp-up"
		wait_for 5 tcp_listening 8301
		echo "host udp sockets on 8301: $(ss -Hlun "sport = :8301" | wc -l)"
		touch "$SCEN_DIR/go"
		wait_for 5 test -e "$SCEN_DIR/udp-up"
		echo "first datagram: $(echo first | socat -T1 - UDP4:127.0.0.1:8301 2>&1)"
		echo "tcp: $(socat -T2 - TCP4:127.0.0.1:8301 </dev/null 2>&1)"
		wait_for 5 tcp_listening 8302
		sleep 1.2
		echo "lines: $(grep -c . "$SCEN_DIR/tapir.log" || true)"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "host udp sockets on 8301: 1"
	has_line "first datagram: first"
	has_line "tcp: t"
	has_line "lines: 0"
}

@test "pasta ports: -t auto follows 700 listeners under --quiet; short of fds, it says so under --quiet too" {
	run in_sandbox '
		# Two processes of 350 listeners each: either fits in 400 fds.
		printf "%s\n" \
			"import socket, sys, time" \
			"s = []" \
			"for p in range(int(sys.argv[1]), int(sys.argv[1]) + 350):" \
			"    x = socket.socket(); x.bind((\"0.0.0.0\", p)); x.listen(); s.append(x)" \
			"open(\"$SCEN_DIR/up-\" + sys.argv[1], \"w\").close()" \
			"time.sleep(600)" >"$SCEN_DIR/listen.py"
		printf "%s\n" "python3 $SCEN_DIR/listen.py 9000 &" \
			"python3 $SCEN_DIR/listen.py 9350 &" "wait" >"$SCEN_DIR/cmd.sh"
		count() { ss -Hltn "( sport >= :9000 and sport <= :9699 )" | wc -l; }
		up() { test -e "$SCEN_DIR/up-9000" && test -e "$SCEN_DIR/up-9350"; }
		bg_start_user tapir "$TAPIR_BIN" pasta --config-net --quiet \
			-T none -U none -- sh "$SCEN_DIR/cmd.sh"
		wait_for 5 up
		wait_for 5 bash -c "[ \$(ss -Hltn \"( sport >= :9000 and sport <= :9699 )\" | wc -l) -ge 700 ]" || true
		echo "forwarded: $(count)"
		bg_stop tapir
		rm "$SCEN_DIR"/up-*
		# 400 fds in all: the ports beyond them wait, and it is said.
		bg_start_user small bash -c "ulimit -n 400 && exec \"\$0\" \"\$@\"" \
			"$TAPIR_BIN" pasta --config-net --quiet -T none -U none \
			-- sh "$SCEN_DIR/cmd.sh"
		wait_for 5 up
		sleep 2.5
		echo "with 400 fds: $(count) forwarded"
		grep "no more files" "$SCEN_DIR/small.log" | head -n 1 | sed "s/^/said: /"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "forwarded: 700"
	n=$(sed -n "s/^with 400 fds: \([0-9]*\) forwarded/\1/p" <<<"$output")
	[ "$n" -gt 200 ] && [ "$n" -lt 400 ]
	grep -Eq "^said: tapir: auto: TCP port 9[0-9]+ and more not forwarded: [0-9]+ ports forwarded, then no more files: RLIMIT_NOFILE is 400 " <<<"$output"
}
