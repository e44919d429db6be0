/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - version and compiled-in features for --version and get_info
 */
#ifndef TAPIR_VERSION_H
#define TAPIR_VERSION_H

#include <stdio.h>

#ifndef TAPIR_VERSION
#define TAPIR_VERSION "unknown"
#endif

/* slirp4netns's test suite and tools gate features on this number:
 * 2 = --outbound-addr, 3 = --disable-dns, 4 = libslirp 4.7 behaviour.
 */
#define TAPIR_SLIRP_CONFIG_VERSION_MAX 4

extern const char tapir_features[];

void version_print(FILE *f);
void version_print_kernel(FILE *f);

#endif /* TAPIR_VERSION_H */
