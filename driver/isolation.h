/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - --enable-sandbox: an empty root, no privileges left to gain
 */
#ifndef TAPIR_ISOLATION_H
#define TAPIR_ISOLATION_H

#include <stdbool.h>

#include "cli.h"

bool isolation_sanitized(void);
int isolation_sandbox(const struct opts *o);
int isolation_drop_all(void);

#endif /* TAPIR_ISOLATION_H */
