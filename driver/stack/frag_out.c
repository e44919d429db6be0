// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - IP fragments toward the guest, for datagrams above the MTU
 *
 * ip_output() sends one frame per packet; a datagram without GSO metadata
 * that exceeds the MTU (a large UDP reply, an ICMP error quoting one) comes
 * here and leaves as IPv4 fragments or with an IPv6 Fragment header, each
 * frame at most the MTU. See docs/datapath.md, "Fragments".
 */

#include <string.h>
#include <arpa/inet.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>

#include "driver/stack/csum.h"
#include "driver/stack/eth.h"
#include "driver/stack/frag.h"
#include "driver/stack/frag_reasm.h"
#include "driver/core/inany.h"
#include "driver/stack/ip4.h"
#include "driver/stack/ip6.h"
#include "driver/stack/tap_write.h"

/**
 * iov_slice() - describe bytes [@off, @off + @len) of an iovec array
 * @in:		source array
 * @cnt:	entries in @in
 * @off:	first byte
 * @len:	bytes wanted; @in must hold them
 * @out:	filled, at least @cnt entries
 *
 * Return: entries used in @out
 */
static int iov_slice(const struct iovec *in, int cnt, size_t off, size_t len,
                     struct iovec *out)
{
	int n = 0;

	for (int i = 0; i < cnt && len; i++) {
		size_t take;

		if (off >= in[i].iov_len) {
			off -= in[i].iov_len;
			continue;
		}
		take = in[i].iov_len - off;
		if (take > len)
			take = len;
		out[n].iov_base = (uint8_t *)in[i].iov_base + off;
		out[n++].iov_len = take;
		len -= take;
		off = 0;
	}
	return n;
}

/**
 * struct ip6_frag_hdrs - IPv6 header and Fragment header, contiguous
 * @ih6:	IPv6 header
 * @fh:		Fragment header
 */
struct ip6_frag_hdrs {
	struct ip6_hdr ih6;
	struct ip6_frag fh;
};

/* One iovec entry for both keeps room for 12 payload entries per frame. */
_Static_assert(sizeof(struct ip6_frag_hdrs) == 48, "IPv6 headers padded");

/**
 * struct frag_hdrs - Ethernet and IP headers shared by a datagram's fragments
 * @eh:		Ethernet header
 * @ih4:	IPv4 header, rewritten per fragment
 * @h6:		IPv6 and Fragment headers, rewritten per fragment
 * @v6:		IPv6
 */
struct frag_hdrs {
	struct ether_header eh;
	struct iphdr ih4;
	struct ip6_frag_hdrs h6;
	bool v6;
};

/**
 * frag_hdrs_init() - build the headers common to all fragments
 * @c:		context
 * @h:		filled
 * @src:	source
 * @dst:	destination
 * @proto:	L4 protocol
 */
static void frag_hdrs_init(struct ctx *c, struct frag_hdrs *h,
                           const struct in6_addr *src,
                           const struct in6_addr *dst, uint8_t proto)
{
	h->v6 = !inany_is_v4(src);
	if (!h->v6) {
		eth_header_to_guest(c, &h->eh, inany_v4(src), ETHERTYPE_IP);
		/* Draws the datagram's one IP id. */
		ip4_build_header(c, &h->ih4, inany_v4(src), inany_v4(dst),
		                 proto, 0);
		return;
	}
	eth_guest_mac(c, h->eh.ether_dhost);
	memcpy(h->eh.ether_shost, eth_router6(c), 6);
	h->eh.ether_type = htons(ETHERTYPE_IPV6);
	ip6_build_header(&h->h6.ih6, src, dst, IPPROTO_FRAGMENT, 0);
	memset(&h->h6.fh, 0, sizeof(h->h6.fh));
	h->h6.fh.ip6f_nxt = proto;
	h->h6.fh.ip6f_ident = htonl(frag6_ident(c));
}

/**
 * frag_hdrs_set() - fit the headers to one fragment
 * @h:		headers
 * @off:	payload offset of the fragment, a multiple of 8
 * @len:	its payload bytes
 * @more:	more fragments follow
 * @iov:	filled with the Ethernet and IP header entries
 *
 * Return: entries used in @iov
 */
static int frag_hdrs_set(struct frag_hdrs *h, size_t off, size_t len, bool more,
                         struct iovec *iov)
{
	iov[0] = (struct iovec){&h->eh, sizeof(h->eh)};
	if (!h->v6) {
		h->ih4.tot_len = htons((uint16_t)(sizeof(h->ih4) + len));
		h->ih4.frag_off =
		        htons((uint16_t)(off / 8) | (more ? IP_MF : 0));
		h->ih4.check = 0;
		h->ih4.check = csum_ip4_header(&h->ih4, sizeof(h->ih4));
		iov[1] = (struct iovec){&h->ih4, sizeof(h->ih4)};
		return 2;
	}
	h->h6.ih6.ip6_plen = htons((uint16_t)(sizeof(h->h6.fh) + len));
	/* The offset field holds 8-byte units shifted left by 3: bytes. */
	h->h6.fh.ip6f_offlg =
	        htons((uint16_t)off) | (more ? IP6F_MORE_FRAG : 0);
	iov[1] = (struct iovec){&h->h6, sizeof(h->h6)};
	return 2;
}

/**
 * frag_output() - send an L4 payload above the MTU to the guest as fragments
 * @c:		context
 * @src:	source address (IPv4-mapped for IPv4)
 * @dst:	destination, same family
 * @proto:	L4 protocol
 * @l4:		L4 header and payload, checksums complete
 * @l4cnt:	entries in @l4, at most 12
 * @l4len:	bytes in @l4
 *
 * Return: 0 if every fragment was written, -1 otherwise
 */
int frag_output(struct ctx *c, const struct in6_addr *src,
                const struct in6_addr *dst, uint8_t proto,
                const struct iovec *l4, int l4cnt, size_t l4len)
{
	bool v6 = !inany_is_v4(src);
	size_t hdr = v6 ? sizeof(struct ip6_frag_hdrs) : sizeof(struct iphdr);
	size_t per = c->tap.mtu > hdr ? (c->tap.mtu - hdr) & ~(size_t)7 : 0;
	struct frag_hdrs h;
	int ret = 0;

	if (l4cnt > 12 || !per || l4len > 65535 - (v6 ? 0 : hdr)) {
		c->stats.drops[DROP_BAD_LENGTH]++;
		return -1;
	}
	frag_hdrs_init(c, &h, src, dst, proto);
	for (size_t off = 0; off < l4len; off += per) {
		size_t len = l4len - off < per ? l4len - off : per;
		struct iovec iov[16];
		int n = frag_hdrs_set(&h, off, len, off + len < l4len, iov);

		n += iov_slice(l4, l4cnt, off, len, iov + n);
		if (tap_send(c, NULL, iov, n))
			ret = -1;
	}
	return ret;
}
