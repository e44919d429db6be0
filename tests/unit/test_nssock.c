// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests for the namespace socket helper: what it must not keep,
 * and a helper that stalls or dies costing the caller nothing
 *
 * For the first, the helper's target is a FIFO instead of a network
 * namespace: opening it blocks, so the helper is caught right before it
 * would join, with what it holds at that moment. For the second, the target
 * is the test's own network namespace, and the test stops or kills the
 * helper (its only child) by pid.
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
#include <sys/wait.h>
#include <event2/event.h>

#include "driver/core/clock.h"

#include "driver/host/nssock.h"
#include "tests/unit/unit.h"

/* How long the helper may take to get rid of our fds. */
#define CLOSE_WAIT_MS 5000
/* How long a get from an empty pool may take: it must not wait at all. */
#define GET_MAX_NS 100000000LL
/* How long the loop may take to see the helper's reply or its state. */
#define REPLY_WAIT_MS 5000

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
 * loop_until_helper() - run the loop until the helper is in state @want
 * @t:		context
 * @pool:	pool
 * @want:	state
 *
 * Return: true if it got there within REPLY_WAIT_MS
 */
static bool loop_until_helper(struct target *t, struct nssock_pool *pool,
                              enum nssock_helper want)
{
	const struct timeval tick = {0, 20000};
	uint64_t ms;

	for (int i = 0; i < REPLY_WAIT_MS / 20; i++) {
		if (nssock_helper(pool, &ms) == want)
			return true;
		event_base_loopexit(t->c.base, &tick);
		event_base_dispatch(t->c.base);
	}
	return nssock_helper(pool, &ms) == want;
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
 * The get returns at once, and the reason is read when it comes. Without
 * the refusal the helper would go on to block on the FIFO, and no line
 * would come.
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
	CHECK(nssock_get(pool, AF_INET, SOCK_STREAM) == -EAGAIN);
	CHECK(loop_until_helper(&t, pool, NSSOCK_HELPER_NONE));
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

/**
 * own_target_init() - a context whose target is our own network namespace
 * @t:		filled
 *
 * Return: 0, or -1 if the event base could not be made
 */
static int own_target_init(struct target *t)
{
	memset(t, 0, sizeof(*t));
	t->o.netns_type = NETNS_PATH;
	snprintf(t->o.netns_path, sizeof(t->o.netns_path), "/proc/%d/ns/net",
	         (int)getpid());
	t->c.o = &t->o;
	t->c.base = event_base_new();
	return t->c.base ? 0 : -1;
}

/**
 * loop_until_pool() - run the loop until @want IPv4 sockets are pooled
 * @t:		context
 * @pool:	pool
 * @want:	how many
 *
 * Return: true if they were within REPLY_WAIT_MS
 */
static bool loop_until_pool(struct target *t, struct nssock_pool *pool,
                            unsigned int want)
{
	const struct timeval tick = {0, 20000};

	for (int i = 0; i < REPLY_WAIT_MS / 20; i++) {
		if (nssock_count(pool, AF_INET) >= want)
			return true;
		event_base_loopexit(t->c.base, &tick);
		event_base_dispatch(t->c.base);
	}
	return nssock_count(pool, AF_INET) >= want;
}

/**
 * primed_pool() - a pool of the test's own namespace, its helper started
 * @t:		filled by own_target_init()
 *
 * Return: the pool, or NULL after a failed check
 */
static struct nssock_pool *primed_pool(struct target *t)
{
	struct nssock_pool *pool;

	if (own_target_init(t)) {
		CHECK(!"set-up");
		return NULL;
	}
	pool = nssock_new(&t->c);
	CHECK(pool != NULL);
	if (pool)
		nssock_prime(pool);
	return pool;
}

/**
 * only_child() - pid of this process's one child (the helper), or -1
 */
static pid_t only_child(void)
{
	char path[64];
	int pid = -1, more = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children",
	         (int)getpid());
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d %d", &pid, &more) < 1 || more != -1)
		pid = -1;
	fclose(f);
	return pid;
}

