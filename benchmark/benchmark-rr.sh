#!/usr/bin/env bash
# benchmark/benchmark-rr.sh - TCP request/response latency from a namespace
# to the host through one driver.
#
#   benchmark/benchmark-rr.sh DRIVER [--mtu M] [--modes "rr crr"]
#
# DRIVER as for benchmark-iperf3-net.sh (tapir, tapir-X.Y, slirp4netns,
# pasta, veth).
# The rr tool (benchmark/rr.c) serves on the host's 127.0.0.1:5300; its
# client in the namespace connects to 10.0.2.2 and runs 1-byte
# transactions for BENCH_RR_TIME seconds (default: BENCH_TIME, at most
# 10): "rr" on one connection (a round trip through the driver), "crr"
# with a new connection each (handshake and flow set-up as well, at most
# 20000 of them).
#
# Output: the proof lines, then one JSON line per mode with p50/p99 in µs
# and transactions/s; the last line is the last mode.
set -euo pipefail

# shellcheck source=benchmark/lib.sh
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

usage() {
	echo "usage: $0 tapir|tapir-X.Y|slirp4netns|pasta|veth [--mtu M] [--modes \"rr crr\"]" >&2
	exit 2
}

bench_parse_args "--mtu --modes" "$@" || usage
((${#BENCH_ARGS[@]} == 1)) || usage
driver=${BENCH_ARGS[0]}
bench_check_driver "$driver" tapir slirp4netns pasta veth
for m in $OPT_MODES; do
	bench_check_choice mode "$m" rr crr
done
bench_enter "$0" "$@"

rr_time=${BENCH_RR_TIME:-$((BENCH_TIME < 10 ? BENCH_TIME : 10))}
port=5300 size=1

bench_resolve "$driver"
bench_start "$driver" "$OPT_MTU"
# crr opens thousands of connections; each leaves a TIME_WAIT socket on
# the side that closes first, so give both sides room.
for ns in host namespace; do
	run=()
	[[ "$ns" == namespace ]] && run=(bench_in_ns_root)
	"${run[@]}" sysctl -qw net.ipv4.ip_local_port_range="1024 65000" \
		net.ipv4.tcp_tw_reuse=1
done

bg_start_user rr-server "$BENCH_RR" server -b "$BENCH_SRV_BIND" -p "$port" -s "$size"
wait_for 5 bench_listening "$port" || bench_die "the rr server did not start"

bench_prove_driver_pid
bench_snapshot before
results=() payload=0
for m in $OPT_MODES; do
	max=10000000
	[[ "$m" == crr ]] && max=20000
	bench_cpu_ticks "${BENCH_CPU_PID:-}"
	t0=$BENCH_TICKS
	bench_log "rr client -m $m ($rr_time s) to $BENCH_GW:$port"
	rc=0
	bench_in_ns timeout -k 5 $((rr_time + 30)) "$BENCH_RR" client \
		-H "$BENCH_GW" -p "$port" -m "$m" -d "$rr_time" -n "$max" \
		-s "$size" >"$SCEN_DIR/rr.json" 2>"$SCEN_DIR/rr.err" || rc=$?
	((rc == 0)) || bench_die "rr -m $m failed (status $rc): $(tail -n3 "$SCEN_DIR/rr.err")"
	bench_cpu_ticks "${BENCH_CPU_PID:-}"
	cpu=null
	[[ -n "${BENCH_CPU_PID:-}" ]] && cpu=$(bench_ticks_to_s $((BENCH_TICKS - t0)))
	payload=$((payload + $(jq -r .bytes "$SCEN_DIR/rr.json")))
	results+=("$(jq -c --argjson mtu "$OPT_MTU" --argjson cpu "$cpu" '{
		bench: "rr", mtu: $mtu} + . + {driver_cpu_s: $cpu,
		driver_cpu_us_per_transaction: (if $cpu == null then null
			else ($cpu * 1e6 / .transactions * 10 | round / 10) end)}' \
		"$SCEN_DIR/rr.json")")
done
bench_snapshot after

bench_prove_path both "$payload"
for r in "${results[@]}"; do
	bench_emit "$r"
done
