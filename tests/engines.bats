#!/usr/bin/env bats
# tests/engines.bats - Debian 12's podman 4.3 and Docker 20.10 rootless, as
# the test user, with tapir as their slirp4netns: the recipes of
# docs/engines.md, exercised. Each test gets its own sandbox (a fresh
# "host"), its own scratch home and its own daemon; everything the
# containers reach is on the sandbox host (nginx on 127.0.0.1 and the
# sandbox addresses, dnsmasq on 127.0.0.1 as the host's resolver), and the
# image is busybox-static, imported, since there is no registry.
#
# No daemon is shared between tests: dockerd-rootless.sh answers `docker
# info` 1-2 s after it starts on the project's machines, so a daemon per
# test costs little, keeps the tests independent (each starts with its own
# rootlesskit settings), and the sandbox's pid namespace ends everything
# the test started. What is shared, made once in setup_file, is the
# image's root file system and the 100 MB file. The whole file takes about
# 30-45 s here.
#
# Helpers: tests/engines.bash (loaded inside the sandbox).

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib

# eng SNIPPET [ARGS...]: in_sandbox with tests/engines.bash loaded. Engines
# take longer than the other scenarios, so the bound is wider.
eng() {
	local script=$1
	shift
	SANDBOX_TIMEOUT=${ENGINES_TIMEOUT:-180} in_sandbox \
		'source "$TAPIR_ROOT/tests/engines.bash"
		'"$script" "$@"
}

# Once per file: what every test needs, checked, and the two files the
# tests share: the image's root file system (busybox-static and a symlink
# per applet, as `busybox --install -s` would make them) and 100 MB of
# random bytes with their sha256.
setup_file() {
	local cmd bb=/bin/busybox dir
	for cmd in podman runc conmon dockerd containerd rootlesskit \
		newuidmap nginx dnsmasq curl ss; do
		PATH=$PATH:/usr/sbin:/sbin command -v "$cmd" >/dev/null || {
			echo "engines: '$cmd' is missing (hack/install-deps.sh installs it)" >&2
			return 1
		}
	done
	[[ -x /usr/bin/docker && -x /usr/share/docker.io/contrib/dockerd-rootless.sh ]] || {
		echo "engines: docker.io is not installed (hack/install-deps.sh)" >&2
		return 1
	}
	# ldd fails on a static binary ("not a dynamic executable").
	if ldd "$bb" >/dev/null 2>&1; then
		echo "engines: $bb is not busybox-static (hack/install-deps.sh)" >&2
		return 1
	fi
	dir="$BATS_FILE_TMPDIR/rootfs"
	busybox_rootfs "$dir"
	export ENG_ROOTFS="$BATS_FILE_TMPDIR/rootfs.tar"
	tar -C "$dir" -cf "$ENG_ROOTFS" .
	export ENG_BIG="$BATS_FILE_TMPDIR/big"
	head -c 100M /dev/urandom >"$ENG_BIG"
	sha256sum <"$ENG_BIG" | cut -d" " -f1 >"$ENG_BIG.sha256"
}

# ---- podman -----------------------------------------------------------

@test "podman: tapir holds the tap, MTU 65520, HTTP to the host, 100 MB byte-exact" {
	run eng '
		engine_host
		want=$(engine_bigfile)
		podman_setup
		pod run -d --name c "$ENG_IMAGE" sh -c "$SERVE" >/dev/null
		pid=$(podman_tapir c)
		echo "tapir: $(tapir_args "$pid")"
		pod exec c ip -o link show tap0
		pod exec c wget -q -O- "http://$SANDBOX_HOST_IP4:8080/"
		got=$(pod exec c sh -c \
			"wget -q -O- http://$SANDBOX_HOST_IP4:8080/big | sha256sum")
		echo "big: got ${got%% *}, want $want"
		[[ "${got%% *}" == "$want" ]] && echo "big: byte-exact"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" =~ tap0:\ \<[A-Z_,]*UP[A-Z_,]*\>\ mtu\ 65520\  ]]
	has_line "tapir test page"
	has_line "big: byte-exact"
	# docs/engines.md quotes podman's command line: this one.
	local doc got
	doc=$(tr '\n' ' ' <"$TAPIR_ROOT/docs/engines.md" |
		grep -o '`tapir --disable-host-loopback [^`]*`' | tr -d '`')
	got=$(sed -n 's/^tapir: //p' <<<"$output" |
		sed -E "s|^[^ ]*/tapir |tapir |; s| /[^ ]*/netns/[^ ]* | NETNS |; s| +$||")
	echo "docs/engines.md: $doc"
	echo "podman runs:     $got"
	[ "$doc" = "$got" ]
}

