# shellcheck shell=bash
# tests/pasta.bash - Debian 13's podman 5.4 and Docker 26 in the trixie
# root (hack/trixie-root.sh), with tapir or trixie's own pasta as their
# pasta, for tests/pasta.bats. Sourced INSIDE the sandbox, after
# tests/scenario.bash.
#
# Each engine scenario is one script that runs inside one
# `hack/trixie-root.sh run` as the test user (each run is a boot: the
# engine's state does not outlive it), in the background; the test talks
# to it through files in $PT_DIR, a directory under /tmp, which the root
# shares:
#   the scenario writes $PT_DIR/ready when the containers are up, then
#   waits (up to 90 s) for $PT_DIR/go-on, which the test writes once it
#   checked the published ports from the sandbox host; the scenario then
#   removes its containers and writes $PT_DIR/finished.
#
#   pt_host              nginx with the test page (and /big, 100 MB) on
#                        $SANDBOX_HOST_IP4:8080, 127.0.0.1:8085 and
#                        [fd18::7]:8080 (an IPv6 neighbour of the host's
#                        fd18::1/64, which containers copy and shadow),
#                        dnsmasq on 127.0.0.1:53 (the host's resolver)
#                        and $SANDBOX_HOST_IP4:53 (a UDP service of the
#                        host's); prints the sha256 of /big
#   pt_engine DRIVER SCRIPT
#                        start SCRIPT (bash, run as the test user in the
#                        root, with $PT_DIR, $IMG, $SERVE and $PASTA_DIR
#                        exported); DRIVER "tapir" points podman's
#                        helper_binaries_dir (and Docker's --pasta-binary)
#                        at a link named pasta to $TAPIR_BIN, "pasta"
#                        leaves trixie's own
#   pt_wait FILE [SECS]  wait for $PT_DIR/FILE, showing the scenario's log
#                        if it does not come
#   pt_holder IFNAME     "PID EXE" of the process holding tap IFNAME
#   pt_done              write go-on and wait for finished
#   pt_finish            pt_done, then what is left: after.txt, and the
#                        test user's processes once the engine ended
#   pt_netns_file SCRIPT run SCRIPT (bash) as the test user, root in a user
#                        and mount namespace of its own, as podman runs
#                        pasta, with $d set to $SCEN_DIR and $d/ns/netns a
#                        bind mount of a new network namespace, as podman's
#                        netns files are; TAPIR_* variables reach it

PT_DIR=$SCEN_DIR/pt
PT_ROOT=${TRIXIE_ROOT:-/var/cache/tapir/trixie/root}
# shellcheck disable=SC2034 # used by the scenarios
IMG=localhost/tapir-bb
# A container's web server (busybox httpd on 80) and UDP echo (on 9999).
# shellcheck disable=SC2034 # used by the scenarios
SERVE='mkdir -p /www && echo "container page" >/www/index.html &&
httpd -p 80 -h /www && (udpecho 9999 &) && trap "exit 0" TERM &&
while :; do sleep 1 & wait $!; done'

pt_host() {
	ip -6 addr add fd18::7/128 dev lo nodad
	nginx_start web "$SANDBOX_HOST_IP4:8080" 127.0.0.1:8085 "[fd18::7]:8080"
	ln "$PASTA_BIG" "$SCEN_DIR/web/www/big" 2>/dev/null ||
		cp "$PASTA_BIG" "$SCEN_DIR/web/www/big"
	bg_start dnsmasq dnsmasq --no-daemon --port=53 \
		--listen-address=127.0.0.1 --listen-address="$SANDBOX_HOST_IP4" \
		--bind-interfaces --no-resolv --no-hosts --user=root \
		--address="/host.tapir.test/$SANDBOX_HOST_IP4"
	wait_for 5 bash -c "ss -Hlun | grep -q 127.0.0.1:53"
	sha256sum <"$PASTA_BIG" | cut -d" " -f1
}

