#!/usr/bin/env bash
# benchmark/benchmark-overlay.sh - pod to pod across two simulated hosts,
# over a VXLAN overlay published through one network driver on each host,
# as usernetes lays out flannel for multi-node rootless Kubernetes.
#
#   benchmark/benchmark-overlay.sh DRIVER MTU [--reverse]
#
# DRIVER is tapir, tapir-qN, tapir-sandbox, slirp4netns or pasta (see
# benchmark/lib.sh for how each is started). Two hosts: the sandbox host
# ("A", 198.19.0.1) and a network namespace joined to it by a veth ("B",
# 198.19.0.2; link MTU BENCH_LINK_MTU, default 1500, an Ethernet NIC's).
# On each host, DRIVER gives a rootless namespace a tap of MTU MTU and
# publishes UDP 8472 (flannel's VXLAN port) on every host address:
# rootlessctl add-ports for tapir and slirp4netns (rootlesskit's own port
# driver), pasta's -u (or rootlesskit's implicit port driver). In each
# namespace, root makes vx0 (VNI 42, port 8472, MTU = MTU - 50) toward the
# other host: pod A is 10.99.0.1, pod B 10.99.0.2. iperf3 runs from pod A
# to pod B's server, B → A with --reverse (iperf3 -R); direction a-b or
# b-a. BENCH_TIME seconds (default 30).
#
# Every line records the sender's TCP segments and retransmissions (from
# its namespace's /proc/net/snmp: the overlay's inner TCP), and the UDP
# receive-buffer errors (UdpRcvbufErrors) of both hosts and both pods.
# The proof is the one of benchmark-iperf3-net.sh, for each side: the tap
# is held by the driver binary this run started, and carried the payload
# (for tapir, get_stats's UDP bytes too).
#
# Output: progress on stderr; on stdout the proof lines, then, last, one
# JSON object with "verified":true. When the proof fails the status is 3
# and no number is printed; other failures exit 1.

# The SIDE_* and COUNT_* variables are set through printf -v:
# shellcheck disable=SC2154
set -euo pipefail

# shellcheck source=benchmark/lib.sh
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

usage() {
	echo "usage: $0 tapir|tapir-qN|tapir-sandbox|slirp4netns|pasta MTU [--reverse]" >&2
	exit 2
}

