/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - pool of sockets created inside the target's network namespace
 */
#ifndef TAPIR_NSSOCK_H
#define TAPIR_NSSOCK_H

#include <stdint.h>

#include "driver/core/ctx.h"

/* TCP sockets kept per address family; one helper reply carries every
 * row, and a message takes at most 253 fds (SCM_MAX_FD).
 */
#define NSSOCK_POOL 64
/* Below this many, a refill starts in the background. */
#define NSSOCK_LOW 32
/* UDP sockets kept per family, once a user asked (nssock_prime_udp()). */
#define NSSOCK_UDP_POOL 16
#define NSSOCK_UDP_LOW 8
/* A reply not here this long after the request is late: nobody waits for
 * it any more (it is still taken when it comes).
 */
#define NSSOCK_LATE_MS 200

struct nssock_pool;

/* What the helper is doing; names in nssock_helper_name(). */
enum nssock_helper {
	NSSOCK_HELPER_NONE,    /* none runs; one starts when sockets are
	                        * needed (not once isolated) */
	NSSOCK_HELPER_READY,   /* runs, no request out */
	NSSOCK_HELPER_WAITING, /* a request is out (a late helper too), or
	                        * the last words of one that closed */
	NSSOCK_HELPER_GONE,    /* it failed, and isolated, no other starts */
};

struct nssock_pool *nssock_new(struct ctx *c);
void nssock_free(struct nssock_pool *p);
void nssock_prime(struct nssock_pool *p);
void nssock_prime_udp(struct nssock_pool *p);
int nssock_get(struct nssock_pool *p, int family, int type);
int nssock_wait(struct nssock_pool *p, int timeout_ms);
unsigned int nssock_count(const struct nssock_pool *p, int family);
uint64_t nssock_refills(const struct nssock_pool *p);
enum nssock_helper nssock_helper(const struct nssock_pool *p,
                                 uint64_t *wait_ms);
const char *nssock_helper_name(enum nssock_helper h);
long nssock_expect_ms(const struct nssock_pool *p);
void nssock_set_notify(struct nssock_pool *p, void (*fn)(void *arg), void *arg);

/* Its system calls once running, for the seccomp filter (syscalls.c). */
extern const char *const nssock_syscalls[];

#endif /* TAPIR_NSSOCK_H */
