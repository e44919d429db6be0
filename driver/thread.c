// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - datapath threads: one context per tap queue, and their hand-offs
 *
 * With --queues N (N > 1) each tap queue gets a thread with its own
 * context: event base, flow table, buffers, timers and counters. Thread 0
 * is the main thread, which also keeps the API, the forwards' listeners
 * and the lifecycle. A flow belongs to the thread whose queue its first
 * guest frame came in on; tun keeps steering the flow's frames to that
 * queue, because its frames to the guest leave there.
 *
 * New TCP connections are placed, not left to tun's hash (which puts 3 or
 * 4 of 4 flows on one of 2 queues half the time): a guest SYN and a
 * connection accepted on a forward go to the thread with the fewest TCP
 * connections, ties in turn. A SYN first goes round the ring, so that a
 * retransmitted one finds the thread it was placed on. Once the owner
 * wrote a frame of the flow, tun steers the guest's next ones to its
 * queue; when that steering ages out, the ring below finds the owner.
 *
 * Threads share nothing on the frame path. They talk through inboxes: a
 * mutex-protected list woken by an eventfd. What goes through them:
 * - frames a thread has no flow for, which may belong to a flow another
 *   thread owns (a forward's flow whose entry in tun's steering table aged
 *   out, after ~3 s without a frame to the guest; a datagram reassembled
 *   from fragments, which tun steers by addresses alone): passed round the
 *   ring of threads and back to the reader, which handles them as a miss
 *   (a SYN: places it);
 * - SYNs, to the thread placement picked;
 * - DHCP and NDP, whose state only the main thread keeps;
 * - connections accepted on a forward, to the thread placement picks;
 * - a request for a copy of the counters (get_stats), a failure that ends
 *   tapir, and the stop at exit.
 */

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <event2/event.h>

#include "ctx.h"
#include "clock.h"
#include "dhcp.h"
#include "eth.h"
#include "flow.h"
#include "frag.h"
#include "ip.h"
#include "fwd.h"
#include "lifecycle.h"
#include "log.h"
#include "ping.h"
#include "seccomp.h"
#include "seed.h"
#include "tapio.h"
#include "tcp.h"
#include "thread.h"
#include "udp.h"
#include "udp_flow.h"

/* Syscalls of starting, waking and stopping threads, once running, but
 * clone() and clone3(), which seccomp.c allows for threads only. glibc's
 * malloc asks sched_getaffinity() for the CPUs when it makes an arena for
 * a thread (the sandbox hides /sys and /proc/stat).
 */
const char *const thread_syscalls[] = {
        "set_robust_list",   "rseq",   "futex", "munmap", "exit", "madvise",
        "sched_getaffinity", "gettid", NULL,
};

/* Bytes of messages queued in one inbox at most: a thread that stalls
 * can't make another one grow without a bound. Beyond it, frames are
 * dropped and accepted connections reset.
 */
#define INBOX_BYTES_MAX (8U << 20)
/* How long get_stats waits for the threads' copies of their counters. */
#define STATS_WAIT_MS 200
/* SYNs a thread remembers placing, and for how long: a retransmitted one
 * that comes back round the ring before its first copy was opened (a
 * backed-up inbox) goes where that one went, not to a second thread.
 */
#define RECENT_SLOTS 256
#define RECENT_MS 3000

/**
 * enum msg_type - what a message in an inbox asks for
 * @MSG_FRAME:	handle a frame another thread read
 * @MSG_ACCEPT:	take a connection accepted on a forward
 * @MSG_STATS:	copy the counters for get_stats
 * @MSG_FAIL:	(to the main thread) end tapir: the datapath can't go on
 * @MSG_STOP:	end the thread's loop
 */
enum msg_type {
	MSG_FRAME,
	MSG_ACCEPT,
	MSG_STATS,
	MSG_FAIL,
	MSG_STOP,
};

/**
 * struct msg - one inbox entry
 * @next:	next in the inbox
 * @type:	enum msg_type
 * @hops:	MSG_FRAME: times it was passed on
 * @fd:		MSG_ACCEPT: the accepted socket, owned by the message
 * @src:	MSG_ACCEPT: client as the guest sees it
 * @dst:	MSG_ACCEPT: guest address
 * @sport:	MSG_ACCEPT: client port
 * @dport:	MSG_ACCEPT: guest port
 * @len:	MSG_FRAME: bytes of @data: vnet header, then the frame
 * @data:	MSG_FRAME: the bytes
 */
struct msg {
	struct msg *next;
	enum msg_type type;
	unsigned int hops;
	int fd;
	struct in6_addr src;
	struct in6_addr dst;
	uint16_t sport;
	uint16_t dport;
	size_t len;
	uint8_t data[];
};

/**
 * struct placement - a SYN a thread placed
 * @k:		its connection's key
 * @until:	clock_ms() until which it counts
 * @to:		the thread it went to
 */
struct placement {
	struct flow_key k;
	uint64_t until;
	unsigned int to;
};

