// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - TCP segments: parse the guest's, build ours (with GSO offload) */

#include <string.h>
#include <arpa/inet.h>
#include <netinet/tcp.h>

#include "driver/stack/csum.h"
#include "driver/stack/icmp.h"
#include "driver/core/inany.h"
#include "driver/stack/ip.h"
#include "driver/stack/tap_write.h"
#include "driver/tcp/tcp_internal.h"
#include "driver/tcp/tcp_seg.h"

/* Largest TCP payload in one IPv4 packet (65535 - 20 - 20); IPv6 could do
 * 20 bytes more, but one limit keeps the arithmetic shared.
 */
#define TCP_GSO_MAX 65495

/**
 * parse_options() - read MSS, window scale and SACK-permitted from a SYN's
 *		     options
 * @opt:	options
 * @len:	their length
 * @s:		segment to fill (mss, ws, sack_ok)
 *
 * Return: 0, or -1 if an option overruns the header
 */
static int parse_options(const uint8_t *opt, size_t len, struct tcp_seg *s)
{
	size_t i = 0;

	while (i < len) {
		uint8_t kind = opt[i], olen;

		if (kind == TCPOPT_EOL)
			break;
		if (kind == TCPOPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= len)
			return -1;
		olen = opt[i + 1];
		if (olen < 2 || i + olen > len)
			return -1;
		if (kind == TCPOPT_MAXSEG && olen == TCPOLEN_MAXSEG)
			s->mss = (uint16_t)(opt[i + 2] << 8 | opt[i + 3]);
		else if (kind == TCPOPT_WINDOW && olen == TCPOLEN_WINDOW)
			s->ws = opt[i + 2] > 14 ? 14 : opt[i + 2];
		else if (kind == TCPOPT_SACK_PERMITTED &&
		         olen == TCPOLEN_SACK_PERMITTED)
			s->sack_ok = true;
		i += olen;
	}
	return 0;
}

/**
 * tcp_seg_parse() - validate a TCP segment from the guest
 * @c:		context, for drop counters
 * @p:		IP packet with proto TCP
 * @s:		filled on success
 *
 * A full checksum is verified; a partial one (NEEDS_CSUM, the guest kernel
 * offloading to us) cannot be, and the guest kernel is its author anyway.
 *
 * Return: 0 on success, -1 (counted) on a malformed segment
 */
int tcp_seg_parse(struct ctx *c, const struct pkt *p, struct tcp_seg *s)
{
	struct tcphdr th;
	size_t hlen;

	if (p->l4len < sizeof(th)) {
		c->stats.drops[DROP_SHORT_FRAME]++;
		return -1;
	}
	memcpy(&th, p->l4, sizeof(th));
	hlen = (size_t)th.doff * 4;
	if (hlen < sizeof(th) || hlen > p->l4len) {
		c->stats.drops[DROP_BAD_LENGTH]++;
		return -1;
	}
	if (!(p->vh && (p->vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM)) &&
	    csum_fold(csum_add(
	            ip_pseudo_csum(&p->src, &p->dst, IPPROTO_TCP, p->l4len),
	            p->l4, p->l4len))) {
		c->stats.drops[DROP_BAD_CHECKSUM]++;
		return -1;
	}
	memset(s, 0, sizeof(*s));
	s->ws = -1;
	s->sport = ntohs(th.source);
	s->dport = ntohs(th.dest);
	s->seq = ntohl(th.seq);
	s->ack = ntohl(th.ack_seq);
	s->flags = p->l4[13] & (TH_FIN | TH_SYN | TH_RST | TH_PSH | TH_ACK);
	s->win = ntohs(th.window);
	s->payload = p->l4 + hlen;
	s->len = p->l4len - hlen;
	if ((s->flags & TH_SYN) &&
	    parse_options(p->l4 + sizeof(th), hlen - sizeof(th), s)) {
		c->stats.drops[DROP_BAD_LENGTH]++;
		return -1;
	}
	return 0;
}

/**
 * tcp_max_payload() - largest payload of one frame to the guest
 * @c:		context
 * @conn:	connection
 *
 * Return: a GSO super-segment's worth with vnet headers, else one MSS
 */
size_t tcp_max_payload(const struct ctx *c, const struct tcp_conn *conn)
{
	return c->vnet_len ? TCP_GSO_MAX : conn->mss;
}

