// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - frames from the guest: batched reads off the tap, each queue's
 * budget, and what a read error ends
 *
 * The datapath thread's side of the tap: it reads a batch, hands each frame
 * to the conditions or the stack, and ends the batch with TCP's flush. The
 * writing side is the stack's (tap_write.c).
 */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/virtio_net.h>
#include <netinet/in.h>
#include <event2/event.h>

#include "driver/cond/cond.h"
#include "driver/stack/eth.h"
#include "driver/core/log.h"
#include "driver/core/pcap.h"
#include "driver/tcp/tcp.h"
#include "driver/thread/tap_read.h"
#include "driver/stack/tap_write.h"
#include "driver/thread/thread.h"

/* Syscalls of reading frames, once running. */
const char *const tap_read_syscalls[] = {
        "read",
        "readv",
        NULL,
};

/* Frames handled per wakeup and queue before other events get a turn. */
#define TAP_BATCH 64
/* After a wakeup found one frame and then an empty queue, this many
 * wakeups read one frame only (tap_read_budget()).
 */
#define TAP_LONE_RUN 7

/* Bytes of a tap read: a frame, its vnet header and room to see a
 * frame too long, rounded up to the alignment, as aligned_alloc() wants.
 */
#define TAP_RX_BUF ((TAP_FRAME_MAX + 16 + 63) & ~63U)
/* Read errors in a row, other than EAGAIN, before tapir gives up. */
#define TAP_READ_ERRORS_MAX 256

/**
 * say_gone() - the line that says why tapir stops reading the tap
 * @c:		context
 * @err:	errno of the last read
 */
static void say_gone(const struct ctx *c, int err)
{
	if (err == EBADFD)
		err_msg("tap %s is gone (deleted, or its namespace closed): "
		        "exiting",
		        c->tap.ifname);
	else
		err_errno(err, "read from tap %s: exiting", c->tap.ifname);
}

/**
 * tap_read_failed() - a read from the tap failed: drained, one bad frame,
 *		       or gone
 * @c:		context
 * @err:	errno of the read
 *
 * A tap whose device was deleted (`ip link del`, or its namespace gone)
 * fails every read with EBADFD and stays readable: retrying would spin, so
 * that ends tapir with one line, as the namespace's network is gone. Other
 * errors concern one frame (tun returns EINVAL for a GSO frame the vnet
 * header can't describe, and drops it): counted, unless they go on.
 *
 * Return: true if the loop is ending
 */
static bool tap_read_failed(struct ctx *c, int err)
{
	static struct log_limit limit;
	static bool gone_said;

	if (err == EAGAIN || err == EINTR)
		return false;
	if (err != EBADFD && err != EIO &&
	    ++c->tap_read_errors < TAP_READ_ERRORS_MAX) {
		c->stats.drops[DROP_BAD_VNET_HDR]++;
		err_limited(&limit, err, "read from tap %s: frame dropped",
		            c->tap.ifname);
		return false;
	}
	/* Every queue's thread sees it: one line says it. */
	if (!__atomic_exchange_n(&gone_said, true, __ATOMIC_RELAXED))
		say_gone(c, err);
	tapio_stop_reading(c);
	thread_fail(c);
	return true;
}

/**
 * queue_of() - the queue index of a tap fd
 * @c:		context
 * @fd:		one of @c->tapfd
 *
 * Return: its index, 0 if it isn't one (it always is)
 */
static unsigned int queue_of(const struct ctx *c, int fd)
{
	for (unsigned int q = ctx_queue_first(c); q < ctx_queue_end(c); q++)
		if (c->tapfd[q] == fd)
			return q;
	return ctx_queue_first(c);
}

/**
 * frame_is_exchange() - whether a guest frame looks like one side of a
 *			 request/response exchange: a TCP segment that ends a
 *			 write (PSH) with data, and not a GSO burst
 * @f:		frame, at least an Ethernet header long
 *
 * Pure ACKs (a download's), GSO frames and full segments without PSH (an
 * upload's) and anything else come in runs that batch reads serve best.
 *
 * Return: true if so
 */
