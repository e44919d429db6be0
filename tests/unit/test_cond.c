// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests for network conditions (driver/cond/cond.c, cond_spec.c):
 * what the rule syntax takes and refuses, field by field; and what the
 * delay line does to frames tap_send() writes, on a fake clock: delay and
 * its order, loss within a binomial bound and repeatable by seed, the
 * rate's spacing and queue, partitions, scopes, duplicates, reordering
 * and the bound on memory.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <event2/event.h>
#include <linux/virtio_net.h>

#include "driver/core/clock.h"
#include "driver/cond/cond_internal.h"
#include "driver/thread/thread.h"
#include "driver/core/inany.h"
#include "driver/core/pcap.h"
#include "driver/thread/tap_read.h"
#include "driver/stack/tap_write.h"
#include "tests/unit/fakectx.h"
#include "tests/unit/unit.h"

static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x01};

/**
 * parses() - whether a rule string parses, and to what canonical text
 * @spec:	rule
 * @want:	its canonical text as get_conditions prints it, or NULL if
 *		it must be refused
 * @why_has:	for a refusal, a piece of the message that names the field
 *
 * Return: true if it went as wanted
 */
static bool parses(const char *spec, const char *want, const char *why_has)
{
	struct cond_set s = {0};
	char why[200] = "";
	json_t *j;
	const char *got;
	bool ok;

	if (cond_parse_add(&s, spec, why, sizeof(why))) {
		if (!want && strstr(why, why_has) && s.n == 0)
			return true;
		fprintf(stderr, "# %s: refused: %s\n", spec, why);
		return false;
	}
	if (!want) {
		fprintf(stderr, "# %s: taken\n", spec);
		return false;
	}
	j = cond_set_json(&s);
	got = json_string_value(json_array_get(json_object_get(j, "rules"), 0));
	ok = got && !strcmp(got, want);
	if (!ok)
		fprintf(stderr, "# %s: got %s\n", spec, got ? got : "(none)");
	json_decref(j);
	return ok;
}

static void spec_good(void)
{
	CHECK(parses("delay=50ms", "dir=both,delay=50ms", NULL));
	CHECK(parses("delay=1.5ms,jitter=250us,dist=normal",
	             "dir=both,delay=1500us,jitter=250us,dist=normal", NULL));
	CHECK(parses("loss=1%,loss-corr=25%,dir=to_guest",
	             "dir=to_guest,loss=1%,loss-corr=25%", NULL));
	CHECK(parses("rate=100mbit,burst=64k",
	             "dir=both,rate=100000000bit,burst=65536", NULL));
	CHECK(parses("down,proto=udp,port=53,host=10.0.2.3",
	             "dir=both,proto=udp,port=53,host=10.0.2.3,down", NULL));
	CHECK(parses("down=0,host=fd00::2,dir=to_host",
	             "dir=to_host,host=fd00::2,delay=0ms", NULL));
	CHECK(parses("delay=0", "dir=both,delay=0ms", NULL));
	CHECK(parses("duplicate=0.5,reorder=10%,delay=10ms",
	             "dir=both,delay=10ms,duplicate=0.5%,reorder=10%", NULL));
	/* The canonical text parses back to itself. */
	CHECK(parses("dir=both,delay=1500us,jitter=250us,dist=normal",
	             "dir=both,delay=1500us,jitter=250us,dist=normal", NULL));
}

static void spec_bad(void)
{
	CHECK(parses("loss=5x", NULL, "bad loss \"5x\""));
	CHECK(parses("loss=101%", NULL, "bad loss"));
	CHECK(parses("loss=-1%", NULL, "bad loss"));
	CHECK(parses("loss=nan", NULL, "bad loss"));
	CHECK(parses("delay=50", NULL, "bad delay \"50\""));
	CHECK(parses("delay=61s", NULL, "bad delay"));
	CHECK(parses("delay=1e400ms", NULL, "bad delay"));
	CHECK(parses("rate=100", NULL, "bad rate"));
	CHECK(parses("rate=200gbit", NULL, "bad rate"));
	CHECK(parses("rate=10mbps", NULL, "bad rate"));
	CHECK(parses("port=0,delay=1ms", NULL, "bad port"));
	CHECK(parses("port=65536,delay=1ms", NULL, "bad port"));
	CHECK(parses("host=localhost,delay=1ms", NULL, "bad host"));
	CHECK(parses("proto=sctp,delay=1ms", NULL, "bad proto"));
	CHECK(parses("dir=up,delay=1ms", NULL, "bad dir"));
	CHECK(parses("down=maybe", NULL, "bad down"));
	CHECK(parses("delay", NULL, "bad delay"));
	CHECK(parses("latency=5ms", NULL, "unknown field \"latency\""));
	CHECK(parses("delay=1ms,delay=2ms", NULL, "delay given twice"));
	CHECK(parses("delay=1ms,,loss=1%", NULL, "empty field"));
	CHECK(parses("", NULL, "empty field"));
	CHECK(parses("port=80", NULL, "a rule needs a condition"));
	CHECK(parses("loss-corr=5%", NULL, "loss-corr needs loss"));
	CHECK(parses("burst=5k,delay=1ms", NULL, "burst needs rate"));
	CHECK(parses("reorder=5%", NULL, "reorder needs a delay"));
	CHECK(parses("dist=normal,delay=1ms", NULL, "dist needs jitter"));
	CHECK(parses("delay=40s,jitter=30s", NULL, "above 60s"));
	CHECK(parses("delay=0x3Cs", NULL, "bad delay"));
	CHECK(parses("loss=60%,loss-corr=10%", NULL, "loss-corr too low"));
}

