#!/usr/bin/env bash
# benchmark/run-matrix.sh - the benchmark matrix behind `make bench`.
#
#   benchmark/run-matrix.sh              run everything, then report
#   benchmark/run-matrix.sh --report DIR report on an earlier run's results
#
# Runs, each cell in its own sandbox (the scripts re-enter hack/sandbox.sh):
#   net   benchmark-iperf3-net.sh  DRIVER × MTU {1500, 65520} × both
#                                  directions, plus host loopback
#   http  benchmark-http.sh        concurrency 1, 8, 16, 32, 128
#   port  benchmark-iperf3-port.sh host → namespace, MTU 65520
#   rr    benchmark-rr.sh          rr, crr and rr-fwd (through the forward),
#                                  100 B and 4 KiB, 1 and 32 connections,
#                                  MTU 65520
#   connections benchmark-connections.sh  BENCH_CONN_DRIVERS × TCP
#                                  BENCH_CONN_SIZES concurrent connections,
#                                  then UDP BENCH_CONN_UDP flows
#   overlay (only when asked for)  benchmark-overlay.sh: pod to pod over
#                                  VXLAN across two simulated hosts,
#                                  BENCH_OVERLAY_DRIVERS × MTU × link
#                                  MTU × both directions
#   conditions (only when asked for) benchmark-conditions.sh: each
#                                  network condition's target against what
#                                  was measured (BENCH_COND_DRIVERS), then
#                                  benchmark-iperf3-net.sh with tapir and
#                                  tapir-nocond (make nocond) × MTU × both
#                                  directions: conditions compiled in and
#                                  out, none set
#   queues (only when asked for)   tapir's tap queues: benchmark-iperf3-net.sh
#                                  BENCH_QUEUE_DRIVERS × MTU × both
#                                  directions × iperf3 -P BENCH_QUEUE_STREAMS,
#                                  and benchmark-http.sh through a forward at
#                                  BENCH_QUEUE_CONCURRENCY, per driver
#
# in BENCH_ROUNDS rounds. A round runs every driver of a cell back to back,
# in an order that rotates by one from round to round, then the next cell;
# every net cell of a round also measures iperf3 over the sandbox host's
# own loopback (driver "loopback"), and each of its lines carries that
# figure (loopback_gbps) and its share of it (loopback_share). The report
# shows each figure as "median [min–max]" over the rounds, and each ratio
# between drivers as the median and range of the per-round ratios
# (benchmark/report.jq).
#
# Writes into BENCH_RESULTS (default benchmark/results/, git-ignored):
#   <UTC stamp>/results.jsonl   every verified JSON line, with "round", plus
#                               one {"error":...} line per failed or refused
#                               cell and round
#   <UTC stamp>/<cell>-r<N>.out/.err  each script's stdout (proof lines)
#                               and stderr, per round
#   <UTC stamp>/table.md        the report, also printed
#   latest -> <UTC stamp>, iperf3.png (the chart of the net cells, with
#                               min–max error bars)
# and replaces the generated section of docs/benchmarks.md.
#
# Environment: BENCH_TIME (seconds per iperf3 cell, default 30; HTTP levels
# and rr modes take at most 10), BENCH_ROUNDS (default 3; 1 for a quick
# look), BENCH_SUITES (default "net http port rr connections"), BENCH_DRIVERS (net/rr,
# default "tapir tapir-sandbox tapir-6.1 tapir-pasta slirp4netns pasta veth"; tapir
# and slirp4netns run as rootlesskit runs them by default, unsandboxed,
# tapir-sandbox with --enable-sandbox --enable-seccomp (the cost of
# isolation), tapir-6.1 on the path of Linux 6.1, which has no TCP
# SO_PEEK_OFF; see benchmark/lib.sh),
# BENCH_FWD_DRIVERS (http/port, default "tapir
# slirp4netns builtin pasta", plus veth for http), BENCH_MTUS (default
# "1500 65520"), BENCH_DOC (default docs/benchmarks.md; empty: leave it
# alone), BENCH_RESULTS, and those of benchmark/lib.sh (TAPIR_BIN, ...).
# The queues suite (BENCH_SUITES=queues; not in the default) has its own:
# BENCH_QUEUE_DRIVERS (default "tapir-q1 tapir-q2": tapir with TAPIR_QUEUES
# 1 and 2; the first is the baseline of the "vs" column),
# BENCH_QUEUE_STREAMS (iperf3 -P, default "1 2 4 8") and
# BENCH_QUEUE_CONCURRENCY (HTTP, default "1 8 16 32 128"; empty: no HTTP
# cells); BENCH_QUEUE_THREADS=1 makes the proof require a thread per
# queue (benchmark/lib.sh). Its lines carry "suite": "queues", and its
# tables replace their own generated section of BENCH_DOC. So do the
# overlay suite's ("suite": "overlay"), with BENCH_OVERLAY_DRIVERS
# (default "tapir slirp4netns pasta") and BENCH_OVERLAY_LINKS (the hosts'
# link MTUs, default "tap 1500": "tap" is the tap's MTU). So do the
# conditions suite's ("suite": "conditions"), with BENCH_COND_DRIVERS
# (default "tapir") and BENCH_COND_TIME (seconds per iperf3 there,
# default BENCH_TIME, at most 10). So do the connections suite's
# ("suite": "connections"), with BENCH_CONN_DRIVERS (default tapir,
# slirp4netns and every pasta the machine has: pasta on PATH and
# pasta-trixie, /var/cache/tapir/trixie's), BENCH_CONN_SIZES (default
# "1000 5000 15000"), BENCH_CONN_UDP (default 10000; empty: no UDP cell),
# BENCH_CONN_TIME (seconds a cell may spend opening, default 120) and
# BENCH_CONN_RTT_TIME (on its round trips, default 30); the nofile
# ceiling is the hard limit this run has (benchmark-connections.sh).
# Needs root.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bench="$root/benchmark"
results=${BENCH_RESULTS:-$bench/results}
: "${BENCH_DRIVERS:=tapir tapir-sandbox tapir-6.1 tapir-pasta slirp4netns pasta veth}"
: "${BENCH_FWD_DRIVERS:=tapir slirp4netns builtin pasta}"
: "${BENCH_MTUS:=1500 65520}"
: "${BENCH_QUEUE_DRIVERS:=tapir-q1 tapir-q2}"
: "${BENCH_OVERLAY_DRIVERS:=tapir slirp4netns pasta}"
: "${BENCH_OVERLAY_LINKS:=tap 1500}"
: "${BENCH_COND_DRIVERS:=tapir}"
: "${BENCH_QUEUE_STREAMS:=1 2 4 8}"
BENCH_QUEUE_CONCURRENCY=${BENCH_QUEUE_CONCURRENCY-1 8 16 32 128}
# What the docs say produced the numbers: the command, after the knobs
# this run was given (before the defaults below fill in the rest).
if [[ -z "${BENCH_COMMAND:-}" ]]; then
	BENCH_COMMAND=benchmark/run-matrix.sh
	[[ -n "${MAKELEVEL:-}" ]] && BENCH_COMMAND="make bench"
	for v in $(compgen -e | grep -E '^BENCH_' | sort -r); do
		case $v in
		BENCH_DOC | BENCH_RESULTS | BENCH_ROUND) continue ;;
		esac
		if [[ "${!v}" =~ ^[A-Za-z0-9_./:,=+-]*$ ]]; then
			BENCH_COMMAND="$v=${!v} $BENCH_COMMAND"
		else
			BENCH_COMMAND="$v=\"${!v}\" $BENCH_COMMAND"
		fi
	done
