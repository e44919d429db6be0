// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - datapath threads' inboxes: messages between the threads
 *
 * Threads share nothing on the frame path. They talk through inboxes: a
 * mutex-protected list woken by an eventfd. A receiver takes its list
 * whole and handles it without the lock, so that a sender never waits for
 * a batch of frames; each inbox holds INBOX_BYTES_MAX of frames and
 * accepted connections at most, so a thread that stalls can't make
 * another one grow without a bound.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <event2/event.h>

#include "driver/host/lifecycle.h"
#include "driver/core/log.h"
#include "driver/tcp/tcp.h"
#include "driver/thread/thread_internal.h"

/* Bytes of messages queued in one inbox at most. Beyond it, frames are
 * dropped and accepted connections opened by their accepter.
 */
#define INBOX_BYTES_MAX (8U << 20)

/**
 * msg_size() - bytes a message counts for against INBOX_BYTES_MAX
 * @m:		message
 *
 * Return: its size, 0 for the ones that can't pile up
 */
static size_t msg_size(const struct msg *m)
{
	if (m->type == MSG_FRAME || m->type == MSG_ACCEPT)
		return sizeof(*m) + m->len;
	return 0;
}

/**
 * msg_new() - a zeroed message with room for @len data bytes
 * @type:	enum msg_type
 * @len:	data bytes
 *
 * Return: the message, or NULL on ENOMEM
 */
struct msg *msg_new(enum msg_type type, size_t len)
{
	struct msg *m = calloc(1, sizeof(*m) + len);

	if (m) {
		m->type = type;
		m->fd = -1;
		m->len = len;
	}
	return m;
}

/**
 * inbox_post() - queue a message for a thread and wake it
 * @t:		receiver
 * @m:		message, owned by the inbox from here on
 *
 * Return: 0, or -1 if the inbox is full (the message is freed, its fd
 *	   left to the caller)
 */
int inbox_post(struct thread *t, struct msg *m)
{
	static struct log_limit limit;
	uint64_t one = 1;
	bool wake;

	m->next = NULL;
	pthread_mutex_lock(&t->lock);
	if (msg_size(m) && t->bytes + msg_size(m) > INBOX_BYTES_MAX) {
		pthread_mutex_unlock(&t->lock);
		free(m);
		return -1;
	}
	t->bytes += msg_size(m);
	wake = !t->head;
	*t->tail = m;
	t->tail = &m->next;
	pthread_mutex_unlock(&t->lock);
	/* Can't fail but for a closed fd: the message then waits in the
	 * list, and the thread sees it at its next wakeup.
	 */
	if (wake && write(t->efd, &one, sizeof(one)) < 0)
		err_limited(&limit, errno, "wake datapath thread %u",
		            (unsigned int)(t - t->set->t));
	return 0;
}

/**
 * handle() - act on one message
 * @c:		receiving context
 * @t:		its thread
 * @m:		message, freed here
 */
static void handle(struct ctx *c, struct thread *t, struct msg *m)
{
	switch (m->type) {
	case MSG_FRAME:
		handoff_frame(c, m);
		break;
	case MSG_ACCEPT:
		place_accepted(c, m);
		break;
	case MSG_STATS:
		stats_copy(t);
		break;
	case MSG_STATS_DONE:
		stats_copied(c, m->from);
		break;
	case MSG_FAIL:
		lifecycle_fail(c);
		break;
	case MSG_STOP:
		event_base_loopbreak(c->base);
		break;
	}
	if (m->fd >= 0)
		close(m->fd);
	free(m);
}

/**
 * inbox_cb() - drain the inbox
 * @fd:		eventfd
 * @what:	unused
 * @arg:	struct thread
 */
static void inbox_cb(evutil_socket_t fd, short what, void *arg)
{
	struct thread *t = arg;
	struct msg *m, *next;
	uint64_t v;

	(void)what;
	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		debug_msg("read datapath thread wakeup: %s", strerror(errno));
	pthread_mutex_lock(&t->lock);
	m = t->head;
	t->head = NULL;
	t->tail = &t->head;
	t->bytes = 0;
	pthread_mutex_unlock(&t->lock);
	for (; m; m = next) {
		next = m->next;
		handle(t->c, t, m);
	}
	tcp_flush(t->c);
}

/**
 * inbox_init() - the lock, list, eventfd and stop and fail messages of a
 *		  thread, watched in its loop
 * @t:		thread, its @c set up with a base
 *
 * Return: 0 on success, -1 after printing one error line
 */
int inbox_init(struct thread *t)
{
	t->efd = -1;
	t->tail = &t->head;
	if (pthread_mutex_init(&t->lock, NULL)) {
		err_msg("datapath thread: initialise a lock failed");
		return -1;
	}
	t->stop = msg_new(MSG_STOP, 0);
	t->fail = msg_new(MSG_FAIL, 0);
	if (!t->stop || !t->fail) {
		err_errno(ENOMEM, "datapath thread: allocate");
		return -1;
	}
	t->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (t->efd < 0) {
		err_errno(errno, "datapath thread: eventfd");
		return -1;
	}
	t->ev = event_new(t->c->base, t->efd, EV_READ | EV_PERSIST, inbox_cb,
	                  t);
	if (!t->ev || event_add(t->ev, NULL)) {
		err_msg("datapath thread: watch the inbox: libevent failed");
		return -1;
	}
	return 0;
}

/**
 * inbox_cleanup() - free what is left in an inbox, and its eventfd
 * @t:		thread, stopped, its inbox set up by inbox_init()
 */
void inbox_cleanup(struct thread *t)
{
	struct msg *m, *next;

	for (m = t->head; m; m = next) {
		next = m->next;
		if (m->fd >= 0)
			close(m->fd);
		free(m);
	}
	t->head = NULL;
	t->tail = &t->head;
	free(t->stop);
	free(t->fail);
	t->stop = t->fail = NULL;
	if (t->ev)
		event_free(t->ev);
	t->ev = NULL;
	if (t->efd >= 0)
		close(t->efd);
	t->efd = -1;
	pthread_mutex_destroy(&t->lock);
}
