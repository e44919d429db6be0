// SPDX-License-Identifier: GPL-2.0-or-later
/* PLACEHOLDER - to be replaced by the real implementation */

#include "ip.h"
#include "ndp.h"
int ndp_init(struct ctx *c) { (void)c; return 0; }
void ndp_cleanup(struct ctx *c) { (void)c; }
bool ndp_input(struct ctx *c, const struct pkt *p) { (void)c; (void)p; return false; }