fi
: "${BENCH_TIME:=30}"
: "${BENCH_ROUNDS:=3}"
: "${BENCH_SUITES:=net http port rr connections}"
: "${BENCH_CONN_SIZES:=1000 5000 15000}"
BENCH_CONN_UDP=${BENCH_CONN_UDP-10000}
: "${BENCH_CONN_TIME:=120}" "${BENCH_CONN_RTT_TIME:=30}"
BENCH_DOC=${BENCH_DOC-$root/docs/benchmarks.md}
export BENCH_TIME BENCH_CONN_TIME BENCH_CONN_RTT_TIME

log() {
	echo "run-matrix: $*" >&2
}

die() {
	log "error: $*"
	exit 1
}

# rotate WORDS...: prints WORDS, one a line, rotated left by round - 1.
rotate() {
	local -a w=("$@")
	local n=${#w[@]} i
	for ((i = 0; i < n; i++)); do
		echo "${w[(i + round - 1) % n]}"
	done
}

# run_cell NAME META_JSON SCRIPT ARGS...: run one benchmark in this round;
# append its verified JSON lines, or one error line carrying META_JSON, to
# the lines of the cell being run ($out/cell.jsonl).
run_cell() {
	local name="$1-r$round" meta=$2 script=$3 rc=0 limit
	shift 3
	limit=${CELL_LIMIT:-$((BENCH_TIME * 4 + 300))}
	log "round $round/$BENCH_ROUNDS, $name: $script $*"
	BENCH_ROUND=$round timeout -k 10 "$limit" "$bench/$script" "$@" \
		>"$out/$name.out" 2>"$out/$name.err" || rc=$?
	if ((rc == 0)) && grep -q '"verified":true' "$out/$name.out"; then
		grep '^{' "$out/$name.out" | jq -c 'select(.verified == true)' \
			>>"$out/cell.jsonl"
		tail -n1 "$out/$name.out" | jq -r '"run-matrix: \(.driver): " +
			(if .gbps then "\(.gbps) Gbit/s\(if .stalled then " (stalled)" else "" end)"
			 elif .bench == "connections" then (if .proto == "tcp"
				then "\(.opened) of \(.connections) connections opened, \(.opens_per_s) opens/s"
				else "\(.answered) of \(.connections) UDP flows answered" end)
			 elif .rps then "\(.rps) requests/s"
			 else "\(.tps) transactions/s" end)' >&2
		return 0
	fi
	local why=failed
	((rc == 3)) && why=refused
	((rc == 124 || rc == 137)) && why="timed out"
	log "$name: $why (status $rc); last lines of $out/$name.err:"
	tail -n5 "$out/$name.err" >&2 || true
	jq -cn --argjson m "$meta" --arg why "$why" --argjson rc "$rc" \
		--argjson round "$round" \
		--arg detail "$(grep -E 'REFUSED|error:' "$out/$name.err" | head -n1)" \
		'$m + {round: $round, error: $why, status: $rc, detail: $detail}' \
		>>"$out/cell.jsonl"
}

# finish_cell [SUITE]: the cell's lines of this round go to
# results.jsonl; in a net cell each line gets the round's loopback figure
# and its share of it. SUITE, when given, is recorded as "suite" in every
# line, so that its cells stay out of the main tables.
finish_cell() {
	local lo
	touch "$out/cell.jsonl"
	lo=$(jq -s '[.[] | select(.driver == "loopback" and .verified == true)
		| .gbps][0]' "$out/cell.jsonl")
	jq -c --argjson lo "$lo" --arg suite "${1:-}" 'if .bench == "iperf3-net" then
		. + {loopback_gbps: $lo, loopback_share: (if $lo != null and
			.gbps != null then .gbps / $lo * 1000 | round / 1000
			else null end)} else . end
		| if $suite == "" then . else . + {suite: $suite} end' \
		"$out/cell.jsonl" >>"$out/results.jsonl"
	rm -f "$out/cell.jsonl"
}

meta() { # NAME=VALUE...: the JSON object of an error line (numbers stay numbers)
	local kv
	local -a args=()
	for kv in "$@"; do
		args+=(--arg "${kv%%=*}" "${kv#*=}")
	done
	# Not map_values(tonumber? // .): jq 1.6 drops the numeric ones then.
	jq -cn "${args[@]}" 'reduce ($ARGS.named | to_entries[]) as $e ({};
		.[$e.key] = ($e.value | if test("^[0-9]+$") then tonumber else . end))'
}

