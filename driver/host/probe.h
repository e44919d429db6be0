/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - what the running kernel has, probed at start: TCP SO_PEEK_OFF
 */
#ifndef TAPIR_PROBE_H
#define TAPIR_PROBE_H

#include <stdbool.h>

bool probe_tcp_peek_off(int family);
const char *probe_peek_mode(bool peek_off);

#endif /* TAPIR_PROBE_H */
