// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests for IPv4/IPv6 reassembly and fragmentation to the guest */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <sys/socket.h>

#include "driver/stack/csum.h"
#include "driver/stack/frag.h"
#include "driver/stack/frag_reasm.h"
#include "driver/core/inany.h"
#include "driver/stack/ip.h"
#include "tests/unit/unit.h"

/* Room for fragments that claim to reach past 65535. */
#define DGRAM_MAX (65536 + 64)

static uint8_t payload[DGRAM_MAX];
/* One fragment as a packet: header (options too), then payload. */
static uint8_t frame[60 + DGRAM_MAX];

/**
 * fill_payload() - deterministic, position-dependent payload bytes
 */
static void fill_payload(void)
{
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + (i >> 8));
}

/**
 * frag4_opt() - build an IPv4 fragment with options, reassemble it
 * @id:		IP identification
 * @off:	payload offset, bytes
 * @len:	payload bytes from @payload + @off
 * @more:	MF bit
 * @hlen:	header length, 20 to 60; the options are NOPs
 * @now:	current time for the reassembler
 * @s:		reassembly state
 * @whole:	filled on completion
 *
 * Return: the reassembler's verdict
 */
static enum frag_verdict frag4_opt(uint16_t id, size_t off, size_t len,
                                   bool more, size_t hlen, uint64_t now,
                                   struct frag_state *s, struct pkt *whole)
{
	struct iphdr *ih = (struct iphdr *)(void *)frame;
	struct pkt p = {0};

	memset(ih, 0, sizeof(*ih));
	memset(frame + sizeof(*ih), IPOPT_NOP, hlen - sizeof(*ih));
	ih->version = 4;
	ih->ihl = (unsigned int)(hlen / 4) & 15;
	ih->tot_len = htons((uint16_t)(hlen + len));
	ih->id = htons(id);
	ih->frag_off = htons((uint16_t)((off / 8) | (more ? IP_MF : 0)));
	ih->ttl = 64;
	ih->protocol = IPPROTO_UDP;
	inet_pton(AF_INET, "10.0.2.100", &ih->saddr);
	inet_pton(AF_INET, "198.18.0.1", &ih->daddr);
	ih->check = csum_ip4_header(frame, hlen);
	memcpy(frame + hlen, payload + off, len);
	inany_from_v4(&p.src, (struct in_addr){ih->saddr});
	inany_from_v4(&p.dst, (struct in_addr){ih->daddr});
	p.proto = IPPROTO_UDP;
	p.l3 = frame;
	p.l3len = hlen;
	p.l4 = frame + hlen;
	p.l4len = len;
	return frag4_reassemble(s, &p, now, whole);
}

/**
 * frag4() - build a plain IPv4 fragment of the test datagram, reassemble it
 * @id:		IP identification
 * @off:	payload offset, bytes
 * @len:	payload bytes from @payload + @off
 * @more:	MF bit
 * @now:	current time for the reassembler
 * @s:		reassembly state
 * @whole:	filled on completion
 *
 * Return: the reassembler's verdict
 */
static enum frag_verdict frag4(uint16_t id, size_t off, size_t len, bool more,
                               uint64_t now, struct frag_state *s,
                               struct pkt *whole)
{
	return frag4_opt(id, off, len, more, 20, now, s, whole);
}

/**
 * whole_ok() - check a reassembled IPv4 datagram against @payload
 * @w:		reassembled packet
 * @len:	expected payload length
 *
 * Return: true if headers and payload are right
 */
static bool whole_ok(const struct pkt *w, size_t len)
{
	struct iphdr ih;

	memcpy(&ih, w->l3, sizeof(ih));
	return !w->v6 && w->proto == IPPROTO_UDP && w->l3len == 20 &&
	       w->l4 == w->l3 + 20 && w->l4len == len && !w->vh &&
	       ntohs(ih.tot_len) == 20 + len && ih.frag_off == 0 &&
	       csum_ip4_header(w->l3, 20) == 0 && !memcmp(w->l4, payload, len);
}

