// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - fuzzing: the sandbox, context and host peers every harness shares
 *
 * Harnesses run inside `unshare --net` (hack/fuzz.sh): the only interface
 * is the namespace's own loopback, which fuzz_sandbox() brings up, so every
 * host socket tapir opens for the guest ends at the peers below or fails
 * with ENETUNREACH. The clock and the keys are the fake ones of
 * driver/core/clock.c and driver/core/seed.c: an input replays exactly.
 */

#define _GNU_SOURCE /* accept4() */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/icmp6.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <event2/event.h>

#include "driver/core/clock.h"
#include "driver/stack/csum.h"
#include "driver/flow/flow.h"
#include "driver/stack/dhcp.h"
#include "driver/stack/eth.h"
#include "driver/stack/frag.h"
#include "driver/core/log.h"
#include "driver/stack/ndp.h"
#include "driver/udp/ping.h"
#include "driver/core/seed.h"
#include "driver/thread/tap_read.h"
#include "driver/stack/tap_write.h"
#include "driver/tcp/tcp.h"
#include "driver/udp/udp.h"
#include "tests/fuzz/fuzzenv.h"
#include "tests/unit/fakectx.h"

#define FUZZ_SEED 0x7461706972ULL /* "tapir" */
#define MAX_ACCEPTED 16
#define MAX_FLOWS 16
#define MAX_TIMERS 256

static const uint8_t guest_mac[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
static char resolv_path[64];
static int listeners[2] = {-1, -1};
static int udp_peers[3] = {-1, -1, -1};
static int accepted[MAX_ACCEPTED];
static unsigned int naccepted;
static uint8_t rx[65536 + 64];

/**
 * struct flow - what tapir last said on one TCP connection, for
 *		 fuzz_fix_tcp()
 * @used:	entry valid
 * @gport:	guest port
 * @rport:	remote port
 * @next_seq:	tapir's sequence number after its last segment
 * @ack:	what tapir acknowledged last: the guest's next sequence number
 */
struct flow {
	bool used;
	uint16_t gport;
	uint16_t rport;
	uint32_t next_seq;
	uint32_t ack;
};

static struct flow flows[MAX_FLOWS];
static unsigned int next_flow;

/**
 * die() - report a harness set-up failure and stop
 * @what:	the failing step and object
 * @err:	errno value, or 0
 */
static void die(const char *what, int err)
{
	fprintf(stderr, "fuzz: %s%s%s\n", what, err ? ": " : "",
	        err ? strerror(err) : "");
	exit(1);
}

/**
 * only_loopback() - whether lo is this network namespace's only interface
 *
 * What a fresh `unshare --net` gives: with no other interface there is no
 * route anywhere but to ourselves.
 *
 * Return: true if so; false if there is any other, or the list failed
 */
static bool only_loopback(void)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	bool ok = ifs != NULL;

	for (i = ifs; ok && i->if_index; i++)
		if (strcmp(i->if_name, "lo"))
			ok = false;
	if (ifs)
		if_freenameindex(ifs);
	return ok;
}

/**
 * loopback_up() - bring up this namespace's lo, as a fresh one has it down
 */
static void loopback_up(void)
{
	struct ifreq ifr = {0};
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		die("socket for lo", errno);
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr))
		die("get flags of lo", errno);
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr))
		die("bring up lo", errno);
	close(s);
}

/**
 * write_file() - write a short text to a file
 * @path:	file
 * @text:	contents
 *
 * Return: 0 on success, else errno
 */
static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0644);
	ssize_t n;

	if (fd < 0)
		return errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : EIO;
}

/**
 * write_resolv() - create the harness's own resolv.conf in resolv_path
 *
 * mkstemp(): /tmp is shared with the host's other users, and a name they
 * could guess would let them plant a symlink for root to write through.
 *
 * Return: 0 on success, -1 with errno set
 */
static int write_resolv(void)
{
	static const char text[] = "nameserver 127.0.0.1\n";
	int fd;
	ssize_t n;

	snprintf(resolv_path, sizeof(resolv_path), "/tmp/tapir-fuzz-XXXXXX");
	fd = mkstemp(resolv_path);
	if (fd < 0) {
		resolv_path[0] = '\0';
		return -1;
	}
	n = write(fd, text, sizeof(text) - 1);
	close(fd);
	if (n != (ssize_t)sizeof(text) - 1) {
		errno = n < 0 ? errno : EIO;
		return -1;
	}
	return 0;
}

/**
 * remove_resolv() - atexit(): remove the harness's resolv.conf
 */
