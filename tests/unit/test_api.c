// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests for API requests: completeness, validation, replies */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <event2/event.h>
#include <jansson.h>

#include "driver/api/api.h"
#include "driver/core/inany.h"
#include "tests/unit/unit.h"

#define FAKE_MAX 8

/* The fake forward table: what api_respond() asks for, without sockets. */
static struct hostfwd_spec fake[FAKE_MAX];
static size_t nfake;
static unsigned int fake_next_id;
static struct opts fake_opts;
static struct ctx fake_ctx;

/**
 * fake_add() - api_fwd_ops.add: refuse duplicates like hostfwd_add()
 * @c:		unused
 * @s:		forward; id set on success
 * @why:	reason on failure
 * @whylen:	size of @why
 *
 * Return: 0, or -EADDRINUSE for a duplicate
 */
static int fake_add(struct ctx *c, struct hostfwd_spec *s, char *why,
                    size_t whylen)
{
	(void)c;
	for (size_t i = 0; i < nfake; i++) {
		if (fake[i].udp == s->udp &&
		    fake[i].host_port == s->host_port &&
		    inany_equal(&fake[i].host_addr, &s->host_addr)) {
			snprintf(why, whylen, "port already forwarded (id %u)",
			         fake[i].id);
			return -EADDRINUSE;
		}
	}
	if (nfake == FAKE_MAX) {
		snprintf(why, whylen, "full");
		return -ENOSPC;
	}
	s->id = fake_next_id++;
	fake[nfake++] = *s;
	return 0;
}

/**
 * fake_remove() - api_fwd_ops.remove
 * @c:		unused
 * @id:		forward id
 *
 * Return: 0, or -ENOENT
 */
static int fake_remove(struct ctx *c, unsigned int id)
{
	(void)c;
	for (size_t i = 0; i < nfake; i++) {
		if (fake[i].id != id)
			continue;
		memmove(&fake[i], &fake[i + 1],
		        (nfake - i - 1) * sizeof(fake[0]));
		nfake--;
		return 0;
	}
	return -ENOENT;
}

/**
 * fake_entry() - api_fwd_ops.entry
 * @c:		unused
 * @i:		position
 *
 * Return: the forward, or NULL
 */
static const struct hostfwd_spec *fake_entry(const struct ctx *c, size_t i)
{
	(void)c;
	return i < nfake ? &fake[i] : NULL;
}

/**
 * fake_status() - api_fwd_ops.status
 * @c:		unused
 * @st:		filled
 */
static void fake_status(const struct ctx *c, struct hostfwd_status *st)
{
	(void)c;
	memset(st, 0, sizeof(*st));
	st->forwards = nfake;
}

static const struct api_fwd_ops fake_ops = {
        .add = fake_add,
        .remove = fake_remove,
        .entry = fake_entry,
        .status = fake_status,
};

/**
 * reset() - empty table, default options, ids from 1
 */
static void reset(void)
{
	nfake = 0;
	fake_next_id = 1;
	memset(&fake_opts, 0, sizeof(fake_opts));
	fake_opts.net.s_addr = htonl(0x0a000200);
	fake_opts.prefix = 24;
	fake_opts.ifname[0] = 't';
	memset(&fake_ctx, 0, sizeof(fake_ctx));
	fake_ctx.o = &fake_opts;
	fake_ctx.guest4.s_addr = htonl(0x0a000264);
	fake_ctx.gw4.s_addr = htonl(0x0a000202);
	fake_ctx.dns4.s_addr = htonl(0x0a000203);
}

/**
 * replies() - whether @req gets exactly @want
 * @req:	request text
 * @want:	expected reply text
 *
 * Return: true if so
 */
static bool replies(const char *req, const char *want)
{
	char *got = api_respond(&fake_ctx, &fake_ops, req, strlen(req));
	bool ok = got && !strcmp(got, want);

	if (!ok)
		printf("#   request %.200s\n#   got  %s\n#   want %s\n", req,
		       got ? got : "(null)", want);
	free(got);
	return ok;
}

/**
 * error_is() - whether @req gets the error reply with description @desc
 * @req:	request text
 * @desc:	expected description, exactly
 *
 * Return: true if so
 */