/**
 * struct thread - a datapath thread and its inbox
 * @c:		its context (the main one for thread 0)
 * @set:	the set it is in
 * @tid:	pthread, once @started
 * @started:	the thread runs (never set for thread 0)
 * @efd:	eventfd that wakes it for the inbox
 * @ev:		read event on @efd in its loop
 * @stop:	its MSG_STOP, made beforehand so that stopping can't fail
 * @fail:	its MSG_FAIL to the main thread, made beforehand too
 * @lock:	protects @head, @tail, @bytes, @stats_asked, @snap, @snap_gen
 * @cond:	signalled when @snap_gen changes
 * @head:	first message, or NULL
 * @tail:	where the next message goes
 * @bytes:	bytes of the frame and accept messages queued
 * @stats_asked: a MSG_STATS is queued: get_stats doesn't queue another
 * @snap:	copy of its counters, for get_stats
 * @snap_gen:	copies made so far
 * @load:	TCP connections it owns or was given and hasn't opened yet,
 *		what placement compares (atomic)
 * @counted:	its TCP connections as last added to @load (its own)
 * @placing:	what it handles now was added to @load when placed: the
 *		first connection it opens is that one (its own)
 * @recent:	SYNs it placed lately, by hash (its own)
 */
struct thread {
	struct ctx *c;
	struct thread_set *set;
	pthread_t tid;
	bool started;
	int efd;
	struct event *ev;
	struct msg *stop;
	struct msg *fail;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct msg *head;
	struct msg **tail;
	size_t bytes;
	bool stats_asked;
	struct stats snap;
	uint64_t snap_gen;
	unsigned int load;
	unsigned int counted;
	bool placing;
	struct placement recent[RECENT_SLOTS];
};

/**
 * struct thread_set - every datapath thread, and what they share
 * @n:			threads, one per tap queue
 * @seed:		hash seed of the threads' @recent slots
 * @place_lock:		makes each placement see the ones before it
 * @last_pick:		thread the last placement picked (under @place_lock)
 * @guest_mac:		the guest's MAC, learnt by any thread (atomic)
 * @frag_udp_until:	clock_ms() until which a UDP flow opened from a
 *			reassembled datagram may live on another thread than
 *			its plain datagrams' (atomic)
 * @udp_ports:		bit per guest port of a UDP forward: replies from it
 *			may belong to the main thread's flows (atomic bytes)
 * @t:			the threads, [0] the main one
 */
struct thread_set {
	unsigned int n;
	uint64_t seed;
	pthread_mutex_t place_lock;
	unsigned int last_pick;
	uint64_t guest_mac;
	uint64_t frag_udp_until;
	uint8_t udp_ports[65536 / 8];
	struct thread t[TAPIR_MAX_QUEUES];
};

/**
 * msg_size() - bytes a message counts for against INBOX_BYTES_MAX
 * @m:		message
 *
 * Return: its size, 0 for the ones that can't pile up
 */
static size_t msg_size(const struct msg *m)
{
	if (m->type == MSG_FRAME || m->type == MSG_ACCEPT)
		return sizeof(*m) + m->len;
	return 0;
}

/**
 * post() - queue a message for a thread and wake it
 * @t:		receiver
 * @m:		message, owned by the inbox from here on
 *
 * Return: 0, or -1 if the inbox is full (the message is freed, its fd
 *	   left to the caller)
 */
static int post(struct thread *t, struct msg *m)
{
	static struct log_limit limit;
	uint64_t one = 1;
	bool wake;

	m->next = NULL;
	pthread_mutex_lock(&t->lock);
	if (msg_size(m) && t->bytes + msg_size(m) > INBOX_BYTES_MAX) {
		pthread_mutex_unlock(&t->lock);
		free(m);
		return -1;
	}
	t->bytes += msg_size(m);
	wake = !t->head;
	*t->tail = m;
	t->tail = &m->next;
	pthread_mutex_unlock(&t->lock);
	/* Can't fail but for a closed fd: the message then waits in the
	 * list, and the thread sees it at its next wakeup.
	 */
	if (wake && write(t->efd, &one, sizeof(one)) < 0)
		err_limited(&limit, errno, "wake datapath thread %u",
		            (unsigned int)(t - t->set->t));
	return 0;
}

/**
 * msg_new() - a zeroed message with room for @len data bytes
 * @type:	enum msg_type
 * @len:	data bytes
 *
 * Return: the message, or NULL on ENOMEM
 */
static struct msg *msg_new(enum msg_type type, size_t len)
{
	struct msg *m = calloc(1, sizeof(*m) + len);

	if (m) {
		m->type = type;
		m->fd = -1;
		m->len = len;
	}
	return m;
}

/**
 * frame_msg() - a copy of what @c is handling, as a frame
 * @c:		context with @c->rx
 *
 * A datagram reassembled here (@c->rx_whole) goes as one frame: the
 * Ethernet header of its last fragment, its rebuilt IP header and the
 * whole payload, and a zero vnet header (nothing left to offload).
 *
 * Return: the message, or NULL on ENOMEM
 */
