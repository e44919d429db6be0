#!/usr/bin/env bash
# hack/test.sh - build tapir and run every test suite, the way CI does.
#
# Installs missing packages, sets up the unprivileged test user, then runs
# `make`, `make test` and `make check-asan` (the suites that feed tapir input, against an
# ASan+UBSan build), `make check-tsan` (the datapath's tests against a
# ThreadSanitizer build, two threads), `make fuzz` (each libFuzzer harness for 30 s, after
# replaying its regression inputs), builds and checks the Debian package
# (hack/deb-check.sh, counted as one test), builds the Dockerfile and
# runs its image (hack/docker-check.sh, one test), and runs a two-minute
# `make soak` (each of its checks counted). Its last line sums them all:
#
#   N passed, N failed[, N skipped]
#
# Needs root: the integration tests create network namespaces and the
# test user, and missing packages are installed with apt. Run with sudo,
# what it builds is handed back to the invoking user (hack/give-back.sh).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

if ((EUID != 0)); then
	cat >&2 <<-'EOF'
		hack/test.sh: needs root: it installs missing packages, creates the
		unprivileged test user, and the integration tests create network,
		mount and pid namespaces (see hack/sandbox.sh). Run it as root, e.g.
		`sudo hack/test.sh`, or run `make test` for what works without root.
	EOF
	exit 1
fi

# Everything below writes build/, build-asan/, build-fuzz/ and ./tapir as
# root: hand them back to the user who ran sudo, whatever happens.
if [[ -z "${TAPIR_GIVE_BACK_DONE:-}" ]]; then
	export TAPIR_GIVE_BACK_DONE=1
	exec hack/give-back.sh build build-asan build-fuzz tapir -- \
		"$root/hack/test.sh" "$@"
fi

hack/install-deps.sh
hack/test-user.sh

passed=0
failed=0
skipped=0
work=$(mktemp -d "${TMPDIR:-/tmp}/tapir-test.XXXXXX")
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	rm -rf "$work"
}
trap cleanup EXIT

# add_summary LOG: add the `N passed, N failed[, N skipped]` line of one
# tests/run.sh run to the totals; a run without one (a build failure)
# counts as one failure, and is named in $unfinished.
add_summary() {
	local line
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1 || true)
	if [[ -z "$line" ]]; then
		failed=$((failed + 1))
		unfinished+=("$(basename "$1" .log): not ok - no summary line: it did not finish")
		return 0
	fi
	local re='^([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?'
	[[ "$line" =~ $re ]]
	passed=$((passed + BASH_REMATCH[1]))
	failed=$((failed + BASH_REMATCH[2]))
	skipped=$((skipped + ${BASH_REMATCH[4]:-0}))
}

# count_one NAME WHAT CMD...: a check that is one test: CMD's output in
# the log NAME.log, one pass or one failure (WHAT names it in the recap).
count_one() {
	local name=$1 what=$2
	shift 2
	if "$@" 2>&1 | tee "$work/$name.log"; then
		passed=$((passed + 1))
	else
		echo "not ok - $what: see above"
		unfinished+=("$name: not ok - $what")
		failed=$((failed + 1))
		status=1
	fi
}

jobs=$(nproc)
status=0
# Failures no suite's log holds as a "not ok" line, for the recap.
unfinished=()

echo "=== make"
if ! make -j"$jobs"; then
	echo "hack/test.sh: make failed"
	failed=$((failed + 1))
	status=1
else
	# A failing suite must not stop the other one; the logs are parsed
	# for the summary line, and the exit status is checked as well.
	echo "=== make test"
	make -j"$jobs" test 2>&1 | tee "$work/test.log" || status=1
	add_summary "$work/test.log"

	echo "=== make check-asan"
	# Attach mode runs isolated in the first pass and plainly in this
	# one (tapir run isolates by default in both), and every tapir here
	# has two tap queues (TAPIR_QUEUES, which --queues in a test
	# overrides): the matrix covers both of each. This pass runs the
	# suites where a guest, a peer, a caller or a client hands tapir
	# what it likes ($asan_files); the ones that measure (benchmark,
	# conditions, stress, rr), the engines and the checks of the tree
	# run in the first pass only, and tcp.bats's byte-exact transfers
	# are 512 MB each way here: the whole suite twice would not fit in
	# CI's hour.
	asan_files="api attach cli dhcp dns fault icmp ipv6 isolation lifecycle
		malformed options pasta pasta-ports portfwd queues rootlesskit
		run sandbox tcp tunnel udp"
	TAPIR_TEST_ISOLATION=0 TAPIR_QUEUES=2 TAPIR_TEST_TRANSFER_MB=512 \
		TESTS_FILES="$asan_files" make -j"$jobs" check-asan 2>&1 |
		tee "$work/asan.log" || status=1
	add_summary "$work/asan.log"

	echo "=== make check-tsan"
	# The datapath's tests against a ThreadSanitizer build, two queues:
	# two threads (hack/check-tsan.sh). Any report fails it. Here the
	# suites whose flows cross threads most (4.5 minutes), with 128 MB
	# transfers: races need concurrency rather than volume.
	TESTS_FILTER='^(queues|tcp|udp|icmp|api): ' TAPIR_TEST_TRANSFER_MB=128 \
		make -j"$jobs" check-tsan 2>&1 | tee "$work/tsan.log" || status=1
	add_summary "$work/tsan.log"

	echo "=== make fuzz"
	# Its last line is the same `N passed, N failed`: one per harness and
	# one per replayed set of regression inputs.
	make fuzz FUZZ_TIME=30 2>&1 | tee "$work/fuzz.log" || status=1
	add_summary "$work/fuzz.log"

	echo "=== make deb (hack/deb-check.sh)"
	count_one deb "make deb" hack/deb-check.sh

	echo "=== docker build (hack/docker-check.sh)"
	# The Dockerfile built by rootless Docker from the cached stand-ins
	# of its base images, and the image run (about 1.5 min).
	count_one docker "the Dockerfile" hack/docker-check.sh

	echo "=== make soak SOAK_TIME=120"
	make soak SOAK_TIME=120 2>&1 | tee "$work/soak.log" || status=1
	add_summary "$work/soak.log"
fi

# Each failing case again, named by its suite, just above the summary:
# a CI page that shows only the head and tail of this output still says
# what failed.
for suite in test asan tsan fuzz soak; do
	[[ -f "$work/$suite.log" ]] || continue
	grep -E '^not ok' "$work/$suite.log" | sed "s/^/$suite: /" || true
done
((${#unfinished[@]} == 0)) || printf '%s\n' "${unfinished[@]}"

((failed > 0)) && status=1
summary="$passed passed, $failed failed"
((skipped > 0)) && summary+=", $skipped skipped"
echo "$summary"
exit "$status"
