// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - test tool: write malformed frames into a tap from the guest side */

/*
 * Runs inside the guest's network namespace (as root there) and transmits
 * frames on the tap through an AF_PACKET socket, so tapir reads them exactly
 * as it reads the guest kernel's own. Two limits of that path:
 *  - the virtio_net_hdr in front of each frame is written by the tap driver
 *    from the socket buffer's metadata (all zero here), so malformed vnet
 *    headers cannot be crafted; tests/unit/test_datapath.c covers those;
 *  - the kernel refuses frames shorter than an Ethernet header, so those are
 *    unit-tested only as well.
 * Every IP destination is 10.0.2.50 or fd00::50, inside the virtual network:
 * tapir answers those itself and never opens a host socket for them (ICMP
 * to the gateway, answered locally, is the one exception).
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#define FRAME_MAX 1514
#define DST4 "10.0.2.50"
#define DST6 "fd00::50"
#define GW4 "10.0.2.2"
#define SRC4 "10.0.2.100"
#define SRC6 "fd00::100"

/**
 * struct tx - the packet socket and the addresses frames carry
 * @fd:		AF_PACKET socket bound to the tap
 * @ifindex:	the tap's index
 * @mac:	the tap's MAC, the source of every frame: tapir learns the
 *		guest's MAC from it, and a wrong one would cut the guest off
 */
struct tx {
	int fd;
	int ifindex;
	uint8_t mac[6];
};

/**
 * struct bf - one frame under construction
 * @d:		Ethernet header onwards
 * @len:	bytes used
 */
struct bf {
	uint8_t d[FRAME_MAX];
	size_t len;
};

static const uint8_t gw_mac[6] = {0x52, 0x55, 0x0a, 0x00, 0x02, 0x02};
static uint8_t src_mac[6];

/**
 * put16() - store a big-endian 16-bit value
 * @p:		where
 * @v:		value
 */
static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/**
 * sum16() - one's complement sum of big-endian 16-bit words, unfolded
 * @sum:	running sum
 * @b:		data
 * @len:	bytes; an odd last byte is padded with zero
 *
 * Return: new running sum
 */
static uint32_t sum16(uint32_t sum, const uint8_t *b, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)b[i] << 8 | b[i + 1];
	if (i < len)
		sum += (uint32_t)b[i] << 8;
	return sum;
}

/**
 * fold() - final checksum of a running sum
 * @sum:	running sum
 *
 * Return: checksum, host order
 */
static uint16_t fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/**
 * eth() - start a frame from the guest's MAC to the gateway's
 * @f:		frame, reset
 * @type:	ethertype
 */
static void eth(struct bf *f, uint16_t type)
{
	memset(f, 0, sizeof(*f));
	memcpy(f->d, gw_mac, 6);
	memcpy(f->d + 6, src_mac, 6);
	put16(f->d + 12, type);
	f->len = 14;
}

/**
 * ip4_fix() - recompute the IPv4 header checksum
 * @f:		IPv4 frame holding at least ihl*4 header bytes
 */
static void ip4_fix(struct bf *f)
{
	size_t hlen = (size_t)(f->d[14] & 15) * 4;

	put16(f->d + 24, 0);
	put16(f->d + 24, fold(sum16(0, f->d + 14, hlen)));
}

/**
 * l4_fix() - recompute the TCP, UDP, ICMP or ICMPv6 checksum
 * @f:		IPv4 frame, or IPv6 frame without extension headers
 * @proto:	L4 protocol
 */
static void l4_fix(struct bf *f, uint8_t proto)
{
	bool v6 = f->d[12] == 0x86;
	size_t l4off = v6 ? 54 : 14 + (size_t)(f->d[14] & 15) * 4, l4len, off;
	uint32_t sum = 0;

	off = proto == IPPROTO_TCP ? 16 : proto == IPPROTO_UDP ? 6 : 2;
	if (f->len < l4off + off + 2)
		return;
	l4len = f->len - l4off;
	if (v6 || proto != IPPROTO_ICMP)
		sum = sum16(0, f->d + (v6 ? 22 : 26), v6 ? 32 : 8) + proto +
		      (uint32_t)l4len;
	put16(f->d + l4off + off, 0);
	put16(f->d + l4off + off, fold(sum16(sum, f->d + l4off, l4len)));
	if (proto == IPPROTO_UDP && !f->d[l4off + off] &&
	    !f->d[l4off + off + 1])
		put16(f->d + l4off + off, 0xffff);
}