static bool frame_is_exchange(const struct frame *f)
{
	const uint8_t *l3 = f->data + 14;
	size_t len = f->len - 14, hl, tot;

	if (f->vh && f->vh->gso_type != VIRTIO_NET_HDR_GSO_NONE)
		return false;
	if (f->data[12] == 0x08 && f->data[13] == 0x00) {
		if (len < 20 || l3[9] != IPPROTO_TCP)
			return false;
		hl = (size_t)(l3[0] & 0x0f) * 4;
		tot = (size_t)l3[2] << 8 | l3[3];
	} else if (f->data[12] == 0x86 && f->data[13] == 0xdd) {
		if (len < 40 || l3[6] != IPPROTO_TCP)
			return false;
		hl = 40;
		tot = 40 + ((size_t)l3[4] << 8 | l3[5]);
	} else {
		return false;
	}
	if (tot > len || hl + 20 > tot)
		return false;
	/* PSH: the end of a write, where the sender waits for an answer. */
	return (l3[hl + 13] & 0x08) &&
	       tot > hl + (size_t)(l3[hl + 12] >> 4) * 4;
}

/**
 * tap_read_budget() - how many frames this wakeup reads, at most
 * @c:		context
 * @q:		queue
 *
 * Request/response traffic finds one frame per wakeup, and the read
 * after it finds the queue empty: a system call per frame for nothing.
 * The tap's event is level-triggered, so a frame left in the queue wakes
 * the loop again at once, and reading one frame and stopping loses
 * nothing. So after a wakeup that found exactly one frame, a data
 * segment (frame_is_exchange()), the next TAP_LONE_RUN wakeups read one
 * frame each; then a full one looks again. A frame that is not such a
 * segment ends the run at once (tap_read_cb()): the ACKs of a download
 * are read in batches, so that one peek serves a batch of them.
 *
 * Return: frames
 */
static int tap_read_budget(struct ctx *c, unsigned int q)
{
	if (!c->tap_lone[q])
		return TAP_BATCH;
	c->tap_lone[q]--;
	return 1;
}

/**
 * frame_of() - describe the bytes of a tap read as a frame
 * @c:		context
 * @buf:	vnet header (@c->vnet_len bytes), then the frame
 * @len:	bytes at @buf, at least @c->vnet_len + 14
 * @f:		filled, pointing into @buf
 */
static void frame_of(const struct ctx *c, uint8_t *buf, size_t len,
                     struct frame *f)
{
	f->vh = c->vnet_len ? (void *)buf : NULL;
	f->data = buf + c->vnet_len;
	f->len = len - c->vnet_len;
}

/**
 * frame_input() - capture a frame from the guest and handle it
 * @c:		context, @c->queue the frame's queue
 * @f:		the frame
 */
static void frame_input(struct ctx *c, struct frame *f)
{
	pcap_frame(c, f->data, f->len);
	c->rx = f;
	eth_input(c, f);
	c->rx = NULL;
}

/**
 * cond_read() - hand a frame just read to the network conditions
 * @c:		context
 * @buf:	vnet header, then the frame
 * @len:	bytes at @buf
 *
 * Return: true if they took it (held or dropped)
 */
static bool cond_read(struct ctx *c, uint8_t *buf, size_t len)
{
	struct iovec iov = {.iov_base = buf, .iov_len = len};

	return cond_frame(c, COND_TO_HOST, &iov, 1);
}

/**
 * tap_input_held() - handle a frame from the guest that the conditions
 *		      held until now
 * @c:		context, @c->queue the queue it was read on
 * @buf:	vnet header, then the frame, as read; suitably aligned
 * @len:	bytes at @buf, at least @c->vnet_len + 14
 */
void tap_input_held(struct ctx *c, uint8_t *buf, size_t len)
{
	struct frame f;

	frame_of(c, buf, len, &f);
	frame_input(c, &f);
}

