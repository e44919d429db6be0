#!/usr/bin/env bats
# tests/isolation.bats - --enable-sandbox and --enable-seccomp: what a
# sandboxed tapir can no longer reach or do, as /proc shows it, and that it
# still works. The rest of the suite runs isolated too: `tapir run`
# isolates by default, rootlesskit's "auto" turns both flags on, and
# start_tapir adds them in the first pass (TAPIR_TEST_ISOLATION).

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib

# Helpers for the snippets.
#   status_of PID: tapir's isolation as /proc shows it, one "key value" a
#     line: seccomp, nonewprivs, capeff, and root (the entries of
#     /proc/PID/root, sorted, comma-separated)
#   one_tapir: the pid of the one tapir holding tap0
HELPERS='
	status_of() {
		awk "/^(Seccomp|NoNewPrivs|CapEff):/ { print tolower(\$1), \$2 }" \
			"/proc/$1/status" | tr -d :
		echo "root $(ls -A "/proc/$1/root" | sort | paste -sd,)"
	}
	one_tapir() {
		local h
		h=$(tap_holders tap0)
		[ "$(wc -l <<<"$h")" -eq 1 ] && [ "${h#* }" = "$(readlink -f "$TAPIR_BIN")" ] ||
			{ echo "tap0 holders: $h" >&2; return 1; }
		echo "${h%% *}"
	}
'

# asan: whether the binary under test is the sanitizer build, whose
# sandbox keeps /proc for LeakSanitizer.
asan() {
	ldd "$TAPIR_BIN" | grep -q libasan
}

# isolated_root: the root listing a sandboxed tapir has, with the test
# sandbox's /etc/resolv.conf (a file bound over it, in /etc): /run is
# there, empty, as slirp4netns's own sandbox test expects.
isolated_root() {
	if asan; then echo etc,proc,run; else echo etc,run; fi
}

@test "isolation: rootlesskit 1.1.0 with sandbox and seccomp true: filtered, no new privileges, CAP_NET_BIND_SERVICE only, /etc and an empty /run only" {
	run in_sandbox "$HELPERS"'
		bg_start_user rk rootlesskit --net=slirp4netns \
			--slirp4netns-binary="$TAPIR_BIN" --disable-host-loopback \
			--slirp4netns-sandbox=true --slirp4netns-seccomp=true \
			-- sh -c "ping -c1 -W2 10.0.2.2 >/dev/null && echo ping-ok; sleep 30"
		wait_for 10 grep -q ping-ok "$SCEN_DIR/rk.log"
		pid=$(one_tapir)
		status_of "$pid"
		tr "\0" " " <"/proc/$pid/cmdline"; echo
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "seccomp 2"
	has_line "nonewprivs 1"
	# CAP_NET_BIND_SERVICE is bit 10.
	has_line "capeff 0000000000000400"
	has_line "root $(isolated_root)"
	[[ "$output" == *" --enable-sandbox "* ]]
	[[ "$output" == *" --enable-seccomp "* ]]
}

@test "isolation: tapir run isolates by default, --no-sandbox and --no-seccomp turn it off, get_info says which" {
	run in_sandbox "$HELPERS"'
		S=$SCEN_DIR/api.sock
		for flags in "" "--no-sandbox --no-seccomp"; do
			bg_start_user t "$TAPIR_BIN" run -a "$S" $flags -- sleep 30
			wait_for 5 test -S "$S"
			echo "== ${flags:-default}"
			# The socket exists before tapir isolates itself; an
			# answer comes from its event loop, which runs after.
			as_user "$TAPIR_BIN" api "$S" "{\"execute\":\"get_info\"}" |
				jq -c "[.return.options.sandbox, .return.options.seccomp]"
			status_of "$(bg_pid t)"
			bg_stop t
			# The socket file goes, sandbox or not.
			echo "socket left: $(test -e "$S" && echo yes || echo no)"
		done
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^socket left: no$' <<<"$output")" -eq 2 ]
	iso=$(sed -n '/^== default$/,/^socket left/p' <<<"$output")
	plain=$(sed -n '/^== --no-sandbox/,/^socket left/p' <<<"$output")
	grep -qx "seccomp 2" <<<"$iso"
	grep -qx "nonewprivs 1" <<<"$iso"
	grep -qx "capeff 0000000000000400" <<<"$iso"
	grep -qx "root $(isolated_root)" <<<"$iso"
	grep -qx "\[true,true\]" <<<"$iso"
	grep -qx "seccomp 0" <<<"$plain"
	grep -qx "\[false,false\]" <<<"$plain"
	! grep -qx "root $(isolated_root)" <<<"$plain"
}