/* Seventeen rules are one too many; a refused one leaves the set. */
static void spec_limits(void)
{
	struct cond_set s = {0};
	char why[200];

	for (int i = 0; i < COND_RULES_MAX; i++)
		CHECK(!cond_parse_add(&s, "delay=1ms", why, sizeof(why)));
	CHECK(cond_parse_add(&s, "delay=1ms", why, sizeof(why)));
	CHECK(strstr(why, "more than 16 rules") != NULL);
	CHECK(s.n == COND_RULES_MAX);
	memset(&s, 0, sizeof(s));
	CHECK(!cond_parse_add(&s, "rate=100mbit,delay=3s", why, sizeof(why)));
	CHECK(!cond_check_memory(&s, why, sizeof(why)));
	CHECK(!cond_parse_add(&s, "rate=100mbit,delay=1s", why, sizeof(why)));
	/* (3 s + the 100 ms queue) and (1 s + 100 ms) at 12.5 MB/s, and two
	 * frames each, at what the smallest frames cost held: above 64 MiB
	 * together.
	 */
	CHECK(cond_check_memory(&s, why, sizeof(why)));
	CHECK(strstr(why, "delay × rate to_guest needs 78 MiB") != NULL);
	/* Half a second at 1 Gbit/s, and its queue: 75 MB. */
	memset(&s, 0, sizeof(s));
	CHECK(!cond_parse_add(&s, "rate=1gbit,delay=500ms", why, sizeof(why)));
	CHECK(cond_check_memory(&s, why, sizeof(why)));
	/* Every frame held twice: 3.1 s at 12.5 MB/s fits, twice it doesn't
	 * (it was taken, and then dropped 21 480 frames as overflow).
	 */
	memset(&s, 0, sizeof(s));
	CHECK(!cond_parse_add(&s, "rate=100mbit,delay=3s,duplicate=100%", why,
	                      sizeof(why)));
	CHECK(cond_check_memory(&s, why, sizeof(why)));
	CHECK(strstr(why, "delay × rate to_guest needs 115 MiB") != NULL);
	memset(&s, 0, sizeof(s));
	CHECK(!cond_parse_add(&s, "rate=100mbit,delay=1s,duplicate=50%", why,
	                      sizeof(why)));
	CHECK(!cond_check_memory(&s, why, sizeof(why)));
}

/**
 * json_set() - cond_json_set() on a JSON text
 * @text:	the arguments
 * @s:		filled
 * @why:	filled on error
 *
 * Return: its return value
 */
static int json_set(const char *text, struct cond_set *s, char *why)
{
	json_t *args = json_loads(text, 0, NULL);
	int ret = cond_json_set(s, args, why, 200);

	json_decref(args);
	return ret;
}

static void spec_json(void)
{
	struct cond_set s;
	char why[200];

	CHECK(!json_set("{\"rules\":[{\"delay\":\"50ms\",\"loss\":1,"
	                "\"rate\":1000000,\"port\":80,\"down\":false},"
	                "\"down,proto=icmp\"],\"seed\":7}",
	                &s, why));
	CHECK(s.n == 2 && s.seeded && s.seed == 7);
	CHECK(s.r[0].delay_ns == 50000000 && s.r[0].loss == 0.01 &&
	      s.r[0].rate_bps == 1000000 && s.r[0].m.port == 80 &&
	      !s.r[0].down);
	CHECK(s.r[1].down && s.r[1].m.proto == IPPROTO_ICMP);
	CHECK(json_set("{\"rules\":[{\"delay\":50}]}", &s, why));
	CHECK(!strcmp(why, "rule 0: bad delay \"50\": a duration like 50ms, "
	                   "at most 60s"));
	CHECK(json_set("{\"rules\":[{\"loss\":[1]}]}", &s, why));
	CHECK(!strcmp(why, "rule 0: bad loss: must be a string, a number or "
	                   "a boolean"));
	CHECK(json_set("{\"rules\":[{\"delay\":\"1ms\"},7]}", &s, why));
	CHECK(!strcmp(why, "rule 1: a rule must be an object or a string"));
	CHECK(json_set("{\"rules\":{}}", &s, why));
	CHECK(!strcmp(why, "rules: must be an array of rules"));
	CHECK(json_set("{\"rules\":[],\"seed\":-1}", &s, why));
	CHECK(!strcmp(why, "bad seed: an unsigned integer"));
	CHECK(json_set("{\"rules\":[\"rate=1gbit,delay=1s\"]}", &s, why));
	CHECK(strstr(why, "above the bound of 64 MiB") != NULL);
	CHECK(json_set(
	        "{\"rules\":[{\"delay\":\"1000000000000000000000000"
	        "000000000000000000000000000000000000000000000000ns\"}]}",
	        &s, why));
	CHECK(!strcmp(why, "rule 0: bad delay: longer than 64 characters"));
}

/**
 * struct line - a context, its tap's other end and its conditions
 * @c:		context
 * @o:		its options
 * @peer:	the guest's end: frames tap_send() wrote
 */
struct line {
	struct ctx c;
	struct opts o;
	int peer;
};

/**
 * line_open() - a context with conditions and a fake clock at 1 s
 * @l:		filled
 * @rules:	rules, one per string, NULL-terminated
 */