@test "podman: 10.0.2.2 unreachable by default, host loopback with allow_host_loopback=true" {
	run eng '
		engine_host
		podman_setup
		pod run --rm "$ENG_IMAGE" sh -c \
			"nc -w 3 10.0.2.2 8080 </dev/null; echo default: \$?" 2>&1
		pod run --rm --network slirp4netns:allow_host_loopback=true \
			"$ENG_IMAGE" wget -q -O- http://10.0.2.2:8080/
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"(10.0.2.2): Network is unreachable"* ]]
	has_line "default: 1"
	has_line "tapir test page"
}

@test "podman: -p 127.0.0.1:PORT:80 through rootlessport, and through tapir with port_handler=slirp4netns" {
	run eng '
		podman_setup
		pod run -d --name a -p 127.0.0.1:18080:80 "$ENG_IMAGE" \
			sh -c "$SERVE" >/dev/null
		pod run -d --name b -p 127.0.0.1:18081:80 \
			--network slirp4netns:port_handler=slirp4netns \
			"$ENG_IMAGE" sh -c "$SERVE" >/dev/null
		for port in 18080 18081; do
			wait_for 10 curl -sf -o /dev/null "http://127.0.0.1:$port/"
			echo "$port: $(curl -sS "http://127.0.0.1:$port/") from $(listener "$port")"
		done
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "18080: container page from rootlessport"
	has_line "18081: container page from tapir"
}

@test "podman: DNS through 10.0.2.3 to the host's resolver" {
	run eng '
		engine_host
		podman_setup
		pod run --rm "$ENG_IMAGE" sh -c "
			head -n 1 /etc/resolv.conf
			nslookup host.tapir.test 10.0.2.3
			wget -q -O- http://host.tapir.test:8080/"
		echo "queries: $(grep -c "query\[A\] host.tapir.test" "$SCEN_DIR/dnsmasq.log")"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "nameserver 10.0.2.3"
	has_line "Address: 198.18.0.1"
	has_line "Address: fd18::1"
	has_line "tapir test page"
	[[ "$output" =~ queries:\ [1-9] ]]
}

@test "podman: IPv6 on by default: fd00::100 and SLAAC, HTTP to [fd18::1]" {
	run eng '
		engine_host
		podman_setup
		pod run -d --name c "$ENG_IMAGE" sh -c "$SERVE" >/dev/null
		pid=$(podman_tapir c)
		echo "tapir: $(tapir_args "$pid")"
		# The router advertisement comes within a second or so.
		wait_for 10 eval "pod exec c ip -6 addr show dev tap0 | grep -q dynamic"
		pod exec c ip -6 addr show dev tap0 scope global
		pod exec c ip -6 route show default
		pod exec c sh -c "printf \"GET / HTTP/1.0\r\n\r\n\" |
			nc -w 5 $SANDBOX_HOST_IP6 8080"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"tapir: "*" --enable-ipv6 "* ]]
	[[ "$output" =~ inet6\ fd00::100/64\ scope\ global ]]
	[[ "$output" =~ inet6\ fd00::[0-9a-f:]+/64\ scope\ global\ dynamic ]]
	[[ "$output" == *"default via fe80::2 dev tap0"* ]]
	has_line "tapir test page"
}

