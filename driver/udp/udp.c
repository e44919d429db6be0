// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - UDP: one connected host socket per guest flow, both directions */

#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/ip_icmp.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <event2/event.h>

#include "driver/stack/csum.h"
#include "driver/host/outbound.h"
#include "driver/stack/dhcp.h"
#include "driver/host/dns.h"
#include "driver/stack/icmp.h"
#include "driver/core/inany.h"
#include "driver/stack/ip.h"
#include "driver/core/log.h"
#include "driver/core/opts.h"
#include "driver/stack/tap_write.h"
#include "driver/thread/thread.h"
#include "driver/udp/udp.h"
#include "driver/udp/udp_err.h"
#include "driver/udp/udp_flow.h"
#include "driver/fwd/udpsplice.h"

/* Syscalls of UDP flows, once running. */
const char *const udp_syscalls[] = {
        "socket",     "connect", "bind",    "recvmmsg", "sendmmsg",
        "recvfrom",   "sendto",  "recvmsg", "sendmsg",  "setsockopt",
        "getsockopt", "close",   NULL,
};

/* Datagrams read per recvmmsg(), and recvmmsg() calls per wakeup. */
#define UDP_RX_BATCH 8
#define UDP_RX_ROUNDS 4
/* Segments of a guest USO super-packet per sendmmsg(). */
#define UDP_TX_BATCH 64
/* Most datagrams in one USO super-packet: the kernel's UDP_MAX_SEGMENTS,
 * measured as 128 on Linux 6.18 (older kernels, e.g. 6.1, have 64). No
 * guest kernel builds more than its own limit, so 128 admits every real
 * frame, while a 64 KiB frame of 1-byte segments can't become 65 000 sends. */
#define UDP_MAX_SEGMENTS 128
/* A whole datagram of either family fits, and truncation shows. */
#define UDP_RX_BUF 65536
/* Socket buffers asked for each UDP socket: a guest's bursts (a 64 KiB USO
 * frame is 45 datagrams at MTU 1500) and a host's (a VXLAN peer at line
 * rate) must fit while the other side is busy. Unprivileged, the kernel
 * caps them at net.core.rmem_max and wmem_max (212992 by default, which
 * it doubles); what still overflows is counted (SO_RXQ_OVFL).
 */
#define UDP_SOCK_BUF (4 << 20)
/* Room for one SO_RXQ_OVFL control message. */
#define UDP_RX_CTL CMSG_SPACE(sizeof(uint32_t))

/**
 * struct udp_bufs - the UDP module's buffers, one set per context
 * @rx:		datagrams from host sockets, one batch
 * @rx_msg:	recvmmsg() headers for @rx
 * @rx_iov:	their vectors
 * @rx_name:	their senders
 * @rx_ctl:	their control messages
 * @tx_msg:	sendmmsg() headers for a guest's datagrams
 * @tx_iov:	their vectors
 */
struct udp_bufs {
	uint8_t rx[UDP_RX_BATCH][UDP_RX_BUF];
	struct mmsghdr rx_msg[UDP_RX_BATCH];
	struct iovec rx_iov[UDP_RX_BATCH];
	union sockaddr_inany rx_name[UDP_RX_BATCH];
	_Alignas(struct cmsghdr) uint8_t rx_ctl[UDP_RX_BATCH][UDP_RX_CTL];
	struct mmsghdr tx_msg[UDP_TX_BATCH];
	struct iovec tx_iov[UDP_TX_BATCH];
};

/**
 * flow_proto() - which counters a flow's traffic goes to
 * @f:		flow
 *
 * Return: PROTO_DNS or PROTO_UDP
 */
static enum stats_proto flow_proto(const struct udp_flow *f)
{
	return f->dns ? PROTO_DNS : PROTO_UDP;
}

/**
 * udp_csum_ok() - verify the checksum of a datagram from the guest
 * @p:		packet
 * @ulen:	UDP length
 *
 * Return: true if correct, or absent where that is allowed (IPv4)
 */
