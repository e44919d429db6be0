#!/usr/bin/env bash
# benchmark/benchmark-iperf3-port.sh - TCP throughput from the host into a
# namespace through a port forward, with proof of who forwarded it.
#
#   benchmark/benchmark-iperf3-port.sh DRIVER [--mtu M] [--reverse] [--parallel N]
#
# DRIVER is the forwarder:
#   tapir        tapir's forward (rootlesskit --port-driver=slirp4netns,
#                rootlessctl add-ports → tapir's API socket); tapir-X.Y
#                the same on the path of Linux X.Y (benchmark/lib.sh)
#   slirp4netns  slirp4netns's forward, the same way
#   builtin      rootlesskit's builtin port driver (Docker's default); the
#                network driver is slirp4netns, which it bypasses
#   pasta        pasta's own forward (-t), which splices host loopback
#                connections to the namespace's loopback, bypassing its tap
# iperf3 -s runs in the namespace on port 5201; the host client connects
# to 127.0.0.1:15201, forwarded there. Default direction host → namespace;
# --reverse is iperf3 -R. MTU 65520 unless --mtu. BENCH_TIME seconds.
#
# Output as benchmark-iperf3-net.sh: proof lines, then one JSON line.
set -euo pipefail

# shellcheck source=benchmark/lib.sh
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

usage() {
	echo "usage: $0 tapir|tapir-X.Y|slirp4netns|builtin|pasta [--mtu M] [--reverse] [--parallel N]" >&2
	exit 2
}

bench_parse_args "--mtu --reverse --parallel" "$@" || usage
((${#BENCH_ARGS[@]} == 1)) || usage
driver=${BENCH_ARGS[0]}
bench_check_driver "$driver" tapir slirp4netns builtin pasta
bench_enter "$0" "$@"
direction=$(bench_direction 1)

guest_port=5201 host_port=15201
bench_resolve "$driver"
bench_start "$driver" "$OPT_MTU" "pasta:$host_port:$guest_port"

bench_iperf3_server ns "" "$guest_port"
bench_forward "$host_port" "$guest_port"

bench_prove_driver_pid
bench_prove_listener
bench_snapshot before
client=(-c "$BENCH_FWD_ADDR" -p "$BENCH_FWD_PORT" -t "$BENCH_TIME"
	-P "$OPT_STREAMS")
((OPT_REVERSE)) && client+=(-R --rcv-timeout 20000)
bench_iperf3 host "${client[@]}"
bench_snapshot after

path=tap
[[ "$driver" == builtin || "$driver" == pasta ]] && path=bypass
bench_prove_path "$direction" "$IPERF_BYTES" "$path"
bench_prove_listener
bench_proof "$BENCH_LISTENER_PROOF"
bench_emit "$(bench_iperf3_fields iperf3-port "$OPT_MTU" "$direction" "$OPT_STREAMS" |
	jq -c --arg path "$path" '. + {path: $path}')"
