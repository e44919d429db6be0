// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - network conditions as written: --conditions strings and the
 * API's JSON rules, parsed into rules and printed back (docs/conditions.md)
 *
 * One syntax serves both: a rule is "key=value" pairs joined by commas,
 * and a JSON rule object has the same keys. Every error names the field
 * and what it takes; a set is built aside and only replaces the one in
 * force once all of it parsed, so a bad rule changes nothing.
 */

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "driver/core/parse.h"
#include "driver/cond/cond_spec.h"
#include "driver/core/inany.h"

/* Longest rule string, and longest value of one key. */
#define COND_SPEC_MAX 512
#define COND_VALUE_MAX 64

/**
 * struct unit - a suffix and what one of it is worth
 * @name:	suffix, matched without case
 * @scale:	its value in the base unit
 */
struct unit {
	const char *name;
	double scale;
};

static const struct unit time_units[] = {
        {"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {NULL, 0},
};

static const struct unit rate_units[] = {
        {"bit", 1},    {"kbit", 1e3}, {"mbit", 1e6},
        {"gbit", 1e9}, {"", 1},       {NULL, 0},
};

static const struct unit size_units[] = {
        {"", 1},        {"b", 1},        {"k", 1024}, {"kb", 1024},
        {"m", 1 << 20}, {"mb", 1 << 20}, {NULL, 0},
};

/**
 * parse_scaled() - a non-negative decimal number and one of @units
 * @val:	text
 * @units:	suffixes allowed
 * @out:	the number times its unit's scale
 *
 * Return: 0, or -1 if @val isn't such a number
 */
static int parse_scaled(const char *val, const struct unit *units, double *out)
{
	char *end;
	double v;

	/* Decimal only: strtod() would take hexadecimal, "0x3Cs". */
	if ((!isdigit((unsigned char)val[0]) && val[0] != '.') ||
	    strpbrk(val, "xX"))
		return -1;
	errno = 0;
	v = strtod(val, &end);
	if (errno || !isfinite(v) || end == val)
		return -1;
	for (const struct unit *u = units; u->name; u++) {
		if (!strcasecmp(end, u->name)) {
			*out = v * u->scale;
			return isfinite(*out) ? 0 : -1;
		}
	}
	/* Zero is zero in any unit. */
	if (!*end && v == 0) {
		*out = 0;
		return 0;
	}
	return -1;
}

/**
 * parse_percent() - "1%", "0.5%" or "1" (percent) as a probability
 * @val:	text
 * @p:		0..1
 *
 * Return: 0, or -1 if out of 0..100 or not a number
 */
static int parse_percent(const char *val, double *p)
{
	const struct unit pct[] = {{"%", 0.01}, {"", 0.01}, {NULL, 0}};
	double v;

	if (parse_scaled(val, pct, &v) || v > 1)
		return -1;
	*p = v;
	return 0;
}

/**
 * parse_bool() - a flag's value: none, 1/0, true/false, on/off
 * @val:	text, or NULL for a flag given without one
 * @out:	the value
 *
 * Return: 0, or -1
 */
static int parse_bool(const char *val, bool *out)
{
	if (!val || !strcmp(val, "1") || !strcasecmp(val, "true") ||
	    !strcasecmp(val, "on")) {
		*out = true;
		return 0;
	}
	if (!strcmp(val, "0") || !strcasecmp(val, "false") ||
	    !strcasecmp(val, "off")) {
		*out = false;
		return 0;
	}
	return -1;
}

/**
 * parse_host() - an IPv4 or IPv6 address, IPv4 kept mapped
 * @val:	text
 * @a:		the address
 *
 * Return: 0, or -1
 */
static int parse_host(const char *val, struct in6_addr *a)
{
	struct in_addr a4;

	if (inet_pton(AF_INET, val, &a4) == 1) {
		inany_from_v4(a, a4);
		return 0;
	}
	return inet_pton(AF_INET6, val, a) == 1 ? 0 : -1;
}

/**
 * struct build - a rule being parsed
 * @r:		the rule so far
 * @seen:	bit per key of keys[] given already
 * @seed_set:	a seed was given
 * @seed:	that seed
 */
struct build {
	struct cond_rule r;
	unsigned int seen;
	bool seed_set;
	uint64_t seed;
};

/* What a key takes, for its error message. */
enum key_id {
	K_DELAY,
	K_JITTER,
	K_DIST,
	K_LOSS,
	K_LOSS_CORR,
	K_DUPLICATE,
	K_REORDER,
	K_RATE,
	K_BURST,
	K_DOWN,
	K_DIR,
	K_PROTO,
	K_PORT,
	K_HOST,
	K_SEED,
	K_COUNT,
};

/**
 * struct key - a key of the syntax
 * @name:	as written
 * @takes:	what its value must be, for messages
 * @acts:	it is a condition, not a scope
 */
struct key {
	const char *name;
	const char *takes;
	bool acts;
};

static const struct key keys[K_COUNT] = {
        [K_DELAY] = {"delay", "a duration like 50ms, at most 60s", true},
        [K_JITTER] = {"jitter", "a duration like 5ms", true},
        [K_DIST] = {"dist", "uniform or normal", false},
        [K_LOSS] = {"loss", "a percentage like 1% (0..100)", true},
        [K_LOSS_CORR] = {"loss-corr", "a percentage (0..100)", false},
        [K_DUPLICATE] = {"duplicate", "a percentage (0..100)", true},
        [K_REORDER] = {"reorder", "a percentage (0..100)", true},
        [K_RATE] = {"rate", "a rate like 100mbit (1kbit..100gbit)", true},
        [K_BURST] = {"burst", "a size like 64k, at most 64m", false},
        [K_DOWN] = {"down", "nothing, 1/0, true/false or on/off", true},
        [K_DIR] = {"dir", "to_guest, to_host or both", false},
        [K_PROTO] = {"proto", "tcp, udp or icmp", false},
        [K_PORT] = {"port", "a port 1..65535", false},
        [K_HOST] = {"host", "an IPv4 or IPv6 address", false},
        [K_SEED] = {"seed", "an unsigned integer", false},
};

/**
 * key_of() - the key named @name
 * @name:	key as written
 *
 * Return: its id, or K_COUNT if there is none
 */
static enum key_id key_of(const char *name)
{
	for (int k = 0; k < K_COUNT; k++)
		if (!strcmp(name, keys[k].name))
			return k;
	return K_COUNT;
}

/**
 * set_duration() - store a duration in nanoseconds
 * @val:	text
 * @ns:		the duration
 *
 * Return: 0, or -1 if it isn't one or is above COND_DELAY_MAX_NS
 */
static int set_duration(const char *val, uint64_t *ns)
{
	double v;

	if (parse_scaled(val, time_units, &v) || v > COND_DELAY_MAX_NS)
		return -1;
	*ns = (uint64_t)(v + 0.5);
	return 0;
}

/**
 * set_scope() - store a key that says which frames a rule matches
 * @b:		rule being built
 * @k:		K_DIR, K_PROTO, K_PORT or K_HOST
 * @val:	its text
 *
 * Return: 0, or -1 if @val is not what @k takes
 */
static int set_scope(struct build *b, enum key_id k, const char *val)
{
	unsigned long v;

	switch (k) {
	case K_DIR:
		b->r.dir = !strcmp(val, "to_guest")  ? COND_TO_GUEST
		           : !strcmp(val, "to_host") ? COND_TO_HOST
		           : !strcmp(val, "both")    ? COND_BOTH
		                                     : 0;
		return b->r.dir ? 0 : -1;
	case K_PROTO:
		b->r.m.proto = !strcmp(val, "tcp")    ? IPPROTO_TCP
		               : !strcmp(val, "udp")  ? IPPROTO_UDP
		               : !strcmp(val, "icmp") ? IPPROTO_ICMP
		                                      : 0;
		return b->r.m.proto ? 0 : -1;
	case K_PORT:
		if (parse_uint(val, 1, 65535, &v))
			return -1;
		b->r.m.port = (uint16_t)v;
		return 0;
	default:
		b->r.m.has_host = true;
		return parse_host(val, &b->r.m.host);
	}
}

/**
 * set_key() - store one key's value in the rule being built
 * @b:		rule being built
 * @k:		the key
 * @val:	its text; NULL only for a flag (down)
 *
 * Return: 0, or -1 if @val is not what @k takes
 */
static int set_key(struct build *b, enum key_id k, const char *val)
{
	struct cond_rule *r = &b->r;
	unsigned long seed;
	double v;

	if (!val && k != K_DOWN)
		return -1;
	switch (k) {
	case K_DELAY:
		return set_duration(val, &r->delay_ns);
	case K_JITTER:
		return set_duration(val, &r->jitter_ns);
	case K_DIST:
		r->dist = !strcmp(val, "normal") ? COND_NORMAL : COND_UNIFORM;
		return strcmp(val, "normal") && strcmp(val, "uniform") ? -1 : 0;
	case K_LOSS:
		return parse_percent(val, &r->loss);
	case K_LOSS_CORR:
		return parse_percent(val, &r->loss_corr);
	case K_DUPLICATE:
		return parse_percent(val, &r->duplicate);
	case K_REORDER:
		return parse_percent(val, &r->reorder);
	case K_RATE:
		if (parse_scaled(val, rate_units, &v) || v < 1e3 || v > 1e11)
			return -1;
		r->rate_bps = (uint64_t)(v + 0.5);
		return 0;
	case K_BURST:
		if (parse_scaled(val, size_units, &v) || v > COND_HOLD_MAX)
			return -1;
		r->burst = (uint64_t)(v + 0.5);
		return 0;
	case K_DOWN:
		return parse_bool(val, &r->down);
	case K_SEED:
		b->seed_set = true;
		if (parse_uint(val, 0, INT64_MAX, &seed))
			return -1;
		b->seed = seed;
		return 0;
	default:
		return set_scope(b, k, val);
	}
}

/**
 * take_pair() - parse one "key=value" (or "down") into the rule
 * @b:		rule being built
 * @name:	the key, NUL-terminated
 * @val:	the value, or NULL if there was no '='
 * @why:	filled with the reason on error
 * @whylen:	its size
 *
 * Return: 0, or -1 with @why set
 */
static int take_pair(struct build *b, const char *name, const char *val,
                     char *why, size_t whylen)
{
	enum key_id k = key_of(name);

	if (k == K_COUNT) {
		snprintf(why, whylen,
		         "unknown field \"%.32s\" (delay, jitter, dist, loss, "
		         "loss-corr, duplicate, reorder, rate, burst, down, "
		         "dir, proto, port, host or seed)",
		         name);
		return -1;
	}
	if (b->seen & (1U << k)) {
		snprintf(why, whylen, "%s given twice in one rule", name);
		return -1;
	}
	b->seen |= 1U << k;
	if (set_key(b, k, val)) {
		snprintf(why, whylen, "bad %s \"%.*s\": %s", name,
		         COND_VALUE_MAX, val ? val : "", keys[k].takes);
		return -1;
	}
	return 0;
}

/**
 * check_rule() - what the keys of one rule say together
 * @b:		rule built
 * @why:	filled with the reason on error
 * @whylen:	its size
 *
 * Return: 0, or -1 with @why set
 */
static int check_rule(const struct build *b, char *why, size_t whylen)
{
	const struct cond_rule *r = &b->r;
	const char *bad = NULL;

	if ((b->seen & (1U << K_LOSS_CORR)) && !r->loss)
		bad = "loss-corr needs loss";
	else if (r->loss_corr && r->loss < 1 &&
	         r->loss * (1 - r->loss_corr) > 1 - r->loss)
		/* After a frame that passed, the next would have to be lost
		 * with a probability above 1 to keep the rate at loss.
		 */
		bad = "loss-corr too low for this loss: it must be at least "
		      "(2 × loss - 1) / loss";
	else if ((b->seen & (1U << K_BURST)) && !r->rate_bps)
		bad = "burst needs rate";
	else if (r->reorder && !r->delay_ns)
		bad = "reorder needs a delay: reordered frames skip it";
	else if ((b->seen & (1U << K_DIST)) && !r->jitter_ns)
		bad = "dist needs jitter";
	else if (r->delay_ns + r->jitter_ns > COND_DELAY_MAX_NS)
		bad = "delay plus jitter is above 60s";
	if (bad)
		snprintf(why, whylen, "%s", bad);
	return bad ? -1 : 0;
}

/**
 * add_built() - append a parsed rule to the set, or take only its seed
 * @s:		set
 * @b:		rule built
 * @why:	filled with the reason on error
 * @whylen:	its size
 *
 * A rule of only scope keys would do nothing: it is an error, since its
 * author surely meant something. "seed=N" alone only sets the seed.
 *
 * Return: 0, or -1 with @why set
 */
static int add_built(struct cond_set *s, struct build *b, char *why,
                     size_t whylen)
{
	bool acts = false;

	for (int k = 0; k < K_COUNT; k++)
		acts |= keys[k].acts && (b->seen & (1U << k));
	if (check_rule(b, why, whylen))
		return -1;
	if (b->seed_set) {
		s->seeded = true;
		s->seed = b->seed;
	}
	if (!acts && b->seen & ~(1U << K_SEED)) {
		snprintf(why, whylen,
		         "a rule needs a condition: delay, jitter, loss, "
		         "duplicate, reorder, rate or down");
		return -1;
	}
	if (!acts)
		return 0;
	if (s->n >= COND_RULES_MAX) {
		snprintf(why, whylen, "more than %d rules", COND_RULES_MAX);
		return -1;
	}
	if (!b->r.dir)
		b->r.dir = COND_BOTH;
	s->r[s->n++] = b->r;
	return 0;
}

/**
 * cond_parse_add() - parse one --conditions string and append its rule
 * @s:		set to append to; unchanged on error
 * @spec:	"delay=50ms,jitter=5ms,loss=1%,rate=100mbit,port=80"
 * @why:	filled with the reason on error
 * @whylen:	its size
 *
 * Return: 0, or -1 with @why set
 */
int cond_parse_add(struct cond_set *s, const char *spec, char *why,
                   size_t whylen)
{
	char copy[COND_SPEC_MAX + 1], *save = NULL, *tok;
	struct build b = {0};
	struct cond_set next = *s;

	if (strlen(spec) > COND_SPEC_MAX) {
		snprintf(why, whylen, "rule longer than %d characters",
		         COND_SPEC_MAX);
		return -1;
	}
	strcpy(copy, spec);
	if (!copy[0] || copy[strlen(copy) - 1] == ',' || copy[0] == ',' ||
	    strstr(copy, ",,")) {
		snprintf(why, whylen, "empty field in \"%.64s\"", spec);
		return -1;
	}
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (eq)
			*eq++ = '\0';
		if (take_pair(&b, tok, eq, why, whylen))
			return -1;
	}
	if (add_built(&next, &b, why, whylen))
		return -1;
	*s = next;
	return 0;
}

