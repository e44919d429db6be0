#!/usr/bin/env bats
# DNS through tapir's forwarder address 10.0.2.3 (and fd00::3): queries go to
# the first resolver in /etc/resolv.conf the host has a route to, which in
# the sandbox is a dnsmasq on 127.0.0.1 that answers tapir.test itself,
# forwarding nowhere (fe80::1%lo, the first line, is unreachable).

# The snippets are single-quoted on purpose: they expand inside the sandbox.
# shellcheck disable=SC2016

load lib

# dnsquery ADDR PROTO [TIMEOUT]: one raw query for tapir.test/A to ADDR port 53 over
# udp or tcp (with the 2-byte length prefix), printed as hex. No DNS tool
# beyond glibc is on a Debian 12 base, but bash talks UDP and TCP.
DNSQUERY='
q="\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00"
q+="\x05tapir\x04test\x00\x00\x01\x00\x01"
exec 3<>"/dev/$2/$1/53"
if [ "$2" = tcp ]; then printf "\x00\x1c$q" >&3; else printf "$q" >&3; fi
timeout "${3:-3}" dd bs=4096 count=1 status=none <&3 | od -An -tx1 | tr -d " \n"
echo
'

# Sets up, inside the sandbox: dnsmasq as the host's resolver, on 127.0.0.1
# or, on an IPv6-only host (SANDBOX_IPV6_ONLY=1), ::1 (it logs each
# query to $SCEN_DIR/dnsmasq.log), $SCEN_DIR/dnsquery from $1 run by
# $query, and $SCEN_DIR/resolv.conf naming 10.0.2.3 with short timeouts.
SETUP='
lo=127.0.0.1
[ "$SANDBOX_IPV6_ONLY" = 1 ] && lo=::1
bg_start dnsmasq dnsmasq --no-daemon --port=53 --listen-address=$lo \
	--bind-interfaces --no-resolv --no-hosts --user=root \
	--address=/tapir.test/198.18.0.77 --log-queries --log-facility=-
printf "%s" "$1" >"$SCEN_DIR/dnsquery"
printf "nameserver 10.0.2.3\noptions timeout:1 attempts:1\n" \
	>"$SCEN_DIR/resolv.conf"