static bool error_is(const char *req, const char *desc)
{
	char want[512];

	snprintf(want, sizeof(want), "{\"error\":{\"desc\":\"%s\"}}", desc);
	return replies(req, want);
}

/**
 * add_json() - an add_hostfwd request with the given arguments text
 * @args:	text of the "arguments" value
 * @buf:	output
 * @len:	size of @buf
 *
 * Return: @buf
 */
static const char *add_json(const char *args, char *buf, size_t len)
{
	snprintf(buf, len, "{\"execute\":\"add_hostfwd\",\"arguments\":%s}",
	         args);
	return buf;
}

/**
 * add_error() - whether add_hostfwd with @args fails on field @field
 * @args:	text of the "arguments" value
 * @field:	expected bad field
 *
 * Return: true if so, and nothing was added
 */
static bool add_error(const char *args, const char *field)
{
	char req[512], desc[128];
	size_t before = nfake;

	snprintf(desc, sizeof(desc),
	         "bad request: add_hostfwd: bad arguments.%s", field);
	return error_is(add_json(args, req, sizeof(req)), desc) &&
	       nfake == before;
}

/**
 * scan() - api_request_scan() over a C string
 * @s:		bytes
 * @eof:	client shut down
 *
 * Return: the verdict
 */
static enum api_scan scan(const char *s, bool eof)
{
	return api_request_scan(s, strlen(s), eof);
}

static void scan_newline_and_eof(void)
{
	CHECK(scan("{\"execute\":\"list_hostfwd\"}\n", false) == API_COMPLETE);
	CHECK(scan("{\"execute\":\"list_hostfwd\"}", true) == API_COMPLETE);
	CHECK(scan("", true) == API_COMPLETE);
	CHECK(scan("", false) == API_MORE);
	CHECK(scan("\n", false) == API_MORE);
	/* podman: JSON, "\n", no SHUT_WR; rootlesskit: the same plus it */
	CHECK(scan("{\"execute\":\"get_info\"}\r\n", false) == API_COMPLETE);
}

static void scan_complete_value(void)
{
	CHECK(scan("{\"execute\":\"list_hostfwd\"}", false) == API_COMPLETE);
	CHECK(scan("[1,2] ", false) == API_COMPLETE);
	CHECK(scan("\xef\xbb\xbf{}", false) == API_COMPLETE);
	/* Unfinished values wait, even across newlines and inner braces. */
	CHECK(scan("{\"execute\":", false) == API_MORE);
	CHECK(scan("{\n", false) == API_MORE);
	CHECK(scan("{\n \"execute\": \"get_info\"\n", false) == API_MORE);
	CHECK(scan("{\n \"execute\": \"get_info\"\n}", false) == API_COMPLETE);
	CHECK(scan("{\"a\":{\"b\":1}", false) == API_MORE);
	CHECK(scan("{\"a\":\"}", false) == API_MORE);
	CHECK(scan("{\"a\":tru", false) == API_MORE);
	/* A scalar may go on ("12" then "3"): it needs a newline. */
	CHECK(scan("123", false) == API_MORE);
	CHECK(scan("123\n", false) == API_COMPLETE);
}

static void scan_garbage_and_size(void)
{
	char big[API_MAX_REQUEST + 2];

	CHECK(scan("garbage\n", false) == API_COMPLETE);
	CHECK(scan("{\"a\":tru}", false) == API_COMPLETE);
	CHECK(scan("garbage", false) == API_MORE);
	memset(big, ' ', sizeof(big));
	big[0] = '{';
	CHECK(api_request_scan(big, API_MAX_REQUEST, false) == API_MORE);
	CHECK(api_request_scan(big, API_MAX_REQUEST, true) == API_COMPLETE);
	CHECK(api_request_scan(big, API_MAX_REQUEST + 1, false) ==
	      API_TOO_LARGE);
	CHECK(api_request_scan(big, API_MAX_REQUEST + 1, true) ==
	      API_TOO_LARGE);
}

