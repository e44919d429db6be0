/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - network conditions on the tap: delay, jitter, loss, rate,
 * duplicates, reordering and partitions, per thread, one timer each
 */
#ifndef TAPIR_COND_H
#define TAPIR_COND_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/uio.h>

#include "driver/cond/cond_spec.h"
#include "driver/core/ctx.h"

/* Built with the conditions, unless `make nocond` (-DTAPIR_NO_CONDITIONS)
 * leaves them out, to measure what having them costs when none is set.
 */
#ifdef TAPIR_NO_CONDITIONS
#define COND_BUILT false
#else
#define COND_BUILT true
#endif

/* Set while any rule is in force: the datapath's one check when off. */
extern bool cond_on;

/**
 * cond_active() - whether frames go through cond_frame() at all
 *
 * Return: true while a rule is in force
 */
static inline bool cond_active(void)
{
	return COND_BUILT && __atomic_load_n(&cond_on, __ATOMIC_RELAXED);
}

/**
 * struct cond_out - where the delay line sends what it held: the layers
 *		     above hand these in, so that conditions, between the
 *		     tap and the stack, know neither
 * @to_guest:	write a held frame (its vnet header first) to the tap
 * @from_guest:	hand a held frame the guest sent to the stack
 * @flush:	frames from the guest were handed on: send what they owed
 *		(TCP's ACKs), once for the batch
 */
struct cond_out {
	void (*to_guest)(struct ctx *c, uint8_t *buf, size_t len);
	void (*from_guest)(struct ctx *c, uint8_t *buf, size_t len);
	void (*flush)(struct ctx *c);
};

int cond_install(const struct cond_set *s);
void cond_current(struct cond_set *s);
int cond_init(struct ctx *c, const struct cond_out *out);
void cond_cleanup(struct ctx *c);
void cond_run(struct ctx *c);

/**
 * struct cond_tcp - what the rules in force mean for one TCP connection
 *		     (cond_tcp.c)
 * @flight_max:	most bytes in flight to the guest, or UINT32_MAX
 * @burst:	most bytes to send to the guest at once, or UINT32_MAX
 * @wnd_max:	largest window to offer the guest, or UINT32_MAX
 * @rto_extra_ms: what the rules add to a round trip, for the timers
 * @cut:	the directions a partition cuts (COND_TO_GUEST, COND_TO_HOST)
 * @any:	a rule applies to its frames, one way or both
 */
struct cond_tcp {
	uint32_t flight_max;
	uint32_t burst;
	uint32_t wnd_max;
	uint32_t rto_extra_ms;
	unsigned int cut;
	bool any;
};

/**
 * struct cond_flow - what cond_tcp() weighs of a connection's own state
 * @inflight:	bytes it has in flight to the guest
 * @mark:	the window it last counted itself in as a user of a rate
 *		(cond_tcp.c keeps it; 0 at first)
 */
struct cond_flow {
	uint32_t inflight;
	uint32_t mark;
};

void cond_tcp(struct ctx *c, const struct in6_addr *host, uint16_t hport,
              uint16_t gport, struct cond_flow *f, struct cond_tcp *t);
bool cond_frame(struct ctx *c, unsigned int dir, const struct iovec *iov,
                int iovcnt);

/* Its system calls once running, for the seccomp filter (syscalls.c). */
extern const char *const cond_syscalls[];

#endif /* TAPIR_COND_H */
