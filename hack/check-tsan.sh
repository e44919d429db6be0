#!/usr/bin/env bash
# hack/check-tsan.sh - the datapath's tests against the ThreadSanitizer build
#
#   TAPIR_BUILD=build-tsan hack/check-tsan.sh      (what `make check-tsan` runs)
#
# Runs tests/run.sh on $TAPIR_BUILD (built with -fsanitize=thread): every
# unit test, and as root the bats tests of the threaded datapath (queues,
# tcp, udp, icmp, portfwd, api; TESTS_FILTER overrides the choice), with
# two tap queues (TAPIR_QUEUES=2 unless set) and tcp.bats's byte-exact
# transfers cut from 2 GB to 256 MB each way (TAPIR_TEST_TRANSFER_MB). Then it fails the run if
# ThreadSanitizer reported anything, even where no test noticed: every
# report is printed, copied to $TAPIR_BUILD/tsan-reports/, and counted as
# one more failure in the last line, `N passed, N failed[, N skipped]`,
# which hack/test.sh reads as it reads tests/run.sh's. Exits 1 on any
# failure.
#
# What it takes to make TSan work here:
#
# - ASLR. The TSan runtimes of gcc 12 and clang 14 know the memory layout
#   of 28 bits of mmap entropy; on a kernel with more (vm.mmap_rnd_bits=32,
#   as Linux 6.18 allows on x86-64) a TSan program dies at start with
#   "FATAL: ThreadSanitizer: unexpected memory mapping". `setarch -R`
#   (personality ADDR_NO_RANDOMIZE, inherited by children and kept across
#   exec) avoids it without root or a sysctl: the suite runs under it, and
#   so does every tapir, through the wrapper below that stands in for
#   TAPIR_BIN.
# - fork(). TSan starts its background thread in the child of a
#   single-threaded process, and the kernel refuses a multithreaded process
#   a new user namespace (EINVAL), which `tapir run` and the namespace
#   helper need: the wrapper preloads tests/tools/tsanfork.so, whose
#   fork() leaves that child with its one thread.
# - The sandbox. tapir opens TSan's report file (log_path) only when it has
#   something to report, and by then --enable-sandbox (the default of
#   `tapir run`) has put it in an empty root that holds /etc, read-only,
#   and little else. A sanitizer build's sandbox binds the directory of
#   log_path at its own path, writable (driver/sandbox/isolation.c). As root the
#   reports go to a tmpfs of their own at /run/tapir-tsan.XXXXXX, which
#   every test namespace inherits (/tmp would not do: the sandbox builds
#   its root on a tmpfs there). It is unmounted at exit. Not as root (unit
#   tests only) they go to the work directory in /tmp.
#
# TSAN_OPTIONS: halt_on_error=0 so that one run shows every race, exitcode
# 66 for a process that reported one, log_path so that a report reaches
# this script whatever the test does with tapir's stderr, and color=never:
# with "auto" TSan asks isatty() of the report file, an ioctl() that
# --enable-seccomp's filter answers by killing tapir, report unwritten.
# TSan creates a report file only to write a report into it, so any file
# fails the run, an empty one too (a process that died while reporting).
# hack/tsan.supp lists the reports that are false, each with its reason;
# it is copied next to the wrapper, where the test user can read it.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TAPIR_BUILD:-build-tsan}
if [[ ! -x "$build/tapir" ]]; then
	echo "hack/check-tsan.sh: no $build/tapir (run make check-tsan)" >&2
	exit 1
fi
build=$(cd "$build" && pwd)
cd "$root"

work=$(mktemp -d "${TMPDIR:-/tmp}/tapir-tsan.XXXXXX")
reports=""
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	if [[ -n "$reports" && "$reports" == /run/tapir-tsan.* ]]; then
		umount "$reports" 2>/dev/null || true
		rmdir "$reports" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

if ((EUID == 0)); then
	reports=$(mktemp -d /run/tapir-tsan.XXXXXX)
	if ! mount -t tmpfs -o size=64m,mode=1777 tapir-tsan "$reports"; then
		echo "hack/check-tsan.sh: tmpfs at $reports: mount failed" >&2
		exit 1
	fi
else
	reports=$work/reports
	mkdir -m 1777 "$reports"
fi
chmod 0755 "$work"

