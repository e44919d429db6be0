/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - datapath threads: what their files share (thread*.c only)
 */
#ifndef TAPIR_THREAD_INTERNAL_H
#define TAPIR_THREAD_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "driver/core/ctx.h"
#include "driver/flow/flow.h"
#include "driver/core/stats.h"
#include "driver/thread/thread.h"

struct event;

/**
 * enum msg_type - what a message in an inbox asks for
 * @MSG_FRAME:		handle a frame another thread read (thread_handoff.c)
 * @MSG_ACCEPT:		open a connection accepted on a forward
 *			(thread_place.c)
 * @MSG_STATS:		copy the counters for get_stats (thread_stats.c)
 * @MSG_STATS_DONE:	(to the main thread) a worker copied them
 * @MSG_FAIL:		(to the main thread) end tapir: the datapath can't
 *			go on
 * @MSG_STOP:		end the thread's loop
 */
enum msg_type {
	MSG_FRAME,
	MSG_ACCEPT,
	MSG_STATS,
	MSG_STATS_DONE,
	MSG_FAIL,
	MSG_STOP,
};

/**
 * struct msg - one inbox entry
 * @next:	next in the inbox
 * @type:	enum msg_type
 * @handoff:	MSG_FRAME: how it comes
 * @from:	MSG_STATS_DONE: the worker that sends it
 * @fd:		MSG_ACCEPT: the accepted socket, owned by the message
 * @key:	MSG_ACCEPT, and MSG_FRAME placed: the new connection's key,
 *		guest side, which the owner table holds for the receiver
 * @len:	MSG_FRAME: bytes of @data: vnet header, then the frame
 * @data:	MSG_FRAME: the bytes
 */
struct msg {
	struct msg *next;
	enum msg_type type;
	enum handoff handoff;
	unsigned int from;
	int fd;
	struct flow_key key;
	size_t len;
	uint8_t data[];
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
 * @lock:	protects @head, @tail, @bytes, @stats_asked, @ended, @snap
 *		and @snap_gen
 * @head:	first message, or NULL
 * @tail:	where the next message goes
 * @bytes:	bytes of the frame and accept messages queued
 * @stats_asked: a MSG_STATS waits for it: get_stats doesn't queue another
 * @ended:	its loop ended: it copies no more counters, @snap is its last
 * @snap:	copy of its counters, for get_stats
 * @snap_gen:	copies made so far
 * @load:	TCP connections it owns or was given and hasn't opened yet,
 *		what placement compares (atomic)
 * @counted:	its TCP connections as last added to @load (its own)
 * @placing:	what it handles now was added to @load when placed: the
 *		first connection it opens is that one (its own)
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
	struct msg *head;
	struct msg **tail;
	size_t bytes;
	bool stats_asked;
	bool ended;
	struct stats snap;
	uint64_t snap_gen;
	unsigned int load;
	unsigned int counted;
	bool placing;
};

struct stats_rounds;

/**
 * struct thread_set - every datapath thread, and what they share
 * @n:		threads, one per tap queue
 * @place_lock:	makes each placement see the ones before it
 * @last_pick:	thread the last placement picked (under @place_lock)
 * @guest_mac:	the guest's MAC, learnt by any thread (atomic): each
 *		context's @guest_mac_shared (eth.c)
 * @rounds:	get_stats rounds (thread_stats.c), the main thread's
 * @t:		the threads, [0] the main one
 */
struct thread_set {
	unsigned int n;
	pthread_mutex_t place_lock;
	unsigned int last_pick;
	uint64_t guest_mac;
	struct stats_rounds *rounds;
	struct thread t[TAPIR_MAX_QUEUES];
};

/* thread_inbox.c */
struct msg *msg_new(enum msg_type type, size_t len);
int inbox_post(struct thread *t, struct msg *m);
int inbox_init(struct thread *t);
void inbox_cleanup(struct thread *t);

/* thread_handoff.c */
bool handoff_try(struct ctx *c, unsigned int to, enum handoff how,
                 const struct flow_key *k);
void handoff_frame(struct ctx *c, struct msg *m);

/* thread_place.c */
void place_begin(struct ctx *c);
void place_end(struct ctx *c, const struct flow_key *k);
void place_accepted(struct ctx *c, struct msg *m);
bool place_syn(struct ctx *c, const struct flow_key *k);

/* thread_stats.c */
int stats_rounds_init(struct ctx *c);
void stats_rounds_cleanup(struct ctx *c);
void stats_copy(struct thread *t);
void stats_copied(struct ctx *c, unsigned int from);
void stats_add(struct stats *sum, const struct stats *s);

#endif /* TAPIR_THREAD_INTERNAL_H */