/**
 * ip4() - an IPv4 frame from the guest, checksums correct
 * @f:		frame, reset
 * @dst:	destination literal
 * @proto:	L4 protocol
 * @l4:		L4 header and payload
 * @l4len:	its length
 */
static void ip4(struct bf *f, const char *dst, uint8_t proto, const void *l4,
                size_t l4len)
{
	uint8_t *ip = f->d + 14;

	eth(f, ETHERTYPE_IP);
	ip[0] = 0x45;
	put16(ip + 2, (uint16_t)(20 + l4len));
	put16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = proto;
	inet_pton(AF_INET, SRC4, ip + 12);
	inet_pton(AF_INET, dst, ip + 16);
	memcpy(ip + 20, l4, l4len);
	f->len = 34 + l4len;
	ip4_fix(f);
	l4_fix(f, proto);
}

/**
 * ip6() - an IPv6 frame from the guest, checksums correct
 * @f:		frame, reset
 * @dst:	destination literal
 * @nh:		next header
 * @l4:		what follows the fixed header
 * @l4len:	its length
 */
static void ip6(struct bf *f, const char *dst, uint8_t nh, const void *l4,
                size_t l4len)
{
	uint8_t *ip = f->d + 14;

	eth(f, ETHERTYPE_IPV6);
	ip[0] = 0x60;
	put16(ip + 4, (uint16_t)l4len);
	ip[6] = nh;
	ip[7] = 64;
	inet_pton(AF_INET6, SRC6, ip + 8);
	inet_pton(AF_INET6, dst, ip + 24);
	memcpy(ip + 40, l4, l4len);
	f->len = 54 + l4len;
	l4_fix(f, nh);
}

/**
 * syn() - a 20-byte TCP SYN from port 40000 to 80
 * @b:		at least 20 bytes
 *
 * Return: 20
 */
static size_t syn(uint8_t *b)
{
	memset(b, 0, 20);
	put16(b, 40000);
	put16(b + 2, 80);
	b[12] = 5 << 4;
	b[13] = 0x02;
	put16(b + 14, 65535);
	return 20;
}

/**
 * udp() - a UDP datagram to port 9 with 4 payload bytes
 * @b:		at least 12 bytes
 *
 * Return: 12
 */
static size_t udp(uint8_t *b)
{
	memset(b, 'x', 12);
	put16(b, 40000);
	put16(b + 2, 9);
	put16(b + 4, 12);
	put16(b + 6, 0);
	return 12;
}

/**
 * echo() - an ICMP (@v6: ICMPv6) echo request with 8 payload bytes
 * @b:		at least 16 bytes
 * @v6:		ICMPv6
 *
 * Return: 16
 */
static size_t echo(uint8_t *b, bool v6)
{
	memset(b, 'p', 16);
	b[0] = v6 ? 128 : 8;
	b[1] = 0;
	put16(b + 2, 0);
	put16(b + 4, 0x4242);
	put16(b + 6, 1);
	return 16;
}

/**
 * arp() - an ARP request for the gateway
 * @f:		frame, reset
 */
static void arp(struct bf *f)
{
	uint8_t *a = f->d + 14;

	eth(f, ETHERTYPE_ARP);
	memset(f->d, 0xff, 6);
	put16(a, 1);
	put16(a + 2, ETHERTYPE_IP);
	a[4] = 6;
	a[5] = 4;
	put16(a + 6, 1);
	memcpy(a + 8, src_mac, 6);
	inet_pton(AF_INET, SRC4, a + 14);
	inet_pton(AF_INET, GW4, a + 24);
	f->len = 14 + 28;
}

/**
 * build() - build catalogue entry @i
 * @f:		frame to fill
 * @i:		index
 *
 * Return: the drop counter (get_stats name) the frame must raise, or NULL
 *	   past the end of the catalogue
 */
