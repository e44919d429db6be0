# shellcheck shell=bash
# tests/scenario.bash - helpers for the snippets that tests run INSIDE the
# sandbox (hack/sandbox.sh), sourced by in_sandbox from tests/lib.bash.
#
# The snippet runs as root, as pid 1 of a fresh pid namespace, with errexit,
# nounset and pipefail on. Anything it starts dies with it anyway (pid
# namespace), but processes are still stopped gracefully here so that they
# can remove sockets and files in the shared /tmp.
#
#   as_user CMD...             run CMD as $TAPIR_TEST_USER, in the foreground
#   bg_start NAME CMD...       start a daemon as root; log in $SCEN_DIR/NAME.log
#   bg_start_user NAME CMD...  the same, as $TAPIR_TEST_USER
#   bg_stop NAME               stop it: SIGTERM to its group, SIGKILL after 2 s
#   bg_pid NAME                print its pid (also its process group id)
#   wait_for TIMEOUT_S CMD...  poll CMD every 0.1 s until it succeeds
#   userns_holder              start `unshare -rn sleep 600` as the test user
#                              and print its pid (a user+net namespace)
#   nsrun PID CMD...           run CMD as the test user inside PID's user and
#                              network namespaces (e.g. `nsrun $p ip -br a`)
#   nginx_start NAME LISTEN... serve a test page from nginx on each LISTEN
#   start_tapir NAME ARGS...   tapir ARGS as the test user, waited until ready
#   tcp_listening PORT         a TCP listener exists on PORT (for wait_for)
#   tap_holders [IFNAME]       "PID EXE" of each process with a tun fd
#                              attached to IFNAME (default tap0)
#   cpu_percent PID SECONDS    PID's CPU use over the next SECONDS, in % of
#                              one core (from /proc/PID/stat)
#   sendq_full PORT            a socket to or from PORT has 1 MB it cannot
#                              send: its peer stopped reading
#   oldkernel_env VERSION [SHIM]
#                              NAME=VALUE words for `env` that preload
#                              tests/tools/oldkernel.so, imitating Linux
#                              VERSION (e.g. 5.10, 6.1): `as_user env
#                              $(oldkernel_env 5.10) "$TAPIR_BIN" ...`
#
# SCEN_DIR is a world-writable scratch directory, removed at exit. When the
# snippet fails, the tail of every daemon log is printed to stderr so the
# bats output shows why.

: "${TAPIR_TEST_USER:=tapirtest}"
export TAPIR_TEST_USER

# in_sandbox makes the directory outside, so that it is removed even if
# this shell is SIGKILLed; standalone use gets a fresh one.
if [[ -z "${SCEN_DIR:-}" || ! -d "$SCEN_DIR" ]]; then
	SCEN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/tapir-scen.XXXXXX")
fi
# The test user's daemons write here (sockets, pid files) too.
chmod 0777 "$SCEN_DIR"
export SCEN_DIR
# Start order, one name a line. A file rather than an array so that
# processes started in a subshell, e.g. `pid=$(userns_holder)`, are still
# stopped by the EXIT trap of the main shell.
: >"$SCEN_DIR/.started"

_scen_alive() { # PID: true while PID runs (a zombie counts as gone)
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	# Field 3 follows the ")" that closes the command name.
	stat=${stat##*) }
	[[ "${stat:0:1}" != Z ]]
}

bg_pid() { # NAME
	cat "$SCEN_DIR/$1.pid"
}

_scen_bg() { # NAME CMD...
	local name=$1
	shift
	if [[ -e "$SCEN_DIR/$name.pid" ]]; then
		echo "bg_start: '$name' was already started" >&2
		return 1
	fi
	# setsid: the daemon leads its own process group, so bg_stop reaches
	# the children it forks as well. The redirections keep it off our
	# stdout, which may be a $(...) pipe or bats' output capture.
	setsid "$@" </dev/null >"$SCEN_DIR/$name.log" 2>&1 &
	echo "$!" >"$SCEN_DIR/$name.pid"
	echo "$name" >>"$SCEN_DIR/.started"
}

bg_start() { # NAME CMD...
	_scen_bg "$@"
}

bg_start_user() { # NAME CMD...
	local name=$1
	shift
	local -a as_user_cmd
	_scen_as_user_cmd as_user_cmd || return 1
	_scen_bg "$name" "${as_user_cmd[@]}" "$@"
}

bg_stop() { # NAME
	local name=$1 pid i
	pid=$(cat "$SCEN_DIR/$name.pid" 2>/dev/null) || return 0
	if _scen_alive "$pid"; then
		# Right after bg_start the child may not have called setsid()
		# yet, so fall back to the pid itself.
		kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < 20; i++)); do
			_scen_alive "$pid" || break
			sleep 0.1
		done
	fi
	# Whatever is left of the group (forked children such as socat's
	# per-peer ones, or a daemon ignoring SIGTERM) is killed. The pid is
	# not reaped yet, so the group id cannot have been reused.
	kill -KILL -- "-$pid" 2>/dev/null || true
	kill -KILL "$pid" 2>/dev/null || true
	# Reap it if it is our child (not if a subshell started it).
	wait "$pid" 2>/dev/null || true
	rm -f "$SCEN_DIR/$name.pid"
}

