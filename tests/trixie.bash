# shellcheck shell=bash
# tests/trixie.bash - Debian 13's peers for the bats files that run them
# (tests/pasta.bats, tests/ipv6-host.bats; `load trixie` after `load lib`):
# rootlesskit 2.0.2 and pasta built from trixie's sources
# (hack/trixie-peers.sh), and podman 5.4 and Docker 26 in the trixie root
# (hack/trixie-root.sh; tests/pasta.bash drives them inside the sandbox).
#
#   RK2, REF_PASTA       rootlesskit 2.0.2 and trixie's pasta (reference)
#   PT_TAPIR_RE, PT_PASTA_RE
#                        the tap's holder under an engine: the copy of
#                        $TAPIR_BIN that pt_engine links pasta to, or
#                        trixie's passt, which re-executes its AVX2 build
#                        where the CPU has it
#   trixie_setup NAME    in setup_file: the peers and the root are there
#                        (else one line naming NAME, return 1); the
#                        engines' image in $PASTA_ROOTFS
#   pt SNIPPET [ARGS...] in_sandbox with tests/pasta.bash loaded, bounded
#                        wider for the engines
#   PODMAN_END           how a podman scenario ends, its containers gone:
#                        what is left of them and of the drivers (podman's
#                        pasta exits by itself, within seconds), in
#                        $PT_DIR/after.txt, then $PT_DIR/finished
#   RK_TAP_UP            the start of a snippet inside rootlesskit's
#                        namespace: wait (5 s at most) for tap0's carrier,
#                        as rootlesskit does not wait for its driver, and
#                        print tap0's IPv4 address and the default route

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

TRIXIE=/var/cache/tapir/trixie
RK2=$TRIXIE/rootlesskit/usr/bin/rootlesskit
REF_PASTA=$TRIXIE/passt/pasta
# shellcheck disable=SC2034 # used by the bats files
PT_TAPIR_RE="/.*/pt/bin/tapir"
# shellcheck disable=SC2034 # used by the bats files
PT_PASTA_RE='/usr/bin/pas(st|ta)(\.avx2)?'

trixie_setup() { # NAME
	local dir
	[[ -x "$RK2" && -x "$REF_PASTA" && -e "$TRIXIE/root/.tapir-trixie-root" ]] || {
		echo "$1: $RK2, $REF_PASTA or the trixie root is missing (hack/install-deps.sh runs hack/trixie-peers.sh and hack/trixie-root.sh setup)" >&2
		return 1
	}
	chmod 0755 "$BATS_FILE_TMPDIR"
	# The engines' image: busybox-static and its applet links, as in
	# tests/engines.bats (there is no registry).
	dir="$BATS_FILE_TMPDIR/rootfs"
	busybox_rootfs "$dir"
	# busybox has no UDP server: the static udpecho tool is one.
	cp "${TAPIR_BIN_DIR:-$TAPIR_ROOT/build/tools}/udpecho" "$dir/bin/udpecho" || {
		echo "$1: no udpecho tool (make test builds it)" >&2
		return 1
	}
	tar -C "$dir" -cf "$BATS_FILE_TMPDIR/rootfs.tar" .
	chmod 0644 "$BATS_FILE_TMPDIR/rootfs.tar"
	export RK2 REF_PASTA PASTA_ROOTFS=$BATS_FILE_TMPDIR/rootfs.tar
}

pt() { # SNIPPET [ARGS...]
	local script=$1
	shift
	SANDBOX_TIMEOUT=${ENGINES_TIMEOUT:-240} in_sandbox \
		'source "$TAPIR_ROOT/tests/pasta.bash"
		'"$script" "$@"
}

# shellcheck disable=SC2034 # used by the bats files
PODMAN_END='
echo "containers left: $(podman ps -aq | wc -l)" >"$PT_DIR/after.txt"
for i in $(seq 50); do
	ps -eo args= | grep -q "^[^ ]*pasta " || break
	sleep 0.1
done
echo "drivers left: $(ps -eo args= | grep -c "^[^ ]*pasta ")" >>"$PT_DIR/after.txt"
touch "$PT_DIR/finished"
'

# shellcheck disable=SC2034 # used by the bats files
RK_TAP_UP='
i=0
until ip link show tap0 | grep -q LOWER_UP || [ $i -ge 50 ]; do
	sleep 0.1; i=$((i + 1))
done
echo "addr4: $(ip -4 -o addr show dev tap0 | awk "{print \$4}" | xargs)"
echo "route4: $(ip -4 route show default | sed "s/ *\$//")"
'