static void line_open(struct line *l, const char *const *rules)
{
	struct cond_set s = {0};
	char why[200];

	l->peer = fake_ctx_init(&l->c, &l->o, false, mac);
	l->c.base = event_base_new();
	CHECK(l->c.base && !cond_init(&l->c, &thread_cond_out));
	for (; *rules; rules++)
		CHECK(!cond_parse_add(&s, *rules, why, sizeof(why)));
	clock_set_fake(1000000000ULL);
	CHECK(!cond_install(&s));
}

/**
 * line_close() - clear the rules and free it all
 * @l:		line
 */
static void line_close(struct line *l)
{
	struct cond_set none = {0};

	CHECK(!cond_install(&none));
	cond_cleanup(&l->c);
	event_base_free(l->c.base);
	fake_ctx_close(&l->c, l->peer);
	clock_set_real();
}

/**
 * replace_rules() - put one rule in force instead of those before
 * @spec:	the rule
 */
static void replace_rules(const char *spec)
{
	struct cond_set s = {0};
	char why[200];

	CHECK(!cond_parse_add(&s, spec, why, sizeof(why)));
	CHECK(!cond_install(&s));
}

/**
 * send_udp() - tap_send() a UDP frame from 10.0.2.2:@sport to the guest
 * @l:		line
 * @sport:	host port
 * @len:	frame length, at least 42
 * @tag:	written in the payload, to tell frames apart
 */
static void send_udp(struct line *l, uint16_t sport, size_t len, uint32_t tag)
{
	static uint8_t f[65536];
	struct iovec iov = {.iov_base = f, .iov_len = len};

	memset(f, 0, 42);
	f[12] = 0x08;
	f[14] = 0x45;
	f[14 + 9] = IPPROTO_UDP;
	memcpy(f + 14 + 12, (uint8_t[]){10, 0, 2, 2}, 4);
	memcpy(f + 14 + 16, (uint8_t[]){10, 0, 2, 100}, 4);
	f[34] = (uint8_t)(sport >> 8);
	f[35] = (uint8_t)sport;
	f[36] = 0x30;
	f[37] = 0x39;
	memcpy(f + 42, &tag, sizeof(tag));
	CHECK(!tap_send(&l->c, NULL, &iov, 1));
}

/**
 * take() - the tags of the frames the guest's end has now, in order
 * @l:		line
 * @tags:	filled
 * @max:	room in @tags
 *
 * Return: frames read
 */
static int take(struct line *l, uint32_t *tags, int max)
{
	static uint8_t f[65536];
	int n = 0;
	ssize_t r;

	while ((r = recv(l->peer, f, sizeof(f), 0)) >= 46) {
		if (n < max)
			memcpy(&tags[n], f + 42, sizeof(tags[0]));
		n++;
	}
	return n;
}

/**
 * advance() - move the fake clock and run what the timer would
 * @l:		line
 * @ns:		nanoseconds
 */
static void advance(struct line *l, uint64_t ns)
{
	clock_advance(ns);
	cond_run(&l->c);
}

/* Nothing before the delay, everything after it, in order even under a
 * jitter larger than the gaps between frames.
 */
static void delay_order(void)
{
	const char *rules[] = {"delay=50ms,jitter=20ms", NULL};
	uint32_t tags[100];
	struct line l;
	int n = 0;

	line_open(&l, rules);
	for (uint32_t i = 0; i < 100; i++) {
		send_udp(&l, 7, 100, i);
		advance(&l, 100000);
	}
	CHECK(take(&l, tags, 100) == 0);
	for (int step = 0; step < 100; step++) {
		advance(&l, 1000000);
		n += take(&l, tags + n, 100 - n);
	}
	CHECK(n == 100);
	for (int i = 0; i < n; i++)
		CHECK(tags[i] == (uint32_t)i);
	CHECK(l.c.stats.cond[CC_DELAYED] == 100);
	line_close(&l);
}

/**
 * lost_with_seed() - frames that a loss rule drops out of @n
 * @n:		frames sent
 * @seed:	the rule's seed
 * @map:	filled with a bit per frame that arrived (@n/8 bytes)
 *
 * Return: frames dropped
 */
static int lost_with_seed(int n, const char *seed, uint8_t *map)
{
	const char *rules[] = {"loss=10%", seed, NULL};
	uint32_t tag;
	struct line l;
	int got = 0;

	line_open(&l, rules);
	memset(map, 0, (size_t)n / 8);
	for (int i = 0; i < n; i++) {
		send_udp(&l, 7, 60, (uint32_t)i);
		if (take(&l, &tag, 1)) {
			map[tag / 8] |= (uint8_t)(1U << (tag % 8));
			got++;
		}
	}
	CHECK(l.c.stats.cond[CC_LOSS] == (uint64_t)(n - got));
	line_close(&l);
	return n - got;
}

/* 10 000 frames at 10 %: within the binomial 99 % interval (±2.576 σ),
 * the same frames with the same seed, others with another.
 */
static void loss_seeded(void)
{
	static uint8_t a[1250], b[1250], d[1250];
	/* σ = √(10000 × 0.1 × 0.9) = 30 */
	int la = lost_with_seed(10000, "seed=42", a);

	CHECK(la >= 1000 - 77 && la <= 1000 + 77);
	CHECK(lost_with_seed(10000, "seed=42", b) == la);
	CHECK(!memcmp(a, b, sizeof(a)));
	lost_with_seed(10000, "seed=43", d);
	CHECK(memcmp(a, d, sizeof(a)));
}

/* With a seed, the same frames drop whichever thread sends them: each
 * frame's fate is the seed's and its number's under the rule, counted by
 * all threads together.
 */
