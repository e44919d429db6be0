// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - set-up, event loop and teardown of a running driver */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <event2/event.h>

#include "driver/sandbox/seccomp.h"
#include "driver/front/syscalls.h"
#include "driver/host/fdlimit.h"
#include "driver/fwd/hostfwd.h"
#include "driver/api/api.h"
#include "driver/cond/cond.h"
#include "driver/sandbox/isolation.h"
#include "driver/sandbox/janitor.h"
#include "driver/host/lifecycle.h"
#include "driver/core/log.h"
#include "driver/front/loop.h"
#include "driver/front/pasta_cli.h"
#include "driver/host/nshelper.h"
#include "driver/fwd/pasta_fwd.h"
#include "driver/core/pcap.h"
#include "driver/thread/tap_read.h"
#include "driver/stack/ndp.h"
#include "driver/thread/thread.h"
#include "driver/fwd/udpsplice.h"

/* Syscalls of the event loop itself (libevent, epoll), once running,
 * including its signal pipe.
 */
const char *const loop_syscalls[] = {
        "epoll_wait", "epoll_pwait", "epoll_ctl", "read", "write",
        "recvfrom",   "sendto",      "close",     NULL,
};

/**
 * forbidden_cb() - make a syscall no allow-list has: getcpu()
 * @fd:		unused
 * @what:	unused
 * @arg:	unused
 *
 * The tests' proof that --enable-seccomp filters (tapir dies of SIGSYS)
 * and that without it nothing happens (getcpu() is harmless).
 */
static void forbidden_cb(evutil_socket_t fd, short what, void *arg)
{
	unsigned int cpu;

	(void)fd;
	(void)what;
	(void)arg;
	if (syscall(SYS_getcpu, &cpu, NULL, NULL))
		debug_msg("getcpu: %s", strerror(errno));
}

/**
 * test_hook() - with TAPIR_TEST_FORBIDDEN_SYSCALL set, make a forbidden
 *		 syscall 100 ms after set-up
 * @c:		context
 */
static void test_hook(struct ctx *c)
{
	const struct timeval tv = {0, 100000};

	if (getenv("TAPIR_TEST_FORBIDDEN_SYSCALL") &&
	    event_base_once(c->base, -1, EV_TIMEOUT, forbidden_cb, NULL, &tv))
		err_msg("test hook: libevent failed");
}

/**
 * isolate() - sandbox and filter tapir, as the options ask, last in set-up
 * @c:		context, set up but for the ready fd
 *
 * The janitor goes first: it takes the directories of the files to remove
 * at exit, which neither the sandbox nor the filter would let tapir reach.
 *
 * Return: 0 on success, -1 after printing one error line
 */
static int isolate(struct ctx *c)
{
	const struct opts *o = c->o;

	/* Once nobody, tapir could not remove root's files itself either. */
	if ((o->sandbox || o->seccomp || o->runas) && janitor_start(o->seccomp))
		return -1;
	/* As pasta: /proc/PID/mem and ptrace() closed to processes of the
	 * same uid, a container's root in a user namespace among them.
	 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) {
		err_errno(errno, "prctl(PR_SET_DUMPABLE)");
		return -1;
	}
	if (o->sandbox ? isolation_sandbox(o)
	               : o->runas && isolation_serve_as(o))
		return -1;
	if (o->seccomp && seccomp_apply(syscall_lists, syscall_lists_n))
		return -1;
	c->isolated = o->sandbox || o->seccomp || o->runas;
	test_hook(c);
	return 0;
}

/**
 * loop_prepare() - attach the tap and start every service, up to ready
 * @c:		context to initialise
 * @o:		validated options
 *
 * On success the ready fd has been written: the tap is attached and
 * configured and the API socket (if any) listens.
 *
 * Return: 0 on success, -1 after printing one error line
 */
int loop_prepare(struct ctx *c, const struct opts *o)
{
	memset(c, 0, sizeof(*c));
	c->o = o;
	c->target_pidfd = -1;
	c->spare_fd = -1;
	for (int i = 0; i < TAPIR_MAX_QUEUES; i++)
		c->tapfd[i] = -1;
	for (int i = 0; i < CTX_NS_TABLES; i++)
		c->ns_tables[i] = -1;
	ctx_set_addresses(c);
	if (lifecycle_target_exists(o))
		return -1;
	if ((lifecycle_target_pid(o) > 0 &&
	     lifecycle_watch_target(c, lifecycle_target_pid(o))) ||
	    lifecycle_watch_path(c))
		return -1;
	if (nshelper_setup_tap(o, &c->tap, c->tapfd, c->ns_tables))
		return -1;
	c->vnet_len = c->tap.vnet_hdr_len;
	memcpy(c->guest_mac, c->tap.mac, 6);
	c->base = event_base_new();
	if (!c->base) {
		err_msg("create event loop: libevent failed");
		return -1;
	}
	if (o->pcap[0] && pcap_open(c, o->pcap))
		return -1;
	/* The fd limit, raised here, sets the flow table's ceiling. */
	if (fdlimit_init(c) || thread_modules_init(c) || ndp_init(c))
		return -1;
	if (cond_install(o->conditions)) {
		err_msg("network conditions: out of memory");
		return -1;
	}
	if (threads_prepare(c) || tapio_start(c) || lifecycle_start(c))
		return -1;
	/* Clients may send requests as soon as they see the ready byte. */
	if (hostfwd_init(c) || hostfwd_publish(c) || pasta_fwd_start(c) ||
	    api_init(c) || isolate(c) || threads_start(c))
		return -1;
	lifecycle_signal_ready(c);
	return 0;
}

/**
 * loop_run() - run the event loop until an exit condition
 * @c:		prepared context
 *
 * Return: exit status for the process
 */
int loop_run(struct ctx *c)
{
	if (event_base_dispatch(c->base) < 0) {
		err_msg("event loop failed");
		return 1;
	}
	return c->exit_status;
}

/**
 * print_stats() - with --debug, dump non-zero counters at exit
 * @c:		context
 */
static void print_stats(const struct ctx *c)
{
	const struct stats *s = &c->stats;

	debug_msg("tap: rx %llu frames %llu bytes, tx %llu frames %llu bytes",
	          (unsigned long long)s->tap_rx_frames,
	          (unsigned long long)s->tap_rx_bytes,
	          (unsigned long long)s->tap_tx_frames,
	          (unsigned long long)s->tap_tx_bytes);
	for (int i = 0; i < DROP_REASONS; i++)
		if (s->drops[i])
			debug_msg("drop %s: %llu", drop_reason_name(i),
			          (unsigned long long)s->drops[i]);
}

/**
 * loop_cleanup() - release everything loop_prepare() set up
 * @c:		context, prepared fully or partly
 */
void loop_cleanup(struct ctx *c)
{
	threads_stop(c);
	print_stats(c);
	lifecycle_stop(c);
	api_cleanup(c);
	pasta_fwd_stop(c);
	hostfwd_cleanup(c);
	usplice_stop(c);
	ndp_cleanup(c);
	thread_modules_cleanup(c);
	tapio_stop(c);
	pcap_close(c);
	fdlimit_cleanup(c);
	for (int i = 0; i < CTX_NS_TABLES; i++) {
		if (c->ns_tables[i] >= 0)
			close(c->ns_tables[i]);
		c->ns_tables[i] = -1;
	}
	if (c->base)
		event_base_free(c->base);
	c->base = NULL;
	janitor_finish();
}