static void top_level_errors(void)
{
	char big[API_MAX_REQUEST + 2];

	reset();
	CHECK(error_is("", "bad request: cannot parse JSON"));
	CHECK(error_is("garbage", "bad request: cannot parse JSON"));
	CHECK(error_is("{\"execute\":", "bad request: cannot parse JSON"));
	CHECK(error_is("[]", "bad request: json_object() failed"));
	CHECK(error_is("\"add_hostfwd\"", "bad request: json_object() failed"));
	CHECK(error_is("42", "bad request: json_object() failed"));
	CHECK(error_is("null", "bad request: json_object() failed"));
	CHECK(error_is("{}", "bad request: no execute found"));
	CHECK(error_is("{\"execute\":1}", "bad request: no execute found"));
	CHECK(error_is("{\"execute\":null}", "bad request: no execute found"));
	CHECK(error_is("{\"execute\":\"reboot\"}",
	               "bad request: unknown execute"));
	CHECK(error_is("{\"execute\":\"\"}", "bad request: unknown execute"));
	memset(big, ' ', sizeof(big));
	memcpy(big, "{\"execute\":\"get_info\"}", 22);
	big[API_MAX_REQUEST + 1] = '\0';
	CHECK(error_is(big, "bad request: too large message"));
}

static void leniency_kept(void)
{
	reset();
	/* Trailing bytes after the value, a BOM, extra keys: slirp4netns
	 * accepted them all.
	 */
	CHECK(replies("{\"execute\":\"list_hostfwd\"}\ngarbage",
	              "{\"return\":{\"entries\":[]},\"entries\":[]}"));
	CHECK(replies("\xef\xbb\xbf{\"execute\":\"list_hostfwd\"}",
	              "{\"return\":{\"entries\":[]},\"entries\":[]}"));
	CHECK(replies("{\"execute\":\"list_hostfwd\",\"arguments\":7,\"x\":1}",
	              "{\"return\":{\"entries\":[]},\"entries\":[]}"));
}

static void add_list_remove(void)
{
	reset();
	CHECK(replies("{\"execute\":\"add_hostfwd\",\"arguments\":{\"proto\":"
	              "\"tcp\",\"host_addr\":\"0.0.0.0\",\"host_port\":8080,"
	              "\"guest_addr\":\"10.0.2.100\",\"guest_port\":80}}",
	              "{\"return\":{\"id\":1}}"));
	/* podman sends "" addresses; rootlesskit may leave host_addr "" */
	CHECK(replies("{\"execute\":\"add_hostfwd\",\"arguments\":{\"proto\":"
	              "\"udp\",\"host_addr\":\"\",\"host_port\":5353,"
	              "\"guest_addr\":\"\",\"guest_port\":53}}",
	              "{\"return\":{\"id\":2}}"));
	CHECK(replies("{\"execute\":\"add_hostfwd\",\"arguments\":{\"proto\":"
	              "\"tcp\",\"host_addr\":\"::1\",\"host_port\":8080,"
	              "\"guest_port\":80.9}}",
	              "{\"return\":{\"id\":3}}"));
	CHECK(replies("{\"execute\":\"list_hostfwd\"}",
	              "{\"return\":{\"entries\":["
	              "{\"id\":1,\"proto\":\"tcp\",\"host_addr\":\"0.0.0.0\","
	              "\"host_port\":8080,\"guest_addr\":\"10.0.2.100\","
	              "\"guest_port\":80},"
	              "{\"id\":2,\"proto\":\"udp\",\"host_addr\":\"0.0.0.0\","
	              "\"host_port\":5353,\"guest_addr\":\"10.0.2.100\","
	              "\"guest_port\":53},"
	              "{\"id\":3,\"proto\":\"tcp\",\"host_addr\":\"::1\","
	              "\"host_port\":8080,\"guest_addr\":\"10.0.2.100\","
	              "\"guest_port\":80}]},"
	              "\"entries\":["
	              "{\"id\":1,\"proto\":\"tcp\",\"host_addr\":\"0.0.0.0\","
	              "\"host_port\":8080,\"guest_addr\":\"10.0.2.100\","
	              "\"guest_port\":80},"
	              "{\"id\":2,\"proto\":\"udp\",\"host_addr\":\"0.0.0.0\","
	              "\"host_port\":5353,\"guest_addr\":\"10.0.2.100\","
	              "\"guest_port\":53},"
	              "{\"id\":3,\"proto\":\"tcp\",\"host_addr\":\"::1\","
	              "\"host_port\":8080,\"guest_addr\":\"10.0.2.100\","
	              "\"guest_port\":80}]}"));
	CHECK(replies(
	        "{\"execute\":\"remove_hostfwd\",\"arguments\":{\"id\":1}}",
	        "{\"return\":{}}"));
	/* 3.7 is forward 3, as slirp4netns's cast made it. */
	CHECK(replies("{\"execute\":\"remove_hostfwd\",\"arguments\":{\"id\":"
	              "3.7}}",
	              "{\"return\":{}}"));
	CHECK(nfake == 1 && fake[0].id == 2);
	/* Ids are never reused. */
	CHECK(replies("{\"execute\":\"add_hostfwd\",\"arguments\":{\"proto\":"
	              "\"tcp\",\"host_port\":8080,\"guest_port\":80}}",
	              "{\"return\":{\"id\":4}}"));
}

