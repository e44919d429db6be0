#!/usr/bin/env bash
# benchmark/benchmark-connections.sh - many concurrent TCP connections, or
# UDP flows, through one driver: how many it opens and how fast, a round
# trip across all of them, and what holding them costs the driver.
#
#   benchmark/benchmark-connections.sh DRIVER tcp|udp N [--mtu M]
#
# DRIVER: tapir (tapir-X.Y, tapir-sandbox, tapir-qN), slirp4netns, pasta,
# pasta-trixie or tapir-pasta, started as benchmark/lib.sh says. The
# client, benchmark/conns.c, runs as the test user in the namespace and
# connects to 10.0.2.2, which the driver maps to the sandbox host's
# 127.0.0.1, where the echo server listens as the test user
# (tests/tools/manyconn for TCP, tests/tools/udpecho for UDP, on port
# 5500 of 127.0.0.1 only).
#
#   tcp  N connections, at most BENCH_CONN_WINDOW connects pending at once
#        (default 256), for at most BENCH_CONN_TIME seconds (default 120):
#        what has not opened by then is given up, and the cell reports what
#        it got. Then one 64-byte round trip on each connection that opened,
#        BENCH_CONN_INFLIGHT at once (default 64), for at most
#        BENCH_CONN_RTT_TIME seconds (default 30). Every connection is held
#        until the driver has been measured.
#   udp  N sockets, each sends one 64-byte datagram from a port of its own
#        and waits for it to come back, BENCH_CONN_INFLIGHT at once, for at
#        most BENCH_CONN_TIME seconds; one not back within 1 s is lost.
#
# The soft RLIMIT_NOFILE of everything this script starts (driver, server,
# client) is raised to the hard one, the ceiling a user gets here
# ("nofile" in the line). BENCH_CONN_NOFILE=N first tries to set the hard
# limit to N, which root may do only where it has CAP_SYS_RESOURCE.
#
# Measured from /proc of the driver's process (the tap holder): its CPU
# (utime + stime) during the open phase per connection opened, during the
# round trips per round trip, and for UDP per flow answered; its fds and
# RSS before the client starts, its fds once every connection is open and
# again while all are held, and its peak RSS (VmHWM) then.
#
# Output: the proof lines, then one JSON line. When the proof fails the
# status is 3 and no number is printed; other failures exit 1.
set -euo pipefail

# shellcheck source=benchmark/lib.sh
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

usage() {
	echo "usage: $0 tapir|tapir-X.Y|tapir-qN|slirp4netns|pasta|pasta-trixie tcp|udp N [--mtu M]" >&2
	exit 2
}