/**
 * window_field() - the 16-bit window field for @wnd bytes
 * @conn:	connection, for the negotiated scaling
 * @flags:	TH_SYN segments carry an unscaled window
 * @wnd:	window in bytes
 *
 * Return: field value, host order
 */
static uint16_t window_field(const struct tcp_conn *conn, uint8_t flags,
                             uint32_t wnd)
{
	if (!(flags & TH_SYN) && (conn->flags & CONN_WS_OK))
		wnd >>= TCP_WS_SHIFT;
	return wnd > 65535 ? 65535 : (uint16_t)wnd;
}

/**
 * send_segment() - build and send one segment of @conn to the guest
 * @c:		context
 * @conn:	connection (addresses, ports, ack)
 * @flags:	TH_* flags
 * @seq:	sequence number
 * @wnd:	window to advertise, in bytes
 * @opts:	TCP options, or NULL
 * @optlen:	their length, a multiple of 4
 * @data:	payload, or NULL
 * @len:	payload length; above conn->mss it goes out as one GSO frame
 *
 * A pure ACK carries SACK blocks: the latest duplicate, and the segments
 * held after a hole (tcp_ooo_sack()). A data segment doesn't: its
 * options would push each GSO segment past the MSS, and the guest counts
 * only pure ACKs as duplicates anyway. Nor does a keepalive (seq before
 * snd_nxt), which the guest takes for an old segment and reads no
 * further.
 *
 * Return: 0 on success, -1 if the frame was dropped
 */
static int send_segment(struct ctx *c, struct tcp_conn *conn, uint8_t flags,
                        uint32_t seq, uint32_t wnd, const uint8_t *opts,
                        size_t optlen, const uint8_t *data, size_t len)
{
	struct virtio_net_hdr vh = {0};
	uint8_t hdr[sizeof(struct tcphdr) + 40], sack[TCP_SACK_OPTLEN_MAX];
	struct tcphdr *th = (struct tcphdr *)hdr;
	struct iovec iov[2] = {{hdr, 0}, {(void *)data, len}};
	bool dsack = false;
	size_t hlen;
	uint32_t sum;
	uint16_t ck;

	if ((conn->ooo || (conn->flags & CONN_DSACK)) && !optlen && !len &&
	    seq == conn->snd_nxt && (flags & TH_ACK) &&
	    !(flags & (TH_SYN | TH_RST))) {
		optlen = tcp_ooo_sack(c, conn, wnd, sack);
		opts = sack;
		dsack = conn->flags & CONN_DSACK;
	}
	hlen = sizeof(struct tcphdr) + optlen;
	iov[0].iov_len = hlen;
	memset(th, 0, sizeof(*th));
	th->source = htons(conn->flow.key.fport);
	th->dest = htons(conn->flow.key.gport);
	th->seq = htonl(seq);
	th->ack_seq = htonl(conn->rcv_nxt);
	th->doff = (uint16_t)(hlen / 4);
	hdr[13] = flags;
	th->window = htons(window_field(conn, flags, wnd));
	if (optlen)
		memcpy(hdr + sizeof(*th), opts, optlen);
	sum = ip_pseudo_csum(&conn->flow.key.faddr, &conn->flow.key.gaddr,
	                     IPPROTO_TCP, hlen + len);
	if (c->vnet_len && len) {
		/* The guest kernel takes a partial checksum as verified. */
		ck = (uint16_t)~csum_fold(sum);
		vh.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		vh.csum_offset = offsetof(struct tcphdr, check);
		if (len > conn->mss) {
			vh.gso_type = (conn->flags & CONN_V6)
			                      ? VIRTIO_NET_HDR_GSO_TCPV6
			                      : VIRTIO_NET_HDR_GSO_TCPV4;
			vh.gso_size = conn->mss;
			vh.hdr_len = (uint16_t)hlen;
		}
	} else {
		sum = csum_add(sum, hdr, hlen);
		ck = csum_fold(csum_add(sum, data, len));
	}
	memcpy(&th->check, &ck, 2);
	if (ip_output(c, &conn->flow.key.faddr, &conn->flow.key.gaddr,
	              IPPROTO_TCP, iov, len ? 2 : 1,
	              c->vnet_len && len ? &vh : NULL))
		return -1;
	/* A D-SACK reports a duplicate once (RFC 2883): once it has left.
	 * An ACK the full tap refused leaves it for the next one.
	 */
	if (dsack)
		conn->flags &= ~CONN_DSACK;
	c->stats.to_guest[PROTO_TCP].packets++;
	c->stats.to_guest[PROTO_TCP].bytes += len;
	if (flags & TH_ACK)
		tcp_ack_sent(conn);
	return 0;
}