static struct msg *frame_msg(const struct ctx *c)
{
	const struct pkt *w = c->rx_whole;
	const struct frame *f = c->rx;
	size_t l3 = w ? (size_t)(w->l4 - w->l3) + w->l4len : 0;
	struct msg *m;

	m = msg_new(MSG_FRAME, c->vnet_len + (w ? ETH_HLEN_ + l3 : f->len));
	if (!m)
		return NULL;
	if (w) {
		memcpy(m->data + c->vnet_len, f->data, ETH_HLEN_);
		memcpy(m->data + c->vnet_len + ETH_HLEN_, w->l3, l3);
		return m;
	}
	if (c->vnet_len)
		memcpy(m->data, f->vh, c->vnet_len);
	memcpy(m->data + c->vnet_len, f->data, f->len);
	return m;
}

/**
 * try_pass() - give what @c is handling to another thread
 * @c:		context
 * @to:		receiver's index
 * @hops:	times it will have been passed
 *
 * Return: true if the receiver has it; false if its inbox is full (or no
 *	   memory): the frame is still @c's
 */
static bool try_pass(struct ctx *c, unsigned int to, unsigned int hops)
{
	struct msg *m = frame_msg(c);

	if (m)
		m->hops = hops;
	return m && !post(&c->threads->t[to], m);
}

/**
 * pass_frame() - give what @c is handling to another thread, or drop it
 * @c:		context
 * @to:		receiver's index
 * @hops:	times it will have been passed
 */
static void pass_frame(struct ctx *c, unsigned int to, unsigned int hops)
{
	if (!try_pass(c, to, hops))
		c->stats.drops[DROP_HANDOFF]++;
}

/**
 * pick_thread() - the thread a new TCP connection goes to: the one with
 *		   the fewest, ties in turn
 * @set:	threads
 *
 * The pick counts at once in the thread's load, so that a burst of
 * placements spreads before the first is opened; the thread takes it
 * over with placing_begin() and placing_end().
 *
 * Return: the thread's index
 */
static unsigned int pick_thread(struct thread_set *set)
{
	unsigned int best = 0, min = UINT_MAX;

	pthread_mutex_lock(&set->place_lock);
	for (unsigned int i = 1; i <= set->n; i++) {
		unsigned int t = (set->last_pick + i) % set->n;
		unsigned int load =
		        __atomic_load_n(&set->t[t].load, __ATOMIC_RELAXED);

		if (load < min) {
			min = load;
			best = t;
		}
	}
	set->last_pick = best;
	__atomic_add_fetch(&set->t[best].load, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&set->place_lock);
	return best;
}

/**
 * load_move() - a connection placed on thread @from goes to @to instead
 * @set:	threads
 * @from:	thread it was counted on
 * @to:		thread that takes it
 */
static void load_move(struct thread_set *set, unsigned int from,
                      unsigned int to)
{
	__atomic_sub_fetch(&set->t[from].load, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&set->t[to].load, 1, __ATOMIC_RELAXED);
}

/**
 * placing_begin() - @c handles a connection placed on it: the next TCP
 *		     connection it opens is already in its load
 * @c:		context, threaded
 */
static void placing_begin(struct ctx *c)
{
	c->threads->t[c->thread].placing = true;
}

/**
 * placing_end() - done with a placed connection: if it opened none (the
 *		   SYN met its connection, or was refused), take the count
 *		   back
 * @c:		context, threaded
 */
static void placing_end(struct ctx *c)
{
	struct thread *t = &c->threads->t[c->thread];

	if (t->placing)
		__atomic_sub_fetch(&t->load, 1, __ATOMIC_RELAXED);
	t->placing = false;
}

/**
 * thread_count_tcp() - the TCP connections of @c changed: update the load
 *			placement sees
 * @c:		context
 * @n:		its TCP flows now
 *
 * One atomic add per change, and none for the placed connection being
 * opened, which pick_thread() counted: the load never shows it twice.
 */
void thread_count_tcp(struct ctx *c, unsigned int n)
{
	unsigned int old, delta;
	struct thread *t;

	if (!c->threads)
		return;
	t = &c->threads->t[c->thread];
	old = t->counted;
	t->counted = n;
	delta = n - old; /* modulo 2^32: a decrease adds its negative */
	if (t->placing && n > old) {
		delta--;
		t->placing = false;
	}
	if (delta)
		__atomic_add_fetch(&t->load, delta, __ATOMIC_RELAXED);
}

/**
 * thread_pass_miss() - a frame matched no flow here: may another thread
 *			own one?
 * @c:		context
 *
 * The frame goes round the ring of threads and back to the one that read
 * it, which then treats it as a miss: a flow it opens lives on the queue
 * its frames come in on.
 *
 * Return: true if the frame was passed on (or dropped): stop handling it
 */
