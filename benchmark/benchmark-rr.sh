#!/usr/bin/env bash
# benchmark/benchmark-rr.sh - TCP request/response through one driver: the
# latency, and what each transaction costs the driver.
#
#   benchmark/benchmark-rr.sh DRIVER [--mtu M] [--modes "rr crr rr-fwd"]
#                             [--sizes "100 4096"] [--connections "1 32"]
#
# DRIVER as for benchmark-iperf3-net.sh (tapir, tapir-X.Y, slirp4netns,
# pasta, veth). The rr tool (benchmark/rr.c) runs SIZE-byte transactions
# for BENCH_RR_TIME seconds each (default: BENCH_TIME, at most 10), on
# CONNECTIONS connections side by side:
#   rr      namespace → host: the client in the namespace connects to
#           10.0.2.2, the server listens on the host's 127.0.0.1 (5300 +
#           the size's index); one connection carries every transaction
#   crr     the same with a new connection for each (handshake and flow
#           set-up as well, at most 20000 of them; the first size only)
#   rr-fwd  host → namespace through the driver's port forward: the
#           server in the namespace (5400 + index), the client on the host
#           at 127.0.0.1:15400 + index (veth: straight to 10.0.2.100)
# Each line records p50/p99 in µs, transactions/s, the driver's CPU per
# transaction, its system calls per transaction (perf stat -e
# raw_syscalls:sys_enter on the driver's process, every thread: the tap
# holder, or the forward's listener for rr-fwd) and the frames per
# transaction on the namespace's interface, each way.
#
# Output: the proof lines, then one JSON line per cell; the last line is
# the last cell.
set -euo pipefail

# shellcheck source=benchmark/lib.sh
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

usage() {
	echo "usage: $0 tapir|tapir-X.Y|slirp4netns|pasta|veth [--mtu M] [--modes \"rr crr rr-fwd\"] [--sizes \"100 4096\"] [--connections \"1 32\"]" >&2
	exit 2
}

bench_parse_args "--mtu --modes --sizes --connections" "$@" || usage
((${#BENCH_ARGS[@]} == 1)) || usage
driver=${BENCH_ARGS[0]}
bench_check_driver "$driver" tapir slirp4netns pasta veth
for m in $OPT_MODES; do
	bench_check_choice mode "$m" rr crr rr-fwd
done
for z in $OPT_SIZES; do
	bench_check_int "a message size" "$z" 1 65536
done
for k in $OPT_CONNECTIONS; do
	bench_check_int "a connection count" "$k" 1 256
done
bench_enter "$0" "$@"

rr_time=${BENCH_RR_TIME:-$((BENCH_TIME < 10 ? BENCH_TIME : 10))}
read -r -a sizes <<<"$OPT_SIZES"

bench_resolve "$driver"
# pasta forwards the first size's port at start; the others' too would
# need a spec per port: one forward range.
bench_start "$driver" "$OPT_MTU" "pasta:15400-$((15400 + ${#sizes[@]} - 1)):5400-$((5400 + ${#sizes[@]} - 1))"
# crr opens thousands of connections; each leaves a TIME_WAIT socket on
# the side that closes first, so give both sides room.
for ns in host namespace; do
	run=()
	[[ "$ns" == namespace ]] && run=(bench_in_ns_root)
	"${run[@]}" sysctl -qw net.ipv4.ip_local_port_range="1024 65000" \
		net.ipv4.tcp_tw_reuse=1
done

fwd=0
[[ " $OPT_MODES " == *" rr-fwd "* ]] && fwd=1
for i in "${!sizes[@]}"; do
	bg_start_user "rr-server-$i" "$BENCH_RR" server -b "$BENCH_SRV_BIND" \
		-p $((5300 + i)) -s "${sizes[i]}"
	wait_for 5 bench_listening $((5300 + i)) || bench_die "the rr server did not start"
	((fwd)) || continue
	bench_bg_in_ns "rr-ns-server-$i" "$BENCH_RR" server -p $((5400 + i)) -s "${sizes[i]}"
	wait_for 5 bench_ns_listening $((5400 + i)) ||
		bench_die "the rr server in the namespace did not start"
	bench_forward $((15400 + i)) $((5400 + i))
	fwd_addr[i]=$BENCH_FWD_ADDR fwd_port[i]=$BENCH_FWD_PORT
done

bench_prove_driver_pid
tap_pid=${BENCH_CPU_PID:-}
((fwd)) && [[ "$driver" != veth ]] && {
	BENCH_FWD_PORT=${fwd_port[0]}
	bench_prove_listener
}
BENCH_CPU_PID=$tap_pid
bench_snapshot before
results=() payload=0
for m in $OPT_MODES; do
	for i in "${!sizes[@]}"; do
		size=${sizes[i]}
		# crr measures the handshake: at the first size only.
		[[ "$m" == crr && $i -gt 0 ]] && continue
		for k in $OPT_CONNECTIONS; do
			max=10000000
			[[ "$m" == crr ]] && max=20000
			host=$BENCH_GW port=$((5300 + i)) where=ns mode=$m
			if [[ "$m" == rr-fwd ]]; then
				host=${fwd_addr[i]} port=${fwd_port[i]} where=host mode=rr
				[[ "$driver" != veth ]] && BENCH_CPU_PID=${BENCH_LISTENER_PID:-$tap_pid}
			fi
			bench_cpu_ticks "${BENCH_CPU_PID:-}"
			t0=$BENCH_TICKS
			bench_count_start
			bench_log "rr client -m $mode -s $size -c $k ($rr_time s) to $host:$port"
			rc=0
			cmd=(timeout -k 5 $((rr_time + 30)) "$BENCH_RR" client -H "$host"
				-p "$port" -m "$mode" -d "$rr_time" -n "$max" -s "$size" -c "$k")
			if [[ "$where" == ns ]]; then
				bench_in_ns "${cmd[@]}" >"$SCEN_DIR/rr.json" 2>"$SCEN_DIR/rr.err" || rc=$?
			else
				as_user "${cmd[@]}" >"$SCEN_DIR/rr.json" 2>"$SCEN_DIR/rr.err" || rc=$?
			fi
			bench_count_stop
			((rc == 0)) || bench_die "rr -m $m -s $size -c $k failed (status $rc): $(tail -n3 "$SCEN_DIR/rr.err")"
			counts=$(bench_count_json "$(jq -r .transactions "$SCEN_DIR/rr.json")")
			bench_cpu_ticks "${BENCH_CPU_PID:-}"
			cpu=null
			[[ -n "${BENCH_CPU_PID:-}" ]] && cpu=$(bench_ticks_to_s $((BENCH_TICKS - t0)))
			# pasta splices its forwards: those bytes bypass the tap.
			[[ "$m" == rr-fwd && "$driver" == pasta ]] ||
				payload=$((payload + $(jq -r .bytes "$SCEN_DIR/rr.json")))
			results+=("$(jq -c --argjson mtu "$OPT_MTU" --argjson cpu "$cpu" \
				--arg m "$m" --argjson counts "$counts" '{
				bench: "rr", mtu: $mtu} + . + {mode: $m, driver_cpu_s: $cpu,
				driver_cpu_us_per_transaction: (if $cpu == null then null
					else ($cpu * 1e6 / .transactions * 10 | round / 10) end)}
				+ $counts' "$SCEN_DIR/rr.json")")
			BENCH_CPU_PID=$tap_pid
		done
	done
done
bench_snapshot after

bench_prove_path both "$payload"
for r in "${results[@]}"; do
	bench_emit "$r"
done