pt_engine() { # DRIVER SCRIPT
	local driver=$1 script=$2 home conf
	home=$PT_DIR/home
	mkdir -p "$PT_DIR/bin" "$home/.config/containers" "$PT_DIR/xdg"
	chmod 0777 "$PT_DIR"
	chmod 0755 "$PT_DIR/bin"
	chmod 0700 "$PT_DIR/xdg"
	export PASTA_DIR=""
	if [[ "$driver" == tapir ]]; then
		cp "$TAPIR_BIN" "$PT_DIR/bin/tapir"
		chmod 0755 "$PT_DIR/bin/tapir"
		ln -s tapir "$PT_DIR/bin/pasta"
		PASTA_DIR=$PT_DIR/bin
	fi
	conf=$home/.config/containers
	{
		echo '[engine]'
		echo 'runtime = "runc"'
		echo 'cgroup_manager = "cgroupfs"'
		echo 'events_logger = "file"'
		# The list replaces podman's own: keep its two directories.
		[[ -n "$PASTA_DIR" ]] &&
			echo "helper_binaries_dir = [\"$PASTA_DIR\", \"/usr/libexec/podman\", \"/usr/lib/podman\"]"
	} >"$conf/containers.conf"
	printf '[storage]\ndriver = "vfs"\n' >"$conf/storage.conf"
	cp "$PASTA_ROOTFS" "$PT_DIR/rootfs.tar"
	printf '%s\n' "$script" >"$PT_DIR/scenario.sh"
	chown -R "$TAPIR_TEST_USER:" "$PT_DIR"
	export PT_DIR IMG SERVE
	# The scratch directory at the same path inside, wherever TMPDIR is;
	# a sanitized tapir (make check-asan) brings Debian 12's runtimes.
	bg_start engine env TRIXIE_BINDS="$PT_DIR $(pt_sanitizer_libs)" \
		"$TAPIR_ROOT/hack/trixie-root.sh" run "$PT_ROOT" -- \
		setpriv --reuid="$(id -u "$TAPIR_TEST_USER")" \
		--regid="$(id -g "$TAPIR_TEST_USER")" --init-groups \
		env -i HOME="$home" XDG_RUNTIME_DIR="$PT_DIR/xdg" \
		PATH=/usr/sbin:/usr/bin:/sbin:/bin TMPDIR="$PT_DIR" \
		PODMAN_IGNORE_CGROUPSV1_WARNING=1 PT_DIR="$PT_DIR" IMG="$IMG" \
		SERVE="$SERVE" PASTA_DIR="$PASTA_DIR" \
		SANDBOX_HOST_IP4="$SANDBOX_HOST_IP4" \
		bash -eu "$PT_DIR/scenario.sh"
}

# pt_sanitizer_libs: the sanitizer runtimes $TAPIR_BIN links, as
# TRIXIE_BINDS words; trixie's glibc runs Debian 12's builds of them.
pt_sanitizer_libs() {
	ldd "$TAPIR_BIN" 2>/dev/null |
		awk '$1 ~ /^lib(a|ub|t)san\.so/ && $3 ~ /^\// { print $3 }' |
		xargs
}

pt_wait() { # FILE [SECS]
	if ! wait_for "${2:-90}" test -e "$PT_DIR/$1"; then
		echo "pt_wait: no $1; the engine's log:" >&2
		tail -n 40 "$SCEN_DIR/engine.log" >&2
		return 1
	fi
}

pt_holder() { # IFNAME
	tap_holders "$1"
}

pt_done() {
	touch "$PT_DIR/go-on"
	pt_wait finished 60
}

pt_finish() {
	pt_done
	cat "$PT_DIR/after.txt"
	wait_for 10 bash -c "! kill -0 $(bg_pid engine) 2>/dev/null"
	echo "user left: $(ps -u "$TAPIR_TEST_USER" -o comm= | xargs)"
}

pt_netns_file() { # SCRIPT
	mkdir -m 0777 -p "$SCEN_DIR/ns"
	# shellcheck disable=SC2016 # expanded by the inner bash
	as_user unshare -rm --propagation private bash -c '
		set -e
		d=$1
		unshare -n sleep 600 &
		holder=$!
		for i in $(seq 50); do
			[ "$(readlink "/proc/$holder/ns/net")" != \
				"$(readlink /proc/self/ns/net)" ] && break
			sleep 0.1
		done
		touch "$d/ns/netns"
		mount --bind "/proc/$holder/ns/net" "$d/ns/netns"
		eval "$2"
		kill "$holder"' bash "$SCEN_DIR" "$1"
}
