/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - fds a process inherited: only those it names stay open
 */
#ifndef TAPIR_FDS_H
#define TAPIR_FDS_H

#include <stddef.h>

#include "driver/core/opts.h"

/* The most fds one process keeps: stdio, a few of the caller's, its own. */
#define FDS_KEEP_MAX 64

void fds_close_except(const int *keep, size_t n);
void fds_close_inherited(const struct opts *o, int own);

#endif /* TAPIR_FDS_H */
