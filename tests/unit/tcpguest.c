// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests: a guest that speaks TCP to tapir through a fake tap
 *
 * For cases that run in unit_netns_run(): the host side is that
 * namespace's loopback, with a listener on 127.0.0.1:TCPGUEST_HOST_PORT,
 * which the guest reaches as the gateway, 10.0.2.2.
 */

#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/ip.h>
#include <sys/socket.h>
#include <linux/virtio_net.h>
#include <event2/event.h>

#include "driver/stack/csum.h"
#include "driver/flow/flow.h"
#include "driver/thread/tap_read.h"
#include "driver/stack/tap_write.h"
#include "driver/tcp/tcp.h"
#include "driver/tcp/tcp_internal.h"
#include "driver/thread/thread.h"
#include "tests/unit/fakectx.h"
#include "tests/unit/tcpguest.h"
#include "tests/unit/unit.h"

static const uint8_t guest_mac[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
static const uint8_t gw_mac[6] = {0x52, 0x55, 0x0a, 0x00, 0x02, 0x02};

/**
 * add_queue() - give the fake tap queue @q, another socketpair
 * @g:		guest whose context has queues 0 to @q - 1, not started
 * @q:		the new queue
 *
 * Return: 0 on success
 */
static int add_queue(struct guest *g, unsigned int q)
{
	int sv[2], big = 1 << 20;

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sv))
		return -1;
	if (setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big))) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	g->c.tapfd[q] = sv[0];
	g->taps[q] = sv[1];
	g->c.tap.queues = q + 1;
	g->o.queues = q + 1;
	return 0;
}

/**
 * guest_open() - a context with TCP, a started tap and a host listener
 * @g:		filled
 * @discard:	peek past a discard buffer, as on kernels without
 *		SO_PEEK_OFF for TCP, whatever this one has
 *
 * Return: 0 on success
 */
int guest_open(struct guest *g, bool discard)
{
	return guest_open_queues(g, discard, 1);
}

/**
 * open_ctx() - the context of a guest, with @queues tap queues
 * @g:		filled
 * @discard:	as for guest_open()
 * @queues:	1 to TCPGUEST_QUEUES
 * @threaded:	a context per queue (not started), as with --queues
 *
 * Return: 0 on success
 */
static int open_ctx(struct guest *g, bool discard, unsigned int queues,
                    bool threaded)
{
	if (!queues || queues > TCPGUEST_QUEUES)
		return -1;
	memset(g, 0, sizeof(*g));
	g->listener = -1;
	g->tap = fake_ctx_init(&g->c, &g->o, false, guest_mac);
	for (unsigned int q = 0; q < TCPGUEST_QUEUES; q++)
		g->taps[q] = q ? -1 : g->tap;
	g->threaded = threaded;
	for (unsigned int q = 1; q < queues; q++)
		if (add_queue(g, q))
			return -1;
	g->c.base = event_base_new();
	if (!g->c.base)
		return -1;
	if (threaded ? thread_modules_init(&g->c) || threads_prepare(&g->c)
	             : flow_init(&g->c) || tcp_init(&g->c))
		return -1;
	if (tapio_start(&g->c))
		return -1;
	if (discard)
		g->c.tcp->peek_off4 = g->c.tcp->peek_off6 = false;
	return 0;
}

/**
 * open_listener() - the host's listener on 127.0.0.1:HOST_PORT
 * @g:		guest
 *
 * Return: 0 on success
 */
static int open_listener(struct guest *g)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
	                         .sin_port = htons(HOST_PORT)};
	int one = 1;

	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	g->listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (g->listener < 0 ||
	    setsockopt(g->listener, SOL_SOCKET, SO_REUSEADDR, &one,
	               sizeof(one)) ||
	    bind(g->listener, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(g->listener, 8))
		return -1;
	return 0;
}

/**
 * guest_open_queues() - guest_open() with a tap of up to TCPGUEST_QUEUES
 *			 queues, all read by one context
 * @g:		filled; @g->taps[q] is the guest's end of queue q
 * @discard:	as for guest_open()
 * @queues:	1 to TCPGUEST_QUEUES
 *
 * Return: 0 on success
 */
int guest_open_queues(struct guest *g, bool discard, unsigned int queues)
{
	if (open_ctx(g, discard, queues, false))
		return -1;
	return open_listener(g);
}

/**
 * guest_open_threads() - a guest whose tap has @queues queues, each with
 *			  its datapath thread's context, none started: the
 *			  test runs their loops (guest_run()) one at a time
 * @g:		filled; @g->taps[q] is the guest's end of queue q
 * @queues:	2 to TCPGUEST_QUEUES
 *
 * Return: 0 on success
 */
