// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - datapath counters: names for reports */

#include "driver/core/stats.h"

static const char *const drop_names[DROP_REASONS] = {
        [DROP_SHORT_FRAME] = "short_frame",
        [DROP_BAD_VNET_HDR] = "bad_vnet_hdr",
        [DROP_BAD_LENGTH] = "bad_length",
        [DROP_BAD_CHECKSUM] = "bad_checksum",
        [DROP_UNKNOWN_ETHERTYPE] = "unknown_ethertype",
        [DROP_UNKNOWN_PROTO] = "unknown_protocol",
        [DROP_FRAGMENT] = "fragment",
        [DROP_NOT_FOR_US] = "not_for_us",
        [DROP_TAP_WRITE] = "tap_write",
        [DROP_NO_ROUTE] = "no_route",
        [DROP_NO_FLOW] = "no_flow",
        [DROP_FLOW_LIMIT] = "flow_limit",
        [DROP_SOCKET] = "socket",
        [DROP_GSO_SEGMENTS] = "gso_segments",
        [DROP_BAD_ADDRESS] = "bad_address",
        [DROP_HANDOFF] = "handoff",
        [DROP_HOST_RCVBUF] = "host_rcvbuf",
        [DROP_TCP_OUT_OF_ORDER] = "tcp_out_of_order",
};

static const char *const proto_names[PROTO_COUNT] = {
        [PROTO_ARP] = "arp", [PROTO_ICMP] = "icmp", [PROTO_TCP] = "tcp",
        [PROTO_UDP] = "udp", [PROTO_DNS] = "dns",   [PROTO_OTHER] = "other",
};

/**
 * drop_reason_name() - stable name of a drop reason, for JSON and logs
 * @r:		reason
 *
 * Return: the name
 */
const char *drop_reason_name(enum drop_reason r)
{
	return r < DROP_REASONS ? drop_names[r] : "invalid";
}

/**
 * stats_proto_name() - stable name of a protocol counter, for JSON
 * @p:		protocol
 *
 * Return: the name
 */
const char *stats_proto_name(enum stats_proto p)
{
	return p < PROTO_COUNT ? proto_names[p] : "invalid";
}

static const char *const cond_names[CC_COUNT] = {
        [CC_DELAYED] = "delayed",       [CC_LOSS] = "dropped_loss",
        [CC_DOWN] = "dropped_down",     [CC_OVERFLOW] = "dropped_overflow",
        [CC_DUPLICATED] = "duplicated", [CC_REORDERED] = "reordered",
        [CC_RATE] = "dropped_rate",
};

/**
 * cond_count_name() - stable name of a conditions counter, for JSON
 * @n:		counter
 *
 * Return: the name
 */
const char *cond_count_name(enum cond_count n)
{
	return n < CC_COUNT ? cond_names[n] : "invalid";
}