static const char *build(struct bf *f, int i)
{
	uint8_t l4[64];
	size_t n;

	switch (i) {
	case 0: /* IPv4 header truncated */
		eth(f, ETHERTYPE_IP);
		f->d[14] = 0x45;
		f->len = 14 + 19;
		return "short_frame";
	case 1: /* IPv6 header truncated */
		eth(f, ETHERTYPE_IPV6);
		f->d[14] = 0x60;
		f->len = 14 + 39;
		return "short_frame";
	case 2: /* IPv4 ihl < 5 */
		n = syn(l4);
		ip4(f, DST4, IPPROTO_TCP, l4, n);
		f->d[14] = 0x44;
		ip4_fix(f);
		return "bad_length";
	case 3: /* IPv4 ihl*4 beyond the frame */
		n = udp(l4);
		ip4(f, DST4, IPPROTO_UDP, l4, n);
		f->d[14] = 0x4f;
		return "bad_length";
	case 4: /* IPv4 tot_len beyond the frame */
		n = syn(l4);
		ip4(f, DST4, IPPROTO_TCP, l4, n);
		put16(f->d + 16, 41);
		ip4_fix(f);
		return "bad_length";
	case 5: /* IPv4 tot_len < ihl*4 */
		n = syn(l4);
		ip4(f, DST4, IPPROTO_TCP, l4, n);
		put16(f->d + 16, 19);
		ip4_fix(f);
		return "bad_length";
	case 6: /* IPv4 header checksum wrong */
		n = echo(l4, false);
		ip4(f, GW4, IPPROTO_ICMP, l4, n);
		f->d[24] ^= 1;
		return "bad_checksum";
	case 7: /* TCP header truncated */
		syn(l4);
		ip4(f, DST4, IPPROTO_TCP, l4, 19);
		return "short_frame";
	case 8: /* TCP doff < 5 */
		syn(l4);
		l4[12] = 4 << 4;
		ip4(f, DST4, IPPROTO_TCP, l4, 20);
		return "bad_length";
	case 9: /* TCP doff beyond the packet */
		syn(l4);
		l4[12] = 8 << 4;
		ip4(f, DST4, IPPROTO_TCP, l4, 20);
		return "bad_length";
	case 10: /* TCP checksum wrong */
		n = syn(l4);
		ip4(f, DST4, IPPROTO_TCP, l4, n);
		f->d[34 + 16] ^= 0x40;
		return "bad_checksum";
	case 11: /* UDP header truncated */
		udp(l4);
		ip4(f, DST4, IPPROTO_UDP, l4, 7);
		return "short_frame";
	case 12: /* UDP length beyond the IP length */
		udp(l4);
		put16(l4 + 4, 13);
		ip4(f, DST4, IPPROTO_UDP, l4, 12);
		return "bad_length";
	case 13: /* UDP length < 8 */
		udp(l4);
		put16(l4 + 4, 7);
		ip4(f, DST4, IPPROTO_UDP, l4, 12);
		return "bad_length";
	case 14: /* UDP checksum wrong */
		n = udp(l4);
		ip4(f, DST4, IPPROTO_UDP, l4, n);
		f->d[34 + 8] ^= 1;
		return "bad_checksum";
	case 15: /* ICMP checksum wrong */
		n = echo(l4, false);
		ip4(f, GW4, IPPROTO_ICMP, l4, n);
		f->d[34 + 9] ^= 1;
		return "bad_checksum";
	case 16: /* ICMP header truncated */
		echo(l4, false);
		ip4(f, GW4, IPPROTO_ICMP, l4, 7);
		return "short_frame";
	case 17: /* IPv6 payload length beyond the frame */
		n = echo(l4, true);
		ip6(f, DST6, IPPROTO_ICMPV6, l4, n);
		put16(f->d + 18, 17);
		return "bad_length";
	case 18: /* IPv6 hop-by-hop header overruns the packet */
		memset(l4, 0, 16);
		l4[0] = IPPROTO_ICMPV6;
		l4[1] = 2;
		ip6(f, DST6, 0, l4, 16);
		return "bad_length";
	case 19: /* ICMPv6 checksum wrong */
		n = echo(l4, true);
		ip6(f, DST6, IPPROTO_ICMPV6, l4, n);
		f->d[54 + 9] ^= 1;
		return "bad_checksum";
	case 20: /* TCP over IPv6 checksum wrong */
		n = syn(l4);
		ip6(f, DST6, IPPROTO_TCP, l4, n);
		f->d[54 + 16] ^= 0x40;
		return "bad_checksum";
	case 21: /* ARP truncated */
		arp(f);
		f->len = 14 + 27;
		return "short_frame";
	case 22: /* ARP hlen 8 */
		arp(f);
		f->d[14 + 4] = 8;
		return "bad_length";
	case 23: /* ARP plen 16 */
		arp(f);
		f->d[14 + 5] = 16;
		return "bad_length";
	case 24: /* LLDP: an ethertype tapir does not speak */
		eth(f, 0x88cc);
		f->len = 60;
		return "unknown_ethertype";
	default:
		return NULL;
	}
}

