// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - ICMP echo to remote hosts through unprivileged ping sockets */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/icmp6.h>
#include <netinet/ip_icmp.h>
#include <sys/socket.h>
#include <event2/event.h>

#include "driver/core/clock.h"
#include "driver/host/outbound.h"
#include "driver/stack/csum.h"
#include "driver/flow/flow.h"
#include "driver/flow/fwd.h"
#include "driver/stack/icmp.h"
#include "driver/core/inany.h"
#include "driver/stack/ip.h"
#include "driver/core/list.h"
#include "driver/core/log.h"
#include "driver/udp/ping.h"

/* Syscalls of ping sockets, once running. */
const char *const ping_syscalls[] = {
        "socket",     "bind",        "connect", "sendto",
        "sendmsg",    "recvfrom",    "recvmsg", "setsockopt",
        "getsockopt", "getsockname", "close",   NULL,
};

/* A guest pinging many hosts at once is rare; each flow holds one fd, and
 * the flow table has FLOW_PING_MAX of them.
 */
#define PING_IDLE_SEC 60
#define PING_SCAN_SEC 10
/* Replies read per wakeup, so one busy flow can't starve the others. */
#define PING_RECV_BATCH 8

/**
 * struct ping_flow - one (guest address, echo id, destination) and its socket
 * @flow:	flow table part; its key holds the guest's source address
 *		(gaddr), where replies go, the pinged address (faddr), the
 *		source of replies, and the guest's echo identifier (gport,
 *		network order), which the kernel replaces by the socket's own
 *		on the wire
 * @fd:		ping socket
 * @ev:		read event on @fd
 * @last:	CLOCK_MONOTONIC seconds of the last request or reply
 * @lru:	its links in the recency list, least recently used first
 */
struct ping_flow {
	struct flow_common flow;
	int fd;
	struct event *ev;
	uint64_t last;
	struct list_node lru;
};

_Static_assert(sizeof(struct ping_flow) <= FLOW_ENTRY_SIZE,
               "a ping flow fits a flow table entry");

/**
 * struct ping_state - ICMP echo state besides the flows in the flow table
 * @lru:	the flows, least recently used first: the expiry stops at
 *		the first that is not idle long enough
 * @expiry:	periodic timer that closes idle flows
 * @warned:	the "ping sockets not allowed" line was printed
 * @gid:	our group as the host sees it, for the warning
 * @range:	net.ipv4.ping_group_range at start, for the warning
 * @buf:	one reply from a ping socket
 */
struct ping_state {
	struct list lru;
	struct event *expiry;
	bool warned;
	gid_t gid;
	char range[64];
	uint8_t buf[65536];
};

/**
 * ping_flow_free() - close a flow's socket and release its entry
 * @c:		context
 * @fp:		flow; set to NULL
 */
static void ping_flow_free(struct ctx *c, struct ping_flow **fp)
{
	struct flow_common *flow = &(*fp)->flow;

	list_unlink(&c->ping->lru, &(*fp)->lru);
	if ((*fp)->ev)
		event_free((*fp)->ev);
	if ((*fp)->fd >= 0)
		close((*fp)->fd);
	flow_release(c->flows, &flow);
	*fp = NULL;
}

/**
 * ping_used() - a request or reply went: the flow is the most recent
 * @s:		echo state
 * @f:		flow, on the recency list
 */
static void ping_used(struct ping_state *s, struct ping_flow *f)
{
	f->last = clock_s();
	if (s->lru.tail != &f->lru) {
		list_unlink(&s->lru, &f->lru);
		list_append(&s->lru, &f->lru);
	}
}

/**
 * ping_reply_csum() - checksum of an echo reply as the guest receives it
 * @f:		flow (source and destination of the reply)
 * @v6:		ICMPv6, whose checksum covers the pseudo-header
 * @msg:	message with a zero checksum field
 * @len:	message length
 *
 * Return: checksum, as stored in the header
 */
static uint16_t ping_reply_csum(const struct ping_flow *f, bool v6,
                                const uint8_t *msg, size_t len)
{
	uint32_t sum =
	        v6 ? ip_pseudo_csum(&f->flow.key.faddr, &f->flow.key.gaddr,
	                            IPPROTO_ICMPV6, len)
	           : 0;

	return csum_fold(csum_add(sum, msg, len));
}

/**
 * ping_reply_to_guest() - pass one echo reply from the host to the guest
 * @c:		context
 * @f:		its flow
 * @msg:	ICMP message as read from the ping socket; rewritten in place
 * @len:	its length
 */