@test "isolation: a syscall outside the allow-list kills tapir with SIGSYS; without the filter it is harmless" {
	run in_sandbox '
		for flags in "" "--no-seccomp"; do
			rc=0
			as_user env TAPIR_TEST_FORBIDDEN_SYSCALL=1 "$TAPIR_BIN" run \
				$flags -- sh -c "sleep 2; echo command-done" || rc=$?
			echo "${flags:-filtered}: rc=$rc"
		done
	'
	echo "$output"
	[ "$status" -eq 0 ]
	# 128 + SIGSYS (31): the kernel killed tapir, and its command with it.
	has_line "filtered: rc=159"
	# "|| false": a negation alone never fails a bats test but its last line.
	! grep -q "^command-done" <<<"$(sed -n '1,/filtered: rc/p' <<<"$output")" || false
	has_line "--no-seccomp: rc=0"
	has_line "command-done"
}

@test "isolation: traffic, DNS through a resolv.conf symlink outside /etc and /run, splice forwards added later, pcap, get_stats" {
	run in_sandbox '
		# The host resolver sits behind a symlink that points outside
		# /etc and /run, as NetworkManager and others set it up: in a
		# copy of /etc bound over it, in this mount namespace only.
		mkdir -p /mnt/nm "$SCEN_DIR/etc"
		cp /etc/resolv.conf /mnt/nm/resolv.conf
		cp -a /etc/. "$SCEN_DIR/etc/"
		rm "$SCEN_DIR/etc/resolv.conf"
		ln -s /mnt/nm/resolv.conf "$SCEN_DIR/etc/resolv.conf"
		mount --bind "$SCEN_DIR/etc" /etc
		bg_start dnsmasq dnsmasq --no-daemon --port=53 \
			--listen-address=127.0.0.1 --bind-interfaces --no-resolv \
			--no-hosts --user=root --address=/tapir.test/198.18.0.77
		nginx_start web 127.0.0.1:8080
		wait_for 5 bash -c "ss -Hlun | grep -q 127.0.0.1:53"
		S=$SCEN_DIR/api.sock
		bg_start_user t "$TAPIR_BIN" run -a "$S" --forward-mode=splice \
			--pcap "$SCEN_DIR/cap.pcap" -- sh -c "
				curl -sS --max-time 5 http://10.0.2.2:8080/ &&
				getent hosts tapir.test &&
				ping -c1 -W2 10.0.2.2 >/dev/null && echo ping-ok
				socat TCP-LISTEN:80,fork,reuseaddr SYSTEM:\"echo guest-server\"
			"
		wait_for 5 test -S "$S"
		wait_for 10 grep -q ping-ok "$SCEN_DIR/t.log"
		as_user "$TAPIR_BIN" api "$S" "{\"execute\":\"add_hostfwd\",\"arguments\":{\"proto\":\"tcp\",\"host_addr\":\"127.0.0.1\",\"host_port\":18080,\"guest_port\":80}}"
		pid=$(bg_pid t)
		wait_for 5 bash -c "timeout 2 socat -u TCP:127.0.0.1:18080 STDOUT | grep -q guest-server"
		echo "forward: $(timeout 2 socat -u TCP:127.0.0.1:18080 STDOUT)"
		as_user "$TAPIR_BIN" api "$S" "{\"execute\":\"get_stats\"}" |
			jq -r "\"tcp flows seen: \" + (.return.to_guest.tcp.packets > 0 | tostring)"
		grep -v "^ping-ok" "$SCEN_DIR/t.log" | head -n 5
		echo "seccomp: $(awk "/^Seccomp:/ {print \$2}" /proc/$pid/status)"
		bg_stop t
		echo "pcap bytes: $(stat -c %s "$SCEN_DIR/cap.pcap")"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "tapir test page"
	grep -Eq '^198\.18\.0\.77[[:space:]]+tapir\.test$' <<<"$output"
	has_line "forward: guest-server"
	has_line "tcp flows seen: true"
	has_line "seccomp: 2"
	bytes=$(sed -n 's/^pcap bytes: //p' <<<"$output")
	[ "$bytes" -gt 1000 ]
}

