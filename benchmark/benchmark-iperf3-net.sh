#!/usr/bin/env bash
# benchmark/benchmark-iperf3-net.sh - TCP throughput between a namespace and
# the host through one network driver, with proof of which driver it was.
#
#   benchmark/benchmark-iperf3-net.sh DRIVER MTU [--reverse] [--parallel N]
#
# DRIVER is tapir, tapir-X.Y (tapir on the path of Linux X.Y < 6.10, which
# has no TCP SO_PEEK_OFF, e.g. tapir-6.1), tapir-qN (N tap queues),
# tapir-sandbox, slirp4netns, pasta, veth (the
# rootful kernel baseline) or loopback (iperf3 on the sandbox host's own
# loopback: no namespace, the machine's ceiling; MTU is only recorded);
# see benchmark/lib.sh for how each is started. The iperf3 server listens
# on the sandbox host's 127.0.0.1 and the client in the namespace connects
# to the gateway, 10.0.2.2, which the user-mode drivers map to the host's
# loopback (veth: 10.0.2.2 is the host end of the pair). That is the path
# of rootlesskit's own benchmark, with host loopback allowed.
#
# Default direction: namespace → host (the client sends); --reverse is
# iperf3 -R, host → namespace. BENCH_TIME seconds (default 30).
#
# Output: progress on stderr; on stdout the proof lines, then, last, one
# JSON object with "verified":true. When the proof fails the status is 3
# and no number is printed; other failures exit 1.
set -euo pipefail

# shellcheck source=benchmark/lib.sh
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

usage() {
	echo "usage: $0 tapir|tapir-X.Y|tapir-qN|slirp4netns|pasta|veth|loopback MTU [--reverse] [--parallel N]" >&2
	exit 2
}

bench_parse_args "--reverse --parallel" "$@" || usage
((${#BENCH_ARGS[@]} == 2)) || usage
driver=${BENCH_ARGS[0]} mtu=${BENCH_ARGS[1]} streams=$OPT_STREAMS
bench_check_driver "$driver" tapir slirp4netns pasta veth loopback
bench_check_mtu "$mtu"
bench_enter "$0" "$@"
direction=$(bench_direction 0)

bench_resolve "$driver"
bench_start "$driver" "$mtu"

port=5201
bench_iperf3_server host "$BENCH_SRV_BIND" "$port"

bench_prove_driver_pid
bench_snapshot before
client=(-c "$BENCH_TARGET" -p "$port" -t "$BENCH_TIME" -P "$streams")
((OPT_REVERSE)) && client+=(-R --rcv-timeout 20000)
bench_iperf3 ns "${client[@]}"
bench_snapshot after

bench_prove_path "$direction" "$IPERF_BYTES"
bench_emit "$(bench_iperf3_fields iperf3-net "$mtu" "$direction" "$streams")"
