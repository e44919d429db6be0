#!/usr/bin/env bash
# hack/give-back.sh - run a command as root without leaving root-owned
# files behind in the tree.
#
#   hack/give-back.sh OUTPUT... -- CMD [ARG]...
#
# For `sudo make bench` and `sudo hack/test.sh` run from a normal account:
# once CMD has exited (whatever its status, which is passed on), each
# OUTPUT (a path relative to the repository root, e.g. build, tapir,
# benchmark/results) that exists is handed, recursively, to the invoking
# user: SUDO_UID/SUDO_GID, or else the owner of the repository's root
# directory. Tracked files (git ls-files) get back the owner and mode they
# had before CMD ran, should CMD have replaced one (a `mv` over it makes
# it root's). So a plain `make` by that user still works afterwards.
#
# Not root, or the invoking user is root (CI, a root shell in a root-owned
# clone): it just runs CMD.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

outputs=()
while (($# > 0)) && [[ "$1" != -- ]]; do
	outputs+=("$1")
	shift
done
if (($# < 2)); then
	echo "usage: hack/give-back.sh OUTPUT... -- CMD [ARG]..." >&2
	exit 2
fi
shift

owner=
if ((EUID == 0)); then
	if [[ "${SUDO_UID:-0}" =~ ^[0-9]+$ && "${SUDO_UID:-0}" != 0 ]]; then
		owner="$SUDO_UID:${SUDO_GID:-$SUDO_UID}"
	else
		owner=$(stat -c '%u:%g' "$root")
	fi
	[[ "$owner" == 0:* ]] && owner=
fi
if [[ -z "$owner" ]]; then
	exec "$@"
fi

for out in "${outputs[@]}"; do
	case $out in
	/* | .. | ../* | */../* | */..)
		echo "hack/give-back.sh: '$out': outputs are paths inside the tree" >&2
		exit 2
		;;
	esac
done

# tracked_files: NUL-separated paths of the tracked files, relative to the
# root. git refuses a repository owned by someone else unless told it is
# safe; outside a git checkout (an unpacked tarball) every file but the
# outputs counts.
tracked_files() {
	if git -C "$root" -c safe.directory="$root" rev-parse --git-dir \
		>/dev/null 2>&1; then
		git -C "$root" -c safe.directory="$root" ls-files -z
		return
	fi
	local -a prune=(-path ./.git)
	for out in "${outputs[@]}"; do
		prune+=(-o -path "./${out%/}")
	done
	(cd "$root" && find . \( "${prune[@]}" \) -prune -o -type f -print0)
}

snapshot=$(mktemp "${TMPDIR:-/tmp}/tapir-give-back.XXXXXX")
# "UID:GID MODE PATH" per tracked file; paths with a newline are skipped.
(cd "$root" && tracked_files | xargs -0 -r stat -c '%u:%g %a %n' -- \
	2>/dev/null) >"$snapshot" || true

# shellcheck disable=SC2317 # called by the EXIT trap
give_back() {
	local rc=$? ids mode path now
	trap - EXIT
	cd "$root"
	for out in "${outputs[@]}"; do
		if [[ -e "$out" || -L "$out" ]]; then
			chown -R -h "$owner" -- "$out" || rc=1
		fi
	done
	while IFS=' ' read -r ids mode path; do
		[[ -e "$path" ]] || continue
		now=$(stat -c '%u:%g %a' -- "$path") || continue
		if [[ "$now" != "$ids $mode" ]]; then
			chown -h "$ids" -- "$path" && chmod "$mode" -- "$path" ||
				rc=1
			echo "hack/give-back.sh: $path: owner and mode restored to $ids $mode"
		fi
	done <"$snapshot"
	rm -f "$snapshot"
	exit "$rc"
}
trap give_back EXIT
# Signals end the command; the EXIT trap still hands the files back.
trap 'exit 130' INT
trap 'exit 143' TERM

rc=0
"$@" || rc=$?
exit "$rc"