@test "isolation: --enable-sandbox in path mode with --userns-path, and as root of the namespace (whose mounts it leaves alone)" {
	run in_sandbox "$HELPERS"'
		holder=$(userns_holder)
		# rootlesskit detach mode names both namespaces by path.
		start_tapir p --enable-sandbox --enable-seccomp --configure \
			--netns-type=path --userns-path="/proc/$holder/ns/user" \
			"/proc/$holder/ns/net" tap0
		echo "path: $(status_of "$(bg_pid p)" | paste -sd" ")"
		nsrun "$holder" ping -c1 -W2 10.0.2.2 >/dev/null && echo path-ping-ok
		bg_stop p
		# As root in a user namespace (podman runs it so), with a mount
		# of its own that the sandbox (a mount namespace of its own)
		# must leave alone.
		bg_start_user holder2 unshare -rnm sleep 600
		h2=$(bg_pid holder2)
		wait_for 5 _scen_userns_ready "$h2"
		mkdir -m 0777 "$SCEN_DIR/mnt"
		as_user nsenter -t "$h2" -U -m --preserve-credentials bash -c "
			mount -t tmpfs marker \"$SCEN_DIR/mnt\"
			\"$TAPIR_BIN\" --enable-sandbox --configure -r 3 \
				--netns-type=path /proc/$h2/ns/net tap1 \
				3>\"$SCEN_DIR/ready\" & t=\$!
			for i in \$(seq 50); do
				[ -s \"$SCEN_DIR/ready\" ] && break
				sleep 0.1
			done
			grep -q ^NoNewPrivs:.1 /proc/\$t/status && echo root-sandboxed
			kill \$t; wait \$t
			grep -q \" $SCEN_DIR/mnt tmpfs\" /proc/self/mounts &&
				echo caller-mount-kept
		"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"path: "*"capeff 0000000000000400"*"nonewprivs 1"*"seccomp 2"* ]]
	has_line "path-ping-ok"
	has_line "root-sandboxed"
	has_line "caller-mount-kept"
}

@test "isolation: started as root, tapir run, attach mode and pasta serve as nobody with CAP_NET_BIND_SERVICE only, undumpable, still dying with a parent that asked for it; run's command stays root and gets its SIGTERM; pasta's daemon is pid 1 of its own PID namespace" {
	run in_sandbox '
		creds() { # NAME PID
			echo "$1: $(awk "/^(Uid|Gid|Groups|CapEff):/ {
				printf \"%s%s%s \", \$1, \$2, \$3 }" "/proc/$2/status")"
		}
		nobody() { # PID
			grep -q "^Uid:.65534" "/proc/$1/status"
		}
		netns_holder() { # NAME: a root process in a netns of its own
			bg_start "$1" unshare -n sleep 600
			wait_for 5 _scen_other_netns "$(bg_pid "$1")"
			bg_pid "$1"
		}
		# tapir run, its parent asking for SIGKILL when it dies, as
		# rootlesskit asks of its children; the command says which
		# signal came, and exits 7.
		cat >"$SCEN_DIR/cmd.sh" <<"EOF"
trap "echo got-TERM; exit 7" TERM
echo up
sleep 60 &
wait
EOF
		bg_start r bash -c "setpriv --pdeathsig KILL \"\$0\" run -- sh $SCEN_DIR/cmd.sh & echo \$! >$SCEN_DIR/r.tapir; wait" "$TAPIR_BIN"
		wait_for 5 grep -q up "$SCEN_DIR/r.log"
		r=$(cat "$SCEN_DIR/r.tapir")
		wait_for 5 nobody "$r"
		creds run "$r"
		creds "run command" "$(pgrep -P "$r" -x sh)"
		echo "run mem owner: $(stat -c %u "/proc/$r/mem")"
		kill -TERM "$r"
		wait_for 5 grep -q got-TERM "$SCEN_DIR/r.log"
		wait_for 5 bash -c "! kill -0 $r 2>/dev/null" && echo "run: gone after TERM"
		grep got-TERM "$SCEN_DIR/r.log"
		# The same with a parent that dies: tapir dies too.
		bg_start r2 bash -c "setpriv --pdeathsig KILL \"\$0\" run -- sleep 60 & echo \$! >$SCEN_DIR/r2.tapir; wait" "$TAPIR_BIN"
		wait_for 5 test -s "$SCEN_DIR/r2.tapir"
		r2=$(cat "$SCEN_DIR/r2.tapir")
		wait_for 5 nobody "$r2"
		kill -KILL "$(bg_pid r2)"
		wait_for 5 bash -c "! kill -0 $r2 2>/dev/null" && echo "run: gone with its parent"
		h=$(netns_holder h1)
		bg_start a bash -c "exec \"\$0\" -r 3 --configure $h tap0 3>$SCEN_DIR/a.ready" "$TAPIR_BIN"
		wait_for 5 grep -q 1 "$SCEN_DIR/a.ready"
		wait_for 5 nobody "$(bg_pid a)"
		creds attach "$(bg_pid a)"
		h=$(netns_holder h2)
		rc=0
		timeout 10 "$TAPIR_BIN" pasta --config-net -I tap0 -t none -u none \
			-T none -U none --pid "$SCEN_DIR/p.pid" --netns "/proc/$h/ns/net" \
			2>"$SCEN_DIR/pasta.err" || rc=$?
		p=$(cat "$SCEN_DIR/p.pid")
		echo "pasta rc=$rc: $(cat "$SCEN_DIR/pasta.err")"
		creds pasta "$p"
		echo "pasta nspid: $(awk "/^NSpid:/ { print NF - 1, \$NF }" "/proc/$p/status")"
		nsenter -t "$h" -n ip -4 -o addr show dev tap0 >/dev/null && echo "pasta tap0: up"
		kill "$p"
		grep -h "^tapir" "$SCEN_DIR/r.log" "$SCEN_DIR/a.log"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	nobody="Uid:6553465534 Gid:6553465534 Groups: CapEff:0000000000000400 "
	for mode in run attach pasta; do
		has_line "$mode: $nobody"
	done
	# The command is root's, as the caller is: root in its namespaces.
	grep -q "^run command: Uid:00 Gid:00 " <<<"$output"
	# Not dumpable: /proc/PID/mem is root's, not the process's uid's.
	has_line "run mem owner: 0"
	has_line "got-TERM"
	has_line "run: gone after TERM"
	has_line "run: gone with its parent"
	has_line "pasta rc=0: tapir: started as root: serving as nobody (65534:65534)"
	has_line "pasta nspid: 2 1"
	has_line "pasta tap0: up"
	[ "$(grep -c "^tapir: started as root: serving as nobody (65534:65534)$" <<<"$output")" -eq 2 ]
}

@test "isolation: fds the caller leaked are closed at start: pasta's \$(...) returns at once, a file stays out of attach mode and tapir run, whose command keeps it" {
	run in_sandbox '
		mkdir -m 0777 "$SCEN_DIR/bin"
		ln -s "$TAPIR_BIN" "$SCEN_DIR/bin/pasta"
		L=$SCEN_DIR/leak
		install -m 0666 /dev/null "$L"
		leaks() { # NAME PID: the fds of PID that lead to $L
			local f
			for f in "/proc/$2/fd/"*; do
				[ "$(readlink "$f")" = "$L" ] && echo "$1 holds $L"
			done
			return 0
		}
		holder=$(userns_holder)
		# As x=$(pasta ... 3>&1 >/dev/null): the read ends when every
		# holder of the pipe has let go; timeout ends a stalled one.
		rc=0
		start=$(date +%s%N)
		timeout 10 bash -c "\"\$@\" 3>&1 4>>$L >/dev/null 2>&1 | cat >/dev/null" \
			bash setpriv --reuid="$(id -u "$TAPIR_TEST_USER")" \
			--regid="$(id -g "$TAPIR_TEST_USER")" --init-groups \
			"$SCEN_DIR/bin/pasta" -t none -u none -T none -U none \
			--pid "$SCEN_DIR/p.pid" "$holder" || rc=$?
		echo "pasta read: rc=$rc in $((($(date +%s%N) - start) / 1000000)) ms"
		leaks pasta "$(cat "$SCEN_DIR/p.pid")"
		bg_start_user a bash -c "exec 4>>$L; exec \"\$0\" -r 3 $holder tap1 3>$SCEN_DIR/a.ready" "$TAPIR_BIN"
		# The ready fd, which -r names, stays: "1" comes through it.
		wait_for 5 grep -q 1 "$SCEN_DIR/a.ready"
		leaks attach "$(bg_pid a)"
		# Not dumpable: /proc/PID/mem belongs to root, not to the test user,
		# and a process of the user (a container root) may not open it.
		echo "attach mem owner: $(stat -c %u "/proc/$(bg_pid a)/mem")"
		mem=$(as_user cat "/proc/$(bg_pid a)/mem" 2>&1 || true)
		grep -q "Permission denied" <<<"$mem" && echo "attach mem: refused"
		bg_start_user t bash -c "exec 4>>$L; exec \"\$0\" run -- sh -c \"readlink /proc/self/fd/4; sleep 60\"" "$TAPIR_BIN"
		wait_for 5 grep -q leak "$SCEN_DIR/t.log"
		leaks run "$(bg_pid t)"
		echo "command: $(head -n 1 "$SCEN_DIR/t.log")"
		kill "$(cat "$SCEN_DIR/p.pid")"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q "^pasta read: rc=0 in [0-9]* ms$" <<<"$output"
	ms=$(sed -n "s/^pasta read: rc=0 in \([0-9]*\) ms$/\1/p" <<<"$output")
	[ "$ms" -lt 5000 ]
	! grep -q " holds " <<<"$output" || false
	grep -q "^command: .*/leak$" <<<"$output"
	has_line "attach mem owner: 0"
	has_line "attach mem: refused"
}

# A desktop's /run, in the sandbox's mount namespace only: systemd-resolved's
# stub resolver in /run/systemd/resolve, which /etc/resolv.conf points at
# with the relative symlink systemd makes, and the user's session bus
# socket in /run/user/UID (systemd-run through it would be code execution
# outside any sandbox). $uid is the test user's.
DESKTOP_RUN='
	uid=$(id -u "$TAPIR_TEST_USER")
	mount -t tmpfs -o mode=0755 tapir-systemd /run/systemd
	mkdir /run/systemd/resolve
	cp /etc/resolv.conf /run/systemd/resolve/stub-resolv.conf
	mkdir "$SCEN_DIR/etc"
	cp -a /etc/. "$SCEN_DIR/etc/"
	rm "$SCEN_DIR/etc/resolv.conf"
	ln -s ../run/systemd/resolve/stub-resolv.conf "$SCEN_DIR/etc/resolv.conf"
	mount --bind "$SCEN_DIR/etc" /etc
	mount -t tmpfs -o mode=0755 tapir-user /run/user
	install -d -o "$TAPIR_TEST_USER" -m 0700 "/run/user/$uid"
	bg_start_user bus socat "UNIX-LISTEN:/run/user/$uid/bus,fork" EXEC:cat
	wait_for 5 test -S "/run/user/$uid/bus"
'

# Helpers for the snippet below:
#   fds_of NAME PID: "NAME fd N: KIND LINK" for each fd of PID, KIND as
#     stat(1) names the file it leads to ("directory", "socket", ...)
#   janitor_of NAME PID: "NAME janitor: N other fds, tun: T" for PID's
#     child named tapir-janitor, N counting its fds that are no directory
FDS='
	fds_of() {
		local f
		for f in /proc/$2/fd/*; do
			echo "$1 fd ${f##*/}: $(stat -L -c %F "$f") $(readlink "$f")"
		done
	}
	janitor_of() {
		local c f other=0 tun=0
		for c in $(cat /proc/$2/task/*/children); do
			[ "$(cat /proc/$c/comm)" = tapir-janitor ] || continue
			for f in /proc/$c/fd/*; do
				[ -d "$f" ] && continue
				other=$((other + 1))
				[ "$(readlink "$f")" = /dev/net/tun ] && tun=$((tun + 1))
			done
			echo "$1 janitor: $other other fds, tun: $tun"
		done
	}
'

@test "isolation: nothing of the host but /etc and the resolver's directory: no directory fd, no /run/user; the janitor removes the API socket and resolv.conf, also after SIGKILL" {
	run in_sandbox "$HELPERS$DESKTOP_RUN$FDS"'
		mkdir -m 0777 "$SCEN_DIR/tmp"
		export TMPDIR=$SCEN_DIR/tmp
		S=$SCEN_DIR/api.sock
		bg_start_user t "$TAPIR_BIN" run -a "$S" -- sleep 60
		wait_for 5 test -S "$S"
		G=$(userns_holder)
		start_tapir a --enable-sandbox --enable-seccomp --configure \
			-a "$SCEN_DIR/a.sock" "$G" tap0
		for name in t a; do
			pid=$(bg_pid $name)
			echo "$name root: $(ls -A /proc/$pid/root | sort | paste -sd,)"
			echo "$name run: $(cd /proc/$pid/root/run && find . -mindepth 1 | sort | paste -sd,)"
			test -e "/proc/$pid/root/run/user/$uid/bus" && echo "$name reaches the bus"
			fds_of $name "$pid"
			janitor_of $name "$pid"
		done
		echo "resolv.conf dirs: $(ls "$TMPDIR" | wc -l)"
		kill -KILL "$(bg_pid t)"
		wait_for 5 bash -c "! test -e $S && ! ls $TMPDIR/* >/dev/null 2>&1" || true
		echo "after SIGKILL: socket $(test -e "$S" && echo left || echo gone), resolv.conf dirs: $(ls "$TMPDIR" | wc -l)"
		bg_stop a
		echo "after SIGTERM: socket $(test -e "$SCEN_DIR/a.sock" && echo left || echo gone)"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	root=$(isolated_root)
	has_line "t root: $root"
	has_line "a root: $root"
	for name in t a; do
		has_line "$name run: ./systemd,./systemd/resolve,./systemd/resolve/stub-resolv.conf"
		# Every fd leads to something no root can be left through.
		grep -q "^$name fd 0: " <<<"$output"
		! grep "^$name fd [0-9]*: " <<<"$output" |
			grep -Ev "^$name fd [0-9]+: (socket|fifo|character special file|regular( empty)? file|weird file) " ||
			false
		# The janitor holds the directories and its socket, and no tap.
		has_line "$name janitor: 1 other fds, tun: 0"
	done
	! grep -q "reaches the bus" <<<"$output" || false
	has_line "resolv.conf dirs: 1"
	has_line "after SIGKILL: socket gone, resolv.conf dirs: 0"
	has_line "after SIGTERM: socket gone"
}

# Three resolvers on the sandbox's own addresses, each with its own answer
# for tapir.test, so that the answer names the server that gave it: .77 on
# 127.0.0.1, .78 on sbx0's addresses (a link-local fe80::53%sbx0 too, as a
# router's), .79 on ::1. resolv_swap FILE TEXT N replaces FILE by rename,
# as NetworkManager and systemd-resolved do, lets the guest ask (cfgN) and
# waits for its answer. The guest asks once per config, 1.2 s after the
# rename (tapir looks at the file at most once a second), with a raw query
# to 10.0.2.3 (its own /etc/resolv.conf, bound over the host's symlink
# target, does not survive the host's rename) and writes the last 4 bytes
# of the answer: the address, c612004d for 198.18.0.77.
DNSLAB='
	ip -6 addr add fe80::53/64 dev sbx0 nodad
	dns_at() { # NAME ANSWER DNSMASQ-ARGS...
		local name=$1 answer=$2
		shift 2
		bg_start "$name" dnsmasq --no-daemon --port=53 --no-resolv \
			--no-hosts --user=root --pid-file= \
			--address=/tapir.test/198.18.0.$answer "$@"
	}
	dns_at dns77 77 --listen-address=127.0.0.1 --bind-interfaces
	dns_at dns78 78 --interface=sbx0 --except-interface=lo --bind-dynamic
	dns_at dns79 79 --listen-address=::1 --bind-interfaces
	wait_for 5 bash -c "ss -Hlun | grep -q 127.0.0.1:53 &&
		ss -Hlun | grep -qF [fe80::53]%sbx0:53 &&
		ss -Hlun | grep -qF [::1]:53"
	cat >"$SCEN_DIR/guest.sh" <<"EOF"
Q="\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00"
Q+="\x05tapir\x04test\x00\x00\x01\x00\x01"
ask() {
	exec 3<>/dev/udp/10.0.2.3/53
	printf "$Q" >&3
	timeout 3 dd bs=4096 count=1 status=none <&3 | od -An -tx1 | tr -d " \n"
	exec 3>&-
}
for i in 1 2 3 4; do
	n=0
	while [ ! -e "$SCEN_DIR/cfg$i" ] && [ $n -lt 200 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	sleep 1.2
	a=$(ask)
	echo "$1 cfg$i: ${a: -8}" >>"$SCEN_DIR/answers"
	touch "$SCEN_DIR/done$i"
done
EOF
	resolv_swap() { # FILE TEXT N
		printf "%b" "$2" >"$1.new"
		mv "$1.new" "$1"
		touch "$SCEN_DIR/cfg$3"
		wait_for 15 test -e "$SCEN_DIR/done$3"
	}
	# layout NAME LINK FILE: /etc/resolv.conf a symlink LINK to FILE, and
	# the four configs in turn under one tapir run.
	layout() {
		local name=$1 link=$2 file=$3 rc=0
		rm -f "$SCEN_DIR"/cfg* "$SCEN_DIR"/done*
		mkdir -p "$(dirname "$file")"
		printf "nameserver 127.0.0.1\n" >"$file"
		rm -rf "$SCEN_DIR/etc"
		mkdir "$SCEN_DIR/etc"
		cp -a /etc/. "$SCEN_DIR/etc/"
		rm "$SCEN_DIR/etc/resolv.conf"
		ln -s "$link" "$SCEN_DIR/etc/resolv.conf"
		mount --bind "$SCEN_DIR/etc" /etc
		as_user "$TAPIR_BIN" run -- bash "$SCEN_DIR/guest.sh" "$name" \
			>"$SCEN_DIR/$name.log" 2>&1 &
		local tpid=$!
		resolv_swap "$file" "nameserver fe80::1%lo\nnameserver 127.0.0.1\n" 1
		resolv_swap "$file" "nameserver fe80::53%sbx0\n" 2
		resolv_swap "$file" "nameserver ::1\n" 3
		resolv_swap "$file" "nameserver fe80::1%nosuch0\nnameserver fd18::1\n" 4
		wait "$tpid" || rc=$?
		umount /etc
		echo "$name: rc=$rc, skipped-scope lines: $(grep -c "scope %nosuch0: no such interface" "$SCEN_DIR/$name.log")"
		sed "s/^/$name log: /" "$SCEN_DIR/$name.log"
	}
'

@test "isolation: DNS as laptops set it up, replaced by rename while tapir runs: a symlink into /run or elsewhere; scoped (fe80::1%lo, fe80::53%sbx0), unscoped IPv6 and unknown-scope servers" {
	run in_sandbox "$DNSLAB"'
		mount -t tmpfs -o mode=0755 tapir-systemd /run/systemd
		layout systemd ../run/systemd/resolve/stub-resolv.conf \
			/run/systemd/resolve/stub-resolv.conf
		layout nm /mnt/nm/resolv.conf /mnt/nm/resolv.conf
		cat "$SCEN_DIR/answers"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	for name in systemd nm; do
		# Past the unreachable fe80::1%lo to 127.0.0.1; the router's
		# link-local by interface name; ::1; past an interface that
		# does not exist to fd18::1.
		has_line "$name cfg1: c612004d"
		has_line "$name cfg2: c612004e"
		has_line "$name cfg3: c612004f"
		has_line "$name cfg4: c612004e"
		[[ "$output" =~ $name:\ rc=0,\ skipped-scope\ lines:\ [12]$'\n' ]]
	done
}
