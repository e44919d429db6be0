#!/usr/bin/env bash
# hack/bookworm-image.sh - a stand-in for the Debian 12 images the
# Dockerfile names (debian:12, debian:12-slim), cached, for building it
# where there is no registry and no network (hack/docker-check.sh).
#
#   hack/bookworm-image.sh setup [DIR]    default DIR: /var/cache/tapir/bookworm
#
# setup writes DIR/image.tar once: a Debian 12 root made by `debootstrap
# --variant=minbase` (what the official images are made from), holding an
# apt repository of its own in /var/local/tapir-apt with the .debs a
# build of tapir can ask for and everything they need beyond minbase, and
# an apt source that names that repository only. The Dockerfile's
# `apt-get update && apt-get install ...` then works as it does against
# the real images, offline: a package the repository lacks fails as a
# package missing from Debian would not, so a Dockerfile that needs one
# more package than PACKAGES below needs it added here too. What the
# Dockerfile forgets to install is not in the image's root, so forgetting
# one still fails the build, as it would with the real images.
#
# Needs root and a Debian mirror the first time (about 60 MB downloaded:
# the mirror of the system's apt sources, or BOOKWORM_MIRROR); then,
# with its stamp there, it prints nothing and needs no network. A
# half-made DIR is built again.
set -euo pipefail

# What a Debian 12 build of tapir installs (the build stage) and runs
# with (the runtime stage): the names of hack/install-deps.sh's build
# packages and their shared libraries.
readonly PACKAGES=(gcc libc6-dev make pkg-config libjansson-dev libmnl-dev
	libevent-dev libseccomp-dev libjansson4 libmnl0 libevent-2.1-7
	libseccomp2)
readonly STAMP=image.stamp REPO=/var/local/tapir-apt

die() {
	echo "hack/bookworm-image.sh: $*" >&2
	exit 1
}

# mirror: the system's Debian mirror (as hack/trixie-peers.sh finds it),
# or BOOKWORM_MIRROR.
mirror() {
	local m
	m=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)$/\1/p' \
		/etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
	echo "${BOOKWORM_MIRROR:-${m:-http://deb.debian.org/debian}}"
}

# fill_repo ROOT: PACKAGES and what they need beyond ROOT's, downloaded
# by ROOT's own apt (so the set is exactly what the image lacks), as a
# flat repository at ROOT$REPO.
fill_repo() {
	local root=$1
	# debootstrap leaves the base system's .debs there.
	rm -f "$root"/var/cache/apt/archives/*.deb
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare --mount -- bash -c '
		mount -t proc proc "$1/proc"
		chroot "$1" apt-get update -qq
		chroot "$1" apt-get install -qq -y --download-only \
			--no-install-recommends "${@:2}"' _ "$root" "${PACKAGES[@]}" \
		>/dev/null
	mkdir -p "$root$REPO"
	mv "$root"/var/cache/apt/archives/*.deb "$root$REPO/"
	(cd "$root$REPO" && dpkg-scanpackages --multiversion . 2>/dev/null >Packages)
	[[ -s "$root$REPO/Packages" ]] || die "no Packages in $root$REPO"
	rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin
	# The only source: [trusted=yes], since a local flat repository has
	# no Release file to sign.
	rm -f "$root"/etc/apt/sources.list "$root"/etc/apt/sources.list.d/*
	echo "deb [trusted=yes] file:$REPO ./" >"$root/etc/apt/sources.list"
}

setup() { # DIR
	local dir=$1 root log
	[[ "$(cat "$dir/$STAMP" 2>/dev/null)" == "${PACKAGES[*]}" ]] && return 0
	((EUID == 0)) || die "setup must run as root"
	[[ "$dir" == /?* ]] || die "DIR must be an absolute path, not '$dir'"
	mkdir -p "$dir"
	# Parallel callers: one builds, the rest wait.
	exec 9>"$dir/lock"
	flock 9
	[[ "$(cat "$dir/$STAMP" 2>/dev/null)" == "${PACKAGES[*]}" ]] && return 0
	command -v debootstrap >/dev/null ||
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
	command -v dpkg-scanpackages >/dev/null ||
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dpkg-dev >/dev/null
	echo "hack/bookworm-image.sh: building a Debian 12 image in $dir" >&2
	rm -rf --one-file-system "$dir/root" "$dir/image.tar"
	root=$dir/root
	log=$(mktemp)
	# A private mount namespace: whatever debootstrap mounts is gone
	# when it ends, even if killed.
	if ! unshare --mount -- debootstrap --variant=minbase bookworm "$root" \
		"$(mirror)" >"$log" 2>&1; then
		tail -n 20 "$log" >&2
		die "debootstrap failed; its whole log: $log"
	fi
	rm -f "$log"
	fill_repo "$root"
	tar --numeric-owner -C "$root" -cf "$dir/image.tar.part" .
	mv "$dir/image.tar.part" "$dir/image.tar"
	rm -rf --one-file-system "$root"
	echo "${PACKAGES[*]}" >"$dir/$STAMP"
	echo "hack/bookworm-image.sh: $dir/image.tar is ready" \
		"($(du -m "$dir/image.tar" | cut -f1) MB)" >&2
}

case "${1:-}" in
setup)
	(($# <= 2)) || die "usage: hack/bookworm-image.sh setup [DIR]"
	setup "${2:-/var/cache/tapir/bookworm}"
	;;
*)
	echo "usage: hack/bookworm-image.sh setup [DIR]" >&2
	exit 2
	;;
esac
