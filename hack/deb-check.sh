#!/usr/bin/env bash
# hack/deb-check.sh - build the Debian package and check it the way CI does:
# `make deb`, unpack the .deb into a scratch root with `dpkg -x` (nothing is
# installed on the machine), run that root's tapir --version, and check that
# the man page and the docs are in it, every doc that --help and the man
# page cite at the path they cite (in `make install DESTDIR=...`'s tree
# too), and that dpkg-shlibdeps filled in the shared-library
# dependencies. Prints `deb: ok` last on success.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${BUILD:-build}

fail() {
	echo "deb: FAILED: $*" >&2
	exit 1
}

make BUILD="$build" deb
shopt -s nullglob
debs=("$build"/deb/tapir_*.deb)
shopt -u nullglob
((${#debs[@]} == 1)) || fail "expected one $build/deb/tapir_*.deb, found ${#debs[@]}"
deb=${debs[0]}

scratch=$(mktemp -d "${TMPDIR:-/tmp}/tapir-deb.XXXXXX")
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	rm -rf "$scratch"
}
trap cleanup EXIT

dpkg-deb --info "$deb"
dpkg-deb --contents "$deb"
dpkg -x "$deb" "$scratch"

version=$(timeout 10 "$scratch/usr/bin/tapir" --version) ||
	fail "$scratch/usr/bin/tapir --version failed"
echo "$version"
want=$(dpkg-deb --field "$deb" Version)
[[ "$(head -n 1 <<<"$version")" == "tapir version ${want%%-*}" ]] ||
	fail "--version says '$(head -n 1 <<<"$version")', the package $want"

# The pasta personality, by its private link (docs/engines.md).
pasta=$scratch/usr/libexec/tapir/pasta
[[ "$(readlink "$pasta")" == ../../bin/tapir ]] ||
	fail "$pasta is not a link to ../../bin/tapir"
[[ "$(timeout 10 "$pasta" --version | head -n 1)" == "$(head -n 1 <<<"$version")" ]] ||
	fail "$pasta --version is not tapir's"
timeout 10 "$pasta" --help | grep -q -- '--config-net' ||
	fail "$pasta --help does not list pasta's options"

man=$scratch/usr/share/man/man1/tapir.1.gz
[[ -f "$man" ]] || fail "no $man"
MANWIDTH=80 man -l "$man" 2>&1 | grep -q '^NAME' || fail "man -l $man renders no NAME"
for doc in README.md engines.md api.md; do
	ls "$scratch/usr/share/doc/tapir/$doc"* >/dev/null 2>&1 ||
		fail "no /usr/share/doc/tapir/$doc in the package"
done

# cited_docs TAPIR MAN: the docs that tapir's three --help texts and the
# man page (roff source, maybe gzipped) name, a path a line.
cited_docs() {
	{
		timeout 10 "$1" --help
		timeout 10 "$1" run --help
		timeout 10 "$1" pasta --help
		zcat -f "$2"
	} | grep -oE '[^[:space:]()]*docs?/[^[:space:]()]*\.md' | sort -u
}

# check_cited TREE TAPIR MAN: every doc cited is a file in TREE at the
# path cited (a relative path is found nowhere once installed).
check_cited() {
	local tree=$1 docs doc
	docs=$(cited_docs "$2" "$3")
	grep -q 'conditions\.md$' <<<"$docs" ||
		fail "$2 --help cites no conditions.md: '$docs'"
	for doc in $docs; do
		[[ "$doc" == /* ]] || fail "$2 or $3 cites $doc, not an installed path"
		[[ -f "$tree$doc" ]] || fail "$2 or $3 cites $doc, which is not installed"
	done
	echo "cited and installed: $(xargs <<<"$docs")"
}

check_cited "$scratch" "$scratch/usr/bin/tapir" "$man"
make BUILD="$build" install DESTDIR="$scratch/install" PREFIX=/usr/local
check_cited "$scratch/install" "$scratch/install/usr/local/bin/tapir" \
	"$scratch/install/usr/local/share/man/man1/tapir.1"

description=$(dpkg-deb --field "$deb" Description)
grep -qw pasta <<<"$description" ||
	fail "the package's description does not name pasta: $description"

depends=$(dpkg-deb --field "$deb" Depends)
echo "Depends: $depends"
for lib in libc6 libjansson4 libmnl0 libevent-2.1-7 libseccomp2; do
	[[ "$depends" =~ (^|[ ,])$lib([ ,]|$) ]] ||
		fail "Depends lacks $lib (dpkg-shlibdeps)"
done
echo "deb: ok: $deb"
