#!/usr/bin/env bash
# hack/trixie-root.sh - a Debian 13 (trixie) root file system, cached, and a
# way to run commands in it: trixie's podman 5.4, Docker 26 rootless and
# passt need glibc 2.38, so on Debian 12 they can only run from such a root.
#
#   hack/trixie-root.sh setup [DIR]
#   hack/trixie-root.sh run [DIR] -- CMD [ARGS...]
#
# Default DIR: /var/cache/tapir/trixie/root. Both need root.
#
# setup builds DIR once (debootstrap --variant=minbase, then apt in a
# chroot: podman, runc, conmon, catatonit, uidmap, passt, docker.io,
# containerd, rootlesskit and a few tools) and writes a stamp last. With
# the stamp there it prints nothing and needs no network. A DIR left half
# made by an interrupted setup is removed and built again. About 200 MB
# are downloaded the first time.
#
# run enters DIR the way user namespaces still work in it: chroot will not
# do, since the kernel refuses user namespaces to a chrooted process, so
# CMD gets a new mount and PID namespace (pid 1 is trixie's catatonit: when
# CMD exits, everything it left behind dies with the namespace) and
# pivot_root into a private bind mount of DIR. The network namespace stays
# the caller's (run it inside hack/sandbox.sh). Inside: a fresh /proc; /sys,
# /dev (so /dev/net/tun and /dev/fuse are there) and /tmp (so test files
# are shared) from the caller; tmpfs on /run and /var/tmp; the caller's
# /etc/resolv.conf, passwd, group, subuid and subgid (so the test user
# exists, with its id ranges). TRIXIE_BINDS="SRC[:DST] ..." adds binds
# (DST defaults to SRC; the mount points made for them stay in DIR).
# The exit status is CMD's.
#
# Each run is like a boot: its processes end with it, and /run and
# /dev/shm start empty. Give podman a fresh XDG_RUNTIME_DIR each run too,
# or it trusts the last run's state there (its pause process, containers
# "running") and fails: "invalid internal status".
set -euo pipefail

readonly STAMP=.tapir-trixie-root PARTIAL=.tapir-trixie-partial
readonly STAGE2_FLAG=--tapir-trixie-stage2
# docker.io only recommends its client, docker-cli; podman's bridge
# networks need nftables and aardvark-dns (netavark only recommends them).
# The libraries are tapir's own (built on Debian 12, it runs there as the
# engines' pasta).
readonly PACKAGES=(podman runc conmon catatonit uidmap passt docker.io
	docker-cli containerd rootlesskit iproute2 iputils-ping procps curl
	socat busybox-static libjansson4 libmnl0 libevent-2.1-7t64 libseccomp2
	nftables aardvark-dns)
# Files the test user's identity depends on, taken from the caller.
readonly ETC_BINDS=(resolv.conf passwd group subuid subgid)

die() {
	echo "hack/trixie-root.sh: $*" >&2
	exit 1
}

usage() {
	echo "usage: hack/trixie-root.sh setup [DIR]" >&2
	echo "       hack/trixie-root.sh run [DIR] -- CMD [ARGS...]" >&2
	exit 2
}

install_packages() { # DIR: PACKAGES, with apt in a chroot
	local dir=$1
	# Services must not start in the build's namespaces.
	printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"
	chmod 0755 "$dir/usr/sbin/policy-rc.d"
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare --mount -- bash -c '
		mount -t proc proc "$1/proc"
		mount --rbind /dev "$1/dev"
		export DEBIAN_FRONTEND=noninteractive
		chroot "$1" apt-get update -qq
		chroot "$1" apt-get install -y -qq --no-install-recommends "${@:2}"
		chroot "$1" apt-get clean' _ "$dir" "${PACKAGES[@]}" >/dev/null
	rm -rf "$dir/var/lib/apt/lists/"* "$dir/usr/sbin/policy-rc.d"
}