static void remove_resolv(void)
{
	if (resolv_path[0])
		unlink(resolv_path);
}

/**
 * open_peer() - a non-blocking socket bound on this netns's loopback
 * @family:	AF_INET or AF_INET6
 * @type:	SOCK_STREAM (then listening) or SOCK_DGRAM
 * @port:	port
 *
 * Return: the socket; IPv6 may be missing (then -1), IPv4 may not
 */
static int open_peer(int family, int type, uint16_t port)
{
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6,
	                          .sin6_addr = IN6ADDR_LOOPBACK_INIT,
	                          .sin6_port = htons(port)};
	struct sockaddr_in a4 = {.sin_family = AF_INET,
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	                         .sin_port = htons(port)};
	int one = 1;
	int s = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (s < 0)
		die("socket for a host peer", errno);
	if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    (family == AF_INET6 &&
	     setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one))))
		die("set up a host peer socket", errno);
	if ((family == AF_INET ? bind(s, (struct sockaddr *)&a4, sizeof(a4))
	                       : bind(s, (struct sockaddr *)&a6, sizeof(a6))) ||
	    (type == SOCK_STREAM && listen(s, 64))) {
		if (family == AF_INET)
			die("bind a host peer on 127.0.0.1", errno);
		close(s);
		return -1;
	}
	return s;
}

/**
 * fuzz_sandbox() - once per process: refuse the host's network, then set
 *		    up loopback, a resolv.conf, quiet logs and the host peers
 *
 * Exits with one line if the namespace has any interface but lo: a
 * harness must never reach a real network.
 */
void fuzz_sandbox(void)
{
	int null, err;

	if (!only_loopback())
		die("refusing to run with network interfaces other than lo: "
		    "run inside `unshare --net` (make fuzz does)",
		    0);
	loopback_up();
	/* Per namespace: lets tapir's ping sockets work here. */
	err = write_file("/proc/sys/net/ipv4/ping_group_range", "0 2147483647");
	if (err)
		die("allow ping sockets (ping_group_range)", err);
	if (write_resolv())
		die("write the fuzzer's resolv.conf", errno);
	atexit(remove_resolv);
	/* --help and --version print to stdout; libFuzzer reports on stderr. */
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null < 0 || dup2(null, STDOUT_FILENO) < 0)
		die("redirect stdout to /dev/null", errno);
	close(null);
	log_silent = true;
	listeners[0] = open_peer(AF_INET, SOCK_STREAM, FUZZ_TCP_PORT);
	listeners[1] = open_peer(AF_INET6, SOCK_STREAM, FUZZ_TCP_PORT);
	udp_peers[0] = open_peer(AF_INET, SOCK_DGRAM, 53);
	udp_peers[1] = open_peer(AF_INET, SOCK_DGRAM, FUZZ_UDP_PORT);
	udp_peers[2] = open_peer(AF_INET6, SOCK_DGRAM, FUZZ_UDP_PORT);
}

/**
 * fuzz_env_open() - a context as loop_prepare() builds it, on a fake tap,
 *		     with small tables, the fake clock and fixed keys
 * @e:		environment to fill; aborts on failure
 */
void fuzz_env_open(struct fuzz_env *e)
{
	seed_set_fixed(FUZZ_SEED);
	clock_set_fake(FUZZ_CLOCK_START);
	memset(flows, 0, sizeof(flows));
	e->peer = fake_ctx_init(&e->c, &e->o, true, guest_mac);
	e->c.tcp_conns = FUZZ_TCP_CONNS;
	e->c.frag_slots = FUZZ_FRAG_SLOTS;
	e->c.resolv_conf = resolv_path;
	e->c.base = event_base_new();
	if (!e->c.base || flow_init(&e->c) || tcp_init(&e->c) ||
	    udp_init(&e->c) || ping_init(&e->c) || frag_init(&e->c) ||
	    ndp_init(&e->c))
		die("set up the fuzz context", 0);
}

/**
 * fuzz_env_close() - free everything fuzz_env_open() and the inputs made
 * @e:		environment
 */
void fuzz_env_close(struct fuzz_env *e)
{
	ndp_cleanup(&e->c);
	dhcp_cleanup(&e->c);
	frag_cleanup(&e->c);
	ping_cleanup(&e->c);
	udp_cleanup(&e->c);
	tcp_cleanup(&e->c);
	flow_cleanup(&e->c);
	tapio_stop(&e->c);
	event_base_free(e->c.base);
	e->c.base = NULL;
	close(e->peer);
	e->peer = -1;
	fuzz_host_reset();
}