static bool udp_csum_ok(const struct pkt *p, size_t ulen)
{
	uint32_t sum;

	if (p->vh && (p->vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM))
		return true; /* partial: the guest left it to "hardware" */
	if (!p->v6 && !p->l4[6] && !p->l4[7])
		return true;
	sum = ip_pseudo_csum(&p->src, &p->dst, IPPROTO_UDP, ulen);
	return csum_fold(csum_add(sum, p->l4, ulen)) == 0;
}

/**
 * flow_error_to_guest() - report a flow socket's pending error as ICMP
 * @c:		context
 * @f:		flow whose socket reported @err, without queued errors
 * @err:	errno
 *
 * Without IP_RECVERR only a refusal is pending, and only on a connected
 * socket; what the error quoted is not known, so the guest's headers are
 * quoted alone.
 */
static void flow_error_to_guest(struct ctx *c, struct udp_flow *f, int err)
{
	char buf[INET6_ADDRSTRLEN];

	debug_msg("udp: receive from %s port %u: %s",
	          inany_ntop(&f->flow.key.faddr, buf), f->flow.key.fport,
	          strerror(err));
	udp_err_to_guest(c, f, icmp_unreach_code(err), 0, NULL, 0);
}

/**
 * udp_to_guest() - send one datagram of a flow to the guest
 * @c:		context
 * @f:		flow; the datagram comes from its far side
 * @data:	payload
 * @len:	payload bytes
 *
 * The checksum is left to the guest's "hardware" (the tap) when the frame
 * fits the MTU; fragments need it complete, so it is computed here.
 */
static void udp_to_guest(struct ctx *c, struct udp_flow *f, const uint8_t *data,
                         size_t len)
{
	size_t l3 = inany_is_v4(&f->flow.key.gaddr) ? 20 : 40;
	struct virtio_net_hdr vh = {0}, *vhp = NULL;
	struct udphdr uh;
	struct iovec iov[2];
	uint32_t sum;

	if (len + sizeof(uh) > 65535 - (l3 == 20 ? l3 : 0)) {
		c->stats.drops[DROP_BAD_LENGTH]++;
		return;
	}
	uh.source = htons(f->flow.key.fport);
	uh.dest = htons(f->flow.key.gport);
	uh.len = htons((uint16_t)(sizeof(uh) + len));
	uh.check = 0;
	sum = ip_pseudo_csum(&f->flow.key.faddr, &f->flow.key.gaddr,
	                     IPPROTO_UDP, sizeof(uh) + len);
	if (c->vnet_len && l3 + sizeof(uh) + len <= c->tap.mtu) {
		vh.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		vh.csum_offset = offsetof(struct udphdr, check);
		vhp = &vh;
		uh.check = (uint16_t)~csum_fold(sum);
	} else {
		sum = csum_add(sum, &uh, sizeof(uh));
		uh.check = csum_fold(csum_add(sum, data, len));
		if (!uh.check)
			uh.check = 0xffff;
	}
	iov[0] = (struct iovec){&uh, sizeof(uh)};
	iov[1] = (struct iovec){(void *)data, len};
	if (ip_output(c, &f->flow.key.faddr, &f->flow.key.gaddr, IPPROTO_UDP,
	              iov, 2, vhp))
		return;
	c->stats.to_guest[flow_proto(f)].packets++;
	c->stats.to_guest[flow_proto(f)].bytes += len;
	udp_flow_touch(c->udp, f, false);
}

/**
 * udp_sock_tune() - size a UDP socket's buffers for bursts, have it
 *		     report what its receive queue drops, and queue the
 *		     host's errors about what it sends (udp_err.c)
 * @fd:		UDP socket, new, read by udp_sock_cb() or
 *		udp_listener_read(), which read the error queue too
 *
 * No failure stops the socket from working, nor the other settings:
 * each is logged, at most once per 5 s.
 *
 * Return: true if the host's errors are queued; a listener's reader
 *	   reads the queue either way, so only a flow needs to know
 */
bool udp_sock_tune(int fd)
{
	static const int size = UDP_SOCK_BUF, one = 1;
	static const struct {
		int opt;
		const int *val;
		const char *what;
	} set[] = {
	        {SO_RCVBUF, &size, "receive buffer"},
	        {SO_SNDBUF, &size, "send buffer"},
	        {SO_RXQ_OVFL, &one, "drop count"},
	};
	static struct log_limit limit;

	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++)
		if (setsockopt(fd, SOL_SOCKET, set[i].opt, set[i].val,
		               sizeof(int)))
			err_limited(&limit, errno, "udp: socket %s",
			            set[i].what);
	return udp_err_enable(fd);
}