/**
 * proc_state() - the state letter of @pid in /proc (R, S, T, Z...)
 * @pid:	process
 *
 * Return: the letter, or '?' if there is no such process
 */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

/**
 * wait_state() - wait until @pid is in state @want, for up to 5 s
 * @pid:	process
 * @want:	state letter
 *
 * Return: true if it got there
 */
static bool wait_state(pid_t pid, char want)
{
	for (int i = 0; i < 500; i++) {
		if (proc_state(pid) == want)
			return true;
		usleep(10000);
	}
	return false;
}

/**
 * timed_get() - nssock_get() and how long it took
 * @pool:	pool
 * @ns:		set to the time taken
 *
 * Return: what nssock_get() returned
 */
static int timed_get(struct nssock_pool *pool, long long *ns)
{
	long long t0 = (long long)clock_ns();
	int fd = nssock_get(pool, AF_INET, SOCK_STREAM);

	*ns = (long long)clock_ns() - t0;
	return fd;
}

/*
 * A helper that stops answering (SIGSTOP here; a busy machine or a
 * container that stops it, for real) with the pool empty: a get returns at
 * once, the helper is not killed for being late, and its reply, when it
 * comes, fills the pool again. Before, the get waited 2 s for it and then
 * killed it, and an isolated tapir had no sockets ever after.
 */
static void body_stalled_helper(void)
{
	struct nssock_pool *pool;
	struct target t;
	long long ns, slowest = 0;
	uint64_t ms;
	pid_t pid;
	int fd;

	pool = primed_pool(&t);
	if (!pool)
		return;
	/* As tapir does: the helper starts before the sandbox, which then
	 * forbids starting another.
	 */
	t.c.isolated = true;
	CHECK(loop_until_pool(&t, pool, NSSOCK_POOL));
	pid = only_child();
	CHECK(pid > 0);
	if (pid <= 0)
		return;
	CHECK(!kill(pid, SIGSTOP));
	CHECK(wait_state(pid, 'T'));
	/* Below NSSOCK_LOW a refill is asked for, which the helper can't
	 * answer now.
	 */
	for (int i = 0; i < NSSOCK_POOL; i++) {
		fd = timed_get(pool, &ns);
		CHECK(fd >= 0);
		if (fd >= 0)
			close(fd);
		slowest = ns > slowest ? ns : slowest;
	}
	CHECK(slowest < GET_MAX_NS);
	for (int i = 0; i < 3; i++) {
		CHECK(timed_get(pool, &ns) == -EAGAIN);
		CHECK(ns < GET_MAX_NS);
		if (ns >= GET_MAX_NS)
			printf("#   get from an empty pool took %lld ms\n",
			       ns / 1000000);
	}
	/* Late is not dead: it is still there, and its reply still counts. */
	CHECK(proc_state(pid) == 'T');
	CHECK(nssock_helper(pool, &ms) == NSSOCK_HELPER_WAITING);
	CHECK(!kill(pid, SIGCONT));
	CHECK(loop_until_pool(&t, pool, 1));
	CHECK(nssock_helper(pool, &ms) == NSSOCK_HELPER_READY && !ms);
	fd = nssock_get(pool, AF_INET, SOCK_STREAM);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK(only_child() == pid);
	nssock_free(pool);
	event_base_free(t.c.base);
}

static void test_stalled_helper(void)
{
	CHECK(unit_netns_run(body_stalled_helper));
}

/*
 * A helper that dies, once tapir is isolated: it is noticed at once,
 * without waiting for a get, and said so; the sockets pooled still serve,
 * then gets return at once, and no other helper is started. It stays a
 * zombie until the pool is freed: the filter lets tapir kill() its pid,
 * which, reaped, the kernel would give to another process of the user.
 */
