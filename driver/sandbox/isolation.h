/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - --enable-sandbox: an empty root, no privileges left to gain
 */
#ifndef TAPIR_ISOLATION_H
#define TAPIR_ISOLATION_H

#include <stdbool.h>

#include "driver/core/opts.h"

bool isolation_sanitized(void);
int isolation_sandbox(const struct opts *o);
int isolation_drop_all(void);
int isolation_serve_as(const struct opts *o);
int isolation_pid_namespace(const struct opts *o);

#endif /* TAPIR_ISOLATION_H */
