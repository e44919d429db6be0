// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - datapath threads: one context per tap queue, started and stopped
 *
 * With --queues N (N > 1) each tap queue gets a thread with its own
 * context: event base, flow table, buffers, timers and counters. Thread 0
 * is the main thread, which also keeps the API, the forwards' listeners
 * and the lifecycle. What the threads share, each in its own file:
 * - which thread owns each flow (flow_owner.c);
 * - their inboxes, the only way they talk (thread_inbox.c);
 * - frames handed to the thread that must see them (thread_handoff.c);
 * - where new TCP connections go (thread_place.c);
 * - the counters get_stats adds up (thread_stats.c);
 * - the guest's MAC, which any thread may learn (here).
 */

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <event2/event.h>

#include "driver/cond/cond.h"
#include "driver/stack/dhcp.h"
#include "driver/stack/eth.h"
#include "driver/flow/flow.h"
#include "driver/flow/flow_owner.h"
#include "driver/stack/frag.h"
#include "driver/host/lifecycle.h"
#include "driver/core/log.h"
#include "driver/udp/ping.h"
#include "driver/core/seed.h"
#include "driver/thread/tap_read.h"
#include "driver/stack/tap_write.h"
#include "driver/tcp/tcp.h"
#include "driver/thread/thread_internal.h"
#include "driver/udp/udp.h"
#include "driver/udp/udp_flow.h"

/* Syscalls of starting, waking and stopping threads, once running, but
 * clone() and clone3(), which seccomp.c allows for threads only. glibc's
 * malloc asks sched_getaffinity() for the CPUs when it makes an arena for
 * a thread (the sandbox hides /sys and /proc/stat).
 */
const char *const thread_syscalls[] = {
        "set_robust_list",   "rseq",   "futex", "munmap", "exit", "madvise",
        "sched_getaffinity", "gettid", NULL,
};

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
		inbox_post(&c->threads->t[0], t->fail);
		t->fail = NULL;
	}
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
	w->guest_mac_shared = c->guest_mac_shared;
	w->owners = c->owners;
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

/* Where the delay line of each thread sends what it held (cond.h). */
const struct cond_out thread_cond_out = {
        .to_guest = tap_write_held,
        .from_guest = tap_input_held,
        .flush = tcp_flush,
};

/**
 * thread_modules_init() - set up the datapath modules every thread's
 *			   context has: flows, TCP, UDP, ping, reassembly,
 *			   network conditions
 * @c:		context with its event base
 *
 * The main thread's context has these too (loop_prepare()), and more.
 *
 * Return: 0 on success, -1 after printing one error line
 */
int thread_modules_init(struct ctx *c)
{
	if (flow_init(c) || tcp_init(c) || udp_init(c) || ping_init(c) ||
	    frag_init(c) || cond_init(c, &thread_cond_out))
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
	cond_cleanup(c);
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
 * owners_cap() - keys the owner table needs: every thread's TCP and UDP
 *		  flows, and connections on their way to a thread
 * @c:		main context, its thread count set
 *
 * Return: the count
 */
static uint32_t owners_cap(const struct ctx *c)
{
	unsigned int cap[FLOW_TYPES];
	uint64_t n;

	flow_caps(c, cap);
	n = (uint64_t)c->threads->n *
	    (cap[FLOW_TCP] + cap[FLOW_UDP] + FLOW_OWNER_PLACED_MAX);
	return n < UINT32_MAX / 2 ? (uint32_t)n : UINT32_MAX / 2;
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
	if (pthread_mutex_init(&set->place_lock, NULL)) {
		free(set);
		err_msg("datapath threads: initialise a lock failed");
		return -1;
	}
	c->threads = set;
	c->guest_mac_shared = &set->guest_mac;
	c->thread = 0;
	c->queue = 0;
	c->owners = flow_owners_new(owners_cap(c));
	if (!c->owners) {
		err_errno(errno, "datapath threads: flow owner table");
		return -1;
	}
	if (stats_rounds_init(c))
		return -1;
	eth_share_guest_mac(c);
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
 * thread_loop_ended() - a worker's loop ended: its counters are final, and
 *			 it answers no more requests for them
 * @c:		the worker's context, on its own thread
 *
 * Exported for the unit tests, which run the workers' loops themselves.
 */
void thread_loop_ended(struct ctx *c)
{
	struct thread *t = &c->threads->t[c->thread];

	pthread_mutex_lock(&t->lock);
	t->ended = true;
	pthread_mutex_unlock(&t->lock);
	/* Copied as if asked: a round waiting for it ends now. */
	stats_copy(t);
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
	thread_loop_ended(t->c);
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
		inbox_post(t, t->stop);
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
	stats_rounds_cleanup(c);
	flow_owners_free(c->owners);
	c->owners = NULL;
	pthread_mutex_destroy(&set->place_lock);
	free(set);
	c->threads = NULL;
	c->guest_mac_shared = NULL;
}
