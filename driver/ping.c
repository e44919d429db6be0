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

#include "clock.h"
#include "seed.h"
#include "seccomp.h"
#include "csum.h"
#include "fwd.h"
#include "icmp.h"
#include "inany.h"
#include "ip.h"
#include "log.h"
#include "ping.h"

/* Syscalls of ping sockets, once running. */
const char *const ping_syscalls[] = {
        "socket",     "bind",        "connect", "sendto",
        "sendmsg",    "recvfrom",    "recvmsg", "setsockopt",
        "getsockopt", "getsockname", "close",   NULL,
};

/* A guest pinging many hosts at once is rare; each flow holds one fd. */
#define PING_FLOWS_MAX 1024
#define PING_BUCKETS 2048 /* power of two, twice PING_FLOWS_MAX */
#define PING_IDLE_SEC 60
#define PING_SCAN_SEC 10
/* Replies read per wakeup, so one busy flow can't starve the others. */
#define PING_RECV_BATCH 8

/**
 * struct ping_flow - one (guest address, echo id, destination) and its socket
 * @next:	next flow in the same hash bucket
 * @c:		context, for the socket callback
 * @guest:	the guest's source address, where replies go
 * @dst:	the pinged address, the source of replies
 * @id:		the guest's echo identifier (network order); the kernel
 *		replaces it by the socket's own on the wire
 * @fd:		ping socket
 * @ev:		read event on @fd
 * @last:	CLOCK_MONOTONIC seconds of the last request or reply
 */
struct ping_flow {
	struct ping_flow *next;
	struct ctx *c;
	struct in6_addr guest;
	struct in6_addr dst;
	uint16_t id;
	int fd;
	struct event *ev;
	time_t last;
};

/**
 * struct ping_state - ICMP echo flows
 * @bucket:	hash chains of flows
 * @count:	flows in the table
 * @seed:	per-run hash seed, so the guest can't pick colliding keys
 * @expiry:	periodic timer that closes idle flows
 * @warned:	the "ping sockets not allowed" line was printed
 */
struct ping_state {
	struct ping_flow *bucket[PING_BUCKETS];
	unsigned int count;
	uint32_t seed;
	struct event *expiry;
	bool warned;
	gid_t gid;
	char range[64];
};

static uint8_t ping_buf[65536];

/**
 * now_sec() - coarse monotonic time
 *
 * Return: seconds since an arbitrary point
 */
static time_t now_sec(void)
{
	return (time_t)clock_s();
}

/**
 * hash_bytes() - FNV-1a over @len bytes, continuing from @h
 * @h:		running hash
 * @p:		data
 * @len:	bytes
 *
 * Return: the new running hash
 */
static uint32_t hash_bytes(uint32_t h, const void *p, size_t len)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 16777619U;
	return h;
}

/**
 * ping_bucket() - hash chain for a flow key
 * @s:		state
 * @guest:	guest address
 * @dst:	destination
 * @id:		echo id, network order
 *
 * Return: pointer to the chain head
 */
static struct ping_flow **ping_bucket(struct ping_state *s,
                                      const struct in6_addr *guest,
                                      const struct in6_addr *dst, uint16_t id)
{
	uint32_t h = 2166136261U ^ s->seed;

	h = hash_bytes(h, guest, sizeof(*guest));
	h = hash_bytes(h, dst, sizeof(*dst));
	h = hash_bytes(h, &id, sizeof(id));
	return &s->bucket[h & (PING_BUCKETS - 1)];
}

/**
 * ping_lookup() - find the flow for a key
 * @s:		state
 * @guest:	guest address
 * @dst:	destination
 * @id:		echo id, network order
 *
 * Return: the flow, or NULL
 */
static struct ping_flow *ping_lookup(struct ping_state *s,
                                     const struct in6_addr *guest,
                                     const struct in6_addr *dst, uint16_t id)
{
	struct ping_flow *f = *ping_bucket(s, guest, dst, id);

	for (; f; f = f->next)
		if (f->id == id && inany_equal(&f->guest, guest) &&
		    inany_equal(&f->dst, dst))
			return f;
	return NULL;
}

/**
 * ping_flow_free() - close a flow's socket and free it (already unlinked)
 * @f:		flow
 */
