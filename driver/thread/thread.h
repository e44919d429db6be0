/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - datapath threads: one context per tap queue, and their hand-offs
 */
#ifndef TAPIR_THREAD_H
#define TAPIR_THREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

struct ctx;
struct flow_key;
struct stats;
struct cond_out;

extern const struct cond_out thread_cond_out;

/**
 * typedef threads_stats_fn - called with every thread's counters added up
 * @arg:	what threads_stats_ask() was given
 * @sum:	the counters
 */
typedef void threads_stats_fn(void *arg, const struct stats *sum);

int thread_modules_init(struct ctx *c);
void thread_modules_cleanup(struct ctx *c);
int threads_prepare(struct ctx *c);
int threads_start(struct ctx *c);
struct ctx *thread_ctx(const struct ctx *c, unsigned int i);
void threads_stop(struct ctx *c);
bool thread_route_miss(struct ctx *c, const struct flow_key *k, bool syn);
void thread_pass_to_owner(struct ctx *c, const struct flow_key *k);
void thread_count_tcp(struct ctx *c, unsigned int n);
void thread_place_done(struct ctx *c);
bool thread_pass_to_main(struct ctx *c);
void thread_accept(struct ctx *c, int fd, const struct in6_addr *src,
                   uint16_t sport, const struct in6_addr *dst, uint16_t dport);
void thread_fail(struct ctx *c);
void thread_loop_ended(struct ctx *c);
int threads_stats_ask(struct ctx *c, threads_stats_fn *fn, void *arg);
void threads_stats_forget(struct ctx *c, void *arg);
void threads_stats_now(struct ctx *c, struct stats *sum);
void threads_stats_set_wait(unsigned int ms);

/* Its system calls once running, for the seccomp filter (syscalls.c). */
extern const char *const thread_syscalls[];

#endif /* TAPIR_THREAD_H */
