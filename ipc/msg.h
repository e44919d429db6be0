/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - JSON schema of the namespace helper's reply (see docs/ipc.md)
 */
#ifndef TAPIR_IPC_MSG_H
#define TAPIR_IPC_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/if_tun.h>

/* The offload bits are the tap's TUN_F_* flags: the schema names them on
 * the wire, so it owns the ones that Linux 6.2 added and older uapi
 * headers (Debian 12) lack.
 */
#ifndef TUN_F_USO4
#define TUN_F_USO4 0x20
#endif
#ifndef TUN_F_USO6
#define TUN_F_USO6 0x40
#endif

#define IPC_MSG_VERSION 1
#define IPC_MAX_QUEUES 16
#define IPC_MAX_ADDRS 8
#define IPC_MAX_OFFLOADS 8

/**
 * struct ipc_addr - one address configured on the tap
 * @family:	AF_INET or AF_INET6
 * @addr:	the address, in network byte order
 * @prefixlen:	prefix length, at most 32 or 128 by family
 */
struct ipc_addr {
	int family;
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} addr;
	unsigned int prefixlen;
};

/**
 * struct ipc_tap_info - what the helper made of the tap
 * @ifname:		interface name inside the target netns
 * @ifindex:		interface index inside the target netns (> 0)
 * @mtu:		MTU in force, 68..65521
 * @txqueuelen:		txqueuelen in force (> 0)
 * @mac:		MAC address of the tap (the guest side)
 * @naddrs:		number of entries in @addrs
 * @addrs:		addresses configured on the tap
 * @vnet_hdr:		whether the fds carry a virtio_net_hdr on every frame
 * @vnet_hdr_len:	length of that header (0 without vnet_hdr, else 10/12)
 * @offloads:		TUN_F_* flags accepted by TUNSETOFFLOAD
 * @queues:		number of tap fds sent along, 1..IPC_MAX_QUEUES
 */
struct ipc_tap_info {
	char ifname[IFNAMSIZ];
	int ifindex;
	unsigned int mtu;
	unsigned int txqueuelen;
	uint8_t mac[6];
	unsigned int naddrs;
	struct ipc_addr addrs[IPC_MAX_ADDRS];
	bool vnet_hdr;
	unsigned int vnet_hdr_len;
	unsigned int offloads;
	unsigned int queues;
};

/**
 * struct ipc_error - why the helper failed
 * @err:	errno value (> 0)
 * @op:		the failing step and object, e.g. "setns /proc/42/ns/net"
 * @text:	human-readable text, normally strerror(@err)
 */
struct ipc_error {
	int err;
	char op[128];
	char text[256];
};

enum ipc_reply_kind {
	IPC_REPLY_TAP = 1,
	IPC_REPLY_ERROR = 2,
};

/**
 * struct ipc_reply - one complete helper reply
 * @kind:	which member of the union is valid
 * @tap:	valid for IPC_REPLY_TAP
 * @error:	valid for IPC_REPLY_ERROR
 */
struct ipc_reply {
	enum ipc_reply_kind kind;
	union {
		struct ipc_tap_info tap;
		struct ipc_error error;
	};
};

char *ipc_reply_encode(const struct ipc_reply *r);
int ipc_reply_decode(const char *buf, size_t len, struct ipc_reply *r,
                     char *why, size_t whylen);

#endif /* TAPIR_IPC_MSG_H */