/**
 * fuzz_env_tick() - count an input; every @every inputs, rebuild the context
 * @e:		environment
 * @every:	inputs between rebuilds
 *
 * State carries across inputs (an open connection, a pending fragment),
 * which lets the fuzzer build on it; the rebuild bounds how much.
 */
void fuzz_env_tick(struct fuzz_env *e, unsigned long every)
{
	if (++e->inputs % every)
		return;
	fuzz_env_close(e);
	fuzz_env_open(e);
}

/**
 * flow_of() - the record of a TCP connection, created if new
 * @gport:	guest port
 * @rport:	remote port
 * @create:	take an entry (the oldest) if there is none
 *
 * Return: the entry, or NULL if none and !@create
 */
static struct flow *flow_of(uint16_t gport, uint16_t rport, bool create)
{
	struct flow *f;

	for (unsigned int i = 0; i < MAX_FLOWS; i++)
		if (flows[i].used && flows[i].gport == gport &&
		    flows[i].rport == rport)
			return &flows[i];
	if (!create)
		return NULL;
	f = &flows[next_flow++ % MAX_FLOWS];
	memset(f, 0, sizeof(*f));
	f->used = true;
	f->gport = gport;
	f->rport = rport;
	return f;
}

/**
 * l4_of() - find the TCP, UDP or ICMP header of an unfragmented packet
 * @frame:	Ethernet frame
 * @len:	its length
 * @proto:	set to the L4 protocol
 * @l4len:	set to the L4 length the IP header claims, within @len
 * @v6:		set for IPv6
 *
 * Headers are copied out: a frame's IP header sits 14 bytes into a buffer,
 * not aligned for the structs.
 *
 * Return: offset of the L4 header, or 0 if there is none to look at
 */
static size_t l4_of(const uint8_t *frame, size_t len, uint8_t *proto,
                    size_t *l4len, bool *v6)
{
	uint16_t type;

	if (len < 14)
		return 0;
	type = (uint16_t)(frame[12] << 8 | frame[13]);
	if (type == ETHERTYPE_IP && len >= 14 + 20) {
		struct iphdr ih;
		size_t hlen, tot;

		memcpy(&ih, frame + 14, sizeof(ih));
		hlen = (size_t)ih.ihl * 4;
		tot = ntohs(ih.tot_len);
		if (hlen < 20 || tot < hlen || 14 + tot > len ||
		    (ntohs(ih.frag_off) & 0x3fff))
			return 0;
		*proto = ih.protocol;
		*l4len = tot - hlen;
		*v6 = false;
		return 14 + hlen;
	}
	if (type == ETHERTYPE_IPV6 && len >= 14 + 40) {
		struct ip6_hdr ih;
		size_t plen;

		memcpy(&ih, frame + 14, sizeof(ih));
		plen = ntohs(ih.ip6_plen);
		if (14 + 40 + plen > len)
			return 0;
		*proto = ih.ip6_nxt;
		*l4len = plen;
		*v6 = true;
		return 14 + 40;
	}
	return 0;
}

/**
 * fuzz_fix_csums() - make a frame's IPv4 header and L4 checksums right
 * @frame:	Ethernet frame, changed in place
 * @len:	its length
 *
 * tapir checks them, and a fuzzer would rarely guess them: harnesses call
 * this when the input asks, so that the fuzzer gets past the checks.
 */
void fuzz_fix_csums(uint8_t *frame, size_t len)
{
	size_t off, l4len, coff;
	uint8_t proto;
	uint32_t sum;
	uint16_t ck;
	bool v6;

	if (len >= 14 + 20 && frame[12] == 0x08 && frame[13] == 0x00) {
		size_t hlen = (size_t)(frame[14] & 0x0f) * 4;

		if (hlen >= 20 && 14 + hlen <= len) {
			coff = 14 + offsetof(struct iphdr, check);
			memset(frame + coff, 0, 2);
			ck = csum_ip4_header(frame + 14, hlen);
			memcpy(frame + coff, &ck, 2);
		}
	}
	off = l4_of(frame, len, &proto, &l4len, &v6);
	if (!off)
		return;
	switch (proto) {
	case IPPROTO_TCP:
		coff = offsetof(struct tcphdr, check);
		break;
	case IPPROTO_UDP:
		coff = offsetof(struct udphdr, check);
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		coff = 2;
		break;
	default:
		return;
	}
	if (l4len < coff + 2)
		return;
	memset(frame + off + coff, 0, 2);
	if (proto == IPPROTO_ICMP) {
		sum = 0;
	} else if (v6) {
		struct in6_addr src, dst;

		memcpy(&src, frame + 14 + offsetof(struct ip6_hdr, ip6_src),
		       16);
		memcpy(&dst, frame + 14 + offsetof(struct ip6_hdr, ip6_dst),
		       16);
		sum = csum_pseudo6(&src, &dst, proto, (uint32_t)l4len);
	} else {
		struct in_addr src, dst;

		memcpy(&src, frame + 14 + offsetof(struct iphdr, saddr), 4);
		memcpy(&dst, frame + 14 + offsetof(struct iphdr, daddr), 4);
		sum = csum_pseudo4(src, dst, proto, (uint32_t)l4len);
	}
	ck = csum_fold(csum_add(sum, frame + off, l4len));
	if (proto == IPPROTO_UDP && !ck)
		ck = 0xffff;
	memcpy(frame + off + coff, &ck, 2);
}