/**
 * tx_open() - a packet socket that transmits on @ifname
 * @t:		filled
 * @ifname:	the tap
 *
 * Return: 0 on success, -1 after printing why
 */
static int tx_open(struct tx *t, const char *ifname)
{
	struct sockaddr_ll sll = {0};
	struct ifreq ifr = {0};

	t->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (t->fd < 0) {
		fprintf(stderr, "badframes: packet socket: %s\n",
		        strerror(errno));
		return -1;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	t->ifindex = (int)if_nametoindex(ifname);
	if (!t->ifindex || ioctl(t->fd, SIOCGIFHWADDR, &ifr)) {
		fprintf(stderr, "badframes: interface %s: %s\n", ifname,
		        strerror(errno));
		return -1;
	}
	memcpy(t->mac, ifr.ifr_hwaddr.sa_data, 6);
	sll.sll_family = AF_PACKET;
	sll.sll_ifindex = t->ifindex;
	if (bind(t->fd, (struct sockaddr *)&sll, sizeof(sll))) {
		fprintf(stderr, "badframes: bind to %s: %s\n", ifname,
		        strerror(errno));
		return -1;
	}
	return 0;
}

/**
 * tx_send() - transmit one frame
 * @t:		socket
 * @f:		frame
 *
 * Return: 0 on success, -1 after printing why
 */
static int tx_send(const struct tx *t, const struct bf *f)
{
	if (send(t->fd, f->d, f->len, 0) != (ssize_t)f->len) {
		fprintf(stderr, "badframes: send %zu bytes: %s\n", f->len,
		        strerror(errno));
		return -1;
	}
	return 0;
}

/**
 * send_catalogue() - send every malformation once, print the expected drops
 * @t:		socket
 *
 * Prints one "COUNTER N" line per drop counter, N the frames meant for it.
 *
 * Return: 0 on success, 1 on a send error
 */
static int send_catalogue(const struct tx *t)
{
	static const char *const names[] = {"short_frame", "bad_length",
	                                    "bad_checksum",
	                                    "unknown_ethertype"};
	int counts[4] = {0};
	const char *reason;
	struct bf f;

	for (int i = 0; (reason = build(&f, i)); i++) {
		if (tx_send(t, &f))
			return 1;
		for (int k = 0; k < 4; k++)
			counts[k] += !strcmp(reason, names[k]);
	}
	for (int k = 0; k < 4; k++)
		printf("%s %d\n", names[k], counts[k]);
	return 0;
}

/**
 * next() - xorshift64* step
 * @s:		state, never 0
 *
 * Return: next 64 pseudo-random bits
 */
static uint64_t next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

/**
 * random_l4() - an L4 protocol for a random frame: one tapir translates,
 *		 or another that is not an IPv6 extension header
 * @s:		PRNG state
 *
 * Extension headers could lead to a Fragment header, and a fragment may be
 * held for reassembly without raising any counter yet; the unit test covers
 * those.
 *
 * Return: protocol number
 */
static uint8_t random_l4(uint64_t *s)
{
	static const uint8_t common[] = {IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP,
	                                 IPPROTO_ICMPV6};
	uint8_t p = (uint8_t)next(s);

	if (next(s) % 2)
		return common[next(s) % 4];
	if (p == 0 || p == 43 || p == 44 || p == 60)
		return 59; /* no next header */
	return p;
}

/**
 * shape_l4() - make random L4 bytes pass the first checks, then checksum
 * @f:		IPv4 or IPv6 frame without options or extension headers
 * @proto:	its L4 protocol
 *
 * A TCP RST for no connection is discarded without being counted (RFC 9293
 * says to discard it), so the RST flag is cleared: every random frame must
 * then show in some counter.
 */
static void shape_l4(struct bf *f, uint8_t proto)
{
	size_t l4off = f->d[12] == 0x86 ? 54 : 34;
	uint8_t *l4 = f->d + l4off;
	size_t len = f->len - l4off;

	if (proto == IPPROTO_TCP && len >= 20) {
		l4[12] = 5 << 4;
		l4[13] &= (uint8_t)~0x04;
	} else if (proto == IPPROTO_UDP && len >= 8) {
		put16(l4 + 4, (uint16_t)len);
	}
	l4_fix(f, proto);
}

/**
 * random_frame() - random bytes behind a mostly valid prefix
 * @f:		frame to fill
 * @s:		PRNG state
 *
 * Half the IP frames get valid headers (lengths and checksums) in front of
 * random bytes, so those reach the L4 parsers. The source MAC and the
 * destination address are always pinned (see the top of this file).
 */
static void random_frame(struct bf *f, uint64_t *s)
{
	static const uint16_t types[] = {ETHERTYPE_IP, ETHERTYPE_IPV6,
	                                 ETHERTYPE_ARP, 0x1234};
	uint16_t type = types[next(s) % 4];
	size_t len = 14 + next(s) % (FRAME_MAX - 14 + 1);
	bool valid = next(s) % 2;

	eth(f, type);
	for (size_t i = 14; i < len; i++)
		f->d[i] = (uint8_t)next(s);
	f->len = len;
	if (type == ETHERTYPE_IP && len >= 34) {
		inet_pton(AF_INET, DST4, f->d + 30);
		if (!valid)
			return;
		f->d[14] = 0x45;
		put16(f->d + 16, (uint16_t)(len - 14));
		put16(f->d + 20, 0x4000);
		f->d[23] = random_l4(s);
		ip4_fix(f);
		if (next(s) % 2)
			shape_l4(f, f->d[23]);
	} else if (type == ETHERTYPE_IPV6 && len >= 54) {
		f->d[14] = 0x60;
		put16(f->d + 18, (uint16_t)(len - 54));
		f->d[20] = random_l4(s);
		inet_pton(AF_INET6, DST6, f->d + 38);
		if (valid)
			shape_l4(f, f->d[20]);
	}
}

/**
 * send_random() - send @n random frames, pacing so the tap queue keeps up
 * @t:		socket
 * @n:		frames
 * @seed:	PRNG seed
 *
 * Return: 0 on success, 1 on a send error
 */
static int send_random(const struct tx *t, long n, uint64_t seed)
{
	uint64_t s = seed | 1;
	struct bf f;

	for (long i = 0; i < n; i++) {
		random_frame(&f, &s);
		if (tx_send(t, &f))
			return 1;
		if (i % 128 == 127)
			usleep(2000);
	}
	printf("random %ld\n", n);
	return 0;
}

/**
 * main() - badframes IFNAME catalogue | badframes IFNAME random N [SEED]
 * @argc:	argument count
 * @argv:	arguments
 *
 * Return: 0 on success, 1 on errors
 */
int main(int argc, char **argv)
{
	struct tx t;

	if (argc < 3 || (strcmp(argv[2], "catalogue") &&
	                 (strcmp(argv[2], "random") || argc < 4))) {
		fprintf(stderr, "usage: badframes IFNAME catalogue\n"
		                "       badframes IFNAME random N [SEED]\n");
		return 1;
	}
	if (tx_open(&t, argv[1]))
		return 1;
	memcpy(src_mac, t.mac, 6);
	if (!strcmp(argv[2], "catalogue"))
		return send_catalogue(&t);
	return send_random(&t, strtol(argv[3], NULL, 0),
	                   argc > 4 ? strtoull(argv[4], NULL, 0) : 1);
}