int guest_open_threads(struct guest *g, unsigned int queues)
{
	if (open_ctx(g, false, queues, true))
		return -1;
	return g->c.threads ? open_listener(g) : -1;
}

/**
 * guest_run() - run the loop of datapath thread @i once, without waiting:
 *		 the frames of its queue and the messages of its inbox
 * @g:		guest from guest_open_threads()
 * @i:		thread
 */
void guest_run(struct guest *g, unsigned int i)
{
	struct ctx *c = thread_ctx(&g->c, i);

	if (c)
		event_base_loop(c->base, EVLOOP_NONBLOCK);
	else
		CHECK(!"a datapath thread to run");
}

/**
 * guest_close() - release everything guest_open() made
 * @g:		guest
 */
void guest_close(struct guest *g)
{
	threads_stop(&g->c);
	if (g->threaded) {
		thread_modules_cleanup(&g->c);
	} else {
		tcp_cleanup(&g->c);
		flow_cleanup(&g->c);
	}
	tapio_stop(&g->c);
	event_base_free(g->c.base);
	for (unsigned int q = 0; q < TCPGUEST_QUEUES; q++)
		if (g->taps[q] >= 0)
			close(g->taps[q]);
	if (g->listener >= 0)
		close(g->listener);
}

/**
 * queue_ip4() - the guest writes one IPv4 packet to GW_IP into the tap,
 *		 without running the loop
 * @g:		guest
 * @proto:	IP protocol
 * @id:		identification
 * @frag:	fragment offset field, flags included (host order)
 * @l4:		bytes after the IP header
 * @len:	their length, at most TCPGUEST_PAYLOAD_MAX + 60
 *
 * With vnet headers on the fake tap (guest_vnet()), a zero one comes first.
 */
static void queue_ip4(struct guest *g, uint8_t proto, uint16_t id,
                      uint16_t frag, const void *l4, size_t len)
{
	uint8_t buf[12 + 14 + 20 + 60 + TCPGUEST_PAYLOAD_MAX] = {0};
	size_t v = g->c.vnet_len;
	uint8_t *f = buf + v;
	struct iphdr ip = {0};
	struct in_addr src, dst;

	if (v > 12 || len > sizeof(buf) - 12 - 34) {
		CHECK(!"a packet that fits one frame");
		return;
	}
	memcpy(f, gw_mac, 6);
	memcpy(f + 6, guest_mac, 6);
	f[12] = 0x08;
	inet_pton(AF_INET, GUEST_IP, &src);
	inet_pton(AF_INET, GW_IP, &dst);
	ip.version = 4;
	ip.ihl = 5;
	ip.tot_len = htons((uint16_t)(20 + len));
	ip.id = htons(id);
	ip.frag_off = htons(frag);
	ip.ttl = 64;
	ip.protocol = proto;
	ip.saddr = src.s_addr;
	ip.daddr = dst.s_addr;
	ip.check = csum_ip4_header(&ip, 20);
	memcpy(f + 14, &ip, 20);
	memcpy(f + 34, l4, len);
	if (send(g->tap, buf, v + 34 + len, 0) != (ssize_t)(v + 34 + len))
		CHECK(!"send a frame into the fake tap");
}

/**
 * udp_datagram() - a UDP header and @len payload bytes, checksummed
 * @d:		filled: 8 + @len bytes
 * @sport:	guest port
 * @dport:	port on the host's loopback
 * @len:	payload bytes, all @fill
 * @fill:	the payload byte
 */
static void udp_datagram(uint8_t *d, uint16_t sport, uint16_t dport, size_t len,
                         uint8_t fill)
{
	struct in_addr src, dst;
	uint16_t v, ck;

	inet_pton(AF_INET, GUEST_IP, &src);
	inet_pton(AF_INET, GW_IP, &dst);
	v = htons(sport);
	memcpy(d, &v, 2);
	v = htons(dport);
	memcpy(d + 2, &v, 2);
	v = htons((uint16_t)(8 + len));
	memcpy(d + 4, &v, 2);
	memset(d + 6, 0, 2);
	memset(d + 8, fill, len);
	ck = csum_fold(csum_add(
	        csum_pseudo4(src, dst, IPPROTO_UDP, (uint32_t)(8 + len)), d,
	        8 + len));
	memcpy(d + 6, ck ? &ck : &(uint16_t){0xffff}, 2);
}