/**
 * count_overflow() - add what a socket's receive queue dropped since
 *		      @last to the drops
 * @c:		context
 * @mh:		the latest datagram read from it
 * @last:	its count when last seen, updated
 *
 * SO_RXQ_OVFL gives the socket's running count with each datagram once
 * it is not 0, so the latest one read has it all.
 */
static void count_overflow(struct ctx *c, const struct msghdr *mh,
                           uint32_t *last)
{
	for (const struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm;
	     cm = CMSG_NXTHDR((struct msghdr *)mh, (struct cmsghdr *)cm)) {
		uint32_t v;

		if (cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SO_RXQ_OVFL ||
		    cm->cmsg_len < CMSG_LEN(sizeof(v)))
			continue;
		memcpy(&v, CMSG_DATA(cm), sizeof(v));
		c->stats.drops[DROP_HOST_RCVBUF] += (uint32_t)(v - *last);
		*last = v;
	}
}

/**
 * recv_batch() - read up to UDP_RX_BATCH datagrams from @fd into the
 *		  context's buffers, with their senders
 * @c:		context
 * @fd:		UDP socket
 * @ovfl:	its drop count as last seen, updated
 *
 * Return: datagrams read, or -1 with errno set
 */
static int recv_batch(struct ctx *c, int fd, uint32_t *ovfl)
{
	struct udp_bufs *b = c->udp->bufs;
	int n;

	for (int i = 0; i < UDP_RX_BATCH; i++) {
		b->rx_iov[i] = (struct iovec){b->rx[i], UDP_RX_BUF};
		memset(&b->rx_msg[i], 0, sizeof(b->rx_msg[i]));
		b->rx_msg[i].msg_hdr = (struct msghdr){
		        .msg_name = &b->rx_name[i],
		        .msg_namelen = sizeof(b->rx_name[i]),
		        .msg_iov = &b->rx_iov[i],
		        .msg_iovlen = 1,
		        .msg_control = b->rx_ctl[i],
		        .msg_controllen = sizeof(b->rx_ctl[i]),
		};
	}
	n = recvmmsg(fd, b->rx_msg, UDP_RX_BATCH, MSG_DONTWAIT, NULL);
	if (n > 0)
		count_overflow(c, &b->rx_msg[n - 1].msg_hdr, ovfl);
	return n;
}

/**
 * udp_sock_cb() - datagrams (or errors) on a flow's socket
 * @fd:		the socket
 * @what:	libevent flags (unused)
 * @arg:	struct udp_flow
 *
 * A pending error comes before the datagrams behind it; with errors
 * queued, it is the sign to read them, a batch per wakeup. A wakeup with
 * nothing to read is one for a queued error alone (a local one, which
 * leaves none pending).
 */
static void udp_sock_cb(evutil_socket_t fd, short what, void *arg)
{
	struct udp_flow *f = arg;
	struct ctx *c = flow_enter(&f->flow);
	struct udp_bufs *b = c->udp->bufs;

	(void)what;
	for (int round = 0; round < UDP_RX_ROUNDS; round++) {
		int n = recv_batch(c, fd, &f->rxq_ovfl);
		int err = n < 0 ? errno : 0;

		if (err == EAGAIN && !round && f->errqueue)
			udp_err_read(c, fd, f);
		if (err == EAGAIN || err == EINTR)
			return;
		if (err && f->errqueue &&
		    udp_err_read(c, fd, f) == UDP_ERR_BATCH)
			return;
		if (err && !f->errqueue)
			flow_error_to_guest(c, f, err);
		for (int i = 0; i < n; i++) {
			if (b->rx_msg[i].msg_hdr.msg_flags & MSG_TRUNC)
				c->stats.drops[DROP_BAD_LENGTH]++;
			else
				udp_to_guest(c, f, b->rx[i],
				             b->rx_msg[i].msg_len);
		}
		if (n >= 0 && n < UDP_RX_BATCH)
			return;
	}
}