static void ping_flow_free(struct ping_flow *f)
{
	if (f->ev)
		event_free(f->ev);
	if (f->fd >= 0)
		close(f->fd);
	free(f);
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
	        v6 ? ip_pseudo_csum(&f->dst, &f->guest, IPPROTO_ICMPV6, len)
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
	bool v6 = !inany_is_v4(&f->dst);
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
	memcpy(msg + 4, &f->id, 2);
	msg[2] = msg[3] = 0;
	ck = ping_reply_csum(f, v6, msg, len);
	memcpy(msg + 2, &ck, 2);
	if (ip_output(c, &f->dst, &f->guest, v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP,
	              &iov, 1, NULL))
		return;
	c->stats.to_guest[PROTO_ICMP].packets++;
	c->stats.to_guest[PROTO_ICMP].bytes += len;
	f->last = now_sec();
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

	(void)what;
	for (int i = 0; i < PING_RECV_BATCH; i++) {
		ssize_t n = recv(fd, ping_buf, sizeof(ping_buf), MSG_DONTWAIT);

		if (n < 0) {
			/* A pending socket error is cleared by this read. */
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				debug_msg("ping socket: %s", strerror(errno));
			return;
		}
		ping_reply_to_guest(f->c, f, ping_buf, (size_t)n);
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
	struct ping_state *s = c->ping;
	int family = p->v6 ? AF_INET6 : AF_INET, ret;
	static struct log_limit limit;
	struct ping_flow **head, *f;

	if (s->count >= PING_FLOWS_MAX) {
		c->stats.drops[DROP_FLOW_LIMIT]++;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		c->stats.drops[DROP_SOCKET]++;
		return NULL;
	}
	f->c = c;
	f->guest = p->src;
	f->dst = p->dst;
	f->id = id;
	f->fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	               p->v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP);
	if (f->fd < 0) {
		ping_socket_failed(c, errno);
		goto fail;
	}
	if ((ret = fwd_bind_outbound(c, f->fd, family))) {
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
	head = ping_bucket(s, &f->guest, &f->dst, id);
	f->next = *head;
	*head = f;
	s->count++;
	return f;
fail:
	ping_flow_free(f);
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
	f = ping_lookup(c->ping, &p->src, &p->dst, id);
	if (!f && !(f = ping_flow_new(c, p, id)))
		return;
	f->last = now_sec();
	if (sendto(f->fd, p->l4, p->l4len, 0, &sa.sa, salen) < 0)
		ping_send_failed(c, p, errno);
}

/**
 * ping_expire() - timer callback: close flows idle for PING_IDLE_SEC
 * @fd:		unused
 * @what:	unused
 * @arg:	context
 */
static void ping_expire(evutil_socket_t fd, short what, void *arg)
{
	struct ctx *c = arg;
	struct ping_state *s = c->ping;
	time_t now = now_sec();

	(void)fd;
	(void)what;
	for (unsigned int i = 0; i < PING_BUCKETS; i++) {
		struct ping_flow **pp = &s->bucket[i];

		while (*pp) {
			struct ping_flow *f = *pp;

			if (now - f->last < PING_IDLE_SEC) {
				pp = &f->next;
				continue;
			}
			*pp = f->next;
			s->count--;
			ping_flow_free(f);
		}
	}
}

/**
 * ping_init() - set up the echo flow table and its expiry timer
 * @c:		context with an event base
 *
 * Return: 0 on success, -1 after printing one error line
 */
int ping_init(struct ctx *c)
{
	struct timeval tv = {PING_SCAN_SEC, 0};
	struct ping_state *s = calloc(1, sizeof(*s));

	if (!s) {
		err_errno(ENOMEM, "ping: allocate flow table");
		return -1;
	}
	s->seed = (uint32_t)seed_u64();
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
 * ping_cleanup() - close every echo flow and free the table
 * @c:		context; ping_init() may not have run
 */
void ping_cleanup(struct ctx *c)
{
	struct ping_state *s = c->ping;

	if (!s)
		return;
	for (unsigned int i = 0; i < PING_BUCKETS; i++) {
		while (s->bucket[i]) {
			struct ping_flow *f = s->bucket[i];

			s->bucket[i] = f->next;
			ping_flow_free(f);
		}
	}
	event_free(s->expiry);
	free(s);
	c->ping = NULL;
}
