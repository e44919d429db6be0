# shellcheck shell=bash
# tests/lib.bash - sourced by every tests/*.bats file (`load lib`).
#
#   TAPIR_ROOT       the repository root
#   TAPIR_BIN        the tapir binary under test; tests/run.sh exports a
#                    world-readable copy, the default is $TAPIR_ROOT/tapir
#   TAPIR_TEST_USER  the unprivileged user (hack/test-user.sh), default
#                    tapirtest
#   in_sandbox SCRIPT [ARGS...]
#                    run the bash snippet SCRIPT as root in a fresh sandbox
#                    (hack/sandbox.sh) with tests/scenario.bash loaded; ARGS
#                    become its $1, $2, ... Use it as `run in_sandbox '...'`.
#                    Bounded by SANDBOX_TIMEOUT seconds (default 120).
#   has_line LINE    bats' $output has exactly this line
#   busybox_rootfs DIR
#                    an engine image's tree in DIR: busybox-static and a
#                    symlink per applet, as `busybox --install -s` would
#                    make them (there is no registry to pull one from)

TAPIR_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
: "${TAPIR_BIN:=$TAPIR_ROOT/tapir}"
: "${TAPIR_TEST_USER:=tapirtest}"
export TAPIR_ROOT TAPIR_BIN TAPIR_TEST_USER

in_sandbox() { # SCRIPT [ARGS...]
	local script=$1 rc=0 scen_dir
	shift
	# Made here rather than inside so that it goes away even when the
	# sandbox is killed before its own cleanup ran.
	scen_dir=$(mktemp -d "${TMPDIR:-/tmp}/tapir-scen.XXXXXX")
	# fd 3 is bats' own output channel; a process that kept it open would
	# stall bats until it exited, so the sandbox never gets it.
	# shellcheck disable=SC2016 # expanded by the inner bash
	SCEN_DIR=$scen_dir timeout -k 5 "${SANDBOX_TIMEOUT:-120}" \
		"$TAPIR_ROOT/hack/sandbox.sh" bash -c '
			set -euo pipefail
			source "$0"
			script=$1
			shift
			eval "$script"
		' "$TAPIR_ROOT/tests/scenario.bash" "$script" "$@" 3>&- || rc=$?
	rm -rf "$scen_dir"
	if ((rc == 124 || rc == 137)); then
		echo "in_sandbox: killed after ${SANDBOX_TIMEOUT:-120} s (SANDBOX_TIMEOUT)" >&2
	fi
	return "$rc"
}

has_line() { # LINE
	# shellcheck disable=SC2154 # $output is set by bats' run
	grep -qxF -- "$1" <<<"$output"
}

busybox_rootfs() { # DIR
	local dir=$1 bb=/bin/busybox applet
	mkdir -p "$dir/bin" "$dir/etc" "$dir/tmp"
	cp "$bb" "$dir/bin/busybox"
	for applet in $("$bb" --list); do
		[[ "$applet" == busybox ]] || ln -s busybox "$dir/bin/$applet"
	done
}