static void loss_any_thread(void)
{
	const char *rules[] = {"loss=30%,seed=5", NULL};
	uint8_t one[125] = {0}, two[125] = {0};
	struct line a, b;
	uint32_t tag;

	for (int round = 0; round < 2; round++) {
		uint8_t *map = round ? two : one;

		line_open(&a, rules);
		/* A second thread's context, under the same rules. */
		b.peer = fake_ctx_init(&b.c, &b.o, false, mac);
		b.c.thread = 1;
		b.c.base = event_base_new();
		CHECK(b.c.base && !cond_init(&b.c, &thread_cond_out));
		for (uint32_t i = 0; i < 1000; i++) {
			struct line *l = round && i % 2 ? &b : &a;

			send_udp(l, 7, 60, i);
			if (take(l, &tag, 1))
				map[i / 8] |= (uint8_t)(1U << (i % 8));
		}
		cond_cleanup(&b.c);
		event_base_free(b.c.base);
		fake_ctx_close(&b.c, b.peer);
		line_close(&a);
	}
	CHECK(!memcmp(one, two, sizeof(one)));
}

/* Bursts: after a loss the next goes with loss-corr's probability, and
 * the long-run rate stays the target.
 */
static void loss_bursts(void)
{
	const char *rules[] = {"loss=5%,loss-corr=60%,seed=1", NULL};
	int lost = 0, after = 0, pairs = 0;
	bool last = false;
	uint32_t tag;
	struct line l;

	line_open(&l, rules);
	for (int i = 0; i < 100000; i++) {
		bool gone;

		send_udp(&l, 7, 60, (uint32_t)i);
		gone = !take(&l, &tag, 1);
		lost += gone;
		pairs += last;
		after += last && gone;
		last = gone;
	}
	CHECK(lost > 4500 && lost < 5500);
	CHECK(after > 0.55 * pairs && after < 0.65 * pairs);
	line_close(&l);
}

/* 1 Mbit/s and 1226-byte frames, 1250 bytes on an Ethernet wire: one
 * leaves every 10 ms, the first 10 ms after it came, and the queue holds
 * 100 ms and what two 64 KiB frames take (1.15 s): the rest is dropped as
 * a link's buffer drops it.
 */
static void rate_spacing(void)
{
	const char *rules[] = {"rate=1mbit", NULL};
	uint32_t tags[200];
	struct line l;
	int n;

	line_open(&l, rules);
	for (uint32_t i = 0; i < 200; i++)
		send_udp(&l, 7, 1226, i);
	/* Even the first takes its 10 ms to be sent. */
	CHECK(take(&l, tags, 200) == 0);
	advance(&l, 25000000);
	CHECK(take(&l, tags, 200) == 2);
	advance(&l, 10000000);
	CHECK(take(&l, tags, 200) == 1);
	CHECK(l.c.stats.cond[CC_RATE] == 200 - 114);
	for (n = 0; n < 300; n++)
		advance(&l, 10000000);
	CHECK(take(&l, tags, 200) == 114 - 3);
	CHECK(l.c.stats.cond[CC_OVERFLOW] == 0);
	line_close(&l);
}

/* A rate counts a frame as the wire does: 60 bytes at least, 24 more;
 * and a GSO frame as the segments it stands for, each with its headers.
 * 45 segments of 1448 bytes behind 54 bytes of headers went at 1 Mbit/s
 * in 522 ms, as if one frame, where the wire takes 549.
 */
static void rate_gso(void)
{
	const char *rules[] = {"rate=1mbit", NULL};
	struct virtio_net_hdr vh = {.gso_type = VIRTIO_NET_HDR_GSO_TCPV4,
	                            .gso_size = 1448,
	                            .hdr_len = 54};
	static uint8_t f[54 + 45 * 1448], got[sizeof(f) + 12];
	struct iovec iov = {.iov_base = f, .iov_len = sizeof(f)};
	struct line l;

	CHECK(cond_wire_bytes(42, 42, 0) == 84);
	CHECK(cond_wire_bytes(1514, 54, 0) == 1538);
	CHECK(cond_wire_bytes(1514, 54, 1460) == 1538);
	CHECK(cond_wire_bytes(sizeof(f), 54, 1448) == 45 * 1526);
	/* A last segment shorter than the others. */
	CHECK(cond_wire_bytes(54 + 3000, 54, 1448) == 2 * 1526 + 54 + 104 + 24);
	/* A guest's 1-byte segments cost what they cost. */
	CHECK(cond_wire_bytes(54 + 100, 54, 1) == 100 * 84);

	line_open(&l, rules);
	l.c.vnet_len = 12;
	memset(f, 0, sizeof(f));
	f[12] = 0x08;
	f[14] = 0x45;
	f[14 + 9] = IPPROTO_TCP;
	f[14 + 20 + 12] = 5 << 4;
	CHECK(!tap_send(&l.c, &vh, &iov, 1));
	advance(&l, 540000000);
	CHECK(recv(l.peer, got, sizeof(got), MSG_DONTWAIT) < 0);
	advance(&l, 10000000);
	CHECK(recv(l.peer, got, sizeof(got), MSG_DONTWAIT) == sizeof(got));
	line_close(&l);
}

/* A scoped partition: port 53 is cut, port 54 is not; once the rule is
 * cleared, port 53 works again.
 */