/**
 * tap_read_cb() - drain up to TAP_BATCH frames from one tap queue
 * @fd:		tap fd
 * @what:	libevent event flags (unused)
 * @arg:	struct ctx
 *
 * Frames that start a flow tie it to this queue; the flow's frames to the
 * guest leave on it (flow_enter()).
 */
static void tap_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ctx *c = arg;
	uint8_t *rx_buf = c->tap_rx;
	struct queue_stats *qs;
	bool lone = false;
	unsigned int q;
	int budget;

	(void)what;
	q = queue_of(c, fd);
	qs = &c->stats.queues[q];
	budget = tap_read_budget(c, q);
	for (int i = 0; i < budget; i++) {
		ssize_t n = read(fd, rx_buf, TAP_RX_BUF);
		struct frame f;

		if (n < 0) {
			if (errno == EAGAIN && budget > 1 && i == 1 && lone)
				c->tap_lone[q] = TAP_LONE_RUN;
			if (errno == EAGAIN || tap_read_failed(c, errno))
				break;
			continue;
		}
		c->tap_read_errors = 0;
		/* A flow's handler may have entered another queue. */
		c->queue = q;
		if ((size_t)n < c->vnet_len + 14) {
			c->stats.drops[DROP_SHORT_FRAME]++;
			continue;
		}
		frame_of(c, rx_buf, (size_t)n, &f);
		c->stats.tap_rx_frames++;
		c->stats.tap_rx_bytes += f.len;
		qs->rx_frames++;
		qs->rx_bytes += f.len;
		/* Only a wakeup's first frame decides: whether a run starts
		 * (one frame, then an empty queue), or ends.
		 */
		if (i == 0)
			lone = frame_is_exchange(&f);
		if (i == 0 && !lone && budget == 1) {
			c->tap_lone[q] = 0;
			budget = TAP_BATCH;
		}
		if (!cond_active() || !cond_read(c, rx_buf, (size_t)n))
			frame_input(c, &f);
	}
	/* One ACK per connection for the whole batch, not one per segment. */
	tcp_flush(c);
}

/**
 * tapio_start() - make the tap fds non-blocking and watch them
 * @c:		context with tapfd[] and base set
 *
 * Return: 0 on success, -1 after printing one error line
 */
int tapio_start(struct ctx *c)
{
	c->tap_rx = aligned_alloc(64, TAP_RX_BUF);
	if (!c->tap_rx) {
		err_errno(errno, "tap %s: allocate the read buffer",
		          c->tap.ifname);
		return -1;
	}
	for (unsigned int i = ctx_queue_first(c); i < ctx_queue_end(c); i++) {
		int fl = fcntl(c->tapfd[i], F_GETFL);

		if (fl < 0 || fcntl(c->tapfd[i], F_SETFL, fl | O_NONBLOCK)) {
			err_errno(errno, "make tap %s non-blocking",
			          c->tap.ifname);
			return -1;
		}
		c->tap_ev[i] = event_new(c->base, c->tapfd[i],
		                         EV_READ | EV_PERSIST, tap_read_cb, c);
		if (!c->tap_ev[i] || event_add(c->tap_ev[i], NULL)) {
			err_msg("watch tap %s: libevent failed", c->tap.ifname);
			return -1;
		}
	}
	return 0;
}

/**
 * tapio_stop_reading() - stop watching the tap fds, keep them open
 * @c:		context
 */
void tapio_stop_reading(struct ctx *c)
{
	for (unsigned int i = ctx_queue_first(c); i < ctx_queue_end(c); i++)
		if (c->tap_ev[i])
			event_del(c->tap_ev[i]);
}

/**
 * tapio_stop() - stop watching and close the tap fds
 * @c:		context
 */
void tapio_stop(struct ctx *c)
{
	for (unsigned int i = ctx_queue_first(c); i < ctx_queue_end(c); i++) {
		if (c->tap_ev[i])
			event_free(c->tap_ev[i]);
		c->tap_ev[i] = NULL;
		if (c->tapfd[i] >= 0)
			close(c->tapfd[i]);
		c->tapfd[i] = -1;
	}
	free(c->tap_rx);
	c->tap_rx = NULL;
}
