#!/usr/bin/env bash
# hack/install-deps.sh - install the Debian packages tapir needs to build,
# test and benchmark.
#
# Fast and silent when everything is already there: it asks dpkg, not apt,
# so it neither needs the network nor runs `apt-get update` in that case.
# As non-root it only reports what is missing (and fails), since it cannot
# install anything.
set -euo pipefail

PACKAGES=(
	# build (libseccomp: --enable-seccomp, as slirp4netns uses it)
	gcc make pkg-config libjansson-dev libmnl-dev libevent-dev
	libseccomp-dev
	# tests (linux-perf: tests/rr.bats and the benchmarks count a
	# driver's system calls with perf stat)
	bats uidmap iproute2 iputils-ping procps util-linux socat udhcpc
	dnsmasq-base curl jq linux-perf
	# peers that tapir is compared with / must interoperate with
	rootlesskit slirp4netns passt
	# container engines (tests/engines.bats): podman with runc (crun 1.8
	# refuses a hybrid cgroup layout), Docker rootless, and an image
	# made from busybox-static (it replaces busybox, which udhcpc accepts)
	podman runc conmon catatonit docker.io containerd busybox-static
	# man page check, and `make deb`; debootstrap and dpkg-dev also make
	# the Dockerfile's base images (hack/bookworm-image.sh)
	man-db groff-base debhelper dpkg-dev debootstrap
	# benchmarks
	iperf3 nginx-light apache2-utils wrk gnuplot-nox
	# lint
	cppcheck clang-format
	# fuzzing (`make fuzz`) and `make CC=clang`: Debian 12 puts libFuzzer
	# and the sanitizer runtimes in libclang-rt-14-dev, which clang-14
	# only recommends, and recommends are not installed below
	clang libclang-rt-14-dev
)

missing=()
for pkg in "${PACKAGES[@]}"; do
	# dpkg-query exits non-zero for never-installed packages; "deinstall"
	# and half-installed states print something other than the line below.
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
	if [[ "$status" != "install ok installed" ]]; then
		missing+=("$pkg")
	fi
done

# Debian 13's peers for tests/pasta.bats: rootlesskit unpacked and pasta
# built (hack/trixie-peers.sh), and a root file system for podman 5.4 and
# Docker 26 (hack/trixie-root.sh); the stand-in for the Dockerfile's
# Debian 12 images (hack/bookworm-image.sh, for hack/docker-check.sh).
# Nothing is installed on the machine.
trixie_peers() {
	"$(dirname "$0")/trixie-peers.sh"
	"$(dirname "$0")/trixie-root.sh" setup
	"$(dirname "$0")/bookworm-image.sh" setup
}

if ((${#missing[@]} == 0)); then
	trixie_peers
	exit 0
fi

if ((EUID != 0)); then
	echo "hack/install-deps.sh: missing packages: ${missing[*]}" >&2
	echo "hack/install-deps.sh: run as root to install them" >&2
	exit 1
fi

echo "hack/install-deps.sh: installing: ${missing[*]}"
# One update only; the package lists may be stale on a fresh machine.
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
	"${missing[@]}"
trixie_peers