static void down_scoped(void)
{
	const char *rules[] = {"down,proto=udp,port=53", NULL};
	struct cond_set none = {0};
	uint32_t tags[4];
	struct line l;

	line_open(&l, rules);
	send_udp(&l, 53, 60, 1);
	send_udp(&l, 54, 60, 2);
	CHECK(take(&l, tags, 4) == 1 && tags[0] == 2);
	CHECK(l.c.stats.cond[CC_DOWN] == 1);
	CHECK(!cond_install(&none));
	send_udp(&l, 53, 60, 3);
	CHECK(take(&l, tags, 4) == 1 && tags[0] == 3);
	line_close(&l);
}

/**
 * send_udp6() - tap_send() a UDP frame from [fd18::@last]:53 to the guest
 * @l:		line
 * @last:	last byte of the host's address
 */
static void send_udp6(struct line *l, uint8_t last)
{
	uint8_t f[14 + 40 + 8 + 4] = {0};
	struct iovec iov = {.iov_base = f, .iov_len = sizeof(f)};

	f[12] = 0x86;
	f[13] = 0xdd;
	f[14] = 0x60;
	f[14 + 5] = 12;
	f[14 + 6] = IPPROTO_UDP;
	f[14 + 7] = 64;
	memcpy(f + 14 + 8, (uint8_t[]){0xfd, 0x18}, 2);
	f[14 + 8 + 15] = last;
	memcpy(f + 14 + 24, (uint8_t[]){0xfd, 0x00}, 2);
	f[14 + 24 + 15] = 0x64;
	f[55] = 53;
	f[57] = 53;
	f[59] = 12;
	CHECK(!tap_send(&l->c, NULL, &iov, 1));
}

/* A rule scoped to an IPv6 host holds that host's frames only: from
 * fd18::1, not from fd18::2.
 */
static void scoped_v6_host(void)
{
	const char *rules[] = {"delay=50ms,host=fd18::1", NULL};
	uint8_t f[128];
	struct line l;
	ssize_t r;

	line_open(&l, rules);
	send_udp6(&l, 1);
	send_udp6(&l, 2);
	r = recv(l.peer, f, sizeof(f), 0);
	CHECK(r == 66 && f[14 + 8 + 15] == 2);
	CHECK(recv(l.peer, f, sizeof(f), 0) < 0);
	advance(&l, 50000000ULL);
	r = recv(l.peer, f, sizeof(f), 0);
	CHECK(r == 66 && f[14 + 8 + 15] == 1);
	line_close(&l);
}

/* A partition cuts frames held from before it, as a cut link loses what
 * was on it.
 */
static void down_cuts_held(void)
{
	const char *rules[] = {"delay=10ms", NULL};
	uint32_t tags[4];
	struct line l;

	line_open(&l, rules);
	send_udp(&l, 7, 60, 1);
	replace_rules("down");
	advance(&l, 20000000);
	CHECK(take(&l, tags, 4) == 0);
	CHECK(l.c.stats.cond[CC_DOWN] == 1);
	line_close(&l);
}

/* A partition healed before the frames held across it were due still
 * cut them, and only those it applies to: 34 of 50 echoes in flight at
 * the cut used to arrive after the heal. Frames sent after the heal go.
 */
static void down_cuts_healed(void)
{
	const char *rules[] = {"delay=1s", NULL};
	uint32_t tags[64];
	struct line l;
	int n = 0;

	line_open(&l, rules);
	for (uint32_t i = 0; i < 50; i++)
		send_udp(&l, (uint16_t)(i < 40 ? 53 : 54), 60, i);
	advance(&l, 100000000);
	replace_rules("down,port=53");
	advance(&l, 100000000);
	replace_rules("delay=1s");
	send_udp(&l, 53, 60, 50);
	for (int step = 0; step < 30; step++) {
		advance(&l, 100000000);
		n += take(&l, tags + n, 64 - n);
	}
	CHECK(n == 11);
	for (int i = 0; i < n && i < 11; i++)
		CHECK(tags[i] == (uint32_t)(i < 10 ? 40 + i : 50));
	CHECK(l.c.stats.cond[CC_DOWN] == 40);
	line_close(&l);
}

/* duplicate=100% sends each frame twice; reorder=100% skips the delay. */
static void duplicate_reorder(void)
{
	const char *dup[] = {"duplicate=100%", NULL};
	const char *reo[] = {"delay=10ms,reorder=100%", NULL};
	uint32_t tags[4];
	struct line l;

	line_open(&l, dup);
	send_udp(&l, 7, 60, 5);
	advance(&l, 1);
	CHECK(take(&l, tags, 4) == 2 && tags[0] == 5 && tags[1] == 5);
	CHECK(l.c.stats.cond[CC_DUPLICATED] == 1);
	line_close(&l);
	line_open(&l, reo);
	send_udp(&l, 7, 60, 6);
	CHECK(take(&l, tags, 4) == 1 && tags[0] == 6);
	CHECK(l.c.stats.cond[CC_REORDERED] == 1);
	line_close(&l);
}

/* A neutral rule copies nothing and holds nothing. */
static void neutral(void)
{
	const char *rules[] = {"delay=0", NULL};
	uint32_t tags[4];
	struct line l;

	line_open(&l, rules);
	send_udp(&l, 7, 60, 9);
	CHECK(take(&l, tags, 4) == 1 && tags[0] == 9);
	CHECK(l.c.stats.cond[CC_DELAYED] == 0);
	line_close(&l);
}

/**
 * hold_until_full() - send frames of @len bytes under delay=1s until one
 *		       is refused for want of memory
 * @len:	frame length
 *
 * Return: frames held before that
 */