/**
 * queue_udp() - the guest writes one UDP datagram to GW_IP:@dport into
 *		 the tap, without running the loop
 * @g:		guest
 * @sport:	guest port
 * @dport:	port on the host's loopback
 * @len:	payload bytes, at most TCPGUEST_PAYLOAD_MAX + 12
 * @fill:	the payload byte
 */
void queue_udp(struct guest *g, uint16_t sport, uint16_t dport, size_t len,
               uint8_t fill)
{
	uint8_t d[8 + TCPGUEST_PAYLOAD_MAX + 12];

	if (len > sizeof(d) - 8) {
		CHECK(!"a datagram that fits one frame");
		return;
	}
	udp_datagram(d, sport, dport, len, fill);
	queue_ip4(g, IPPROTO_UDP, 0, 0x4000, d, 8 + len);
}

/**
 * queue_udp_frags() - the guest writes one UDP datagram to GW_IP:@dport as
 *		       two IPv4 fragments, without running the loop
 * @g:		guest
 * @sport:	guest port
 * @dport:	port on the host's loopback
 * @len:	payload bytes, at most 2 * TCPGUEST_PAYLOAD_MAX
 * @fill:	the payload byte
 * @id:		IP identification of the fragments
 */
void queue_udp_frags(struct guest *g, uint16_t sport, uint16_t dport,
                     size_t len, uint8_t fill, uint16_t id)
{
	uint8_t d[8 + 2 * TCPGUEST_PAYLOAD_MAX];
	size_t first = (8 + len) / 2 & ~(size_t)7;

	if (len > sizeof(d) - 8 || first == 0) {
		CHECK(!"a datagram that makes two fragments");
		return;
	}
	udp_datagram(d, sport, dport, len, fill);
	queue_ip4(g, IPPROTO_UDP, id, 0x2000, d, first);
	queue_ip4(g, IPPROTO_UDP, id, (uint16_t)(first / 8), d + first,
	          8 + len - first);
}

/**
 * queue_frame() - the guest writes one TCP segment to GW_IP:HOST_PORT,
 *		   with options, into the tap, without running the loop
 * @g:		guest
 * @sport:	guest port
 * @flags:	TCP flags
 * @seq:	sequence number
 * @ack:	acknowledgement number
 * @win:	raw window field
 * @opts:	TCP options, or NULL
 * @optlen:	their length, a multiple of 4, at most 40
 * @data:	payload, or NULL
 * @len:	payload bytes, at most TCPGUEST_PAYLOAD_MAX
 */
void queue_frame(struct guest *g, uint16_t sport, uint8_t flags, uint32_t seq,
                 uint32_t ack, uint16_t win, const uint8_t *opts, size_t optlen,
                 const void *data, size_t len)
{
	uint8_t seg[60 + TCPGUEST_PAYLOAD_MAX] = {0};
	size_t thl = 20 + optlen;
	struct tcphdr th = {0};
	struct in_addr src, dst;
	uint16_t ck;

	if (len > TCPGUEST_PAYLOAD_MAX || optlen > 40 || optlen % 4) {
		CHECK(!"a segment that fits one frame");
		return;
	}
	inet_pton(AF_INET, GUEST_IP, &src);
	inet_pton(AF_INET, GW_IP, &dst);
	th.source = htons(sport);
	th.dest = htons(HOST_PORT);
	th.seq = htonl(seq);
	th.ack_seq = htonl(ack);
	th.doff = (uint16_t)(thl / 4);
	th.window = htons(win);
	memcpy(seg, &th, 20);
	seg[13] = flags;
	if (optlen)
		memcpy(seg + 20, opts, optlen);
	if (len)
		memcpy(seg + thl, data, len);
	ck = csum_fold(csum_add(
	        csum_pseudo4(src, dst, IPPROTO_TCP, (uint32_t)(thl + len)), seg,
	        thl + len));
	memcpy(seg + 16, &ck, 2);
	queue_ip4(g, IPPROTO_TCP, 0, 0, seg, thl + len);
}

/**
 * queue_seg() - the guest writes one TCP segment to GW_IP:HOST_PORT into
 *		 the tap, without running the loop: several queued segments
 *		 reach tapir as one batch
 * @g:		guest
 * @sport:	guest port
 * @flags:	TCP flags
 * @seq:	sequence number
 * @ack:	acknowledgement number
 * @win:	raw window field
 * @data:	payload, or NULL
 * @len:	payload bytes, at most TCPGUEST_PAYLOAD_MAX
 */
void queue_seg(struct guest *g, uint16_t sport, uint8_t flags, uint32_t seq,
               uint32_t ack, uint16_t win, const void *data, size_t len)
{
	queue_frame(g, sport, flags, seq, ack, win, NULL, 0, data, len);
}

