#!/usr/bin/env bash
# tests/bindir.sh - the binaries under test, where the test user can run
# them: a CI clone may sit in a directory that user cannot traverse.
#
#   tests/bindir.sh BUILD DIR
#
# Copies BUILD/tapir and the helper programs of BUILD/benchmark and
# BUILD/tools (executables and preload shims) into DIR, which it makes,
# all world-readable and executable. tests/run.sh and a bats file run
# alone (tests/setup_suite.bash) export DIR/tapir as TAPIR_BIN and DIR as
# TAPIR_BIN_DIR.
set -euo pipefail

(($# == 2)) || {
	echo "usage: tests/bindir.sh BUILD DIR" >&2
	exit 2
}
build=$1 dir=$2
mkdir -p "$dir"
if [[ -f "$build/tapir" ]]; then
	cp "$build/tapir" "$dir/"
else
	echo "tests/bindir.sh: warning: no $build/tapir to test" >&2
fi
for tooldir in "$build/benchmark" "$build/tools"; do
	[[ -d "$tooldir" ]] || continue
	find "$tooldir" -maxdepth 1 -type f -perm -u+x -exec cp -t "$dir" {} +
done
chmod 0755 "$dir"
find "$dir" -type f -exec chmod 0755 {} +
