// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - --pcap: buffered capture of every tap frame, pcap format */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <event2/event.h>

#include "driver/core/log.h"
#include "driver/core/pcap.h"

/* Syscalls of writing the capture, once running. */
const char *const pcap_syscalls[] = {
        "write", "fstat", "newfstatat", "lseek", "close", NULL,
};

#define PCAP_MAGIC 0xa1b2c3d4
#define PCAP_LINKTYPE_ETHERNET 1
#define PCAP_SNAPLEN 262144

/**
 * struct pcap_state - an open capture file
 * @f:		stdio stream with a large buffer: no flush or fsync per frame
 * @buf:	that buffer
 * @path:	its path, for messages (the options' string)
 * @flush:	once a second, writes what the buffer holds, so that a
 *		reader of the live file sees recent frames; never fsync
 */
struct pcap_state {
	FILE *f;
	char *buf;
	const char *path;
	struct event *flush;
};

static void pcap_stop(struct ctx *c, int err, const char *what);

/**
 * flush_cb() - write what the buffer holds (once a second)
 * @fd:		unused
 * @what:	unused
 * @arg:	struct ctx
 */
static void flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ctx *c = arg;

	(void)fd;
	(void)what;
	if (c->pcap && fflush(c->pcap->f))
		pcap_stop(c, errno ? errno : EIO, ": capture stopped");
}

/**
 * pcap_open() - create the capture file and write its global header
 * @c:		context with its event base; c->pcap is set on success
 * @path:	file to create or truncate; kept, for messages
 *
 * Return: 0 on success, -1 after printing one error line
 */
int pcap_open(struct ctx *c, const char *path)
{
	const uint32_t hdr[6] = {PCAP_MAGIC,   2 | (4 << 16),         0, 0,
	                         PCAP_SNAPLEN, PCAP_LINKTYPE_ETHERNET};
	struct pcap_state *p = calloc(1, sizeof(*p));

	if (!p || !(p->buf = malloc(1 << 20)) || !(p->f = fopen(path, "we"))) {
		err_errno(p ? errno : ENOMEM, "open capture file %s", path);
		if (p)
			free(p->buf);
		free(p);
		return -1;
	}
	if (setvbuf(p->f, p->buf, _IOFBF, 1 << 20) ||
	    fwrite(hdr, sizeof(hdr), 1, p->f) != 1) {
		err_errno(errno ? errno : EIO, "write capture file %s", path);
		fclose(p->f);
		free(p->buf);
		free(p);
		return -1;
	}
	p->path = path;
	c->pcap = p;
	p->flush = event_new(c->base, -1, EV_PERSIST, flush_cb, c);
	if (!p->flush || event_add(p->flush, &(struct timeval){1, 0})) {
		err_msg("capture file %s: flush timer: libevent failed", path);
		pcap_stop(c, 0, "");
		return -1;
	}
	return 0;
}

/**
 * pcap_stop() - close the capture file and forget it
 * @c:		context with a capture
 * @err:	errno of a write that failed already, or 0
 * @what:	appended to the message, e.g. ": capture stopped"
 *
 * fclose() writes what is still buffered; if that or an earlier write
 * failed (ENOSPC), the capture is incomplete, and one line says so.
 */
static void pcap_stop(struct ctx *c, int err, const char *what)
{
	struct pcap_state *p = c->pcap;

	if (p->flush)
		event_free(p->flush);
	if (fclose(p->f) && !err)
		err = errno ? errno : EIO;
	if (err)
		err_errno(err, "write capture file %s%s", p->path, what);
	free(p->buf);
	free(p);
	c->pcap = NULL;
}

/**
 * pcap_record_header() - write the per-frame record header
 * @p:		capture
 * @len:	frame length
 *
 * Return: 0 on success, -1 if the stream failed
 */
static int pcap_record_header(struct pcap_state *p, size_t len)
{
	struct timespec ts;
	uint32_t caplen = len > PCAP_SNAPLEN ? PCAP_SNAPLEN : (uint32_t)len;
	uint32_t rec[4];

	/* Wall-clock time, not clock.c's: a capture's timestamps are read
	 * next to other captures and logs, and a fake clock would only make
	 * a test's capture look older.
	 */
	clock_gettime(CLOCK_REALTIME, &ts);
	rec[0] = (uint32_t)ts.tv_sec;
	rec[1] = (uint32_t)(ts.tv_nsec / 1000);
	rec[2] = caplen;
	rec[3] = (uint32_t)len;
	return fwrite(rec, sizeof(rec), 1, p->f) == 1 ? 0 : -1;
}

/**
 * pcap_frame() - capture one contiguous frame, if capturing
 * @c:		context
 * @data:	Ethernet frame
 * @len:	its length
 */
void pcap_frame(struct ctx *c, const void *data, size_t len)
{
	struct iovec iov = {.iov_base = (void *)data, .iov_len = len};

	pcap_frame_iov(c, &iov, 1);
}

/**
 * pcap_frame_iov() - capture one frame given as an iovec, if capturing
 * @c:		context
 * @iov:	frame pieces
 * @iovcnt:	number of pieces
 *
 * A failed write (ENOSPC) ends the capture with one line: the file keeps
 * what reached it, and no later frame tries to write again.
 */
void pcap_frame_iov(struct ctx *c, const struct iovec *iov, int iovcnt)
{
	size_t len = 0, left;

	if (!c->pcap)
		return;
	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	if (pcap_record_header(c->pcap, len))
		goto fail;
	left = len > PCAP_SNAPLEN ? PCAP_SNAPLEN : len;
	for (int i = 0; i < iovcnt && left; i++) {
		size_t n = iov[i].iov_len < left ? iov[i].iov_len : left;

		if (fwrite(iov[i].iov_base, 1, n, c->pcap->f) != n)
			goto fail;
		left -= n;
	}
	return;
fail:
	pcap_stop(c, errno ? errno : EIO, ": capture stopped");
}

/**
 * pcap_close() - flush and close the capture
 * @c:		context
 */
void pcap_close(struct ctx *c)
{
	if (c->pcap)
		pcap_stop(c, 0, "");
}
