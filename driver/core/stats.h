/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - datapath counters: frames, bytes and drops by reason
 */
#ifndef TAPIR_STATS_H
#define TAPIR_STATS_H

#include <stdint.h>

#include "driver/core/opts.h"

enum drop_reason {
	DROP_SHORT_FRAME,  /* shorter than its headers */
	DROP_BAD_VNET_HDR, /* virtio_net_hdr we cannot honour */
	DROP_BAD_LENGTH,   /* length fields disagree with the frame */
	DROP_BAD_CHECKSUM, /* header checksum wrong */
	DROP_UNKNOWN_ETHERTYPE,
	DROP_UNKNOWN_PROTO, /* L4 protocol we don't translate */
	DROP_FRAGMENT,      /* fragments we can't or may not reassemble */
	DROP_NOT_FOR_US,    /* ARP or IP for an address we don't serve */
	DROP_TAP_WRITE,     /* writing to the tap failed */
	DROP_NO_ROUTE,      /* host side unreachable or forbidden */
	DROP_NO_FLOW,       /* segment for an unknown connection */
	DROP_FLOW_LIMIT,    /* flow table full, or no port to map a peer to */
	DROP_SOCKET,        /* host socket refused the data */
	DROP_GSO_SEGMENTS, /* USO frame of more datagrams than a kernel makes */
	DROP_BAD_ADDRESS,  /* address not allowed there (IPv4-mapped in IPv6) */
	DROP_HANDOFF,      /* another datapath thread's inbox was full */
	DROP_HOST_RCVBUF,  /* a host UDP socket dropped it (SO_RXQ_OVFL): its
	                    * receive buffer was full, mostly */
	DROP_TCP_OUT_OF_ORDER, /* a guest segment after a hole, not held:
	                        * past the bounds of tcp_ooo.c */
	DROP_REASONS
};

/* What network conditions did to frames (cond.c), for get_stats. */
enum cond_count {
	CC_DELAYED,    /* held for delay or rate, then delivered */
	CC_LOSS,       /* dropped by a loss condition */
	CC_DOWN,       /* dropped by a partition (down) */
	CC_OVERFLOW,   /* dropped: COND_HOLD_MAX held already, not meant */
	CC_DUPLICATED, /* sent twice by a duplicate condition */
	CC_REORDERED,  /* skipped the delay, by a reorder condition */
	CC_RATE,       /* dropped: a rate's queue was full, as a link's is */
	CC_COUNT
};

enum stats_proto {
	PROTO_ARP,
	PROTO_ICMP,
	PROTO_TCP,
	PROTO_UDP,
	PROTO_DNS,
	PROTO_OTHER,
	PROTO_COUNT
};

/**
 * struct dir_stats - counters for one direction and protocol
 * @packets:	frames or datagrams
 * @bytes:	payload bytes on the host-socket side, frame bytes for
 *		ARP and ICMP
 */
struct dir_stats {
	uint64_t packets;
	uint64_t bytes;
};

/**
 * struct queue_stats - frames through one tap queue
 * @rx_frames:	frames read from the queue (guest → tapir)
 * @rx_bytes:	their bytes, without vnet headers
 * @tx_frames:	frames written to the queue (tapir → guest)
 * @tx_bytes:	their bytes, without vnet headers
 */
struct queue_stats {
	uint64_t rx_frames;
	uint64_t rx_bytes;
	uint64_t tx_frames;
	uint64_t tx_bytes;
};

/**
 * struct stats - all datapath counters
 * @tap_rx_frames:	frames read from the tap (guest → tapir)
 * @tap_rx_bytes:	their bytes, without vnet headers
 * @tap_tx_frames:	frames written to the tap (tapir → guest)
 * @tap_tx_bytes:	their bytes, without vnet headers
 * @to_host:		per protocol, guest → host
 * @to_guest:		per protocol, host → guest
 * @drops:		drops per reason
 * @flows:		active flows per protocol, kept by each module
 * @queues:		per tap queue, the @tap_* counters split by queue
 * @cond:		what network conditions did, per enum cond_count
 */
struct stats {
	uint64_t tap_rx_frames;
	uint64_t tap_rx_bytes;
	uint64_t tap_tx_frames;
	uint64_t tap_tx_bytes;
	struct dir_stats to_host[PROTO_COUNT];
	struct dir_stats to_guest[PROTO_COUNT];
	uint64_t drops[DROP_REASONS];
	uint64_t flows[PROTO_COUNT];
	struct queue_stats queues[TAPIR_MAX_QUEUES];
	uint64_t cond[CC_COUNT];
};

const char *drop_reason_name(enum drop_reason r);
const char *stats_proto_name(enum stats_proto p);
const char *cond_count_name(enum cond_count n);

#endif /* TAPIR_STATS_H */
