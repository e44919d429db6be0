// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests for the tap set-up helper: guarantees it insists on */

#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "driver/host/nshelper.h"
#include "tests/unit/unit.h"

/*
 * Without PR_SET_PDEATHSIG the helper would outlive a tapir killed during
 * set-up: it refuses, with one line, before it opens any namespace (the
 * line would otherwise be about the missing one).
 */
static void body_refuses_without_pdeathsig(void)
{
	static const char line[] = "tapir: namespace helper: "
	                           "prctl(PR_SET_PDEATHSIG): Operation not "
	                           "permitted\n";
	int fds[TAPIR_MAX_QUEUES], err;
	struct ipc_tap_info info;
	char buf[1024] = "";
	struct opts o = {0};

	err = unit_capture_stderr();
	CHECK(err >= 0);
	CHECK(!unit_fail_syscall(SYS_prctl, PR_SET_PDEATHSIG, EPERM));
	o.netns_type = NETNS_PATH;
	snprintf(o.netns_path, sizeof(o.netns_path), "/nonexistent/netns");
	snprintf(o.ifname, sizeof(o.ifname), "tap0");
	o.queues = 1;
	o.mtu = 1500;
	CHECK(nshelper_setup_tap(&o, &info, fds, NULL) == -1);
	CHECK(read(err, buf, sizeof(buf) - 1) > 0);
	CHECK(!strcmp(buf, line));
	if (strcmp(buf, line))
		printf("#   stderr: %s", buf);
}

static void test_refuses_without_pdeathsig(void)
{
	CHECK(unit_netns_run(body_refuses_without_pdeathsig));
}

const struct unit_case unit_cases[] = {
        {"helper refuses to run without PR_SET_PDEATHSIG",
         test_refuses_without_pdeathsig},
        {NULL, NULL},
};
