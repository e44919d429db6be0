#!/usr/bin/env bash
# hack/layers.sh - check that driver/ depends only downward (driver/LAYERS)
#
#   hack/layers.sh [BUILD]
#
# Every `#include "driver/FOLDER/NAME.h"` in driver/ must name its own
# folder or one below it, or be an `allow` line of driver/LAYERS. With
# BUILD (a build directory holding driver/*/*.o), every function or
# variable an object uses from another must be defined in the same
# folder, one below it, or by an allowed pair. Prints one line per breach
# and exits 1 if there is any; ipc/ must include nothing of driver/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

layers=driver/LAYERS
build=${1:-}

# edges: "FROM TO WHAT" lines, FROM and TO as folder/file without suffix.
include_edges() {
	local f from
	for f in driver/*/*.[ch]; do
		from=${f#driver/}
		from=${from%.*}
		grep -o '^[[:space:]]*#[[:space:]]*include[[:space:]]*"driver/[a-z0-9_]*/[a-z0-9_]*\.h"' "$f" |
			sed -E 's|.*"driver/([^"]*)\.h"|\1|' |
			sed "s|^|$from |; s|\$| include|" || true
	done
}

# call_edges BUILD: "FROM TO call" for each symbol FROM's object uses
# that TO's object defines.
call_edges() {
	local o
	for o in "$1"/driver/*/*.o; do
		nm --defined-only -g "$o" | awk -v o="$o" '{print $3, o}'
	done >"$tmp/defs"
	for o in "$1"/driver/*/*.o; do
		nm -u "$o" | awk -v o="$o" '{print $2, o}'
	done >"$tmp/uses"
	awk 'NR == FNR { def[$1] = $2; next }
	     ($1 in def) { print $2, def[$1], "call", $1 }' "$tmp/defs" "$tmp/uses" |
		sed -E 's|[^ ]*/driver/([^ ]*)\.o|\1|g'
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [[ -n "$build" ]] && ! compgen -G "$build/driver/*/*.o" >/dev/null; then
	echo "hack/layers.sh: no objects in $build/driver (run make first)" >&2
	exit 1
fi
{
	include_edges
	[[ -z "$build" ]] || call_edges "$build"
} >"$tmp/edges"

status=0
awk 'FILENAME == ARGV[1] {
	if ($1 == "layer") rank[$2] = ++n
	else if ($1 == "allow") ok[$2 " " $3] = 1
	next
}
{
	split($1, a, "/"); split($2, b, "/")
	if (!(a[1] in rank)) { print "layers: " $1 ": folder " a[1] " is not in driver/LAYERS"; bad = 1; next }
	if (!(b[1] in rank)) { print "layers: " $2 ": folder " b[1] " is not in driver/LAYERS"; bad = 1; next }
	if (rank[b[1]] <= rank[a[1]] || (($1 " " $2) in ok)) next
	what = $3 == "call" ? "calls " $4 "() of" : "includes"
	print "layers: driver/" $1 " " what " driver/" $2 ", in " b[1] "/, above " a[1] "/ (driver/LAYERS)"
	bad = 1
}
END { exit bad }' "$layers" "$tmp/edges" | sort -u || status=1

bad=$(grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]\(\.\./\)*driver/' ipc/*.[ch] || true)
if [[ -n "$bad" ]]; then
	echo "$bad" | sed 's|^|layers: ipc/ must not include driver/: |'
	status=1
fi
exit "$status"