/**
 * send_seg() - queue_seg(), then let tapir read it
 * @g:		guest
 * @sport:	guest port
 * @flags:	TCP flags
 * @seq:	sequence number
 * @ack:	acknowledgement number
 * @win:	raw window field
 * @data:	payload, or NULL
 * @len:	payload bytes
 */
void send_seg(struct guest *g, uint16_t sport, uint8_t flags, uint32_t seq,
              uint32_t ack, uint16_t win, const void *data, size_t len)
{
	queue_seg(g, sport, flags, seq, ack, win, data, len);
	event_base_loop(g->c.base, EVLOOP_NONBLOCK);
}

/**
 * spin() - run tapir's loop for about @ms milliseconds
 * @g:		guest
 * @ms:		milliseconds
 */
void spin(struct guest *g, int ms)
{
	struct timespec t = {0, 1000000};

	for (int i = 0; i < ms; i++) {
		event_base_loop(g->c.base, EVLOOP_NONBLOCK);
		nanosleep(&t, NULL);
	}
}

/**
 * take_seg() - the next TCP segment tapir already sent the guest, without
 *		running the loop
 * @g:		guest
 * @s:		filled
 *
 * Return: true if there was one
 */
bool take_seg(struct guest *g, struct seg *s)
{
	uint8_t buf[70000];
	const uint8_t *f = buf + g->c.vnet_len;
	ssize_t n;

	while ((n = recv(g->tap, buf, sizeof(buf), MSG_DONTWAIT)) >= 0) {
		struct tcphdr th;
		struct iphdr ip;

		n -= (ssize_t)g->c.vnet_len;
		if (n < 54 || f[12] != 0x08 || f[13] != 0x00)
			continue;
		memcpy(&ip, f + 14, sizeof(ip));
		if (ip.protocol != IPPROTO_TCP)
			continue;
		memcpy(&th, f + 14 + ip.ihl * 4, sizeof(th));
		s->src = ip.saddr;
		s->dst = ip.daddr;
		s->sport = ntohs(th.source);
		s->dport = ntohs(th.dest);
		s->seq = ntohl(th.seq);
		s->ack = ntohl(th.ack_seq);
		s->flags = f[14 + ip.ihl * 4 + 13];
		s->win = ntohs(th.window);
		s->len = (size_t)n - 14 - ip.ihl * 4 - th.doff * 4;
		s->optlen = th.doff * 4U - 20U;
		memcpy(s->opt, f + 14 + ip.ihl * 4 + 20, s->optlen);
		memcpy(s->data, f + n - s->len,
		       s->len < sizeof(s->data) ? s->len : sizeof(s->data));
		return true;
	}
	return false;
}

/**
 * next_seg() - run the loop until tapir sends the guest a TCP segment
 * @g:		guest
 * @s:		filled
 *
 * Return: true if one came within half a second
 */
bool next_seg(struct guest *g, struct seg *s)
{
	struct timespec ms = {0, 1000000};

	for (int i = 0; i < 500; i++) {
		if (take_seg(g, s))
			return true;
		event_base_loop(g->c.base, EVLOOP_NONBLOCK);
		nanosleep(&ms, NULL);
	}
	return false;
}

/**
 * addressed_right() - a segment goes from GW_IP to GUEST_IP
 * @s:		segment
 *
 * Return: true if so; a released connection sends from 0.0.0.0
 */
bool addressed_right(const struct seg *s)
{
	struct in_addr gw, guest;

	inet_pton(AF_INET, GW_IP, &gw);
	inet_pton(AF_INET, GUEST_IP, &guest);
	return s->src == gw.s_addr && s->dst == guest.s_addr;
}

/**
 * connect_guest() - open a connection from guest port @sport, and accept it
 * @g:		guest
 * @sport:	guest port
 * @opts:	options of the guest's SYN, or NULL
 * @optlen:	their length
 * @syn_win:	window field of the guest's SYN (never scaled)
 * @win:	window field of the guest's final ACK
 * @isn:	filled with tapir's initial sequence number
 *
 * Return: the host's accepted socket, or -1
 */