/**
 * udp_listener_read() - pass the datagrams waiting on a UDP forward's
 *			 socket to the guest, a bounded batch per wakeup
 * @c:		context
 * @lfd:	the forward's socket
 * @gaddr:	guest address they go to
 * @gport:	guest port, host order
 * @ovfl:	the socket's drop count as last seen
 *
 * With pasta's --host-lo-to-ns-lo, those of clients on the host's
 * loopback go to the namespace's loopback instead (udpsplice.c). The
 * guest's replies leave from it too: the host's errors about them are
 * queued on it (udp_sock_tune()), and told to the guest.
 */
void udp_listener_read(struct ctx *c, int lfd, const struct in6_addr *gaddr,
                       uint16_t gport, uint32_t *ovfl)
{
	struct udp_bufs *b = c->udp->bufs;

	for (int round = 0; round < UDP_RX_ROUNDS; round++) {
		int n = recv_batch(c, lfd, ovfl);
		int err = n < 0 ? errno : 0;

		/* A pending error, or a wakeup for queued ones alone; a full
		 * batch leaves the rest to the next wakeup. */
		if (err == EAGAIN && !round)
			udp_err_read(c, lfd, NULL);
		if (err == EAGAIN || err == EINTR)
			return;
		if (err && udp_err_read(c, lfd, NULL) == UDP_ERR_BATCH)
			return;
		if (err)
			continue;
		for (int i = 0; i < n; i++) {
			const struct mmsghdr *m = &b->rx_msg[i];

			struct in6_addr lo;

			if (m->msg_hdr.msg_flags & MSG_TRUNC)
				c->stats.drops[DROP_BAD_LENGTH]++;
			else if (c->o->host_lo_to_ns_lo &&
			         fwd_ns_loopback(&b->rx_name[i], &lo))
				usplice_datagram(c, lfd, &b->rx_name[i], true,
				                 &lo, gport, b->rx[i],
				                 m->msg_len);
			else
				udp_inbound(c, lfd, &b->rx_name[i], gaddr,
				            gport, b->rx[i], m->msg_len);
		}
		if (n < UDP_RX_BATCH)
			return;
	}
}

/**
 * send_error() - handle a failed send of guest data to the host
 * @c:		context
 * @p:		the guest's packet
 * @err:	errno
 *
 * Refusals and unreachability come back as ICMP, as a real network
 * would answer; full socket buffers just drop, as a congested link does.
 */
static void send_error(struct ctx *c, const struct pkt *p, int err)
{
	int code = icmp_unreach_code(err);
	char buf[INET6_ADDRSTRLEN];

	c->stats.drops[DROP_SOCKET]++;
	if (err != EAGAIN && err != ENOBUFS)
		debug_msg("udp: send to %s port %u: %s",
		          inany_ntop(&p->dst, buf),
		          (unsigned int)(p->l4[2] << 8 | p->l4[3]),
		          strerror(err));
	if (code >= 0 && icmp_may_answer(c, p))
		icmp_send_unreach(c, p, (uint8_t)code);
}

/**
 * dontfrag_cmsg() - whether the host may not fragment a guest's datagram
 * @c:		context
 * @f:		flow it goes on
 * @p:		the guest's packet
 * @buf:	filled with an IPV6_DONTFRAG control message if so
 *
 * An IPv6 guest fragments its own datagrams (RFC 8200 5): one that came
 * whole from the tap is tried whole first, and one too big for the path
 * fails with EMSGSIZE, queued with the path's MTU (udp_err.c), which the
 * guest hears as packet too big; udp_to_host() then sends it again
 * without, fragmented by the host. What came in fragments, or through
 * another thread (it may have been reassembled there), the guest let be
 * fragmented: the host fragments it as it must. So does a socket whose
 * errors are not queued (or a forward's listener, shared by peers): the
 * guest would never hear why its datagrams vanish. IPv4 has no such
 * option per datagram, and Linux's default fragments as needed.
 *
 * Return: true if @buf is to go with the send
 */
