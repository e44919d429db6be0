#!/usr/bin/env bash
# hack/trixie-peers.sh - the Debian 13 (trixie) peers of tests/pasta.bats,
# made to run on Debian 12, in a cache:
#   DIR/rootlesskit/usr/bin/rootlesskit   rootlesskit 2.0.2, the first with
#                                         --net=pasta: its .deb, unpacked
#   DIR/passt/pasta                       trixie's pasta, the reference:
#                                         built from the source package (its
#                                         binary needs glibc 2.38), with
#                                         Debian's patches applied
#
#   hack/trixie-peers.sh [DIR]    default DIR: /var/cache/tapir/trixie
#
# Prints nothing and needs no network once both are there. Otherwise (as
# root) it downloads with an apt configuration of its own (trixie main
# from the same mirror, the system's keyring), kept apart from the
# system's package lists. Nothing is installed.
set -euo pipefail

DIR=${1:-/var/cache/tapir/trixie}
RK=$DIR/rootlesskit/usr/bin/rootlesskit
PASTA=$DIR/passt/pasta

if [[ -x "$RK" && -x "$PASTA" ]]; then
	exit 0
fi
if ((EUID != 0)); then
	echo "hack/trixie-peers.sh: $RK or $PASTA is missing; run as root" >&2
	exit 1
fi
echo "hack/trixie-peers.sh: fetching rootlesskit and passt from Debian 13 into $DIR"
mkdir -p "$DIR"
# A scratch directory of its own each time: a failed run leaves nothing
# that the next one would trip on (patches applied twice, two .debs).
apt=$(mktemp -d "$DIR/work.XXXXXX")
trap 'rm -rf "$apt"' EXIT
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
mirror=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)$/\1/p' \
	/etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
	"${mirror:-http://deb.debian.org/debian} trixie main" >"$apt/sources.list"
sed 's/^deb /deb-src /' "$apt/sources.list" >>"$apt/sources.list"
opts=(-o "Dir::Etc::SourceList=$apt/sources.list"
	-o Dir::Etc::SourceParts=/dev/null
	-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
	-o APT::Sandbox::User=root)
apt-get "${opts[@]}" update -qq
(cd "$apt" && apt-get "${opts[@]}" download -qq rootlesskit)
rm -rf "$DIR/rootlesskit"
dpkg -x "$apt"/rootlesskit_*.deb "$DIR/rootlesskit"

# The mirror may lack the .dsc of a point release; the tarballs are all
# the build needs, so apt's complaint about the .dsc is not fatal.
src=$apt/src
mkdir -p "$src"
(cd "$src" && apt-get "${opts[@]}" source --download-only -qq passt 2>&1 |
	grep -v '\.dsc \|Failed to fetch some archives' >&2) || true
shopt -s nullglob
tarballs=("$src"/passt_*.orig.tar.xz "$src"/passt_*.debian.tar.xz)
shopt -u nullglob
((${#tarballs[@]} == 2)) ||
	{ echo "hack/trixie-peers.sh: passt's source tarballs did not download" >&2; exit 1; }
ver=$(basename "${tarballs[1]}" .debian.tar.xz)
ver=${ver#passt_}
tar -xf "$src"/passt_*.orig.tar.xz -C "$src"
tree=$(find "$src" -mindepth 1 -maxdepth 1 -type d -name 'passt*' | head -n1)
tar -xf "$src"/passt_*.debian.tar.xz -C "$tree"
while read -r patch; do
	[[ -z "$patch" || "$patch" == \#* ]] && continue
	patch -d "$tree" -p1 -s <"$tree/debian/patches/$patch"
done <"$tree/debian/patches/series"
# With its AVX2 build next to it, as Debian ships it: passt re-executes
# that one, and says so on stderr when it is missing.
make -C "$tree" -s passt passt.avx2 VERSION="$ver" >/dev/null
rm -rf "$DIR/passt"
mkdir -p "$DIR/passt"
cp "$tree/passt" "$tree/passt.avx2" "$DIR/passt/"
ln -s passt.avx2 "$DIR/passt/pasta.avx2"
ln -s passt "$DIR/passt/pasta"
"$RK" --version
echo "pasta $ver built in $DIR/passt"
