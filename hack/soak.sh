#!/usr/bin/env bash
# hack/soak.sh - churn traffic through one tapir for SOAK_TIME seconds and
# check that its memory and fds stay flat (what `make soak` runs).
#
#   TAPIR_BUILD=build SOAK_TIME=120 hack/soak.sh      (as root)
#
# In a sandbox (hack/sandbox.sh) it attaches tapir, as the test user, to a
# user+net namespace with --configure, an API socket and a forward
# 127.0.0.1:18080 -> guest port 80, as rootlesskit runs slirp4netns, and
# runs these loops side by side for SOAK_TIME seconds, each op bounded
# by a timeout and followed by a 0.1 s pause:
#
#   http      guest: a short HTTP GET to 10.0.2.2 (nginx on host loopback)
#   upload    guest: a short TCP connection sending 64 KiB to 10.0.2.2
#   forward   host: a short TCP connection through the forward, which the
#             guest's server answers
#   udp       guest: datagrams from a new source port each time (a new
#             flow, which expires 30 s after its last datagram), one of
#             3000 bytes, which the guest sends as IP fragments
#   ping      guest: echo to 10.0.2.2 (answered by tapir), the same with
#             3000 bytes (fragments both ways), and echo to the sandbox
#             host's address (a ping socket flow, idle-expired)
#   dns       guest: a raw query to 10.0.2.3 from a new port each time,
#             answered by dnsmasq, the sandbox host's resolver
#   api       host: add_hostfwd on a fresh port, then remove_hostfwd
#
# Every 10 s it samples tapir's RSS (/proc/PID/status VmRSS), open fds
# (/proc/PID/fd) and CPU (/proc/PID/stat, % of one core over the interval)
# into $TAPIR_BUILD/soak/soak.csv; after the churn it keeps sampling until
# the fds are back at their count before the churn (at most SETTLE_MAX
# seconds: flows expire on their own timers), and plots the CSV to
# $TAPIR_BUILD/soak/soak.png (hack/soak.gp). The checks, one line each:
#
#   tapir kept running through the churn and after it
#   RSS grew less than 5 % from the end of the warm-up to the end of the
#     churn (see warmup_s())
#   the fd count came back to its count before the churn
#   tapir idles after the churn (under 5 % CPU over 5 s)
#   each loop above: at least one op, and at most 2 % of its ops failed
#   the plot was written
#
# and the last line is `N passed, N failed`; the exit status is 1 if any
# check failed. Every process it starts is stopped by pid on exit
# (tests/scenario.bash), and dies with the sandbox's pid namespace anyway.
set -euo pipefail

readonly SETTLE_MAX=120 SAMPLE_S=10 FAIL_PCT=2
readonly LOOPS="http upload forward udp ping dns api"
readonly HOST_LOOPS="forward api"

# ---- churn ops: `hack/soak.sh --churn OP SECONDS OUT` -------------------
# Run as the test user inside the guest's namespaces (or as root on the
# host side); they must not need anything but the copies in TAPIR_BIN_DIR.

op_http() {
	curl -sS --max-time 5 -o /dev/null http://10.0.2.2:8080/
}

op_upload() {
	head -c 65536 /dev/zero | timeout 5 socat -u - TCP:10.0.2.2:7300
}

op_forward() {
	[[ "$(timeout 5 socat -u TCP:127.0.0.1:18080 - 2>/dev/null)" == ok ]]
}

op_udp() {
	# A subshell: the fd closes with it, and each call is a new socket.
	(
		exec 3>/dev/udp/10.0.2.2/7200 || exit 1
		for i in 1 2 3; do
			echo "soak $i" >&3 || exit 1
		done
		head -c 3000 /dev/zero >&3
	)
}

op_ping() {
	ping -c1 -W2 -q 10.0.2.2 >/dev/null &&
		ping -c1 -W2 -q -s 3000 10.0.2.2 >/dev/null &&
		ping -c1 -W2 -q 198.18.0.1 >/dev/null
}

op_dns() {
	# tapir.test/A; dnsmasq answers 198.18.0.77 (c612004d).
	local q="\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00"
	q+="\x05tapir\x04test\x00\x00\x01\x00\x01"
	(
		exec 3<>/dev/udp/10.0.2.3/53 || exit 1
		# shellcheck disable=SC2059 # the query is the format
		printf "$q" >&3
		timeout 3 dd bs=4096 count=1 status=none <&3 |
			od -An -tx1 | tr -d ' \n' | grep -q c612004d
	)
}

