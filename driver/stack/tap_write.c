// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - frames to the guest: vnet header, network conditions, capture,
 * and the tap's write
 *
 * Every frame the stack and the protocols make for the guest goes out
 * here, one frame a write; the conditions may hold it (cond.c) and give
 * it back later (tap_write_held()).
 */

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/uio.h>
#include <linux/virtio_net.h>

#include "driver/cond/cond.h"
#include "driver/core/log.h"
#include "driver/core/pcap.h"
#include "driver/stack/tap_write.h"

/* Syscalls of writing frames, once running. */
const char *const tap_write_syscalls[] = {
        "write",
        "writev",
        NULL,
};

/* A link set down fails every write (EIO) until it is up again. */
static struct log_limit write_limit;

/**
 * tap_write() - write one frame to the tap, count and capture it
 * @c:		context; the frame goes out on queue @c->queue
 * @v:		with vnet headers, the header in @v[0]; then the frame
 * @n:		entries in @v
 *
 * Frames that can't be written are counted as drops: the guest's TCP or
 * the application recovers, and blocking here would stall every other
 * flow.
 *
 * Return: 0 on success, -1 if the frame was dropped
 */
static int tap_write(struct ctx *c, const struct iovec *v, int n)
{
	const struct iovec *frame = c->vnet_len ? v + 1 : v;
	int k = c->vnet_len ? n - 1 : n;
	unsigned int q = c->queue;
	size_t len = 0;

	if (q < ctx_queue_first(c) || q >= ctx_queue_end(c))
		q = ctx_queue_first(c);
	if (writev(c->tapfd[q], v, n) < 0) {
		c->stats.drops[DROP_TAP_WRITE]++;
		if (log_debug_enabled)
			err_limited(&write_limit, errno, "write to tap %s",
			            c->tap.ifname);
		return -1;
	}
	for (int i = 0; i < k; i++)
		len += frame[i].iov_len;
	c->stats.tap_tx_frames++;
	c->stats.tap_tx_bytes += len;
	c->stats.queues[q].tx_frames++;
	c->stats.queues[q].tx_bytes += len;
	if (c->pcap)
		pcap_frame_iov(c, frame, k);
	return 0;
}

/**
 * tap_send() - write one frame (with its vnet header) to the tap
 * @c:		context
 * @vh:		GSO/checksum metadata, or NULL for a plain, complete frame
 * @iov:	the frame, starting with the Ethernet header
 * @iovcnt:	entries in @iov, at most 14
 *
 * The frame goes out on queue @c->queue. A tap fd takes exactly one frame
 * per write. Network conditions may hold it for later or drop it
 * (cond.c), which counts as sent.
 *
 * Return: 0 on success, -1 if the frame was dropped (tap_write())
 */
int tap_send(struct ctx *c, const struct virtio_net_hdr *vh,
             const struct iovec *iov, int iovcnt)
{
	/* The tap may take 10 or 12 header bytes (num_buffers after the
	 * basic header): send ours with zeros after it, never stack bytes.
	 */
	struct virtio_net_hdr_mrg_rxbuf hdr = {0};
	struct iovec v[16];
	int n = 0;

	if (iovcnt > 14 || c->vnet_len > sizeof(hdr))
		return -1;
	if (c->vnet_len) {
		if (vh)
			hdr.hdr = *vh;
		v[n].iov_base = &hdr;
		v[n++].iov_len = c->vnet_len;
	}
	for (int i = 0; i < iovcnt; i++)
		v[n++] = iov[i];
	if (cond_active() && cond_frame(c, COND_TO_GUEST, v, n))
		return 0;
	return tap_write(c, v, n);
}

/**
 * tap_write_held() - write a frame that the conditions held until now
 * @c:		context, @c->queue the queue it was meant for
 * @buf:	vnet header, then the frame
 * @len:	bytes at @buf
 */
void tap_write_held(struct ctx *c, uint8_t *buf, size_t len)
{
	struct iovec v[2] = {
	        {.iov_base = buf, .iov_len = c->vnet_len},
	        {.iov_base = buf + c->vnet_len, .iov_len = len - c->vnet_len}};

	(void)tap_write(c, c->vnet_len ? v : v + 1, c->vnet_len ? 2 : 1);
}
