/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - unit tests: a guest that speaks TCP to tapir through a fake tap
 */
#ifndef TAPIR_TCPGUEST_H
#define TAPIR_TCPGUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/tcp.h>

#include "driver/core/ctx.h"

#define GUEST_IP "10.0.2.100"
#define GW_IP "10.0.2.2"
#define HOST_PORT 7070
#define GUEST_ISN 1000
/* Tap queues a test guest can have. */
#define TCPGUEST_QUEUES 4
/* Payload bytes a segment from the guest can carry (MTU 1500). */
#define TCPGUEST_PAYLOAD_MAX 1460

/**
 * struct seg - what a frame from tapir carried
 * @src:	IPv4 source, network order
 * @dst:	IPv4 destination, network order
 * @sport:	TCP source port
 * @dport:	TCP destination port
 * @seq:	sequence number
 * @ack:	acknowledgement number
 * @flags:	TCP flags
 * @win:	raw window field
 * @len:	payload bytes
 * @data:	the first of them
 * @opt:	TCP options
 * @optlen:	their length
 */
struct seg {
	uint32_t src;
	uint32_t dst;
	uint16_t sport;
	uint16_t dport;
	uint32_t seq;
	uint32_t ack;
	uint8_t flags;
	uint16_t win;
	size_t len;
	uint8_t data[64];
	uint8_t opt[40];
	size_t optlen;
};

/**
 * struct guest - the test's side of one context
 * @c:		context under test
 * @o:		its options
 * @tap:	the guest's end of the queue the helpers below use: queue
 *		0's, unless the test points it elsewhere
 * @taps:	the guest's end of each queue, -1 past the last
 * @threaded:	@c has a context per queue (guest_open_threads())
 * @listener:	host listener on 127.0.0.1:HOST_PORT
 * @synack:	tapir's SYN-ACK of the last handshake
 */
struct guest {
	struct ctx c;
	struct opts o;
	int tap;
	int taps[TCPGUEST_QUEUES];
	bool threaded;
	int listener;
	struct seg synack;
};

int guest_open(struct guest *g, bool discard);
int guest_open_queues(struct guest *g, bool discard, unsigned int queues);
int guest_open_threads(struct guest *g, unsigned int queues);
void guest_run(struct guest *g, unsigned int i);
void guest_close(struct guest *g);
void queue_frame(struct guest *g, uint16_t sport, uint8_t flags, uint32_t seq,
                 uint32_t ack, uint16_t win, const uint8_t *opts, size_t optlen,
                 const void *data, size_t len);
void queue_seg(struct guest *g, uint16_t sport, uint8_t flags, uint32_t seq,
               uint32_t ack, uint16_t win, const void *data, size_t len);
void queue_udp(struct guest *g, uint16_t sport, uint16_t dport, size_t len,
               uint8_t fill);
void queue_udp_frags(struct guest *g, uint16_t sport, uint16_t dport,
                     size_t len, uint8_t fill, uint16_t id);
void send_seg(struct guest *g, uint16_t sport, uint8_t flags, uint32_t seq,
              uint32_t ack, uint16_t win, const void *data, size_t len);
void spin(struct guest *g, int ms);
bool take_seg(struct guest *g, struct seg *s);
bool next_seg(struct guest *g, struct seg *s);
bool addressed_right(const struct seg *s);
int handshake(struct guest *g, uint16_t sport, uint16_t win, uint32_t *isn);
int handshake_opts(struct guest *g, uint16_t sport, uint16_t mss, uint8_t ws,
                   uint16_t syn_win, uint16_t win, uint32_t *isn);
int handshake_sack(struct guest *g, uint16_t sport, uint16_t win,
                   uint32_t *isn);
int guest_vnet(struct guest *g);
void reset_by_host(int fd);

#endif /* TAPIR_TCPGUEST_H */
