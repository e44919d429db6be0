/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - started as root, served as nobody
 */
#ifndef TAPIR_RUNAS_H
#define TAPIR_RUNAS_H

#include <stdbool.h>

#include "driver/core/opts.h"

void runas_default(struct opts *o, bool quiet);
int runas_switch(const struct opts *o);

#endif /* TAPIR_RUNAS_H */
