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

int thread_modules_init(struct ctx *c);
void thread_modules_cleanup(struct ctx *c);
int threads_prepare(struct ctx *c);
int threads_start(struct ctx *c);
struct ctx *thread_ctx(const struct ctx *c, unsigned int i);
void threads_stop(struct ctx *c);
bool thread_pass_miss(struct ctx *c);
bool thread_place_syn(struct ctx *c, const struct flow_key *k);
void thread_count_tcp(struct ctx *c, unsigned int n);
bool thread_pass_to_main(struct ctx *c);
bool thread_may_own_udp(const struct ctx *c, uint16_t gport);
void thread_udp_opened(struct ctx *c);
void thread_set_udp_ports(struct ctx *c, const uint16_t *ports, size_t n);
void thread_learn_mac(struct ctx *c);
void thread_guest_mac(const struct ctx *c, uint8_t *mac);
void thread_accept(struct ctx *c, int fd, const struct in6_addr *src,
                   uint16_t sport, const struct in6_addr *dst, uint16_t dport);
void thread_fail(struct ctx *c);
void threads_stats(struct ctx *c, struct stats *sum);

#endif /* TAPIR_THREAD_H */