bool thread_pass_miss(struct ctx *c)
{
	if (!c->threads || !c->rx || c->rx_hops >= c->threads->n)
		return false;
	pass_frame(c, (c->thread + 1) % c->threads->n, c->rx_hops + 1);
	return true;
}

/**
 * recent_slot() - where the reader @c remembers placing the SYN of @k
 * @c:		reader's context
 * @k:		the connection's key
 *
 * Return: the slot, which may hold another SYN, or an expired one
 */
static struct placement *recent_slot(struct ctx *c, const struct flow_key *k)
{
	struct thread_set *set = c->threads;

	return &set->t[c->thread]
	                .recent[flow_key_mix(set->seed, k) % RECENT_SLOTS];
}

/**
 * thread_place_syn() - a guest SYN without a connection here: find the
 *			thread that opens it
 * @c:		context
 * @k:		its connection's key
 *
 * Fresh from the tap, the SYN goes round the ring first: a retransmitted
 * one meets the connection its first copy opened elsewhere. Back at its
 * reader (@c->rx_hops is then the number of threads), it goes where this
 * reader placed the same SYN within RECENT_MS (that copy may still wait
 * in the thread's inbox), or is placed anew; a SYN placed on a thread has
 * one hop more, and opens where it arrives. If a new pick's inbox is
 * full, it opens at the reader instead, rather than be dropped (and the
 * full thread picked again, as the least busy); a retransmission that
 * can't follow its first copy is dropped, as opening it here would make
 * a second connection.
 *
 * Return: true if the SYN was passed on (or dropped): stop handling it;
 *	   false: open the connection here
 */
bool thread_place_syn(struct ctx *c, const struct flow_key *k)
{
	struct thread_set *set = c->threads;
	struct placement *r;
	uint64_t now;
	bool again;

	if (!set || !c->rx || c->rx_hops > set->n)
		return false;
	if (c->rx_hops < set->n)
		return thread_pass_miss(c);
	now = clock_ms();
	r = recent_slot(c, k);
	again = r->until > now && flow_key_equal(&r->k, k);
	if (again) {
		__atomic_add_fetch(&set->t[r->to].load, 1, __ATOMIC_RELAXED);
	} else {
		r->k = *k;
		r->to = pick_thread(set);
	}
	r->until = now + RECENT_MS;
	if (r->to != c->thread) {
		if (try_pass(c, r->to, set->n + 1))
			return true;
		if (again) {
			__atomic_sub_fetch(&set->t[r->to].load, 1,
			                   __ATOMIC_RELAXED);
			c->stats.drops[DROP_HANDOFF]++;
			return true;
		}
		load_move(set, r->to, c->thread);
		r->to = c->thread;
	}
	placing_begin(c);
	return false;
}

/**
 * thread_pass_to_main() - hand a frame to the main thread, whose state it
 *			   needs (DHCP leases, router adverts)
 * @c:		context
 *
 * Return: true if passed (or dropped); false if @c is the main thread's
 *	   or the frame can't be passed: handle it here
 */
bool thread_pass_to_main(struct ctx *c)
{
	if (!c->threads || !c->thread || !c->rx)
		return false;
	pass_frame(c, 0, c->threads->n);
	return true;
}

/**
 * thread_may_own_udp() - could a guest datagram without a flow here
 *			  belong to another thread's flow?
 * @c:		context handling it
 * @gport:	its guest (source) port
 *
 * Yes if it comes from the guest port of a UDP forward (the main thread's
 * flows, sharing its listener), if it was reassembled (tun steered its
 * fragments by addresses alone) or is on its way round the ring already,
 * or for a while after a flow was opened from such a datagram (its plain
 * datagrams may come in elsewhere).
 *
 * Return: true if a miss should go round the ring before opening a flow
 */
bool thread_may_own_udp(const struct ctx *c, uint16_t gport)
{
	struct thread_set *set = c->threads;

	if (!set)
		return false;
	if (__atomic_load_n(&set->udp_ports[gport / 8], __ATOMIC_RELAXED) &
	    (1U << (gport % 8)))
		return true;
	return c->rx_whole || c->rx_hops ||
	       clock_ms() <
	               __atomic_load_n(&set->frag_udp_until, __ATOMIC_RELAXED);
}

/**
 * thread_udp_opened() - a UDP flow was opened: from a reassembled datagram,
 *			 or one that went round the ring?
 * @c:		context that opened it
 */
void thread_udp_opened(struct ctx *c)
{
	if (c->threads && (c->rx_whole || c->rx_hops))
		__atomic_store_n(&c->threads->frag_udp_until,
		                 clock_ms() + UDP_TIMEOUT_STREAM * 1000ULL,
		                 __ATOMIC_RELAXED);
}

/**
 * thread_set_udp_ports() - the guest ports of the UDP forwards open now
 * @c:		main context
 * @ports:	their guest ports
 * @n:		number of @ports
 *
 * Each byte of the map is stored once with its new value, so a bit that
 * stays set is never seen cleared.
 */