static void add_defaults(void)
{
	struct in6_addr want;

	reset();
	CHECK(replies("{\"execute\":\"add_hostfwd\",\"arguments\":{\"proto\":"
	              "\"tcp\",\"host_port\":1,\"guest_port\":65535}}",
	              "{\"return\":{\"id\":1}}"));
	CHECK(nfake == 1);
	inany_from_v4(&want, (struct in_addr){htonl(INADDR_ANY)});
	CHECK(inany_equal(&fake[0].host_addr, &want));
	inany_from_v4(&want, (struct in_addr){htonl(0x0a000264)});
	CHECK(inany_equal(&fake[0].guest_addr, &want));
	CHECK(fake[0].host_port == 1 && fake[0].guest_port == 65535);
	CHECK(!fake[0].udp);
	/* A null address is an absent one; 0.0.0.0 as guest is the default */
	CHECK(replies("{\"execute\":\"add_hostfwd\",\"arguments\":{\"proto\":"
	              "\"tcp\",\"host_addr\":null,\"host_port\":2,"
	              "\"guest_addr\":\"0.0.0.0\",\"guest_port\":2}}",
	              "{\"return\":{\"id\":2}}"));
	CHECK(nfake == 2 && inany_equal(&fake[1].guest_addr, &want));
}

static void add_errors(void)
{
	char req[128];

	reset();
	CHECK(error_is("{\"execute\":\"add_hostfwd\"}",
	               "bad request: add_hostfwd: bad arguments.proto"));
	CHECK(add_error("null", "proto"));
	CHECK(add_error("[]", "proto"));
	CHECK(add_error("\"tcp\"", "proto"));
	CHECK(add_error("{}", "proto"));
	CHECK(add_error("{\"proto\":6}", "proto"));
	CHECK(add_error("{\"proto\":\"sctp\"}", "proto"));
	CHECK(add_error("{\"proto\":\"TCP\"}", "proto"));
	CHECK(add_error("{\"proto\":\"tcp\",\"host_addr\":\"localhost\"}",
	                "host_addr"));
	CHECK(add_error("{\"proto\":\"tcp\",\"host_addr\":\"1.2.3\"}",
	                "host_addr"));
	CHECK(add_error("{\"proto\":\"tcp\",\"host_addr\":17}", "host_addr"));
	CHECK(add_error("{\"proto\":\"tcp\"}", "host_port"));
	CHECK(add_error("{\"proto\":\"tcp\",\"host_port\":\"8080\"}",
	                "host_port"));
	CHECK(add_error("{\"proto\":\"tcp\",\"host_port\":0}", "host_port"));
	CHECK(add_error("{\"proto\":\"tcp\",\"host_port\":0.5}", "host_port"));
	CHECK(add_error("{\"proto\":\"tcp\",\"host_port\":-1}", "host_port"));
	CHECK(add_error("{\"proto\":\"tcp\",\"host_port\":65536}",
	                "host_port"));
	CHECK(add_error("{\"proto\":\"tcp\",\"host_port\":70000}",
	                "host_port"));
	CHECK(add_error("{\"proto\":\"tcp\",\"host_port\":1e300}",
	                "host_port"));
	CHECK(add_error("{\"proto\":\"tcp\",\"host_port\":true}", "host_port"));
	CHECK(add_error("{\"proto\":\"tcp\",\"host_port\":80,"
	                "\"guest_addr\":\"fd00::100\"}",
	                "guest_addr"));
	CHECK(add_error("{\"proto\":\"tcp\",\"host_port\":80,"
	                "\"guest_addr\":[]}",
	                "guest_addr"));
	CHECK(add_error("{\"proto\":\"tcp\",\"host_port\":80}", "guest_port"));
	CHECK(add_error("{\"proto\":\"tcp\",\"host_port\":80,"
	                "\"guest_port\":65536}",
	                "guest_port"));
	CHECK(add_error("{\"proto\":\"tcp\",\"host_port\":80,"
	                "\"guest_port\":{}}",
	                "guest_port"));
	/* The first bad field is named, in slirp4netns's order. */
	CHECK(add_error("{\"proto\":\"tcp\",\"host_addr\":\"x\","
	                "\"host_port\":0}",
	                "host_addr"));
	CHECK(nfake == 0 && fake_next_id == 1);
	CHECK(replies(add_json("{\"proto\":\"tcp\",\"host_port\":80,"
	                       "\"guest_port\":80}",
	                       req, sizeof(req)),
	              "{\"return\":{\"id\":1}}"));
	CHECK(error_is(add_json("{\"proto\":\"tcp\",\"host_addr\":\"0.0.0.0\","
	                        "\"host_port\":80,\"guest_port\":81}",
	                        req, sizeof(req)),
	               "bad request: add_hostfwd: slirp_add_hostfwd failed "
	               "(port already forwarded (id 1))"));
	/* Same port, other protocol: a separate forward. */
	CHECK(replies(add_json("{\"proto\":\"udp\",\"host_port\":80,"
	                       "\"guest_port\":80}",
	                       req, sizeof(req)),
	              "{\"return\":{\"id\":2}}"));
}