static void test_in_order(void)
{
	struct frag_state *s = frag_state_new(FRAG_SLOTS);
	struct pkt w;

	fill_payload();
	CHECK(frag4(1, 0, 1480, true, 0, s, &w) == FRAG_HELD);
	CHECK(frag4(1, 1480, 1480, true, 0, s, &w) == FRAG_HELD);
	CHECK(frag4(1, 2960, 1000, false, 0, s, &w) == FRAG_COMPLETE);
	CHECK(whole_ok(&w, 3960));
	/* The slot is free again: the same id starts a new datagram. */
	CHECK(frag4(1, 2960, 1000, false, 0, s, &w) == FRAG_HELD);
	frag_state_free(s);
}

static void test_out_of_order(void)
{
	struct frag_state *s = frag_state_new(FRAG_SLOTS);
	struct pkt w;

	fill_payload();
	CHECK(frag4(2, 2960, 1001, false, 0, s, &w) == FRAG_HELD);
	CHECK(frag4(2, 1480, 1480, true, 0, s, &w) == FRAG_HELD);
	CHECK(frag4(2, 0, 1480, true, 0, s, &w) == FRAG_COMPLETE);
	CHECK(whole_ok(&w, 3961));
	frag_state_free(s);
}

static void test_interleaved(void)
{
	struct frag_state *s = frag_state_new(FRAG_SLOTS);
	struct pkt w;

	fill_payload();
	CHECK(frag4(3, 0, 800, true, 0, s, &w) == FRAG_HELD);
	CHECK(frag4(4, 0, 800, true, 0, s, &w) == FRAG_HELD);
	CHECK(frag4(4, 800, 100, false, 0, s, &w) == FRAG_COMPLETE);
	CHECK(whole_ok(&w, 900));
	CHECK(frag4(3, 800, 5, false, 0, s, &w) == FRAG_COMPLETE);
	CHECK(whole_ok(&w, 805));
	frag_state_free(s);
}

static void test_duplicates(void)
{
	struct frag_state *s = frag_state_new(FRAG_SLOTS);
	struct pkt w;

	fill_payload();
	CHECK(frag4(5, 0, 1480, true, 0, s, &w) == FRAG_HELD);
	CHECK(frag4(5, 0, 1480, true, 0, s, &w) == FRAG_HELD);
	CHECK(frag4(5, 1480, 20, false, 0, s, &w) == FRAG_COMPLETE);
	CHECK(whole_ok(&w, 1500));
	frag_state_free(s);
}

static void test_overlap_drops_datagram(void)
{
	struct frag_state *s = frag_state_new(FRAG_SLOTS);
	struct pkt w;

	fill_payload();
	CHECK(frag4(6, 0, 1480, true, 0, s, &w) == FRAG_HELD);
	/* Starts inside the first fragment and goes beyond it. */
	CHECK(frag4(6, 1472, 16, true, 0, s, &w) == FRAG_DROPPED);
	/* The datagram is gone: the rest can never complete it. */
	CHECK(frag4(6, 1480, 20, false, 0, s, &w) == FRAG_HELD);
	frag_state_free(s);
}

static void test_inconsistent_duplicate(void)
{
	struct frag_state *s = frag_state_new(FRAG_SLOTS);
	struct pkt w;

	fill_payload();
	CHECK(frag4(7, 0, 1480, true, 0, s, &w) == FRAG_HELD);
	payload[100] ^= 0xff;
	CHECK(frag4(7, 0, 1480, true, 0, s, &w) == FRAG_DROPPED);
	payload[100] ^= 0xff;
	frag_state_free(s);
}

static void test_inconsistent_end(void)
{
	struct frag_state *s = frag_state_new(FRAG_SLOTS);
	struct pkt w;

	fill_payload();
	CHECK(frag4(8, 1480, 100, false, 0, s, &w) == FRAG_HELD);
	CHECK(frag4(8, 1480, 200, false, 0, s, &w) == FRAG_DROPPED);
	/* Data beyond a known end. */
	CHECK(frag4(9, 800, 100, false, 0, s, &w) == FRAG_HELD);
	CHECK(frag4(9, 1600, 800, true, 0, s, &w) == FRAG_DROPPED);
	/* A non-final fragment must carry whole 8-byte units. */
	CHECK(frag4(10, 0, 1001, true, 0, s, &w) == FRAG_DROPPED);
	frag_state_free(s);
}