_scen_user_env() { # ARRAY_NAME: fills the array with NAME=VALUE words
	local -n _env=$1
	local home var
	home=$(getent passwd "$TAPIR_TEST_USER" | cut -d: -f6)
	if [[ -z "$home" ]]; then
		echo "as_user: no user '$TAPIR_TEST_USER' (run hack/test-user.sh)" >&2
		return 1
	fi
	_env=(
		"HOME=$home" "USER=$TAPIR_TEST_USER" "LOGNAME=$TAPIR_TEST_USER"
		"SHELL=/bin/bash"
		# ip, sysctl and friends live in sbin.
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	)
	# What the tests and the binaries under test need: TAPIR_BIN and
	# friends, the sandbox addresses, TMPDIR, and the sanitizer options
	# of `make check-asan`.
	for var in $(compgen -e); do
		case $var in
		TAPIR_* | SANDBOX* | SCEN_DIR | TMPDIR | LANG | LC_* | TERM | \
			*SAN_OPTIONS)
			_env+=("$var=${!var}")
			;;
		esac
	done
}

_scen_usec() { # SECONDS (may be fractional) -> microseconds
	awk -v t="$1" 'BEGIN { printf "%d\n", t * 1000000 }'
}

_scen_now_usec() {
	local t=${EPOCHREALTIME/[.,]/}
	echo "$((10#$t))"
}

wait_for() { # TIMEOUT_S CMD...
	local deadline
	deadline=$(($(_scen_now_usec) + $(_scen_usec "$1")))
	shift
	# Bounded by the clock; CMD itself should be quick (wrap slow ones in
	# `timeout`).
	while true; do
		if "$@"; then
			return 0
		fi
		if (($(_scen_now_usec) >= deadline)); then
			echo "wait_for: timed out: $*" >&2
			return 1
		fi
		sleep 0.1
	done
}

_scen_other_netns() { # PID: true once PID's network namespace is not ours
	local theirs
	theirs=$(readlink "/proc/$1/ns/net" 2>/dev/null) || return 1
	[[ "$theirs" != "$(readlink /proc/self/ns/net)" ]]
}

# _scen_userns_ready PID: PID is in a network namespace of its own and its
# user namespace has its uid and gid maps. `unshare -r` unshares first and
# writes the maps after: a tapir that joined in between had no mapping, and
# its sandbox's mkdir failed with EOVERFLOW (seen in fault.bats).
_scen_userns_ready() {
	_scen_other_netns "$1" && grep -q . "/proc/$1/uid_map" &&
		grep -q . "/proc/$1/gid_map"
}

userns_holder() {
	local pid
	bg_start_user holder unshare -rn sleep 600
	pid=$(bg_pid holder)
	# setpriv and env exec, and unshare execs sleep after unsharing, so
	# the recorded pid ends up as the sleep in the new namespaces.
	if ! wait_for 5 _scen_userns_ready "$pid"; then
		echo "userns_holder: no new network namespace; log:" >&2
		cat "$SCEN_DIR/holder.log" >&2 || true
		return 1
	fi
	echo "$pid"
}

_scen_as_user_cmd() { # ARRAY_NAME: fills it with the command prefix
	local -n _cmd=$1
	local -a env_args
	local uid gid
	_scen_user_env env_args || return 1
	uid=$(id -u "$TAPIR_TEST_USER")
	gid=$(id -g "$TAPIR_TEST_USER")
	# setpriv rather than runuser: it switches ids and execs without
	# forking, so bg_start_user records the daemon's own pid, and signals
	# reach CMD directly (runuser stays as a parent for its PAM session
	# and, when signalled, sleeps 2 s before it kills CMD).
	_cmd=(setpriv --reuid="$uid" --regid="$gid" --init-groups
		env -i "${env_args[@]}")
}

as_user() { # CMD...
	local -a as_user_cmd
	_scen_as_user_cmd as_user_cmd || return 1
	"${as_user_cmd[@]}" "$@"
}

nsrun() { # PID CMD...
	local pid=$1
	shift
	# --preserve-credentials: the `unshare -r` namespace denies setgroups,
	# and the test user is root in there anyway.
	as_user nsenter -t "$pid" -U -n --preserve-credentials -- "$@"
}

