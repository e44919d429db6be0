// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - every module's system calls once running: the filter's union
 *
 * Each module lists the calls it makes after set-up in its own file and
 * header; seccomp.c builds the filter from the lists it is handed. This
 * file, at the top with the front ends, is the one place that names them
 * all, so that the filter knows none of the modules.
 */

#include <stddef.h>

#include "api.h"
#include "clock.h"
#include "cond.h"
#include "dns.h"
#include "fdlimit.h"
#include "hostfwd.h"
#include "janitor.h"
#include "lifecycle.h"
#include "log.h"
#include "loop.h"
#include "nssock.h"
#include "pasta_fwd.h"
#include "pcap.h"
#include "ping.h"
#include "run.h"
#include "seed.h"
#include "splice.h"
#include "tap_read.h"
#include "tap_write.h"
#include "tcp.h"
#include "thread.h"
#include "udp.h"
#include "udpsplice.h"
#include "syscalls.h"

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