static uint64_t hold_until_full(size_t len)
{
	const char *rules[] = {"delay=1s", NULL};
	uint64_t held;
	uint32_t tag;
	struct line l;
	int sent = 0;

	line_open(&l, rules);
	while (l.c.stats.cond[CC_OVERFLOW] == 0 && sent < 2000000) {
		send_udp(&l, 7, len, (uint32_t)sent);
		sent++;
	}
	held = l.c.stats.cond[CC_DELAYED];
	CHECK(held == (uint64_t)sent - 1);
	advance(&l, 1000000000);
	CHECK(take(&l, &tag, 1) > 0);
	line_close(&l);
	return held;
}

/* Held memory stops at COND_HOLD_MAX, what each frame costs counted
 * (its copy, its header, the allocator's rounding), for the largest
 * frames and for the smallest; what would pass it is counted as
 * overflow, never held.
 */
static void memory_bound(void)
{
	CHECK(hold_until_full(65000) == COND_HOLD_MAX / cond_held_cost(65000));
	CHECK(hold_until_full(60) == COND_HOLD_MAX / cond_held_cost(60));
	CHECK(cond_held_cost(60) >= 60 + sizeof(struct held));
}

/* What cond_check_memory() charges a rate per byte covers what holding
 * any frame costs, from the smallest to the largest, vnet header and all.
 */
static void cost_per_wire_byte(void)
{
	for (size_t len = 14; len <= 65536 + 14; len++) {
		size_t wire = (len > COND_WIRE_MIN ? len : COND_WIRE_MIN) +
		              COND_WIRE_GAP;

		if (cond_held_cost(len + 12) >
		    COND_HOLD_PER_WIRE * (double)wire) {
			CHECK(!"cost above COND_HOLD_PER_WIRE");
			fprintf(stderr, "# at %zu bytes\n", len);
			break;
		}
	}
}

/* New rules don't wait for what older ones hold: a frame held for 60 s
 * stays held, while one sent under a 1 ms rule that replaced it leaves
 * after 1 ms.
 */
static void rules_change(void)
{
	const char *rules[] = {"delay=60s", NULL};
	uint32_t tags[4];
	struct line l;

	line_open(&l, rules);
	send_udp(&l, 7, 60, 1);
	replace_rules("delay=1ms");
	send_udp(&l, 7, 60, 2);
	advance(&l, 2000000);
	CHECK(take(&l, tags, 4) == 1 && tags[0] == 2);
	advance(&l, 60000000000ULL);
	CHECK(take(&l, tags, 4) == 1 && tags[0] == 1);
	line_close(&l);
}

/**
 * flood() - a sender three times as fast as 1 Mbit/s for @ms: three
 *	     1226-byte frames (1250 on the wire, 10 ms each at that rate)
 *	     every 10 ms, the same rules set again every @every ms (0:
 *	     never)
 * @l:		line
 * @ms:		how long, a multiple of 10
 * @every:	milliseconds between sets, a multiple of 10, or 0
 * @per100:	filled with the frames delivered in each 100 ms, @ms / 100
 *		entries
 *
 * Return: frames delivered
 */
static int flood(struct line *l, int ms, int every, int *per100)
{
	struct cond_set s;
	uint32_t tags[64];
	int got = 0;

	for (int t = 0; t < ms; t += 10) {
		int n;

		if (every && t % every == 0) {
			cond_current(&s);
			CHECK(!cond_install(&s));
		}
		for (uint32_t k = 0; k < 3; k++)
			send_udp(l, 7, 1226, (uint32_t)t + k);
		advance(l, 10000000);
		n = take(l, tags, 64);
		got += n;
		per100[t / 100] += n;
	}
	return got;
}

/* Setting the same rules again keeps a rate's queue and clock: 1 Mbit/s
 * flooded at 3, with a set every 100 ms, passes 1 Mbit/s within 2 %. A
 * fresh queue at each set, while the old one drained, let 27.3 Mbit/s
 * through a 10 Mbit/s rule.
 */
static void rate_set_again(void)
{
	const char *rules[] = {"rate=1mbit", "delay=5ms,port=9", NULL};
	int per100[40] = {0}, got;
	struct line l;

	line_open(&l, rules);
	/* The queue fills first: 100 ms and two 64 KiB frames' worth. */
	flood(&l, 2000, 0, per100);
	memset(per100, 0, sizeof(per100));
	got = flood(&l, 2000, 100, per100);
	CHECK(got >= 196 && got <= 204);
	line_close(&l);
}

/* A rate changed on the same frames goes on from the end of the old
 * one's queue: the frames held keep their times, and no 100 ms passes
 * more than the faster rate allows, as both used to, side by side.
 */
static void rate_changed(void)
{
	const char *rules[] = {"rate=1mbit", NULL};
	int per100[40] = {0}, most = 0;
	struct line l;

	line_open(&l, rules);
	flood(&l, 2000, 0, per100);
	replace_rules("rate=2mbit");
	memset(per100, 0, sizeof(per100));
	flood(&l, 4000, 0, per100);
	for (int i = 0; i < 40; i++)
		most = per100[i] > most ? per100[i] : most;
	/* 2 Mbit/s: 20 frames in 100 ms, and one more at the edges. */
	CHECK(most <= 21);
	/* ... and the new rate does apply, once the old queue is gone. */
	CHECK(per100[39] >= 19);
	line_close(&l);
}

/**
 * tcp_view() - cond_tcp() for a connection from the guest's port 40000
 *		to 10.0.2.2:@hport
 * @l:		line
 * @hport:	host port
 * @t:		filled
 */
