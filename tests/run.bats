#!/usr/bin/env bats
# tests/run.bats - `tapir run [OPTION]... -- CMD`: CMD runs as root of a new
# user+net namespace whose tap0 is configured (address, route, lo, DNS),
# tapir exits with CMD's status, and CMD gets nothing of tapir's own.

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib

# What CMD sees of its network, one thing per line.
# shellcheck disable=SC2034 # used inside the sandbox
SHOW='
	ip -d link show dev tap0
	ip link show dev lo
	echo "addr4: $(ip -4 -o addr show dev tap0 | awk "{print \$4}" | xargs)"
	echo "addr6: $(ip -6 -o addr show dev tap0 scope global | awk "{print \$4}" | xargs)"
	echo "route4: $(ip -4 route show | sed "s/ *\$//" | paste -sd";")"
	echo "default6: $(ip -6 route show default)"
	sed "s/^/resolv: /" /etc/resolv.conf
	echo "uid: $(id -u)"
'

# now_ms: the clock in milliseconds.
now_ms() {
	local t=${EPOCHREALTIME/[.,]/}
	echo $((10#$t / 1000))
}

# sbx SNIPPET [ARGS...]: in_sandbox with the helpers above defined,
# and TMPDIR an empty directory of the test user's.
sbx() {
	local script=$1
	shift
	in_sandbox "$(declare -f now_ms)
		mkdir -m 0777 \"\$SCEN_DIR/tmp\"
		export TMPDIR=\$SCEN_DIR/tmp
		$script" "$@"
}

# tap_is DEV MTU QLEN: DEV is up with carrier, this MTU and this qlen.
tap_is() {
	[[ "$(grep -E "^[0-9]+: $1:" <<<"$output")" =~ \<[A-Z_,]*,UP,LOWER_UP\>\ mtu\ $2\ .*\ qlen\ $3$ ]]
}

@test "run: tap0 up with 10.0.2.100/24, default via 10.0.2.2, lo, DNS" {
	run sbx '
		as_user "$TAPIR_BIN" run -- sh -c "$1"
		echo "tmp: $(ls -A "$TMPDIR")"
	' "$SHOW"
	echo "$output"
	[ "$status" -eq 0 ]
	tap_is tap0 1500 '([0-9]+)'
	((BASH_REMATCH[1] > 1000))
	[[ "$output" == *"tun type tap pi off vnet_hdr on"* ]]
	[[ "$(grep -E '^[0-9]+: lo:' <<<"$output")" == *"<LOOPBACK,UP,LOWER_UP>"* ]]
	has_line "addr4: 10.0.2.100/24"
	has_line "addr6: "
	has_line "route4: default via 10.0.2.2 dev tap0;10.0.2.0/24 dev tap0 proto kernel scope link src 10.0.2.100"
	has_line "default6: "
	has_line "resolv: nameserver 10.0.2.3"
	[ "$(grep -c '^resolv: ' <<<"$output")" -eq 1 ]
	has_line "uid: 0"
	# Its resolv.conf lived in TMPDIR and is gone.
	has_line "tmp: "
}

@test "run: --mtu, --txqueuelen, -6, --cidr and --macaddress apply" {
	run sbx '
		as_user "$TAPIR_BIN" run --mtu 65520 --txqueuelen 4000 -6 \
			--cidr 10.0.135.128/25 --macaddress 02:00:00:aa:bb:cc \
			-- sh -c "$1"
	' "$SHOW"
	echo "$output"
	[ "$status" -eq 0 ]
	tap_is tap0 65520 4000
	[[ "$output" == *"link/ether 02:00:00:aa:bb:cc brd"* ]]
	has_line "addr4: 10.0.135.228/25"
	grep -Eq '^addr6: (.* )?fd00::100/64( |$)' <<<"$output"
	has_line "route4: default via 10.0.135.130 dev tap0;10.0.135.128/25 dev tap0 proto kernel scope link src 10.0.135.228"
	[[ "$output" =~ default6:\ default\ via\ fe80::2\ dev\ tap0 ]]
	has_line "resolv: nameserver 10.0.135.131"
	has_line "resolv: nameserver fd00::3"
}

@test "run --disable-dns: the host's resolv.conf stays" {
	run sbx 'as_user "$TAPIR_BIN" run --disable-dns -- cat /etc/resolv.conf'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'nameserver fe80::1%%lo\nnameserver 127.0.0.1')" ]
}

@test "run: a resolv.conf that can't be written fails with one line" {
	# TMPDIR on a tmpfs that is full: the file is created, its bytes
	# are not (ENOSPC), and an empty file must not be bound.
	run sbx '
		mkdir "$SCEN_DIR/full"
		mount -t tmpfs -o size=4k,mode=0777 tapir-full "$SCEN_DIR/full"
		# Gone before the sandbox is: SCEN_DIR is removed right after.
		trap '\''umount "$SCEN_DIR/full"'\'' EXIT
		dd if=/dev/zero of="$SCEN_DIR/full/fill" bs=4k count=1 2>/dev/null
		rc=0
		TMPDIR=$SCEN_DIR/full as_user "$TAPIR_BIN" run -- true \
			2>"$SCEN_DIR/err" || rc=$?
		echo "status: $rc, $(wc -l <"$SCEN_DIR/err") line: $(cat "$SCEN_DIR/err")"
		echo "left: $(ls -A "$SCEN_DIR/full")"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" =~ status:\ 125,\ 1\ line:\ tapir:\ run:\ write\ /[^\ ]*/tapir-run\.[^/]*/resolv\.conf:\ No\ space\ left\ on\ device ]]
	has_line "left: fill"
}

@test "run: the exit status is the command's" {
	run sbx '
		touch "$SCEN_DIR/noexec"
		chmod 0644 "$SCEN_DIR/noexec"
		for cmd in true "exit 7" "kill -TERM \$\$" "exit 255"; do
			rc=0
			as_user "$TAPIR_BIN" run -- sh -c "$cmd" || rc=$?
			echo "$cmd: $rc"
		done
		for cmd in /nonexistent/cmd "$SCEN_DIR/noexec"; do
			rc=0
			as_user "$TAPIR_BIN" run -- "$cmd" 2>"$SCEN_DIR/err" || rc=$?
			echo "$(basename "$cmd"): $rc, $(wc -l <"$SCEN_DIR/err") line: $(cat "$SCEN_DIR/err")"
		done
		echo "tmp: $(ls -A "$TMPDIR")"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "true: 0"
	has_line "exit 7: 7"
	has_line 'kill -TERM $$: 143'
	has_line "exit 255: 255"
	has_line "cmd: 127, 1 line: tapir: run: execute /nonexistent/cmd: No such file or directory"
	[[ "$output" =~ noexec:\ 126,\ 1\ line:\ tapir:\ run:\ execute\ /[^\ ]*/noexec:\ Permission\ denied ]]
	has_line "tmp: "
}

@test "run: stdin and stdout pass through; the gateway answers ping" {
	run sbx '
		echo hello | as_user "$TAPIR_BIN" run -- cat
		as_user "$TAPIR_BIN" run -- ping -c1 -W2 10.0.2.2
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = hello ]
	[[ "$output" == *"1 packets transmitted, 1 received"* ]]
}