void thread_set_udp_ports(struct ctx *c, const uint16_t *ports, size_t n)
{
	uint8_t map[sizeof(c->threads->udp_ports)] = {0};
	struct thread_set *set = c->threads;

	if (!set)
		return;
	for (size_t i = 0; i < n; i++)
		map[ports[i] / 8] |= (uint8_t)(1U << (ports[i] % 8));
	for (size_t i = 0; i < sizeof(map); i++)
		if (__atomic_load_n(&set->udp_ports[i], __ATOMIC_RELAXED) !=
		    map[i])
			__atomic_store_n(&set->udp_ports[i], map[i],
			                 __ATOMIC_RELAXED);
}

/**
 * thread_learn_mac() - the guest's MAC changed: tell every thread
 * @c:		context that learnt it, @c->guest_mac set
 */
void thread_learn_mac(struct ctx *c)
{
	uint64_t v = 0;

	if (!c->threads)
		return;
	memcpy(&v, c->guest_mac, 6);
	__atomic_store_n(&c->threads->guest_mac, v, __ATOMIC_RELAXED);
}

/**
 * thread_guest_mac() - the guest's MAC, as any thread last learnt it
 * @c:		context
 * @mac:	filled, 6 bytes
 */
void thread_guest_mac(const struct ctx *c, uint8_t *mac)
{
	uint64_t v;

	if (!c->threads) {
		memcpy(mac, c->guest_mac, 6);
		return;
	}
	v = __atomic_load_n(&c->threads->guest_mac, __ATOMIC_RELAXED);
	memcpy(mac, &v, 6);
}

/**
 * accept_here() - open a forwarded connection to the guest on @c's thread
 * @c:		context
 * @fd:		accepted socket, TCP's or reset and closed here
 * @src:	client as the guest will see it
 * @sport:	client port
 * @dst:	guest address
 * @dport:	guest port
 */
static void accept_here(struct ctx *c, int fd, const struct in6_addr *src,
                        uint16_t sport, const struct in6_addr *dst,
                        uint16_t dport)
{
	c->queue = c->thread;
	if (tcp_accept_inbound(c, fd, src, sport, dst, dport) < 0)
		fwd_reset_close(fd);
}

/**
 * thread_accept() - open a connection accepted on a forward to the guest,
 *		     on the thread placement picks
 * @c:		main context
 * @fd:		accepted socket, owned from here on
 * @src:	client as the guest will see it
 * @sport:	client port
 * @dst:	guest address
 * @dport:	guest port
 */
void thread_accept(struct ctx *c, int fd, const struct in6_addr *src,
                   uint16_t sport, const struct in6_addr *dst, uint16_t dport)
{
	struct thread_set *set = c->threads;
	unsigned int to;
	struct msg *m;

	if (!set) {
		accept_here(c, fd, src, sport, dst, dport);
		return;
	}
	to = pick_thread(set);
	if (to != c->thread) {
		m = msg_new(MSG_ACCEPT, 0);
		if (m) {
			m->fd = fd;
			m->src = *src;
			m->dst = *dst;
			m->sport = sport;
			m->dport = dport;
		}
		if (m && !post(&set->t[to], m))
			return;
		/* Its inbox is full: here, rather than reset the client
		 * (and pick that thread again, as the least busy).
		 */
		load_move(set, to, c->thread);
	}
	placing_begin(c);
	accept_here(c, fd, src, sport, dst, dport);
	placing_end(c);
}

/**
 * thread_fail() - the datapath of @c can't go on: end tapir
 * @c:		context
 */
void thread_fail(struct ctx *c)
{
	struct thread *t;

	if (!c->threads || !c->thread) {
		lifecycle_fail(c);
		return;
	}
	t = &c->threads->t[c->thread];
	if (t->fail) {
		post(&c->threads->t[0], t->fail);
		t->fail = NULL;
	}
}

/**
 * stats_add() - add every counter of @s to @sum
 * @sum:	total
 * @s:		one thread's counters
 */
static void stats_add(struct stats *sum, const struct stats *s)
{
	sum->tap_rx_frames += s->tap_rx_frames;
	sum->tap_rx_bytes += s->tap_rx_bytes;
	sum->tap_tx_frames += s->tap_tx_frames;
	sum->tap_tx_bytes += s->tap_tx_bytes;
	for (int p = 0; p < PROTO_COUNT; p++) {
		sum->to_host[p].packets += s->to_host[p].packets;
		sum->to_host[p].bytes += s->to_host[p].bytes;
		sum->to_guest[p].packets += s->to_guest[p].packets;
		sum->to_guest[p].bytes += s->to_guest[p].bytes;
		sum->flows[p] += s->flows[p];
	}
	for (int r = 0; r < DROP_REASONS; r++)
		sum->drops[r] += s->drops[r];
	for (int q = 0; q < TAPIR_MAX_QUEUES; q++) {
		sum->queues[q].rx_frames += s->queues[q].rx_frames;
		sum->queues[q].rx_bytes += s->queues[q].rx_bytes;
		sum->queues[q].tx_frames += s->queues[q].tx_frames;
		sum->queues[q].tx_bytes += s->queues[q].tx_bytes;
	}
}

