#!/usr/bin/env bash
# benchmark/run-matrix.sh - the benchmark matrix behind `make bench`.
#
#   benchmark/run-matrix.sh              run everything, then report
#   benchmark/run-matrix.sh --report DIR report on an earlier run's results
#
# Runs, each cell in its own sandbox (the scripts re-enter hack/sandbox.sh):
#   net   benchmark-iperf3-net.sh  DRIVER × MTU {1500, 65520} × both directions
#   http  benchmark-http.sh        concurrency 1, 8, 16, 32, 128
#   port  benchmark-iperf3-port.sh host → namespace, MTU 65520
#   rr    benchmark-rr.sh          rr and crr, MTU 65520
# and writes into benchmark/results/ (git-ignored):
#   <UTC stamp>/results.jsonl   every verified JSON line, plus one
#                               {"error":...} line per failed or refused cell
#   <UTC stamp>/<cell>.out/.err each script's stdout (proof lines) and stderr
#   <UTC stamp>/table.md        the markdown tables, also printed
#   latest -> <UTC stamp>, iperf3.png (the chart of the net cells)
# and replaces the generated section of docs/benchmarks.md.
#
# Environment: BENCH_TIME (seconds per iperf3 cell, default 30; HTTP levels
# and rr modes take at most 10), BENCH_SUITES (default "net http port rr"),
# BENCH_DRIVERS (net/rr, default "tapir slirp4netns pasta veth"),
# BENCH_FWD_DRIVERS (http/port, default "tapir slirp4netns builtin pasta",
# plus veth for http), BENCH_MTUS (default "1500 65520"), BENCH_DOC
# (default docs/benchmarks.md; empty: leave it alone), and those of
# benchmark/lib.sh (TAPIR_BIN, ...). Needs root.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bench="$root/benchmark"
results="$bench/results"
: "${BENCH_TIME:=30}"
: "${BENCH_SUITES:=net http port rr}"
: "${BENCH_DRIVERS:=tapir slirp4netns pasta veth}"
: "${BENCH_FWD_DRIVERS:=tapir slirp4netns builtin pasta}"
: "${BENCH_MTUS:=1500 65520}"
BENCH_DOC=${BENCH_DOC-$root/docs/benchmarks.md}
# What the docs say produced the numbers.
if [[ -z "${BENCH_COMMAND:-}" ]]; then
	BENCH_COMMAND=benchmark/run-matrix.sh
	[[ -n "${MAKELEVEL:-}" ]] && BENCH_COMMAND="make bench"
fi
export BENCH_TIME

log() {
	echo "run-matrix: $*" >&2
}

