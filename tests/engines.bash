# shellcheck shell=bash
# tests/engines.bash - podman and Docker rootless with tapir as their
# slirp4netns, for tests/engines.bats. Sourced INSIDE the sandbox, after
# tests/scenario.bash, so the helpers there (as_user, bg_start, wait_for,
# nginx_start, nsrun, tap_holders) are at hand.
#
# tests/engines.bats makes, once per file, $ENG_ROOTFS (a tar of
# busybox-static and its applet links: the image, since there is no
# registry) and $ENG_BIG.
#
# The engines run as $TAPIR_TEST_USER with a scratch home, runtime and temp
# directory under $SCEN_DIR, so nothing they write outlives the test and the
# user's real home is never touched. What each engine needs on a Debian 12
# machine (docs/engines.md says why):
#   podman   ~/.config/containers/containers.conf: runtime = "runc" (crun
#            1.8 refuses the hybrid cgroup layout), cgroup_manager =
#            "cgroupfs" and events_logger = "file" (no systemd session),
#            network_cmd_path = tapir; storage.conf: driver = "vfs"
#   Docker   dockerd-rootless.sh from docker.io's contrib directory, with
#            DOCKERD_ROOTLESS_ROOTLESSKIT_NET=slirp4netns, _MTU=65520 and
#            _FLAGS=--slirp4netns-binary=tapir; dockerd --storage-driver=vfs;
#            a normal user's PATH and /usr/sbin; the client as
#            /usr/bin/docker (another `docker` may come first on PATH)
#
#   engine_host          the sandbox host's services: nginx with the test
#                        page on 127.0.0.1:8080, $SANDBOX_HOST_IP4:8080 and
#                        [$SANDBOX_HOST_IP6]:8080; dnsmasq on 127.0.0.1:53
#                        (the host's resolver) answering host.tapir.test with
#                        the sandbox addresses, and nothing else
#   engine_bigfile       $ENG_BIG (100 MB of random bytes) served as /big;
#                        prints its sha256 ($ENG_BIG.sha256)
#   podman_setup         the scratch home's podman configuration, and the
#                        image $ENG_IMAGE imported from $ENG_ROOTFS
#   pod ARGS...          podman as the test user, with the scratch home
#   podman_tapir NAME    pid of the tapir serving container NAME, once its
#                        tap holder is tapir and tapir's netns argument is
#                        the container's (fails otherwise)
#   docker_start [VAR=VALUE...]
#                        dockerd-rootless.sh as the test user, with the
#                        DOCKERD_ROOTLESS_* variables given (on top of the
#                        recipe's), waited for, and $ENG_IMAGE imported
#                        (if $ENG_ROOTFS is set)
#   dock ARGS...         /usr/bin/docker as the test user, on that daemon
#   docker_tapir         pid of the tapir serving dockerd, checked the same
#                        way (its namespace argument is dockerd's netns)
#   docker_stop          SIGTERM to rootlesskit only (as systemd's
#                        KillMode=mixed), then wait up to 30 s for it to exit
#   user_procs           the test user's processes, "PID COMM" a line
#   leftovers            the same without podman's pause process
#   listener PORT        the name of the process listening on TCP PORT
#   tapir_args PID       tapir's command line
#
# On exit, every process of the test user in the sandbox is killed (by
# pid) before scenario.bash removes $SCEN_DIR.
#
# $SERVE is a container command: busybox httpd on port 80 with a page that
# says "container page", which ends at once on SIGTERM.

ENG_IMAGE=localhost/tapir-bb
ENG_HOME=$SCEN_DIR/home
ENG_XDG=$SCEN_DIR/xdg
ENG_TMP=$SCEN_DIR/usertmp
# shellcheck disable=SC2034 # used by the tests' snippets
SERVE='mkdir -p /www && echo "container page" >/www/index.html &&
httpd -p 80 -h /www && trap "exit 0" TERM &&
while :; do sleep 1 & wait $!; done'
DOCKERD_ROOTLESS=/usr/share/docker.io/contrib/dockerd-rootless.sh
# A normal user's PATH on Debian 12 (/etc/profile's), which docs/engines.md's
# Docker recipe starts from and adds /usr/sbin to (dockerd is there).
ENG_USER_PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games

_eng_dirs() {
	mkdir -p "$ENG_HOME" "$ENG_XDG" "$ENG_TMP"
	chmod 0700 "$ENG_XDG"
	chown -R "$TAPIR_TEST_USER:" "$ENG_HOME" "$ENG_XDG" "$ENG_TMP"
}

# _eng_user CMD...: CMD as the test user with the scratch directories.
_eng_user() {
	as_user env HOME="$ENG_HOME" XDG_RUNTIME_DIR="$ENG_XDG" \
		TMPDIR="$ENG_TMP" "$@"
}

engine_host() {
	nginx_start web 127.0.0.1:8080 "$SANDBOX_HOST_IP4:8080" \
		"[$SANDBOX_HOST_IP6]:8080"
	bg_start dnsmasq dnsmasq --no-daemon --port=53 \
		--listen-address=127.0.0.1 --bind-interfaces --no-resolv \
		--no-hosts --user=root --log-queries --log-facility=- \
		--address="/host.tapir.test/$SANDBOX_HOST_IP4" \
		--address="/host.tapir.test/$SANDBOX_HOST_IP6"
	wait_for 5 bash -c "ss -Hlun | grep -q 127.0.0.1:53"
}

# _eng_share FILE NAME: FILE (made once per bats file, in a directory the
# test user cannot enter) as $SCEN_DIR/NAME, hard-linked where possible.
_eng_share() {
	ln -f "$1" "$SCEN_DIR/$2" 2>/dev/null || cp "$1" "$SCEN_DIR/$2"
	chmod 0644 "$SCEN_DIR/$2"
}

