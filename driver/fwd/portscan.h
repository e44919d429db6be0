/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - which ports are bound on a side: sock_diag, or /proc/net/{tcp,udp}{,6}
 */
#ifndef TAPIR_PORTSCAN_H
#define TAPIR_PORTSCAN_H

#include <stdbool.h>
#include <stdint.h>

/**
 * struct port_set - a bit per port
 * @bits:	bit p%8 of byte p/8 is port p
 */
struct port_set {
	uint8_t bits[65536 / 8];
};

/**
 * struct portscan - the ports bound on one side, by the address bound
 * @any:	the unspecified address (0.0.0.0 or ::): every address
 * @loopback:	a loopback address (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104)
 * @other:	any other single address
 * @lo1:	127.0.0.1 itself (also in @loopback), where pasta's -T
 *		connects
 * @lo6:	reachable at ::1: bound to ::1 itself or to :: (also in
 *		@loopback or @any), where -T connects for IPv6 clients
 * @looked:	sockets the scan looked at: lines of the tables, or the
 *		bound ones sock_diag reported (tests count them)
 */
struct portscan {
	struct port_set any;
	struct port_set loopback;
	struct port_set other;
	struct port_set lo1;
	struct port_set lo6;
	unsigned int looked;
};

/* What portscan_read() counts as bound. */
enum portscan_proto {
	PORTSCAN_TCP, /* listening (TCP_LISTEN) */
	PORTSCAN_UDP, /* bound and not connected (TCP_CLOSE) */
};

int portscan_read(int fd, enum portscan_proto proto, struct portscan *ps);
int portscan_read_pair(int fd4, int fd6, enum portscan_proto proto,
                       struct portscan *ps);
int portscan_read_side(int *diag, int fd4, int fd6, enum portscan_proto proto,
                       struct portscan *ps);
void portscan_mask(struct portscan *ps, const struct port_set *own);
void portscan_merge(struct portscan *to, const struct portscan *from);
bool port_set_has(const struct port_set *s, unsigned int port);
void port_set_add(struct port_set *s, unsigned int port);
void port_set_del(struct port_set *s, unsigned int port);

#endif /* TAPIR_PORTSCAN_H */
