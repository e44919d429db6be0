/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - error and debug messages on stderr
 */
#ifndef TAPIR_LOG_H
#define TAPIR_LOG_H

#include <stdbool.h>

extern bool log_debug_enabled;

void err_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void err_errno(int err, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
void info_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void debug_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* TAPIR_LOG_H */
