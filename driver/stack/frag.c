// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - IP fragments: bounded reassembly of the guest's fragments
 *
 * Fragments from the guest are reassembled, not dropped: a UDP datagram
 * bigger than the MTU (DNS over EDNS, VPN and game protocols, 60000-byte
 * tests) leaves the guest as fragments, and slirp4netns delivers it.
 * The cost is bounded by design: at most FRAG_SLOTS datagrams in progress
 * (fewer if the context asks: a fuzzer's context stays cheap to build),
 * each at most 64 KiB in preallocated memory, each given FRAG_TIMEOUT_MS to
 * complete (checked on every fragment, so nothing runs while none arrive).
 * Any overlap that is not an exact duplicate, any disagreement about the
 * datagram's end, and any datagram that would exceed 65535 bytes discards
 * the whole datagram (RFC 5722 for IPv6; the same rule for IPv4 closes the
 * classic overlap attacks). A 17th concurrent datagram is refused rather
 * than evicting one that may be about to complete.
 *
 * Toward the guest, datagrams above the MTU leave as fragments: frag_out.c.
 */

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/icmp6.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>

#include "driver/core/clock.h"
#include "driver/core/seed.h"
#include "driver/stack/csum.h"
#include "driver/stack/frag.h"
#include "driver/stack/frag_reasm.h"
#include "driver/core/inany.h"
#include "driver/stack/ip.h"
#include "driver/stack/ip6.h"
#include "driver/core/log.h"

/* Room in front of the payload for the header of the reassembled packet. */
#define FRAG_HDR_ROOM 60
#define FRAG_DATA_MAX 65535
#define FRAG_BLOCKS ((FRAG_DATA_MAX + 7) / 8)

/**
 * struct frag_piece - one fragment, reduced to what reassembly needs
 * @v6:		IPv6
 * @src:	source address
 * @dst:	destination address
 * @id:		identification
 * @proto:	L4 protocol of the datagram
 * @offset:	payload offset in bytes
 * @more:	more fragments follow
 * @data:	payload
 * @len:	bytes at @data
 * @hdr:	IPv4 header, kept from the first fragment; NULL for IPv6
 * @hlen:	its length
 * @hlim:	IPv6 hop limit
 */
struct frag_piece {
	bool v6;
	struct in6_addr src;
	struct in6_addr dst;
	uint32_t id;
	uint8_t proto;
	size_t offset;
	bool more;
	const uint8_t *data;
	size_t len;
	const uint8_t *hdr;
	size_t hlen;
	uint8_t hlim;
};

/**
 * struct frag_dgram - one datagram being reassembled
 * @used:	slot in use
 * @key:	addresses, id and protocol of its first fragment
 * @deadline_ms: when it is given up
 * @total:	payload length, once the last fragment came; else 0
 * @have_last:	the last fragment came
 * @hi:		highest payload end seen
 * @received:	payload bytes held
 * @hlen:	bytes of IPv4 header kept in front of @buf's payload
 * @have_first:	the fragment at offset 0 came
 * @hlim:	IPv6 hop limit of the fragment at offset 0
 * @blocks:	bitmap of 8-byte payload units held
 * @buf:	FRAG_HDR_ROOM bytes for a header, then the payload
 */
struct frag_dgram {
	bool used;
	struct frag_piece key;
	uint64_t deadline_ms;
	size_t total;
	bool have_last;
	size_t hi;
	size_t received;
	size_t hlen;
	bool have_first;
	uint8_t hlim;
	uint8_t blocks[(FRAG_BLOCKS + 7) / 8];
	uint8_t buf[FRAG_HDR_ROOM + FRAG_DATA_MAX];
};

/**
 * struct frag_state - reassembly slots and the IPv6 identification source
 * @expired:	datagrams given up on timeout, not yet counted as drops
 * @rng:	xorshift state for IPv6 fragment ids
 * @nslots:	entries in @slot
 * @slot:	datagrams in progress
 */
struct frag_state {
	uint64_t expired;
	uint64_t rng;
	unsigned int nslots;
	struct frag_dgram slot[];
};

/**
 * frag_state_new() - allocate empty reassembly state
 * @nslots:	datagrams reassembled at once, 1..FRAG_SLOTS (0: FRAG_SLOTS)
 *
 * Return: the state, or NULL without memory
 */
struct frag_state *frag_state_new(unsigned int nslots)
{
	struct frag_state *s;

	if (!nslots || nslots > FRAG_SLOTS)
		nslots = FRAG_SLOTS;
	s = calloc(1, sizeof(*s) + nslots * sizeof(s->slot[0]));
	if (!s)
		return NULL;
	s->nslots = nslots;
	/* seed_u64() is never 0, which would stall the xorshift sequence. */
	s->rng = seed_u64();
	return s;
}

/**
 * frag_state_free() - free reassembly state
 * @s:		state, or NULL
 */
void frag_state_free(struct frag_state *s)
{
	free(s);
}

/**
 * same_datagram() - whether a fragment belongs to a datagram in progress
 * @d:		datagram
 * @f:		fragment
 *
 * Return: true on equal family, addresses, id and protocol
 */
static bool same_datagram(const struct frag_dgram *d,
                          const struct frag_piece *f)
{
	return d->key.v6 == f->v6 && d->key.id == f->id &&
	       d->key.proto == f->proto && inany_equal(&d->key.src, &f->src) &&
	       inany_equal(&d->key.dst, &f->dst);
}

/**
 * expire() - give up datagrams past their deadline
 * @s:		state
 * @now_ms:	current time
 */
static void expire(struct frag_state *s, uint64_t now_ms)
{
	for (unsigned int i = 0; i < s->nslots; i++) {
		if (s->slot[i].used && now_ms >= s->slot[i].deadline_ms) {
			s->slot[i].used = false;
			s->expired++;
		}
	}
}

/**
 * slot_for() - the datagram a fragment belongs to, started if new
 * @s:		state
 * @f:		fragment
 * @now_ms:	current time
 *
 * A look at each slot, per fragment: at most FRAG_SLOTS (expire() too).
 *
 * Return: the datagram, or NULL if all slots are busy
 */
static struct frag_dgram *slot_for(struct frag_state *s,
                                   const struct frag_piece *f, uint64_t now_ms)
{
	struct frag_dgram *free_slot = NULL;

	for (unsigned int i = 0; i < s->nslots; i++) {
		struct frag_dgram *d = &s->slot[i];

		if (d->used && same_datagram(d, f))
			return d;
		if (!d->used && !free_slot)
			free_slot = d;
	}
	if (!free_slot)
		return NULL;
	free_slot->used = true;
	free_slot->key = *f;
	free_slot->deadline_ms = now_ms + FRAG_TIMEOUT_MS;
	free_slot->total = free_slot->hi = free_slot->received = 0;
	free_slot->have_last = free_slot->have_first = false;
	free_slot->hlen = 0;
	memset(free_slot->blocks, 0, sizeof(free_slot->blocks));
	return free_slot;
}

/**
 * blocks_held() - how many 8-byte units of a range are already held
 * @d:		datagram
 * @first:	first unit
 * @end:	one past the last unit
 *
 * Return: the count
 */
static size_t blocks_held(const struct frag_dgram *d, size_t first, size_t end)
{
	size_t n = 0;

	for (size_t b = first; b < end; b++)
		n += (d->blocks[b / 8] >> (b % 8)) & 1;
	return n;
}

/**
 * payload_limit() - largest payload end a datagram may reach
 * @d:		datagram
 * @f:		fragment being added to it
 *
 * The reassembled IPv4 datagram carries the first fragment's header, so
 * that header, not the one of the fragment at hand, counts against 65535;
 * until the first fragment comes, the smallest header is assumed. An IPv6
 * header is not part of the payload length.
 *
 * Return: the limit in payload bytes
 */
static size_t payload_limit(const struct frag_dgram *d,
                            const struct frag_piece *f)
{
	if (f->v6)
		return FRAG_DATA_MAX;
	if (d->have_first)
		return FRAG_DATA_MAX - d->hlen;
	if (!f->offset)
		return FRAG_DATA_MAX - f->hlen;
	return FRAG_DATA_MAX - sizeof(struct iphdr);
}

/**
 * ends_consistent() - check a fragment against what is known of the end
 * @d:		datagram
 * @f:		fragment
 *
 * Return: true if the fragment fits the datagram's length and alignment
 */
static bool ends_consistent(struct frag_dgram *d, const struct frag_piece *f)
{
	size_t end = f->offset + f->len, limit = payload_limit(d, f);

	/* @hi: a first fragment with a longer header may come last. */
	if (end > limit || d->hi > limit)
		return false;
	/* Every fragment but the last carries whole 8-byte units. */
	if (f->more && (!f->len || f->len % 8))
		return false;
	if (!f->more) {
		if ((d->have_last && d->total != end) || d->hi > end)
			return false;
		d->have_last = true;
		d->total = end;
	} else if (d->have_last && end > d->total) {
		return false;
	}
	return true;
}

/**
 * add_piece() - store a fragment's payload
 * @d:		datagram
 * @f:		fragment, consistent with @d's length
 *
 * Return: true if stored or an exact duplicate, false on any other overlap
 */
static bool add_piece(struct frag_dgram *d, const struct frag_piece *f)
{
	size_t first = f->offset / 8, end = (f->offset + f->len + 7) / 8;
	size_t held = blocks_held(d, first, end);
	uint8_t *dst = d->buf + FRAG_HDR_ROOM + f->offset;

	if (held)
		return held == end - first && !memcmp(dst, f->data, f->len);
	memcpy(dst, f->data, f->len);
	for (size_t b = first; b < end; b++)
		d->blocks[b / 8] |= (uint8_t)(1U << (b % 8));
	d->received += f->len;
	if (f->offset + f->len > d->hi)
		d->hi = f->offset + f->len;
	if (!f->offset && f->hdr) {
		memcpy(d->buf + FRAG_HDR_ROOM - f->hlen, f->hdr, f->hlen);
		d->hlen = f->hlen;
	}
	if (!f->offset) {
		d->have_first = true;
		d->hlim = f->hlim;
	}
	return true;
}

/**
 * build_whole() - describe a complete datagram as one packet
 * @d:		datagram with all its payload; its slot is freed
 * @whole:	filled; points into the slot, valid until the next fragment
 */
static void build_whole(struct frag_dgram *d, struct pkt *whole)
{
	uint8_t *l4 = d->buf + FRAG_HDR_ROOM;

	memset(whole, 0, sizeof(*whole));
	whole->v6 = d->key.v6;
	whole->src = d->key.src;
	whole->dst = d->key.dst;
	whole->proto = d->key.proto;
	whole->l4 = l4;
	whole->l4len = d->total;
	if (d->key.v6) {
		struct ip6_hdr h;

		ip6_build_header(&h, &d->key.src, &d->key.dst, d->key.proto,
		                 d->total);
		/* Not the 255 of our own ICMPv6: it would pass as on-link. */
		h.ip6_hlim = d->hlim;
		whole->l3len = sizeof(h);
		whole->l3 = l4 - sizeof(h);
		memcpy(whole->l3, &h, sizeof(h));
	} else {
		uint8_t *l3 = l4 - d->hlen;
		struct iphdr ih;

		/* Edited through a copy: the header need not be aligned. */
		memcpy(&ih, l3, sizeof(ih));
		ih.tot_len = htons((uint16_t)(d->hlen + d->total));
		ih.frag_off = 0;
		ih.check = 0;
		memcpy(l3, &ih, sizeof(ih));
		ih.check = csum_ip4_header(l3, d->hlen);
		memcpy(l3, &ih, sizeof(ih));
		whole->l3 = l3;
		whole->l3len = d->hlen;
	}
	d->used = false;
}

/**
 * reassemble() - add a fragment to its datagram
 * @s:		state
 * @f:		fragment
 * @now_ms:	current time
 * @whole:	filled on FRAG_COMPLETE
 *
 * Return: the verdict
 */
static enum frag_verdict reassemble(struct frag_state *s,
                                    const struct frag_piece *f, uint64_t now_ms,
                                    struct pkt *whole)
{
	struct frag_dgram *d;

	expire(s, now_ms);
	d = slot_for(s, f, now_ms);
	if (!d)
		return FRAG_DROPPED;
	if (!ends_consistent(d, f) || !add_piece(d, f)) {
		d->used = false;
		return FRAG_DROPPED;
	}
	if (!d->have_first || !d->have_last || d->received != d->total)
		return FRAG_HELD;
	build_whole(d, whole);
	return FRAG_COMPLETE;
}

/**
 * frag4_reassemble() - add an IPv4 fragment to its datagram
 * @s:		state
 * @p:		validated IPv4 packet with MF set or a nonzero offset
 * @now_ms:	current monotonic time in milliseconds
 * @whole:	on FRAG_COMPLETE, the datagram: header with tot_len fixed and
 *		fragment bits cleared, whole payload, no vnet header; valid
 *		until the next call
 *
 * Return: the verdict
 */
enum frag_verdict frag4_reassemble(struct frag_state *s, const struct pkt *p,
                                   uint64_t now_ms, struct pkt *whole)
{
	struct frag_piece f = {0};
	uint16_t fo;

	if (p->l3len < sizeof(struct iphdr) || p->l3len > FRAG_HDR_ROOM)
		return FRAG_DROPPED;
	memcpy(&fo, p->l3 + 6, 2);
	fo = ntohs(fo);
	f.src = p->src;
	f.dst = p->dst;
	f.id = (uint32_t)p->l3[4] << 8 | p->l3[5];
	f.proto = p->proto;
	f.offset = (size_t)(fo & IP_OFFMASK) * 8;
	f.more = fo & IP_MF;
	f.data = p->l4;
	f.len = p->l4len;
	f.hdr = p->l3;
	f.hlen = p->l3len;
	return reassemble(s, &f, now_ms, whole);
}

/**
 * frag6_reassemble() - add an IPv6 fragment to its datagram
 * @s:		state
 * @p:		validated IPv6 packet whose @proto is IPPROTO_FRAGMENT and
 *		whose @l4 starts at the Fragment header
 * @now_ms:	current monotonic time in milliseconds
 * @whole:	on FRAG_COMPLETE, the datagram behind a plain 40-byte header
 *		with the first fragment's hop limit (unfragmentable extension
 *		headers are not kept); valid until the next call
 *
 * Return: the verdict
 */
enum frag_verdict frag6_reassemble(struct frag_state *s, const struct pkt *p,
                                   uint64_t now_ms, struct pkt *whole)
{
	struct frag_piece f = {.v6 = true};
	uint16_t offlg;
	uint32_t id;

	if (p->l3len < sizeof(struct ip6_hdr) || p->l4len < 8)
		return FRAG_DROPPED;
	memcpy(&offlg, p->l4 + 2, 2);
	memcpy(&id, p->l4 + 4, 4);
	offlg = ntohs(offlg);
	f.src = p->src;
	f.dst = p->dst;
	f.id = ntohl(id);
	f.proto = p->l4[0];
	f.offset = offlg & 0xfff8;
	f.more = offlg & 1;
	f.data = p->l4 + 8;
	f.len = p->l4len - 8;
	f.hlim = p->l3[offsetof(struct ip6_hdr, ip6_hlim)];
	return reassemble(s, &f, now_ms, whole);
}

/**
 * is_ndp() - whether a datagram is a neighbour discovery message
 * @p:		packet
 *
 * Return: true for ICMPv6 router and neighbour solicitations and adverts,
 *	   and redirects (types 133 to 137)
 */
static bool is_ndp(const struct pkt *p)
{
	return p->v6 && p->proto == IPPROTO_ICMPV6 && p->l4len &&
	       p->l4[0] >= ND_ROUTER_SOLICIT && p->l4[0] <= ND_REDIRECT;
}

/**
 * deliver_whole() - hand a reassembled datagram to its protocol
 * @c:		context
 * @whole:	the datagram
 *
 * Marked as the one being handled: a thread without its flow passes the
 * whole datagram on, not the last fragment.
 */
static void deliver_whole(struct ctx *c, struct pkt *whole)
{
	c->rx_whole = whole;
	ip_l4_input(c, whole);
	c->rx_whole = NULL;
}

/**
 * frag_deliver() - count a reassembly verdict and pass a whole datagram on
 * @c:		context
 * @v:		verdict
 * @whole:	the datagram on FRAG_COMPLETE; dropped if it is NDP
 */
static void frag_deliver(struct ctx *c, enum frag_verdict v, struct pkt *whole)
{
	struct frag_state *s = c->frag;

	c->stats.drops[DROP_FRAGMENT] += s->expired;
	s->expired = 0;
	/* RFC 6980: real NDP fits one packet; fragments only evade checks. */
	if (v == FRAG_DROPPED || (v == FRAG_COMPLETE && is_ndp(whole)))
		c->stats.drops[DROP_FRAGMENT]++;
	else if (v == FRAG_COMPLETE)
		deliver_whole(c, whole);
}

/**
 * frag4_input() - reassemble an IPv4 fragment from the guest
 * @c:		context
 * @p:		validated IPv4 packet with MF set or a nonzero offset
 *
 * Return: true: the fragment is always consumed
 */
bool frag4_input(struct ctx *c, struct pkt *p)
{
	struct pkt whole;

	if (!c->frag) {
		c->stats.drops[DROP_FRAGMENT]++;
		return true;
	}
	frag_deliver(c, frag4_reassemble(c->frag, p, clock_ms(), &whole),
	             &whole);
	return true;
}

/**
 * frag6_input() - reassemble an IPv6 fragment from the guest
 * @c:		context
 * @p:		validated IPv6 packet, @proto IPPROTO_FRAGMENT, @l4 at the
 *		Fragment header
 *
 * Return: true: the fragment is always consumed
 */
bool frag6_input(struct ctx *c, struct pkt *p)
{
	struct pkt whole;

	if (!c->frag) {
		c->stats.drops[DROP_FRAGMENT]++;
		return true;
	}
	frag_deliver(c, frag6_reassemble(c->frag, p, clock_ms(), &whole),
	             &whole);
	return true;
}

/**
 * frag6_ident() - a fresh, unpredictable IPv6 fragment identification
 * @c:		context
 *
 * Return: the identification
 */
uint32_t frag6_ident(struct ctx *c)
{
	uint64_t *x;

	if (!c->frag) /* No reassembly state, as in some unit tests. */
		return (uint32_t)(seed_u64() >> 32);
	x = &c->frag->rng;
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return (uint32_t)(*x >> 32);
}

/**
 * frag_init() - allocate the reassembly slots
 * @c:		context; c->frag_slots of them, 0 for FRAG_SLOTS
 *
 * Return: 0 on success, -1 after printing one error line
 */
int frag_init(struct ctx *c)
{
	c->frag = frag_state_new(c->frag_slots);
	if (!c->frag) {
		err_msg("fragments: out of memory for reassembly");
		return -1;
	}
	return 0;
}

/**
 * frag_cleanup() - free the reassembly slots
 * @c:		context
 */
void frag_cleanup(struct ctx *c)
{
	frag_state_free(c->frag);
	c->frag = NULL;
}