op_api() { # N
	local port=$((19000 + $1 % 500)) id
	id=$(timeout 5 "$TAPIR_BIN" api "$SOAK_API" \
		"{\"execute\":\"add_hostfwd\",\"arguments\":{\"proto\":\"tcp\",\"host_addr\":\"127.0.0.1\",\"host_port\":$port,\"guest_port\":80}}" |
		jq -e .return.id) || return 1
	timeout 5 "$TAPIR_BIN" api "$SOAK_API" \
		"{\"execute\":\"remove_hostfwd\",\"arguments\":{\"id\":$id}}" |
		jq -e '.return == {}' >/dev/null
}

# churn OP SECONDS OUT: run op_OP until SECONDS have passed (and at most
# 100000 times), keeping "OK FAILED" counts in OUT as it goes.
churn() {
	local op=$1 out=$3 ok=0 failed=0 n=0 end
	end=$(($(date +%s) + $2))
	while (($(date +%s) < end && n < 100000)); do
		n=$((n + 1))
		if "op_$op" "$n" >/dev/null 2>&1; then
			ok=$((ok + 1))
		else
			failed=$((failed + 1))
		fi
		echo "$ok $failed" >"$out"
		sleep 0.1
	done
	echo "$ok $failed" >"$out"
}

if [[ "${1:-}" == --churn ]]; then
	shift
	churn "$@"
	exit 0
fi

# warmup_s SOAK_TIME: the seconds before RSS is taken as the reference.
# The first 20 % of the run, but at least 75 s: until the longest idle
# timeout of the churned flows (ping sockets: 60 s, swept every 10 s) has
# passed, their number, and the memory behind them, still grows. Never
# more than two thirds of the run, so that there is a window to compare.
warmup_s() {
	local w=$(($1 / 5))
	((w >= 75)) || w=75
	((w <= $1 * 2 / 3)) || w=$(($1 * 2 / 3))
	echo "$w"
}

# ---- inside the sandbox: `hack/soak.sh --inner ROOT WORK OUT` -----------

now() {
	date +%s
}

# fd_count, rss_kb, ticks: tapir's ($T) open fds, VmRSS and CPU ticks.
fd_count() {
	find "/proc/$T/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l
}

rss_kb() {
	awk '/^VmRSS:/ {print $2}' "/proc/$T/status"
}

# sample PHASE: append one CSV row; the CPU share covers the time since
# the previous row. A second row within the same second is left out.
sample() {
	local t ticks rss fds
	t=$(($(now) - T0))
	((t > LAST_T || t == 0)) || return 0
	ticks=$(cpu_ticks "$T") || return 1
	rss=$(rss_kb) || return 1
	fds=$(fd_count)
	awk -v t="$t" -v p="$1" -v r="$rss" -v f="$fds" -v d=$((ticks - LAST_TICKS)) \
		-v dt=$((t - LAST_T)) -v hz="$HZ" \
		'BEGIN { printf "%d,%s,%d,%d,%.1f\n", t, p, r, f, (dt > 0) ? d * 100 / (hz * dt) : 0 }' \
		>>"$CSV"
	LAST_TICKS=$ticks
	LAST_T=$t
}

# check OK DESCRIPTION: print and count one result.
check() {
	if [[ "$1" == 1 ]]; then
		echo "ok - $2"
	else
		echo "not ok - $2"
	fi
}