/**
 * ask_stats() - ask a thread for a copy of its counters
 * @t:		worker
 *
 * Return: @t->snap_gen before the request; unchanged if none could be
 *	   asked, or one is still queued
 */
static uint64_t ask_stats(struct thread *t)
{
	struct msg *m = msg_new(MSG_STATS, 0);
	uint64_t gen;
	bool asked;

	pthread_mutex_lock(&t->lock);
	gen = t->snap_gen;
	asked = t->stats_asked;
	t->stats_asked = t->stats_asked || m;
	pthread_mutex_unlock(&t->lock);
	if (m && !asked)
		post(t, m);
	else
		free(m);
	return gen;
}

/**
 * wait_stats() - wait until thread @t copied its counters after @gen, then
 *		  add them
 * @t:		worker
 * @gen:	what ask_stats() returned
 * @until:	CLOCK_MONOTONIC deadline shared by every thread's wait
 * @sum:	total to add to
 *
 * A thread busy with a batch answers within it; one that doesn't leaves
 * its previous copy in the sum.
 */
static void wait_stats(struct thread *t, uint64_t gen,
                       const struct timespec *until, struct stats *sum)
{
	pthread_mutex_lock(&t->lock);
	while (t->snap_gen == gen &&
	       !pthread_cond_timedwait(&t->cond, &t->lock, until))
		;
	stats_add(sum, &t->snap);
	pthread_mutex_unlock(&t->lock);
}

/**
 * threads_stats() - the counters of every thread, added up
 * @c:		main context
 * @sum:	filled
 *
 * Each thread writes only its own counters; the others' are read from the
 * copy each makes when asked, so no counter is read while written. All are
 * asked first, then waited for until one deadline.
 */
void threads_stats(struct ctx *c, struct stats *sum)
{
	uint64_t gen[TAPIR_MAX_QUEUES] = {0};
	struct timespec until;

	*sum = c->stats;
	if (!c->threads)
		return;
	for (unsigned int i = 1; i < c->threads->n; i++)
		gen[i] = ask_stats(&c->threads->t[i]);
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += STATS_WAIT_MS * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	for (unsigned int i = 1; i < c->threads->n; i++)
		wait_stats(&c->threads->t[i], gen[i], &until, sum);
}

/**
 * handle_frame() - run a frame another thread passed through eth_input()
 * @c:		context
 * @m:		MSG_FRAME
 */
static void handle_frame(struct ctx *c, struct msg *m)
{
	struct frame f;

	/* A SYN placed here by its reader: in this thread's load already. */
	if (m->hops > c->threads->n)
		placing_begin(c);
	if (m->len >= c->vnet_len + ETH_HLEN_) {
		f.vh = c->vnet_len ? (void *)m->data : NULL;
		f.data = m->data + c->vnet_len;
		f.len = m->len - c->vnet_len;
		c->rx = &f;
		c->rx_hops = m->hops;
		c->queue = c->thread;
		eth_input(c, &f);
		c->rx = NULL;
		c->rx_hops = 0;
	}
	/* Whether placed by the reader or by thread_place_syn() here, as it
	 * came back round the ring: if no connection opened, the count goes.
	 */
	placing_end(c);
}

/**
 * handle() - act on one message
 * @c:		receiving context
 * @t:		its thread
 * @m:		message, freed here
 */
static void handle(struct ctx *c, struct thread *t, struct msg *m)
{
	switch (m->type) {
	case MSG_FRAME:
		handle_frame(c, m);
		break;
	case MSG_ACCEPT:
		placing_begin(c);
		accept_here(c, m->fd, &m->src, m->sport, &m->dst, m->dport);
		placing_end(c);
		break;
	case MSG_STATS:
		pthread_mutex_lock(&t->lock);
		t->snap = c->stats;
		t->snap_gen++;
		t->stats_asked = false;
		pthread_cond_broadcast(&t->cond);
		pthread_mutex_unlock(&t->lock);
		break;
	case MSG_FAIL:
		lifecycle_fail(c);
		break;
	case MSG_STOP:
		event_base_loopbreak(c->base);
		break;
	}
	free(m);
}

/**
 * inbox_cb() - drain the inbox
 * @fd:		eventfd
 * @what:	unused
 * @arg:	struct thread
 *
 * The list is taken whole under the lock and handled without it, so that
 * a sender never waits for a batch of frames.
 */