bench_parse_args "--reverse" "$@" || usage
((${#BENCH_ARGS[@]} == 2)) || usage
driver=${BENCH_ARGS[0]} mtu=${BENCH_ARGS[1]}
: "${BENCH_LINK_MTU:=1500}"
bench_check_driver "$driver" tapir slirp4netns pasta
bench_check_mtu "$mtu"
bench_check_int BENCH_LINK_MTU "$BENCH_LINK_MTU" 1280 65535
bench_enter "$0" "$@"

readonly VX_PORT=8472 HOST_A=198.19.0.1 HOST_B=198.19.0.2
readonly POD_A=10.99.0.1 POD_B=10.99.0.2 IPERF_PORT=5201
overlay_mtu=$((mtu - 50))
direction=a-b sender=a receiver=b
((OPT_REVERSE)) && direction=b-a sender=b receiver=a
BENCH_STATS_PROTO=udp

# ---- two sides, one set of globals ----------------------------------

# The globals bench_start and the proof use, kept per side.
SIDE_VARS=(BENCH_NS_PID BENCH_LAUNCHER_PID BENCH_LAUNCHER BENCH_STATE_DIR
	BENCH_API_SOCK BENCH_TARGET BENCH_DRIVER_PID BENCH_CPU_PID BENCH_SIDE
	BENCH_LAUNCH_NETNS_PID)

side_save() { # SIDE
	local v
	for v in "${SIDE_VARS[@]}"; do
		printf -v "SIDE_${1}_$v" '%s' "${!v:-}"
	done
}

side_load() { # SIDE
	local v n
	for v in "${SIDE_VARS[@]}"; do
		n="SIDE_${1}_$v"
		printf -v "$v" '%s' "${!n}"
	done
}

# ---- the hosts and the overlay --------------------------------------

# host_b: the second host, a network namespace held by a sleep, joined to
# the sandbox host by the veth ovA/ovB, with a default route via host A
# (pasta needs one to pick its interface; nothing here is sent beyond the
# two hosts). Sets HOST_B_PID.
host_b() {
	bg_start hostb unshare --net sleep $((BENCH_TIME * 20 + 600))
	HOST_B_PID=$(bg_pid hostb)
	wait_for 5 _scen_other_netns "$HOST_B_PID" ||
		bench_die "host B: no network namespace"
	ip link add ovA mtu "$BENCH_LINK_MTU" type veth peer name ovB \
		mtu "$BENCH_LINK_MTU" netns "$HOST_B_PID"
	ip addr add "$HOST_A/24" dev ovA
	ip link set ovA up
	nsenter -t "$HOST_B_PID" -n -- sh -ec "
		ip link set lo up
		ip addr add $HOST_B/24 dev ovB
		ip link set ovB up
		ip route add default via $HOST_A dev ovB"
}

udp_bound() { # NETNS_PID PORT: something is bound to UDP PORT there
	nsenter -t "$1" -n -- ss -Huan "( sport = :$2 )" | grep -q .
}

# publish: UDP $VX_PORT on every address of the loaded side's host, to
# the same port in its namespace, as a user publishes it.
publish() {
	local host_pid=${BENCH_LAUNCH_NETNS_PID:-$$}
	case $BENCH_KIND in
	tapir | slirp4netns)
		as_user "$(dirname "$(bench_driver_bin rootlesskit)")/rootlessctl" \
			--socket "$BENCH_STATE_DIR/api.sock" add-ports \
			"0.0.0.0:$VX_PORT:$VX_PORT/udp" >/dev/null ||
			bench_die "rootlessctl add-ports 0.0.0.0:$VX_PORT:$VX_PORT/udp failed (side $BENCH_SIDE)"
		;;
	esac
	# pasta was started with the forward; rootlesskit's implicit driver
	# adds it once the namespace binds the port.
	wait_for 10 udp_bound "$host_pid" "$VX_PORT" ||
		bench_die "side $BENCH_SIDE: nothing is bound to UDP $VX_PORT on its host after publishing it"
}

# pod_vxlan ADDR REMOTE_HOST: vx0 in the loaded side's namespace, made by
# root (a rootless user does the same as root of the namespace).
pod_vxlan() {
	bench_in_ns_root sh -ec "
		ip link add vx0 type vxlan id 42 dstport $VX_PORT nolearning
		ip link set vx0 mtu $overlay_mtu up
		ip addr add $1/24 dev vx0
		bridge fdb append 00:00:00:00:00:00 dev vx0 dst $2 port $VX_PORT"
}

# start_side SIDE LAUNCH_NETNS_PID REMOTE_HOST POD_ADDR
start_side() {
	BENCH_SIDE=$1 BENCH_LAUNCH_NETNS_PID=$2
	bench_start "$driver" "$mtu" "pasta-udp:$VX_PORT:$VX_PORT"
	BENCH_TARGET=$3
	publish
	pod_vxlan "$4" "$3"
	side_save "$1"
}

# ---- counters --------------------------------------------------------

# snmp FILE PROTO FIELD...: prints the fields of PROTO's line in a
# /proc/net/snmp, in the order asked.
snmp() {
	local file=$1 proto=$2
	shift 2
	awk -v p="$proto:" -v want="$*" '
		$1 == p && !(p in names) { names[p] = 1; for (i = 2; i <= NF; i++) col[$i] = i; next }
		$1 == p { n = split(want, w, " "); for (j = 1; j <= n; j++) printf "%s%s", (j > 1 ? " " : ""), $(col[w[j]]); print "" }' \
		"$file"
}

# counters NAME: UdpRcvbufErrors of both hosts and both pods, and the
# sender pod's TCP OutSegs and RetransSegs (COUNT_NAME_*).
counters() {
	local name=$1 s p
	printf -v "COUNT_${name}_host_a" '%s' "$(snmp /proc/self/net/snmp Udp RcvbufErrors)"
	printf -v "COUNT_${name}_host_b" '%s' "$(snmp "/proc/$HOST_B_PID/net/snmp" Udp RcvbufErrors)"
	for s in a b; do
		p="SIDE_${s}_BENCH_NS_PID"
		printf -v "COUNT_${name}_pod_$s" '%s' "$(snmp "/proc/${!p}/net/snmp" Udp RcvbufErrors)"
	done
	p="SIDE_${sender}_BENCH_NS_PID"
	printf -v "COUNT_${name}_tcp" '%s' "$(snmp "/proc/${!p}/net/snmp" Tcp OutSegs RetransSegs)"
}

delta() { # FIELD: after - before of COUNT_*_FIELD
	local b="COUNT_before_$1" a="COUNT_after_$1"
	echo $((${!a} - ${!b}))
}

# ---- the run ---------------------------------------------------------

bench_resolve "$driver"
host_b
start_side b "$HOST_B_PID" "$HOST_A" "$POD_B"
start_side a "" "$HOST_B" "$POD_A"
BENCH_OTHER_NETNS="$(stat -L -c %i "/proc/$SIDE_a_BENCH_NS_PID/ns/net") $(stat -L -c %i "/proc/$SIDE_b_BENCH_NS_PID/ns/net")"

# The overlay is up before anything is measured.
side_load a
wait_for 10 bench_in_ns_root ping -c 1 -W 1 "$POD_B" >/dev/null ||
	bench_die "pod A cannot ping pod B ($POD_B) across the overlay"

side_load b
bench_iperf3_server ns "$POD_B" "$IPERF_PORT"
bench_prove_driver_pid
side_save b
side_load a
bench_prove_driver_pid
side_save a

for s in a b; do
	side_load "$s"
	bench_snapshot "before_$s"
done
counters before
side_load a
client=(-c "$POD_B" -p "$IPERF_PORT" -t "$BENCH_TIME")
((OPT_REVERSE)) && client+=(-R --rcv-timeout 20000)
bench_iperf3 ns "${client[@]}"
for s in a b; do
	side_load "$s"
	bench_snapshot "after_$s"
done
counters after

# The proof, side by side: the sender's tap carried the payload out, the
# receiver's in.
declare -A proof cpu
for s in a b; do
	side_load "$s"
	bench_snapshot_copy "before_$s" before
	bench_snapshot_copy "after_$s" after
	dir=host-ns
	[[ "$s" == "$sender" ]] && dir="ns-host"
	bench_proof "side $s (host $([[ $s == a ]] && echo "A, the sandbox host" || echo "B, pid $HOST_B_PID's network namespace")):"
	bench_prove_path "$dir" "$IPERF_BYTES"
	proof[$s]=$BENCH_PROOF_JSON
	cpu[$s]=$(bench_cpu_s)
done

read -r out_b retrans_b <<<"$COUNT_before_tcp"
read -r out_a retrans_a <<<"$COUNT_after_tcp"
segs=$((out_a - out_b)) retrans=$((retrans_a - retrans_b))
BENCH_PROOF_JSON=$(jq -cn --argjson a "${proof[a]}" --argjson b "${proof[b]}" \
	'{a: $a, b: $b}')
# The fields of the line, with side A's threads: the cpu of each side
# is below.
side_load a
bench_snapshot_copy before_a before
bench_snapshot_copy after_a after
bench_emit "$(bench_iperf3_fields overlay "$mtu" "$direction" 1 | jq -c \
	--argjson link "$BENCH_LINK_MTU" --argjson omtu "$overlay_mtu" \
	--argjson segs "$segs" --argjson retrans "$retrans" \
	--argjson ha "$(delta host_a)" --argjson hb "$(delta host_b)" \
	--argjson pa "$(delta pod_a)" --argjson pb "$(delta pod_b)" \
	--argjson ca "${cpu[a]}" --argjson cb "${cpu[b]}" '
	. + {link_mtu: $link, overlay_mtu: $omtu,
	     sender_segments: $segs, sender_retrans_segments: $retrans,
	     retrans_pct: (if $segs > 0 then $retrans / $segs * 10000 | round / 100 else null end),
	     host_udp_rcvbuf_errors: {a: $ha, b: $hb}, host_rcvbuf_errors: ($ha + $hb),
	     pod_udp_rcvbuf_errors: {a: $pa, b: $pb},
	     driver_cpu_s: (if $ca == null or $cb == null then null else $ca + $cb | . * 1000 | round / 1000 end),
	     side_cpu_s: {a: $ca, b: $cb}}
	| .driver_cpu_s_per_gb = (if .driver_cpu_s == null then null
		else (.driver_cpu_s / (.bytes / 1e9) * 10000 | round / 10000) end)')"