inner() {
	local root=$1 work=$2 out=$3
	# shellcheck source=tests/scenario.bash
	source "$root/tests/scenario.bash"
	local soak=$SOAK_TIME self="$work/bin/soak.sh" S="$SCEN_DIR/api.sock"
	local warmup loop
	warmup=$(warmup_s "$soak")
	HZ=$(getconf CLK_TCK)
	CSV="$out/soak.csv"
	echo "t_s,phase,rss_kb,fds,cpu_pct" >"$CSV"

	# The host: a resolver, a web server, TCP and UDP sinks.
	bg_start dnsmasq dnsmasq --no-daemon --port=53 --listen-address=127.0.0.1 \
		--bind-interfaces --no-resolv --no-hosts --user=root \
		--address=/tapir.test/198.18.0.77
	nginx_start web 127.0.0.1:8080
	bg_start tcpsink socat -u TCP-LISTEN:7300,fork,reuseaddr OPEN:/dev/null
	bg_start udpsink socat -u -b 65535 UDP4-RECV:7200 OPEN:/dev/null
	wait_for 5 tcp_listening 7300
	wait_for 5 bash -c "ss -Hlun | grep -q 127.0.0.1:53"

	# The guest, tapir, and the guest's server behind the forward. Not
	# userns_holder: its namespace lives 600 s, and tapir exits with it.
	bg_start_user holder unshare -rn sleep $((soak + SETTLE_MAX + 600))
	G=$(bg_pid holder)
	wait_for 5 _scen_other_netns "$G"
	start_tapir t --configure --mtu 1500 -a "$S" -p 127.0.0.1:18080:80 \
		"$G" tap0
	T=$(bg_pid t)
	bg_start_user gsrv nsenter -t "$G" -U -n --preserve-credentials -- \
		socat TCP-LISTEN:80,fork,reuseaddr SYSTEM:"echo ok"
	wait_for 5 eval "nsenter -t $G -n ss -Hltn 'sport = :80' | grep -q ."
	sleep 1
	local base_fds
	base_fds=$(fd_count)
	echo "tapir pid $T, $base_fds fds and $(rss_kb) kB RSS before the churn"
	echo "churning for $soak s (warm-up $warmup s), sampling every $SAMPLE_S s"

	T0=$(now)
	LAST_T=0
	LAST_TICKS=$(cpu_ticks "$T")
	sample start
	for loop in $LOOPS; do
		if [[ " $HOST_LOOPS " == *" $loop "* ]]; then
			bg_start "c_$loop" env SOAK_API="$S" \
				bash "$self" --churn "$loop" "$soak" "$SCEN_DIR/$loop.count"
		else
			bg_start_user "c_$loop" nsenter -t "$G" -U -n \
				--preserve-credentials -- env SOAK_API="$S" \
				bash "$self" --churn "$loop" "$soak" "$SCEN_DIR/$loop.count"
		fi
	done

	# Sample through the churn; bounded by the clock and a count.
	local tick alive=1
	for ((tick = SAMPLE_S; tick <= soak; tick += SAMPLE_S)); do
		sleep $((T0 + tick - $(now) > 0 ? T0 + tick - $(now) : 0))
		if ! _scen_alive "$T" || ! sample churn; then
			alive=0
			break
		fi
	done
	# The loops end by themselves (each op is bounded by its timeout).
	for loop in $LOOPS; do
		wait_for 30 eval "! _scen_alive \$(bg_pid c_$loop)" || true
		bg_stop "c_$loop"
	done
	local churn_end=$(($(now) - T0))
	_scen_alive "$T" || alive=0

	# Settle: the flows of the churn expire on their own timers.
	local settled=0 settle_s=0 next=$((LAST_T + SAMPLE_S))
	while ((alive && settle_s < SETTLE_MAX)); do
		if (($(fd_count) <= base_fds)); then
			settled=1
			break
		fi
		sleep 1
		settle_s=$(($(now) - T0 - churn_end))
		if (($(now) - T0 >= next)); then
			sample settle || alive=0
			next=$((next + SAMPLE_S))
		fi
		_scen_alive "$T" || alive=0
	done
	local idle_cpu=100 final_fds=-1
	if ((alive)); then
		sample settle || alive=0
		final_fds=$(fd_count)
		idle_cpu=$(cpu_percent "$T" 5)
		_scen_alive "$T" || alive=0
	fi

	# The numbers, for docs/testing.md and the log.
	awk -F, -v warm="$warmup" -v end="$churn_end" '
		NR == 2 { start = $3 }
		NR > 1 && $2 == "churn" && $1 >= warm && !w { w = $3; wt = $1 }
		NR > 1 && $2 == "churn" { last = $3; if ($4 > maxfd) maxfd = $4
			if ($3 > maxrss) maxrss = $3
			if (NR > 2) { cpu += $5; n++; if ($5 > maxcpu) maxcpu = $5 } }
		END {
			printf "rss_kb: start %d, after warm-up (%d s) %d, end of churn %d, max %d\n", start, wt, w, last, maxrss
			printf "rss_growth_pct: %.2f\n", w ? (last - w) * 100 / w : 100
			printf "cpu_pct: mean %.1f, max %.1f (during the churn)\n", n ? cpu / n : 0, maxcpu
			printf "fds_max: %d\n", maxfd
		}' "$CSV" | tee "$SCEN_DIR/numbers"
	echo "fds: before $base_fds, max during the churn $(sed -n 's/^fds_max: //p' "$SCEN_DIR/numbers"), final $final_fds, $settle_s s after the churn"
	echo "idle cpu after the churn: $idle_cpu %"

	check "$alive" "tapir kept running through the churn and after it"
	local growth
	growth=$(sed -n 's/^rss_growth_pct: //p' "$SCEN_DIR/numbers")
	check "$(awk -v g="$growth" 'BEGIN { print (g < 5) ? 1 : 0 }')" \
		"RSS grew ${growth} % after the warm-up (limit 5 %)"
	check "$settled" "fds back to $base_fds after the churn (final $final_fds, within ${SETTLE_MAX} s)"
	check "$((idle_cpu < 5))" "tapir idles after the churn ($idle_cpu % CPU over 5 s)"
	local ok failed
	for loop in $LOOPS; do
		read -r ok failed <"$SCEN_DIR/$loop.count" 2>/dev/null || {
			ok=0
			failed=0
		}
		check "$((ok > 0 && failed * 100 <= (ok + failed) * FAIL_PCT))" \
			"churn $loop: $ok ok, $failed failed (limit $FAIL_PCT %)"
	done
	if [[ -s "$SCEN_DIR/t.log" ]]; then
		echo "tapir's log (last 10 lines):"
		tail -n 10 "$SCEN_DIR/t.log" | sed 's/^/  /'
	fi
	echo "churn_end_s: $churn_end"
}

