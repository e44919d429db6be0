/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - pasta's port forwarding specs (-t, -u, -T, -U), parsed
 */
#ifndef TAPIR_PASTA_PORTS_H
#define TAPIR_PASTA_PORTS_H

#include <stddef.h>

#include "driver/core/opts.h"

int pasta_ports_parse(struct pasta_ports *pp, const char *spec, char *why,
                      size_t whylen);

#endif /* TAPIR_PASTA_PORTS_H */