static void test_timeout(void)
{
	struct frag_state *s = frag_state_new(FRAG_SLOTS);
	struct pkt w;

	fill_payload();
	CHECK(frag4(11, 0, 1480, true, 1000, s, &w) == FRAG_HELD);
	CHECK(frag4(11, 1480, 20, false, 1000 + FRAG_TIMEOUT_MS - 1, s, &w) ==
	      FRAG_COMPLETE);
	CHECK(frag4(12, 0, 1480, true, 1000, s, &w) == FRAG_HELD);
	/* Too late: the first fragment has expired, so this one waits. */
	CHECK(frag4(12, 1480, 20, false, 1000 + FRAG_TIMEOUT_MS, s, &w) ==
	      FRAG_HELD);
	frag_state_free(s);
}

static void test_too_many_concurrent(void)
{
	struct frag_state *s = frag_state_new(FRAG_SLOTS);
	struct pkt w;

	fill_payload();
	for (uint16_t id = 100; id < 100 + FRAG_SLOTS; id++)
		CHECK(frag4(id, 0, 8, true, 0, s, &w) == FRAG_HELD);
	CHECK(frag4(200, 0, 8, true, 0, s, &w) == FRAG_DROPPED);
	/* Those in progress still complete, which frees a slot. */
	CHECK(frag4(100, 8, 8, false, 0, s, &w) == FRAG_COMPLETE);
	CHECK(frag4(200, 0, 8, true, 0, s, &w) == FRAG_HELD);
	CHECK(frag4(201, 0, 8, true, 0, s, &w) == FRAG_DROPPED);
	/* After the timeout every slot is free again. */
	CHECK(frag4(201, 0, 8, true, FRAG_TIMEOUT_MS, s, &w) == FRAG_HELD);
	frag_state_free(s);
}

/* A context may ask for fewer slots (fuzzers do); the limit holds. */
static void test_fewer_slots(void)
{
	struct frag_state *s = frag_state_new(2);
	struct pkt w;

	fill_payload();
	CHECK(frag4(100, 0, 8, true, 0, s, &w) == FRAG_HELD);
	CHECK(frag4(101, 0, 8, true, 0, s, &w) == FRAG_HELD);
	CHECK(frag4(102, 0, 8, true, 0, s, &w) == FRAG_DROPPED);
	CHECK(frag4(100, 8, 8, false, 0, s, &w) == FRAG_COMPLETE);
	CHECK(frag4(102, 0, 8, true, 0, s, &w) == FRAG_HELD);
	frag_state_free(s);
}

static void test_max_and_oversize(void)
{
	struct frag_state *s = frag_state_new(FRAG_SLOTS);
	struct pkt w;

	fill_payload();
	/* The largest datagram: 65535 bytes with its 20-byte header. */
	for (size_t off = 0; off < 64000; off += 8000)
		CHECK(frag4(20, off, 8000, true, 0, s, &w) == FRAG_HELD);
	CHECK(frag4(20, 64000, 65515 - 64000, false, 0, s, &w) ==
	      FRAG_COMPLETE);
	CHECK(whole_ok(&w, 65515));
	/* One byte more does not fit in an IPv4 datagram. */
	CHECK(frag4(21, 0, 8000, true, 0, s, &w) == FRAG_HELD);
	CHECK(frag4(21, 64000, 65516 - 64000, false, 0, s, &w) == FRAG_DROPPED);
	/* Largest offset plus a length that passes 65535. */
	CHECK(frag4(22, 8191 * 8, 16, false, 0, s, &w) == FRAG_DROPPED);
	CHECK(frag4(23, 8191 * 8, 8, true, 0, s, &w) == FRAG_DROPPED);
	frag_state_free(s);
}

/**
 * send_plain() - the plain fragments of a 65515-byte datagram after byte 8000
 * @id:		IP identification
 * @s:		reassembly state
 * @whole:	filled on completion
 *
 * Return: the verdict on the last one
 */
static enum frag_verdict send_plain(uint16_t id, struct frag_state *s,
                                    struct pkt *whole)
{
	enum frag_verdict v = FRAG_HELD;

	for (size_t off = 8000; off < 64000 && v == FRAG_HELD; off += 8000)
		v = frag4(id, off, 8000, true, 0, s, whole);
	if (v == FRAG_HELD)
		v = frag4(id, 64000, 65515 - 64000, false, 0, s, whole);
	return v;
}