run_net() {
	local d m r dir
	local -a drivers=(loopback)
	for d in $BENCH_DRIVERS; do
		[[ "$d" == loopback ]] || drivers+=("$d")
	done
	for m in $BENCH_MTUS; do
		for r in "" --reverse; do
			dir=ns-host
			[[ -n "$r" ]] && dir=host-ns
			for d in $(rotate "${drivers[@]}"); do
				run_cell "net-$d-$m-$dir" \
					"$(meta bench=iperf3-net driver="$d" mtu="$m" direction="$dir")" \
					benchmark-iperf3-net.sh "$d" "$m" $r
			done
			finish_cell
		done
	done
}

run_http() {
	local d
	# shellcheck disable=SC2086 # word lists
	for d in $(rotate $BENCH_FWD_DRIVERS veth); do
		run_cell "http-$d" "$(meta bench=http driver="$d")" \
			benchmark-http.sh "$d"
	done
	finish_cell
}

run_port() {
	local d
	# shellcheck disable=SC2086 # word lists
	for d in $(rotate $BENCH_FWD_DRIVERS); do
		run_cell "port-$d" \
			"$(meta bench=iperf3-port driver="$d" mtu=65520 direction=host-ns)" \
			benchmark-iperf3-port.sh "$d"
	done
	finish_cell
}

