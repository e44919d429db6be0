#!/usr/bin/env bash
# benchmark/benchmark-conditions.sh - network conditions through tapir
# (docs/conditions.md): each target next to what was measured through it.
#
#   benchmark/benchmark-conditions.sh DRIVER [--mtu M]
#
# DRIVER is tapir or tapir-qN. tapir runs under rootlesskit as the
# benchmarks' tapir does, and every condition is set over rootlesskit's API
# socket, as a user would. One JSON line per target:
#   delay     1, 10, 50 and 200 ms each way: UDP round trips (200 probes,
#             one every 10 ms, to an echo server on the host): p50 and p99
#             against twice the delay plus the unconditioned p50
#   loss      1 % and 5 % on the way to the host: 10 000 datagrams, the
#             share that never came back
#   rate      1, 10, 100 and 1000 Mbit/s: iperf3 upload and download,
#             BENCH_COND_TIME seconds each (default BENCH_TIME, at most
#             10), the first second omitted
#   download  16 MB from the host at 100 ms round trip and 1 % loss each
#             way (iperf3 -R -n): the bytes and the seconds
#   upload    the same, 16 MB to the host (iperf3 -n): a guest sender
#             recovers from losses by what tapir tells it alone (duplicate
#             ACKs and SACK blocks). iperf3 ends it once the client has
#             written the bytes: what the server had by then, and its rate
#   upload_whole  16 MB from socat in the namespace to socat on the host,
#             timed until the host has the last byte, which iperf3 can't
#             tell: at 100 ms round trip and 1 % loss, and at 50 ms and
#             2 % bursty loss (loss-corr=25%), where a window loses
#             several frames
#   neutral   iperf3 download with no rule and with the neutral rule
#             delay=0, three times each, in the order none, neutral,
#             neutral, none, none, neutral: the cost of a rule that holds
#             nothing
#
# With BENCH_COND_FIDELITY=1, only the link-fidelity table instead: TCP
# goodput through delay=D (each way) and rate=R, against what such a link
# carries (docs/conditions.md, "A reference to measure against"):
#   expected = min(R x eff, sum of W / 2D)
# eff is the payload an Ethernet of that MTU carries, (MTU - 40) /
# (MTU + 38); W is each connection's window as the kernel in the
# namespace has it (tcp_info, read by benchmark/tcpwnd.c: `ss` before
# iproute2 6.10 does not show the window offered), sampled while the
# transfer runs, each connection's largest: for a download the window the
# receiver offers (tcpi_rcv_wnd, Linux 6.10), for an upload what the
# sender may have in flight (the window it was offered or its send
# buffer, whichever is less). One JSON line per cell: kind "fidelity", direction
# (download: host -> ns, upload), connections, delay_ms, rate_mbit (null
# for none), mbps, expected_mbps, ratio, w_bytes. The cell without delay
# or rate is the baseline: no rule, no expected value. The cells, each a
# space-separated list:
#   BENCH_FIDELITY_DELAYS  ms each way (default "0 10 50 300")
#   BENCH_FIDELITY_RATES   Mbit/s, or none (default "none 10 100")
#   BENCH_FIDELITY_CONNS   parallel connections (default "1 8")
#   BENCH_FIDELITY_DIRS    download, upload (default both)
# The namespace's TCP buffers are set to the defaults of the kernels users
# run (5.10 to 6.8: tcp_rmem up to 6 MiB, tcp_wmem up to 4 MiB), whatever
# this kernel's are: the guest's window is then what it is there, within
# the 8 MiB tapir keeps for a connection. Each cell runs for as long as
# the guest needs to grow its window at that delay (slow start), then
# measures: 1+3 s without delay, 2+3 s at 10 ms, 3+4 s at 50 ms, 8+6 s
# at 300 ms.
#
# Output: the proof lines, then one JSON line per target; the last line is
# the last target.
set -euo pipefail

# shellcheck source=benchmark/lib.sh
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

usage() {
	echo "usage: $0 tapir|tapir-qN [--mtu M]" >&2
	exit 2
}

