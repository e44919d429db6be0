// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - pasta's port forwarding specs (-t, -u, -T, -U), parsed
 *
 * The grammar is pasta(1)'s, as podman and rootlesskit write it:
 *
 *   none | auto | all | [ADDR[%IF]/]ITEM[,ITEM]...
 *   ITEM:  PORT[-PORT][:PORT[-PORT]]  forward, optionally to other ports
 *          ~PORT[-PORT]               except these (of this spec's ranges;
 *                                     alone, of every port)
 *
 * Each option may be given many times (podman passes one per mapping);
 * the ranges add up. Exclusions are applied here, so what comes out is a
 * plain list of ranges, and two of them never claim the same host port on
 * the same address: the second bind would fail at start-up anyway, with a
 * worse message.
 */

#include <stdarg.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "driver/core/inany.h"
#include "driver/front/pasta_ports.h"

#define PORTS 65536

/**
 * struct spec_parse - one spec being parsed
 * @pp:		the option's ranges so far
 * @why:	set to what is wrong
 * @whylen:	size of @why
 * @addr_set:	the spec has an ADDR/ prefix
 * @addr:	its address
 * @ifname:	its %IF, or empty
 * @incl:	the spec's forwarding items
 * @nincl:	entries in @incl
 * @excl:	its excluded ports, a bit each
 * @nexcl:	exclusion items seen
 */
struct spec_parse {
	struct pasta_ports *pp;
	char *why;
	size_t whylen;
	bool addr_set;
	struct in6_addr addr;
	char ifname[IFNAMSIZ];
	struct pasta_range incl[PASTA_RANGES_MAX];
	unsigned int nincl;
	uint8_t excl[PORTS / 8];
	unsigned int nexcl;
};

/**
 * fail() - record why the spec is refused
 * @sp:		spec being parsed
 * @fmt:	printf format
 *
 * Return: -1
 */
__attribute__((format(printf, 2, 3))) static int fail(struct spec_parse *sp,
                                                      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sp->why, sp->whylen, fmt, ap);
	va_end(ap);
	return -1;
}

/**
 * parse_port() - a port number at *@s, which moves past it
 * @sp:		spec being parsed
 * @s:		cursor
 * @port:	set to the port
 *
 * Return: 0, or -1 if there is no number or it is not 1..65535
 */
static int parse_port(struct spec_parse *sp, const char **s, uint16_t *port)
{
	unsigned long v = 0;
	const char *p = *s;

	if (*p < '0' || *p > '9')
		return fail(sp, "expected a port number at '%s'", p);
	for (; *p >= '0' && *p <= '9'; p++)
		if (v < PORTS)
			v = v * 10 + (unsigned long)(*p - '0');
	if (v == 0 || v >= PORTS)
		return fail(sp, "port '%.*s' is out of range 1-65535",
		            (int)(p - *s), *s);
	*port = (uint16_t)v;
	*s = p;
	return 0;
}

/**
 * parse_range() - PORT[-PORT] at *@s, which moves past it
 * @sp:		spec being parsed
 * @s:		cursor
 * @first:	set to the first port
 * @last:	set to the last port (@first if there is no -PORT)
 *
 * Return: 0, or -1 after filling @sp->why
 */
static int parse_range(struct spec_parse *sp, const char **s, uint16_t *first,
                       uint16_t *last)
{
	if (parse_port(sp, s, first))
		return -1;
	*last = *first;
	if (**s != '-')
		return 0;
	(*s)++;
	if (parse_port(sp, s, last))
		return -1;
	if (*last < *first)
		return fail(sp, "range %u-%u is backwards", *first, *last);
	return 0;
}

/**
 * mark() - set the bits of ports @first..@last, whole bytes at a time (a
 *	    command line may hold thousands of ~1-65535)
 * @bits:	PORTS / 8 bytes
 * @first:	first port
 * @last:	last port
 */
static void mark(uint8_t *bits, unsigned int first, unsigned int last)
{
	unsigned int p = first;

	for (; p <= last && p % 8; p++)
		bits[p / 8] |= (uint8_t)(1U << (p % 8));
	if (p + 8 <= last + 1) {
		memset(&bits[p / 8], 0xff, (last + 1 - p) / 8);
		p += (last + 1 - p) / 8 * 8;
	}
	for (; p <= last; p++)
		bits[p / 8] |= (uint8_t)(1U << (p % 8));
}

/**
 * exclude() - ~PORT[-PORT] at @s: mark those ports excluded
 * @sp:		spec being parsed
 * @s:		the item, past its '~', up to a comma or the end
 *
 * Return: 0, or -1 after filling @sp->why
 */
