/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - error and debug messages on stderr
 */
#ifndef TAPIR_LOG_H
#define TAPIR_LOG_H

#include <stdbool.h>
#include <stdint.h>

/* An error a guest or peer can repeat prints at most this often. */
#define LOG_LIMIT_MS 5000

/**
 * struct log_limit - rate limit of one message's call site, shared by the
 *		      datapath threads (atomics)
 * @next_ms:	clock_ms() from which it may print again; 0 = never printed
 * @suppressed:	lines left out since it last printed
 */
struct log_limit {
	uint64_t next_ms;
	unsigned long suppressed;
};

extern bool log_debug_enabled;
extern bool log_silent;

void log_init(void);
void log_own_fds(int fds[2]);
int log_redirect(int fd);
int log_to_file(const char *path, unsigned long max);
void err_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void err_errno(int err, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
void err_limited(struct log_limit *l, int err, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
void info_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void debug_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Its system calls once running, for the seccomp filter (syscalls.c). */
extern const char *const log_syscalls[];

#endif /* TAPIR_LOG_H */