chmod a+r "$SCEN_DIR"/*
query="bash $SCEN_DIR/dnsquery"
wait_for 5 bash -c "ss -Hlun | grep -q :53"
'

# The answer's address, 198.18.0.77, as it appears in a hex dump.
ANSWER=c612004d

@test "dns: getent resolves through 10.0.2.3 with the host's resolver on 127.0.0.1" {
	run in_sandbox "$SETUP"'
		as_user "$TAPIR_BIN" run -- sh -c "
			cat /etc/resolv.conf
			timeout 5 getent hosts tapir.test"
	' "$DNSQUERY"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"nameserver 10.0.2.3"* ]]
	[[ "${lines[-1]}" =~ ^198\.18\.0\.77[[:space:]]+tapir\.test$ ]]
}

# QUERIES (run in a guest, SETUP's $query given as $Q): queries over UDP
# and TCP to 10.0.2.3 and fd00::3, each printed as "ADDR PROTO HEX".
QUERIES='for a in 10.0.2.3 fd00::3; do for p in udp tcp; do
	echo "$a $p $($Q $a $p)"
done; done'

# check_answers PREFIX: each of QUERIES' lines under PREFIX has our id
# (after the length prefix over TCP) and the answer.
check_answers() {
	local a
	for a in 10.0.2.3 fd00::3; do
		grep -qE "^$1$a udp 1234[0-9a-f]*$ANSWER$" <<<"$output"
		grep -qE "^$1$a tcp [0-9a-f]{4}1234[0-9a-f]*$ANSWER$" <<<"$output"
	done
}

@test "dns: run -6 names 10.0.2.3 and fd00::3; queries over UDP and TCP to both reach the host's resolver, in run -6 and attach -6 -c" {
	run in_sandbox "$SETUP"'
		as_user "$TAPIR_BIN" run -6 -- sh -c "
			grep nameserver /etc/resolv.conf
			Q=\"$query\"; $2" | sed "s/^/run: /"
		pid=$(userns_holder)
		nsrun "$pid" sysctl -qw net.ipv6.conf.default.accept_dad=0
		start_tapir t -6 -c "$pid" tap0
		nsrun "$pid" sh -c "Q=\"$query\"; $2" | sed "s/^/attach: /"
	' "$DNSQUERY" "$QUERIES"
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "run: nameserver 10.0.2.3"
	has_line "run: nameserver fd00::3"
	check_answers "run: "
	check_answers "attach: "
}

@test "dns: an IPv6-only host, its resolver on ::1: queries over UDP and TCP to 10.0.2.3 and fd00::3 are answered" {
	SANDBOX_IPV6_ONLY=1 run in_sandbox "$SETUP"'
		grep nameserver /etc/resolv.conf | sed "s/^/host: /"
		as_user "$TAPIR_BIN" run -6 -- sh -c "Q=\"$query\"; $2"
	' "$DNSQUERY" "$QUERIES"
	echo "$output"
	[ "$status" -eq 0 ]
	has_line "host: nameserver ::1"
	check_answers ""
}

@test "dns: --disable-dns: queries to 10.0.2.3 get no answer and reach no resolver" {
	run in_sandbox "$SETUP"'
		as_user "$TAPIR_BIN" run --disable-dns -- sh -c "
			mount --bind $SCEN_DIR/resolv.conf /etc/resolv.conf
			timeout 5 getent hosts tapir.test; echo getent=\$?
			echo udp4=[\$($query 10.0.2.3 udp 1)]"
		echo "queries logged: $(grep -c "query.*tapir.test" "$SCEN_DIR/dnsmasq.log")"
	' "$DNSQUERY"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"getent=2"* ]]
	[[ "$output" != *"198.18.0.77"* ]]
	[[ "$output" == *"udp4=[]"* ]]
	[[ "$output" == *"queries logged: 0"* ]]
}

@test "dns: a resolver that is down gives a quick failure, not a hang" {
	run in_sandbox '
		start=$(date +%s%N)
		as_user "$TAPIR_BIN" run -- sh -c "timeout 8 getent hosts tapir.test; echo getent=\$?"
		echo "ms=$((($(date +%s%N) - start) / 1000000))"
	'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"getent=2"* ]]
	ms=${output##*ms=}
	[ "$ms" -lt 3000 ]
}

@test "dns: a dead first nameserver (IPv4 or IPv6, its neighbour never answers) is passed over at once: the next one answers" {
	run in_sandbox "$SETUP"'
		# No one has .66 on the sandbox host'"'"'s link: ARP and NDP give up
		# (after one probe, to be quick) and the host makes the error,
		# host unreachable, which tapir must pass on: glibc'"'"'s resolver
		# then moves on at once, not after its timeout of 10 s.
		for v in ipv4 ipv6; do
			sysctl -qw net.$v.neigh.sbx0.mcast_solicit=1 \
				net.$v.neigh.sbx0.retrans_time_ms=200
		done
		for dead in 198.18.0.66 fd18::66; do
			printf "nameserver %s\nnameserver 10.0.2.3\n%s\n" "$dead" \
				"options timeout:10 attempts:1" >"$SCEN_DIR/resolv-$dead"
		done
		chmod a+r "$SCEN_DIR"/resolv-*
		as_user "$TAPIR_BIN" run -6 -- sh -c "
			unreachs() { awk \"/^Icmp: [0-9]/ { print \\\$5 }\" /proc/net/snmp; }
			unreachs6() { awk \"/^Icmp6InDestUnreachs/ { print \\\$2 }\" /proc/net/snmp6; }
			for dead in 198.18.0.66 fd18::66; do
				mount --bind $SCEN_DIR/resolv-\$dead /etc/resolv.conf
				u=\$((\$(unreachs) + \$(unreachs6)))
				start=\$(date +%s%N)
				answer=\$(timeout 30 getent hosts tapir.test)
				ms=\$(((\$(date +%s%N) - start) / 1000000))
				echo \"\$dead: \$answer\"
				echo \"\$dead: unreachables \$((\$(unreachs) + \$(unreachs6) - u))\"
				echo \"\$dead: ms \$ms\"
			done"
	' "$DNSQUERY"
	echo "$output"
	[ "$status" -eq 0 ]
	local dead ms
	for dead in 198.18.0.66 fd18::66; do
		grep -qE "^$dead: 198\.18\.0\.77[[:space:]]+tapir\.test$" <<<"$output"
		# Counted: the guest heard the host's errors.
		grep -qE "^$dead: unreachables [1-9]" <<<"$output"
		# Against a 10 s timeout a lookup takes (each of its A and AAAA
		# queries waits out one failed neighbour probe, 0.2 s).
		ms=$(sed -n "s/^$dead: ms //p" <<<"$output")
		[ "$ms" -lt 5000 ]
	done
}