static void inbox_cb(evutil_socket_t fd, short what, void *arg)
{
	struct thread *t = arg;
	struct msg *m, *next;
	uint64_t v;

	(void)what;
	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		debug_msg("read datapath thread wakeup: %s", strerror(errno));
	pthread_mutex_lock(&t->lock);
	m = t->head;
	t->head = NULL;
	t->tail = &t->head;
	t->bytes = 0;
	pthread_mutex_unlock(&t->lock);
	for (; m; m = next) {
		next = m->next;
		handle(t->c, t, m);
	}
	tcp_flush(t->c);
}

/**
 * inbox_init() - the lock, list, eventfd and stop and fail messages of a
 *		  thread, watched in its loop
 * @t:		thread, its @c set up with a base
 *
 * Return: 0 on success, -1 after printing one error line
 */
static int inbox_init(struct thread *t)
{
	pthread_condattr_t ca;

	t->efd = -1;
	t->tail = &t->head;
	if (pthread_mutex_init(&t->lock, NULL) || pthread_condattr_init(&ca) ||
	    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) ||
	    pthread_cond_init(&t->cond, &ca)) {
		err_msg("datapath thread: initialise a lock failed");
		return -1;
	}
	pthread_condattr_destroy(&ca);
	t->stop = msg_new(MSG_STOP, 0);
	t->fail = msg_new(MSG_FAIL, 0);
	if (!t->stop || !t->fail) {
		err_errno(ENOMEM, "datapath thread: allocate");
		return -1;
	}
	t->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (t->efd < 0) {
		err_errno(errno, "datapath thread: eventfd");
		return -1;
	}
	t->ev = event_new(t->c->base, t->efd, EV_READ | EV_PERSIST, inbox_cb,
	                  t);
	if (!t->ev || event_add(t->ev, NULL)) {
		err_msg("datapath thread: watch the inbox: libevent failed");
		return -1;
	}
	return 0;
}

/**
 * worker_ctx() - a context for the thread of queue @q, sharing the main
 *		  one's options and addresses
 * @c:		main context
 * @q:		queue, 1 or more
 *
 * The queue's fd moves from the main context to the new one.
 *
 * Return: the context, or NULL after printing one error line
 */
static struct ctx *worker_ctx(struct ctx *c, unsigned int q)
{
	struct ctx *w = calloc(1, sizeof(*w));

	if (!w) {
		err_errno(errno, "datapath thread %u: allocate", q);
		return NULL;
	}
	w->o = c->o;
	w->tap = c->tap;
	w->vnet_len = c->vnet_len;
	w->target_pidfd = -1;
	w->spare_fd = -1;
	for (int i = 0; i < TAPIR_MAX_QUEUES; i++)
		w->tapfd[i] = -1;
	w->tapfd[q] = c->tapfd[q];
	c->tapfd[q] = -1;
	ctx_set_addresses(w);
	memcpy(w->guest_mac, c->guest_mac, 6);
	/* Threads that counted IPv4 ids from the same start would reuse
	 * them for the same addresses at once: fragments could mix.
	 */
	w->ip4_id = (uint16_t)seed_u64();
	w->tcp_conns = c->tcp_conns;
	w->frag_slots = c->frag_slots;
	w->resolv_conf = c->resolv_conf;
	w->threads = c->threads;
	w->thread = q;
	w->queue = q;
	w->run_child = c->run_child;
	w->base = event_base_new();
	if (!w->base)
		err_msg("datapath thread %u: create event loop: libevent "
		        "failed",
		        q);
	return w;
}

/**
 * thread_modules_init() - set up the datapath modules every thread's
 *			   context has: flows, TCP, UDP, ping, reassembly
 * @c:		context with its event base
 *
 * The main thread's context has these too (loop_prepare()), and more.
 *
 * Return: 0 on success, -1 after printing one error line
 */
int thread_modules_init(struct ctx *c)
{
	if (flow_init(c) || tcp_init(c) || udp_init(c) || ping_init(c) ||
	    frag_init(c))
		return -1;
	return 0;
}

/**
 * thread_modules_cleanup() - release what thread_modules_init() set up,
 *			      and DHCP leases a context may have made
 * @c:		context, set up fully or partly
 */
void thread_modules_cleanup(struct ctx *c)
{
	dhcp_cleanup(c);
	frag_cleanup(c);
	ping_cleanup(c);
	udp_cleanup(c);
	tcp_cleanup(c);
	flow_cleanup(c);
}

/**
 * worker_cleanup() - release a worker's context, its thread stopped
 * @w:		context, built fully or partly
 */
static void worker_cleanup(struct ctx *w)
{
	thread_modules_cleanup(w);
	tapio_stop(w);
	if (w->base)
		event_base_free(w->base);
	free(w);
}

/**
 * worker_init() - set up the modules of a worker's context
 * @w:		context from worker_ctx()
 *
 * Return: 0 on success, -1 after printing one error line
 */
static int worker_init(struct ctx *w)
{
	if (!w->base)
		return -1;
	return thread_modules_init(w) || tapio_start(w) ? -1 : 0;
}

