// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests for the namespace socket helper: what it must not keep
 *
 * The helper's target is a FIFO instead of a network namespace: opening it
 * blocks, so the helper is caught right before it would join, with what
 * it holds at that moment.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <event2/event.h>

#include "driver/nssock.h"
#include "tests/unit/unit.h"

/* How long the helper may take to get rid of our fds. */
#define CLOSE_WAIT_MS 5000

/**
 * struct target - a context whose target namespace is a FIFO
 * @o:		options naming it
 * @c:		context with an event base
 * @dir:	temporary directory holding the FIFO
 */
struct target {
	struct opts o;
	struct ctx c;
	char dir[64];
};

/**
 * target_init() - a context whose namespace helper blocks in open()
 * @t:		filled
 *
 * Return: 0, or -1 if the FIFO or event base could not be made
 */
static int target_init(struct target *t)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->dir, sizeof(t->dir), "/tmp/tapir-unit.XXXXXX");
	if (!mkdtemp(t->dir))
		return -1;
	t->o.netns_type = NETNS_PATH;
	snprintf(t->o.netns_path, sizeof(t->o.netns_path), "%s/netns", t->dir);
	if (mkfifo(t->o.netns_path, 0600))
		return -1;
	t->c.o = &t->o;
	t->c.base = event_base_new();
	return t->c.base ? 0 : -1;
}

/**
 * target_cleanup() - remove the FIFO and free the event base
 * @t:		from target_init()
 */
static void target_cleanup(struct target *t)
{
	unlink(t->o.netns_path);
	rmdir(t->dir);
	if (t->c.base)
		event_base_free(t->c.base);
}

/**
 * helper_dropped() - whether the helper let go of a pipe's write end
 *
 * A pipe's read end hangs up once no process holds the write end: ours
 * is closed after the helper started, so the hang-up means the helper
 * closed its copy (before blocking on the FIFO, before any namespace).
 *
 * Return: true if the hang-up came within CLOSE_WAIT_MS
 */
static bool helper_dropped(void)
{
	struct nssock_pool *pool;
	struct target t;
	struct pollfd p;
	int fds[2], n;

	if (target_init(&t) || pipe(fds)) {
		CHECK(!"set-up");
		return false;
	}
	pool = nssock_new(&t.c);
	CHECK(pool != NULL);
	nssock_prime(pool);
	CHECK(nssock_refills(pool) == 1);
	close(fds[1]);
	p = (struct pollfd){.fd = fds[0], .events = POLLIN};
	n = poll(&p, 1, CLOSE_WAIT_MS);
	nssock_free(pool);
	close(fds[0]);
	target_cleanup(&t);
	return n == 1 && (p.revents & POLLHUP);
}

static void body_closes_fds(void)
{
	CHECK(helper_dropped());
}

/*
 * close_range() is Linux 5.9, and seccomp filters may refuse it: the
 * helper then closes fd by fd, and still keeps nothing of ours.
 */
static void body_closes_fds_without_close_range(void)
{
	CHECK(!unit_fail_syscall(SYS_close_range, -1, ENOSYS));
	CHECK(syscall(SYS_close_range, 1000, 1000, 0) < 0 && errno == ENOSYS);
	CHECK(helper_dropped());
}

static void test_closes_fds(void)
{
	CHECK(unit_netns_run(body_closes_fds));
}

static void test_closes_fds_without_close_range(void)
{
	CHECK(unit_netns_run(body_closes_fds_without_close_range));
}

/**
 * refused() - with prctl(@option) failing, the helper gives up at once
 * @option:	PR_SET_PDEATHSIG or PR_SET_DUMPABLE
 * @line:	the error line expected on stderr
 * @late:	the request to the helper fails with EPIPE, as it does when
 *		the helper had given up and exited before it was sent
 *
 * Without the refusal the helper would go on to the FIFO and block until
 * the pool's 2 s timeout, and the line would be another.
 */
static void refused(int option, const char *line, bool late)
{
	struct nssock_pool *pool;
	char buf[1024] = "";
	struct target t;
	int err;

	err = unit_capture_stderr();
	CHECK(err >= 0);
	CHECK(!unit_fail_syscall(SYS_prctl, option, EPERM));
	/* send() is sendto(); the helper answers with sendmsg(). */
	if (late)
		CHECK(!unit_fail_syscall(SYS_sendto, -1, EPIPE));
	if (target_init(&t)) {
		CHECK(!"set-up");
		return;
	}
	pool = nssock_new(&t.c);
	CHECK(pool != NULL);
	CHECK(nssock_get(pool, AF_INET) == -EAGAIN);
	nssock_free(pool);
	target_cleanup(&t);
	CHECK(read(err, buf, sizeof(buf) - 1) > 0);
	CHECK(!strcmp(buf, line));
	if (strcmp(buf, line))
		printf("#   stderr: %s", buf);
}

static void body_refuses_without_pdeathsig(void)
{
	refused(PR_SET_PDEATHSIG,
	        "tapir: namespace socket helper: prctl(PR_SET_PDEATHSIG): "
	        "Operation not permitted\n",
	        false);
}

static void body_refused_before_request(void)
{
	refused(PR_SET_PDEATHSIG,
	        "tapir: namespace socket helper: prctl(PR_SET_PDEATHSIG): "
	        "Operation not permitted\n",
	        true);
}

static void body_refuses_dumpable(void)
{
	refused(PR_SET_DUMPABLE,
	        "tapir: namespace socket helper: prctl(PR_SET_DUMPABLE): "
	        "Operation not permitted\n",
	        false);
}

static void test_refuses_without_pdeathsig(void)
{
	CHECK(unit_netns_run(body_refuses_without_pdeathsig));
}

static void test_refused_before_request(void)
{
	CHECK(unit_netns_run(body_refused_before_request));
}

static void test_refuses_dumpable(void)
{
	CHECK(unit_netns_run(body_refuses_dumpable));
}

const struct unit_case unit_cases[] = {
        {"helper keeps none of our fds", test_closes_fds},
        {"helper keeps none of our fds without close_range()",
         test_closes_fds_without_close_range},
        {"helper refuses to run without PR_SET_PDEATHSIG",
         test_refuses_without_pdeathsig},
        {"helper refuses to run if it stays dumpable", test_refuses_dumpable},
        {"a helper that gave up before the request: its reason is reported, "
         "not EPIPE",
         test_refused_before_request},
        {NULL, NULL},
};