static void remove_errors(void)
{
	const char *bad = "bad request: remove_hostfwd: bad arguments.id";

	reset();
	CHECK(error_is("{\"execute\":\"remove_hostfwd\"}", bad));
	CHECK(error_is("{\"execute\":\"remove_hostfwd\",\"arguments\":{}}",
	               bad));
	CHECK(error_is("{\"execute\":\"remove_hostfwd\",\"arguments\":"
	               "{\"id\":1}}",
	               bad));
	CHECK(error_is("{\"execute\":\"remove_hostfwd\",\"arguments\":"
	               "{\"id\":\"1\"}}",
	               bad));
	CHECK(error_is("{\"execute\":\"remove_hostfwd\",\"arguments\":"
	               "{\"id\":0}}",
	               bad));
	CHECK(error_is("{\"execute\":\"remove_hostfwd\",\"arguments\":"
	               "{\"id\":-1}}",
	               bad));
	CHECK(error_is("{\"execute\":\"remove_hostfwd\",\"arguments\":"
	               "{\"id\":1e30}}",
	               bad));
}

static void stats_shape(void)
{
	char want[4096], *p = want;
	const char *end = want + sizeof(want);

	reset();
	fake_ctx.stats.tap_rx_frames = 1;
	fake_ctx.stats.tap_rx_bytes = 2;
	fake_ctx.stats.tap_tx_frames = 3;
	fake_ctx.stats.tap_tx_bytes = 4;
	fake_ctx.stats.to_host[PROTO_TCP].packets = 5;
	fake_ctx.stats.to_host[PROTO_TCP].bytes = 6;
	fake_ctx.stats.to_guest[PROTO_UDP].packets = 7;
	fake_ctx.stats.to_guest[PROTO_UDP].bytes = 8;
	fake_ctx.stats.drops[DROP_BAD_CHECKSUM] = 9;
	fake_ctx.stats.flows[PROTO_ICMP] = 10;
	fake_ctx.tap.queues = 2;
	fake_ctx.stats.queues[0] = (struct queue_stats){1, 2, 2, 3};
	fake_ctx.stats.queues[1] = (struct queue_stats){0, 0, 1, 1};
	fake_ctx.stats.cond[CC_LOSS] = 11;
	p += snprintf(p, end - p,
	              "{\"return\":{\"tap\":{\"rx_frames\":1,\"rx_bytes\":2,"
	              "\"tx_frames\":3,\"tx_bytes\":4},\"to_host\":{");
	for (int i = 0; i < PROTO_COUNT; i++)
		p += snprintf(p, end - p,
		              "%s\"%s\":{\"packets\":%d,\"bytes\":%d}",
		              i ? "," : "", stats_proto_name(i),
		              i == PROTO_TCP ? 5 : 0, i == PROTO_TCP ? 6 : 0);
	p += snprintf(p, end - p, "},\"to_guest\":{");
	for (int i = 0; i < PROTO_COUNT; i++)
		p += snprintf(p, end - p,
		              "%s\"%s\":{\"packets\":%d,\"bytes\":%d}",
		              i ? "," : "", stats_proto_name(i),
		              i == PROTO_UDP ? 7 : 0, i == PROTO_UDP ? 8 : 0);
	p += snprintf(p, end - p, "},\"drops\":{");
	for (int i = 0; i < DROP_REASONS; i++)
		p += snprintf(p, end - p, "%s\"%s\":%d", i ? "," : "",
		              drop_reason_name(i),
		              i == DROP_BAD_CHECKSUM ? 9 : 0);
	p += snprintf(p, end - p, "},\"flows\":{");
	for (int i = 0; i < PROTO_COUNT; i++)
		p += snprintf(p, end - p, "%s\"%s\":%d", i ? "," : "",
		              stats_proto_name(i), i == PROTO_ICMP ? 10 : 0);
	/* One entry per queue, the tap counters split. */
	p += snprintf(p, end - p,
	              "},\"queues\":[{\"rx_frames\":1,\"rx_bytes\":2,"
	              "\"tx_frames\":2,\"tx_bytes\":3},{\"rx_frames\":0,"
	              "\"rx_bytes\":0,\"tx_frames\":1,\"tx_bytes\":1}],"
	              "\"conditions\":{");
	for (int i = 0; i < CC_COUNT; i++)
		p += snprintf(p, end - p, "%s\"%s\":%d", i ? "," : "",
		              cond_count_name(i), i == CC_LOSS ? 11 : 0);
	snprintf(p, end - p, "}}}");
	CHECK(replies("{\"execute\":\"get_stats\"}", want));
	/* Arguments are ignored. */
	CHECK(replies("{\"execute\":\"get_stats\",\"arguments\":{\"x\":1}}",
	              want));
}