static bool dontfrag_cmsg(const struct ctx *c, const struct udp_flow *f,
                          const struct pkt *p,
                          uint8_t buf[CMSG_SPACE(sizeof(int))])
{
	struct msghdr mh = {.msg_control = buf,
	                    .msg_controllen = CMSG_SPACE(sizeof(int))};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	const int one = 1;

	if (!p->v6 || c->rx_whole || c->rx_handoff != HANDOFF_NONE ||
	    !f->own_fd || !f->errqueue)
		return false;
	memset(buf, 0, CMSG_SPACE(sizeof(int)));
	cm->cmsg_level = SOL_IPV6;
	cm->cmsg_type = IPV6_DONTFRAG;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &one, sizeof(one));
	return true;
}

/**
 * udp_to_host() - send a guest's payload on a flow, split into segments
 * @c:		context
 * @f:		flow
 * @p:		the guest's packet, for errors
 * @data:	payload
 * @len:	payload bytes
 * @seg:	segment size (USO), or @len for one datagram
 */
static void udp_to_host(struct ctx *c, struct udp_flow *f, const struct pkt *p,
                        const uint8_t *data, size_t len, size_t seg)
{
	_Alignas(struct cmsghdr) uint8_t df[CMSG_SPACE(sizeof(int))];
	struct mmsghdr *msg = c->udp->bufs->tx_msg;
	struct iovec *iov = c->udp->bufs->tx_iov;
	size_t nseg = len ? (len + seg - 1) / seg : 1;
	bool dontfrag = dontfrag_cmsg(c, f, p, df);
	bool retried = false;

	for (size_t base = 0; base < nseg; base += UDP_TX_BATCH) {
		size_t n =
		        nseg - base < UDP_TX_BATCH ? nseg - base : UDP_TX_BATCH;
		size_t sent = 0;

		for (size_t i = 0; i < n; i++) {
			size_t off = (base + i) * seg;
			size_t l = len - off < seg ? len - off : seg;

			iov[i] = (struct iovec){(void *)(data + off), l};
			memset(&msg[i], 0, sizeof(msg[i]));
			msg[i].msg_hdr.msg_iov = &iov[i];
			msg[i].msg_hdr.msg_iovlen = 1;
			if (!f->own_fd) {
				msg[i].msg_hdr.msg_name = &f->peer;
				msg[i].msg_hdr.msg_namelen = f->peerlen;
			}
			if (dontfrag) {
				msg[i].msg_hdr.msg_control = df;
				msg[i].msg_hdr.msg_controllen = sizeof(df);
			}
		}
		while (sent < n) {
			int r = sendmmsg(f->fd, msg + sent,
			                 (unsigned int)(n - sent),
			                 MSG_DONTWAIT | MSG_NOSIGNAL);
			int err = r < 0 ? errno : EAGAIN;

			/* Too big for the path: the error queued with its MTU
			 * tells the guest (packet too big), and the datagram
			 * goes on fragmented by the host, as before, so that a
			 * sender whose socket is gone by the time the guest
			 * hears does not lose it for ever.
			 */
			if (r <= 0 && err == EMSGSIZE && dontfrag) {
				dontfrag = false;
				for (size_t i = sent; i < n; i++) {
					msg[i].msg_hdr.msg_control = NULL;
					msg[i].msg_hdr.msg_controllen = 0;
				}
				continue;
			}
			/* With the host's errors queued, a send may fail
			 * with an earlier datagram's (the socket's pending
			 * error, whose queued copy the guest hears about):
			 * this one was not sent, so it gets one more try.
			 */
			if (r <= 0 && !retried && err != EAGAIN &&
			    err != ENOBUFS && (f->errqueue || !f->own_fd)) {
				retried = true;
				continue;
			}
			if (r <= 0) {
				send_error(c, p, err);
				return;
			}
			for (size_t i = sent; i < sent + (size_t)r; i++)
				c->stats.to_host[flow_proto(f)].bytes +=
				        msg[i].msg_len;
			c->stats.to_host[flow_proto(f)].packets += (size_t)r;
			sent += (size_t)r;
		}
	}
	udp_flow_touch(c->udp, f, true);
}

/**
 * flow_connect() - give a new outbound flow its connected host socket
 * @c:		context
 * @f:		flow without a socket
 * @p:		the guest's first packet, for errors
 * @sa:		target
 * @salen:	its length
 *
 * Return: 0 on success, -1 after counting (and answering) the failure
 */
