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
# (run in a guest: vx.sh INNER-ADDR FAR-PORT makes vx0, VNI 42, MTU 1450,
# whose frames go to the sandbox host on FAR-PORT), $SCEN_DIR/csum.awk
# (the InCsumErrors of Tcp and Udp in /proc/net/snmp, summed), and guest B
# in the background: 10.99.0.2, far port 4789, published on host port
# 4790, serving the blob on TCP 7000, taking an upload on 7001 and echoing
# UDP on 7002, writing $SCEN_DIR/b.csum once $SCEN_DIR/a.done appears.
TUNNEL_SETUP='
	head -c 10000000 /dev/urandom >"$SCEN_DIR/blob"
	chmod 644 "$SCEN_DIR/blob"
	cat >"$SCEN_DIR/vx.sh" <<-"EOF"
		ip link add vx0 type vxlan id 42 dstport 4789 nolearning
		ip link set vx0 mtu 1450 up
		ip addr add "$1/24" dev vx0
		bridge fdb append 00:00:00:00:00:00 dev vx0 dst 198.18.0.1 port "$2"
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
	cat >"$SCEN_DIR/guest-b.sh" <<-"EOF"
		set -e
		d=$1
		bash "$d/vx.sh" 10.99.0.2 4789
		socat -u FILE:"$d/blob" TCP-LISTEN:7000,bind=10.99.0.2,reuseaddr &
		(socat -u TCP-LISTEN:7001,bind=10.99.0.2,reuseaddr - |
			sha256sum >"$d/up.sha") &
		socat UDP-RECVFROM:7002,bind=10.99.0.2,fork EXEC:cat &
		touch "$d/b.ready"
		for i in $(seq 600); do
			[ -e "$d/a.done" ] && break
			sleep 0.1
		done
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
			bash "$d/vx.sh" 10.99.0.1 4790
			echo "down $(timeout 30 socat -u TCP:10.99.0.2:7000 - |
				sha256sum | cut -d" " -f1)"
			timeout 30 socat -u FILE:"$d/blob" TCP:10.99.0.2:7001
			echo "upload rc=$?"
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