bench_parse_args "--mtu" "$@" || usage
((${#BENCH_ARGS[@]} == 1)) || usage
driver=${BENCH_ARGS[0]}
bench_check_driver "$driver" tapir
[[ -z "$(bench_imitated "$driver")" ]] || bench_die "$driver: the conditions suite measures tapir on this kernel's path"
bench_enter "$0" "$@"

secs=${BENCH_COND_TIME:-$((BENCH_TIME < 10 ? BENCH_TIME : 10))}
((secs >= 2)) || secs=2

bench_resolve "$driver"
bench_start "$driver" "$OPT_MTU"
[[ -n "$BENCH_API_SOCK" ]] || bench_die "$driver has no API socket"

probe=$(bench_accessible "$(bench_tool udpprobe)")
tcpwnd=$(bench_accessible "$(bench_tool tcpwnd)")
echo_bin=$(bench_accessible "$(bench_tool udpecho)")
bg_start_user udpecho "$echo_bin" 5301
bg_start_user iperf3-server iperf3 -s -B "$BENCH_SRV_BIND" -p 5201
wait_for 5 bench_listening 5201 || bench_die "the iperf3 server did not start"

# set_rules RULE...: put these rules (strings) in force over the API.
set_rules() {
	local rules reply
	rules=$(printf '%s\n' "$@" | jq -Rsc 'split("\n") | map(select(. != ""))')
	reply=$(bench_api "{\"execute\":\"set_conditions\",\"arguments\":{\"rules\":$rules}}") ||
		bench_die "the API socket did not answer set_conditions"
	jq -e '.return.rules' <<<"$reply" >/dev/null ||
		bench_die "set_conditions $rules: $reply"
}

# udp_probe COUNT INTERVAL_US: the udpprobe JSON from the namespace.
udp_probe() {
	bench_in_ns timeout 120 "$probe" "$BENCH_TARGET" 5301 "$1" "$2" ||
		bench_die "udpprobe failed"
}

# iperf ARGS...: one iperf3 client in the namespace; prints "BYTES
# SECONDS BPS" of what was received.
iperf() {
	local out
	out=$(bench_in_ns timeout -k 5 $((secs + 200)) iperf3 -J --connect-timeout 5000 \
		-c "$BENCH_TARGET" -p 5201 "$@") || bench_die "iperf3 $* failed: $(jq -r '.error // empty' <<<"$out")"
	jq -r '.end.sum_received | "\(.bytes) \(.seconds) \(.bits_per_second)"' <<<"$out"
}

# cell_secs DELAY_MS: "OMIT SECONDS" of iperf3 for a fidelity cell.
cell_secs() {
	case $1 in
	0) echo "1 3" ;;
	[1-9] | 1[0-9]) echo "2 3" ;;
	[2-9][0-9] | 1[0-9][0-9]) echo "3 4" ;;
	*) echo "8 6" ;;
	esac
}

# window_of DIR: "PORT W" of each data connection of the iperf3 test
# running in the namespace, one per line, as the kernel has them
# (benchmark/tcpwnd.c): for a download the window the namespace offers,
# for an upload the window it is offered or its send buffer, whichever is
# less. The control connection has moved almost nothing (a few hundred
# bytes) and is left out.
window_of() {
	bench_in_ns "$tcpwnd" 5201 | awk -v dir="$1" '
		dir == "download" && $5 > 20000 {
			if ($2 < 0) { print "no rcv_wnd" > "/dev/stderr"; exit 1 }
			print $1, $2
		}
		dir == "upload" && $6 > 20000 { print $1, ($3 < $4 ? $3 : $4) }'
}