static void info_fields(void)
{
	char *got;
	json_t *root, *r;

	reset();
	fake_opts.forward_mode = FORWARD_SPLICE;
	fake_opts.pid = 42;
	fake_opts.disable_dns = true;
	strcpy(fake_opts.api_socket, "/run/x.sock");
	fake_ctx.tap.mtu = 65520;
	fake_ctx.tap.queues = 2;
	fake_ctx.tap.vnet_hdr = true;
	fake_ctx.tap.vnet_hdr_len = 12;
	fake_ctx.tap.offloads = 0x01;
	got = api_respond(&fake_ctx, &fake_ops, "{\"execute\":\"get_info\"}",
	                  22);
	root = got ? json_loads(got, 0, NULL) : NULL;
	r = json_object_get(root, "return");
	CHECK(r != NULL);
	CHECK(!strcmp(json_string_value(json_object_get(r, "driver")),
	              "tapir"));
	CHECK(!strcmp(json_string_value(json_object_get(r, "version")),
	              TAPIR_VERSION));
	CHECK(json_integer_value(json_object_get(r, "pid")) > 0);
	CHECK(json_integer_value(json_object_get(r, "mtu")) == 65520);
	CHECK(json_integer_value(json_object_get(r, "queues")) == 2);
	CHECK(!strcmp(json_string_value(json_object_get(r, "cidr")),
	              "10.0.2.0/24"));
	CHECK(json_integer_value(json_object_get(json_object_get(r, "target"),
	                                         "pid")) == 42);
	CHECK(json_is_true(
	        json_object_get(json_object_get(r, "offloads"), "vnet_hdr")));
	CHECK(!strcmp(json_string_value(json_array_get(
	                      json_object_get(json_object_get(r, "offloads"),
	                                      "flags"),
	                      0)),
	              "csum"));
	r = json_object_get(r, "options");
	CHECK(json_is_true(json_object_get(r, "disable_dns")));
	CHECK(json_is_false(json_object_get(r, "disable_host_loopback")));
	CHECK(json_is_null(json_object_get(r, "outbound_addr")));
	CHECK(!strcmp(json_string_value(json_object_get(r, "forward_mode")),
	              "splice"));
	CHECK(!strcmp(json_string_value(json_object_get(r, "api_socket")),
	              "/run/x.sock"));
	json_decref(root);
	free(got);
}