static int exclude(struct spec_parse *sp, const char *s)
{
	uint16_t first, last;

	if (parse_range(sp, &s, &first, &last))
		return -1;
	if (*s && *s != ',')
		return fail(sp, "an exclusion takes no target: '%s'", s);
	mark(sp->excl, first, last);
	sp->nexcl++;
	return 0;
}

/**
 * include() - PORT[-PORT][:PORT[-PORT]] at @s: add a forwarding item
 * @sp:		spec being parsed
 * @s:		the item, up to a comma or the end
 *
 * Return: 0, or -1 after filling @sp->why
 */
static int include(struct spec_parse *sp, const char *s)
{
	uint16_t first, last, tfirst, tlast;

	if (parse_range(sp, &s, &first, &last))
		return -1;
	tfirst = first;
	tlast = last;
	if (*s == ':') {
		s++;
		if (parse_range(sp, &s, &tfirst, &tlast))
			return -1;
	}
	if (*s && *s != ',')
		return fail(sp, "unexpected '%s' after a port", s);
	if (tlast - tfirst != last - first)
		return fail(sp, "target range %u-%u is not as long as %u-%u",
		            tfirst, tlast, first, last);
	if (sp->nincl == PASTA_RANGES_MAX)
		return fail(sp, "more than %d ranges", PASTA_RANGES_MAX);
	sp->incl[sp->nincl++] = (struct pasta_range){
	        .first = first, .last = last, .target = tfirst};
	return 0;
}

/**
 * parse_prefix() - ADDR[%IF] of an ADDR[%IF]/ prefix
 * @sp:		spec being parsed
 * @s:		the prefix
 * @len:	its length, without the '/'
 *
 * ADDR is an IPv4 or IPv6 literal, the latter with or without brackets.
 *
 * Return: 0, or -1 after filling @sp->why
 */
static int parse_prefix(struct spec_parse *sp, const char *s, size_t len)
{
	char a[INET6_ADDRSTRLEN + 2];
	const char *pct = memchr(s, '%', len);
	size_t alen = pct ? (size_t)(pct - s) : len;
	struct in_addr v4;

	if (pct) {
		size_t iflen = len - alen - 1;

		if (!iflen || iflen >= IFNAMSIZ)
			return fail(sp, "bad interface name '%.*s'", (int)iflen,
			            pct + 1);
		memcpy(sp->ifname, pct + 1, iflen);
		sp->ifname[iflen] = '\0';
	}
	if (alen >= 2 && s[0] == '[' && s[alen - 1] == ']') {
		s++;
		alen -= 2;
	}
	if (!alen || alen >= sizeof(a))
		return fail(sp, "bad address '%.*s'", (int)len, s);
	memcpy(a, s, alen);
	a[alen] = '\0';
	if (inet_pton(AF_INET, a, &v4) == 1) {
		inany_from_v4(&sp->addr, v4);
	} else if (inet_pton(AF_INET6, a, &sp->addr) != 1) {
		return fail(sp, "bad address '%s'", a);
	}
	sp->addr_set = true;
	return 0;
}

/**
 * same_bind() - whether ranges @a and @b bind the same host address
 * @a:		range
 * @b:		range
 *
 * One bound to every address clashes with any other.
 *
 * Return: true if their ports must not overlap
 */
static bool same_bind(const struct pasta_range *a, const struct pasta_range *b)
{
	return !a->addr_set || !b->addr_set || inany_equal(&a->addr, &b->addr);
}

/**
 * add_range() - add ports @first..@last of item @in to the option
 * @sp:		spec being parsed
 * @in:		the item, with the spec's address
 * @first:	first port not excluded
 * @last:	last port of the run
 *
 * Return: 0, or -1 after filling @sp->why
 */
static int add_range(struct spec_parse *sp, const struct pasta_range *in,
                     unsigned int first, unsigned int last)
{
	struct pasta_ports *pp = sp->pp;
	struct pasta_range r = *in;

	r.first = (uint16_t)first;
	r.last = (uint16_t)last;
	r.target = (uint16_t)(in->target + (first - in->first));
	for (unsigned int i = 0; i < pp->n; i++) {
		const struct pasta_range *o = &pp->r[i];

		if (same_bind(o, &r) && r.first <= o->last &&
		    o->first <= r.last)
			return fail(sp, "port %u is forwarded twice",
			            r.first > o->first ? r.first : o->first);
	}
	if (pp->n == PASTA_RANGES_MAX)
		return fail(sp, "more than %d ranges", PASTA_RANGES_MAX);
	pp->r[pp->n++] = r;
	return 0;
}