static void test_oversize_by_first_header(void)
{
	struct frag_state *s = frag_state_new(FRAG_SLOTS);
	struct iphdr ih;
	struct pkt w;

	fill_payload();
	/* The datagram keeps the first fragment's 60-byte header: 65475
	 * payload bytes fit, with every byte of its length counted. */
	CHECK(frag4_opt(30, 0, 8000, true, 60, 0, s, &w) == FRAG_HELD);
	for (size_t off = 8000; off < 64000; off += 8000)
		CHECK(frag4(30, off, 8000, true, 0, s, &w) == FRAG_HELD);
	CHECK(frag4(30, 64000, 65475 - 64000, false, 0, s, &w) ==
	      FRAG_COMPLETE);
	memcpy(&ih, w.l3, sizeof(ih));
	CHECK(w.l3len == 60 && ntohs(ih.tot_len) == 65535);
	CHECK(w.l4len == 65475 && !memcmp(w.l4, payload, 65475));
	CHECK(csum_ip4_header(w.l3, 60) == 0);
	/* 40 more bytes of payload would make 65575, whose tot_len wraps:
	 * the datagram goes, whether its first fragment comes first ... */
	CHECK(frag4_opt(31, 0, 8000, true, 60, 0, s, &w) == FRAG_HELD);
	CHECK(send_plain(31, s, &w) == FRAG_DROPPED);
	/* ... or last. */
	CHECK(send_plain(32, s, &w) == FRAG_HELD);
	CHECK(frag4_opt(32, 0, 8000, true, 60, 0, s, &w) == FRAG_DROPPED);
	/* Nothing is left of either to complete later. */
	CHECK(frag4(31, 0, 8000, true, 0, s, &w) == FRAG_HELD);
	CHECK(frag4(32, 0, 8000, true, 0, s, &w) == FRAG_HELD);
	CHECK(frag4(32, 64000, 65515 - 64000, false, 0, s, &w) == FRAG_HELD);
	frag_state_free(s);
}

/**
 * frag6() - build an IPv6 fragment of the test datagram, reassemble it
 * @id:		identification
 * @off:	payload offset, bytes
 * @len:	payload bytes from @payload + @off
 * @more:	M flag
 * @hlim:	hop limit
 * @s:		reassembly state
 * @whole:	filled on completion
 *
 * Return: the reassembler's verdict
 */
static enum frag_verdict frag6(uint32_t id, size_t off, size_t len, bool more,
                               uint8_t hlim, struct frag_state *s,
                               struct pkt *whole)
{
	struct ip6_hdr h = {0};
	struct ip6_frag fh = {0};
	struct pkt p = {.v6 = true, .proto = IPPROTO_FRAGMENT};

	h.ip6_flow = htonl(6U << 28);
	h.ip6_plen = htons((uint16_t)(sizeof(fh) + len));
	h.ip6_nxt = IPPROTO_FRAGMENT;
	h.ip6_hlim = hlim;
	inet_pton(AF_INET6, "fd00::100", &h.ip6_src);
	inet_pton(AF_INET6, "fd18::1", &h.ip6_dst);
	fh.ip6f_nxt = IPPROTO_UDP;
	fh.ip6f_offlg = htons((uint16_t)(off | (more ? 1 : 0)));
	fh.ip6f_ident = htonl(id);
	memcpy(frame, &h, sizeof(h));
	memcpy(frame + sizeof(h), &fh, sizeof(fh));
	memcpy(frame + sizeof(h) + sizeof(fh), payload + off, len);
	p.src = h.ip6_src;
	p.dst = h.ip6_dst;
	p.l3 = frame;
	p.l3len = sizeof(h);
	p.l4 = frame + sizeof(h);
	p.l4len = sizeof(fh) + len;
	return frag6_reassemble(s, &p, 0, whole);
}

