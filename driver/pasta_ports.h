/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - pasta's port forwarding specs (-t, -u, -T, -U), parsed
 */
#ifndef TAPIR_PASTA_PORTS_H
#define TAPIR_PASTA_PORTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <net/if.h>
#include <netinet/in.h>

/* Ranges one option's specs may add up to, after exclusions split them. */
#define PASTA_RANGES_MAX 256

enum pasta_ports_mode {
	PASTA_PORTS_UNSET, /* not given: the caller applies pasta's default */
	PASTA_PORTS_NONE,  /* "none" */
	PASTA_PORTS_AUTO,  /* "auto": whatever listens on the other side */
	PASTA_PORTS_LIST,  /* ranges ("all" is 1-65535) */
};

/**
 * struct pasta_range - host ports @first..@last go to @target and up
 * @addr_set:	bound to @addr only, not every address
 * @addr:	the address (IPv4 as v4-mapped IPv6)
 * @ifname:	bound to this interface too, or empty
 * @first:	first port, 1..65535
 * @last:	last port, @first..65535
 * @target:	the port @first goes to; @last goes to @target + @last - @first
 */
struct pasta_range {
	bool addr_set;
	struct in6_addr addr;
	char ifname[IFNAMSIZ];
	uint16_t first;
	uint16_t last;
	uint16_t target;
};

/**
 * struct pasta_ports - every spec of one option (-t, -u, -T or -U)
 * @mode:	what the specs asked for
 * @n:		entries in @r (PASTA_PORTS_LIST)
 * @r:		ranges, none overlapping another of the same address
 */
struct pasta_ports {
	enum pasta_ports_mode mode;
	unsigned int n;
	struct pasta_range r[PASTA_RANGES_MAX];
};

int pasta_ports_parse(struct pasta_ports *pp, const char *spec, char *why,
                      size_t whylen);

#endif /* TAPIR_PASTA_PORTS_H */
