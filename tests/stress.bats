#!/usr/bin/env bats
# tests/stress.bats - tapir when a peer stalls: a guest that stops reading
# a download, a host server that stops reading an upload. It must not spin;
# CPU use is read from /proc. Faults (resets, fds running out, the tap or
# the target gone, API floods) are in tests/fault.bats.

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib

setup() {
	TOOLS=${TAPIR_BIN_DIR:-$TAPIR_ROOT/build/tools}
	export TOOLS
}

# stall_download ENV...: a guest connection that never reads a 1 GB
# download; prints tapir's CPU use in % over 8 s once the host socket's
# buffer is full. ENV (NAME=VALUE words, maybe none) is tapir's.
STALL_DOWNLOAD='
	stall_download() {
		bg_start source bash -c "$TOOLS/pattern $((1 << 30)) 3 |
			socat -u STDIN TCP-LISTEN:7002,reuseaddr"
		wait_for 5 tcp_listening 7002
		bg_start_user tapir env "$@" "$TAPIR_BIN" run -- bash -c \
			"exec 3<>/dev/tcp/10.0.2.2/7002; sleep 60"
		wait_for 20 sendq_full 7002
		echo "cpu=$(cpu_percent "$(bg_pid tapir)" 8)"
		bg_stop tapir
		bg_stop source
	}
'

# stall_upload ENV...: a host server that never reads a 1 GB upload from
# the guest; prints tapir's CPU use in % over 8 s once it is stuck.
STALL_UPLOAD='
	stall_upload() {
		bg_start sink bash -c "socat -u TCP-LISTEN:7001,reuseaddr STDOUT |
			sleep 60"
		wait_for 5 tcp_listening 7001
		bg_start_user tapir env "$@" "$TAPIR_BIN" run -- bash -c \
			"$TOOLS/pattern $((1 << 30)) 1 | socat -u STDIN TCP:10.0.2.2:7001"
		wait_for 20 sendq_full 7001
		echo "cpu=$(cpu_percent "$(bg_pid tapir)" 8)"
		bg_stop tapir
		bg_stop sink
	}
'

# cpu_lines: the cpu=N values of $output, one per line.
cpu_lines() {
	sed -n 's/^cpu=//p' <<<"$output"
}

@test "stress: a guest that stops reading a download costs tapir under 5% CPU (SO_PEEK_OFF and discard)" {
	run in_sandbox "$STALL_DOWNLOAD"'
		stall_download
		stall_download $(oldkernel_env 5.10)
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(cpu_lines | wc -l)" -eq 2 ]
	for cpu in $(cpu_lines); do
		[ "$cpu" -lt 5 ]
	done
}

@test "stress: a host server that stops reading an upload costs tapir under 5% CPU" {
	run in_sandbox "$STALL_UPLOAD"'
		stall_upload
		stall_upload $(oldkernel_env 5.10)
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(cpu_lines | wc -l)" -eq 2 ]
	for cpu in $(cpu_lines); do
		[ "$cpu" -lt 5 ]
	done
}
