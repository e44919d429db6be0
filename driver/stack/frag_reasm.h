/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - IP fragment internals: reassembly core (testable apart from
 * delivery) and IPv6 identifications
 */
#ifndef TAPIR_FRAG_REASM_H
#define TAPIR_FRAG_REASM_H

#include <stdbool.h>
#include <stdint.h>

#include "driver/core/ctx.h"

struct pkt;

/* Datagrams reassembled at once (at most; a context may ask for fewer),
 * and how long each may take.
 */
#define FRAG_SLOTS 16
#define FRAG_TIMEOUT_MS 2000

enum frag_verdict {
	FRAG_HELD,     /* kept, datagram incomplete (or an exact duplicate) */
	FRAG_COMPLETE, /* the datagram is whole: see @whole */
	FRAG_DROPPED,  /* fragment (and its datagram, if any) discarded */
};

struct frag_state *frag_state_new(unsigned int nslots);
void frag_state_free(struct frag_state *s);
enum frag_verdict frag4_reassemble(struct frag_state *s, const struct pkt *p,
                                   uint64_t now_ms, struct pkt *whole);
enum frag_verdict frag6_reassemble(struct frag_state *s, const struct pkt *p,
                                   uint64_t now_ms, struct pkt *whole);
uint32_t frag6_ident(struct ctx *c);

#endif /* TAPIR_FRAG_REASM_H */
