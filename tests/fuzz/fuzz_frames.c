// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - fuzzing: a conversation of guest frames, with time passing
 *
 * Input: records of a flags byte, a 16-bit big-endian length and that many
 * bytes of frame. Flags bit 0: the frame starts with a vnet header; bit 1:
 * fix its checksums; bit 2: give a TCP segment the sequence and
 * acknowledgement numbers tapir expects on its connection (a fuzzer can't
 * guess a 32-bit ISN, even a fixed one); bits 4-7: before the frame, move
 * the fake clock by steps[] and fire every pending timer, so retransmission,
 * window probes, idle timeouts, flow expiry and fragment timeouts run.
 * State (connections, flows, leases, fragments) carries over to the next
 * input and is rebuilt from scratch every RESET_EVERY inputs; the small
 * tables of a fuzz context bound it meanwhile.
 */

#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzzenv.h"

#define RESET_EVERY 64
#define MAX_RECORDS 64

/* Clock steps in ms: a few RTOs, the UDP and DNS timeouts, TCP idle. */
static const uint64_t steps[16] = {
        0,     10,    50,    200,    500,    1000,    2000,    5000,
        10000, 30000, 60000, 120000, 300000, 1200000, 3600000, 7200000,
};

static struct fuzz_env env;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/**
 * LLVMFuzzerInitialize() - libFuzzer: once, before any input
 * @argc:	unused
 * @argv:	unused
 *
 * Return: 0
 */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_sandbox();
	fuzz_env_open(&env);
	return 0;
}

/**
 * one_record() - apply one record's clock step and feed its frame
 * @flags:	the record's flags byte
 * @frame:	its bytes
 * @len:	their number
 */
static void one_record(uint8_t flags, const uint8_t *frame, size_t len)
{
	size_t hl = (flags & 1) ? FUZZ_VNET_LEN : 0;
	uint8_t *buf;

	if (flags >> 4)
		fuzz_advance(&env, steps[flags >> 4]);
	buf = malloc(len ? len : 1);
	if (!buf)
		abort();
	memcpy(buf, frame, len);
	if (len > hl && (flags & 4))
		fuzz_fix_tcp(buf + hl, len - hl);
	if (len > hl && (flags & 2))
		fuzz_fix_csums(buf + hl, len - hl);
	fuzz_feed(&env, buf, len, flags & 1);
	free(buf);
}

/**
 * LLVMFuzzerTestOneInput() - libFuzzer: one input
 * @data:	records
 * @size:	bytes at @data
 *
 * Return: 0
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0;

	for (int n = 0; n < MAX_RECORDS && off + 3 <= size; n++) {
		size_t len = (size_t)data[off + 1] << 8 | data[off + 2];

		if (len > size - off - 3)
			len = size - off - 3;
		one_record(data[off], data + off + 3, len);
		off += 3 + len;
	}
	fuzz_env_tick(&env, RESET_EVERY);
	return 0;
}
