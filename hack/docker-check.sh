#!/usr/bin/env bash
# hack/docker-check.sh - build the Dockerfile and run its image, the way a
# user does, where there is no registry and no network (CI):
#
#   hack/docker-check.sh        (as root; hack/test.sh counts it as one test)
#
# The images the Dockerfile starts from, debian:12 and debian:12-slim, are
# stand-ins made by hack/bookworm-image.sh (a debootstrap root holding an
# apt repository of the packages a build of tapir can ask for, cached in
# /var/cache/tapir/bookworm). In a sandbox (hack/sandbox.sh), Docker
# rootless runs as the test user with tapir (BUILD/tapir, default build/)
# as its slirp4netns, as docs/engines.md's recipe has it
# (tests/engines.bash); the stand-in is imported under both names, and
# `docker build` is given the source tree as a user's `docker build .`
# is (.dockerignore applies). The image's `tapir --version` must name this
# tree's version. Prints `docker: ok` last on success.
#
# Cost, on the project's 2-core machines: about 1 min 30 s with the cached
# image, most of it apt installing gcc in the build stage and the vfs
# storage driver copying each layer; the first setup adds about 1 min
# of debootstrap and 60 MB of downloads (hack/install-deps.sh does it).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${BUILD:-build}
readonly IMAGE_DIR=/var/cache/tapir/bookworm

fail() {
	echo "docker: FAILED: $*" >&2
	exit 1
}

((EUID == 0)) || fail "needs root (a sandbox, and the test user's Docker)"
[[ -x "$build/tapir" ]] || fail "no $build/tapir (run make first)"
hack/bookworm-image.sh setup "$IMAGE_DIR"

work=$(mktemp -d "${TMPDIR:-/tmp}/tapir-docker.XXXXXX")
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	rm -rf "$work"
}
trap cleanup EXIT
chmod 0755 "$work"
tests/bindir.sh "$build" "$work/bin"
export TAPIR_BIN=$work/bin/tapir TAPIR_BIN_DIR=$work/bin
version=$(sed -n 's/^VERSION := //p' Makefile)

# shellcheck source=tests/lib.bash disable=SC1091
source tests/lib.bash
# The snippet is single-quoted on purpose: it expands inside the sandbox.
# shellcheck disable=SC2016
SANDBOX_TIMEOUT=${DOCKER_CHECK_TIMEOUT:-900} in_sandbox '
	source "$TAPIR_ROOT/tests/engines.bash"
	image=$1 version=$2
	docker_start
	dock import - debian:12 <"$image" >/dev/null
	dock tag debian:12 debian:12-slim
	# The client as root, on the test user'"'"'s daemon: it reads the tree
	# wherever it is, as the user'"'"'s own client reads theirs.
	client() {
		env -u DOCKER_BUILDKIT DOCKER_CONFIG="$SCEN_DIR/docker-config" \
			DOCKER_HOST="unix://$ENG_XDG/docker.sock" /usr/bin/docker "$@"
	}
	start=$SECONDS
	client build -q -t localhost/tapir:check "$TAPIR_ROOT" >"$SCEN_DIR/build.log" 2>&1 || {
		tail -n 40 "$SCEN_DIR/build.log" >&2
		echo "docker build failed" >&2
		exit 1
	}
	echo "docker build: $((SECONDS - start)) s"
	got=$(dock run --rm localhost/tapir:check --version)
	echo "$got"
	[[ "$(head -n 1 <<<"$got")" == "tapir version $version" ]] || {
		echo "the image says \"$(head -n 1 <<<"$got")\", not \"tapir version $version\"" >&2
		exit 1
	}
' "$IMAGE_DIR/image.tar" "$version" || fail "see above"
echo "docker: ok"
