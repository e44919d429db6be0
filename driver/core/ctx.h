/* SPDX-License-Identifier: GPL-2.0-or-later
 * tapir - the one execution context passed to every datapath function
 */
#ifndef TAPIR_CTX_H
#define TAPIR_CTX_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/types.h>

#include "driver/core/opts.h"
#include "ipc/msg.h"
#include "driver/core/stats.h"

struct event_base;
struct event;
struct flow_table;
struct tcp_state;
struct udp_state;
struct ping_state;
struct api_state;
struct pcap_state;
struct dhcp_state;
struct frag_state;
struct ndp_state;
struct dns_state;
struct hostfwd_state;
struct pasta_fwd_state;
struct cond_state;

/* nshelper.h's NS_TABLES: the namespace's /proc/net tables, pasta mode. */
#define CTX_NS_TABLES 5
struct nsfwd_state;
struct usplice_state;
struct thread_set;
struct flow_owners;
struct frame;
struct pkt;

/**
 * enum handoff - how the frame a thread handles came to it
 * @HANDOFF_NONE:	read from the thread's own tap queue
 * @HANDOFF_OWNER:	passed on by its reader: this thread owns its flow
 * @HANDOFF_PLACED:	a SYN whose connection placement put on this thread
 * @HANDOFF_MAIN:	passed to the main thread, which alone keeps the
 *			state it needs (DHCP leases, router adverts)
 *
 * A frame is passed at most once: one that arrived by a hand-off is
 * handled where it is, whatever it finds there.
 */
enum handoff {
	HANDOFF_NONE,
	HANDOFF_OWNER,
	HANDOFF_PLACED,
	HANDOFF_MAIN,
};

/**
 * struct ctx - the running driver
 * @o:			validated options
 * @base:		libevent loop
 * @tap:		what the namespace helper reported
 * @tapfd:		tap fds, one per queue, non-blocking
 * @ns_tables:	pasta mode: the namespace's /proc/net/{tcp,tcp6,udp,udp6}
 *		and its sock_diag socket (nshelper.c's open_tables()), else
 *		-1
 * @tap_ev:		read events on @tapfd
 * @tap_lone:		per queue, wakeups left that read one frame only
 *			(tapio.c)
 * @tap_rx:		buffer of tap reads (tapio.c), 64-byte aligned
 * @queue:		the tap queue frames go out on: the one being read, or
 *			the queue of the flow whose socket or timer fired, so
 *			that the kernel's flow steering (which follows the
 *			queue a flow was last written on) keeps each flow on
 *			one queue
 * @vnet_len:		bytes of virtio_net_hdr before each frame, or 0
 * @guest4:		the guest's IPv4 address (net+100)
 * @gw4:		gateway and host alias (net+2)
 * @dns4:		DNS forwarder (net+3)
 * @mask4:		netmask of the virtual network
 * @guest6:		the guest's IPv6 address forwards reach (o->guest6)
 *			where tapir configured it, else ::
 * @gw6:		gateway in IPv6 (fd00::2, or pasta's o->gw6)
 * @dns6:		DNS forwarder in IPv6 (fd00::3, or pasta's o->dns6:
 *			:: for none)
 * @guest_mac:		last source MAC seen from the guest
 * @guest_mac_shared:	the guest's MAC as any thread last learnt it, a
 *			word the datapath threads share (eth.c), or NULL
 *			when one thread serves every queue
 * @ip4_id:		identification of the next IPv4 packet to the guest
 * @stats:		datapath counters
 * @flows:		every TCP, UDP and ping flow (flow.c)
 * @tcp:		TCP state besides its flows (tcp.c)
 * @udp:		UDP flow state (udp.c)
 * @ping:		ICMP echo flow state (ping.c)
 * @api:		API socket state (api.c)
 * @pcap:		capture file state (pcap.c)
 * @dhcp:		DHCP leases (dhcp.c)
 * @frag:		IP reassembly state (frag.c)
 * @ndp:		router advert timer (ndp.c)
 * @dns:		cached resolver list (dns.c)
 * @hostfwd:		port forwards (hostfwd.c)
 * @pasta_fwd:	pasta mode: what -t/-u auto keeps (pasta_fwd.c)
 * @nsfwd:	pasta mode: -T auto's listeners (nsfwd.c)
 * @usplice:	spliced UDP flows' shared state, once one was made
 *		(udpsplice.c)
 * @cond:	this thread's network conditions: held frames, its timer
 *		(cond.c)
 * @exit_status:	status for main() once the loop ends
 * @target_pidfd:	pidfd of the target process, or -1
 * @tap_read_errors:	failed tap reads in a row (tapio.c)
 * @isolated:		sandboxed or filtered: no fork, no setns any more
 * @spare_fd:		kept free for refusing connections when out of fds
 *			(fdlimit.c), or -1
 * @run_child:		`tapir run`: the command's PID, whose exit ends the
 *			loop with its status; 0 in attach mode
 * @tcp_conns:		TCP flows at most; 0 = flow_caps()'s ceiling. Tests and
 *			fuzzers ask for a few, so a context is cheap to build
 * @frag_slots:		datagrams reassembled at once; 0 = FRAG_SLOTS
 * @resolv_conf:	resolver file dns.c re-reads; NULL = /etc/resolv.conf
 * @threads:		the datapath threads (thread.c), or NULL when this one
 *			thread serves every tap queue
 * @owners:		which thread owns each flow (flow_owner.c), shared by
 *			the threads; NULL without them
 * @thread:		index of this context's thread, which is also its
 *			queue; 0 is the main thread
 * @rx:			the frame being handled, as read from the tap or
 *			handed over, for passing it to another thread
 * @rx_handoff:		how @rx came to this thread
 * @rx_whole:		the datagram reassembled from @rx and the fragments
 *			before it, while it is handled; else NULL
 * @icmp_err_ms:	ICMP errors to the guest, a token bucket (icmp.c):
 *			clock_ms() of its last refill
 * @icmp_err_spent:	errors sent beyond what it refilled since
 */