# The wrapper is what tests/run.sh copies as TAPIR_BIN; the test user
# runs it, so it and what it runs live in the world-readable $work.
mkdir -p "$work/tsan" "$work/build/tests"
cp hack/tsan.supp "$work/tsan/tsan.supp"
tsan_flags="halt_on_error=0 exitcode=66 color=never"
tsan_flags+=" suppressions=$work/tsan/tsan.supp"
cp "$build/tapir" "$work/tsan/tapir"
cp "$build/tools/tsanfork.so" "$work/tsan/tsanfork.so"
# Each tapir gets a log_path of its own: TSan names the file after the
# pid, which repeats across the tests' pid namespaces, and truncates it.
cat >"$work/build/tapir" <<EOF
#!/bin/sh
# tapir under ThreadSanitizer, for make check-tsan (hack/check-tsan.sh).
TSAN_OPTIONS="log_path=$reports/tsan.\$(date +%s.%N) $tsan_flags"
LD_PRELOAD="$work/tsan/tsanfork.so\${LD_PRELOAD:+:\$LD_PRELOAD}"
export TSAN_OPTIONS LD_PRELOAD
exec setarch "\$(uname -m)" -R "$work/tsan/tapir" "\$@"
EOF
chmod -R a+rX "$work/tsan"
chmod 0755 "$work/build/tapir"
# The unit tests run in place; the helpers as they were built.
for f in "$build"/tests/test_*; do
	if [[ -f "$f" && -x "$f" ]]; then
		ln -s "$f" "$work/build/tests/"
	fi
done
for d in benchmark tools; do
	if [[ -d "$build/$d" ]]; then
		cp -r "$build/$d" "$work/build/$d"
	fi
done
rm -f "$work/build/tools/tsanfork.so"

export TSAN_OPTIONS="log_path=$reports/tsan $tsan_flags"
export TAPIR_QUEUES=${TAPIR_QUEUES:-2}
# tests/tcp.bats's byte-exact transfers: 2 GB takes TSan's tapir longer
# than a sandbox may run (120 s) with offloads off.
export TAPIR_TEST_TRANSFER_MB=${TAPIR_TEST_TRANSFER_MB:-256}
export TESTS_FILTER=${TESTS_FILTER:-'^(queues|tcp|udp|icmp|portfwd|api|tunnel): '}

rc=0
TAPIR_BUILD="$work/build" setarch "$(uname -m)" -R tests/run.sh 2>&1 |
	tee "$work/run.log" || rc=$?

# symbolize: a frame TSan printed as `<null> <null> (tapir+0xOFF)` (it
# reported from inside the sandbox, where the binary is out of reach)
# gets the function and line from addr2line.
symbolize() {
	local line off
	while IFS= read -r line; do
		if [[ "$line" == *"<null> <null> (tapir+0x"* &&
			"$line" =~ \(tapir\+(0x[0-9a-f]+)\) ]]; then
			off=${BASH_REMATCH[1]}
			line+="  $(addr2line -f -i -e "$build/tapir" "$off" |
				paste -sd ' ')"
		fi
		printf '%s\n' "$line"
	done
}

rm -rf "$build/tsan-reports"
mkdir -p "$build/tsan-reports"
found=()
shopt -s nullglob
for f in "$reports"/tsan.*; do
	found+=("$f")
	name=$(basename "$f")
	symbolize <"$f" >"$build/tsan-reports/$name"
	[[ -s "$f" ]] || echo "(empty: the process died while reporting)" \
		>>"$build/tsan-reports/$name"
done
shopt -u nullglob

if ((${#found[@]} > 0)); then
	for f in "$build"/tsan-reports/tsan.*; do
		echo "# ---- ThreadSanitizer: $f"
		cat "$f"
	done
	echo "not ok - ThreadSanitizer: ${#found[@]} process(es) reported," \
		"see $build/tsan-reports/"
else
	echo "ok - ThreadSanitizer: no report"
fi

# One summary line for both: tests/run.sh's, plus this check.
re='^([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?$'
summary=$(grep -E "$re" "$work/run.log" | tail -n 1 || true)
passed=0 failed=1 skipped=0
if [[ "$summary" =~ $re ]]; then
	passed=${BASH_REMATCH[1]}
	failed=${BASH_REMATCH[2]}
	skipped=${BASH_REMATCH[4]:-0}
else
	echo "not ok - tests/run.sh printed no summary line"
fi
if ((${#found[@]} > 0)); then
	failed=$((failed + 1))
	rc=1
else
	passed=$((passed + 1))
fi
echo
summary="$passed passed, $failed failed"
((skipped > 0)) && summary+=", $skipped skipped"
echo "$summary"
((rc == 0 && failed == 0))