/**
 * api_connect() - connect a blocking client to the API socket at @path
 * @path:	socket path
 *
 * Return: the connected socket, or -1
 */
static int api_connect(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/**
 * spin() - run the event loop until nothing is ready
 * @c:		context with its base
 */
static void spin(struct ctx *c)
{
	for (int i = 0; i < 8; i++)
		event_base_loop(c->base, EVLOOP_NONBLOCK);
}

/**
 * pending() - what a client can read without waiting
 * @fd:		client
 * @buf:	filled, NUL-terminated
 * @len:	size of @buf
 *
 * Return: bytes read, 0 at EOF, -1 if nothing is there yet
 */
static ssize_t pending(int fd, char *buf, size_t len)
{
	ssize_t n = recv(fd, buf, len - 1, MSG_DONTWAIT);

	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/**
 * idle_clients_evicted() - past API_MAX_CONNS silent clients, every new
 *			    client evicts the oldest; a real one is answered
 */
static void idle_clients_evicted(void)
{
	enum { EXTRA = 8, N = API_MAX_CONNS + EXTRA };
	char dir[] = "/tmp/tapir-test-api.XXXXXX", buf[256];
	static struct opts o;
	int fds[N], fresh;
	struct ctx c;

	memset(&c, 0, sizeof(c));
	CHECK(mkdtemp(dir) != NULL);
	snprintf(o.api_socket, sizeof(o.api_socket), "%s/api.sock", dir);
	c.o = &o;
	c.base = event_base_new();
	CHECK(c.base != NULL);
	if (!c.base || api_init(&c)) {
		CHECK(!"api_init");
		return;
	}
	/* One at a time: the listener's backlog is shorter than N. */
	for (int i = 0; i < N; i++) {
		fds[i] = api_connect(o.api_socket);
		CHECK(fds[i] >= 0);
		spin(&c);
	}
	for (int i = 0; i < EXTRA; i++) {
		CHECK(pending(fds[i], buf, sizeof(buf)) > 0);
		CHECK(strstr(buf, "closed this idle one") != NULL);
		CHECK(pending(fds[i], buf, sizeof(buf)) == 0);
	}
	for (int i = EXTRA; i < N; i++)
		CHECK(pending(fds[i], buf, sizeof(buf)) < 0);
	/* A client that speaks at once is served, at the oldest's expense. */
	fresh = api_connect(o.api_socket);
	CHECK(fresh >= 0);
	CHECK(send(fresh, "x\n", 2, 0) == 2);
	spin(&c);
	CHECK(pending(fresh, buf, sizeof(buf)) > 0);
	CHECK(!strcmp(buf, "{\"error\":{\"desc\":\"bad request: cannot "
	                   "parse JSON\"}}"));
	CHECK(pending(fds[EXTRA], buf, sizeof(buf)) > 0);
	CHECK(pending(fds[EXTRA + 1], buf, sizeof(buf)) < 0);
	close(fresh);
	for (int i = 0; i < N; i++)
		close(fds[i]);
	spin(&c);
	api_cleanup(&c);
	event_base_free(c.base);
	rmdir(dir);
}

const struct unit_case unit_cases[] = {
        {"scan: newline and EOF end a request", scan_newline_and_eof},
        {"scan: a complete JSON value ends a request", scan_complete_value},
        {"scan: garbage ends at a newline, size is capped",
         scan_garbage_and_size},
        {"respond: top-level errors", top_level_errors},
        {"respond: slirp4netns leniency kept", leniency_kept},
        {"respond: add, list, remove", add_list_remove},
        {"respond: add_hostfwd defaults", add_defaults},
        {"respond: add_hostfwd errors", add_errors},
        {"respond: remove_hostfwd errors", remove_errors},
        {"respond: get_stats shape", stats_shape},
        {"respond: get_info fields", info_fields},
        {"socket: idle clients past the cap evict the oldest",
         idle_clients_evicted},
        {NULL, NULL},
};