_scen_exit() {
	local rc=$? name
	local -a names=()
	if [[ -f "$SCEN_DIR/.started" ]]; then
		mapfile -t names <"$SCEN_DIR/.started"
	fi
	if ((rc != 0)); then
		for name in "${names[@]}"; do
			[[ -s "$SCEN_DIR/$name.log" ]] || continue
			echo "--- $name.log (last 20 lines) ---" >&2
			tail -n 20 "$SCEN_DIR/$name.log" >&2 || true
		done
	fi
	# Reverse start order: clients go before the servers they use.
	local i
	for ((i = ${#names[@]} - 1; i >= 0; i--)); do
		bg_stop "${names[i]}"
	done
	rm -rf "$SCEN_DIR"
	return "$rc"
}
trap _scen_exit EXIT
# As pid 1 of the sandbox this shell ignores signals it has no handler for;
# these let `timeout` (SIGTERM) and ^C end it, with the cleanup above.
trap 'exit 143' TERM
trap 'exit 130' INT
trap 'exit 129' HUP

# nginx_start NAME LISTEN... : serve $SCEN_DIR/NAME-www (index.html says
# "tapir test page") from nginx on each LISTEN (e.g. 127.0.0.1:8080), as
# root, and wait until the first one answers.
nginx_start() {
	local name=$1 listen conf dir
	shift
	dir="$SCEN_DIR/$name"
	mkdir -p "$dir/www"
	echo "tapir test page" >"$dir/www/index.html"
	conf="daemon off; worker_processes 1; pid $dir/nginx.pid;
error_log $dir/error.log; events { worker_connections 4096; }
http { access_log off; client_body_temp_path $dir; proxy_temp_path $dir;
fastcgi_temp_path $dir; uwsgi_temp_path $dir; scgi_temp_path $dir;
server {"
	for listen in "$@"; do
		conf+=" listen $listen;"
	done
	conf+=" root $dir/www; } }"
	echo "$conf" >"$dir/nginx.conf"
	bg_start "$name" nginx -c "$dir/nginx.conf"
	wait_for 5 curl -s -o /dev/null "http://$1/"
}

# start_tapir NAME ARGS...: tapir ARGS as the test user in the background,
# with -r 3 writing to $SCEN_DIR/NAME.ready; returns once "1" is there, and
# fails, showing tapir's output, if tapir exits or takes over 5 s. With
# TAPIR_TEST_ISOLATION=1 (the default; hack/test.sh sets 0 for its ASan
# pass) it adds --enable-sandbox --enable-seccomp, so that attach mode runs
# the way rootlesskit's and podman's "auto" would run it.
start_tapir() {
	local name=$1
	local -a iso=()
	shift
	[[ "${TAPIR_TEST_ISOLATION:-1}" == 1 ]] &&
		iso=(--enable-sandbox --enable-seccomp)
	bg_start_user "$name" bash -c 'exec "${@:2}" 3>"$1"' bash \
		"$SCEN_DIR/$name.ready" "$TAPIR_BIN" -r 3 "${iso[@]}" "$@"
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

# tcp_listening PORT: something listens on TCP PORT here (quietly, for
# wait_for; a probe connection would print errors and reach the server).
tcp_listening() {
	ss -Hltn "sport = :$1" | grep -q .
}

# cpu_ticks PID: user plus system CPU time PID used so far, in clock ticks.
cpu_ticks() {
	local stat
	stat=$(cat "/proc/$1/stat") || return 1
	# Past the ")" that ends the command name, field 3 comes first: utime
	# and stime (fields 14 and 15) are the 12th and 13th.
	stat=${stat##*) }
	awk '{ print $12 + $13 }' <<<"$stat"
}

# cpu_percent PID SECONDS: PID's CPU use over the next SECONDS (whole
# seconds), in percent of one core.
cpu_percent() {
	local pid=$1 secs=$2 hz a b
	hz=$(getconf CLK_TCK)
	a=$(cpu_ticks "$pid") || return 1
	sleep "$secs"
	b=$(cpu_ticks "$pid") || return 1
	echo $(((b - a) * 100 / (hz * secs)))
}

# sendq_full PORT: some TCP socket here, connected to or from PORT, holds
# more than 1 MB it cannot send: the other end stopped reading, and its
# own buffer is full (for wait_for). A receiver that does not read keeps
# its buffer small, so the sender's queue is the clear sign.
sendq_full() {
	ss -Htn "( dport = :$1 or sport = :$1 )" |
		awk '$3 > 1048576 { found = 1 } END { exit !found }'
}

# oldkernel_env VERSION [SHIM]: the environment, as NAME=VALUE words, that
# makes a command run as on Linux VERSION (the LD_PRELOAD shim, by default
# $TAPIR_BIN_DIR/oldkernel.so). The sanitizer build must not insist on
# coming first in the library list.
oldkernel_env() {
	echo "LD_PRELOAD=${2:-$TAPIR_BIN_DIR/oldkernel.so} TAPIR_OLDKERNEL=$1" \
		"ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
}

# tap_holders [IFNAME]: "PID EXE" of each process here with a tun fd
# attached to IFNAME (default tap0), one a line.
tap_holders() { # [IFNAME]
	local want=${1:-tap0} fd pid
	# One find rather than a readlink per fd: dockerd and containerd hold
	# hundreds.
	{ find /proc/[0-9]*/fd -maxdepth 1 -lname /dev/net/tun 2>/dev/null ||
		true; } |
		while IFS= read -r fd; do
			pid=${fd#/proc/}
			pid=${pid%%/*}
			grep -qE "^iff:[[:space:]]+$want\$" \
				"/proc/$pid/fdinfo/${fd##*/}" 2>/dev/null || continue
			echo "$pid $(readlink "/proc/$pid/exe")"
		done | sort -u
}
