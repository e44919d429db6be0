#!/usr/bin/env bash
# tests/run.sh - the one test runner: unit tests, then integration tests.
#
#   TAPIR_BUILD=build tests/run.sh        (what `make test` runs)
#
# Runs every $TAPIR_BUILD/tests/test_* binary (TAP output) and, as root,
# `bats --tap tests/*.bats`; echoes all their TAP output; and ends with
# the names of the failed tests and exactly one summary line
#
#   N passed, N failed[, N skipped]
#
# which hack/test.sh and CI read. Exits 1 if anything failed or nothing ran.
#
# Environment:
#   TAPIR_BUILD    build directory (default: build)
#   TESTS_FILTER   regex passed to `bats --filter` (integration tests only)
#   TESTS_FILES    bats files to run, by name without .bats (default: all)
#   UNIT_TIMEOUT   seconds per unit-test binary (default 120)
#   BATS_TIMEOUT   seconds for the whole bats run (default 3600)
# Exported to the tests:
#   TAPIR_BIN      world-readable copy of $TAPIR_BUILD/tapir
#   TAPIR_BIN_DIR  the directory holding it and copies of
#                  $TAPIR_BUILD/benchmark/* and tools/* (helper programs)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TAPIR_BUILD:-build}
# Relative to where we were started (make runs from the repo root).
if [[ ! -d "$build" ]]; then
	echo "tests/run.sh: no build directory '$build' (run make first)" >&2
	exit 1
fi
build=$(cd "$build" && pwd)
cd "$root"

passed=0
failed=0
skipped=0
failures=()

work=$(mktemp -d "${TMPDIR:-/tmp}/tapir-run.XXXXXX")
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	rm -rf "$work"
}
trap cleanup EXIT

# The test user runs tapir, and a CI clone may sit in a directory that user
# cannot traverse; a world-readable copy in /tmp always works.
bindir="$work/bin"
chmod 0755 "$work"
tests/bindir.sh "$build" "$bindir"
export TAPIR_BIN="$bindir/tapir" TAPIR_BIN_DIR="$bindir"

# tally SUITE LOGFILE: count the TAP result lines of one suite's output.
tally() {
	local suite=$1 log=$2 line name
	while IFS= read -r line; do
		if [[ "$line" =~ ^not\ ok\ [0-9]+\ (-\ )?(.*)$ ]]; then
			failed=$((failed + 1))
			name=${BASH_REMATCH[2]}
			failures+=("$suite: $name")
		elif [[ "$line" =~ ^ok\ [0-9]+\  ]]; then
			shopt -s nocasematch
			if [[ "$line" =~ \ \#\ skip ]]; then
				skipped=$((skipped + 1))
			else
				passed=$((passed + 1))
			fi
			shopt -u nocasematch
		fi
	done <"$log"
}

# count_lines REGEX FILE: how many lines match (0 when none).
count_lines() {
	grep -cE "$1" "$2" || true
}

# ---- unit tests -------------------------------------------------------
shopt -s nullglob
units=("$build"/tests/test_*)
shopt -u nullglob
for bin in "${units[@]}"; do
	[[ -f "$bin" && -x "$bin" ]] || continue
	name=$(basename "$bin")
	log="$work/$name.tap"
	echo "# unit: $name"
	rc=0
	# Bounded: a unit test that hangs is a failure, not a stuck CI job.
	timeout -k 5 "${UNIT_TIMEOUT:-120}" "$bin" 2>&1 | tee "$log" || rc=$?
	# With pipefail rc is the test's status (tee does not fail).
	tally "$name" "$log"
	nfail=$(count_lines '^not ok ' "$log")
	nres=$(count_lines '^(not )?ok ' "$log")
	plan=$(sed -nE 's/^1\.\.([0-9]+).*/\1/p' "$log" | head -n1)
	why=""
	if ((rc == 124 || rc == 137)); then
		why="timed out after ${UNIT_TIMEOUT:-120} s"
	elif ((rc > 128)); then
		# Always a failure: a crash hides the cases after it.
		why="killed by signal $((rc - 128))"
	elif ((rc != 0 && nfail == 0)); then
		why="exited with status $rc but reported no failing case"
	elif [[ -n "$plan" ]] && ((nres != plan)); then
		why="planned $plan cases but reported $nres"
	elif [[ -z "$plan" ]]; then
		why="printed no TAP plan"
	fi
	if [[ -n "$why" ]]; then
		echo "not ok - $name: $why"
		failed=$((failed + 1))
		failures+=("$name: $why")
	fi
done

# ---- integration tests ------------------------------------------------
shopt -s nullglob
bats_files=(tests/*.bats)
shopt -u nullglob
if [[ -n "${TESTS_FILES:-}" ]]; then
	bats_files=()
	for f in $TESTS_FILES; do
		if [[ ! -f "tests/$f.bats" ]]; then
			echo "tests/run.sh: TESTS_FILES names tests/$f.bats, which does not exist" >&2
			exit 1
		fi
		bats_files+=("tests/$f.bats")
	done
fi
if ((${#bats_files[@]} > 0)); then
	if ((EUID != 0)); then
		echo "integration tests need root (they create network namespaces)"
		failed=$((failed + 1))
		failures+=("integration tests: not run (not root)")
	else
		hack/test-user.sh
		bats_args=(--tap --timing --print-output-on-failure)
		if [[ -n "${TESTS_FILTER:-}" ]]; then
			bats_args+=(--filter "$TESTS_FILTER")
		fi
		echo "# integration: bats ${bats_files[*]}"
		log="$work/bats.tap"
		rc=0
		timeout -k 10 "${BATS_TIMEOUT:-3600}" \
			bats "${bats_args[@]}" "${bats_files[@]}" 2>&1 |
			tee "$log" || rc=$?
		tally bats "$log"
		if ((rc != 0)) && (($(count_lines '^not ok ' "$log") == 0)); then
			why="bats exited with status $rc"
			((rc == 124 || rc == 137)) &&
				why="bats timed out after ${BATS_TIMEOUT:-3600} s"
			echo "not ok - $why"
			failed=$((failed + 1))
			failures+=("bats: $why")
		fi
	fi
fi

# ---- summary ----------------------------------------------------------
echo
if ((${#failures[@]} > 0)); then
	echo "failed:"
	printf '  %s\n' "${failures[@]}"
fi
if ((passed + failed == 0)); then
	echo "no tests ran"
fi
summary="$passed passed, $failed failed"
((skipped > 0)) && summary+=", $skipped skipped"
echo "$summary"

if ((failed > 0 || passed + failed == 0)); then
	exit 1
fi
exit 0