# fidelity_cell DELAY_MS RATE DIR CONNS: one cell of the table, with its
# rules in force; prints its result line. The windows are sampled four
# times a second from the start on, and those within the period iperf3
# measured count: it opens its connections one after another, a round
# trip each and more, before its clock starts, which its JSON gives to
# the second (.start.timestamp.timesecs): the samples from a second after
# the omitted time to its end. W is the sum of each connection's largest
# window then: a reader that lags a moment behind offers less for that
# moment, and a sample takes CPU from the reader.
fidelity_cell() {
	local d=$1 rate=$2 dir=$3 n=$4 omit secs out pid w t0 t log
	read -r omit secs <<<"$(cell_secs "$d")"
	local args=(-P "$n" -t $((omit + secs)) -O "$omit")
	[[ "$dir" == download ]] && args+=(-R)
	out=$SCEN_DIR/fidelity.json log=$SCEN_DIR/windows
	: >"$log"
	bench_in_ns timeout -k 5 $((omit + secs + 60)) iperf3 -J --connect-timeout 5000 \
		-c "$BENCH_TARGET" -p 5201 "${args[@]}" >"$out" &
	pid=$!
	for ((t = 0; t < 4 * (omit + secs + 60); t++)); do
		sleep 0.25
		_scen_alive "$pid" || break
		window_of "$dir" | sed "s/^/$EPOCHREALTIME /" >>"$log"
	done
	wait "$pid" || bench_die "iperf3 $dir -P $n at delay=${d}ms rate=$rate failed: $(jq -r '.error // empty' "$out")"
	t0=$(jq '.start.timestamp.timesecs' "$out")
	w=$(awk -v a="$((t0 + omit + 1))" -v b="$((t0 + omit + secs))" '
		$1 >= a && $1 <= b && $3 > most[$2] { most[$2] = $3 }
		END { for (p in most) s += most[p]; printf "%.0f", s }' "$log")
	jq -c --argjson d "$d" --arg rate "$rate" --arg dir "$dir" --argjson n "$n" \
		--argjson w "$w" --argjson mtu "$OPT_MTU" '
		(.end.sum_received.bits_per_second / 1e6) as $mbps
		| (if $rate == "none" then null else ($rate | tonumber) end) as $r
		| (($mtu - 40) / ($mtu + 38)) as $eff
		| ([if $r == null then empty else $r * $eff end,
		    if $d == 0 or $w == 0 then empty
		    else $w * 8 / (2 * $d / 1000) / 1e6 end]
		   | min) as $exp
		| {bench: "conditions", kind: "fidelity", direction: $dir,
		   connections: $n, delay_ms: $d, rate_mbit: $r,
		   target: ("delay=\($d)ms rate=\($rate)"),
		   mbps: ($mbps * 1000 | round / 1000),
		   expected_mbps: (if $exp == null then null else $exp * 1000 | round / 1000 end),
		   ratio: (if $exp == null then null else $mbps / $exp * 1000 | round / 1000 end),
		   w_bytes: (if $w == 0 then null else $w end), bytes: .end.sum_received.bytes,
		   seconds: .end.sum_received.seconds}' "$out"
}

# fidelity_table: every cell asked for, as result lines.
fidelity_table() {
	local d rate dir n rules
	bench_in_ns_root sysctl -qw net.ipv4.tcp_rmem="4096 131072 6291456" \
		net.ipv4.tcp_wmem="4096 16384 4194304" ||
		bench_die "could not set the namespace's TCP buffers"
	for d in ${BENCH_FIDELITY_DELAYS:-0 10 50 300}; do
		for rate in ${BENCH_FIDELITY_RATES:-none 10 100}; do
			rules=()
			((d > 0)) && rules+=("delay=${d}ms")
			[[ "$rate" != none ]] && rules+=("rate=${rate}mbit")
			if ((${#rules[@]})); then
				set_rules "$(
					IFS=,
					echo "${rules[*]}"
				)"
			else
				set_rules
			fi
			for dir in ${BENCH_FIDELITY_DIRS:-download upload}; do
				for n in ${BENCH_FIDELITY_CONNS:-1 8}; do
					results+=("$(fidelity_cell "$d" "$rate" "$dir" "$n")")
					payload=$((payload + $(jq .bytes <<<"${results[-1]}")))
				done
			done
		done
	done
	set_rules
}

# finish: the proof that the payload crossed tapir, then a JSON line for
# each result.
finish() {
	local reply overflow r
	reply=$(bench_api '{"execute":"get_stats"}')
	overflow=$(jq '.return.conditions.dropped_overflow' <<<"$reply")
	bench_snapshot after
	bench_prove_path both "$payload"
	bench_proof "tapir counted $overflow frames dropped for want of memory (dropped_overflow)"
	for r in "${results[@]}"; do
		bench_emit "$(jq -c --argjson mtu "$OPT_MTU" --argjson o "$overflow" \
			'. + {mtu: $mtu, dropped_overflow: $o}' <<<"$r")"
	done
}

bench_prove_driver_pid
bench_snapshot before
results=() payload=0

if [[ "${BENCH_COND_FIDELITY:-0}" == 1 ]]; then
	fidelity_table
	finish
	exit 0
fi

set_rules
base=$(udp_probe 200 10000 | jq .p50_us)
for d in 1 10 50 200; do
	set_rules "delay=${d}ms"
	r=$(udp_probe 200 10000)
	results+=("$(jq -c --argjson d "$d" --argjson base "$base" '{bench: "conditions",
		kind: "delay", target: "delay=\($d)ms", target_ms: ($d * 2 + $base / 1000 | . * 1000 | round / 1000),
		baseline_ms: ($base / 1000), p50_ms: (.p50_us / 1000), p99_ms: (.p99_us / 1000),
		error_ms: (.p50_us / 1000 - $d * 2 - $base / 1000 | . * 1000 | round / 1000),
		sent, received}' <<<"$r")")
done

for l in 1 5; do
	set_rules "loss=${l}%,dir=to_host,proto=udp,port=5301"
	r=$(udp_probe 10000 200)
	results+=("$(jq -c --argjson l "$l" '{bench: "conditions", kind: "loss",
		target: "loss=\($l)%,dir=to_host", target_pct: $l,
		measured_pct: ((.sent - .received) / .sent * 100 * 1000 | round / 1000),
		sent, received}' <<<"$r")")
done

for m in 1 10 100 1000; do
	set_rules "rate=${m}mbit"
	for dir in ns-host host-ns; do
		args=(-t $((secs + 1)) -O 1)
		[[ "$dir" == host-ns ]] && args+=(-R)
		read -r bytes seconds bps <<<"$(iperf "${args[@]}")"
		payload=$((payload + bytes))
		results+=("$(jq -cn --argjson m "$m" --arg dir "$dir" --argjson bytes "$bytes" \
			--argjson s "$seconds" --argjson bps "$bps" '{bench: "conditions",
			kind: "rate", target: "rate=\($m)mbit", direction: $dir,
			target_mbps: $m, mbps: ($bps / 1e6 * 1000 | round / 1000),
			ratio: ($bps / 1e6 / $m * 1000 | round / 1000), bytes: $bytes,
			seconds: $s}')")
	done
done

# elapsed T0 T1: seconds from one $EPOCHREALTIME to another, to the ms.
elapsed() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'
}

# transfer KIND TARGET: 16 MB down or up under the rules in force, as a
# result line for TARGET.
transfer() {
	local kind=$1 target=$2 args=(-n 16M) t0 t1 bytes seconds bps
	[[ "$kind" == download ]] && args+=(-R)
	t0=$EPOCHREALTIME
	read -r bytes seconds bps <<<"$(iperf "${args[@]}")"
	t1=$EPOCHREALTIME
	payload=$((payload + bytes))
	results+=("$(jq -cn --arg kind "$kind" --arg target "$target" --argjson bytes "$bytes" \
		--argjson s "$seconds" \
		--argjson wall "$(elapsed "$t0" "$t1")" '{
		bench: "conditions", kind: $kind, target: $target,
		bytes: $bytes, seconds: ($s * 1000 | round / 1000), wall_seconds: $wall,
		mbps: ($bytes * 8 / $s / 1e6 * 1000 | round / 1000)}')")
}

# upload_whole TARGET: 16 MB from the namespace to a sink on the host,
# timed until the sink has the last byte, as a result line for TARGET.
upload_whole() {
	local target=$1 count=$SCEN_DIR/upload-whole.count t0 t1 pid bytes i
	rm -f "$count"
	bg_start_user upload-sink bash -c "socat -u TCP-LISTEN:5303,bind=$BENCH_SRV_BIND,reuseaddr - |
		wc -c >'$count'"
	wait_for 5 bench_listening 5303 || bench_die "the upload sink did not start"
	pid=$(bg_pid upload-sink)
	t0=$EPOCHREALTIME
	bench_in_ns timeout -k 5 200 bash -c \
		"head -c 16777216 /dev/zero | socat -u - TCP:$BENCH_TARGET:5303" ||
		bench_die "the upload to the sink failed"
	for ((i = 0; i < 20000; i++)); do
		_scen_alive "$pid" || break
		sleep 0.01
	done
	t1=$EPOCHREALTIME
	bg_stop upload-sink
	bytes=$(cat "$count" 2>/dev/null) || bench_die "the upload sink counted nothing"
	payload=$((payload + bytes))
	results+=("$(jq -cn --arg target "$target" --argjson bytes "$bytes" \
		--argjson s "$(elapsed "$t0" "$t1")" '{
		bench: "conditions", kind: "upload_whole", target: $target,
		bytes: $bytes, seconds: $s, mbps: ($bytes * 8 / $s / 1e6 * 1000 | round / 1000)}')")
}

set_rules "delay=50ms,loss=1%"
transfer download "delay=50ms,loss=1% (100 ms round trip)"
transfer upload "delay=50ms,loss=1% (100 ms round trip)"
upload_whole "delay=50ms,loss=1% (100 ms round trip)"
set_rules "delay=25ms,loss=2%,loss-corr=25%"
upload_whole "delay=25ms,loss=2%,loss-corr=25% (50 ms round trip, bursts)"

# The neutral rule against none in the same namespace, in an order that
# gives neither the first turn more often: ABBAAB.
off=() on=()
for pair in "none neutral" "neutral none" "none neutral"; do
	for rule in $pair; do
		if [[ "$rule" == none ]]; then set_rules; else set_rules "delay=0"; fi
		read -r bytes seconds bps <<<"$(iperf -R -t "$secs")"
		payload=$((payload + bytes))
		if [[ "$rule" == none ]]; then off+=("$bps"); else on+=("$bps"); fi
	done
done
set_rules
results+=("$(jq -cn --argjson off "$(printf '%s\n' "${off[@]}" | jq -s .)" \
	--argjson on "$(printf '%s\n' "${on[@]}" | jq -s .)" '
	def med: sort | .[length / 2 | floor];
	{bench: "conditions", kind: "neutral", target: "delay=0 against no rule (download)",
	 gbps_none: ($off | med / 1e9 * 1000 | round / 1000),
	 gbps_neutral: ($on | med / 1e9 * 1000 | round / 1000),
	 ratio: (($on | med) / ($off | med) * 1000 | round / 1000),
	 runs: ($off | length)}')")
finish
