# shellcheck shell=bash
# tests/setup_suite.bash - bats runs setup_suite once before the first
# file of a run and teardown_suite after the last, also when a single
# file runs alone (`bats tests/cli.bats`).
#
# tests/run.sh exports TAPIR_BIN and TAPIR_BIN_DIR (world-readable copies
# in /tmp: the test user runs them). Run alone, bats gets the same here:
# copies of TAPIR_BUILD (default build/, relative to the repository
# root) made by tests/bindir.sh, removed at the end.

setup_suite() {
	local root build
	[[ -z "${TAPIR_BIN_DIR:-}" ]] || return 0
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	build=${TAPIR_BUILD:-build}
	[[ "$build" == /* ]] || build=$root/$build
	# The tests run helper programs too (tests/tools, benchmark/).
	[[ -x "$build/tapir" && -e "$build/tools/oldkernel.so" ]] || {
		echo "tests/setup_suite.bash: no $build/tapir or no test tools" \
			"in $build: run \`make test-bins\` first (TAPIR_BUILD" \
			"picks another build directory)" >&2
		return 1
	}
	TAPIR_SUITE_BIN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/tapir-bats.XXXXXX")
	"$root/tests/bindir.sh" "$build" "$TAPIR_SUITE_BIN_DIR/bin"
	chmod 0755 "$TAPIR_SUITE_BIN_DIR"
	export TAPIR_SUITE_BIN_DIR TAPIR_BIN_DIR=$TAPIR_SUITE_BIN_DIR/bin
	export TAPIR_BIN=$TAPIR_BIN_DIR/tapir
}

teardown_suite() {
	[[ -z "${TAPIR_SUITE_BIN_DIR:-}" ]] || rm -rf "$TAPIR_SUITE_BIN_DIR"
}