/**
 * fuzz_fix_tcp() - give a guest TCP segment the numbers tapir expects
 * @frame:	Ethernet frame, changed in place (checksums are not redone)
 * @len:	its length
 *
 * The sequence number becomes what tapir acknowledged last on that
 * connection and the acknowledgement what it sent up to, so the fuzzer
 * gets past handshakes and into data, windows and teardown.
 */
void fuzz_fix_tcp(uint8_t *frame, size_t len)
{
	size_t l4len, off;
	struct tcphdr th;
	struct flow *f;
	uint8_t proto;
	bool v6;

	off = l4_of(frame, len, &proto, &l4len, &v6);
	if (!off || proto != IPPROTO_TCP || l4len < sizeof(th))
		return;
	memcpy(&th, frame + off, sizeof(th));
	f = flow_of(ntohs(th.source), ntohs(th.dest), false);
	if (!f)
		return;
	th.seq = htonl(f->ack);
	th.ack_seq = htonl(f->next_seq);
	memcpy(frame + off, &th, sizeof(th));
}

/**
 * note_output() - remember the numbers of a TCP segment tapir sent
 * @frame:	Ethernet frame from tapir
 * @len:	its length
 */
static void note_output(const uint8_t *frame, size_t len)
{
	size_t l4len, hl, off;
	struct tcphdr th;
	struct flow *f;
	uint8_t proto;
	uint32_t n;
	bool v6;

	off = l4_of(frame, len, &proto, &l4len, &v6);
	if (!off || proto != IPPROTO_TCP || l4len < sizeof(th))
		return;
	memcpy(&th, frame + off, sizeof(th));
	hl = (size_t)th.doff * 4;
	if (hl < sizeof(th) || hl > l4len)
		return;
	f = flow_of(ntohs(th.dest), ntohs(th.source), th.syn);
	if (!f)
		return;
	n = ntohl(th.seq) + (uint32_t)(l4len - hl) + th.syn + th.fin;
	if (th.rst)
		f->used = false;
	/* Never backwards: a retransmission must not undo a later ACK. */
	if ((int32_t)(n - f->next_seq) > 0 || th.syn)
		f->next_seq = n;
	if (th.ack)
		f->ack = ntohl(th.ack_seq);
}

/**
 * drain() - read every frame tapir sent to the guest, noting TCP numbers
 * @e:		environment
 */
static void drain(struct fuzz_env *e)
{
	for (int i = 0; i < 4096; i++) {
		ssize_t n = recv(e->peer, rx, sizeof(rx), 0);

		if (n < 0)
			return;
		if ((size_t)n > e->c.vnet_len)
			note_output(rx + e->c.vnet_len,
			            (size_t)n - e->c.vnet_len);
	}
}

/**
 * settle() - let tapir and the host peers answer each other, a bounded
 *	      number of rounds
 * @e:		environment
 */
static void settle(struct fuzz_env *e)
{
	for (int i = 0; i < 2; i++) {
		event_base_loop(e->c.base, EVLOOP_NONBLOCK);
		fuzz_host_service();
		drain(e);
	}
}

/**
 * fuzz_feed() - hand one frame to eth_input() as tap_read_cb() would
 * @e:		environment
 * @buf:	vnet header (if @vnet) and frame
 * @len:	bytes at @buf
 * @vnet:	whether @buf starts with FUZZ_VNET_LEN bytes of vnet header
 *
 * Header and frame go in exactly-sized heap buffers, so that AddressSanitizer
 * sees a parser reading one byte past either.
 */
