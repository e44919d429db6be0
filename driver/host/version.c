// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - version and compiled-in features for --version and get_info */

#include <sys/socket.h>
#include <sys/utsname.h>
#include <event2/event.h>
#include <jansson.h>

#include "driver/host/probe.h"
#include "driver/host/version.h"

/* "conditions": docs/conditions.md, unless built without (`make nocond`). */
const char tapir_features[] =
        "vnet-hdr tso4 tso6 uso4 uso6 multiqueue ipv6 api-socket "
        "json-ipc netlink sandbox seccomp"
#ifndef TAPIR_NO_CONDITIONS
        " conditions"
#endif
        ;

/**
 * version_print() - print the machine-parsable version block
 * @f:		stream
 *
 * One "key: value" per line, as slirp4netns does, so that tools which grep
 * for SLIRP_CONFIG_VERSION_MAX keep working.
 */
void version_print(FILE *f)
{
	fprintf(f, "tapir version %s\n", TAPIR_VERSION);
	fprintf(f, "libjansson: %s\n", JANSSON_VERSION);
	fprintf(f, "libevent: %s\n", event_get_version());
	fprintf(f, "SLIRP_CONFIG_VERSION_MAX: %d\n",
	        TAPIR_SLIRP_CONFIG_VERSION_MAX);
	fprintf(f, "features: %s\n", tapir_features);
	version_print_kernel(f);
}

/**
 * version_print_kernel() - the running kernel, and the paths tapir takes
 *			    on it where kernels differ
 * @f:		stream
 *
 * Probed now, the same way the driver probes at start-up.
 */
void version_print_kernel(FILE *f)
{
	struct utsname u;

	if (!uname(&u))
		fprintf(f, "kernel: %s\n", u.release);
	fprintf(f, "tcp-peek: ipv4 %s, ipv6 %s\n",
	        probe_peek_mode(probe_tcp_peek_off(AF_INET)),
	        probe_peek_mode(probe_tcp_peek_off(AF_INET6)));
}
