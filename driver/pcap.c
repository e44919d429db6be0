// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - --pcap: buffered capture of every tap frame, pcap format */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "log.h"
#include "pcap.h"

#define PCAP_MAGIC 0xa1b2c3d4
#define PCAP_LINKTYPE_ETHERNET 1
#define PCAP_SNAPLEN 262144

/**
 * struct pcap_state - an open capture file
 * @f:		stdio stream with a large buffer: no flush or fsync per frame
 * @buf:	that buffer
 */
struct pcap_state {
	FILE *f;
	char *buf;
};

/**
 * pcap_open() - create the capture file and write its global header
 * @c:		context; c->pcap is set on success
 * @path:	file to create or truncate
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
	setvbuf(p->f, p->buf, _IOFBF, 1 << 20);
	fwrite(hdr, sizeof(hdr), 1, p->f);
	c->pcap = p;
	return 0;
}

/**
 * pcap_record_header() - write the per-frame record header
 * @p:		capture
 * @len:	frame length
 */
static void pcap_record_header(struct pcap_state *p, size_t len)
{
	struct timespec ts;
	uint32_t caplen = len > PCAP_SNAPLEN ? PCAP_SNAPLEN : (uint32_t)len;
	uint32_t rec[4];

	clock_gettime(CLOCK_REALTIME, &ts);
	rec[0] = (uint32_t)ts.tv_sec;
	rec[1] = (uint32_t)(ts.tv_nsec / 1000);
	rec[2] = caplen;
	rec[3] = (uint32_t)len;
	fwrite(rec, sizeof(rec), 1, p->f);
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
 */
void pcap_frame_iov(struct ctx *c, const struct iovec *iov, int iovcnt)
{
	size_t len = 0, left;

	if (!c->pcap)
		return;
	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	pcap_record_header(c->pcap, len);
	left = len > PCAP_SNAPLEN ? PCAP_SNAPLEN : len;
	for (int i = 0; i < iovcnt && left; i++) {
		size_t n = iov[i].iov_len < left ? iov[i].iov_len : left;

		fwrite(iov[i].iov_base, 1, n, c->pcap->f);
		left -= n;
	}
}

/**
 * pcap_close() - flush and close the capture
 * @c:		context
 */
void pcap_close(struct ctx *c)
{
	if (!c->pcap)
		return;
	fclose(c->pcap->f);
	free(c->pcap->buf);
	free(c->pcap);
	c->pcap = NULL;
}
