// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - datapath threads: frames handed to the thread that must see them
 *
 * A flow belongs to one thread (flow_owner.c). tun steers a flow's frames
 * to the queue its frames to the guest last left on, which is its owner's,
 * but not always: a forward's flow whose entry in tun's steering table
 * aged out (after ~3 s without a frame to the guest), a datagram
 * reassembled from fragments (tun steers those by addresses alone), a
 * guest SYN that placement put on another thread. A frame its reader has
 * no flow for is looked up in the owner table and handed to the owner,
 * once: the receiver handles it whatever it finds (enum handoff). DHCP
 * and NDP go to the main thread, which alone keeps their state.
 */

#include <string.h>

#include "driver/stack/eth.h"
#include "driver/flow/flow_owner.h"
#include "driver/stack/ip.h"
#include "driver/stack/tap_write.h"
#include "driver/thread/thread_internal.h"

/**
 * frame_msg() - a copy of what @c is handling, as a frame
 * @c:		context with @c->rx
 *
 * A datagram reassembled here (@c->rx_whole) goes as one frame: the
 * Ethernet header of its last fragment, its rebuilt IP header and the
 * whole payload, and a zero vnet header (nothing left to offload).
 *
 * Return: the message, or NULL on ENOMEM
 */
static struct msg *frame_msg(const struct ctx *c)
{
	const struct pkt *w = c->rx_whole;
	const struct frame *f = c->rx;
	size_t l3 = w ? (size_t)(w->l4 - w->l3) + w->l4len : 0;
	struct msg *m;

	m = msg_new(MSG_FRAME, c->vnet_len + (w ? ETH_HLEN_ + l3 : f->len));
	if (!m)
		return NULL;
	if (w) {
		memcpy(m->data + c->vnet_len, f->data, ETH_HLEN_);
		memcpy(m->data + c->vnet_len + ETH_HLEN_, w->l3, l3);
		return m;
	}
	if (c->vnet_len)
		memcpy(m->data, f->vh, c->vnet_len);
	memcpy(m->data + c->vnet_len, f->data, f->len);
	return m;
}

/**
 * handoff_try() - give what @c is handling to another thread
 * @c:		context handling a frame from the tap (@c->rx set)
 * @to:		receiver's index
 * @how:	enum handoff it arrives with
 * @k:		HANDOFF_PLACED: the connection's key, else NULL
 *
 * Return: true if the receiver has it; false if its inbox is full (or no
 *	   memory): the frame is still @c's
 */
bool handoff_try(struct ctx *c, unsigned int to, enum handoff how,
                 const struct flow_key *k)
{
	struct msg *m = frame_msg(c);

	if (!m)
		return false;
	m->handoff = how;
	if (k)
		m->key = *k;
	return !inbox_post(&c->threads->t[to], m);
}

/**
 * handoff_or_drop() - give what @c is handling to another thread, or drop
 *		       it if that thread's inbox is full
 * @c:		context
 * @to:		receiver's index
 * @how:	enum handoff it arrives with
 */
static void handoff_or_drop(struct ctx *c, unsigned int to, enum handoff how)
{
	if (!handoff_try(c, to, how, NULL))
		c->stats.drops[DROP_HANDOFF]++;
}

/**
 * thread_route_miss() - a frame from the guest matched no flow here: hand
 *			 it to the thread that owns its flow, or place a
 *			 new connection
 * @c:		context
 * @k:		the flow's key, guest side
 * @syn:	a TCP SYN (without ACK): a new connection, if no thread has
 *		one with @k
 *
 * Return: true if the frame was passed on (or dropped): stop handling it;
 *	   false: handle it here, as a miss (open the flow, or refuse it)
 */
bool thread_route_miss(struct ctx *c, const struct flow_key *k, bool syn)
{
	int owner;

	if (!c->threads || !c->rx || c->rx_handoff != HANDOFF_NONE)
		return false;
	owner = flow_owner_find(c->owners, k);
	if (owner >= 0) {
		if ((unsigned int)owner == c->thread)
			return false;
		handoff_or_drop(c, (unsigned int)owner, HANDOFF_OWNER);
		return true;
	}
	return syn && place_syn(c, k);
}

/**
 * thread_pass_to_owner() - a flow @c was about to open turned out to be
 *			    another thread's (it took the key meanwhile):
 *			    hand the frame there, or drop it
 * @c:		context
 * @k:		the flow's key, guest side
 */
void thread_pass_to_owner(struct ctx *c, const struct flow_key *k)
{
	if (!thread_route_miss(c, k, false))
		c->stats.drops[DROP_HANDOFF]++;
}

/**
 * thread_pass_to_main() - hand a frame to the main thread, whose state it
 *			   needs (DHCP leases, router adverts)
 * @c:		context
 *
 * Return: true if passed (or dropped); false if @c is the main thread's
 *	   or the frame can't be passed: handle it here
 */
bool thread_pass_to_main(struct ctx *c)
{
	if (!c->threads || !c->thread || !c->rx)
		return false;
	handoff_or_drop(c, 0, HANDOFF_MAIN);
	return true;
}

/**
 * handoff_frame() - run a frame another thread passed through eth_input()
 * @c:		receiving context
 * @m:		MSG_FRAME
 */
void handoff_frame(struct ctx *c, struct msg *m)
{
	bool placed = m->handoff == HANDOFF_PLACED;
	struct frame f;

	if (placed)
		place_begin(c);
	if (m->len >= c->vnet_len + ETH_HLEN_) {
		f.vh = c->vnet_len ? (void *)m->data : NULL;
		f.data = m->data + c->vnet_len;
		f.len = m->len - c->vnet_len;
		c->rx = &f;
		c->rx_handoff = m->handoff;
		c->queue = c->thread;
		eth_input(c, &f);
		c->rx = NULL;
		c->rx_handoff = HANDOFF_NONE;
	}
	if (placed)
		place_end(c, &m->key);
}
