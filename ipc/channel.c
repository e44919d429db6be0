// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - length-prefixed messages with SCM_RIGHTS fds on a stream socket */

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ipc/channel.h"

/* The kernel's SCM_MAX_FD: no single sendmsg() can carry more. */
#define CHANNEL_MAX_FDS 253
#define CHANNEL_HDR_LEN 4

/*
 * Big enough for every fd the kernel may attach, so that a peer sending too
 * many fds is seen and its fds closed, rather than dropped by the kernel.
 */
union cmsg_buf {
	char buf[CMSG_SPACE(CHANNEL_MAX_FDS * sizeof(int))];
	struct cmsghdr align;
};

/**
 * ipc_send() - send one framed message, with fds on its first byte
 * @sock:	connected SOCK_STREAM unix socket
 * @body:	message body
 * @len:	length of @body, 1..IPC_MAX_BODY
 * @fds:	fds to pass along, may be NULL if @nfds is 0
 * @nfds:	number of entries in @fds
 *
 * A timeout set with SO_SNDTIMEO surfaces as -EAGAIN, possibly after part
 * of the message went out; the channel is unusable after any error.
 *
 * Return: 0 on success, -EINVAL or -EMSGSIZE on bad arguments, else -errno
 *	   from sendmsg() (-EPIPE when the peer is gone: no SIGPIPE is raised)
 */
int ipc_send(int sock, const char *body, size_t len, const int *fds,
             unsigned int nfds)
{
	uint32_t hdr = htonl((uint32_t)len);
	union cmsg_buf cbuf;
	struct iovec iov[2];
	struct msghdr msg;

	if (!body || !len || (nfds && !fds) || nfds > CHANNEL_MAX_FDS)
		return -EINVAL;
	if (len > IPC_MAX_BODY)
		return -EMSGSIZE;

	iov[0].iov_base = &hdr;
	iov[0].iov_len = sizeof(hdr);
	iov[1].iov_base = (void *)body;
	iov[1].iov_len = len;
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = iov;
	msg.msg_iovlen = 2;

	if (nfds) {
		struct cmsghdr *cmsg;

		memset(&cbuf, 0, sizeof(cbuf));
		msg.msg_control = cbuf.buf;
		msg.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		cmsg = CMSG_FIRSTHDR(&msg);
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		cmsg->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(cmsg), fds, nfds * sizeof(int));
	}

	while (msg.msg_iovlen) {
		ssize_t n = sendmsg(sock, &msg, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;

		/* The fds went with the first bytes; never send them twice. */
		msg.msg_control = NULL;
		msg.msg_controllen = 0;

		while (msg.msg_iovlen && (size_t)n >= msg.msg_iov->iov_len) {
			n -= (ssize_t)msg.msg_iov->iov_len;
			msg.msg_iov++;
			msg.msg_iovlen--;
		}
		if (msg.msg_iovlen) {
			msg.msg_iov->iov_base =
			        (char *)msg.msg_iov->iov_base + n;
			msg.msg_iov->iov_len -= (size_t)n;
		}
	}
	return 0;
}

/**
 * struct rx - fds collected while receiving one message
 * @fds:	caller's array
 * @maxfds:	size of @fds
 * @nfds:	fds stored in @fds so far
 * @bad:	more than @maxfds fds arrived, or the kernel truncated them
 */
struct rx {
	int *fds;
	unsigned int maxfds;
	unsigned int nfds;
	bool bad;
};

/**
 * collect_fds() - take the SCM_RIGHTS fds out of a received message
 * @rx:		where to store them
 * @msg:	the message returned by recvmsg()
 *
 * fds beyond @rx->maxfds are closed at once: they must not leak whatever
 * the outcome.
 */
static void collect_fds(struct rx *rx, struct msghdr *msg)
{
	struct cmsghdr *cmsg;

	if (msg->msg_flags & MSG_CTRUNC)
		rx->bad = true;
	for (cmsg = CMSG_FIRSTHDR(msg); cmsg; cmsg = CMSG_NXTHDR(msg, cmsg)) {
		size_t n;

		if (cmsg->cmsg_level != SOL_SOCKET ||
		    cmsg->cmsg_type != SCM_RIGHTS)
			continue;
		n = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int),
			       sizeof(fd));
			if (rx->nfds < rx->maxfds) {
				rx->fds[rx->nfds++] = fd;
			} else {
				close(fd);
				rx->bad = true;
			}
		}
	}
}

