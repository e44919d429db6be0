// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - open, attach or recreate the tap; vnet header and offloads */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "driver/host/netlink.h"
#include "driver/host/tap.h"

/**
 * tap_attach() - open /dev/net/tun and attach one queue to @ifname
 * @ifname:	tap name; created if missing, attached to if present
 * @flags:	IFF_* flags beyond IFF_TAP | IFF_NO_PI
 *
 * Return: the fd, or -errno
 */
static int tap_attach(const char *ifname, short flags)
{
	struct ifreq ifr = {0};
	int fd, err;

	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | flags;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/**
 * tap_attach_all() - attach @queues fds to @ifname
 * @ifname:	tap name
 * @flags:	IFF_* flags beyond IFF_TAP | IFF_NO_PI
 * @queues:	number of fds wanted
 * @fds:	filled with @queues fds on success
 *
 * Return: 0 on success, -errno with no fd left open on failure
 */
static int tap_attach_all(const char *ifname, short flags, unsigned int queues,
                          int *fds)
{
	for (unsigned int i = 0; i < queues; i++) {
		fds[i] = tap_attach(ifname, flags);
		if (fds[i] < 0) {
			int err = fds[i];

			while (i--)
				close(fds[i]);
			return err;
		}
	}
	return 0;
}

/**
 * tap_of_other_kind() - whether @ifname is a tap of the other queue kind
 * @ifname:	name that TUNSETIFF with @flags refused (EINVAL)
 * @flags:	IFF_* flags of that attempt
 *
 * EINVAL also means that @ifname is no tap at all (a veth, lo, a tun):
 * only a tap that attaches with IFF_MULTI_QUEUE flipped may be replaced.
 *
 * Return: true if attaching with the other IFF_MULTI_QUEUE setting works
 */
static bool tap_of_other_kind(const char *ifname, short flags)
{
	int fd = tap_attach(ifname, flags ^ IFF_MULTI_QUEUE);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/**
 * tap_set_up_again() - set a recreated tap up, as the one it replaced was
 * @nl:		netlink socket in the target netns
 * @ifname:	tap name
 * @queues:	fds in @fds, closed on failure
 * @fds:	the new tap's queues
 * @op:		on failure, the step that failed
 * @oplen:	size of @op
 *
 * Return: 0 on success, -errno on failure
 */
static int tap_set_up_again(struct nl *nl, const char *ifname,
                            unsigned int queues, int *fds, char *op,
                            size_t oplen)
{
	struct link_state st;
	int ret = link_get(nl, ifname, &st);

	if (!ret)
		ret = link_set_up(nl, st.ifindex);
	if (ret) {
		snprintf(op, oplen, "set recreated tap %s up", ifname);
		for (unsigned int i = 0; i < queues; i++)
			close(fds[i]);
	}
	return ret;
}

/**
 * tap_open_queues() - attach to or create @ifname with @queues queues
 * @nl:		netlink socket in the target netns, to delete a misfit tap
 * @ifname:	tap name
 * @vnet:	open with IFF_VNET_HDR
 * @queues:	number of queues (fds), 1 = single-queue
 * @fds:	filled with @queues fds on success
 * @op:		on failure, the step that failed
 * @oplen:	size of @op
 *
 * rootlesskit pre-creates a persistent single-queue tap; the kernel refuses
 * to attach to it with a different IFF_MULTI_QUEUE setting (EINVAL), so an
 * existing tap of the wrong kind is deleted and created anew. Nothing uses
 * the tap yet at this point: only its name matters to rootlesskit. The new
 * one is set up if the old one was (a guest that brought its link up
 * before tapir started would otherwise wait forever); addresses are not
 * carried over. Any other interface of that name is left alone.
 *
 * Return: 0 on success, -errno on failure
 */
int tap_open_queues(struct nl *nl, const char *ifname, bool vnet,
                    unsigned int queues, int *fds, char *op, size_t oplen)
{
	short flags =
	        (vnet ? IFF_VNET_HDR : 0) | (queues > 1 ? IFF_MULTI_QUEUE : 0);
	struct link_state st;
	int ret, vlen = TAP_VNET_HDR_LEN;

	ret = tap_attach_all(ifname, flags, queues, fds);
	if (ret == -EINVAL && tap_of_other_kind(ifname, flags) &&
	    !link_get(nl, ifname, &st)) {
		ret = link_del(nl, st.ifindex);
		if (ret) {
			snprintf(op, oplen, "delete tap %s to recreate it",
			         ifname);
			return ret;
		}
		ret = tap_attach_all(ifname, flags, queues, fds);
		if (!ret && st.up &&
		    (ret = tap_set_up_again(nl, ifname, queues, fds, op,
		                            oplen)))
			return ret;
	}
	if (ret) {
		/* Debian servers ship it 0600, desktops 0666. */
		snprintf(op, oplen, "attach tap %s via /dev/net/tun%s", ifname,
		         ret == -EINVAL   ? " (it exists and is no tap)"
		         : ret == -EACCES ? " (users need read and write "
		                            "access: as root, chmod 0666 "
		                            "/dev/net/tun)"
		         : ret == -ENOENT ? " (no such device: modprobe tun)"
		                          : "");
		return ret;
	}
	if (vnet && ioctl(fds[0], TUNSETVNETHDRSZ, &vlen) < 0) {
		ret = -errno;
		snprintf(op, oplen, "TUNSETVNETHDRSZ on %s", ifname);
		for (unsigned int i = 0; i < queues; i++)
			close(fds[i]);
		return ret;
	}
	return 0;
}

/**
 * tap_enable_offloads() - turn on as many tap offloads as the kernel has
 * @fd:		tap fd opened with IFF_VNET_HDR
 *
 * USO arrived in Linux 6.2 and older kernels refuse unknown bits with
 * EINVAL, so try the richest set first and fall back step by step.
 *
 * Return: the TUN_F_* flags in force (0 if none could be set)
 */
unsigned int tap_enable_offloads(int fd)
{
	static const unsigned int sets[] = {
	        TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_USO4 | TUN_F_USO6,
	        TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6,
	        TUN_F_CSUM,
	};

	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		if (ioctl(fd, TUNSETOFFLOAD, (unsigned long)sets[i]) == 0)
			return sets[i];
	}
	return 0;
}

/**
 * tap_auto_txqueuelen() - tap queue length that holds a full TCP window
 * @mtu:	MTU of the tap
 *
 * The guest may send a whole advertised window back to back, and the tap
 * tail-drops once its ring (txqueuelen frames) is full. Size the ring for
 * an 8 MiB window of MSS-sized frames, the worst case without TSO, and never
 * below 2048: the kernel's 1000 is what makes pasta collapse at MTU 1500.
 *
 * Return: queue length in frames
 */
unsigned int tap_auto_txqueuelen(unsigned int mtu)
{
	const unsigned int window = 8U << 20;
	unsigned int mss = mtu > 40 + 536 ? mtu - 40 : 536;
	unsigned int frames = (window + mss - 1) / mss;

	frames = (frames + 255) / 256 * 256;
	if (frames < 2048)
		frames = 2048;
	if (frames > 65536)
		frames = 65536;
	return frames;
}