@test "run: SIGTERM goes to the command, tapir exits with its status" {
	run sbx '
		bg_start_user r bash -c '\''exec "${@:2}" 3>"$1"'\'' bash \
			"$SCEN_DIR/ready" "$TAPIR_BIN" run -r 3 -- sleep 30
		wait_for 5 grep -qx 1 "$SCEN_DIR/ready" 2>/dev/null
		T0=$(now_ms)
		kill -TERM "$(bg_pid r)"
		rc=0
		wait "$(bg_pid r)" || rc=$?
		echo "r: status $rc after $(($(now_ms) - T0)) ms"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" =~ r:\ status\ 143\ after\ ([0-9]+)\ ms ]]
	((BASH_REMATCH[1] < 1000))
}

@test "run -r: \"1\" then EOF while the command still runs (not inherited)" {
	run sbx '
		mkfifo -m 0666 "$SCEN_DIR/ready"
		timeout 5 cat "$SCEN_DIR/ready" >"$SCEN_DIR/got" &
		reader=$!
		bg_start_user r bash -c '\''exec "${@:2}" 3>"$1"'\'' bash \
			"$SCEN_DIR/ready" "$TAPIR_BIN" run -r 3 -- sleep 3
		T0=$(now_ms)
		rc=0
		wait "$reader" || rc=$?
		echo "reader: status $rc after $(($(now_ms) - T0)) ms"
		echo "bytes: $(od -An -tx1 "$SCEN_DIR/got" | xargs)"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" =~ reader:\ status\ 0\ after\ ([0-9]+)\ ms ]]
	((BASH_REMATCH[1] < 2000))
	has_line "bytes: 31"
}
