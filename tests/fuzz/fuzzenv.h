/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - fuzzing: the sandbox, context and host peers every harness shares
 */
#ifndef TAPIR_FUZZENV_H
#define TAPIR_FUZZENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "driver/core/ctx.h"

/* The tap's vnet header length with IFF_VNET_HDR and mergeable buffers. */
#define FUZZ_VNET_LEN 12
/* A fuzz context: a few connections and slots, cheap to build and reset. */
#define FUZZ_TCP_CONNS 64
#define FUZZ_FRAG_SLOTS 4
/* The fake clock starts here, far from 0, which some code takes as unset. */
#define FUZZ_CLOCK_START 1000000000000ULL
/* What the host peers listen on inside the fuzzer's own netns. */
#define FUZZ_TCP_PORT 8080
#define FUZZ_UDP_PORT 7

/**
 * struct fuzz_env - one datapath context and the guest's end of its tap
 * @o:		options, kept by @c
 * @c:		the context
 * @peer:	the guest's end of the tap socketpair
 * @inputs:	inputs run since the environment was first opened
 */
struct fuzz_env {
	struct opts o;
	struct ctx c;
	int peer;
	unsigned long inputs;
};

void fuzz_sandbox(void);
void fuzz_env_open(struct fuzz_env *e);
void fuzz_env_close(struct fuzz_env *e);
void fuzz_env_tick(struct fuzz_env *e, unsigned long every);
void fuzz_feed(struct fuzz_env *e, const uint8_t *buf, size_t len, bool vnet);
void fuzz_fix_csums(uint8_t *frame, size_t len);
void fuzz_fix_tcp(uint8_t *frame, size_t len);
void fuzz_advance(struct fuzz_env *e, uint64_t ms);
void fuzz_host_service(void);
void fuzz_host_reset(void);

#endif /* TAPIR_FUZZENV_H */
