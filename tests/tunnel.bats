#!/usr/bin/env bats
# tests/tunnel.bats - kernel tunnels inside tapir namespaces: a VXLAN overlay
# between two `tapir run` namespaces on one sandbox host, laid out as
# usernetes lays out flannel across hosts (each namespace publishes its
# VXLAN port through tapir and sends to the other one through tapir), with
# tapir's default offloads.
#
# The guests' kernels leave the inner TCP and UDP checksums to the tap
# (VIRTIO_NET_HDR_F_NEEDS_CSUM pointing inside the UDP payload); tapir must
# finish them before the datagram leaves, or the far side drops it.

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib

# Sets up, inside the sandbox: $SCEN_DIR/blob (10 MB), $SCEN_DIR/vx.sh
# (run in a guest: vx.sh INNER-ADDR REMOTE FAR-PORT makes vx0, VNI 42, MTU
# 1450, listening on 4789, whose frames go to REMOTE:FAR-PORT),
# $SCEN_DIR/csum.awk
# (the InCsumErrors of Tcp and Udp in /proc/net/snmp, summed),
# $SCEN_DIR/xfer.sh (serve_blob and fetch_and_upload, both ends of the blob
# transfers); with TUNNEL_SETUP also guest B
# in the background: 10.99.0.2, far port 4789, published on host port
# 4790, serving the blob on TCP 7000, taking an upload on 7001 and echoing
# UDP on 7002, writing $SCEN_DIR/b.csum once $SCEN_DIR/a.done appears.
TUNNEL_FILES='
	head -c "$BLOB_BYTES" /dev/urandom >"$SCEN_DIR/blob"
	chmod 644 "$SCEN_DIR/blob"
	cat >"$SCEN_DIR/vx.sh" <<-"EOF"
		ip link add vx0 type vxlan id 42 dstport 4789 nolearning
		ip link set vx0 mtu 1450 up
		ip addr add "$1/24" dev vx0
		bridge fdb append 00:00:00:00:00:00 dev vx0 dst "$2" port "$3"
	EOF
	cat >"$SCEN_DIR/csum.awk" <<-"EOF"
		/^(Tcp|Udp):/ {
			if (!(($1) in names)) {
				names[$1] = 1
				for (i = 2; i <= NF; i++)
					field[$1, i] = $i
				next
			}
			for (i = 2; i <= NF; i++)
				if (field[$1, i] == "InCsumErrors")
					sum += $i
		}
		END { print sum + 0 }
	EOF
	cat >"$SCEN_DIR/xfer.sh" <<-"EOF"
		# Sourced by the guests, with d=$SCEN_DIR.
		serve_blob() { # serve the blob on 7000 once, take an upload on
			# 7001 into up.sha; $up is the upload pipeline
			socat -u FILE:"$d/blob" TCP-LISTEN:7000,bind=10.99.0.2,reuseaddr &
			(timeout 90 socat -u TCP-LISTEN:7001,bind=10.99.0.2,reuseaddr - |
				sha256sum >"$d/up.sha") &
			up=$!
		}
		fetch_and_upload() { # the other side of serve_blob
			echo "down $(timeout 60 socat -u TCP:10.99.0.2:7000 - |
				sha256sum | cut -d" " -f1)"
			timeout 60 socat -u FILE:"$d/blob" TCP:10.99.0.2:7001
			echo "upload rc=$?"
			# What socat left in flight dies with this namespace.
			for i in $(seq 300); do
				[ -s "$d/up.sha" ] && break
				sleep 0.1
			done
		}
	EOF
'
TUNNEL_SETUP='
	BLOB_BYTES=10000000
	'"$TUNNEL_FILES"'
	cat >"$SCEN_DIR/guest-b.sh" <<-"EOF"
		set -e
		d=$1
		. "$d/xfer.sh"
		bash "$d/vx.sh" 10.99.0.2 198.18.0.1 4789
		serve_blob
		socat UDP-RECVFROM:7002,bind=10.99.0.2,fork EXEC:cat &
		touch "$d/b.ready"
		for i in $(seq 600); do
			[ -e "$d/a.done" ] && break
			sleep 0.1
		done
		# The upload may still be arriving: the namespace ends with us.
		wait "$up"
		awk -f "$d/csum.awk" /proc/net/snmp >"$d/b.csum"
	EOF
	bg_start_user b "$TAPIR_BIN" run -p 4790:4789/udp -- \
		bash "$SCEN_DIR/guest-b.sh" "$SCEN_DIR"
	wait_for 10 test -e "$SCEN_DIR/b.ready"
'

