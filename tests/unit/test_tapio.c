// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests for frame output on the tap: the vnet header */

#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "driver/thread/tap_read.h"
#include "driver/stack/tap_write.h"
#include "tests/unit/fakectx.h"
#include "tests/unit/unit.h"

static const uint8_t guest_mac[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};

/**
 * send_and_read() - tap_send() one 60-byte frame, read back what the tap got
 * @vnet_len:	header bytes the tap takes
 * @vh:		header to send, or NULL
 * @out:	filled with the bytes written to the tap
 * @outlen:	its size
 *
 * Return: bytes written to the tap, or -1
 */
static ssize_t send_and_read(unsigned int vnet_len,
                             const struct virtio_net_hdr *vh, uint8_t *out,
                             size_t outlen)
{
	uint8_t frame[60];
	struct iovec iov = {frame, sizeof(frame)};
	struct opts o;
	struct ctx c;
	ssize_t n = -1;
	int peer;

	memset(frame, 0xab, sizeof(frame));
	peer = fake_ctx_init(&c, &o, false, guest_mac);
	c.vnet_len = vnet_len;
	if (!tap_send(&c, vh, &iov, 1))
		n = recv(peer, out, outlen, MSG_DONTWAIT);
	fake_ctx_close(&c, peer);
	return n;
}

/*
 * With a 12-byte header (num_buffers after the basic one, which the IPC
 * channel allows), the two extra bytes are zero: before, they were read
 * from past a 10-byte struct on the stack, which ASan reports.
 */
static void test_vnet12_with_header(void)
{
	struct virtio_net_hdr vh = {0};
	uint8_t out[128];
	ssize_t n;

	vh.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	vh.gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
	vh.hdr_len = 54;
	vh.gso_size = 1448;
	vh.csum_start = 34;
	vh.csum_offset = 16;
	n = send_and_read(12, &vh, out, sizeof(out));
	CHECK(n == 12 + 60);
	CHECK(!memcmp(out, &vh, sizeof(vh)));
	CHECK(out[10] == 0 && out[11] == 0);
	CHECK(out[12] == 0xab && out[12 + 59] == 0xab);
}

static void test_vnet12_without_header(void)
{
	static const uint8_t zero[12];
	uint8_t out[128];

	CHECK(send_and_read(12, NULL, out, sizeof(out)) == 12 + 60);
	CHECK(!memcmp(out, zero, sizeof(zero)));
}

static void test_vnet10(void)
{
	struct virtio_net_hdr vh = {.gso_type = VIRTIO_NET_HDR_GSO_TCPV6,
	                            .gso_size = 1440};
	uint8_t out[128];

	CHECK(send_and_read(10, &vh, out, sizeof(out)) == 10 + 60);
	CHECK(!memcmp(out, &vh, sizeof(vh)));
	CHECK(out[10] == 0xab);
}

const struct unit_case unit_cases[] = {
        {"a 12-byte vnet header: the 10 given bytes, then two zeros",
         test_vnet12_with_header},
        {"a 12-byte vnet header for a plain frame: all zeros",
         test_vnet12_without_header},
        {"a 10-byte vnet header: exactly the given bytes", test_vnet10},
        {NULL, NULL},
};
