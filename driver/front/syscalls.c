// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - every module's system calls once running: the filter's union
 *
 * Each module lists the calls it makes after set-up in its own file and
 * header; seccomp.c builds the filter from the lists it is handed. This
 * file, at the top with the front ends, is the one place that names them
 * all, so that the filter knows none of the modules.
 */

#include <stddef.h>

#include "driver/api/api.h"
#include "driver/core/clock.h"
#include "driver/cond/cond.h"
#include "driver/host/dns.h"
#include "driver/host/fdlimit.h"
#include "driver/fwd/hostfwd.h"
#include "driver/sandbox/janitor.h"
#include "driver/host/lifecycle.h"
#include "driver/core/log.h"
#include "driver/front/loop.h"
#include "driver/host/nssock.h"
#include "driver/fwd/pasta_fwd.h"
#include "driver/core/pcap.h"
#include "driver/udp/ping.h"
#include "driver/front/run.h"
#include "driver/core/seed.h"
#include "driver/fwd/splice.h"
#include "driver/thread/tap_read.h"
#include "driver/stack/tap_write.h"
#include "driver/tcp/tcp.h"
#include "driver/thread/thread.h"
#include "driver/udp/udp.h"
#include "driver/fwd/udpsplice.h"
#include "driver/front/syscalls.h"

const char *const *const syscall_lists[] = {
        api_syscalls,      clock_syscalls,     cond_syscalls,
        dns_syscalls,      fdlimit_syscalls,   hostfwd_syscalls,
        janitor_syscalls,  lifecycle_syscalls, log_syscalls,
        loop_syscalls,     nssock_syscalls,    pasta_fwd_syscalls,
        pcap_syscalls,     run_syscalls,       seed_syscalls,
        ping_syscalls,     splice_syscalls,    usplice_syscalls,
        tap_read_syscalls, tap_write_syscalls, thread_syscalls,
        tcp_syscalls,      udp_syscalls,
};

const size_t syscall_lists_n = sizeof(syscall_lists) / sizeof(syscall_lists[0]);