static int connect_guest(struct guest *g, uint16_t sport, const uint8_t *opts,
                         size_t optlen, uint16_t syn_win, uint16_t win,
                         uint32_t *isn)
{
	struct seg s;
	bool got;

	queue_frame(g, sport, TH_SYN, GUEST_ISN, 0, syn_win, opts, optlen, NULL,
	            0);
	event_base_loop(g->c.base, EVLOOP_NONBLOCK);
	/* Other connections may still be talking. */
	while ((got = next_seg(g, &s)) && s.dport != sport)
		;
	if (!got || s.flags != (TH_SYN | TH_ACK) || s.ack != GUEST_ISN + 1 ||
	    !addressed_right(&s))
		return -1;
	g->synack = s;
	*isn = s.seq;
	send_seg(g, sport, TH_ACK, GUEST_ISN + 1, *isn + 1, win, NULL, 0);
	return accept(g->listener, NULL, NULL);
}

/**
 * handshake() - open a connection from guest port @sport, and accept it
 * @g:		guest
 * @sport:	guest port
 * @win:	window the guest's final ACK advertises
 * @isn:	filled with tapir's initial sequence number
 *
 * The guest's SYN has no options: MSS 536, no window scaling.
 *
 * Return: the host's accepted socket, or -1
 */
int handshake(struct guest *g, uint16_t sport, uint16_t win, uint32_t *isn)
{
	return connect_guest(g, sport, NULL, 0, 65535, win, isn);
}

/**
 * handshake_opts() - handshake() with the MSS and window scale options a
 *		      Linux guest sends
 * @g:		guest
 * @sport:	guest port
 * @mss:	the guest's MSS option
 * @ws:		its window scale shift
 * @syn_win:	window field of its SYN (never scaled)
 * @win:	window field of its final ACK, scaled by @ws
 * @isn:	filled with tapir's initial sequence number
 *
 * Return: the host's accepted socket, or -1
 */
int handshake_opts(struct guest *g, uint16_t sport, uint16_t mss, uint8_t ws,
                   uint16_t syn_win, uint16_t win, uint32_t *isn)
{
	const uint8_t opts[8] = {TCPOPT_MAXSEG,       TCPOLEN_MAXSEG,
	                         (uint8_t)(mss >> 8), (uint8_t)mss,
	                         TCPOPT_NOP,          TCPOPT_WINDOW,
	                         TCPOLEN_WINDOW,      ws};

	return connect_guest(g, sport, opts, sizeof(opts), syn_win, win, isn);
}

/**
 * handshake_sack() - handshake() from a guest that permits SACK, with MSS
 *		      1460 and no window scaling; tapir's SYN-ACK is left in
 *		      g->synack
 * @g:		guest
 * @sport:	guest port
 * @win:	window field of its final ACK
 * @isn:	filled with tapir's initial sequence number
 *
 * Return: the host's accepted socket, or -1
 */
int handshake_sack(struct guest *g, uint16_t sport, uint16_t win, uint32_t *isn)
{
	const uint8_t opts[8] = {TCPOPT_MAXSEG,
	                         TCPOLEN_MAXSEG,
	                         1460 >> 8,
	                         1460 & 0xff,
	                         TCPOPT_NOP,
	                         TCPOPT_NOP,
	                         TCPOPT_SACK_PERMITTED,
	                         TCPOLEN_SACK_PERMITTED};

	return connect_guest(g, sport, opts, sizeof(opts), win, win, isn);
}

/**
 * guest_vnet() - frames both ways carry a virtio_net_hdr, as on a tap with
 *		  IFF_VNET_HDR: tapir then sends data as GSO frames of up to
 *		  64 KiB, and one batch is TCP_BATCH_BYTES, as by default
 * @g:		guest from guest_open() or guest_open_queues(), before its
 *		first frame
 *
 * The guest's frames carry an all-zero header: no offload asked. One loop
 * turn may send a whole window in GSO frames before the guest reads: the
 * tap queue takes 16 MiB (as root), or what net.core.wmem_max allows.
 *
 * Return: 0 on success
 */
int guest_vnet(struct guest *g)
{
	int big = 16 << 20;

	g->c.vnet_len = sizeof(struct virtio_net_hdr_mrg_rxbuf);
	for (unsigned int q = 0; q < g->c.tap.queues; q++)
		if (setsockopt(g->c.tapfd[q], SOL_SOCKET, SO_SNDBUFFORCE, &big,
		               sizeof(big)) &&
		    setsockopt(g->c.tapfd[q], SOL_SOCKET, SO_SNDBUF, &big,
		               sizeof(big)))
			return -1;
	return 0;
}

/**
 * reset_by_host() - the host resets an accepted connection
 * @fd:		accepted socket, closed here
 */
void reset_by_host(int fd)
{
	const struct linger l = {.l_onoff = 1, .l_linger = 0};

	CHECK(!setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)));
	close(fd);
}
