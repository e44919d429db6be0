// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - Internet checksums (RFC 1071) for IPv4, IPv6, TCP, UDP, ICMP */

#include <string.h>
#include <arpa/inet.h>

#include "driver/stack/csum.h"

/**
 * csum_add() - add @len bytes of @buf to a running 32-bit one's sum
 * @sum:	running sum (0 to start)
 * @buf:	data, any alignment
 * @len:	bytes; an odd last byte is padded with zero
 *
 * Return: the new running sum, unfolded
 */
uint32_t csum_add(uint32_t sum, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t acc = sum;

	while (len >= 8) {
		uint32_t a, b;

		memcpy(&a, p, 4);
		memcpy(&b, p + 4, 4);
		acc += (uint64_t)a + b;
		p += 8;
		len -= 8;
	}
	while (len >= 2) {
		uint16_t w;

		memcpy(&w, p, 2);
		acc += w;
		p += 2;
		len -= 2;
	}
	if (len) {
		uint16_t w = 0;

		memcpy(&w, p, 1);
		acc += w;
	}
	while (acc >> 32)
		acc = (acc & 0xffffffff) + (acc >> 32);
	return (uint32_t)acc;
}

/**
 * csum_fold() - fold a running sum into the final 16-bit checksum
 * @sum:	running sum
 *
 * Return: one's complement of the folded sum, in network byte order as
 *	   stored in a header
 */
uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/**
 * csum_ip4_header() - checksum of an IPv4 header
 * @iph:	header, with its checksum field zeroed (or, to verify, intact:
 *		then the result is 0 for a good header)
 * @len:	header length in bytes
 *
 * Return: checksum, as stored in the header
 */
uint16_t csum_ip4_header(const void *iph, size_t len)
{
	return csum_fold(csum_add(0, iph, len));
}

/**
 * csum_pseudo4() - running sum of the IPv4 pseudo-header
 * @src:	source address
 * @dst:	destination address
 * @proto:	IPPROTO_TCP or IPPROTO_UDP
 * @len:	L4 length (header and payload), host order
 *
 * Return: running sum to continue with csum_add() over the L4 data
 */
uint32_t csum_pseudo4(struct in_addr src, struct in_addr dst, uint8_t proto,
                      uint32_t len)
{
	uint32_t sum = 0;
	uint16_t w[2] = {htons(proto), htons((uint16_t)len)};

	sum = csum_add(sum, &src, 4);
	sum = csum_add(sum, &dst, 4);
	return csum_add(sum, w, sizeof(w));
}

/**
 * csum_pseudo6() - running sum of the IPv6 pseudo-header
 * @src:	source address
 * @dst:	destination address
 * @proto:	IPPROTO_TCP, IPPROTO_UDP or IPPROTO_ICMPV6
 * @len:	upper-layer length, host order
 *
 * Return: running sum to continue with csum_add() over the L4 data
 */
uint32_t csum_pseudo6(const struct in6_addr *src, const struct in6_addr *dst,
                      uint8_t proto, uint32_t len)
{
	uint32_t w[2] = {htonl(len), htonl(proto)};
	uint32_t sum = csum_add(0, src, 16);

	sum = csum_add(sum, dst, 16);
	return csum_add(sum, w, sizeof(w));
}
