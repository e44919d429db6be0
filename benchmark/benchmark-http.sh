#!/usr/bin/env bash
# benchmark/benchmark-http.sh - HTTP requests per second into a namespace
# through a port forward, at several concurrency levels.
#
#   benchmark/benchmark-http.sh DRIVER [--mtu M] [--concurrency "1 8 16 32 128"]
#
# nginx (2 workers, a 1 KiB static page, keep-alive) runs in the namespace
# on port 8080; wrk on the host connects through the driver's forward of
# 127.0.0.1:18080 (see benchmark-iperf3-port.sh for DRIVER: tapir,
# slirp4netns, builtin, pasta), or for veth straight to 10.0.2.100:8080.
# Each level runs BENCH_HTTP_TIME seconds (default: BENCH_TIME, at most 10).
#
# Output: the proof lines, then one JSON line per concurrency level with
# requests/s, failed requests (socket errors and non-2xx/3xx answers),
# the p50/p99 latency, the forwarder's CPU in all and per thread, its
# system calls and the tap's frames each way per request
# (bench_count_start) and, for tapir, each tap queue's counters; the last
# line is the last level.
set -euo pipefail

# shellcheck source=benchmark/lib.sh
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"

usage() {
	echo "usage: $0 tapir|tapir-X.Y|tapir-qN|slirp4netns|builtin|pasta|veth [--mtu M] [--concurrency LIST]" >&2
	exit 2
}

bench_parse_args "--mtu --concurrency" "$@" || usage
((${#BENCH_ARGS[@]} == 1)) || usage
driver=${BENCH_ARGS[0]}
bench_check_driver "$driver" tapir slirp4netns builtin pasta veth
for c in $OPT_CONCURRENCY; do
	bench_check_int "a concurrency level" "$c" 1 1024
done
bench_enter "$0" "$@"

http_time=${BENCH_HTTP_TIME:-$((BENCH_TIME < 10 ? BENCH_TIME : 10))}
page_size=1024 guest_port=8080 host_port=18080

# start_nginx: the server in the namespace, as the test user.
start_nginx() {
	local d="$SCEN_DIR/nginx"
	mkdir -p "$d/www" "$d/tmp"
	head -c "$page_size" /dev/zero | tr '\0' x >"$d/www/index.html"
	cat >"$d/nginx.conf" <<-EOF
		worker_processes 2;
		daemon off;
		pid $d/nginx.pid;
		error_log stderr warn;
		events { worker_connections 4096; }
		http {
			access_log off;
			client_body_temp_path $d/tmp/body;
			proxy_temp_path $d/tmp/proxy;
			fastcgi_temp_path $d/tmp/fastcgi;
			uwsgi_temp_path $d/tmp/uwsgi;
			scgi_temp_path $d/tmp/scgi;
			keepalive_requests 1000000;
			server {
				listen $guest_port;
				root $d/www;
			}
		}
	EOF
	chmod -R a+rwX "$d"
	bench_bg_in_ns nginx nginx -e stderr -c "$d/nginx.conf" -p "$d"
	wait_for 5 bench_ns_listening "$guest_port" ||
		bench_die "nginx in the namespace did not start"
}

# parse_wrk FILE: prints "requests rps failed p50_ms p99_ms" from wrk
# --latency output.
parse_wrk() {
	awk '
	function ms(v) {
		if (v ~ /us$/) return v / 1000
		if (v ~ /ms$/) return v + 0
		if (v ~ /s$/) return v * 1000
		return v / 1000000
	}
	$1 == "50%" { p50 = ms($2) }
	$1 == "99%" { p99 = ms($2) }
	$2 == "requests" && $3 == "in" { req = $1 }
	$1 == "Requests/sec:" { rps = $2 }
	/Socket errors:/ {
		gsub(",", "")
		failed += $4 + $6 + $8 + $10
	}
	/Non-2xx or 3xx responses:/ { failed += $5 }
	END {
		if (req == "" || rps == "") exit 1
		printf "%d %s %d %.3f %.3f\n", req, rps, failed, p50, p99
	}' "$1"
}

bench_resolve "$driver"
bench_start "$driver" "$OPT_MTU" "pasta:$host_port:$guest_port"
start_nginx
bench_forward "$host_port" "$guest_port"
url="http://$BENCH_FWD_ADDR:$BENCH_FWD_PORT/"
as_user curl -sf --max-time 5 -o /dev/null "$url" ||
	bench_die "no answer from nginx at $url"

bench_prove_driver_pid
bench_prove_listener
bench_snapshot before
results=() ok_bytes=0
for c in $OPT_CONCURRENCY; do
	threads=$((c < 2 ? c : 2))
	bench_snapshot level_before
	bench_count_start
	bench_log "wrk -c $c ($http_time s) $url"
	rc=0
	as_user timeout -k 5 $((http_time + 30)) wrk -t "$threads" -c "$c" \
		-d "${http_time}s" --latency --timeout 5s "$url" \
		>"$SCEN_DIR/wrk.out" 2>&1 || rc=$?
	bench_count_stop
	((rc == 0)) || bench_die "wrk -c $c failed (status $rc): $(tail -n3 "$SCEN_DIR/wrk.out")"
	bench_snapshot level_after
	read -r req rps failed p50 p99 < <(parse_wrk "$SCEN_DIR/wrk.out") ||
		bench_die "cannot parse the output of wrk -c $c"
	((req > 0)) || bench_die "wrk -c $c completed no request"
	ok_bytes=$((ok_bytes + (req - failed > 0 ? req - failed : 0) * page_size))
	cpu=null
	# bench_snapshot sets the BENCH_SNAP_* variables through printf -v.
	# shellcheck disable=SC2154
	[[ -n "${BENCH_CPU_PID:-}" ]] &&
		cpu=$(bench_ticks_to_s $((BENCH_SNAP_level_after_CPU - BENCH_SNAP_level_before_CPU)))
	spread=$(bench_thread_queue_fields level_before level_after "$http_time")
	results+=("$(jq -cn --argjson mtu "$OPT_MTU" --argjson c "$c" \
		--argjson t "$threads" --argjson s "$http_time" \
		--argjson req "$req" --argjson rps "$rps" --argjson failed "$failed" \
		--argjson p50 "$p50" --argjson p99 "$p99" --argjson cpu "$cpu" \
		--argjson spread "$spread" --argjson counts "$(bench_count_json "$req")" '{
		bench: "http", mtu: $mtu, concurrency: $c, threads: $t,
		seconds: $s, requests: $req, rps: $rps, failed: $failed,
		p50_ms: $p50, p99_ms: $p99, driver_cpu_s: $cpu,
		driver_cpu_us_per_req: (if $cpu == null then null
			else ($cpu * 1e6 / $req * 10 | round / 10) end)} + $spread
		+ $counts')")
done
bench_snapshot after

path=tap
[[ "$driver" == builtin || "$driver" == pasta ]] && path=bypass
[[ "$driver" == veth ]] && path=direct
# The pages flowed from the namespace to the host.
bench_prove_path ns-host "$ok_bytes" "${path/direct/tap}"
bench_prove_listener
[[ "$driver" != veth ]] && bench_proof "$BENCH_LISTENER_PROOF"
for r in "${results[@]}"; do
	bench_emit "$(jq -c --arg path "$path" '. + {path: $path}' <<<"$r")"
done
