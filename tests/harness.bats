#!/usr/bin/env bats
# tests/harness.bats - the harness itself: a bats file runs alone, as a
# developer runs it (`bats tests/cli.bats`, README), without what
# tests/run.sh exports: tests/setup_suite.bash makes the world-readable
# copies of the build that the tests run.

load lib

@test "harness: one bats file runs alone, without tests/run.sh's TAPIR_BIN and TAPIR_BIN_DIR" {
	# A clean environment, as in a new shell; the test chosen runs
	# helpers from TAPIR_BIN_DIR (the TCP peek path of older kernels).
	# (Inside bats, PATH starts with bats' own libexec directory.)
	run env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME="$HOME" TMPDIR="${TMPDIR:-/tmp}" \
		TAPIR_BUILD="${TAPIR_BUILD:-build}" \
		bats --filter 'which TCP peek path' "$TAPIR_ROOT/tests/cli.bats"
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "1..1"
	[[ "${lines[1]}" == "ok 1 "* ]]
	[[ "$output" != *"unbound variable"* ]]
	# Its copies are gone with it.
	[[ "$output" != *"cannot be preloaded"* ]]
}