static void ping_reply_to_guest(struct ctx *c, struct ping_flow *f,
                                uint8_t *msg, size_t len)
{
	bool v6 = !inany_is_v4(&f->flow.key.faddr);
	uint8_t reply = v6 ? ICMP6_ECHO_REPLY : ICMP_ECHOREPLY;
	struct iovec iov = {msg, len};
	uint16_t ck;

	if (len < 8) {
		c->stats.drops[DROP_SHORT_FRAME]++;
		return;
	}
	if (msg[0] != reply) {
		c->stats.drops[DROP_UNKNOWN_PROTO]++;
		return;
	}
	/* The guest matches replies by the id it chose, not the socket's. */
	memcpy(msg + 4, &f->flow.key.gport, 2);
	msg[2] = msg[3] = 0;
	ck = ping_reply_csum(f, v6, msg, len);
	memcpy(msg + 2, &ck, 2);
	if (ip_output(c, &f->flow.key.faddr, &f->flow.key.gaddr,
	              v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP, &iov, 1, NULL))
		return;
	c->stats.to_guest[PROTO_ICMP].packets++;
	c->stats.to_guest[PROTO_ICMP].bytes += len;
	ping_used(c->ping, f);
}

/**
 * ping_sock_ready() - libevent callback: replies are waiting on a socket
 * @fd:		the flow's ping socket
 * @what:	EV_READ
 * @arg:	the flow
 */
static void ping_sock_ready(evutil_socket_t fd, short what, void *arg)
{
	struct ping_flow *f = arg;
	struct ctx *c = flow_enter(&f->flow);
	uint8_t *buf = c->ping->buf;

	(void)what;
	for (int i = 0; i < PING_RECV_BATCH; i++) {
		ssize_t n = recv(fd, buf, sizeof(c->ping->buf), MSG_DONTWAIT);

		if (n < 0) {
			/* A pending socket error is cleared by this read. */
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				debug_msg("ping socket: %s", strerror(errno));
			return;
		}
		ping_reply_to_guest(c, f, buf, (size_t)n);
	}
}

/**
 * ping_group_range() - read net.ipv4.ping_group_range for a log line
 * @buf:	filled with the value, e.g. "1 0", or "?" if unreadable
 * @size:	size of @buf
 *
 * Read at start: a sandboxed tapir has no /proc by the time it is needed.
 */
static void ping_group_range(char *buf, size_t size)
{
	FILE *fp = fopen("/proc/sys/net/ipv4/ping_group_range", "re");
	size_t n = 0;

	snprintf(buf, size, "?");
	if (!fp)
		return;
	if (fgets(buf, (int)size, fp))
		n = strcspn(buf, "\n");
	fclose(fp);
	buf[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '\t')
			buf[i] = ' ';
}

/**
 * ping_socket_failed() - report why a ping socket could not be opened
 * @c:		context
 * @err:	errno of socket()
 *
 * A ping_group_range that excludes us is a host setting the user must
 * change, so it is explained once per run rather than once per packet.
 */
static void ping_socket_failed(struct ctx *c, int err)
{
	if (err != EACCES && err != EPERM) {
		c->stats.drops[DROP_SOCKET]++;
		debug_msg("ping socket: %s", strerror(err));
		return;
	}
	c->stats.drops[DROP_NO_ROUTE]++;
	if (c->ping->warned)
		return;
	c->ping->warned = true;
	err_msg("ping sockets not allowed for gid %u "
	        "(net.ipv4.ping_group_range is \"%s\"): "
	        "ICMP echo to remote hosts is dropped",
	        (unsigned int)c->ping->gid, c->ping->range);
}

/**
 * ping_flow_new() - open a ping socket for a new flow and enter it
 * @c:		context
 * @p:		the first echo request of the flow
 * @id:		its echo id, network order
 *
 * Return: the flow, or NULL after counting the drop
 */
static struct ping_flow *ping_flow_new(struct ctx *c, const struct pkt *p,
                                       uint16_t id)
{
	int family = p->v6 ? AF_INET6 : AF_INET, ret;
	static struct log_limit limit;
	struct ping_flow *f;

	/* The flow part is first: a ping table entry is a ping_flow. */
	f = (struct ping_flow *)flow_alloc(c->flows, FLOW_PING);
	if (!f) {
		c->stats.drops[DROP_FLOW_LIMIT]++;
		return NULL;
	}
	list_append(&c->ping->lru, &f->lru);
	flow_key_guest(&f->flow.key, FLOW_PING, &p->src, id, &p->dst, 0);
	f->fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	               p->v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP);
	if (f->fd < 0) {
		ping_socket_failed(c, errno);
		goto fail;
	}
	if ((ret = outbound_bind(c, f->fd, family))) {
		c->stats.drops[DROP_SOCKET]++;
		debug_msg("bind ping socket to outbound address: %s",
		          strerror(-ret));
		goto fail;
	}
	f->ev = event_new(c->base, f->fd, EV_READ | EV_PERSIST, ping_sock_ready,
	                  f);
	if (!f->ev || event_add(f->ev, NULL)) {
		c->stats.drops[DROP_SOCKET]++;
		err_limited(&limit, 0,
		            "ping: watch a new ping socket: "
		            "libevent failed, dropping the request");
		goto fail;
	}
	flow_hash(c->flows, &f->flow, FLOW_SIDE_GUEST);
	return f;
