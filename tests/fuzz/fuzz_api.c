// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - fuzzing: one API request, as the socket delivers it
 *
 * Input: one byte choosing the size of each read (1-256 bytes, as a client
 * may trickle a request), then the request bytes. They go through
 * api_request_scan() after every read, exactly as driver/api/api.c's read_cb()
 * does, then EOF; a complete request is answered by api_respond() with the
 * real forward table, whose listeners open on the fuzzer's own loopback.
 * Every reply must be one JSON value. Forwards accumulate across inputs
 * and the table is rebuilt every RESET_EVERY inputs.
 */

#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "driver/api/api.h"
#include "driver/fwd/hostfwd.h"
#include "tests/fuzz/fuzzenv.h"

#define RESET_EVERY 64

static struct fuzz_env env;
static unsigned long inputs;

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
	env.o.forward_mode = FORWARD_TAP;
	if (hostfwd_init(&env.c))
		abort();
	return 0;
}

/**
 * deliver() - read @data in @chunk-byte pieces until a request is complete
 * @data:	request bytes
 * @size:	their number
 * @chunk:	bytes per read
 *
 * Return: the reply, malloc'd, or NULL on ENOMEM
 */
static char *deliver(const uint8_t *data, size_t size, size_t chunk)
{
	static char buf[API_MAX_REQUEST + 1];
	size_t len = 0, off = 0;

	for (;;) {
		size_t n = size - off;
		bool eof;

		if (n > chunk)
			n = chunk;
		if (n > sizeof(buf) - len)
			n = sizeof(buf) - len;
		eof = n == 0;
		memcpy(buf + len, data + off, n);
		len += n;
		off += n;
		switch (api_request_scan(buf, len, eof)) {
		case API_COMPLETE:
			return api_respond(&env.c, &api_hostfwd_ops, buf, len);
		case API_TOO_LARGE:
			return api_error_reply("bad request: too large "
			                       "message");
		case API_MORE:
			if (eof)
				abort(); /* EOF always completes a request */
			break;
		}
	}
}

/**
 * LLVMFuzzerTestOneInput() - libFuzzer: one input
 * @data:	chunk-size byte and request
 * @size:	bytes at @data
 *
 * Return: 0
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *reply;
	json_t *v;

	if (size < 1)
		return 0;
	reply = deliver(data + 1, size - 1, (size_t)data[0] + 1);
	if (reply) {
		v = json_loads(reply, 0, NULL);
		if (!v)
			abort(); /* a reply that isn't JSON */
		json_decref(v);
		free(reply);
	}
	if (++inputs % RESET_EVERY == 0) {
		hostfwd_cleanup(&env.c);
		if (hostfwd_init(&env.c))
			abort();
	}
	return 0;
}