/**
 * excluded() - whether port @p was excluded by the spec
 * @sp:		spec being parsed
 * @p:		port
 *
 * Return: true if so
 */
static bool excluded(const struct spec_parse *sp, unsigned int p)
{
	return sp->excl[p / 8] & (1U << (p % 8));
}

/**
 * add_item() - add item @in to the option, split around its exclusions
 * @sp:		spec being parsed
 * @in:		the item
 *
 * Return: 0, or -1 after filling @sp->why
 */
static int add_item(struct spec_parse *sp, struct pasta_range *in)
{
	unsigned int p = in->first;

	in->addr_set = sp->addr_set;
	in->addr = sp->addr;
	memcpy(in->ifname, sp->ifname, sizeof(in->ifname));
	while (p <= in->last) {
		unsigned int end;

		while (p <= in->last && excluded(sp, p))
			p++;
		if (p > in->last)
			break;
		for (end = p; end < in->last && !excluded(sp, end + 1); end++)
			;
		if (add_range(sp, in, p, end))
			return -1;
		p = end + 1;
	}
	return 0;
}

/**
 * parse_items() - the comma-separated items of a spec, then its ranges
 * @sp:		spec being parsed, past any prefix
 * @s:		the items
 *
 * Return: 0, or -1 after filling @sp->why
 */
static int parse_items(struct spec_parse *sp, const char *s)
{
	while (*s) {
		const char *comma = strchr(s, ',');

		if (*s == ',')
			return fail(sp, "empty item");
		if (*s == '~' ? exclude(sp, s + 1) : include(sp, s))
			return -1;
		if (!comma)
			break;
		s = comma + 1;
		if (!*s)
			return fail(sp, "empty item");
	}
	if (!sp->nincl && !sp->nexcl)
		return fail(sp, "no ports");
	/* Only exclusions: every other port. */
	if (!sp->nincl)
		sp->incl[sp->nincl++] = (struct pasta_range){
		        .first = 1, .last = PORTS - 1, .target = 1};
	for (unsigned int i = 0; i < sp->nincl; i++)
		if (add_item(sp, &sp->incl[i]))
			return -1;
	return 0;
}

/**
 * keyword() - "none", "auto" or "all" as the whole spec
 * @spec:	the spec
 *
 * Return: the mode it names, or PASTA_PORTS_UNSET if it is not one
 */
static enum pasta_ports_mode keyword(const char *spec)
{
	if (!strcmp(spec, "none"))
		return PASTA_PORTS_NONE;
	if (!strcmp(spec, "auto"))
		return PASTA_PORTS_AUTO;
	if (!strcmp(spec, "all"))
		return PASTA_PORTS_LIST;
	return PASTA_PORTS_UNSET;
}

/**
 * pasta_ports_parse() - add one -t/-u/-T/-U spec to an option's ranges
 * @pp:		the option's ranges so far (zeroed before the first spec)
 * @spec:	the spec, untrusted
 * @why:	set to what is wrong, on failure
 * @whylen:	size of @why
 *
 * "none" and "auto" stand alone: given with any other spec of the same
 * option, they are refused, as with pasta. On failure @pp may hold part
 * of the spec: the caller exits.
 *
 * Return: 0, or -1 with @why filled
 */
int pasta_ports_parse(struct pasta_ports *pp, const char *spec, char *why,
                      size_t whylen)
{
	enum pasta_ports_mode kw = keyword(spec);
	const char *slash = strchr(spec, '/');

	struct spec_parse sp = {.pp = pp, .why = why, .whylen = whylen};
	if (pp->mode == PASTA_PORTS_NONE || pp->mode == PASTA_PORTS_AUTO ||
	    ((kw == PASTA_PORTS_NONE || kw == PASTA_PORTS_AUTO) &&
	     pp->mode != PASTA_PORTS_UNSET))
		return fail(&sp, "'none' and 'auto' can't be combined with "
		                 "other specs");
	if (kw == PASTA_PORTS_NONE || kw == PASTA_PORTS_AUTO) {
		pp->mode = kw;
		return 0;
	}
	pp->mode = PASTA_PORTS_LIST;
	if (kw == PASTA_PORTS_LIST)
		return parse_items(&sp, "1-65535");
	if (slash && parse_prefix(&sp, spec, (size_t)(slash - spec)))
		return -1;
	return parse_items(&sp, slash ? slash + 1 : spec);
}