/**
 * syn_options() - the options of our SYN or SYN-ACK: MSS, then window
 *		   scale and SACK-permitted if the connection has them
 * @c:		context, for the MTU
 * @conn:	connection
 * @opts:	buffer of 12 bytes
 *
 * Return: their length, a multiple of 4
 */
static size_t syn_options(const struct ctx *c, const struct tcp_conn *conn,
                          uint8_t *opts)
{
	uint16_t mss =
	        (uint16_t)(c->tap.mtu - ((conn->flags & CONN_V6) ? 60 : 40));
	const uint8_t ws[4] = {TCPOPT_NOP, TCPOPT_WINDOW, TCPOLEN_WINDOW,
	                       TCP_WS_SHIFT};
	const uint8_t sack[4] = {TCPOPT_NOP, TCPOPT_NOP, TCPOPT_SACK_PERMITTED,
	                         TCPOLEN_SACK_PERMITTED};
	size_t n = 4;

	opts[0] = TCPOPT_MAXSEG;
	opts[1] = TCPOLEN_MAXSEG;
	opts[2] = (uint8_t)(mss >> 8);
	opts[3] = (uint8_t)mss;
	if (conn->flags & CONN_WS_OK) {
		memcpy(opts + n, ws, sizeof(ws));
		n += sizeof(ws);
	}
	if (conn->flags & CONN_SACK_OK) {
		memcpy(opts + n, sack, sizeof(sack));
		n += sizeof(sack);
	}
	return n;
}

/**
 * tcp_send_flags() - send a segment without payload: SYN, ACK, FIN, RST
 * @c:		context
 * @conn:	connection
 * @flags:	TH_* flags; SYN segments carry the options of syn_options()
 * @seq:	sequence number
 * @wnd:	window to advertise, in bytes
 *
 * Return: 0 on success, -1 if dropped
 */
int tcp_send_flags(struct ctx *c, struct tcp_conn *conn, uint8_t flags,
                   uint32_t seq, uint32_t wnd)
{
	uint8_t opts[12];
	size_t optlen = 0;

	if (flags & TH_SYN)
		optlen = syn_options(c, conn, opts);
	return send_segment(c, conn, flags, seq, wnd, opts, optlen, NULL, 0);
}

/**
 * tcp_send_data() - send payload, ACK and PSH set
 * @c:		context
 * @conn:	connection
 * @seq:	sequence number of its first byte
 * @data:	payload
 * @len:	length, at most tcp_max_payload()
 * @wnd:	window to advertise, in bytes
 *
 * Return: 0 on success, -1 if dropped
 */
int tcp_send_data(struct ctx *c, struct tcp_conn *conn, uint32_t seq,
                  const uint8_t *data, size_t len, uint32_t wnd)
{
	return send_segment(c, conn, TH_ACK | TH_PSH, seq, wnd, NULL, 0, data,
	                    len);
}

/**
 * tcp_send_rst_reply() - answer a segment that has no connection with RST
 * @c:		context
 * @p:		the offending packet
 * @s:		its parsed segment
 *
 * As RFC 9293 3.10.7.1: if the segment had ACK, the RST takes that as its
 * sequence number; otherwise it acknowledges everything the segment held.
 *
 * Return: 0 on success, -1 if dropped
 */
int tcp_send_rst_reply(struct ctx *c, const struct pkt *p,
                       const struct tcp_seg *s)
{
	struct tcp_conn fake = {0};
	uint8_t flags = TH_RST;
	uint32_t seq = 0;

	if (!icmp_may_answer(c, p))
		return -1;
	fake.flow.key.gaddr = p->src;
	fake.flow.key.faddr = p->dst;
	fake.flow.key.gport = s->sport;
	fake.flow.key.fport = s->dport;
	fake.flags = p->v6 ? CONN_V6 : 0;
	if (s->flags & TH_ACK) {
		seq = s->ack;
	} else {
		flags |= TH_ACK;
		fake.rcv_nxt = s->seq + (uint32_t)s->len +
		               ((s->flags & TH_SYN) ? 1 : 0) +
		               ((s->flags & TH_FIN) ? 1 : 0);
	}
	return send_segment(c, &fake, flags, seq, 0, NULL, 0, NULL, 0);
}