@test "tunnel: a VXLAN overlay between two tapir namespaces carries 10 MB each way byte-exact, UDP too, with correct inner checksums" {
	run in_sandbox "$TUNNEL_SETUP"'
		echo "blob $(sha256sum <"$SCEN_DIR/blob" | cut -d" " -f1)"
		cat >"$SCEN_DIR/guest-a.sh" <<-"EOF"
			d=$1
			. "$d/xfer.sh"
			bash "$d/vx.sh" 10.99.0.1 198.18.0.1 4790
			fetch_and_upload
			for t in 1 2 3; do
				r=$(echo overlay-udp |
					timeout 5 socat -t3 -T3 - UDP:10.99.0.2:7002)
				[ -n "$r" ] && break
			done
			echo "udp $r"
			echo "a csum errors $(awk -f "$d/csum.awk" /proc/net/snmp)"
			touch "$d/a.done"
		EOF
		as_user "$TAPIR_BIN" run -p 4789:4789/udp -- \
			bash "$SCEN_DIR/guest-a.sh" "$SCEN_DIR"
		wait_for 10 test -s "$SCEN_DIR/up.sha"
		wait_for 10 test -s "$SCEN_DIR/b.csum"
		echo "up $(cut -d" " -f1 "$SCEN_DIR/up.sha")"
		echo "b csum errors $(cat "$SCEN_DIR/b.csum")"
		bg_stop b
	'
	echo "$output"
	[ "$status" -eq 0 ]
	local sum
	sum=$(sed -n 's/^blob //p' <<<"$output")
	[ -n "$sum" ]
	has_line "down $sum"
	has_line "upload rc=0"
	has_line "up $sum"
	has_line "udp overlay-udp"
	# Neither kernel dropped an inner segment or datagram as corrupt.
	has_line "a csum errors 0"
	has_line "b csum errors 0"
}

# A second sandbox host, "host B", in a network namespace of its own joined
# to the sandbox ("host A") by a veth: 198.19.0.1 on A, 198.19.0.2 on B.
# On each host a `tapir run` namespace publishes UDP 8472 (flannel's VXLAN
# port) and runs vx0 toward the other host's 8472. Guest B serves the blob
# on 7000, takes an upload on 7001 and pings guest A once guest A is up;
# guest A pings B, downloads and uploads. Run with $1 queues.
TWO_HOSTS='
	BLOB_BYTES=$((100 * 1000 * 1000))
	'"$TUNNEL_FILES"'
	bg_start hostb unshare --net sleep 600
	hb=$(bg_pid hostb)
	wait_for 5 _scen_other_netns "$hb"
	ip link add hA type veth peer name hB
	ip link set hB netns "$hb"
	ip addr add 198.19.0.1/24 dev hA
	ip link set hA up
	nsenter -t "$hb" -n sh -c "ip link set lo up &&
		ip addr add 198.19.0.2/24 dev hB && ip link set hB up"
	cat >"$SCEN_DIR/guest-b2.sh" <<-"EOF"
		set -e
		d=$1
		. "$d/xfer.sh"
		bash "$d/vx.sh" 10.99.0.2 198.19.0.1 8472
		serve_blob
		touch "$d/b.ready"
		for i in $(seq 300); do
			[ -e "$d/a.ready" ] && break
			sleep 0.1
		done
		ping -c 3 -W 2 10.99.0.1 >/dev/null && echo ok >"$d/b.ping" ||
			echo failed >"$d/b.ping"
		for i in $(seq 900); do
			[ -e "$d/a.done" ] && break
			sleep 0.1
		done
		wait "$up"
	EOF
	cat >"$SCEN_DIR/guest-a2.sh" <<-"EOF"
		d=$1
		. "$d/xfer.sh"
		bash "$d/vx.sh" 10.99.0.1 198.19.0.2 8472
		touch "$d/a.ready"
		ping -c 3 -W 2 10.99.0.2 >/dev/null && echo "a ping ok"
		fetch_and_upload
		for i in $(seq 50); do
			[ -s "$d/b.ping" ] && break
			sleep 0.1
		done
		touch "$d/a.done"
	EOF
	declare -a asu
	_scen_as_user_cmd asu
	bg_start b nsenter -t "$hb" -n -- "${asu[@]}" "$TAPIR_BIN" run \
		--queues "$1" -p 8472:4789/udp -- \
		bash "$SCEN_DIR/guest-b2.sh" "$SCEN_DIR"
	wait_for 10 test -e "$SCEN_DIR/b.ready"
	echo "blob $(sha256sum <"$SCEN_DIR/blob" | cut -d" " -f1)"
	as_user "$TAPIR_BIN" run --queues "$1" -p 8472:4789/udp -- \
		bash "$SCEN_DIR/guest-a2.sh" "$SCEN_DIR"
	wait_for 20 test -s "$SCEN_DIR/up.sha"
	echo "up $(cut -d" " -f1 "$SCEN_DIR/up.sha")"
	echo "b ping $(cat "$SCEN_DIR/b.ping")"
	bg_stop b
	bg_stop hostb
'

# two_hosts QUEUES: run TWO_HOSTS and check it
two_hosts() {
	SANDBOX_TIMEOUT=240 run in_sandbox "$TWO_HOSTS" "$1"
	echo "$output"
	[ "$status" -eq 0 ]
	local sum
	sum=$(sed -n 's/^blob //p' <<<"$output")
	[ -n "$sum" ]
	has_line "a ping ok"
	has_line "b ping ok"
	has_line "down $sum"
	has_line "upload rc=0"
	has_line "up $sum"
}

@test "tunnel: two hosts as usernetes lays them out (VXLAN on UDP 8472 published through tapir): ping and 100 MB each way byte-exact, 1 queue" {
	two_hosts 1
}

@test "tunnel: two hosts as usernetes lays them out (VXLAN on UDP 8472 published through tapir): ping and 100 MB each way byte-exact, 2 queues" {
	two_hosts 2
}