bench_parse_args "--mtu" "$@" || usage
((${#BENCH_ARGS[@]} == 3)) || usage
driver=${BENCH_ARGS[0]} proto=${BENCH_ARGS[1]} n=${BENCH_ARGS[2]}
bench_check_driver "$driver" tapir slirp4netns pasta
bench_check_choice protocol "$proto" tcp udp
bench_check_int "the number of connections" "$n" 1 1000000
: "${BENCH_CONN_TIME:=120}" "${BENCH_CONN_RTT_TIME:=30}"
: "${BENCH_CONN_WINDOW:=256}" "${BENCH_CONN_INFLIGHT:=64}"
bench_check_int BENCH_CONN_TIME "$BENCH_CONN_TIME" 1 3600
bench_check_int BENCH_CONN_RTT_TIME "$BENCH_CONN_RTT_TIME" 1 3600
bench_check_int BENCH_CONN_WINDOW "$BENCH_CONN_WINDOW" 1 1000000
bench_check_int BENCH_CONN_INFLIGHT "$BENCH_CONN_INFLIGHT" 1 4096
[[ -z "${BENCH_CONN_NOFILE:-}" ]] ||
	bench_check_int BENCH_CONN_NOFILE "$BENCH_CONN_NOFILE" 64 1073741816
bench_enter "$0" "$@"

port=5500 size=64

# conn_nofile: raise this shell's soft nofile limit to the hard one (after
# trying BENCH_CONN_NOFILE for both), so that everything started from here
# inherits it; sets NOFILE to the hard limit the test user then has.
conn_nofile() {
	if [[ -n "${BENCH_CONN_NOFILE:-}" ]] &&
		! ulimit -n "$BENCH_CONN_NOFILE" 2>/dev/null; then
		bench_log "the hard nofile limit stays at $(ulimit -Hn): root may not set it to $BENCH_CONN_NOFILE here"
	fi
	ulimit -Sn "$(ulimit -Hn)"
	NOFILE=$(as_user bash -c 'ulimit -Hn')
}

conn_fds() { # PID: prints how many fds PID has open
	local -a fds
	fds=("/proc/$1/fd/"*)
	echo "${#fds[@]}"
}

conn_fds_back() { # true once the driver holds at most 16 fds more than at start
	(($(conn_fds "$pid") <= fds_before + 16))
}

conn_status() { # PID FIELD: prints the kB of FIELD (VmHWM, VmRSS) of PID
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"
}

conn_limit() { # PID: prints PID's soft limit of open files
	awk '/^Max open files/ { print $4 }' "/proc/$1/limits"
}

conn_udp_listening() { # true once the UDP echo server is bound
	[[ -n "$(ss -Hlun "( sport = :$port )")" ]]
}

conn_client_gone() {
	! _scen_alive "$(bg_pid conns)"
}

conn_has_phase() { # PHASE: the client printed the line of PHASE, or is gone
	grep -q "\"phase\":\"$1\"" "$SCEN_DIR/conns.out" 2>/dev/null ||
		conn_client_gone
}

# conn_wait PHASE SECONDS: wait for the client's line of PHASE; print it.
conn_wait() {
	wait_for "$2" conn_has_phase "$1" ||
		bench_die "the client printed no $1 line within $2 s"
	grep "\"phase\":\"$1\"" "$SCEN_DIR/conns.out" ||
		bench_die "the client ended before its $1 line: $(tail -n3 "$SCEN_DIR/conns.log")"
}

bin_conns=$(bench_accessible "$(bench_tool conns)")
bin_manyconn=$(bench_accessible "$(bench_tool manyconn)")
bin_udpecho=$(bench_accessible "$(bench_tool udpecho)")
conn_nofile
nofile=$NOFILE
((n + 64 <= nofile)) ||
	bench_log "$n connections need more fds than the limit, $nofile: the client stops at it"

bench_resolve "$driver"
bench_start "$driver" "$OPT_MTU"
# Both sides open many connections from one address to one port.
for ns in host namespace; do
	run=()
	[[ "$ns" == namespace ]] && run=(bench_in_ns_root)
	"${run[@]}" sysctl -qw net.ipv4.ip_local_port_range="1024 65000"
done
if [[ "$proto" == tcp ]]; then
	bg_start_user conn-server "$bin_manyconn" server "$port" "$BENCH_SRV_BIND"
	wait_for 5 bench_listening "$port" || bench_die "the echo server did not start"
else
	bg_start_user conn-server "$bin_udpecho" "$port" "$BENCH_SRV_BIND"
	wait_for 5 conn_udp_listening ||
		bench_die "the UDP echo server did not start"
	BENCH_STATS_PROTO=udp
fi

bench_prove_driver_pid
pid=$BENCH_CPU_PID
fds_before=$(conn_fds "$pid") rss_before=$(conn_status "$pid" VmRSS)
driver_nofile=$(conn_limit "$pid")
bench_snapshot before

# The client waits on a FIFO between its phases (conns -g): the driver is
# measured while nothing moves. This shell opens it read-write, which
# never blocks, after the client started, so that the client holds no
# writer of its own and sees the end when this shell closes it.
gate_fifo=$SCEN_DIR/conns.in
mkfifo -m 0666 "$gate_fifo"
args=(-H "$BENCH_TARGET" -p "$port" -n "$n" -k "$BENCH_CONN_INFLIGHT"
	-s "$size" -d "$BENCH_CONN_TIME" -g)
[[ "$proto" == tcp ]] && args+=(-w "$BENCH_CONN_WINDOW" -D "$BENCH_CONN_RTT_TIME")
bench_log "$n $proto $([[ $proto == tcp ]] && echo connections || echo flows) to $BENCH_TARGET:$port (nofile $nofile)"
# shellcheck disable=SC2016 # expanded by the client's shell
bench_bg_in_ns conns sh -c 'in=$1 out=$2; shift 2; exec "$@" <"$in" >"$out"' \
	sh "$gate_fifo" "$SCEN_DIR/conns.out" "$bin_conns" "$proto" "${args[@]}"
exec {gate}<>"$gate_fifo"

if [[ "$proto" == tcp ]]; then
	first=$(conn_wait open $((BENCH_CONN_TIME + 60)))
	bench_cpu_ticks "$pid"
	ticks_open=$BENCH_TICKS fds_open=$(conn_fds "$pid")
	echo go >&"$gate"
	last=$(conn_wait roundtrip $((BENCH_CONN_RTT_TIME + 60)))
else
	first='{}'
	last=$(conn_wait udp $((BENCH_CONN_TIME + 60)))
	ticks_open=0 fds_open=0
fi
bench_cpu_ticks "$pid"
ticks_end=$BENCH_TICKS fds_held=$(conn_fds "$pid")
hwm=$(conn_status "$pid" VmHWM) rss_held=$(conn_status "$pid" VmRSS)
bench_snapshot after
# Let go: the client closes everything and ends.
exec {gate}>&-
wait_for 60 conn_client_gone ||
	bench_log "the client did not end within 60 s of being let go"
bg_stop conns
# A driver at its fd limit may have none left for a client of its API
# (tapir answers "too many open files"): then the proof's counters are
# read once the connections are gone. UDP flows stay until they time out.
if [[ "$BENCH_KIND" == tapir && "$BENCH_SNAP_after_STATS" == none ]]; then
	wait_for 30 conn_fds_back ||
		bench_log "the driver still has $(conn_fds "$pid") fds 30 s after the client closed its sockets ($fds_before before)"
	bench_snapshot after
fi

bytes=$(jq -n --argjson a "$first" --argjson b "$last" '$a + $b | .bytes')
bench_prove_path both "$bytes"
fields=$(jq -cn --argjson a "$first" --argjson b "$last" --argjson n "$n" \
	--arg proto "$proto" --argjson mtu "$OPT_MTU" --argjson nofile "$nofile" \
	--argjson dnofile "${driver_nofile:-null}" \
	--argjson open_limit "$BENCH_CONN_TIME" \
	--argjson rt_limit "$BENCH_CONN_RTT_TIME" \
	--argjson fds0 "$fds_before" --argjson fds1 "$fds_open" \
	--argjson fds2 "$fds_held" --argjson rss0 "$rss_before" \
	--argjson hwm "$hwm" --argjson rss2 "$rss_held" \
	--argjson t0 "$BENCH_SNAP_before_CPU" --argjson t1 "$ticks_open" \
	--argjson t2 "$ticks_end" --argjson hz "$(getconf CLK_TCK)" '
	def r(k): . * k | round / k;
	def per(d): if d > 0 then . / d else null end;
	($a + $b | del(.phase)) as $c
	| (if $proto == "tcp" then $c.opened else $c.answered end) as $got
	| ([$fds1, $fds2] | max) as $fds
	| {bench: "connections", proto: $proto, connections: $n, mtu: $mtu,
	   nofile: $nofile, driver_nofile: $dnofile, open_limit_s: $open_limit}
	+ (if $proto == "tcp" then {roundtrip_limit_s: $rt_limit} else {} end)
	+ $c
	+ {partial: ($got < $n),
	   driver_fds_before: $fds0, driver_fds: $fds,
	   driver_fds_per_conn: (($fds - $fds0) | per($got) | if . then r(100) else . end),
	   driver_rss_before_kb: $rss0, driver_rss_kb: $hwm, driver_rss_held_kb: $rss2,
	   driver_kb_per_conn: (($hwm - $rss0) | per($got) | if . then r(1000) else . end)}
	+ (if $proto == "tcp" then
		{driver_cpu_open_s: (($t1 - $t0) / $hz | r(1000)),
		 driver_cpu_us_per_open: (($t1 - $t0) / $hz * 1e6 | per($c.opened) | if . then r(10) else . end),
		 driver_cpu_roundtrip_s: (($t2 - $t1) / $hz | r(1000)),
		 driver_cpu_us_per_roundtrip: (($t2 - $t1) / $hz * 1e6 | per($c.roundtrips) | if . then r(10) else . end)}
	  else
		{driver_cpu_s: (($t2 - $t0) / $hz | r(1000)),
		 driver_cpu_us_per_flow: (($t2 - $t0) / $hz * 1e6 | per($c.answered) | if . then r(10) else . end)}
	  end)')
bench_emit "$fields"
