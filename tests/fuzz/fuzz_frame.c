// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - fuzzing: one frame from the guest into eth_input()
 *
 * Input: one mode byte, then the frame. Mode bit 0: the frame starts with
 * a FUZZ_VNET_LEN-byte vnet header, as on a tap with IFF_VNET_HDR; bit 1:
 * fix the IPv4 header and L4 checksums first, so the fuzzer gets past
 * them. The context lives across inputs (a SYN may open a connection to
 * the host peer) and is rebuilt every RESET_EVERY inputs.
 */

#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzzenv.h"

#define RESET_EVERY 256

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
 * LLVMFuzzerTestOneInput() - libFuzzer: one input
 * @data:	mode byte and frame
 * @size:	bytes at @data
 *
 * Return: 0
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool vnet;
	uint8_t *buf;
	size_t len;

	if (size < 1)
		return 0;
	vnet = data[0] & 1;
	len = size - 1;
	buf = malloc(len ? len : 1);
	if (!buf)
		abort();
	memcpy(buf, data + 1, len);
	if ((data[0] & 2) && len > (vnet ? FUZZ_VNET_LEN : 0))
		fuzz_fix_csums(buf + (vnet ? FUZZ_VNET_LEN : 0),
		               len - (vnet ? FUZZ_VNET_LEN : 0));
	fuzz_feed(&env, buf, len, vnet);
	free(buf);
	fuzz_env_tick(&env, RESET_EVERY);
	return 0;
}