setup() { # DIR
	local dir=$1 mirror=${TRIXIE_MIRROR:-http://deb.debian.org/debian} log f
	[[ "$(cat "$dir/$STAMP" 2>/dev/null)" == "${PACKAGES[*]}" ]] && return 0
	((EUID == 0)) || die "setup must run as root"
	[[ "$dir" == /?* ]] || die "DIR must be an absolute path, not '$dir'"
	mkdir -p "$(dirname "$dir")"
	# Parallel test jobs may all ask for the root: one builds, the rest wait.
	exec 9>"${dir%/}.lock"
	flock 9
	[[ "$(cat "$dir/$STAMP" 2>/dev/null)" == "${PACKAGES[*]}" ]] && return 0
	# Built by an older list: add what it lacks.
	if [[ -e "$dir/$STAMP" ]]; then
		echo "hack/trixie-root.sh: adding packages to $dir" >&2
		install_packages "$dir"
		echo "${PACKAGES[*]}" >"$dir/$STAMP"
		return 0
	fi
	# Never wipe a directory this script did not start filling itself.
	if [[ -d "$dir" && -n "$(ls -A "$dir")" ]]; then
		[[ -e "$dir/$PARTIAL" ]] || die "$dir is not empty and not ours"
		echo "hack/trixie-root.sh: $dir is half made; starting over" >&2
		rm -rf --one-file-system "$dir"
	fi
	command -v debootstrap >/dev/null ||
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
	mkdir -p "$dir"
	touch "$dir/$PARTIAL"
	echo "hack/trixie-root.sh: building a trixie root in $dir" >&2
	# A private mount namespace each: whatever debootstrap and the
	# maintainer scripts mount is gone when they end, even if killed.
	log=$(mktemp)
	if ! unshare --mount -- debootstrap --variant=minbase trixie "$dir" \
		"$mirror" >"$log" 2>&1; then
		tail -n 20 "$log" >&2
		die "debootstrap failed; its whole log: $log"
	fi
	rm -f "$log"
	install_packages "$dir"
	# Mount points for run's binds of the caller's files: a symlink or a
	# missing file there would not do.
	for f in "${ETC_BINDS[@]}"; do
		[[ -f "$dir/etc/$f" && ! -L "$dir/etc/$f" ]] || {
			rm -f "$dir/etc/$f"
			touch "$dir/etc/$f"
		}
	done
	rm "$dir/$PARTIAL"
	echo "${PACKAGES[*]}" >"$dir/$STAMP"
	echo "hack/trixie-root.sh: $dir is ready:" \
		"$(chroot "$dir" dpkg-query -W podman docker.io passt | xargs)" >&2
}

# Runs as pid 1 of the new PID namespace, in the new mount namespace.
stage2() { # DIR CMD...
	local dir=$1 bind src dst f binds
	shift
	(($$ == 1)) || die "$STAGE2_FLAG is internal; use hack/trixie-root.sh run"
	# pivot_root wants the new root to be a mount point of its own.
	mount --bind "$dir" "$dir"
	mount -t proc proc "$dir/proc"
	mount --rbind /sys "$dir/sys"
	mount --rbind /dev "$dir/dev"
	# The machine's /dev/shm would be shared with the host's podman (the
	# same lock file name, libpod_rootless_lock_UID) and outlive the run.
	mount -t tmpfs -o mode=1777,nosuid,nodev trixie-shm "$dir/dev/shm"
	mount --rbind /tmp "$dir/tmp"
	mount -t tmpfs -o mode=0755 trixie-run "$dir/run"
	# podman import stages images in /var/tmp; keep that out of the cache.
	mount -t tmpfs -o mode=1777 trixie-vartmp "$dir/var/tmp"
	for f in "${ETC_BINDS[@]}"; do
		if [[ -e "/etc/$f" ]]; then
			mount --bind "/etc/$f" "$dir/etc/$f"
		fi
	done
	read -ra binds <<<"${TRIXIE_BINDS:-}"
	for bind in "${binds[@]}"; do
		src=${bind%%:*}
		dst=${bind#*:}
		[[ "$bind" == *:* ]] || dst=$src
		[[ -e "$src" && "$dst" == /* ]] || die "TRIXIE_BINDS: bad '$bind'"
		if [[ -d "$src" ]]; then
			mkdir -p "$dir$dst"
		else
			mkdir -p "$(dirname "$dir$dst")"
			[[ -e "$dir$dst" ]] || touch "$dir$dst"
		fi
		mount --rbind "$src" "$dir$dst"
	done
	# pivot_root(".", ".") stacks the old root on the new one, and the
	# lazy unmount then drops it, with no put_old directory needed in DIR.
	cd "$dir"
	pivot_root . .
	umount -l .
	cd /
	# As on a systemd host; podman warns otherwise. Shared with nothing
	# outside: this mount namespace's peer groups are all new.
	mount --make-rshared /
	# catatonit reaps the orphans (conmon, shims) and passes signals on;
	# it exits with CMD's status, and the namespace's processes with it.
	exec /usr/bin/catatonit -- "$@"
}

main() {
	local cmd=${1:-} dir=/var/cache/tapir/trixie/root
	(($# > 0)) && shift
	case "$cmd" in
	setup)
		(($# <= 1)) || usage
		setup "${1:-$dir}"
		;;
	run)
		if (($# > 0)) && [[ "$1" != -- ]]; then
			dir=$1
			shift
		fi
		if [[ "${1:-}" != -- ]] || (($# < 2)); then
			usage
		fi
		shift
		((EUID == 0)) || die "run must run as root (it makes mount and PID namespaces)"
		[[ -e "$dir/$STAMP" ]] || die "$dir is not ready; run: hack/trixie-root.sh setup $dir"
		dir=$(readlink -f "$dir")
		# --kill-child: if this process is killed, the namespace is too.
		exec unshare --mount --propagation private --pid --fork --kill-child \
			-- "$(readlink -f "${BASH_SOURCE[0]}")" "$STAGE2_FLAG" "$dir" "$@"
		;;
	"$STAGE2_FLAG") stage2 "$@" ;;
	*) usage ;;
	esac
}

main "$@"