static int flow_connect(struct ctx *c, struct udp_flow *f, const struct pkt *p,
                        const union sockaddr_inany *sa, socklen_t salen)
{
	int type = SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC;
	int fd = socket(sa->sa.sa_family, type, 0), ret;
	char buf[INET6_ADDRSTRLEN];

	if (fd < 0) {
		debug_msg("udp: socket for %s port %u: %s",
		          inany_ntop(&f->flow.key.faddr, buf),
		          f->flow.key.fport, strerror(errno));
		c->stats.drops[DROP_SOCKET]++;
		return -1;
	}
	f->fd = fd;
	f->own_fd = true;
	f->errqueue = udp_sock_tune(fd);
	if ((ret = outbound_bind(c, fd, sa->sa.sa_family))) {
		debug_msg("udp: bind outbound address for %s port %u: %s",
		          inany_ntop(&f->flow.key.faddr, buf),
		          f->flow.key.fport, strerror(-ret));
		c->stats.drops[DROP_SOCKET]++;
		return -1;
	}
	if (connect(fd, &sa->sa, salen)) {
		send_error(c, p, errno);
		return -1;
	}
	f->ev = event_new(c->base, fd, EV_READ | EV_PERSIST, udp_sock_cb, f);
	if (!f->ev || event_add(f->ev, NULL)) {
		debug_msg("udp: watch socket: libevent failed");
		c->stats.drops[DROP_SOCKET]++;
		return -1;
	}
	return 0;
}

/**
 * flow_open() - create the flow for a guest's first datagram to a target
 * @c:		context
 * @p:		the datagram
 * @k:		its flow key
 *
 * Return: the flow, or NULL after counting (and answering) the failure
 */
static struct udp_flow *flow_open(struct ctx *c, const struct pkt *p,
                                  const struct flow_key *k)
{
	union sockaddr_inany sa;
	struct udp_flow *f;
	socklen_t salen;

	if (fwd_outbound_or_reject(c, p, k->fport, &sa, &salen))
		return NULL;
	f = udp_flow_add(c, k, ip_is_dns(c, &p->dst) && k->fport == 53);
	if (!f && errno == EEXIST) {
		/* Another thread opened it meanwhile. */
		thread_pass_to_owner(c, k);
		return NULL;
	}
	if (!f) {
		c->stats.drops[DROP_FLOW_LIMIT]++;
		return NULL;
	}
	if (flow_connect(c, f, p, &sa, salen)) {
		udp_flow_free(c, &f);
		return NULL;
	}
	return f;
}

/**
 * uso_segments_ok() - whether a super-packet splits into few enough datagrams
 * @payload:	payload bytes of the whole super-packet
 * @seg:	gso_size, payload bytes per datagram (not 0: eth.c checks)
 *
 * Return: true if it makes at most UDP_MAX_SEGMENTS datagrams
 */
static bool uso_segments_ok(size_t payload, size_t seg)
{
	return payload <= seg * UDP_MAX_SEGMENTS;
}

/**
 * udp_input() - a UDP datagram from the guest
 * @c:		context
 * @p:		validated IP packet with protocol UDP
 *
 * USO super-packets (gso_size payload bytes per datagram) are split into
 * the datagrams the guest meant to send, at most UDP_MAX_SEGMENTS of them.
 */
