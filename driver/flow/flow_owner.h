/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - which datapath thread owns each flow the guest sees
 */
#ifndef TAPIR_FLOW_OWNER_H
#define TAPIR_FLOW_OWNER_H

#include <stdbool.h>
#include <stdint.h>

struct ctx;
struct flow_key;
struct flow_owners;

/**
 * enum owner_take - what flow_owner_take() found
 * @OWNER_TAKEN:	no thread had the key: it is @to's now
 * @OWNER_HELD:		a thread has it already (*holder says which)
 * @OWNER_BUSY:		a placement: FLOW_OWNER_PLACED_MAX connections wait
 *			for @to already
 * @OWNER_FULL:		no room for another key
 */
enum owner_take {
	OWNER_TAKEN,
	OWNER_HELD,
	OWNER_BUSY,
	OWNER_FULL,
};

/* Connections placed on one thread and not opened there yet, at most. */
#define FLOW_OWNER_PLACED_MAX 1024

struct flow_owners *flow_owners_new(uint32_t cap);
void flow_owners_free(struct flow_owners *o);
enum owner_take flow_owner_take(struct flow_owners *o, const struct flow_key *k,
                                unsigned int to, bool placed,
                                unsigned int *holder);
int flow_owner_find(struct flow_owners *o, const struct flow_key *k);
void flow_owner_release(struct flow_owners *o, const struct flow_key *k,
                        unsigned int owner);
void flow_owner_unplace(struct flow_owners *o, const struct flow_key *k,
                        unsigned int owner);
int flow_owner_claim(struct ctx *c, const struct flow_key *k);
bool flow_owner_elsewhere(const struct ctx *c, const struct flow_key *k);
void flow_owner_drop(const struct ctx *c, const struct flow_key *k);

#endif /* TAPIR_FLOW_OWNER_H */
