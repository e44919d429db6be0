// SPDX-License-Identifier: GPL-2.0-or-later
/* PLACEHOLDER - to be replaced by the real implementation */

#include "ip.h"
#include "dns.h"
int dns_upstream(struct ctx *c, union sockaddr_inany *sa, socklen_t *salen) { (void)c; (void)sa; (void)salen; return -1; }