static void test_v6_keeps_hop_limit(void)
{
	struct frag_state *s = frag_state_new(FRAG_SLOTS);
	struct ip6_hdr h;
	struct pkt w;

	fill_payload();
	/* The first fragment's hop limit, in either order, not a made-up
	 * one: 255 would let anything pass as sent on the link. */
	CHECK(frag6(1, 0, 1000, true, 7, s, &w) == FRAG_HELD);
	CHECK(frag6(1, 1000, 500, false, 9, s, &w) == FRAG_COMPLETE);
	memcpy(&h, w.l3, sizeof(h));
	CHECK(w.v6 && w.l3len == 40 && h.ip6_hlim == 7);
	CHECK(h.ip6_nxt == IPPROTO_UDP && ntohs(h.ip6_plen) == 1500);
	CHECK(w.l4len == 1500 && !memcmp(w.l4, payload, 1500));
	CHECK(frag6(2, 1000, 500, false, 255, s, &w) == FRAG_HELD);
	CHECK(frag6(2, 0, 1000, true, 64, s, &w) == FRAG_COMPLETE);
	memcpy(&h, w.l3, sizeof(h));
	CHECK(h.ip6_hlim == 64);
	frag_state_free(s);
}

/**
 * fake_ctx() - a context whose tap is one end of a SEQPACKET socketpair
 * @c:		filled
 * @o:		options to point it at
 * @peer:	filled with the other end, where frames arrive one per read
 * @mtu:	MTU of the fake tap
 *
 * Return: 0 on success
 */
static int fake_ctx(struct ctx *c, struct opts *o, int *peer, unsigned int mtu)
{
	int sv[2];

	memset(c, 0, sizeof(*c));
	memset(o, 0, sizeof(*o));
	c->o = o;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv))
		return -1;
	c->tapfd[0] = sv[0];
	*peer = sv[1];
	c->tap.mtu = mtu;
	c->tap.queues = 1;
	inet_pton(AF_INET, "10.0.2.2", &c->gw4);
	inet_pton(AF_INET, "255.255.255.0", &c->mask4);
	memcpy(c->guest_mac, "\x02\x00\x00\x00\x00\x01", 6);
	return frag_init(c);
}

/**
 * fake_ctx_close() - release fake_ctx()
 * @c:		context
 * @peer:	other end of the tap
 */
static void fake_ctx_close(struct ctx *c, int peer)
{
	frag_cleanup(c);
	close(c->tapfd[0]);
	close(peer);
}

/**
 * read_frame() - the next frame written to the fake tap
 * @fd:		peer end
 * @buf:	at least 65536 + 14 bytes
 *
 * Return: its length, or -1 if none is waiting
 */
static ssize_t read_frame(int fd, uint8_t *buf)
{
	return recv(fd, buf, 65536 + 14, MSG_DONTWAIT);
}

/**
 * roundtrip() - fragment a datagram toward the "guest", reassemble it back
 * @v6:		IPv6 rather than IPv4
 * @mtu:	MTU of the fake tap
 * @len:	L4 bytes
 * @nfrag:	filled with the number of frames written
 *
 * Every frame is also checked: size within the MTU, and for IPv4 a valid
 * header checksum and one IP id for all fragments.
 *
 * Return: true if the reassembled datagram equals the original
 */