/**
 * json_value_text() - a JSON rule field's value as the string syntax has
 *		       it
 * @v:		the value
 * @buf:	room for it
 * @len:	its size
 *
 * Numbers mean the base unit of their key (percent, bit/s, bytes);
 * durations take a string with a unit. true and false are flags.
 *
 * Return: @buf, or NULL if @v is none of a string, number or boolean
 */
static const char *json_value_text(const json_t *v, char *buf, size_t len)
{
	if (json_is_string(v))
		snprintf(buf, len, "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, len, "%.9g", json_real_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, len, "%s", json_is_true(v) ? "true" : "false");
	else
		return NULL;
	return buf;
}

/**
 * rule_from_json() - append one rule given as an object or a string
 * @s:		set to append to
 * @v:		the rule
 * @why:	filled with the reason on error
 * @whylen:	its size
 *
 * Return: 0, or -1 with @why set
 */
static int rule_from_json(struct cond_set *s, const json_t *v, char *why,
                          size_t whylen)
{
	struct build b = {0};
	const char *key;
	json_t *val;

	if (json_is_string(v))
		return cond_parse_add(s, json_string_value(v), why, whylen);
	if (!json_is_object(v)) {
		snprintf(why, whylen, "a rule must be an object or a string");
		return -1;
	}
	json_object_foreach((json_t *)v, key, val)
	{
		char text[COND_VALUE_MAX + 1];

		if (json_is_string(val) &&
		    json_string_length(val) > COND_VALUE_MAX) {
			snprintf(why, whylen,
			         "bad %.32s: longer than %d characters", key,
			         COND_VALUE_MAX);
			return -1;
		}
		if (!json_value_text(val, text, sizeof(text))) {
			snprintf(why, whylen,
			         "bad %.32s: must be a string, a number or a "
			         "boolean",
			         key);
			return -1;
		}
		if (take_pair(&b, key, text, why, whylen))
			return -1;
	}
	return add_built(s, &b, why, whylen);
}

/**
 * cond_json_set() - build a set from set_conditions' arguments
 * @s:		filled with the new set; the caller's set in force stays
 *		as it is until it takes this one
 * @args:	{"rules": [rule, ...], "seed": N}; a rule is an object of
 *		the string syntax's keys, or a string in it
 * @why:	filled with the reason on error
 * @whylen:	its size
 *
 * Return: 0, or -1 with @why set
 */
int cond_json_set(struct cond_set *s, const json_t *args, char *why,
                  size_t whylen)
{
	const json_t *rules = json_object_get(args, "rules");
	const json_t *seed = json_object_get(args, "seed");
	size_t i;
	json_t *v;

	memset(s, 0, sizeof(*s));
	if (!json_is_array(rules)) {
		snprintf(why, whylen, "rules: must be an array of rules");
		return -1;
	}
	if (seed) {
		if (!json_is_integer(seed) || json_integer_value(seed) < 0) {
			snprintf(why, whylen, "bad seed: an unsigned integer");
			return -1;
		}
		s->seeded = true;
		s->seed = (uint64_t)json_integer_value(seed);
	}
	json_array_foreach(rules, i, v)
	{
		char sub[160];

		if (rule_from_json(s, v, sub, sizeof(sub))) {
			snprintf(why, whylen, "rule %zu: %s", i, sub);
			return -1;
		}
	}
	return cond_check_memory(s, why, whylen);
}

/**
 * rate_hold_bytes() - the most a rule with a rate may hold one way
 * @r:		rule with a rate
 *
 * What arrives at its rate in its longest delay (jitter included, 6σ of
 * normal jitter) and in its queue (100 ms, two of the largest frames and
 * its burst), plus its burst; each byte the rate counts costing at most
 * COND_HOLD_PER_WIRE bytes held, what the smallest frames cost. A frame
 * the rule duplicates is held twice, its copy outside the rate.
 *
 * Return: bytes
 */
static double rate_hold_bytes(const struct cond_rule *r)
{
	double ns = (double)(r->delay_ns + COND_QUEUE_NS) +
	            (double)r->jitter_ns * (r->dist == COND_NORMAL ? 6 : 1);

	return (ns / 1e9 * (double)r->rate_bps / 8 + 2 * (double)r->burst +
	        COND_QUEUE_FRAMES_BYTES) *
	       COND_HOLD_PER_WIRE * (1 + r->duplicate);
}

/**
 * cond_check_memory() - refuse rules whose delay × rate could hold more
 *			 than COND_HOLD_MAX in one direction
 * @s:		set
 * @why:	filled with the reason on error
 * @whylen:	its size
 *
 * A rule with a rate holds at most rate_hold_bytes(); rules without a
 * rate are held only as long as their delay, and are bounded at run time
 * (docs/conditions.md).
 *
 * Return: 0, or -1 with @why set
 */
int cond_check_memory(const struct cond_set *s, char *why, size_t whylen)
{
	for (unsigned int d = COND_TO_GUEST; d <= COND_TO_HOST; d++) {
		double bytes = 0;

		for (unsigned int i = 0; i < s->n; i++) {
			const struct cond_rule *r = &s->r[i];

			if (!(r->dir & d) || !r->rate_bps)
				continue;
			bytes += rate_hold_bytes(r);
		}
		if (bytes > COND_HOLD_MAX) {
			snprintf(why, whylen,
			         "delay × rate %s needs %.0f MiB held, above "
			         "the bound of %u MiB",
			         d == COND_TO_GUEST ? "to_guest" : "to_host",
			         bytes / (1 << 20), COND_HOLD_MAX >> 20);
			return -1;
		}
	}
	return 0;
}

/**
 * append() - add printf text to a rule's canonical string
 * @buf:	string so far
 * @len:	its size
 * @fmt:	format of the field, with a leading comma
 */
static void __attribute__((format(printf, 3, 4)))
append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	va_start(ap, fmt);
	if (used < len)
		vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

/**
 * duration_text() - a duration in the largest unit that keeps it exact
 * @ns:		duration
 * @buf:	room for it
 * @len:	its size
 *
 * Return: @buf
 */
static const char *duration_text(uint64_t ns, char *buf, size_t len)
{
	if (ns % 1000000 == 0)
		snprintf(buf, len, "%llums",
		         (unsigned long long)(ns / 1000000));
	else if (ns % 1000 == 0)
		snprintf(buf, len, "%lluus", (unsigned long long)(ns / 1000));
	else
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	return buf;
}

/**
 * rule_text() - a rule in the string syntax, which parses back to it
 * @r:		rule
 * @buf:	room for it
 * @len:	its size
 */
static void rule_text(const struct cond_rule *r, char *buf, size_t len)
{
	static const char *const dirs[] = {"", "to_guest", "to_host", "both"};
	char t[32], host[INET6_ADDRSTRLEN];

	snprintf(buf, len, "dir=%s", dirs[r->dir & COND_BOTH]);
	if (r->m.proto)
		append(buf, len, ",proto=%s",
		       r->m.proto == IPPROTO_TCP   ? "tcp"
		       : r->m.proto == IPPROTO_UDP ? "udp"
		                                   : "icmp");
	if (r->m.port)
		append(buf, len, ",port=%u", r->m.port);
	if (r->m.has_host) {
		if (IN6_IS_ADDR_V4MAPPED(&r->m.host))
			inet_ntop(AF_INET, &r->m.host.s6_addr[12], host,
			          sizeof(host));
		else
			inet_ntop(AF_INET6, &r->m.host, host, sizeof(host));
		append(buf, len, ",host=%s", host);
	}
	if (r->down)
		append(buf, len, ",down");
	if (r->delay_ns || !(r->jitter_ns || r->loss || r->duplicate ||
	                     r->rate_bps || r->down))
		append(buf, len, ",delay=%s",
		       duration_text(r->delay_ns, t, sizeof(t)));
	if (r->jitter_ns)
		append(buf, len, ",jitter=%s,dist=%s",
		       duration_text(r->jitter_ns, t, sizeof(t)),
		       r->dist == COND_NORMAL ? "normal" : "uniform");
	if (r->loss)
		append(buf, len, ",loss=%.9g%%", r->loss * 100);
	if (r->loss_corr)
		append(buf, len, ",loss-corr=%.9g%%", r->loss_corr * 100);
	if (r->duplicate)
		append(buf, len, ",duplicate=%.9g%%", r->duplicate * 100);
	if (r->reorder)
		append(buf, len, ",reorder=%.9g%%", r->reorder * 100);
	if (r->rate_bps)
		append(buf, len, ",rate=%llubit,burst=%llu",
		       (unsigned long long)r->rate_bps,
		       (unsigned long long)r->burst);
}

/**
 * cond_set_json() - the set as get_conditions reports it
 * @s:		set
 *
 * Each rule is its canonical string, which set_conditions takes back.
 *
 * Return: {"rules": [...], "seed": N or null}, or NULL on ENOMEM
 */
json_t *cond_set_json(const struct cond_set *s)
{
	json_t *rules = json_array(), *o;

	for (unsigned int i = 0; rules && i < s->n; i++) {
		char text[COND_SPEC_MAX];

		rule_text(&s->r[i], text, sizeof(text));
		if (json_array_append_new(rules, json_string(text))) {
			json_decref(rules);
			return NULL;
		}
	}
	o = json_pack("{s:o*}", "rules", rules);
	if (o && s->seeded &&
	    json_object_set_new(o, "seed", json_integer((json_int_t)s->seed))) {
		json_decref(o);
		return NULL;
	}
	return o;
}