struct ctx {
	const struct opts *o;
	struct event_base *base;
	struct ipc_tap_info tap;
	int tapfd[TAPIR_MAX_QUEUES];
	int ns_tables[CTX_NS_TABLES];
	struct event *tap_ev[TAPIR_MAX_QUEUES];
	uint8_t tap_lone[TAPIR_MAX_QUEUES];
	uint8_t *tap_rx;
	unsigned int queue;
	unsigned int vnet_len;
	struct in_addr guest4;
	struct in_addr gw4;
	struct in_addr dns4;
	struct in_addr mask4;
	struct in6_addr guest6;
	struct in6_addr gw6;
	struct in6_addr dns6;
	uint8_t guest_mac[6];
	uint64_t *guest_mac_shared;
	uint16_t ip4_id;
	struct stats stats;
	struct flow_table *flows;
	struct tcp_state *tcp;
	struct udp_state *udp;
	struct ping_state *ping;
	struct api_state *api;
	struct pcap_state *pcap;
	struct dhcp_state *dhcp;
	struct frag_state *frag;
	struct ndp_state *ndp;
	struct dns_state *dns;
	struct hostfwd_state *hostfwd;
	struct pasta_fwd_state *pasta_fwd;
	struct nsfwd_state *nsfwd;
	struct usplice_state *usplice;
	struct cond_state *cond;
	int exit_status;
	int target_pidfd;
	int spare_fd;
	unsigned int tap_read_errors;
	bool isolated;
	pid_t run_child;
	unsigned int tcp_conns;
	unsigned int frag_slots;
	const char *resolv_conf;
	struct thread_set *threads;
	struct flow_owners *owners;
	unsigned int thread;
	const struct frame *rx;
	enum handoff rx_handoff;
	const struct pkt *rx_whole;
	uint64_t icmp_err_ms;
	unsigned int icmp_err_spent;
};

void ctx_set_addresses(struct ctx *c);
unsigned int ctx_queue_first(const struct ctx *c);
unsigned int ctx_queue_end(const struct ctx *c);
unsigned int ctx_queue_count(const struct ctx *c);

#endif /* TAPIR_CTX_H */
