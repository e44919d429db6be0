#!/usr/bin/env bats
# tests/rootlesskit.bats - Debian's rootlesskit 1.1.0, as the test user,
# with tapir as its slirp4netns: its probe accepts tapir, the command inside
# reaches the gateway at MTU 1500 and 65520, tap0 carries tapir's MTU and
# queue length, and nothing of tapir outlives rootlesskit.

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib

# What the command inside rootlesskit prints: its tap and routes, then one
# ping of the gateway.
# shellcheck disable=SC2034 # used inside the sandbox
INSIDE='
	ip -d link show tap0
	echo "addr4: $(ip -4 -o addr show dev tap0 | awk "{print \$4}" | xargs)"
	echo "route4: $(ip -4 route show default | sed "s/ *\$//")"
	sed "s/^/resolv: /" /etc/resolv.conf
	ping -c1 -W2 "$1"
'

# left_behind: the test user's processes, one a line (there should be none
# once rootlesskit has exited).
left_behind() {
	ps -u "$TAPIR_TEST_USER" -o pid=,args= || true
}

# sbx SNIPPET [ARGS...]: in_sandbox with the helpers above defined,
# and TMPDIR (rootlesskit's state dirs) in $SCEN_DIR.
sbx() {
	local script=$1
	shift
	in_sandbox "$(declare -f left_behind)
		mkdir -m 0777 \"\$SCEN_DIR/tmp\"
		export TMPDIR=\$SCEN_DIR/tmp
		$script" "$@"
}

# rootlesskit_ok MTU: rootlesskit at this MTU, as the test user, pings the
# gateway and shows the tap; checks what that output says.
rootlesskit_ok() {
	local mtu=$1
	run sbx '
		as_user rootlesskit --net=slirp4netns \
			--slirp4netns-binary="$TAPIR_BIN" --mtu="$1" \
			--disable-host-loopback -- ping -c1 -W2 10.0.2.2
		as_user rootlesskit --net=slirp4netns \
			--slirp4netns-binary="$TAPIR_BIN" --mtu="$1" \
			--disable-host-loopback -- sh -c "$2" sh 10.0.2.2
		echo "left: $(left_behind | xargs)"
		echo "state dirs: $(ls -A "$TMPDIR")"
	' "$mtu" "$INSIDE"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c ', 1 received' <<<"$output")" -eq 2 ]
	[[ "$(grep -E '^[0-9]+: tap0:' <<<"$output")" =~ \<[A-Z_,]*,UP,LOWER_UP\>\ mtu\ $mtu\ .*\ qlen\ ([0-9]+)$ ]]
	# rootlesskit leaves qlen at 1000; tapir sizes it.
	((BASH_REMATCH[1] > 1000))
	[[ "$output" == *"tun type tap pi off vnet_hdr on"* ]]
	has_line "addr4: 10.0.2.100/24"
	has_line "route4: default via 10.0.2.2 dev tap0"
	has_line "left: "
	has_line "state dirs: "
}

@test "rootlesskit --mtu=1500: ping 10.0.2.2; tap0 has MTU 1500, qlen > 1000" {
	rootlesskit_ok 1500
}

@test "rootlesskit --mtu=65520: ping 10.0.2.2; tap0 has MTU 65520, qlen > 1000" {
	rootlesskit_ok 65520
}

@test "rootlesskit --cidr --ipv6 --copy-up=/etc, as dockerd-rootless.sh" {
	run sbx '
		as_user rootlesskit --net=slirp4netns \
			--slirp4netns-binary="$TAPIR_BIN" --mtu=65520 \
			--slirp4netns-sandbox=auto --slirp4netns-seccomp=auto \
			--disable-host-loopback --cidr=10.0.7.0/24 --ipv6 \
			--copy-up=/etc --copy-up=/run --propagation=rslave \
			-- sh -c "$1" sh 10.0.7.2
		echo "left: $(left_behind | xargs)"
	' "$INSIDE"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *", 1 received"* ]]
	has_line "addr4: 10.0.7.100/24"
	has_line "route4: default via 10.0.7.2 dev tap0"
	has_line "resolv: nameserver 10.0.7.3"
	has_line "left: "
}

@test "rootlesskit probe: accepts tapir, and its sandbox and seccomp flags" {
	run sbx '
		# The probe rootlesskit runs, twice, stdout and stderr together.
		for i in 1 2; do
			as_user "$TAPIR_BIN" --help >"$SCEN_DIR/help" 2>&1
			grep -c -- --netns-type "$SCEN_DIR/help"
		done
		for opt in sandbox seccomp; do
			rc=0
			as_user rootlesskit --net=slirp4netns \
				--slirp4netns-binary="$TAPIR_BIN" \
				--disable-host-loopback \
				--slirp4netns-"$opt"=true -- true 2>&1 || rc=$?
			echo "$opt=true: $rc"
		done
		echo "left: $(left_behind | xargs)"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" -ge 1 ]
	[ "${lines[1]}" -ge 1 ]
	has_line "sandbox=true: 0"
	has_line "seccomp=true: 0"
	has_line "left: "
}

@test "rootlesskit --port-driver=slirp4netns: -p is added over the API socket" {
	run sbx '
		bg_start_user rk rootlesskit --net=slirp4netns \
			--slirp4netns-binary="$TAPIR_BIN" --disable-host-loopback \
			--port-driver=slirp4netns -p 127.0.0.1:18081:80/tcp \
			-- sleep 30
		# rootlesskit asks for the forward right after tapir is ready.
		wait_for 5 eval "ss -Hltnp \"sport = :18081\" | grep -q tapir"
		ss -Hltnp "sport = :18081" | awk "{print \$4}"
		bg_stop rk
		echo "left: $(left_behind | xargs)"
		echo "state dirs: $(ls -A "$TMPDIR")"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "127.0.0.1:18081"
	has_line "left: "
	has_line "state dirs: "
}
