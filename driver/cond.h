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

#include "cond_spec.h"
#include "ctx.h"

/* Set while any rule is in force: the datapath's one check when off. */
extern bool cond_on;

/**
 * cond_active() - whether frames go through cond_frame() at all
 *
 * Return: true while a rule is in force
 */
static inline bool cond_active(void)
{
	return __atomic_load_n(&cond_on, __ATOMIC_RELAXED);
}

void cond_install(const struct cond_set *s);
void cond_current(struct cond_set *s);
int cond_init(struct ctx *c);
void cond_cleanup(struct ctx *c);
void cond_run(struct ctx *c);
unsigned int cond_rto_extra_ms(void);
uint32_t cond_flight_max(struct ctx *c, unsigned int dir,
                         const struct in6_addr *host, uint16_t hport,
                         uint16_t gport, uint32_t *burst);
bool cond_frame(struct ctx *c, unsigned int dir, const struct iovec *iov,
                int iovcnt);

#endif /* TAPIR_COND_H */
