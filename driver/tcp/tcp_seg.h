/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - TCP segments: parse the guest's, build ours (with GSO offload)
 */
#ifndef TAPIR_TCP_SEG_H
#define TAPIR_TCP_SEG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "driver/core/ctx.h"
#include "driver/tcp/tcp_conn.h"

struct pkt;

/* Our window scale shift: windows up to 16 MiB fit the 16-bit field. */
#define TCP_WS_SHIFT 8

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_PSH 0x08
#define TH_ACK 0x10

/**
 * struct tcp_seg - a validated segment from the guest
 * @sport:	source port (the guest's)
 * @dport:	destination port
 * @seq:	sequence number
 * @ack:	acknowledgement number (valid with TH_ACK)
 * @flags:	TH_* flags
 * @win:	raw window field
 * @payload:	data
 * @len:	data length
 * @mss:	MSS option, 0 if absent
 * @ws:		window scale option, -1 if absent
 * @sack_ok:	SACK-permitted option present
 */
struct tcp_seg {
	uint16_t sport;
	uint16_t dport;
	uint32_t seq;
	uint32_t ack;
	uint8_t flags;
	uint16_t win;
	const uint8_t *payload;
	size_t len;
	uint16_t mss;
	int ws;
	bool sack_ok;
};

int tcp_seg_parse(struct ctx *c, const struct pkt *p, struct tcp_seg *s);
int tcp_send_flags(struct ctx *c, struct tcp_conn *conn, uint8_t flags,
                   uint32_t seq, uint32_t wnd);
int tcp_send_data(struct ctx *c, struct tcp_conn *conn, uint32_t seq,
                  const uint8_t *data, size_t len, uint32_t wnd);
int tcp_send_rst_reply(struct ctx *c, const struct pkt *p,
                       const struct tcp_seg *s);
size_t tcp_max_payload(const struct ctx *c, const struct tcp_conn *conn);

#endif /* TAPIR_TCP_SEG_H */