static void tcp_view(struct line *l, uint16_t hport, struct cond_tcp *t)
{
	struct in6_addr host;

	inany_from_v4(&host, (struct in_addr){htonl(0x0a000202)});
	cond_tcp(&l->c, &host, hport, 40000, NULL, t);
}

/* What the rules mean for a TCP connection is its own rules' doing: a
 * rule scoped to another port changes nothing, and a slow rate's timer
 * stays bounded (120 s).
 */
static void tcp_scoped(void)
{
	const char *rules[] = {"rate=1kbit,port=9", "delay=20ms,port=80", NULL};
	struct cond_tcp t;
	struct line l;

	line_open(&l, rules);
	tcp_view(&l, 443, &t);
	CHECK(!t.any && t.rto_extra_ms == 0 && t.flight_max == UINT32_MAX &&
	      t.wnd_max == UINT32_MAX);
	tcp_view(&l, 80, &t);
	CHECK(t.any && t.rto_extra_ms == 40 && t.flight_max == UINT32_MAX);
	tcp_view(&l, 9, &t);
	CHECK(t.any && t.rto_extra_ms == 120000);
	/* Half the 100 ms of queue at 1 kbit/s, and one frame. */
	CHECK(t.flight_max == (uint32_t)(0.05 * 125 + 65536));
	CHECK(t.wnd_max == t.flight_max && t.burst == 6000);
	line_close(&l);
}

/* Connections that share a rate share its flight: 32 downloads through
 * 2 Mbit/s each keep a 32nd of it, and all of them together fit the
 * rate's queue, where each used to keep the whole flight, and the queue
 * dropped their frames until some got nothing for seconds. One that sends
 * little takes no share.
 */
static void tcp_shares(void)
{
	const char *rules[] = {"rate=2mbit", NULL};
	struct cond_flow f[33] = {{0}};
	struct in6_addr host;
	struct cond_tcp t;
	uint64_t total = 0;
	struct line l;
	uint32_t one;

	inany_from_v4(&host, (struct in_addr){htonl(0x0a000202)});
	line_open(&l, rules);
	cond_tcp(&l.c, &host, 80, 40000, &f[0], &t);
	one = t.flight_max;
	/* 50 ms of queue at 250 kB/s, and a 64 KiB frame. */
	CHECK(one == (uint32_t)(0.05 * 250000 + 65536));
	for (int round = 0; round < 2; round++) {
		total = 0;
		for (int i = 0; i < 33; i++) {
			/* The 33rd sends little. */
			f[i].inflight = i < 32 ? 2000 : 100;
			cond_tcp(&l.c, &host, 80, (uint16_t)(40000 + i), &f[i],
			         &t);
			if (round)
				total += t.flight_max;
		}
	}
	CHECK(t.flight_max == one / 32);
	/* Within the queue's 100 ms and two 64 KiB frames. */
	CHECK(total <= 25000 + 131072);
	/* A window later, those counted before still are. */
	clock_advance(400000000);
	cond_tcp(&l.c, &host, 80, 40000, &f[0], &t);
	CHECK(t.flight_max == one / 32);
	/* Two windows later, those that stopped sending no longer are. */
	clock_advance(800000000);
	cond_tcp(&l.c, &host, 80, 40000, &f[0], &t);
	cond_tcp(&l.c, &host, 80, 40000, &f[0], &t);
	clock_advance(800000000);
	cond_tcp(&l.c, &host, 80, 40000, &f[0], &t);
	CHECK(t.flight_max == one);
	line_close(&l);
}

/* A delay is the link's length, not its queue: under rate=10mbit and
 * delay=50ms, a connection whose frames wait only for the delay keeps
 * its whole flight (the path's delay × rate and 50 ms of queue); only
 * frames that wait for the rate itself, past what its flight leaves
 * queued, cut it to one segment. Counting the delay as queue cut every such connection to
 * 6000 bytes a round trip: 0.45 Mbit/s where 9.7 were due.
 */
static void tcp_delay_not_queue(void)
{
	const char *rules[] = {"rate=10mbit,delay=50ms", NULL};
	uint32_t full;
	struct cond_tcp t;
	struct line l;

	line_open(&l, rules);
	tcp_view(&l, 80, &t);
	full = t.flight_max;
	/* 100 ms of round trip and 50 ms of queue at 1.25 MB/s, a frame. */
	CHECK(full == (uint32_t)(0.15 * 1.25e6 + 65536));
	/* 10 ms of the rate booked: the queue is short. */
	for (uint32_t i = 0; i < 10; i++)
		send_udp(&l, 7, 1226, i);
	tcp_view(&l, 80, &t);
	CHECK(t.flight_max == full);
	/* 150 ms more: past what one connection's flight leaves queued,
	 * half the queue and a 64 KiB frame (102 ms).
	 */
	for (uint32_t i = 0; i < 150; i++)
		send_udp(&l, 7, 1226, i);
	tcp_view(&l, 80, &t);
	CHECK(t.flight_max < full);
	line_close(&l);
}

/**
 * realtime_us() - wall-clock microseconds, as pcap stamps them
 *
 * Return: microseconds since the epoch
 */
static uint64_t realtime_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* A capture shows what the guest saw: a frame held for 30 ms is stamped
 * when it was delivered, not when tapir sent it, on the real clock.
 */