static void body_killed_helper(void)
{
	const char *lines =
	        "tapir: namespace socket helper: exited\n"
	        "tapir: namespace socket helper: gone, and none can start in "
	        "the sandbox: no more sockets in the namespace\n";
	struct nssock_pool *pool;
	char buf[1024] = "";
	struct target t;
	long long ns;
	int fd, err;
	pid_t pid;

	err = unit_capture_stderr();
	CHECK(err >= 0);
	pool = primed_pool(&t);
	if (!pool)
		return;
	t.c.isolated = true;
	CHECK(loop_until_pool(&t, pool, NSSOCK_POOL));
	pid = only_child();
	CHECK(pid > 0);
	if (pid <= 0)
		return;
	CHECK(!kill(pid, SIGKILL));
	CHECK(loop_until_helper(&t, pool, NSSOCK_HELPER_GONE));
	CHECK(only_child() == pid && proc_state(pid) == 'Z');
	for (int i = 0; i < NSSOCK_POOL; i++) {
		fd = nssock_get(pool, AF_INET, SOCK_STREAM);
		CHECK(fd >= 0);
		if (fd >= 0)
			close(fd);
	}
	CHECK(timed_get(pool, &ns) == -EAGAIN);
	CHECK(ns < GET_MAX_NS);
	CHECK(nssock_refills(pool) == 1);
	CHECK(only_child() == pid && proc_state(pid) == 'Z');
	nssock_free(pool);
	CHECK(only_child() == -1);
	event_base_free(t.c.base);
	CHECK(read(err, buf, sizeof(buf) - 1) > 0);
	CHECK(!strcmp(buf, lines));
	if (strcmp(buf, lines))
		printf("#   stderr: %s", buf);
}

static void test_killed_helper(void)
{
	CHECK(unit_netns_run(body_killed_helper));
}

/**
 * sock_type() - SO_TYPE of @fd
 * @fd:		socket
 *
 * Return: SOCK_STREAM, SOCK_DGRAM..., or -1
 */
static int sock_type(int fd)
{
	int type = -1;
	socklen_t len = sizeof(type);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len))
		return -1;
	return type;
}

/*
 * UDP sockets come only once a user asked (pasta's -U,
 * --host-lo-to-ns-lo): then as UDP, never a TCP socket in their place,
 * and the TCP rows are as full as before.
 */
static void body_udp_rows(void)
{
	struct nssock_pool *pool;
	struct target t;
	int fd;

	pool = primed_pool(&t);
	if (!pool)
		return;
	CHECK(loop_until_pool(&t, pool, NSSOCK_POOL));
	/* Asked too early: no request for nothing, which would end the
	 * helper.
	 */
	CHECK(nssock_get(pool, AF_INET, SOCK_DGRAM) == -EAGAIN);
	CHECK(nssock_refills(pool) == 1);
	nssock_prime_udp(pool);
	fd = -EAGAIN;
	for (int i = 0; i < REPLY_WAIT_MS / 20 && fd == -EAGAIN; i++) {
		const struct timeval tick = {0, 20000};

		event_base_loopexit(t.c.base, &tick);
		event_base_dispatch(t.c.base);
		fd = nssock_get(pool, AF_INET, SOCK_DGRAM);
	}
	CHECK(fd >= 0 && sock_type(fd) == SOCK_DGRAM);
	CHECK(nssock_refills(pool) == 2);
	if (fd >= 0)
		close(fd);
	for (int i = 1; i < NSSOCK_UDP_POOL; i++) {
		fd = nssock_get(pool, AF_INET, SOCK_DGRAM);
		CHECK(fd >= 0 && sock_type(fd) == SOCK_DGRAM);
		if (fd >= 0)
			close(fd);
	}
	CHECK(nssock_count(pool, AF_INET) == NSSOCK_POOL);
	fd = nssock_get(pool, AF_INET, SOCK_STREAM);
	CHECK(fd >= 0 && sock_type(fd) == SOCK_STREAM);
	if (fd >= 0)
		close(fd);
	nssock_free(pool);
	event_base_free(t.c.base);
}

static void test_udp_rows(void)
{
	CHECK(unit_netns_run(body_udp_rows));
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
        {"a stalled helper: a get from the empty pool returns at once, and "
         "the late reply fills it",
         test_stalled_helper},
        {"a killed helper, isolated: noticed at once, kept a zombie until "
         "exit, the pool serves what "
         "it holds, no other helper starts",
         test_killed_helper},
        {"UDP sockets only once asked for, and then UDP ones", test_udp_rows},
        {NULL, NULL},
};