run_rr() {
	local d
	# shellcheck disable=SC2086 # word lists
	for d in $(rotate ${BENCH_DRIVERS//loopback/}); do
		run_cell "rr-$d" "$(meta bench=rr driver="$d")" benchmark-rr.sh "$d"
	done
	finish_cell
}

# conn_drivers: the connections suite's drivers: BENCH_CONN_DRIVERS, or
# tapir, slirp4netns and every pasta this machine has.
conn_drivers() {
	local trixie=${PASTA_TRIXIE_BIN:-/var/cache/tapir/trixie/passt/pasta}
	if [[ -n "${BENCH_CONN_DRIVERS:-}" ]]; then
		echo "$BENCH_CONN_DRIVERS"
		return
	fi
	echo tapir slirp4netns \
		"$([[ -n "${PASTA_BIN:-}" ]] || command -v pasta >/dev/null && echo pasta)" \
		"$([[ -x "$trixie" ]] && echo pasta-trixie)"
}

# run_connections: every driver at each TCP size, then at the UDP flows,
# one cell per size, each in its own sandbox, bounded by the suite's own
# time limits rather than BENCH_TIME.
run_connections() {
	local d n proto sizes
	local -a drivers
	read -r -a drivers <<<"$(conn_drivers)"
	for proto in tcp udp; do
		sizes=$BENCH_CONN_SIZES
		[[ "$proto" == udp ]] && sizes=$BENCH_CONN_UDP
		for n in $sizes; do
			for d in $(rotate "${drivers[@]}"); do
				CELL_LIMIT=$((BENCH_CONN_TIME + BENCH_CONN_RTT_TIME + 300)) \
					run_cell "connections-$d-$proto-$n" \
					"$(meta bench=connections driver="$d" proto="$proto" connections="$n" mtu=65520)" \
					benchmark-connections.sh "$d" "$proto" "$n"
			done
			finish_cell connections
		done
	done
}

# run_overlay: pod to pod across two simulated hosts over VXLAN, one cell
# per tap MTU, link MTU and direction (BENCH_OVERLAY_LINKS: "tap" is the
# tap's own MTU, so nothing fragments; 1500 is an Ethernet NIC's, where
# a larger tap MTU makes the hosts fragment every datagram).
run_overlay() {
	local d m l r dir links
	for m in $BENCH_MTUS; do
		links=$(for l in $BENCH_OVERLAY_LINKS; do
			[[ "$l" == tap ]] && l=$m
			echo "$l"
		done | sort -rnu)
		for l in $links; do
			for r in "" --reverse; do
				dir=a-b
				[[ -n "$r" ]] && dir=b-a
				# shellcheck disable=SC2086 # word lists
				for d in $(rotate $BENCH_OVERLAY_DRIVERS); do
					BENCH_LINK_MTU=$l run_cell "overlay-$d-$m-link$l-$dir" \
						"$(meta bench=overlay driver="$d" mtu="$m" link_mtu="$l" direction="$dir")" \
						benchmark-overlay.sh "$d" "$m" $r
				done
				finish_cell overlay
			done
		done
	done
}

# run_conditions: each condition's target against the measured value,
# per driver of BENCH_COND_DRIVERS; then tapir with the conditions
# compiled in and out, none set, one cell per MTU and direction.
run_conditions() {
	local d m r dir
	# shellcheck disable=SC2086 # word lists
	for d in $(rotate $BENCH_COND_DRIVERS); do
		run_cell "conditions-$d" "$(meta bench=conditions driver="$d")" \
			benchmark-conditions.sh "$d"
	done
	finish_cell conditions
	for m in $BENCH_MTUS; do
		for r in "" --reverse; do
			dir=ns-host
			[[ -n "$r" ]] && dir=host-ns
			for d in $(rotate tapir tapir-nocond); do
				run_cell "conditions-net-$d-$m-$dir" \
					"$(meta bench=iperf3-net driver="$d" mtu="$m" direction="$dir")" \
					benchmark-iperf3-net.sh "$d" "$m" $r
			done
			finish_cell conditions
		done
	done
}

# run_queues: tapir's tap queues, BENCH_QUEUE_DRIVERS side by side: one
# cell per MTU, direction and iperf3 -P (no loopback baseline: the ratio
# that matters is between the drivers), then HTTP through a forward.
run_queues() {
	local d m r dir p
	for m in $BENCH_MTUS; do
		for r in "" --reverse; do
			dir=ns-host
			[[ -n "$r" ]] && dir=host-ns
			for p in $BENCH_QUEUE_STREAMS; do
				# shellcheck disable=SC2086 # word lists
				for d in $(rotate $BENCH_QUEUE_DRIVERS); do
					run_cell "queues-net-$d-$m-$dir-P$p" \
						"$(meta bench=iperf3-net driver="$d" mtu="$m" direction="$dir" streams="$p")" \
						benchmark-iperf3-net.sh "$d" "$m" $r --parallel "$p"
				done
				finish_cell queues
			done
		done
	done
	[[ -n "$BENCH_QUEUE_CONCURRENCY" ]] || return 0
	# shellcheck disable=SC2086 # word lists
	for d in $(rotate $BENCH_QUEUE_DRIVERS); do
		run_cell "queues-http-$d" "$(meta bench=http driver="$d")" \
			benchmark-http.sh "$d" --concurrency "$BENCH_QUEUE_CONCURRENCY"
	done
	finish_cell queues
}

# ---- report -------------------------------------------------------------

report_jq() { # WHAT FILE: one part of the report (benchmark/report.jq)
	jq -rs --arg what "$1" -f "$bench/report.jq" "$2"
}

# plot DIR: $results/iperf3.png from the net cells: medians, min–max bars.
plot() {
	local dir=$1 data="$1/iperf3.dat" ncols
	report_jq plot "$dir/results.jsonl" >"$data"
	[[ -s "$data" ]] || return 0
	ncols=$(head -n1 "$data" | wc -w)
	gnuplot -e "datafile='$data'; outfile='$dir/iperf3.png'; ndrivers=$(((ncols - 1) / 3)); subtitle='$(date -u -r "$dir/results.jsonl" +%Y-%m-%d), iperf3 -t $BENCH_TIME, median and min–max of $BENCH_ROUNDS rounds, $(nproc) CPUs, Linux $(uname -r)'" \
		"$bench/plot.gp" || log "gnuplot failed; no chart"
	[[ -f "$dir/iperf3.png" ]] && cp "$dir/iperf3.png" "$results/iperf3.png"
	return 0
}

# update_doc TABLE_FILE [NAME]: replace the generated section of
# docs/benchmarks.md, or the one named NAME (its markers say
# "GENERATED NAME by" and "END GENERATED NAME").
update_doc() {
	local table=$1 name=${2:+ $2}
	local begin="<!-- BEGIN GENERATED$name by benchmark/run-matrix.sh -->"
	local end="<!-- END GENERATED$name -->" section
	[[ -n "$BENCH_DOC" && -f "$BENCH_DOC" ]] || return 0
	if ! grep -qF "$begin" "$BENCH_DOC" || ! grep -qF "$end" "$BENCH_DOC"; then
		log "$BENCH_DOC has no generated-section markers; not updated"
		return 0
	fi
	section=$(mktemp)
	{
		echo "$begin"
		cat "$table"
		echo "$end"
	} >"$section"
	awk -v b="$begin" -v e="$end" -v f="$section" '
		$0 == b { while ((getline l < f) > 0) print l; skip = 1; next }
		$0 == e { skip = 0; next }
		!skip' "$BENCH_DOC" >"$BENCH_DOC.new"
	mv "$BENCH_DOC.new" "$BENCH_DOC"
	rm -f "$section"
	log "updated $BENCH_DOC"
}

# report_header JSONL: the lines that say where the numbers come from.
report_header() {
	local jsonl=$1
	echo "Generated by \`$BENCH_COMMAND\` (BENCH_TIME=$BENCH_TIME, BENCH_ROUNDS=$BENCH_ROUNDS) on $(date -u -r "$jsonl" '+%Y-%m-%d %H:%M UTC'),"
	echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(. /etc/os-release && echo "$PRETTY_NAME")."
	echo "Every number passed the identity proof (benchmark/lib.sh) in every round; raw JSON: \`${jsonl#"$root"/}\`."
	echo "Each figure is \`median [min–max]\` over the rounds; ratios are taken within each round, then their median and range."
	echo
}

# report DIR: table.md from DIR/results.jsonl, printed; the chart; the
# doc's generated sections, each only when this run has lines for it
# (the main one, "queues" for the queues suite's, "overlay" for the
# overlay suite's, "conditions" for the conditions suite's,
# "connections" for the connections suite's).
report() {
	local dir=$1 table="$1/table.md" jsonl="$1/results.jsonl" part what
	local -a parts=(main queues overlay conditions connections)
	[[ -s "$jsonl" ]] || {
		log "no results in $dir"
		return 1
	}
	# shellcheck source=/dev/null
	[[ -f "$dir/meta.env" ]] && source "$dir/meta.env"
	jq -c 'select(.suite != "queues" and .suite != "overlay" and
		.suite != "conditions" and .suite != "connections")' "$jsonl" >"$dir/main.jsonl"
	for part in queues overlay conditions connections; do
		jq -c --arg p "$part" 'select(.suite == $p)' "$jsonl" >"$dir/$part.jsonl"
	done
	for part in "${parts[@]}"; do
		: >"$dir/$part.md"
		[[ -s "$dir/$part.jsonl" ]] || continue
		what=tables
		[[ "$part" == queues || "$part" == conditions ||
			"$part" == connections ]] && what=$part
		{
			report_header "$jsonl"
			report_jq context "$dir/$part.jsonl"
			echo
			report_jq "$what" "$dir/$part.jsonl"
			report_jq stalls "$dir/$part.jsonl"
		} >"$dir/$part.md"
	done
	(cd "$dir" && cat main.md queues.md overlay.md conditions.md connections.md) >"$table"
	cat "$table"
	plot "$dir"
	for part in "${parts[@]}"; do
		[[ -s "$dir/$part.md" ]] || continue
		update_doc "$dir/$part.md" "${part/main/}"
	done
	(cd "$dir" && rm -f main.jsonl queues.jsonl overlay.jsonl conditions.jsonl \
		connections.jsonl)
}

if [[ "${1:-}" == --report ]]; then
	(($# == 2)) || {
		echo "usage: $0 [--report RESULTS_DIR]" >&2
		exit 2
	}
	report "$(cd "$2" && pwd -P)"
	exit
fi
(($# == 0)) || {
	echo "usage: $0 [--report RESULTS_DIR]" >&2
	exit 2
}
((EUID == 0)) || die "must run as root (the benchmarks build sandboxes)"
if ! [[ "$BENCH_ROUNDS" =~ ^[0-9]+$ ]] || ((BENCH_ROUNDS < 1 || BENCH_ROUNDS > 100)); then
	die "BENCH_ROUNDS must be a whole number in 1..100, not '$BENCH_ROUNDS'"
fi
for suite in $BENCH_SUITES; do
	case $suite in
	net | http | port | rr | queues | overlay | conditions | connections) ;;
	*) die "unknown suite '$suite' (net, http, port, rr, queues, overlay, conditions, connections)" ;;
	esac
done
"$root/hack/install-deps.sh"

out="$results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
: >"$out/results.jsonl"
# What --report needs to describe this run later.
printf 'BENCH_TIME=%q\nBENCH_ROUNDS=%q\nBENCH_COMMAND=%q\n' "$BENCH_TIME" \
	"$BENCH_ROUNDS" "$BENCH_COMMAND" >"$out/meta.env"
log "results in $out (BENCH_TIME=$BENCH_TIME, BENCH_ROUNDS=$BENCH_ROUNDS; suites: $BENCH_SUITES)"
for ((round = 1; round <= BENCH_ROUNDS; round++)); do
	for suite in $BENCH_SUITES; do
		"run_$suite"
	done
done
ln -sfn "$(basename "$out")" "$results/latest"
report "$out"