/**
 * threads_prepare() - a context per tap queue, before isolation
 * @c:		main context: tap attached, modules set up, not reading yet
 *
 * One thread serves every queue when there is one queue, or when frames
 * are captured (--pcap writes them in the order they happen).
 *
 * Return: 0 on success, -1 after printing one error line
 */
int threads_prepare(struct ctx *c)
{
	struct thread_set *set;

	if (c->tap.queues < 2 || c->o->pcap[0])
		return 0;
	set = calloc(1, sizeof(*set));
	if (!set) {
		err_errno(errno, "datapath threads: allocate");
		return -1;
	}
	set->n = c->tap.queues;
	set->seed = seed_u64();
	if (pthread_mutex_init(&set->place_lock, NULL)) {
		free(set);
		err_msg("datapath threads: initialise a lock failed");
		return -1;
	}
	c->threads = set;
	c->thread = 0;
	c->queue = 0;
	thread_learn_mac(c);
	for (unsigned int i = 0; i < set->n; i++) {
		struct thread *t = &set->t[i];

		t->set = set;
		t->efd = -1;
		t->c = i ? worker_ctx(c, i) : c;
		if (!t->c || (i && worker_init(t->c)) || inbox_init(t))
			return -1;
	}
	return 0;
}

/**
 * thread_ctx() - the context of datapath thread @i
 * @c:		any context of the set
 * @i:		thread index
 *
 * For the unit tests, which run the threads' loops one at a time, in an
 * order they choose, instead of starting the threads.
 *
 * Return: the context, or NULL without threads or past the last one
 */
struct ctx *thread_ctx(const struct ctx *c, unsigned int i)
{
	if (!c->threads || i >= c->threads->n)
		return NULL;
	return c->threads->t[i].c;
}

/**
 * worker_main() - body of a datapath thread: its loop, until MSG_STOP
 * @arg:	struct thread
 *
 * Return: NULL
 */
static void *worker_main(void *arg)
{
	struct thread *t = arg;
	char name[16];

	/* For top -H, ps -L and /proc/PID/task/TID/comm. */
	snprintf(name, sizeof(name), "tapir-q%u", t->c->thread);
	if (prctl(PR_SET_NAME, name))
		debug_msg("name datapath thread %u: %s", t->c->thread,
		          strerror(errno));

	if (event_base_dispatch(t->c->base) < 0) {
		err_msg("datapath thread %u: event loop failed", t->c->thread);
		thread_fail(t->c);
	}
	return NULL;
}

/**
 * threads_start() - start the threads of queues 1 and up
 * @c:		main context, isolated
 *
 * Started after isolation, as unsharing a user namespace needs a process
 * of one thread; they inherit the seccomp filter. Signals stay with the
 * main thread, whose loop handles them.
 *
 * Return: 0 on success, -1 after printing one error line
 */
int threads_start(struct ctx *c)
{
	sigset_t all, old;
	int ret = 0;

	if (!c->threads)
		return 0;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (unsigned int i = 1; i < c->threads->n && !ret; i++) {
		struct thread *t = &c->threads->t[i];

		ret = pthread_create(&t->tid, NULL, worker_main, t);
		if (ret)
			err_errno(ret, "start datapath thread %u", i);
		else
			t->started = true;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret ? -1 : 0;
}

/**
 * inbox_cleanup() - free what is left in an inbox, and its eventfd
 * @t:		thread, stopped
 */
static void inbox_cleanup(struct thread *t)
{
	struct msg *m, *next;

	for (m = t->head; m; m = next) {
		next = m->next;
		if (m->fd >= 0)
			close(m->fd);
		free(m);
	}
	t->head = NULL;
	t->tail = &t->head;
	free(t->stop);
	free(t->fail);
	t->stop = t->fail = NULL;
	if (t->ev)
		event_free(t->ev);
	t->ev = NULL;
	if (t->efd >= 0)
		close(t->efd);
	t->efd = -1;
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->cond);
}

/**
 * threads_stop() - stop and join every thread, free their contexts
 * @c:		main context, its loop ended (or never started)
 *
 * The main context's counters get the workers' added, for the summary
 * --debug prints at exit.
 */
void threads_stop(struct ctx *c)
{
	struct thread_set *set = c->threads;

	if (!set)
		return;
	for (unsigned int i = 1; i < set->n; i++) {
		struct thread *t = &set->t[i];

		if (!t->started)
			continue;
		post(t, t->stop);
		t->stop = NULL;
		pthread_join(t->tid, NULL);
		t->started = false;
	}
	for (unsigned int i = 0; i < set->n; i++) {
		struct thread *t = &set->t[i];

		if (!t->set)
			continue;
		if (t->c)
			inbox_cleanup(t);
		if (i && t->c) {
			stats_add(&c->stats, &t->c->stats);
			worker_cleanup(t->c);
		}
	}
	pthread_mutex_destroy(&set->place_lock);
	free(set);
	c->threads = NULL;
}
