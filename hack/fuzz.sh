#!/usr/bin/env bash
# hack/fuzz.sh - replay the fuzz regression inputs, then run each libFuzzer
# harness for a while, one at a time, each in its own network namespace.
#
#   hack/fuzz.sh SECONDS NAME...        (what `make fuzz` runs)
#
# For each NAME, $FUZZ_BUILD/tests/fuzz_NAME (built by `make fuzz-build`)
# first replays every file of tests/fuzz/regress/NAME/ (none may crash),
# then fuzzes for SECONDS from the seeds in tests/fuzz/corpus/NAME/, with
# tests/fuzz/NAME.dict if there is one. New inputs go to
# $FUZZ_BUILD/corpus/NAME/ (the tree's seeds are left alone) and crashers,
# leaks and timeouts to $FUZZ_BUILD/artifacts/NAME/. It prints one line per
# harness (execs, exec/s, coverage, features, crashes) and ends with
#
#   N passed, N failed
#
# counting each harness run and each replayed regression set. A crash, leak
# or timeout fails it. Every harness runs inside `unshare --net`, so it can
# never reach a real network; the harness itself refuses to run otherwise.
#
# Environment:
#   FUZZ_BUILD    build directory (default: build-fuzz)
#   FUZZ_RUNS     stop each harness after this many executions as well
#   FUZZ_TIMEOUT  seconds one input may take before it counts as a hang
#                 (default 10)
#   FUZZ_LOG_DIR  keep each harness's full libFuzzer log here
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

if (($# < 2)); then
	echo "usage: hack/fuzz.sh SECONDS NAME..." >&2
	exit 2
fi
seconds=$1
shift
build=${FUZZ_BUILD:-build-fuzz}
timeout=${FUZZ_TIMEOUT:-10}
logdir=${FUZZ_LOG_DIR:-$build/logs}
mkdir -p "$logdir"

# A new network namespace needs root; without it, a user namespace too.
if ((EUID == 0)); then
	netns=(unshare --net --)
else
	netns=(unshare --user --map-root-user --net --)
fi

passed=0
failed=0

# max_len NAME: the largest input worth trying for one harness.
max_len() {
	case $1 in
	frame | frames) echo 16384 ;;
	api) echo 4200 ;;
	ipc) echo 8192 ;;
	*) echo 1024 ;;
	esac
}

# report_failure LOG: the sanitizer and libFuzzer lines that say why a run
# failed, the last five, indented; counts the failure.
report_failure() {
	grep -E '^(==[0-9]+==ERROR|SUMMARY|ALARM|.*runtime error|artifact_prefix|Running:)' \
		"$1" | tail -n 5 | sed 's/^/  /' || true
	failed=$((failed + 1))
}

# replay NAME: run every regression input of NAME once.
replay() {
	local name=$1 bin=$build/tests/fuzz_$1 dir=tests/fuzz/regress/$1
	local files=() log=$logdir/regress-$1.log
	[[ -d "$dir" ]] && mapfile -t files < <(find "$dir" -type f | sort)
	((${#files[@]} > 0)) || return 0
	# The outer timeout bounds what libFuzzer's own timers can't: a
	# hang before they start, or in the final leak check.
	if timeout -k 10 300 "${netns[@]}" "$bin" -timeout="$timeout" "${files[@]}" \
		>"$log" 2>&1; then
		echo "regress $name: ${#files[@]} inputs replayed: ok"
		passed=$((passed + 1))
	else
		echo "regress $name: FAILED (see $log):"
		report_failure "$log"
	fi
}

# fuzz NAME: run one harness for $seconds and report its numbers.
fuzz() {
	local name=$1 bin=$build/tests/fuzz_$1
	local corpus=$build/corpus/$1 art=$build/artifacts/$1
	local log=$logdir/fuzz-$1.log args rc=0
	mkdir -p "$corpus"
	rm -rf "$art"
	mkdir -p "$art"
	args=(-max_total_time="$seconds" -timeout="$timeout"
		-rss_limit_mb=2048 -max_len="$(max_len "$name")"
		-print_final_stats=1 -artifact_prefix="$art/")
	[[ -n "${FUZZ_RUNS:-}" ]] && args+=(-runs="$FUZZ_RUNS")
	[[ -f "tests/fuzz/$name.dict" ]] && args+=(-dict="tests/fuzz/$name.dict")
	timeout -k 10 $((seconds + 300)) \
		"${netns[@]}" "$bin" "${args[@]}" "$corpus" "tests/fuzz/corpus/$name" \
		>"$log" 2>&1 || rc=$?

	local execs rate cov ft crashes
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	cov=$(grep -oE '^#[0-9]+.* cov: [0-9]+' "$log" | tail -n 1 |
		sed 's/.*cov: //' || true)
	ft=$(grep -oE '^#[0-9]+.* ft: [0-9]+' "$log" | tail -n 1 |
		sed 's/.*ft: //' || true)
	crashes=$(find "$art" -type f | wc -l)
	printf 'fuzz_%s: %s execs, %s exec/s, cov %s, ft %s, %s crashes' \
		"$name" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" \
		"$crashes"
	if ((rc == 0 && crashes == 0)); then
		echo ": ok"
		passed=$((passed + 1))
	else
		echo ": FAILED (exit $rc, see $log)"
		report_failure "$log"
	fi
}

for name in "$@"; do
	if [[ ! -x "$build/tests/fuzz_$name" ]]; then
		echo "fuzz_$name: not built (run make fuzz-build): FAILED"
		failed=$((failed + 1))
		continue
	fi
	replay "$name"
done
for name in "$@"; do
	[[ -x "$build/tests/fuzz_$name" ]] && fuzz "$name"
done

echo "$passed passed, $failed failed"
((failed == 0))
