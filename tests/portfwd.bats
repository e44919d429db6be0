#!/usr/bin/env bats
# tests/portfwd.bats - host port forwards into the namespace, through both
# paths: "tap" (the TCP module opens the connection to the guest through
# the tap; the guest sees the client's address) and "splice" (a socket
# from inside the namespace, spliced; the client's address is lost).
# rootlesskit's slirp4netns port driver, HTTP under load, 1 GB each way
# byte-exact, UDP echo, half-close, resets, IPv6 listeners, and a -p port
# that cannot be bound.

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib

setup() {
	TOOLS=${TAPIR_BIN_DIR:-$TAPIR_ROOT/build/tools}
	export TOOLS
}

# Helpers for the snippets.
#   ngx_conf DIR: an nginx config serving DIR/www on port 80, one process
#     (a user namespace maps too few ids for worker users), writing only
#     into DIR; prints its path.
#   tapir_fwd NAME MODE ARGS...: `tapir run -a $SCEN_DIR/NAME.sock
#     --forward-mode=MODE ARGS...` as the test user, once its API listens.
#   ns_listening NAME PORT: wait until PORT listens inside NAME's namespace.
#   api NAME JSON: one request to NAME's API socket.
#   nssock_helper NAME: the pid of the namespace socket helper of NAME, a
#     `tapir run`: its child in the command's network namespace that is
#     not the command.
#   PEER_SYSTEM: for `socat TCP-LISTEN:80,fork,reuseaddr
#     SYSTEM:"$PEER_SYSTEM"`, a server that reads a line L and answers
#     "ADDRESS L", ADDRESS being the client as it saw it (10.0.2.100
#     spliced, 10.0.2.2 through the tap).
#   ask_peer I [ADDR]: send "hello-I" to that server, forwarded at ADDR
#     (socat's TCP4:127.0.0.1:8080 unless given).
#   fwd_info NAME FIELD: get_info's .return.forwards.FIELD (jq path).
HELPERS='
	ngx_conf() {
		local d=$1
		mkdir -p "$d/www"
		echo "tapir test page" >"$d/www/index.html"
		cat >"$d/nginx.conf" <<-EOC
			daemon off; master_process off; pid $d/nginx.pid;
			error_log stderr; events { worker_connections 1024; }
			http { access_log off; client_body_temp_path $d;
			proxy_temp_path $d; fastcgi_temp_path $d;
			uwsgi_temp_path $d; scgi_temp_path $d;
			server { listen 80; root $d/www; } }
		EOC
		chmod -R a+rwX "$d"
		echo "$d/nginx.conf"
	}
	tapir_fwd() {
		local name=$1 mode=$2
		shift 2
		bg_start_user "$name" "$TAPIR_BIN" run -a "$SCEN_DIR/$name.sock" \
			--forward-mode="$mode" "$@"
		wait_for 5 test -S "$SCEN_DIR/$name.sock"
	}
	api() {
		as_user "$TAPIR_BIN" api "$SCEN_DIR/$1.sock" "$2"
	}
	ns_listening() {
		local pid
		pid=$(api "$1" "{\"execute\":\"get_info\"}" | jq .return.target.pid)
		wait_for 5 eval "nsenter -t $pid -n ss -Htuln \"sport = :$2\" | grep -q ."
	}
	nssock_helper() {
		local tapir target c ns
		tapir=$(bg_pid "$1")
		target=$(api "$1" "{\"execute\":\"get_info\"}" |
			jq .return.target.pid)
		# The child in the network namespace of the command, not the
		# command (an isolated tapir has a janitor too, in the host one).
		ns=$(readlink /proc/"$target"/ns/net)
		for c in $(cat /proc/"$tapir"/task/*/children); do
			if [ "$c" != "$target" ] &&
				[ "$(readlink /proc/"$c"/ns/net || true)" = "$ns" ]; then
				echo "$c"
			fi
		done
	}
	PEER_SYSTEM="read -r l; echo \$SOCAT_PEERADDR \$l"
	ask_peer() {
		echo "hello-$1" |
			timeout 10 socat -t 5 - "${2:-TCP4:127.0.0.1:8080}" 2>&1
	}
	fwd_info() {
		api "$1" "{\"execute\":\"get_info\"}" | jq -r ".return.forwards.$2"
	}
'

# rootlesskit_nginx MODE: rootlesskit with tapir as slirp4netns and its
# slirp4netns port driver publishes nginx, which runs in the namespace.
rootlesskit_nginx() {
	run in_sandbox "$HELPERS"'
		mode=$1
		# rootlesskit binds a file over /etc/resolv.conf, and the kernel
		# refuses to mount over the unlinked file hack/sandbox.sh
		# bound there (see tests/rootlesskit.bats).
		echo "nameserver 127.0.0.1" >"$SCEN_DIR/resolv.conf"
		chmod 0644 "$SCEN_DIR/resolv.conf"
		umount /etc/resolv.conf
		mount --bind "$SCEN_DIR/resolv.conf" /etc/resolv.conf
		mkdir -m 0777 "$SCEN_DIR/tmp"
		export TMPDIR=$SCEN_DIR/tmp
		# rootlesskit passes no tapir options: a wrapper adds the mode.
		printf "#!/bin/sh\nexec %s --forward-mode=%s \"\$@\"\n" \
			"$TAPIR_BIN" "$mode" >"$SCEN_DIR/tapir-wrap"
		chmod 0755 "$SCEN_DIR/tapir-wrap"
		conf=$(ngx_conf "$SCEN_DIR/ngx")
		bg_start_user rk rootlesskit --net=slirp4netns \
			--slirp4netns-binary="$SCEN_DIR/tapir-wrap" \
			--port-driver=slirp4netns -p 127.0.0.1:8080:80/tcp \
			-- nginx -e stderr -c "$conf"
		wait_for 10 curl -sf -o /dev/null http://127.0.0.1:8080/
		curl -sS --max-time 5 http://127.0.0.1:8080/
		bg_stop rk
	' "$1"
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "tapir test page"
}

@test "portfwd: rootlesskit --port-driver=slirp4netns -p serves nginx (tap)" {
	rootlesskit_nginx tap
}

@test "portfwd: rootlesskit --port-driver=slirp4netns -p serves nginx (splice)" {
	rootlesskit_nginx splice
}

# ab_ok MODE: ab -c 32 -n 5000 through a -p forward to nginx, no failures.
ab_ok() {
	run in_sandbox "$HELPERS"'
		conf=$(ngx_conf "$SCEN_DIR/ngx")
		tapir_fwd t "$1" -p 127.0.0.1:8080:80 -- nginx -e stderr -c "$conf"
		wait_for 5 curl -sf -o /dev/null http://127.0.0.1:8080/
		timeout 60 ab -s 10 -c 32 -n 5000 http://127.0.0.1:8080/ 2>&1 |
			grep -E "^(Complete|Failed) requests:"
	' "$1"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" =~ Complete\ requests:\ +5000 ]]
	[[ "$output" =~ Failed\ requests:\ +0 ]]
}

@test "portfwd: ab -c 32 -n 5000 through a forward, 0 failed (tap)" {
	ab_ok tap
}

@test "portfwd: ab -c 32 -n 5000 through a forward, 0 failed (splice)" {
	ab_ok splice
}

@test "portfwd: a burst beyond the namespace socket pool (ab -c 128) is spliced, not sent through the tap" {
	run in_sandbox "$HELPERS"'
		conf=$(ngx_conf "$SCEN_DIR/ngx")
		tapir_fwd t splice -p 127.0.0.1:8080:80 -- nginx -e stderr -c "$conf"
		wait_for 5 curl -sf -o /dev/null http://127.0.0.1:8080/
		timeout 60 ab -s 10 -c 128 -n 2000 http://127.0.0.1:8080/ 2>&1 |
			grep -E "^(Complete|Failed) requests:"
		echo "spliced $(fwd_info t splice_total)"
		echo "fallbacks $(fwd_info t splice_fallbacks)"
		echo "helper $(fwd_info t pool.helper)"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" =~ Complete\ requests:\ +2000 ]]
	[[ "$output" =~ Failed\ requests:\ +0 ]]
	# The pool (64) empties within a burst: clients wait for the helper's
	# reply, a few ms, rather than go through the tap (about 40 % did).
	# Only a reply later than 200 ms lets one through, which a loaded
	# machine may cause now and then.
	[[ "$output" =~ fallbacks\ ([0-9]+) ]]
	[ "${BASH_REMATCH[1]}" -le 20 ]
	[[ "$output" =~ spliced\ ([0-9]+) ]]
	[ "${BASH_REMATCH[1]}" -ge 1980 ]
	has_line "helper ready"
}

# transfer_exact MODE: 1 GB each way through forwards, SHA-256 at both ends.
transfer_exact() {
	run in_sandbox "$HELPERS"'
		mode=$1 size=$((1 << 30))
		sha="openssl dgst -sha256 -r | cut -d\" \" -f1"
		sha() { eval "$sha"; }
		# In the namespace: a sink on 7001, a source on 7002. The
		# command outlives them: tapir run ends with it, and bytes still
		# in flight would go with it.
		tapir_fwd t "$mode" -p 127.0.0.1:17001:7001 \
			-p 127.0.0.1:17002:7002 -- bash -c "
			socat -u TCP-LISTEN:7001 STDOUT | $sha >$SCEN_DIR/up.rx &
			$TOOLS/pattern $size 2 | tee >($sha >$SCEN_DIR/down.tx) |
				socat -u STDIN TCP-LISTEN:7002
			sleep 60"
		ns_listening t 7001
		ns_listening t 7002
		# Bounded: a stalled transfer fails here, with the counters.
		stats() { api t "{\"execute\":\"get_stats\"}" >&2; }
		trap stats ERR
		"$TOOLS/pattern" $size 1 | tee >(sha >"$SCEN_DIR/up.tx") |
			timeout 60 socat -u STDIN TCP:127.0.0.1:17001
		timeout 60 socat -u TCP:127.0.0.1:17002 STDOUT |
			tee >(wc -c >"$SCEN_DIR/down.len") | sha >"$SCEN_DIR/down.rx"
		for f in up.tx up.rx down.tx down.rx down.len; do
			wait_for 20 test -s "$SCEN_DIR/$f"
		done
		cat "$SCEN_DIR"/{up.tx,up.rx,down.tx,down.rx,down.len}
	' "$1"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 5 ]
	[[ "${lines[0]}" =~ ^[0-9a-f]{64}$ ]]
	[ "${lines[0]}" = "${lines[1]}" ]
	[ "${lines[2]}" = "${lines[3]}" ]
	[ "${lines[0]}" != "${lines[2]}" ]
	[ "${lines[4]}" -eq $((1 << 30)) ]
}

@test "portfwd: 1 GB each way byte-exact (tap)" {
	transfer_exact tap
}

@test "portfwd: 1 GB each way byte-exact (splice)" {
	transfer_exact splice
}

@test "portfwd: UDP forward echoes, added by -p and by add_hostfwd" {
	run in_sandbox "$HELPERS"'
		tapir_fwd t tap -p 127.0.0.1:17007:7/udp -- \
			socat -b 65535 UDP4-RECVFROM:7,fork PIPE
		api t "{\"execute\":\"add_hostfwd\",\"arguments\":{\"proto\":\"udp\",\"host_addr\":\"127.0.0.1\",\"host_port\":17008,\"guest_port\":7}}"
		ns_listening t 7
		for port in 17007 17008; do
			for size in 5 1400 20000; do
				head -c "$size" /dev/urandom >"$SCEN_DIR/dgram"
				timeout 5 socat -b 65535 -T 2 \
					"OPEN:$SCEN_DIR/dgram,rdonly!!CREATE:$SCEN_DIR/echo" \
					"UDP4:127.0.0.1:$port" || true
				cmp -s "$SCEN_DIR/dgram" "$SCEN_DIR/echo" &&
					echo "echo $port $size ok"
				rm -f "$SCEN_DIR/echo"
			done
		done
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line '{"return":{"id":2}}'
	for port in 17007 17008; do
		for size in 5 1400 20000; do
			has_line "echo $port $size ok"
		done
	done
}

@test "portfwd: what the guest sees as the client: its address (tap), a local one (splice)" {
	run in_sandbox "$HELPERS"'
		peer() { # NAME MODE
			tapir_fwd "$1" "$2" -p 8080:80 \
				-- socat TCP-LISTEN:80,fork,reuseaddr \
				SYSTEM:"echo \$SOCAT_PEERADDR"
			api "$1" "{\"execute\":\"add_hostfwd\",\"arguments\":{\"proto\":\"tcp\",\"host_addr\":\"::1\",\"host_port\":8081,\"guest_port\":80}}" >/dev/null
			ns_listening "$1" 80
		}
		# The client sends nothing: a request the server never reads
		# would make its close a reset, which may beat its answer.
		ask() { timeout 5 socat -u "$1" - 2>&1; }
		peer tap tap
		echo "tap loopback $(ask TCP4:127.0.0.1:8080)"
		echo "tap remote $(ask TCP4:198.18.0.1:8080)"
		echo "tap ipv6 $(ask "TCP6:[::1]:8081")"
		bg_stop tap
		peer splice splice
		echo "splice remote $(ask TCP4:198.18.0.1:8080)"
		echo "splice ipv6 $(ask "TCP6:[::1]:8081")"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "tap loopback 10.0.2.2"
	has_line "tap remote 198.18.0.1"
	# An IPv6 client of an IPv4 guest has no address the guest can see.
	has_line "tap ipv6 10.0.2.2"
	has_line "splice remote 10.0.2.100"
	has_line "splice ipv6 10.0.2.100"
}

@test "portfwd: a stopped namespace helper: spliced forwards go through the tap meanwhile, the API is not held up, splicing resumes after SIGCONT" {
	run in_sandbox "$HELPERS"'
		tapir_fwd t splice -p 127.0.0.1:8080:80 -- \
			socat TCP-LISTEN:80,fork,reuseaddr SYSTEM:"$PEER_SYSTEM"
		ns_listening t 80
		echo "before $(ask_peer 0)"
		helper=$(nssock_helper t)
		echo "helpers $(wc -w <<<"$helper")"
		kill -STOP "$helper"
		wait_for 5 grep -q "^State:[[:space:]]*T" "/proc/$helper/status"
		# The pool still serves; below 32 it asks the stopped helper for
		# more, in vain.
		pooled=$(fwd_info t pool.inet)
		for ((i = 1; i <= pooled; i++)); do
			ask_peer "$i" || true
		done >"$SCEN_DIR/pooled"
		echo "pooled $(grep -cE "^10\.0\.2\.100 hello-[0-9]+$" \
			"$SCEN_DIR/pooled") of $pooled"
		echo "pool $(fwd_info t pool.inet)"
		# Empty pool, stopped helper: a client comes, and meanwhile the
		# API (the same loop) must answer at once.
		ask_peer empty >"$SCEN_DIR/empty" &
		client=$!
		sleep 0.1
		start=$(date +%s%N)
		api t "{\"execute\":\"get_info\"}" >/dev/null
		echo "api fast $((($(date +%s%N) - start) < 1000000000))"
		wait "$client" || true
		echo "empty $(cat "$SCEN_DIR/empty")"
		for i in 1 2 3; do
			echo "stopped $(ask_peer "$i")"
		done
		echo "helper $(fwd_info t pool.helper)"
		echo "fallbacks $(fwd_info t splice_fallbacks)"
		echo "alive $(grep -c "^State:[[:space:]]*T" "/proc/$helper/status")"
		kill -CONT "$helper"
		wait_for 5 eval "[ \"\$(fwd_info t pool.inet)\" -gt 0 ]"
		echo "after $(ask_peer 4)"
		echo "helper $(fwd_info t pool.helper)"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "before 10.0.2.100 hello-0"
	has_line "helpers 1"
	[[ "$output" =~ pooled\ ([0-9]+)\ of\ ([0-9]+) ]]
	[ "${BASH_REMATCH[1]}" -gt 0 ]
	[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]
	has_line "pool 0"
	has_line "api fast 1"
	has_line "empty 10.0.2.2 hello-empty"
	for i in 1 2 3; do
		has_line "stopped 10.0.2.2 hello-$i"
	done
	has_line "helper waiting"
	has_line "fallbacks 4"
	has_line "alive 1"
	has_line "after 10.0.2.100 hello-4"
	has_line "helper ready"
}

# helper_killed QUEUES: the namespace socket helper of an isolated tapir
# (tapir run's default) is killed; the spliced forward to the guest's
# address keeps serving through the tap, 100 connections in a row, over
# IPv4 and IPv6 listeners; one to 127.0.0.1 in the namespace, which the
# tap can't reach, is reset at once.
helper_killed() {
	run in_sandbox "$HELPERS"'
		tapir_fwd t splice --queues "$1" -p 127.0.0.1:8080:80 -- \
			socat TCP-LISTEN:80,fork,reuseaddr SYSTEM:"$PEER_SYSTEM"
		api t "{\"execute\":\"add_hostfwd\",\"arguments\":{\"proto\":\"tcp\",\"host_addr\":\"::1\",\"host_port\":8081,\"guest_port\":80}}"
		api t "{\"execute\":\"add_hostfwd\",\"arguments\":{\"proto\":\"tcp\",\"host_addr\":\"127.0.0.1\",\"host_port\":8082,\"guest_addr\":\"127.0.0.1\",\"guest_port\":80}}"
		ns_listening t 80
		api t "{\"execute\":\"get_info\"}" | jq -r ".return |
			\"sandbox \(.options.sandbox) seccomp \(.options.seccomp) queues \(.queues)\""
		echo "local $(ask_peer 0 TCP4:127.0.0.1:8082)"
		helper=$(nssock_helper t)
		kill -KILL "$helper"
		# More than the pool holds: once it is empty, through the tap.
		for ((i = 1; i <= 100; i++)); do
			ask_peer "$i" || true
			ask_peer "v6-$i" "TCP6:[::1]:8081" || true
		done >"$SCEN_DIR/answers"
		echo "answered $(grep -cE "^10\.0\.2\.(2|100) hello-(v6-)?[0-9]+$" \
			"$SCEN_DIR/answers")"
		echo "last $(tail -n 2 "$SCEN_DIR/answers" | tr "\n" " ")"
		tapped=$(grep -c "^10\.0\.2\.2 " "$SCEN_DIR/answers" || true)
		echo "through the tap $tapped"
		echo "fallbacks match $(($(fwd_info t splice_fallbacks) == tapped))"
		echo "helper $(fwd_info t pool.helper)"
		echo "children $(nssock_helper t | wc -w)"
		start=$(date +%s%N)
		served=$(ask_peer local TCP4:127.0.0.1:8082 | grep -c hello || true)
		echo "local served=$served fast=$((($(date +%s%N) - start) < 3000000000))"
		echo "refused $(fwd_info t splice_refused)"
	' "$1"
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "sandbox true seccomp true queues $1"
	has_line "local 127.0.0.1 hello-0"
	has_line "answered 200"
	has_line "last 10.0.2.2 hello-100 10.0.2.2 hello-v6-100 "
	[[ "$output" =~ through\ the\ tap\ ([0-9]+) ]]
	# The pool held at most 64 when the helper died.
	[ "${BASH_REMATCH[1]}" -ge 136 ]
	has_line "fallbacks match 1"
	has_line "helper gone"
	has_line "children 0"
	has_line "local served=0 fast=1"
	has_line "refused 1"
}

@test "portfwd: a killed namespace helper, isolated: spliced forwards keep working through the tap" {
	helper_killed 1
}

@test "portfwd: a killed namespace helper, isolated, --queues 2: spliced forwards keep working through the tap" {
	helper_killed 2
}

@test "portfwd: a guest server that speaks first is heard by a silent client (both paths)" {
	run in_sandbox "$HELPERS"'
		for mode in tap splice; do
			tapir_fwd "$mode" "$mode" -p 127.0.0.1:18080:22 -- \
				socat TCP-LISTEN:22,fork,reuseaddr \
				SYSTEM:"echo SSH-2.0-guest; sleep 5"
			ns_listening "$mode" 22
			echo "$mode $(timeout 5 socat -u TCP:127.0.0.1:18080 STDOUT |
				head -n 1)"
			bg_stop "$mode"
		done
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "tap SSH-2.0-guest"
	has_line "splice SSH-2.0-guest"
}

@test "portfwd: half-close, a refused port resets at once, remove keeps connections (both paths)" {
	run in_sandbox "$HELPERS"'
		for mode in tap splice; do
			# Port 81 has no listener in the namespace.
			tapir_fwd "$mode" "$mode" -p 127.0.0.1:18080:80 \
				-p 127.0.0.1:18081:81 -- \
				socat TCP-LISTEN:80,fork,reuseaddr SYSTEM:"wc -c"
			ns_listening "$mode" 80
			# The reply comes only after the request EOF went through.
			echo "$mode half-close $(head -c 1000000 /dev/zero |
				timeout 10 socat -t 5 - TCP:127.0.0.1:18080)"
			start=$(date +%s%N)
			rc=0
			curl -sS --max-time 5 http://127.0.0.1:18081/ 2>/dev/null || rc=$?
			echo "$mode refused rc=$rc fast=$(( ($(date +%s%N) - start) < 3000000000 ))"
			# A connection made before remove_hostfwd carries on: it
			# sends its bytes a second later, after the removal.
			{ sleep 1; printf 12345; } |
				timeout 10 socat -t 5 - TCP:127.0.0.1:18080 \
				>"$SCEN_DIR/$mode.after" &
			client=$!
			sleep 0.3
			api "$mode" "{\"execute\":\"remove_hostfwd\",\"arguments\":{\"id\":1}}"
			wait "$client"
			echo "$mode after-remove $(cat "$SCEN_DIR/$mode.after")"
			rc=0
			curl -sS --max-time 5 http://127.0.0.1:18080/ 2>/dev/null || rc=$?
			echo "$mode removed rc=$rc"
			bg_stop "$mode"
		done
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -cxF '{"return":{}}' <<<"$output")" -eq 2 ]
	for mode in tap splice; do
		has_line "$mode half-close 1000000"
		# curl: 7 (refused), 56 (reset), 55 (reset while it sent the
		# request: the spliced reset can come that late under ASan) or
		# 52 (empty reply); not 28 (timeout).
		[[ "$output" =~ $mode\ refused\ rc=(7|52|55|56)\ fast=1 ]]
		has_line "$mode after-remove 5"
		# Nothing listens any more: connection refused.
		has_line "$mode removed rc=7"
	done
}

@test "portfwd: a -p port that cannot be bound is fatal, in one line" {
	run in_sandbox '
		bg_start blocker socat TCP-LISTEN:18090,bind=127.0.0.1,reuseaddr -
		wait_for 5 eval "ss -Hltn \"sport = :18090\" | grep -q ."
		rc=0
		as_user "$TAPIR_BIN" run -p 127.0.0.1:18090:80 -- echo ran \
			2>"$SCEN_DIR/err" || rc=$?
		echo "rc=$rc lines=$(wc -l <"$SCEN_DIR/err")"
		cat "$SCEN_DIR/err"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "rc=125 lines=1"
	has_line "tapir: publish: tcp 127.0.0.1:18090 -> 10.0.2.100:80: bind: Address already in use"
	! has_line "ran"
}

@test "portfwd: --forward-mode takes tap or splice" {
	run "$TAPIR_BIN" --forward-mode=fast 1 tap0
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$output" = 'tapir: --forward-mode takes "tap" or "splice", not "fast"' ]
	run "$TAPIR_BIN" --help
	[[ "$output" == *"--forward-mode=tap|splice"* ]]
}