engine_bigfile() {
	_eng_share "$ENG_BIG" web/www/big
	cat "$ENG_BIG.sha256"
}

pod() {
	_eng_user podman "$@"
}

podman_setup() {
	_eng_dirs
	_eng_share "$ENG_ROOTFS" rootfs.tar
	local conf="$ENG_HOME/.config/containers"
	mkdir -p "$conf"
	cat >"$conf/containers.conf" <<-EOF
		[engine]
		runtime = "runc"
		cgroup_manager = "cgroupfs"
		events_logger = "file"
		network_cmd_path = "$TAPIR_BIN"
	EOF
	printf '[storage]\ndriver = "vfs"\n' >"$conf/storage.conf"
	chown -R "$TAPIR_TEST_USER:" "$ENG_HOME"
	pod import "$SCEN_DIR/rootfs.tar" "$ENG_IMAGE" >/dev/null
}

# _eng_one_tapir: the pid of the one process holding tap0, if that is
# $TAPIR_BIN; fails, saying what holds it, otherwise.
_eng_one_tapir() {
	local holders want
	holders=$(tap_holders tap0)
	want=$(readlink -f "$TAPIR_BIN")
	if [[ $(wc -l <<<"$holders") -ne 1 || "${holders#* }" != "$want" ]]; then
		echo "tap0 holders: '$holders', expected one: $want" >&2
		return 1
	fi
	echo "${holders%% *}"
}

podman_tapir() { # NAME
	local pid netns
	netns=$(pod inspect -f '{{.NetworkSettings.SandboxKey}}' "$1")
	pid=$(_eng_one_tapir) || return 1
	# podman names the container's netns by path (--netns-type=path).
	if ! tr '\0' '\n' <"/proc/$pid/cmdline" | grep -qxF -- "$netns"; then
		echo "tapir $pid does not serve $netns: $(tr '\0' ' ' <"/proc/$pid/cmdline")" >&2
		return 1
	fi
	echo "$pid"
}

dock() {
	_eng_user env DOCKER_HOST="unix://$ENG_XDG/docker.sock" \
		/usr/bin/docker "$@"
}

docker_start() { # [VAR=VALUE...]
	_eng_dirs
	bg_start_user dockerd env HOME="$ENG_HOME" \
		PATH="$ENG_USER_PATH:/usr/sbin" \
		XDG_RUNTIME_DIR="$ENG_XDG" TMPDIR="$ENG_TMP" \
		DOCKERD_ROOTLESS_ROOTLESSKIT_NET=slirp4netns \
		DOCKERD_ROOTLESS_ROOTLESSKIT_MTU=65520 \
		DOCKERD_ROOTLESS_ROOTLESSKIT_FLAGS="--slirp4netns-binary=$TAPIR_BIN" \
		"$@" "$DOCKERD_ROOTLESS" --storage-driver=vfs
	if ! wait_for 60 eval 'dock info >/dev/null 2>&1'; then
		echo "dockerd did not start; its log:" >&2
		tail -n 30 "$SCEN_DIR/dockerd.log" >&2
		return 1
	fi
	# hack/docker-check.sh brings its own images.
	[[ -z "${ENG_ROOTFS:-}" ]] && return 0
	_eng_share "$ENG_ROOTFS" rootfs.tar
	dock import "$SCEN_DIR/rootfs.tar" "$ENG_IMAGE" >/dev/null
}

docker_tapir() {
	local pid child dockerd
	pid=$(_eng_one_tapir) || return 1
	# rootlesskit passes its child's pid, then the tap's name.
	child=$(tr '\0' '\n' <"/proc/$pid/cmdline" | tail -n 2 | head -n 1)
	dockerd=$(cat "$ENG_XDG/docker.pid")
	if [[ "$(readlink "/proc/$child/ns/net")" != "$(readlink "/proc/$dockerd/ns/net")" ]]; then
		echo "tapir $pid serves pid $child, not dockerd's netns" >&2
		return 1
	fi
	echo "$pid"
}

docker_stop() {
	local rk
	rk=$(bg_pid dockerd)
	kill -TERM "$rk"
	wait_for 30 eval '! _scen_alive '"$rk"
}

user_procs() {
	ps -u "$TAPIR_TEST_USER" -o pid=,comm= || true
}

# leftovers: the test user's processes but podman's pause process (which
# holds podman's user namespace for the next command, by design).
leftovers() {
	local pause
	pause=$(cat "$ENG_XDG/libpod/tmp/pause.pid" 2>/dev/null) || pause=
	user_procs | awk -v p="$pause" '$1 != p'
}

# listener PORT: the name of the process listening on TCP PORT here.
listener() {
	ss -Hltnp "sport = :$1" | grep -o 'users:(("[^"]*"' | cut -d'"' -f2
}

# tapir_args PID: tapir's command line, one line.
tapir_args() {
	tr '\0' ' ' <"/proc/$1/cmdline"
	echo
}

# _eng_exit: before scenario.bash's clean-up, end what the engines leave
# running outside any process group it knows (conmon, containerd shims,
# containers, podman's pause process), by pid: all of the test user's
# processes in this sandbox are the test's. Otherwise they may still write
# into $SCEN_DIR while it is removed.
_eng_exit() {
	local rc=$? i pids
	for ((i = 0; i < 20; i++)); do
		pids=$(ps -u "$TAPIR_TEST_USER" -o pid= | xargs) || true
		[[ -n "$pids" ]] || break
		# shellcheck disable=SC2086 # one word per pid
		kill -KILL $pids 2>/dev/null || true
		sleep 0.1
	done
	(exit "$rc")
	_scen_exit
}
trap _eng_exit EXIT
