/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - pasta's options beyond the layout and the forwards, onto tapir's
 */
#ifndef TAPIR_PASTA_APPLY_H
#define TAPIR_PASTA_APPLY_H

#include "driver/front/cli.h"
#include "driver/front/pasta_cli.h"

int pasta_apply(const struct pasta_opts *po, struct opts *o);
int pasta_copy_ifindex(const struct pasta_opts *po, int family);
int pasta_log_open(const struct pasta_opts *po);

#endif /* TAPIR_PASTA_APPLY_H */
