/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - the slirp4netns-compatible JSON API socket (see docs/api.md)
 */
#ifndef TAPIR_API_H
#define TAPIR_API_H

#include <stdbool.h>
#include <stddef.h>

#include "driver/core/ctx.h"
#include "driver/fwd/hostfwd.h"

/* Longest request, in bytes: slirp4netns reads one 4096-byte buffer and
 * refuses a full one.
 */
#define API_MAX_REQUEST 4095
/* A connection that stays silent this long is answered and closed. */
#define API_TIMEOUT_S 30
/* Connections open at once: each new one beyond it evicts the oldest idle
 * one (api.c: evict_oldest()), so silent clients can neither exhaust fds
 * nor lock the real ones out.
 */
#define API_MAX_CONNS 64

/**
 * struct api_fwd_ops - what requests do to the forward table
 * @add:	hostfwd_add()
 * @remove:	hostfwd_remove()
 * @entry:	hostfwd_entry()
 * @status:	hostfwd_status()
 *
 * The daemon uses api_hostfwd_ops; unit tests pass a table of their own,
 * so that every request can be checked without sockets.
 */
struct api_fwd_ops {
	int (*add)(struct ctx *c, struct hostfwd_spec *s, char *why,
	           size_t whylen);
	int (*remove)(struct ctx *c, unsigned int id);
	const struct hostfwd_spec *(*entry)(const struct ctx *c, size_t i);
	void (*status)(const struct ctx *c, struct hostfwd_status *st);
};

extern const struct api_fwd_ops api_hostfwd_ops;

enum api_scan {
	API_MORE,      /* wait for more bytes */
	API_COMPLETE,  /* answer the bytes received */
	API_TOO_LARGE, /* more than API_MAX_REQUEST bytes */
};

enum api_scan api_request_scan(const char *buf, size_t len, bool eof);
char *api_answer(struct ctx *c, const struct api_fwd_ops *ops, const char *req,
                 size_t len, bool *later);
char *api_respond(struct ctx *c, const struct api_fwd_ops *ops, const char *req,
                  size_t len);
char *api_stats_reply(const struct ctx *c, const struct stats *s);
char *api_error_reply(const char *desc);

int api_init(struct ctx *c);
void api_cleanup(struct ctx *c);

/* Its system calls once running, for the seccomp filter (syscalls.c). */
extern const char *const api_syscalls[];

#endif /* TAPIR_API_H */