@test "podman: stopping the container stops tapir, nothing is left behind" {
	run eng '
		podman_setup
		pod run -d --name c -p 127.0.0.1:18080:80 "$ENG_IMAGE" \
			sh -c "$SERVE" >/dev/null
		pid=$(podman_tapir c)
		wait_for 10 curl -sf -o /dev/null http://127.0.0.1:18080/
		pod stop c >/dev/null
		wait_for 10 eval "! _scen_alive $pid" && echo "tapir: exited"
		# conmon and podman'"'"'s clean-up process need a moment.
		wait_for 10 eval "[[ -z \"\$(leftovers)\" ]]" || true
		echo "left: $(leftovers | xargs)"
		echo "tap holders: $(tap_holders | xargs)"
		echo "listening: $(ss -Hltn "sport = :18080" | xargs)"
		echo "netns: $(ls -A "$ENG_XDG/netns")"
		pod rm c >/dev/null
		echo "containers: $(pod ps -aq | xargs)"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "tapir: exited"
	has_line "left: "
	has_line "tap holders: "
	has_line "listening: "
	has_line "netns: "
	has_line "containers: "
}

# ---- Docker -------------------------------------------------------------

# docker_net_ok [VAR=VALUE...]: dockerd-rootless.sh with these extra
# DOCKERD_ROOTLESS_* settings: tapir holds the tap, tap0 has MTU 65520, and
# a container fetches the test page and 100 MB byte-exact from the host.
# Returns 0 or 1; `run`'s output is left for the caller's own checks.
docker_net_ok() {
	run eng '
		engine_host
		want=$(engine_bigfile)
		docker_start "$@"
		pid=$(docker_tapir)
		echo "tapir: $(tapir_args "$pid")"
		echo "seccomp: $(awk "/^Seccomp:/ {print \$2}" "/proc/$pid/status")"
		echo "mntns: $( [[ "$(readlink "/proc/$pid/ns/mnt")" == \
			"$(readlink /proc/self/ns/mnt)" ]] && echo host || echo own)"
		child=$(tr "\0" "\n" <"/proc/$pid/cmdline" | tail -n 2 | head -n 1)
		nsrun "$child" ip -o link show tap0
		dock run --rm "$ENG_IMAGE" sh -c "
			wget -q -O- http://$SANDBOX_HOST_IP4:8080/
			echo big: \$(wget -q -O- http://$SANDBOX_HOST_IP4:8080/big |
				sha256sum)"
		echo "want: $want"
	' "$@"
	echo "$output"
	[ "$status" -eq 0 ] || return 1
	[[ "$output" =~ tap0:\ \<[A-Z_,]*UP[A-Z_,]*\>\ mtu\ 65520\  ]] || return 1
	has_line "tapir test page" || return 1
	local got want
	got=$(sed -n 's/^big: \([0-9a-f]*\) .*/\1/p' <<<"$output")
	want=$(sed -n 's/^want: //p' <<<"$output")
	echo "sha256: got $got, want $want"
	[[ -n "$want" && "$got" == "$want" ]]
}

@test "docker: tapir holds the tap, MTU 65520, HTTP to the host, 100 MB byte-exact" {
	docker_net_ok
	[[ "$output" == *"tapir: "*" --mtu 65520 "* ]]
}

@test "docker: 10.0.2.2 unreachable (dockerd-rootless.sh disables host loopback)" {
	run eng '
		engine_host
		docker_start
		dock run --rm "$ENG_IMAGE" sh -c \
			"nc -w 3 10.0.2.2 8080 </dev/null; echo status: \$?" 2>&1
		echo "tapir: $(tapir_args "$(docker_tapir)")"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"(10.0.2.2): Network is unreachable"* ]]
	has_line "status: 1"
	[[ "$output" == *"tapir: "*" --disable-host-loopback "* ]]
}

@test "docker: DNS through 10.0.2.3 to the host's resolver" {
	run eng '
		engine_host
		docker_start
		dock run --rm "$ENG_IMAGE" sh -c "
			cat /etc/resolv.conf
			nslookup host.tapir.test 10.0.2.3
			wget -q -O- http://host.tapir.test:8080/"
		echo "queries: $(grep -c "query\[A\] host.tapir.test" "$SCEN_DIR/dnsmasq.log")"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "nameserver 10.0.2.3"
	has_line "Address: 198.18.0.1"
	has_line "tapir test page"
	[[ "$output" =~ queries:\ [1-9] ]]
}