void udp_input(struct ctx *c, struct pkt *p)
{
	bool uso = p->vh && (p->vh->gso_type & ~VIRTIO_NET_HDR_GSO_ECN) ==
	                            VIRTIO_NET_HDR_GSO_UDP_L4;
	struct flow_key k;
	struct udp_flow *f;
	struct udphdr uh;
	size_t ulen;

	if (p->l4len < sizeof(uh)) {
		c->stats.drops[DROP_SHORT_FRAME]++;
		return;
	}
	memcpy(&uh, p->l4, sizeof(uh));
	/* A super-packet's length field may count one segment or all. */
	ulen = uso ? p->l4len : ntohs(uh.len);
	if (ulen < sizeof(uh) || ulen > p->l4len) {
		c->stats.drops[DROP_BAD_LENGTH]++;
		return;
	}
	if (!udp_csum_ok(p, ulen)) {
		c->stats.drops[DROP_BAD_CHECKSUM]++;
		return;
	}
	if (uso && !uso_segments_ok(ulen - sizeof(uh), p->vh->gso_size)) {
		c->stats.drops[DROP_GSO_SEGMENTS]++;
		return;
	}
	if (!p->v6 && ntohs(uh.dest) == 67 &&
	    (thread_pass_to_main(c) || dhcp_input(c, p)))
		return;
	/* pasta's --no-udp: DHCP above still answers, as in pasta. */
	if (c->o->pasta && c->o->pasta->no_udp) {
		c->stats.drops[DROP_NO_ROUTE]++;
		return;
	}
	flow_key_guest(&k, FLOW_UDP, &p->src, ntohs(uh.source), &p->dst,
	               ntohs(uh.dest));
	f = udp_flow_lookup(c->flows, &k);
	/* Another thread may own it: one guest flow, one host socket. */
	if (!f && thread_route_miss(c, &k, false))
		return;
	if (!f) {
		f = flow_open(c, p, &k);
		if (!f)
			return;
	}
	flow_enter(&f->flow);
	udp_err_quote(f, p);
	udp_to_host(c, f, p, p->l4 + sizeof(uh), ulen - sizeof(uh),
	            uso ? p->vh->gso_size : ulen - sizeof(uh));
}

/**
 * udp_inbound() - a datagram for the guest from a port-forward listener
 * @c:		context
 * @lfd:	listener it arrived on; guest replies leave from it too, and it
 *		stays the caller's
 * @peer:	host sender
 * @gaddr:	guest address it goes to
 * @gport:	guest port, host order
 * @data:	payload
 * @len:	payload bytes
 *
 * Each host peer has its own flow, found by listener and peer: two peers
 * that look alike to the guest get different far ports, as behind a NAT.
 */
void udp_inbound(struct ctx *c, int lfd, const union sockaddr_inany *peer,
                 const struct in6_addr *gaddr, uint16_t gport,
                 const uint8_t *data, size_t len)
{
	struct udp_flow *f = udp_flow_lookup_peer(c->flows, lfd, peer);
	struct flow_key k;

	if (!f) {
		fwd_inbound_key(c, peer, gaddr, gport, &k);
		f = udp_flow_add_inbound(c, &k, lfd, peer);
		if (f)
			flow_place(c->flows, &f->flow);
	}
	if (!f) {
		c->stats.drops[DROP_FLOW_LIMIT]++;
		return;
	}
	udp_to_guest(flow_enter(&f->flow), f, data, len);
}

/**
 * udp_listener_closed() - forget the inbound flows of a closed listener
 * @c:		context
 * @lfd:	listener fd, about to be closed by its owner
 *
 * Runs once per removed port forward, so a walk of all flows is fine.
 * Spliced flows (--host-lo-to-ns-lo) answer through it too.
 */
void udp_listener_closed(struct ctx *c, int lfd)
{
	struct udp_flow *f = c->udp ? udp_flow_next(c->udp, NULL) : NULL;

	usplice_listener_closed(c, lfd);
	while (f) {
		struct udp_flow *next = udp_flow_next(c->udp, f);

		if (f->inbound && f->fd == lfd)
			udp_flow_free(c, &f);
		f = next;
	}
}

/**
 * udp_init() - set up the UDP flow table
 * @c:		context with its event base
 *
 * Return: 0 on success, -1 after printing one error line
 */
int udp_init(struct ctx *c)
{
	if (udp_flow_table_init(c))
		return -1;
	c->udp->bufs = calloc(1, sizeof(*c->udp->bufs));
	if (!c->udp->bufs) {
		err_errno(errno, "udp: allocate buffers");
		udp_flow_table_cleanup(c);
		return -1;
	}
	return 0;
}

/**
 * udp_cleanup() - close every flow and free UDP and resolver state
 * @c:		context
 */
void udp_cleanup(struct ctx *c)
{
	if (c->udp)
		free(c->udp->bufs);
	udp_flow_table_cleanup(c);
	/* The resolver cache serves UDP and TCP; UDP ends last of the two. */
	dns_cleanup(c);
}