static bool roundtrip(bool v6, unsigned int mtu, size_t len, int *nfrag)
{
	static uint8_t buf[65536 + 14];
	struct frag_state *s = frag_state_new(FRAG_SLOTS);
	struct in6_addr src, dst;
	struct iovec iov[3];
	bool ok = true, done = false;
	int peer, first_id = -1;
	struct opts o;
	struct ctx c;
	ssize_t n;

	*nfrag = 0;
	if (fake_ctx(&c, &o, &peer, mtu) || !s)
		return false;
	if (v6) {
		inet_pton(AF_INET6, "fd18::1", &src);
		inet_pton(AF_INET6, "fd00::100", &dst);
	} else {
		inany_from_v4(&src, (struct in_addr){htonl(0xc6120001)});
		inany_from_v4(&dst, (struct in_addr){htonl(0x0a000264)});
	}
	/* Odd split points: fragments must cross iovec boundaries. */
	iov[0] = (struct iovec){payload, 3};
	iov[1] = (struct iovec){payload + 3, len / 2 - 3};
	iov[2] = (struct iovec){payload + len / 2, len - len / 2};
	if (frag_output(&c, &src, &dst, IPPROTO_UDP, iov, 3, len))
		ok = false;
	while (ok && (n = read_frame(peer, buf)) > 0) {
		struct pkt p = {.v6 = v6, .src = src, .dst = dst};
		struct pkt w;
		enum frag_verdict v;

		(*nfrag)++;
		ok = (size_t)n <= 14 + mtu && !done;
		p.l3 = buf + 14;
		if (v6) {
			p.proto = IPPROTO_FRAGMENT;
			p.l3len = 40;
			p.l4 = p.l3 + 40;
			p.l4len = (size_t)n - 14 - 40;
			ok = ok && p.l3[6] == IPPROTO_FRAGMENT;
			v = frag6_reassemble(s, &p, 0, &w);
		} else {
			struct iphdr ih;

			memcpy(&ih, p.l3, sizeof(ih));
			if (first_id < 0)
				first_id = ih.id;
			ok = ok && csum_ip4_header(p.l3, 20) == 0 &&
			     ih.id == first_id &&
			     ntohs(ih.tot_len) == (size_t)n - 14;
			p.proto = ih.protocol;
			p.l3len = 20;
			p.l4 = p.l3 + 20;
			p.l4len = (size_t)n - 14 - 20;
			v = frag4_reassemble(s, &p, 0, &w);
		}
		if (v == FRAG_DROPPED)
			ok = false;
		if (v == FRAG_COMPLETE) {
			done = true;
			ok = ok && w.l4len == len && w.proto == IPPROTO_UDP &&
			     !memcmp(w.l4, payload, len);
		}
	}
	fake_ctx_close(&c, peer);
	frag_state_free(s);
	return ok && done;
}

static void test_output_v4(void)
{
	int n;

	fill_payload();
	CHECK(roundtrip(false, 1500, 4000, &n));
	CHECK(n == 3);
	CHECK(roundtrip(false, 1500, 65515, &n));
	CHECK(n == 45);
	CHECK(roundtrip(false, 68, 1000, &n));
	CHECK(n == 21);
	CHECK(roundtrip(false, 9000, 60008, &n));
}

static void test_output_v6(void)
{
	int n;

	fill_payload();
	CHECK(roundtrip(true, 1500, 4000, &n));
	CHECK(n == 3);
	CHECK(roundtrip(true, 1280, 65535, &n));
	CHECK(roundtrip(true, 1500, 65527, &n));
}

static void test_output_too_big(void)
{
	struct in6_addr src, dst;
	struct iovec iov = {payload, 65516};
	struct opts o;
	struct ctx c;
	int peer;
	uint8_t b[16];

	CHECK(fake_ctx(&c, &o, &peer, 1500) == 0);
	inany_from_v4(&src, (struct in_addr){htonl(0xc6120001)});
	inany_from_v4(&dst, (struct in_addr){htonl(0x0a000264)});
	CHECK(frag_output(&c, &src, &dst, IPPROTO_UDP, &iov, 1, 65516) == -1);
	CHECK(c.stats.drops[DROP_BAD_LENGTH] == 1);
	CHECK(recv(peer, b, sizeof(b), MSG_DONTWAIT) < 0);
	fake_ctx_close(&c, peer);
}

const struct unit_case unit_cases[] = {
        {"reassembly in order", test_in_order},
        {"reassembly out of order", test_out_of_order},
        {"two datagrams interleaved", test_interleaved},
        {"exact duplicates are ignored", test_duplicates},
        {"overlap drops the datagram", test_overlap_drops_datagram},
        {"a changed duplicate drops the datagram", test_inconsistent_duplicate},
        {"inconsistent ends drop the datagram", test_inconsistent_end},
        {"timeout", test_timeout},
        {"at most FRAG_SLOTS datagrams at once", test_too_many_concurrent},
        {"a context's own, smaller slot count", test_fewer_slots},
        {"65535-byte datagram, and oversize ones", test_max_and_oversize},
        {"the first fragment's IPv4 options count against 65535",
         test_oversize_by_first_header},
        {"IPv6: the first fragment's hop limit is kept",
         test_v6_keeps_hop_limit},
        {"IPv4 fragments to the guest reassemble", test_output_v4},
        {"IPv6 fragments to the guest reassemble", test_output_v6},
        {"too big to fragment", test_output_too_big},
        {NULL, NULL},
};
