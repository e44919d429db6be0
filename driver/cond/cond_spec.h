/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - network conditions as written: --conditions strings and the
 * API's JSON rules, parsed into rules and printed back (docs/conditions.md)
 */
#ifndef TAPIR_COND_SPEC_H
#define TAPIR_COND_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <jansson.h>

/* Rules in force at once: each --conditions or API rule is one. */
#define COND_RULES_MAX 16
/* Bytes one thread may hold per direction for delay and rate. A rule
 * whose delay × rate could need more is refused when it is set.
 */
#define COND_HOLD_MAX (64U << 20)
/* Longest delay plus jitter. */
#define COND_DELAY_MAX_NS (60ULL * 1000000000ULL)
/* A rate's queue: frames that would wait longer than this, plus what two
 * of the largest frames and the burst take at the rate, are dropped, as a
 * bottleneck link's buffer drops them (counted as dropped_rate). TCP to
 * the guest never fills it (cond_tcp.c).
 */
#define COND_QUEUE_NS 100000000ULL
#define COND_QUEUE_FRAMES_BYTES (2U * 65536U)
/* A rate counts a frame as an Ethernet link does: at least 60 bytes,
 * plus 24 of preamble, gap and checksum.
 */
#define COND_WIRE_MIN 60U
#define COND_WIRE_GAP 24U
/* The most memory holding a frame costs per byte the rate counts: a
 * 69-byte frame and its 12-byte vnet header cost 144 (cond_held_cost())
 * for its 93 bytes on the wire, the worst of any size (test_cond.c checks
 * them all). What cond_check_memory() charges a rate per byte.
 */
#define COND_HOLD_PER_WIRE (144.0 / 93.0)

/* Directions a rule applies to (a bit mask). */
#define COND_TO_GUEST 1U
#define COND_TO_HOST 2U
#define COND_BOTH (COND_TO_GUEST | COND_TO_HOST)

enum cond_dist {
	COND_UNIFORM,
	COND_NORMAL,
};

/**
 * struct cond_match - which frames a rule applies to; zero matches all
 * @proto:	IPPROTO_TCP, IPPROTO_UDP or IPPROTO_ICMP (also ICMPv6), or 0
 * @port:	either port of a TCP or UDP frame, or 0
 * @has_host:	@host is set
 * @host:	the host-side address as the guest sees it (IPv4 mapped)
 */
struct cond_match {
	uint8_t proto;
	uint16_t port;
	bool has_host;
	struct in6_addr host;
};

/**
 * struct cond_rule - one rule: what it matches and what it does
 * @dir:	COND_TO_GUEST, COND_TO_HOST or both
 * @m:		the frames it applies to
 * @delay_ns:	added delay
 * @jitter_ns:	spread of the delay: ± for uniform, σ for normal
 * @dist:	distribution of the jitter
 * @loss:	probability of a drop, 0..1
 * @loss_corr:	probability that a drop follows a drop (bursts), 0..1, or 0
 *		for independent drops
 * @duplicate:	probability of a second copy
 * @reorder:	probability that a frame skips the delay
 * @rate_bps:	bits per second, or 0 for no limit
 * @burst:	bytes that may pass at once above @rate_bps
 * @down:	nothing passes
 */
struct cond_rule {
	unsigned int dir;
	struct cond_match m;
	uint64_t delay_ns;
	uint64_t jitter_ns;
	enum cond_dist dist;
	double loss;
	double loss_corr;
	double duplicate;
	double reorder;
	uint64_t rate_bps;
	uint64_t burst;
	bool down;
};

/**
 * struct cond_set - the rules in force, first match wins
 * @n:		rules
 * @seeded:	@seed was given: random choices repeat run to run
 * @seed:	that seed
 * @r:		the rules
 */
struct cond_set {
	unsigned int n;
	bool seeded;
	uint64_t seed;
	struct cond_rule r[COND_RULES_MAX];
};

int cond_parse_add(struct cond_set *s, const char *spec, char *why,
                   size_t whylen);
int cond_json_set(struct cond_set *s, const json_t *rules, char *why,
                  size_t whylen);
int cond_check_memory(const struct cond_set *s, char *why, size_t whylen);
json_t *cond_set_json(const struct cond_set *s);

#endif /* TAPIR_COND_SPEC_H */
