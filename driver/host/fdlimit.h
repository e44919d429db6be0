/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - out of file descriptors: refuse clearly, pause, never spin
 */
#ifndef TAPIR_FDLIMIT_H
#define TAPIR_FDLIMIT_H

#include <stdbool.h>
#include <stddef.h>

#include "driver/core/ctx.h"

struct event;

/* After accept() ran out of fds and no spare helped, a listener rests
 * this long before it tries again.
 */
#define FDLIMIT_PAUSE_MS 100
/* fds kept free of forwards' listeners at most (a sixteenth of the limit
 * where that is less), for connections and the rest of tapir.
 */
#define FDLIMIT_KEEP_MAX 1024

int fdlimit_init(struct ctx *c);
void fdlimit_cleanup(struct ctx *c);
bool fdlimit_listener_room(int fd);
int fdlimit_nofile(void);
void fdlimit_describe(char *buf, size_t len);
bool fdlimit_exhausted(int err);
int fdlimit_accept_spare(struct ctx *c, int lfd);
void fdlimit_restore(struct ctx *c);
void fdlimit_pause(struct event *listen_ev, struct event *timer);

/* Its system calls once running, for the seccomp filter (syscalls.c). */
extern const char *const fdlimit_syscalls[];

#endif /* TAPIR_FDLIMIT_H */