if [[ "${1:-}" == --inner ]]; then
	shift
	inner "$@"
	exit 0
fi

# ---- the outer part: set-up, sandbox, plot, summary ---------------------

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TAPIR_BUILD:-build}
SOAK_TIME=${SOAK_TIME:-120}
if ! [[ "$SOAK_TIME" =~ ^[0-9]+$ ]] || ((SOAK_TIME < 20)); then
	echo "hack/soak.sh: SOAK_TIME must be a number of seconds, at least 20 (got '$SOAK_TIME')" >&2
	exit 2
fi
if ((EUID != 0)); then
	echo "hack/soak.sh: must run as root: it creates network, mount and pid namespaces (try sudo make soak)" >&2
	exit 1
fi
if [[ ! -x "$build/tapir" ]]; then
	echo "hack/soak.sh: no $build/tapir (run make first)" >&2
	exit 1
fi
build=$(cd "$build" && pwd)
cd "$root"
hack/test-user.sh

out="$build/soak"
mkdir -p "$out"
rm -f "$out/soak.csv" "$out/soak.png" "$out/soak.log"
work=$(mktemp -d "${TMPDIR:-/tmp}/tapir-soak.XXXXXX")
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	rm -rf "$work"
}
trap cleanup EXIT
# The test user runs tapir and the guest's loops; a clone may sit where
# that user cannot look (as in tests/run.sh).
mkdir -p "$work/bin"
cp "$build/tapir" "$root/hack/soak.sh" "$work/bin/"
chmod 0755 "$work" "$work/bin" "$work/bin"/*
export TAPIR_BIN="$work/bin/tapir" TAPIR_BIN_DIR="$work/bin" SOAK_TIME

rc=0
# Bounded: the churn, the settling, and room for set-up and teardown.
timeout -k 10 $((SOAK_TIME + SETTLE_MAX + 120)) \
	hack/sandbox.sh bash "$work/bin/soak.sh" --inner "$root" "$work" "$out" \
	2>&1 | tee "$out/soak.log" || rc=$?
if ((rc == 124 || rc == 137)); then
	echo "not ok - the soak did not finish in $((SOAK_TIME + SETTLE_MAX + 120)) s"
	echo "not ok - the soak did not finish" >>"$out/soak.log"
fi

churn_end=$(sed -n 's/^churn_end_s: //p' "$out/soak.log" | tail -n 1)
if [[ -s "$out/soak.csv" ]] && (($(wc -l <"$out/soak.csv") > 2)) &&
	gnuplot -e "datafile='$out/soak.csv'; outfile='$out/soak.png'; churn_end=${churn_end:-$SOAK_TIME}; warmup=$(warmup_s "$SOAK_TIME"); subtitle='$(date -u +%Y-%m-%d), SOAK_TIME=$SOAK_TIME s, $(nproc) CPUs, Linux $(uname -r)'" \
		hack/soak.gp && [[ -s "$out/soak.png" ]]; then
	echo "ok - plot written: $out/soak.png" | tee -a "$out/soak.log"
else
	echo "not ok - plot: no $out/soak.png (gnuplot or the CSV failed)" |
		tee -a "$out/soak.log"
fi
echo "samples: $out/soak.csv"

passed=$(grep -c '^ok - ' "$out/soak.log" || true)
failed=$(grep -c '^not ok - ' "$out/soak.log" || true)
# A sandbox that died early reports fewer checks than it should.
expected=$((4 + $(wc -w <<<"$LOOPS") + 1))
if ((passed + failed < expected)); then
	echo "not ok - only $((passed + failed)) of $expected checks reported"
	failed=$((failed + expected - passed - failed))
fi
echo "$passed passed, $failed failed"
((failed == 0))