# run_cell NAME META_JSON SCRIPT ARGS...: run one benchmark; append its
# verified JSON lines, or one error line carrying META_JSON, to the results.
run_cell() {
	local name=$1 meta=$2 script=$3 rc=0 limit
	shift 3
	limit=$((BENCH_TIME * 4 + 300))
	log "$name: $script $*"
	timeout -k 10 "$limit" "$bench/$script" "$@" >"$out/$name.out" \
		2>"$out/$name.err" || rc=$?
	if ((rc == 0)) && grep -q '"verified":true' "$out/$name.out"; then
		grep '^{' "$out/$name.out" | jq -c 'select(.verified == true)' \
			>>"$out/results.jsonl"
		tail -n1 "$out/$name.out" | jq -r '"run-matrix: \(.driver): " +
			(if .gbps then "\(.gbps) Gbit/s"
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
		--arg detail "$(grep -E 'REFUSED|error:' "$out/$name.err" | head -n1)" \
		'$m + {error: $why, status: $rc, detail: $detail}' >>"$out/results.jsonl"
}

run_net() {
	local d m r dir
	for d in $BENCH_DRIVERS; do
		for m in $BENCH_MTUS; do
			for r in "" --reverse; do
				dir=ns-host
				[[ -n "$r" ]] && dir=host-ns
				run_cell "net-$d-$m-$dir" \
					"{\"bench\":\"iperf3-net\",\"driver\":\"$d\",\"mtu\":$m,\"direction\":\"$dir\"}" \
					benchmark-iperf3-net.sh "$d" "$m" $r
			done
		done
	done
}

run_http() {
	local d
	for d in $BENCH_FWD_DRIVERS veth; do
		run_cell "http-$d" "{\"bench\":\"http\",\"driver\":\"$d\"}" \
			benchmark-http.sh "$d"
	done
}

run_port() {
	local d
	for d in $BENCH_FWD_DRIVERS; do
		run_cell "port-$d" \
			"{\"bench\":\"iperf3-port\",\"driver\":\"$d\",\"mtu\":65520,\"direction\":\"host-ns\"}" \
			benchmark-iperf3-port.sh "$d"
	done
}

run_rr() {
	local d
	for d in $BENCH_DRIVERS; do
		run_cell "rr-$d" "{\"bench\":\"rr\",\"driver\":\"$d\"}" \
			benchmark-rr.sh "$d"
	done
}

# ---- report -------------------------------------------------------------

# tables FILE: the markdown tables of one results.jsonl. Ratios are to
# tapir's number in the same cell; failed or refused cells say so instead
# of a number.
tables() {
	jq -rs -f /dev/stdin "$1" <<'EOF'
def fixed2: (. * 100 | round) as $n
	| "\($n / 100 | floor).\($n % 100 | tostring | if length == 1 then "0" + . else . end)";
def num: if . == null then "–" elif type != "number" then tostring
	elif . == floor then tostring elif . >= 100 then (round | tostring)
	else fixed2 end;
def dirname: if . == "ns-host" then "ns → host" elif . == "host-ns" then "host → ns" else "–" end;
def drank: . as $d | (["tapir", "slirp4netns", "pasta", "builtin", "veth"] | index($d)) // 9;
def order: [.mtu // 0, (.direction == "host-ns"), .concurrency // 0, (.mode == "crr"), (.driver | drank)];
def cell($c; $x; $t; metric):
	if $c == "ratio" then
		(if $x.error or $t == null then "–"
		 else (($x | metric) / ($t | metric) | fixed2) + "×" end)
	elif $c == "direction" then ($x.direction | dirname)
	elif $x.error and ($c == "gbps" or $c == "rps" or $c == "tps") then "**\($x.error)**"
	elif $c == "gbps" then ($x.gbps | fixed2) +
		(if $x.aborted then " (connection lost after \($x.seconds | round) s)" else "" end)
	elif $c == "rps" or $c == "tps" then ($x[$c] | round | tostring)
	else ($x[$c] | num) end;
def table($title; $bench; $match; $head; $cols; metric):
	[.[] | select(.bench == $bench)] as $rows
	| if ($rows | length) == 0 then empty else
	  "### \($title)", "",
	  "| \($head | join(" | ")) |",
	  "|\($head | map("---") | join("|"))|",
	  ($rows | sort_by(order) | .[] as $x
	   | ([$rows[] | select(.driver == "tapir" and .error == null and
		([$match[] as $k | .[$k]] == [$match[] as $k | $x[$k]]))] | first) as $t
	   | "| " + ([$cols[] as $c | cell($c; $x; $t; metric)] | join(" | ")) + " |"),
	  "" end;
table("iperf3, namespace ↔ host (Gbit/s)"; "iperf3-net"; ["mtu", "direction"];
	["MTU", "direction", "driver", "Gbit/s", "vs tapir", "retransmits", "driver CPU s/GB"];
	["mtu", "direction", "driver", "gbps", "ratio", "retransmits", "driver_cpu_s_per_gb"]; .gbps),
table("iperf3 through a port forward (Gbit/s)"; "iperf3-port"; ["mtu", "direction"];
	["MTU", "direction", "forwarder", "Gbit/s", "vs tapir", "retransmits", "forwarder CPU s/GB", "path"];
	["mtu", "direction", "driver", "gbps", "ratio", "retransmits", "driver_cpu_s_per_gb", "path"]; .gbps),
table("HTTP through a port forward (nginx, 1 KiB page, wrk)"; "http"; ["concurrency"];
	["concurrency", "forwarder", "requests/s", "vs tapir", "failed", "p99 ms", "forwarder CPU µs/request", "path"];
	["concurrency", "driver", "rps", "ratio", "failed", "p99_ms", "driver_cpu_us_per_req", "path"]; .rps),
table("TCP request/response, namespace → host (1 byte each way)"; "rr"; ["mode"];
	["mode", "driver", "transactions/s", "vs tapir", "p50 µs", "p99 µs", "driver CPU µs/transaction"];
	["mode", "driver", "tps", "ratio", "p50_us", "p99_us", "driver_cpu_us_per_transaction"]; .tps)
EOF
}

# versions FILE: one line per driver binary that produced numbers.
versions() {
	jq -rs '[.[] | select(.verified) | {driver, version, binary, launcher}]
		| unique_by(.driver) | .[]
		| "- **\(.driver)**: \(.version)\(if .binary then " (`\(.binary)`)" else "" end); \(.launcher
			| gsub("--mtu[= ][0-9]+"; "--mtu=M") | gsub("mtu [0-9]+ type"; "mtu M type"))"' "$1"
}

# plot DIR: benchmark/results/iperf3.png from the net cells.
plot() {
	local dir=$1 data="$1/iperf3.dat" drivers
	drivers=$(jq -rs '[.[] | select(.bench == "iperf3-net") | .driver] |
		unique | sort_by(. as $d | ["tapir", "slirp4netns", "pasta",
			"builtin", "veth"] | index($d) // 9) | join(" ")' \
		"$dir/results.jsonl")
	[[ -n "$drivers" ]] || return 0
	jq -rs --arg drivers "$drivers" '
		($drivers | split(" ")) as $d
		| [.[] | select(.bench == "iperf3-net")] as $rows
		| ("cell " + ($d | join(" "))),
		  ($rows | map({mtu, direction}) | unique | sort_by(.mtu, (.direction != "ns-host")) | .[] as $c
		   | "\"MTU \($c.mtu), \(if $c.direction == "ns-host" then "ns→host" else "host→ns" end)\" " +
		     ([$d[] as $drv | ($rows | map(select(.driver == $drv and .mtu == $c.mtu and
			.direction == $c.direction and .verified))[0].gbps // "-") | tostring] | join(" ")))' \
		"$dir/results.jsonl" >"$data"
	gnuplot -e "datafile='$data'; outfile='$dir/iperf3.png'; ncols=$(($(wc -w <<<"$drivers") + 1)); subtitle='$(date -u -r "$dir/results.jsonl" +%Y-%m-%d), iperf3 -t $BENCH_TIME, $(nproc) CPUs, Linux $(uname -r)'" \
		"$bench/plot.gp" || log "gnuplot failed; no chart"
	[[ -f "$dir/iperf3.png" ]] && cp "$dir/iperf3.png" "$results/iperf3.png"
}

# update_doc TABLE_FILE: replace the generated section of docs/benchmarks.md.
update_doc() {
	local table=$1 begin='<!-- BEGIN GENERATED by benchmark/run-matrix.sh -->'
	local end='<!-- END GENERATED -->' section
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

report() {
	local dir=$1 table="$1/table.md"
	[[ -s "$dir/results.jsonl" ]] || {
		log "no results in $dir"
		return 1
	}
	# shellcheck source=/dev/null
	[[ -f "$dir/meta.env" ]] && source "$dir/meta.env"
	{
		echo "Generated by \`$BENCH_COMMAND\` (BENCH_TIME=$BENCH_TIME) on $(date -u -r "$dir/results.jsonl" '+%Y-%m-%d %H:%M UTC'):"
		echo "$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), Linux $(uname -r), $(. /etc/os-release && echo "$PRETTY_NAME")."
		echo "Every number passed the identity proof (benchmark/lib.sh); raw JSON: \`benchmark/results/$(basename "$dir")/results.jsonl\`."
		echo
		versions "$dir/results.jsonl"
		echo
		tables "$dir/results.jsonl"
	} >"$table"
	cat "$table"
	plot "$dir"
	update_doc "$table"
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
((EUID == 0)) || {
	echo "run-matrix: must run as root (the benchmarks build sandboxes)" >&2
	exit 1
}
"$root/hack/install-deps.sh"

out="$results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
: >"$out/results.jsonl"
# What --report needs to describe this run later.
printf 'BENCH_TIME=%q\nBENCH_COMMAND=%q\n' "$BENCH_TIME" \
	"${BENCH_COMMAND:-benchmark/run-matrix.sh}" >"$out/meta.env"
log "results in $out (BENCH_TIME=$BENCH_TIME; suites: $BENCH_SUITES)"
for suite in $BENCH_SUITES; do
	case $suite in
	net | http | port | rr) "run_$suite" ;;
	*) log "unknown suite '$suite' (net, http, port, rr)" ;;
	esac
done
ln -sfn "$(basename "$out")" "$results/latest"
report "$out"