# docker_port_ok DRIVER LISTENER: -p 127.0.0.1:18080:80 with
# DOCKERD_ROOTLESS_ROOTLESSKIT_PORT_DRIVER=DRIVER serves the container's
# page, and LISTENER is the process that listens on the host.
docker_port_ok() {
	run eng '
		docker_start DOCKERD_ROOTLESS_ROOTLESSKIT_PORT_DRIVER="$1"
		dock run -d -p 127.0.0.1:18080:80 "$ENG_IMAGE" sh -c "$SERVE" \
			>/dev/null
		wait_for 10 curl -sf -o /dev/null http://127.0.0.1:18080/
		echo "18080: $(curl -sS http://127.0.0.1:18080/) from $(listener 18080)"
	' "$1"
	echo "$output"
	[ "$status" -eq 0 ] || return 1
	has_line "18080: container page from $2"
}

@test "docker: -p 127.0.0.1:PORT:80 with the builtin port driver" {
	docker_port_ok builtin rootlesskit
}

@test "docker: -p 127.0.0.1:PORT:80 with PORT_DRIVER=slirp4netns, through tapir" {
	docker_port_ok slirp4netns tapir
}

@test "docker: stopping dockerd stops tapir and the containers, nothing is left behind" {
	run eng '
		docker_start
		dock run -d --stop-timeout 5 -p 127.0.0.1:18080:80 "$ENG_IMAGE" \
			sh -c "$SERVE" >/dev/null
		pid=$(docker_tapir)
		wait_for 10 curl -sf -o /dev/null http://127.0.0.1:18080/
		# containerd may leave a dump of its goroutines there,
		# containerd.PID.stacks.log (seen once, under ASan on a loaded
		# machine): diagnostics of containerd, not a state dir.
		echo "state dirs: $(ls -A "$ENG_TMP" | grep -v "\.stacks\.log$" | xargs)"
		docker_stop
		_scen_alive "$pid" || echo "tapir: exited"
		echo "left: $(user_procs | xargs)"
		echo "tap holders: $(tap_holders | xargs)"
		echo "listening: $(ss -Hltn "sport = :18080" | xargs)"
		echo "state dirs: $(ls -A "$ENG_TMP" | grep -v "\.stacks\.log$" | xargs)"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" =~ state\ dirs:\ rootlesskit[0-9]+ ]]
	has_line "tapir: exited"
	has_line "left: "
	has_line "tap holders: "
	has_line "listening: "
	has_line "state dirs: "
}

# rootlesskit refuses `..._SANDBOX=true` and `..._SECCOMP=true` with a
# binary whose --help lacks --enable-sandbox / --enable-seccomp; these run
# once tapir has them.
@test "docker: DOCKERD_ROOTLESS_ROOTLESSKIT_SLIRP4NETNS_SANDBOX=true" {
	"$TAPIR_BIN" --help | grep -q -- --enable-sandbox ||
		skip "tapir has no --enable-sandbox yet"
	docker_net_ok DOCKERD_ROOTLESS_ROOTLESSKIT_SLIRP4NETNS_SANDBOX=true
	[[ "$output" == *"tapir: "*" --enable-sandbox "* ]]
	has_line "mntns: own"
}

@test "docker: DOCKERD_ROOTLESS_ROOTLESSKIT_SLIRP4NETNS_SECCOMP=true" {
	"$TAPIR_BIN" --help | grep -q -- --enable-seccomp ||
		skip "tapir has no --enable-seccomp yet"
	docker_net_ok DOCKERD_ROOTLESS_ROOTLESSKIT_SLIRP4NETNS_SECCOMP=true
	[[ "$output" == *"tapir: "*" --enable-seccomp "* ]]
	has_line "seccomp: 2"
}