static void capture_at_delivery(void)
{
	const char *rules[] = {"delay=30ms", NULL};
	char dir[] = "/tmp/tapir-cond.XXXXXX", path[64];
	uint32_t tags[4], rec[4];
	uint64_t sent, stamp;
	struct line l;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/c.pcap", dir);
	line_open(&l, rules);
	clock_set_real();
	CHECK(!pcap_open(&l.c, path));
	sent = realtime_us();
	send_udp(&l, 7, 60, 1);
	usleep(35000);
	cond_run(&l.c);
	CHECK(take(&l, tags, 4) == 1);
	pcap_close(&l.c);
	f = fopen(path, "r");
	CHECK(f && !fseek(f, 24, SEEK_SET) && fread(rec, 4, 4, f) == 4);
	if (f)
		fclose(f);
	stamp = (uint64_t)rec[0] * 1000000 + rec[1];
	CHECK(stamp >= sent + 30000 && stamp < sent + 1000000);
	CHECK(rec[2] == 60);
	line_close(&l);
	unlink(path);
	rmdir(dir);
}

/* What the guest's frames make tapir send, in the timer test below. */
static struct line *answering;

/**
 * answer() - a delivered frame from the guest: tapir answers the guest
 * @c:		context
 * @buf:	the frame
 * @len:	its length
 */
static void answer(struct ctx *c, uint8_t *buf, size_t len)
{
	(void)c;
	(void)buf;
	(void)len;
	send_udp(answering, 9, 100, 0);
}

/**
 * answer_flush() - the end of a batch of the guest's frames: one more
 *		    frame to the guest, as TCP's ACKs
 * @c:		context
 */
static void answer_flush(struct ctx *c)
{
	(void)c;
	send_udp(answering, 10, 100, 0);
}

/**
 * to_peer() - a held frame to the guest: to the guest's end, as
 *	       thread_cond_out's
 * @c:		context
 * @buf:	the frame
 * @len:	its length
 */
static void to_peer(struct ctx *c, uint8_t *buf, size_t len)
{
	thread_cond_out.to_guest(c, buf, len);
}

/* Traffic both ways under a delay: each wakeup delivers the guest's frame
 * and one of tapir's, while others wait, and the guest's frame makes
 * tapir send two more, held in turn. The timerfd is set once per wakeup:
 * set as each answer was held, and again for what waited, it was set
 * twice.
 */
static void one_arm_per_wakeup(void)
{
	static const struct cond_out out = {to_peer, answer, answer_flush};
	const char *rules[] = {"delay=1ms", NULL};
	uint8_t f[60] = {0};
	struct iovec iov = {.iov_base = f, .iov_len = sizeof(f)};
	uint64_t arms, runs = 0;
	uint32_t tags[8];
	struct line l;

	line_open(&l, rules);
	cond_cleanup(&l.c);
	CHECK(!cond_init(&l.c, &out));
	answering = &l;
	f[12] = 0x08;
	f[14] = 0x45;
	f[14 + 9] = IPPROTO_UDP;
	for (int i = 0; i < 10; i++) {
		send_udp(&l, 7, 100, (uint32_t)i);
		CHECK(cond_frame(&l.c, COND_TO_HOST, &iov, 1));
		advance(&l, 500000);
	}
	arms = l.c.cond->arms;
	for (int i = 0; i < 100; i++) {
		send_udp(&l, 7, 100, (uint32_t)i);
		CHECK(cond_frame(&l.c, COND_TO_HOST, &iov, 1));
		advance(&l, 500000);
		runs++;
		while (take(&l, tags, 8))
			;
	}
	arms = l.c.cond->arms - arms;
	printf("#   %llu wakeups, %llu timer sets\n", (unsigned long long)runs,
	       (unsigned long long)arms);
	CHECK(arms <= runs);
	line_close(&l);
}

const struct unit_case unit_cases[] = {
        {"spec: good rules and their canonical text", spec_good},
        {"spec: each bad field named", spec_bad},
        {"spec: 16 rules, and delay × rate bounded", spec_limits},
        {"spec: JSON rules, objects and strings", spec_json},
        {"delay: nothing early, all in order under jitter", delay_order},
        {"loss: binomial bound, repeatable by seed", loss_seeded},
        {"loss: the same frames whichever thread sends them", loss_any_thread},
        {"loss: bursts keep the rate and the correlation", loss_bursts},
        {"rate: spacing and the queue's bound", rate_spacing},
        {"rate: a GSO frame counted as its segments on the wire", rate_gso},
        {"down: scoped, and lifted", down_scoped},
        {"delay: scoped to an IPv6 host, not its neighbour", scoped_v6_host},
        {"down: cuts what was held before it", down_cuts_held},
        {"down: healed, it still cut what was on the link, and only that",
         down_cuts_healed},
        {"duplicate and reorder", duplicate_reorder},
        {"a neutral rule holds nothing", neutral},
        {"memory: held bytes bounded, big frames and small", memory_bound},
        {"memory: the set-time bound covers every frame size",
         cost_per_wire_byte},
        {"new rules don't wait behind what old ones hold", rules_change},
        {"rate: the same rules set again keep its queue and clock",
         rate_set_again},
        {"rate: a changed rate goes on from the old queue's end, no burst",
         rate_changed},
        {"TCP: only its own rules change its flight and timers", tcp_scoped},
        {"TCP: connections under one rate share its flight", tcp_shares},
        {"TCP: a delay is not counted as the rate's queue",
         tcp_delay_not_queue},
        {"a capture stamps a held frame when it is delivered",
         capture_at_delivery},
        {"timer: set once per wakeup, whatever a delivery holds",
         one_arm_per_wakeup},
        {NULL, NULL},
};
