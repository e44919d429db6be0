#!/usr/bin/env bats
# tests/options.bats - the datapath's remaining command-line options, end to
# end through `tapir run` as the unprivileged test user: --outbound-addr{,6},
# --cidr, --pcap, --mtu, --queues and the automatic --txqueuelen.

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib

# Host listeners that answer every TCP connection (and UDP datagram) with the
# peer address they saw: 127.0.0.1, 198.18.0.1 and their IPv6 peers, port
# 9000 (UDP 9001 on 127.0.0.1). A second host address on each family,
# 198.18.0.2 and fd18::2, lets a test tell a chosen source from the default.
PEER_ECHO='
	ip addr add 198.18.0.2/24 dev sbx0
	ip -6 addr add fd18::2/64 dev sbx0 nodad
	echo_peer() { # NAME SOCAT-LISTEN-ADDRESS
		bg_start "$1" socat "$2" SYSTEM:"echo \$SOCAT_PEERADDR"
	}
	echo_peer l4lo TCP4-LISTEN:9000,bind=127.0.0.1,reuseaddr,fork
	echo_peer l4 TCP4-LISTEN:9000,bind=198.18.0.1,reuseaddr,fork
	echo_peer l6lo TCP6-LISTEN:9000,bind=[::1],reuseaddr,fork
	echo_peer l6 TCP6-LISTEN:9000,bind=[fd18::1],reuseaddr,fork
	echo_peer u4lo UDP4-RECVFROM:9001,bind=127.0.0.1,fork
	wait_for 5 bash -c "[ \$(ss -Hltn sport = :9000 | wc -l) -eq 4 ]"
	# peers4 / peers6: in the guest, print "DESTINATION PEER-SEEN" lines.
	peers4="for a in 10.0.2.2 198.18.0.1; do
		echo \$a \$(timeout 5 socat -u TCP4:\$a:9000 -); done
		# UDP may lose a datagram on a loaded machine: ask up to 4
		# times. -t3: socat stops reading 0.5 s after stdin ends by
		# default, sooner than the host echo (a fork and a shell) may
		# answer under ASan.
		for t in 1 2 3 4; do
			r=\$(echo x | timeout 5 socat -t3 -T3 - UDP4:10.0.2.2:9001)
			[ -n \"\$r\" ] && break
		done
		echo udp:10.0.2.2 \$r"
	peers6="for a in fd00::2 fd18::1; do
		echo \$a \$(timeout 5 socat -u TCP6:[\$a]:9000 -); done"
'

@test "options: --outbound-addr, literal or interface, is the source of IPv4 flows, loopback included" {
	run in_sandbox "$PEER_ECHO"'
		echo "# default"
		as_user "$TAPIR_BIN" run -- bash -c "$peers4"
		echo "# 198.18.0.1"
		as_user "$TAPIR_BIN" run --outbound-addr 198.18.0.1 -- bash -c "$peers4"
		echo "# sbx0"
		as_user "$TAPIR_BIN" run --outbound-addr=sbx0 -- bash -c "$peers4"
		echo "# 198.18.0.2"
		as_user "$TAPIR_BIN" run --outbound-addr 198.18.0.2 -- bash -c "$peers4"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	# Default: the gateway is host loopback, seen from loopback.
	[ "$(sed -n 2,4p <<<"$output")" = "10.0.2.2 127.0.0.1
198.18.0.1 198.18.0.1
udp:10.0.2.2 127.0.0.1" ]
	# Bound to 198.18.0.1, by address or as sbx0's first address: even
	# the loopback connections come from it, as with libslirp.
	[ "$(sed -n 6,8p <<<"$output")" = "10.0.2.2 198.18.0.1
198.18.0.1 198.18.0.1
udp:10.0.2.2 198.18.0.1" ]
	[ "$(sed -n 10,12p <<<"$output")" = "$(sed -n 6,8p <<<"$output")" ]
	[ "$(sed -n 14,16p <<<"$output")" = "10.0.2.2 198.18.0.2
198.18.0.1 198.18.0.2
udp:10.0.2.2 198.18.0.2" ]
}

@test "options: --outbound-addr6 is the source of IPv6 flows, loopback included" {
	run in_sandbox "$PEER_ECHO"'
		echo "# default"
		as_user "$TAPIR_BIN" run -6 -- bash -c "$peers6"
		echo "# fd18::1"
		as_user "$TAPIR_BIN" run -6 --outbound-addr6 fd18::1 -- bash -c "$peers6"
		echo "# fd18::2"
		as_user "$TAPIR_BIN" run -6 --outbound-addr6=fd18::2 -- bash -c "$peers6"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	# socat prints IPv6 peers in full.
	local lo=0000:0000:0000:0000:0000:0000:0000:0001
	local h1=fd18:0000:0000:0000:0000:0000:0000:0001
	local h2=fd18:0000:0000:0000:0000:0000:0000:0002
	[ "$(sed -n 2,3p <<<"$output")" = "fd00::2 [$lo]
fd18::1 [$h1]" ]
	[ "$(sed -n 5,6p <<<"$output")" = "fd00::2 [$h1]
fd18::1 [$h1]" ]
	[ "$(sed -n 8,9p <<<"$output")" = "fd00::2 [$h2]
fd18::1 [$h2]" ]
}

@test "options: --cidr 10.0.135.128/25: guest .228, gateway .130 is the host" {
	run in_sandbox '
		nginx_start web 127.0.0.1:8080
		as_user "$TAPIR_BIN" run --cidr 10.0.135.128/25 -- sh -c "
			ip -4 -br addr show dev tap0
			ip -4 route show default
			cat /etc/resolv.conf
			curl -sS --max-time 5 http://10.0.135.130:8080/
			setpriv --no-new-privs ping -c1 -W2 10.0.135.130 >/dev/null &&
				echo ping-ok"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^tap0\ +UNKNOWN\ +10\.0\.135\.228/25\ *$ ]]
	[ "${lines[1]}" = "default via 10.0.135.130 dev tap0 " ] ||
		[ "${lines[1]}" = "default via 10.0.135.130 dev tap0" ]
	has_line "nameserver 10.0.135.131"
	has_line "tapir test page"
	has_line "ping-ok"
}

# pcap_summary FILE (in the sandbox): the capture's header fields and a walk
# over its records, as "key value" lines. No tcpdump on a Debian base image.
PCAP_SUMMARY='
	pcap_summary() {
		od -An -v -tu1 "$1" | awk "
		function u32(o) {
			return be ? ((b[o] * 256 + b[o+1]) * 256 + b[o+2]) * 256 + b[o+3] \
			          : ((b[o+3] * 256 + b[o+2]) * 256 + b[o+1]) * 256 + b[o]
		}
		function u16(o) { return be ? b[o] * 256 + b[o+1] : b[o+1] * 256 + b[o] }
		function net16(o) { return b[o] * 256 + b[o+1] }
		{ for (i = 1; i <= NF; i++) b[n++] = \$i }
		END {
			magic = sprintf(\"%02x%02x%02x%02x\", b[0], b[1], b[2], b[3])
			be = magic == \"a1b2c3d4\"
			print \"magic\", magic
			print \"version\", u16(4) \".\" u16(6)
			print \"linktype\", u32(20)
			off = 24
			while (off + 16 <= n) {
				incl = u32(off + 8)
				if (incl > u32(off + 12) || off + 16 + incl > n)
					break
				f = off + 16
				# IPv4 TCP to or from port 8080
				if (incl >= 54 && net16(f + 12) == 2048 && b[f + 23] == 6) {
					t = f + 14 + (b[f + 14] % 16) * 4
					if (net16(t + 2) == 8080) to_server++
					if (net16(t) == 8080) from_server++
				}
				records++
				off += 16 + incl
			}
			print \"records\", records + 0
			print \"trailing\", n - off
			print \"to_server\", to_server + 0
			print \"from_server\", from_server + 0
		}"
	}
'

@test "options: --pcap writes a valid capture holding the frames of a fetch" {
	run in_sandbox "$PCAP_SUMMARY"'
		nginx_start web 127.0.0.1:8080
		as_user "$TAPIR_BIN" run --pcap "$SCEN_DIR/cap.pcap" -- \
			curl -sS --max-time 5 http://10.0.2.2:8080/
		pcap_summary "$SCEN_DIR/cap.pcap"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "tapir test page"
	has_line "magic d4c3b2a1" || has_line "magic a1b2c3d4"
	has_line "version 2.4"
	has_line "linktype 1"
	has_line "trailing 0"
	# SYN, ACK, request, ACKs, FIN... in both directions.
	[ "$(awk '$1 == "to_server" { print $2 }' <<<"$output")" -ge 3 ]
	[ "$(awk '$1 == "from_server" { print $2 }' <<<"$output")" -ge 3 ]
	[ "$(awk '$1 == "records" { print $2 }' <<<"$output")" -ge 6 ]
}

@test "options: --mtu 9000 carries a 1 MB fetch, with and without offloads" {
	run in_sandbox '
		nginx_start web 127.0.0.1:8080
		head -c 1048576 /dev/urandom >"$SCEN_DIR/web/www/big"
		S=$SCEN_DIR/api.sock
		for offload in on off; do
			as_user "$TAPIR_BIN" run --mtu 9000 --offload=$offload -a "$S" -- sh -c "
				ip -o link show dev tap0 | grep -o \"mtu [0-9]*\"
				curl -sS --max-time 10 -o $SCEN_DIR/got-$offload \
					http://10.0.2.2:8080/big
				\"\$TAPIR_BIN\" api $S \"{\\\"execute\\\":\\\"get_stats\\\"}\" \
					>$SCEN_DIR/stats-$offload.json"
			cmp "$SCEN_DIR/web/www/big" "$SCEN_DIR/got-$offload" &&
				echo "same-$offload"
		done
		# Without offloads every frame fits the MTU; their mean size
		# shows the 9000 is used, not 1500.
		jq ".return.tap | (.tx_bytes / .tx_frames | floor)" \
			"$SCEN_DIR/stats-off.json"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "mtu 9000" ]
	[ "${lines[1]}" = "same-on" ]
	[ "${lines[2]}" = "mtu 9000" ]
	[ "${lines[3]}" = "same-off" ]
	[ "${lines[4]}" -gt 4000 ]
	[ "${lines[4]}" -le 9014 ]
}

@test "options: --queues 2 gives the tap two queues, and fetches work" {
	run in_sandbox '
		nginx_start web 127.0.0.1:8080
		as_user "$TAPIR_BIN" run --queues 2 -- sh -c "
			ip -d link show dev tap0 | grep -o \"multi_queue numqueues [0-9]*\"
			for i in 1 2 3 4 5 6 7 8; do
				curl -sS --max-time 5 http://10.0.2.2:8080/
			done | sort | uniq -c"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "multi_queue numqueues 2" ]
	[[ "${lines[1]}" =~ ^\ *8\ tapir\ test\ page$ ]]
}

@test "options: the default txqueuelen is above 1000 at MTU 1500 and 65520; --txqueuelen sets it" {
	run in_sandbox '
		qlen="ip -o link show dev tap0 | grep -o \"qlen [0-9]*\""
		as_user "$TAPIR_BIN" run -- sh -c "$qlen"
		as_user "$TAPIR_BIN" run --mtu 65520 -- sh -c "$qlen"
		as_user "$TAPIR_BIN" run --txqueuelen 4321 -- sh -c "$qlen"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]#qlen }" -gt 1000 ]
	[ "${lines[1]#qlen }" -gt 1000 ]
	[ "${lines[2]}" = "qlen 4321" ]
}
