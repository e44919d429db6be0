/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - one address type for IPv4 and IPv6 (IPv4 as ::ffff:a.b.c.d)
 */
#ifndef TAPIR_INANY_H
#define TAPIR_INANY_H

#include <stdbool.h>
#include <string.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

/**
 * inany_from_v4() - store an IPv4 address as IPv4-mapped IPv6
 * @a:		result
 * @v4:		IPv4 address
 */
static inline void inany_from_v4(struct in6_addr *a, struct in_addr v4)
{
	memset(a, 0, 10);
	a->s6_addr[10] = 0xff;
	a->s6_addr[11] = 0xff;
	memcpy(&a->s6_addr[12], &v4, 4);
}

/**
 * inany_is_v4() - whether @a holds an IPv4 address
 * @a:		address
 *
 * Return: true for ::ffff:0:0/96
 */
static inline bool inany_is_v4(const struct in6_addr *a)
{
	return IN6_IS_ADDR_V4MAPPED(a);
}

/**
 * inany_v4() - the IPv4 address inside an IPv4-mapped @a
 * @a:		address, inany_is_v4() must hold
 *
 * Return: the IPv4 address
 */
static inline struct in_addr inany_v4(const struct in6_addr *a)
{
	struct in_addr v4;

	memcpy(&v4, &a->s6_addr[12], 4);
	return v4;
}

/**
 * inany_equal() - compare two addresses
 * @a:		one
 * @b:		other
 *
 * Return: true if equal
 */
static inline bool inany_equal(const struct in6_addr *a,
                               const struct in6_addr *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/**
 * inany_is_loopback() - whether @a is a loopback address of its family
 * @a:		address
 *
 * Return: true for 127.0.0.0/8 and ::1
 */
static inline bool inany_is_loopback(const struct in6_addr *a)
{
	if (inany_is_v4(a))
		return a->s6_addr[12] == 127;
	return IN6_IS_ADDR_LOOPBACK(a);
}

/**
 * inany_matches() - whether @a is @want, an address that may be unset
 * @want:	address, or :: for none (an unset IPv4 one too)
 * @a:		address
 *
 * Return: true if @want is set and equal to @a
 */
static inline bool inany_matches(const struct in6_addr *want,
                                 const struct in6_addr *a)
{
	return !IN6_IS_ADDR_UNSPECIFIED(want) && inany_equal(want, a);
}

/**
 * in6_same_prefix() - whether two IPv6 addresses share their first bits
 * @a:		one
 * @b:		other
 * @plen:	prefix length, 0..128
 *
 * Return: true if the first @plen bits are equal
 */
static inline bool in6_same_prefix(const struct in6_addr *a,
                                   const struct in6_addr *b, unsigned int plen)
{
	for (unsigned int bit = 0; bit < plen && bit < 128; bit++) {
		unsigned int mask = 0x80U >> (bit % 8);

		if ((a->s6_addr[bit / 8] & mask) !=
		    (b->s6_addr[bit / 8] & mask))
			return false;
	}
	return true;
}

/**
 * union sockaddr_inany - a host socket address of either family
 * @sa:		generic view
 * @sa4:	IPv4
 * @sa6:	IPv6
 */
union sockaddr_inany {
	struct sockaddr sa;
	struct sockaddr_in sa4;
	struct sockaddr_in6 sa6;
};

void sockaddr_from_inany(union sockaddr_inany *sa, socklen_t *salen,
                         const struct in6_addr *addr, uint16_t port);
const char *inany_ntop(const struct in6_addr *a, char buf[INET6_ADDRSTRLEN]);

#endif /* TAPIR_INANY_H */
