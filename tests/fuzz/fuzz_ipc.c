// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - fuzzing: the namespace helper's reply, through the channel
 *
 * Input: one mode byte, then the bytes the "helper" sends. Mode bits 0-1:
 * fds attached (copies of /dev/null, which are no taps); bit 2: send the
 * bytes raw, length header and all, instead of framing them with
 * ipc_send(); bit 3: pasta mode, where the socket tables follow the tap
 * fds (bit 4: up to 4 more fds then, copies of /proc/self/net/tcp, which
 * are procfs files). tapir's side is nshelper_receive_reply(), the code that
 * reads every real reply. The body alone also goes through
 * ipc_reply_decode(), and a reply it accepts must survive an
 * encode/decode round trip.
 */

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "driver/host/nshelper.h"
#include "driver/front/pasta_cli.h"
#include "ipc/channel.h"
#include "ipc/msg.h"
#include "tests/fuzz/fuzzenv.h"

static struct opts o;
static int devnull = -1, proctable = -1;

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
	/* What `tapir run` asks the helper for. */
	o.queues = 1;
	strcpy(o.ifname, "tap0");
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	proctable = open("/proc/self/net/tcp", O_RDONLY | O_CLOEXEC);
	if (devnull < 0 || proctable < 0)
		abort();
	return 0;
}

/**
 * round_trip() - decode @body; if it is a reply, encode and decode it again
 * @body:	message body
 * @len:	its length
 */
static void round_trip(const uint8_t *body, size_t len)
{
	struct ipc_reply r, again;
	char why[256], *text;

	if (ipc_reply_decode((const char *)body, len, &r, why, sizeof(why)))
		return;
	text = ipc_reply_encode(&r);
	if (!text)
		return;
	if (ipc_reply_decode(text, strlen(text), &again, why, sizeof(why)) ||
	    again.kind != r.kind)
		abort(); /* we wrote something we can't read back */
	free(text);
}

/**
 * LLVMFuzzerTestOneInput() - libFuzzer: one input
 * @data:	mode byte and the helper's bytes
 * @size:	bytes at @data
 *
 * Return: 0
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int sv[2], fds[8], got[TAPIR_MAX_QUEUES], tables[NS_TABLES];
	static const struct pasta_opts po;
	unsigned int nfds;
	struct ipc_tap_info info;
	const uint8_t *body = data + 1;
	size_t len = size - 1;

	if (size < 1 || size > 65536)
		return 0;
	nfds = data[0] & 3;
	o.pasta = data[0] & 8 ? &po : NULL;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		abort();
	for (unsigned int i = 0; i < nfds; i++)
		fds[i] = fcntl(devnull, F_DUPFD_CLOEXEC, 0);
	for (unsigned int i = 0; (data[0] & 16) && i < NS_TABLES; i++)
		fds[nfds++] = fcntl(proctable, F_DUPFD_CLOEXEC, 0);
	if ((data[0] & 4) || !len) {
		if (len && write(sv[1], body, len) != (ssize_t)len)
			abort();
	} else if (ipc_send(sv[1], (const char *)body, len, fds, nfds)) {
		abort();
	}
	close(sv[1]);
	for (unsigned int i = 0; i < nfds; i++)
		close(fds[i]);
	if (!nshelper_receive_reply(sv[0], &o, &info, got, tables)) {
		for (unsigned int i = 0; i < info.queues; i++)
			close(got[i]);
		for (unsigned int i = 0; o.pasta && i < NS_TABLES; i++)
			close(tables[i]);
	}
	close(sv[0]);
	round_trip(body, len);
	return 0;
}