/**
 * read_full() - read exactly @len bytes, collecting any fds that come along
 * @sock:	the socket
 * @buf:	destination
 * @len:	bytes wanted
 * @rx:		fd collection state
 *
 * Return: bytes read, less than @len only at EOF, or -errno
 */
static ssize_t read_full(int sock, void *buf, size_t len, struct rx *rx)
{
	size_t got = 0;

	while (got < len) {
		union cmsg_buf cbuf;
		struct iovec iov;
		struct msghdr msg;
		ssize_t n;

		iov.iov_base = (char *)buf + got;
		iov.iov_len = len - got;
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = cbuf.buf;
		msg.msg_controllen = sizeof(cbuf.buf);

		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		collect_fds(rx, &msg);
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/**
 * ipc_recv() - receive one framed message and the fds sent with it
 * @sock:	connected SOCK_STREAM unix socket
 * @body:	set to the malloc'd, NUL-terminated body (caller frees), or
 *		NULL on error
 * @len:	set to the body length, without the terminating NUL
 * @fds:	array receiving the fds, opened with O_CLOEXEC
 * @maxfds:	size of @fds; more fds than this is a protocol error
 * @nfds:	set to the number of fds stored in @fds (0 on error)
 *
 * On error every received fd is closed. A timeout set with SO_RCVTIMEO
 * surfaces as -EAGAIN.
 *
 * Return: 0 on success; -ENODATA if the peer closed before sending anything,
 *	   -EPIPE if it closed mid-message, -EPROTO for a zero length, too
 *	   many fds or truncated ancillary data, -EMSGSIZE for a length over
 *	   IPC_MAX_BODY, -EINVAL on bad arguments, -ENOMEM, or -errno from
 *	   recvmsg()
 */
int ipc_recv(int sock, char **body, size_t *len, int *fds, unsigned int maxfds,
             unsigned int *nfds)
{
	struct rx rx = {.fds = fds, .maxfds = maxfds};
	unsigned char hdr[CHANNEL_HDR_LEN];
	char *buf = NULL;
	uint32_t blen;
	ssize_t n;
	int ret;

	if (body)
		*body = NULL;
	if (len)
		*len = 0;
	if (nfds)
		*nfds = 0;
	if (!body || !len || !nfds || (maxfds && !fds))
		return -EINVAL;

	n = read_full(sock, hdr, sizeof(hdr), &rx);
	if (n < 0) {
		ret = (int)n;
		goto err;
	}
	if (n == 0) {
		ret = -ENODATA;
		goto err;
	}
	if (n < (ssize_t)sizeof(hdr)) {
		ret = -EPIPE;
		goto err;
	}
	if (rx.bad) {
		ret = -EPROTO;
		goto err;
	}

	blen = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 |
	       (uint32_t)hdr[2] << 8 | (uint32_t)hdr[3];
	if (blen == 0) {
		ret = -EPROTO;
		goto err;
	}
	if (blen > IPC_MAX_BODY) {
		ret = -EMSGSIZE;
		goto err;
	}

	/*
	 * The sender attaches fds to the header's bytes: any arriving with the
	 * body are a protocol error, so leave no room for them.
	 */
	rx.maxfds = rx.nfds;
	buf = malloc((size_t)blen + 1);
	if (!buf) {
		ret = -ENOMEM;
		goto err;
	}
	n = read_full(sock, buf, blen, &rx);
	if (n < 0) {
		ret = (int)n;
		goto err;
	}
	if ((size_t)n < blen) {
		ret = -EPIPE;
		goto err;
	}
	if (rx.bad) {
		ret = -EPROTO;
		goto err;
	}
	buf[blen] = '\0';

	*body = buf;
	*len = blen;
	*nfds = rx.nfds;
	return 0;
err:
	free(buf);
	for (unsigned int i = 0; i < rx.nfds; i++) {
		close(fds[i]);
		fds[i] = -1;
	}
	return ret;
}
