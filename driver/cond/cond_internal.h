/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - network conditions: what cond.c, cond_line.c and cond_tcp.c
 * share (those files only)
 */
#ifndef TAPIR_COND_INTERNAL_H
#define TAPIR_COND_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "driver/cond/cond.h"

/* Old FIFOs a thread keeps draining after the rules changed, per
 * direction; past that, they merge (cond_line.c).
 */
#define COND_DRAINS_MAX 32

/**
 * struct held - a frame that waits for its time
 * @next:	next in its FIFO
 * @at:		when it goes, clock.c's nanoseconds
 * @gen:	generation of the rules it was held under, for partitions
 *		set since (cond_cut())
 * @q:		tap queue it came from or goes to
 * @len:	bytes at @data: the vnet header, then the frame
 * @data:	the bytes
 */
struct held {
	struct held *next;
	uint64_t at;
	unsigned int gen;
	unsigned int q;
	size_t len;
	uint8_t data[];
};

/**
 * struct fifo - held frames, @at never falling
 * @head:	first, or NULL
 * @tail:	where the next goes
 * @last:	@at of the last one added
 */
struct fifo {
	struct held *head;
	struct held **tail;
	uint64_t last;
};

/**
 * struct drain - a FIFO of rules no longer in force, still delivering
 * @f:		its frames
 * @next:	next drain of the direction
 */
struct drain {
	struct fifo f;
	struct drain *next;
};

/**
 * struct cond_shared - what the threads share under one set of rules
 * @refs:	references: the rules in force hold one, each thread whose
 *		copy is of these rules one (atomic)
 * @seed:	the rules' seed, or a random one
 * @tat:	per rule and direction, the rate's theoretical arrival time
 *		(GCRA; atomic): a rate is the rule's, not a thread's
 * @nth:	per rule and direction, frames that matched so far (atomic):
 *		a frame's random choices derive from the seed and its
 *		number, so that a seeded run repeats whichever thread a
 *		flow lands on
 * @users:	per rule, the TCP connections that share its rate to the
 *		guest, counted in windows of a few round trips (cond_tcp.c;
 *		atomic): the window's number above, its count below 32 bits
 * @users_prev:	per rule, the count of the window before (atomic)
 */
struct cond_shared {
	unsigned int refs;
	uint64_t seed;
	uint64_t tat[COND_RULES_MAX][2];
	uint64_t nth[COND_RULES_MAX][2];
	uint64_t users[COND_RULES_MAX];
	uint32_t users_prev[COND_RULES_MAX];
};

/**
 * struct cond_state - one thread's conditions
 * @gen:	generation its copy of the rules is from
 * @set:	that copy
 * @sh:		what the threads share under @set, a reference held
 * @delivering:	cond_run() is delivering held frames: @set and the FIFOs
 *		stay as they are until it is done
 * @rng:	xorshift state of the random choices of the frame at hand
 * @burst:	per rule and direction, the last frame was lost (loss-corr)
 * @fifo:	held frames per direction and rule of @set
 * @drains:	per direction, FIFOs of earlier rules, until they are empty
 * @ndrains:	per direction, entries in @drains
 * @held:	bytes held per direction, as charged (cond_held_cost())
 * @tfd:	its one timer, a timerfd on CLOCK_MONOTONIC (clock.c's)
 * @ev:		read event on @tfd
 * @retry:	a libevent timer that stands in when arming @tfd failed
 * @armed:	deadline @tfd is armed for, or 0
 * @running:	cond_run() runs: what is held meanwhile waits in @due
 * @due:	while cond_run() runs, the earliest deadline of frames held
 *		meanwhile, or 0; it arms @tfd once at its end
 * @arms:	times @tfd was set: what tests count
 */
struct cond_state {
	unsigned int gen;
	struct cond_set set;
	struct cond_shared *sh;
	bool delivering;
	uint64_t rng;
	bool burst[COND_RULES_MAX][2];
	struct fifo fifo[2][COND_RULES_MAX];
	struct drain *drains[2];
	unsigned int ndrains[2];
	size_t held[2];
	int tfd;
	struct event *ev;
	struct event *retry;
	uint64_t armed;
	bool running;
	uint64_t due;
	uint64_t arms;
	const struct cond_out *out;
};

/* cond.c */
/**
 * struct hdrs - what rules match on, from a frame's headers, and what a
 *		 rate counts
 * @proto:	IP protocol, ICMPv6 counted as ICMP, or 0 if not IP
 * @sport:	TCP or UDP source port, else 0
 * @dport:	destination port, else 0
 * @src:	IP source (IPv4 mapped)
 * @dst:	IP destination
 * @hlen:	bytes of Ethernet, IP and TCP or UDP headers, 0 if unknown
 * @gso_size:	payload bytes per segment of a GSO frame, else 0
 */
struct hdrs {
	uint8_t proto;
	uint16_t sport;
	uint16_t dport;
	struct in6_addr src;
	struct in6_addr dst;
	size_t hlen;
	uint16_t gso_size;
};

bool cond_reload(struct cond_state *st, int from[COND_RULES_MAX]);
void cond_frame_hdrs(const struct iovec *iov, int iovcnt, size_t vnet_len,
                     struct hdrs *h);
int cond_first_match(const struct cond_state *st, unsigned int dir,
                     const struct hdrs *h);
void cond_same_rules(const struct cond_set *old, const struct cond_set *s,
                     int *from);
int cond_find_rule(const struct cond_state *st, unsigned int dir,
                   const struct iovec *iov, int iovcnt, size_t vnet_len);
int cond_tcp_rule(const struct cond_state *st, unsigned int dir,
                  const struct in6_addr *host, uint16_t hport, uint16_t gport);
uint64_t cond_queue_ns(const struct cond_rule *r);
uint64_t cond_wire_bytes(size_t len, size_t hlen, uint16_t gso_size);
bool cond_cut(unsigned int gen, unsigned int dir, const struct iovec *iov,
              int iovcnt, size_t vnet_len);
uint64_t cond_backlog_ns(const struct cond_state *st, unsigned int i,
                         unsigned int d, uint64_t now);

/* cond_line.c */
size_t cond_held_cost(size_t len);
int cond_hold(struct ctx *c, struct cond_state *st, unsigned int d,
              unsigned int i, uint64_t at, const struct iovec *iov, int iovcnt);
void cond_retire(struct cond_state *st, const int *from);
void cond_line_reload(struct cond_state *st);
void cond_shared_put(struct cond_shared *sh);
int cond_line_init(struct ctx *c, struct cond_state *st);
void cond_line_cleanup(struct cond_state *st);

#endif /* TAPIR_COND_INTERNAL_H */