void fuzz_feed(struct fuzz_env *e, const uint8_t *buf, size_t len, bool vnet)
{
	size_t hl = vnet ? FUZZ_VNET_LEN : 0;
	uint8_t *vh = NULL;
	struct frame f;

	e->c.vnet_len = (unsigned int)hl;
	if (len < hl + 14) {
		e->c.stats.drops[DROP_SHORT_FRAME]++;
		return;
	}
	if (vnet) {
		vh = malloc(hl);
		if (!vh)
			abort();
		memcpy(vh, buf, hl);
	}
	f.vh = (void *)vh;
	f.len = len - hl;
	f.data = malloc(f.len);
	if (!f.data)
		abort();
	memcpy(f.data, buf + hl, f.len);
	e->c.stats.tap_rx_frames++;
	e->c.stats.tap_rx_bytes += f.len;
	eth_input(&e->c, &f);
	tcp_flush(&e->c);
	free(f.data);
	free(vh);
	settle(e);
}

/**
 * struct timers - the pending timers of a loop
 * @ev:		the events
 * @n:		entries in @ev
 */
struct timers {
	struct event *ev[MAX_TIMERS];
	unsigned int n;
};

/**
 * collect_timer() - event_base_foreach_event() callback: note a pending
 *		     timeout
 * @base:	loop
 * @ev:		event
 * @arg:	struct timers being filled
 *
 * Return: 0 to go on, 1 when the list is full
 */
static int collect_timer(const struct event_base *base, const struct event *ev,
                         void *arg)
{
	struct timers *t = arg;

	(void)base;
	if (!event_pending(ev, EV_TIMEOUT, NULL))
		return 0;
	t->ev[t->n++] = (struct event *)ev;
	return t->n == MAX_TIMERS;
}

/**
 * fuzz_advance() - move the fake clock and fire every pending timer
 * @e:		environment
 * @ms:		milliseconds to add
 *
 * libevent's timers run on the real clock, which barely moves in a fuzz
 * run: so each pending one fires now, and the code it runs reads the fake
 * clock to decide whether a retransmission, probe, idle timeout or expiry
 * is due, as it would after that much time.
 */
void fuzz_advance(struct fuzz_env *e, uint64_t ms)
{
	struct timers t = {.n = 0};

	clock_advance(ms * 1000000ULL);
	event_base_foreach_event(e->c.base, collect_timer, &t);
	for (unsigned int i = 0; i < t.n; i++)
		event_active(t.ev[i], EV_TIMEOUT, 1);
	settle(e);
}

/**
 * keep_accepted() - take an accepted connection, closing the oldest if
 *		     there are too many, and greet it
 * @fd:		the connection
 */
static void keep_accepted(int fd)
{
	static const char hello[] = "hello from the fuzzer's host\n";

	if (naccepted == MAX_ACCEPTED) {
		close(accepted[0]);
		memmove(accepted, accepted + 1,
		        (MAX_ACCEPTED - 1) * sizeof(accepted[0]));
		naccepted--;
	}
	accepted[naccepted++] = fd;
	if (send(fd, hello, sizeof(hello) - 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		return; /* the guest side may be gone already */
}

/**
 * fuzz_host_service() - the host peers' turn: accept and greet, read what
 *			 the guest sent, echo datagrams (DNS answers get QR)
 */
void fuzz_host_service(void)
{
	static uint8_t buf[65536];

	for (int l = 0; l < 2; l++)
		for (int i = 0; listeners[l] >= 0 && i < 8; i++) {
			int fd = accept4(listeners[l], NULL, NULL,
			                 SOCK_NONBLOCK | SOCK_CLOEXEC);

			if (fd < 0)
				break;
			keep_accepted(fd);
		}
	for (unsigned int i = 0; i < naccepted; i++)
		for (int r = 0; r < 4; r++)
			if (recv(accepted[i], buf, sizeof(buf), 0) <= 0)
				break;
	for (int u = 0; u < 3; u++)
		for (int i = 0; udp_peers[u] >= 0 && i < 8; i++) {
			struct sockaddr_storage from;
			socklen_t fl = sizeof(from);
			ssize_t n = recvfrom(udp_peers[u], buf, sizeof(buf), 0,
			                     (struct sockaddr *)&from, &fl);

			if (n < 0)
				break;
			if (u == 0 && n > 2)
				buf[2] |= 0x80;
			sendto(udp_peers[u], buf, (size_t)n, MSG_DONTWAIT,
			       (struct sockaddr *)&from, fl);
		}
}

/**
 * fuzz_host_reset() - close every accepted connection
 */
void fuzz_host_reset(void)
{
	for (unsigned int i = 0; i < naccepted; i++)
		close(accepted[i]);
	naccepted = 0;
}