fail:
	ping_flow_free(c, &f);
	return NULL;
}

/**
 * ping_send_failed() - tell the guest what the host said about a request
 * @c:		context
 * @p:		the request
 * @err:	errno of sendto()
 */
static void ping_send_failed(struct ctx *c, const struct pkt *p, int err)
{
	if (err == ENETUNREACH || err == EHOSTUNREACH) {
		c->stats.drops[DROP_NO_ROUTE]++;
		icmp_send_unreach(c, p,
		                  err == ENETUNREACH ? ICMP_NET_UNREACH
		                                     : ICMP_HOST_UNREACH);
		return;
	}
	c->stats.drops[DROP_SOCKET]++;
	debug_msg("ping: send: %s", strerror(err));
}

/**
 * ping_forward() - send a guest's echo request to a remote host
 * @c:		context
 * @p:		echo request, checksum verified, not for the gateway or DNS
 *		address
 */
void ping_forward(struct ctx *c, const struct pkt *p)
{
	union sockaddr_inany sa;
	struct flow_key k;
	struct ping_flow *f;
	socklen_t salen;
	uint16_t id;

	if (!c->ping) {
		c->stats.drops[DROP_NO_ROUTE]++;
		return;
	}
	if (p->l4len < 8) {
		c->stats.drops[DROP_SHORT_FRAME]++;
		return;
	}
	/* Ping sockets refuse anything but a plain code-0 echo request. */
	if (p->l4[1] != 0) {
		c->stats.drops[DROP_UNKNOWN_PROTO]++;
		return;
	}
	if (fwd_outbound_or_reject(c, p, 0, &sa, &salen))
		return;
	memcpy(&id, p->l4 + 4, 2);
	flow_key_guest(&k, FLOW_PING, &p->src, id, &p->dst, 0);
	f = (struct ping_flow *)flow_lookup(c->flows, &k);
	if (!f && !(f = ping_flow_new(c, p, id)))
		return;
	flow_enter(&f->flow);
	ping_used(c->ping, f);
	if (sendto(f->fd, p->l4, p->l4len, 0, &sa.sa, salen) < 0)
		ping_send_failed(c, p, errno);
}

/**
 * free_one() - flow_walk() callback: close a flow at exit
 * @flow:	a ping flow
 * @arg:	unused
 */
static void free_one(struct flow_common *flow, void *arg)
{
	struct ping_flow *f = (struct ping_flow *)flow;

	(void)arg;
	ping_flow_free(flow->c, &f);
}

/**
 * ping_expire_idle() - close the flows idle for PING_IDLE_SEC
 * @c:		context, after ping_init()
 * @now:	current clock_s()
 *
 * From the least recently used, up to the first that is not idle that
 * long: every later one is younger. A sweep looks at the flows it closes
 * and at most one more, however many are open.
 *
 * Return: flows looked at, for tests
 */
unsigned int ping_expire_idle(struct ctx *c, uint64_t now)
{
	unsigned int looked = 0;
	struct list_node *n;

	while ((n = c->ping->lru.head)) {
		struct ping_flow *f =
		        (struct ping_flow *)((char *)n -
		                             offsetof(struct ping_flow, lru));

		looked++;
		if (f->last + PING_IDLE_SEC > now)
			break;
		ping_flow_free(c, &f);
	}
	return looked;
}

/**
 * ping_expire() - timer callback: close flows idle for PING_IDLE_SEC
 * @fd:		unused
 * @what:	unused
 * @arg:	context
 */
static void ping_expire(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	ping_expire_idle(arg, clock_s());
}

/**
 * ping_init() - set up the echo state and its expiry timer
 * @c:		context with an event base and flow table
 *
 * Return: 0 on success, -1 after printing one error line
 */
int ping_init(struct ctx *c)
{
	struct timeval tv = {PING_SCAN_SEC, 0};
	struct ping_state *s = calloc(1, sizeof(*s));

	if (!s) {
		err_errno(ENOMEM, "ping: allocate the ping state");
		return -1;
	}
	s->expiry = event_new(c->base, -1, EV_PERSIST, ping_expire, c);
	if (!s->expiry || event_add(s->expiry, &tv)) {
		err_msg("ping: create expiry timer: libevent failed");
		if (s->expiry)
			event_free(s->expiry);
		free(s);
		return -1;
	}
	/* As the host sees us: the sandbox joins a user namespace later. */
	s->gid = getegid();
	ping_group_range(s->range, sizeof(s->range));
	c->ping = s;
	return 0;
}

/**
 * ping_cleanup() - close every echo flow and free the ping state
 * @c:		context; ping_init() may not have run
 */
void ping_cleanup(struct ctx *c)
{
	struct ping_state *s = c->ping;

	if (!s)
		return;
	if (c->flows)
		flow_walk(c->flows, FLOW_PING, free_one, NULL);
	event_free(s->expiry);
	free(s);
	c->ping = NULL;
}
