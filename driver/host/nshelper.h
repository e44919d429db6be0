/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - forked helper: join the target's namespaces, set up the tap
 */
#ifndef TAPIR_NSHELPER_H
#define TAPIR_NSHELPER_H

#include "driver/core/opts.h"
#include "ipc/msg.h"

/* pasta mode: the namespace's socket tables, opened by the helper in it
 * and sent after the tap queues, in this order; then a NETLINK_SOCK_DIAG
 * socket made in it, which spares reading them (fwd/portscan.c).
 */
enum ns_table { NS_TCP, NS_TCP6, NS_UDP, NS_UDP6, NS_DIAG, NS_TABLES };

int nshelper_join(const struct opts *o, struct ipc_error *e);
int nshelper_setup_tap(const struct opts *o, struct ipc_tap_info *info,
                       int *fds, int *tables);

void nshelper_close_other_fds(int keep);
int nshelper_receive_reply(int sock, const struct opts *o,
                           struct ipc_tap_info *info, int *fds, int *tables);

#endif /* TAPIR_NSHELPER_H */
