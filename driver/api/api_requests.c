// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - API requests: JSON text in, compact JSON reply out (docs/api.md)
 *
 * Everything here is a function of the request text and the context, with
 * the forward table behind struct api_fwd_ops, so that unit tests drive
 * every request and every error without sockets. Error texts and field
 * checks follow slirp4netns's api.c in order and wording, except where it
 * crashed or accepted nonsense (missing proto, out-of-range ports).
 */

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <jansson.h>

#include "driver/api/api.h"
#include "driver/cond/cond.h"
#include "driver/core/inany.h"
#include "driver/core/stats.h"
#include "driver/thread/thread.h"
#include "driver/host/probe.h"
#include "driver/tcp/tcp.h"
#include "driver/host/version.h"
#include "ipc/msg.h"

/* slirp4netns skips a UTF-8 byte order mark before the JSON text. */
static const char utf8_bom[] = "\xef\xbb\xbf";

const struct api_fwd_ops api_hostfwd_ops = {
        .add = hostfwd_add,
        .remove = hostfwd_remove,
        .entry = hostfwd_entry,
        .status = hostfwd_status,
};

/**
 * skip_bom() - step over a leading UTF-8 byte order mark
 * @buf:	request text, updated
 * @len:	its length, updated
 */
static void skip_bom(const char **buf, size_t *len)
{
	if (*len >= 3 && !memcmp(*buf, utf8_bom, 3)) {
		*buf += 3;
		*len -= 3;
	}
}

/**
 * worth_parsing() - whether the bytes so far may end a JSON text
 * @buf:	bytes received
 * @len:	their number
 *
 * A value can only have just ended at a newline or a closing bracket.
 * Elsewhere the text may stop inside a token ("tru"), which the parser
 * reports as a syntax error rather than as premature end.
 *
 * Return: true if the last byte, ignoring blanks, is '\n', '}' or ']'
 */
static bool worth_parsing(const char *buf, size_t len)
{
	while (len && (buf[len - 1] == ' ' || buf[len - 1] == '\t' ||
	               buf[len - 1] == '\r'))
		len--;
	return len && (buf[len - 1] == '\n' || buf[len - 1] == '}' ||
	               buf[len - 1] == ']');
}

/**
 * api_request_scan() - whether the bytes received so far are a request
 * @buf:	bytes received on the connection
 * @len:	their number (the connection reads at most API_MAX_REQUEST+1)
 * @eof:	the client shut down its side
 *
 * A request ends at EOF (slirp4netns's man page: shutdown(SHUT_WR)), or
 * as soon as the bytes are one complete JSON value, or at a newline that
 * leaves something which cannot become JSON: podman writes JSON and "\n"
 * and then waits, rootlesskit adds SHUT_WR. Multi-line JSON still works,
 * since a newline inside an unfinished value waits for more.
 *
 * Return: API_COMPLETE, API_MORE or API_TOO_LARGE
 */
enum api_scan api_request_scan(const char *buf, size_t len, bool eof)
{
	json_error_t err;
	json_t *v;

	if (len > API_MAX_REQUEST)
		return API_TOO_LARGE;
	if (eof)
		return API_COMPLETE;
	if (!worth_parsing(buf, len))
		return API_MORE;
	skip_bom(&buf, &len);
	v = json_loadb(buf, len, JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK,
	               &err);
	if (v) {
		json_decref(v);
		return API_COMPLETE;
	}
	return json_error_code(&err) == json_error_premature_end_of_input
	               ? API_MORE
	               : API_COMPLETE;
}

/**
 * dump() - serialise and free a reply
 * @root:	reply (reference consumed), or NULL on ENOMEM
 *
 * Return: compact JSON text, malloc'd, or NULL on ENOMEM
 */
static char *dump(json_t *root)
{
	char *s;

	if (!root)
		return NULL;
	s = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return s;
}

/**
 * api_error_reply() - {"error":{"desc":DESC}}
 * @desc:	description
 *
 * Return: compact JSON text, malloc'd, or NULL on ENOMEM
 */
char *api_error_reply(const char *desc)
{
	return dump(json_pack("{s:{s:s}}", "error", "desc", desc));
}

/**
 * ok_reply() - {"return":VALUE}
 * @value:	reference consumed; NULL (ENOMEM) gives NULL
 *
 * Return: compact JSON text, malloc'd, or NULL on ENOMEM
 */
static char *ok_reply(json_t *value)
{
	if (!value)
		return NULL;
	return dump(json_pack("{s:o}", "return", value));
}

/**
 * parse_port() - a port: a JSON number, truncated like slirp4netns's cast
 * @v:		value, or NULL if absent
 * @port:	result
 *
 * Return: 0 on success, -1 if absent, not a number or outside 1..65535
 */
static int parse_port(const json_t *v, uint16_t *port)
{
	double d;

	if (!json_is_number(v))
		return -1;
	d = json_number_value(v);
	if (!(d >= 1 && d < 65536))
		return -1;
	*port = (uint16_t)d;
	return 0;
}

/**
 * parse_addr() - an address field: absent, null or "" mean @dflt
 * @v:		value, or NULL if absent
 * @v6_ok:	whether an IPv6 literal is accepted
 * @dflt:	default (inany)
 * @a:		result (inany)
 *
 * "0.0.0.0" and "::" are literal addresses like any other.
 *
 * Return: 0 on success, -1 for a non-string or an invalid literal
 */
static int parse_addr(const json_t *v, bool v6_ok, const struct in6_addr *dflt,
                      struct in6_addr *a)
{
	const char *s;
	struct in_addr v4;

	if (!v || json_is_null(v)) {
		*a = *dflt;
		return 0;
	}
	if (!json_is_string(v))
		return -1;
	s = json_string_value(v);
	if (!s[0]) {
		*a = *dflt;
		return 0;
	}
	if (inet_pton(AF_INET, s, &v4) == 1) {
		inany_from_v4(a, v4);
		return 0;
	}
	if (v6_ok && inet_pton(AF_INET6, s, a) == 1 && !inany_is_v4(a))
		return 0;
	return -1;
}

/**
 * parse_hostfwd() - the arguments of add_hostfwd, checked in order
 * @c:		context, for the default guest address
 * @args:	"arguments", or NULL
 * @s:		result
 *
 * Return: NULL on success, else the name of the first bad field
 */
static const char *parse_hostfwd(const struct ctx *c, const json_t *args,
                                 struct hostfwd_spec *s)
{
	struct in6_addr any4, guest;
	const char *proto;

	memset(s, 0, sizeof(*s));
	inany_from_v4(&any4, (struct in_addr){htonl(INADDR_ANY)});
	inany_from_v4(&guest, c->guest4);
	proto = json_string_value(json_object_get(args, "proto"));
	if (!proto || (strcmp(proto, "tcp") && strcmp(proto, "udp")))
		return "proto";
	s->udp = !strcmp(proto, "udp");
	if (parse_addr(json_object_get(args, "host_addr"), true, &any4,
	               &s->host_addr))
		return "host_addr";
	if (parse_port(json_object_get(args, "host_port"), &s->host_port))
		return "host_port";
	if (parse_addr(json_object_get(args, "guest_addr"), false, &guest,
	               &s->guest_addr))
		return "guest_addr";
	/* As in libslirp, an unspecified guest address means the default. */
	if (inany_equal(&s->guest_addr, &any4))
		s->guest_addr = guest;
	if (parse_port(json_object_get(args, "guest_port"), &s->guest_port))
		return "guest_port";
	return NULL;
}

/**
 * add_hostfwd() - {"execute":"add_hostfwd","arguments":{...}}
 * @c:		context
 * @ops:	forward table
 * @args:	"arguments", or NULL
 *
 * Return: reply text, malloc'd, or NULL on ENOMEM
 */
static char *add_hostfwd(struct ctx *c, const struct api_fwd_ops *ops,
                         const json_t *args)
{
	struct hostfwd_spec s;
	const char *bad = parse_hostfwd(c, args, &s);
	char desc[512], why[384];

	if (bad) {
		snprintf(desc, sizeof(desc),
		         "bad request: add_hostfwd: bad arguments.%s", bad);
		return api_error_reply(desc);
	}
	if (ops->add(c, &s, why, sizeof(why))) {
		/* slirp4netns's text first: clients may match on it. */
		snprintf(desc, sizeof(desc),
		         "bad request: add_hostfwd: slirp_add_hostfwd failed "
		         "(%s)",
		         why);
		return api_error_reply(desc);
	}
	return ok_reply(json_pack("{s:I}", "id", (json_int_t)s.id));
}

/**
 * remove_hostfwd() - {"execute":"remove_hostfwd","arguments":{"id":N}}
 * @c:		context
 * @ops:	forward table
 * @args:	"arguments", or NULL
 *
 * Return: reply text, malloc'd, or NULL on ENOMEM
 */
static char *remove_hostfwd(struct ctx *c, const struct api_fwd_ops *ops,
                            const json_t *args)
{
	const json_t *v = json_object_get(args, "id");
	double d = json_is_number(v) ? json_number_value(v) : 0;

	/* Truncated like slirp4netns's cast: 2.7 is forward 2. */
	if (!(d >= 1 && d < 4294967296.0) || ops->remove(c, (unsigned int)d))
		return api_error_reply(
		        "bad request: remove_hostfwd: bad arguments.id");
	return ok_reply(json_object());
}

/**
 * addr_json() - an inany address as a JSON string, IPv4 in dotted form
 * @a:		address
 *
 * Return: new reference, or NULL on ENOMEM
 */
static json_t *addr_json(const struct in6_addr *a)
{
	char buf[INET6_ADDRSTRLEN];

	return json_string(inany_ntop(a, buf));
}

/**
 * list_hostfwd() - {"execute":"list_hostfwd"}
 * @c:		context
 * @ops:	forward table
 *
 * The man page documents {"return":{"entries":[...]}}, the binary always
 * sent {"entries":[...]}; the reply carries both, so either client works.
 *
 * Return: reply text, malloc'd, or NULL on ENOMEM
 */
static char *list_hostfwd(struct ctx *c, const struct api_fwd_ops *ops)
{
	const struct hostfwd_spec *s;
	json_t *entries = json_array();

	for (size_t i = 0; entries && (s = ops->entry(c, i)); i++) {
		json_t *e = json_pack(
		        "{s:I,s:s,s:o,s:i,s:o,s:i}", "id", (json_int_t)s->id,
		        "proto", s->udp ? "udp" : "tcp", "host_addr",
		        addr_json(&s->host_addr), "host_port", s->host_port,
		        "guest_addr", addr_json(&s->guest_addr), "guest_port",
		        s->guest_port);

		if (json_array_append_new(entries, e)) {
			json_decref(entries);
			return NULL;
		}
	}
	if (!entries)
		return NULL;
	return dump(json_pack("{s:{s:O},s:o}", "return", "entries", entries,
	                      "entries", entries));
}

/**
 * tap_json() - the tap as the namespace helper reported it (docs/ipc.md)
 * @c:		context
 *
 * The helper's own encoder is reused, so get_info and the helper protocol
 * name offloads the same way.
 *
 * Return: new reference (an object without "version" and "type"), or NULL
 */
static json_t *tap_json(const struct ctx *c)
{
	struct ipc_reply r = {.kind = IPC_REPLY_TAP, .tap = c->tap};
	char *text = ipc_reply_encode(&r);
	json_t *o;

	if (!text)
		return NULL;
	o = json_loads(text, 0, NULL);
	free(text);
	json_object_del(o, "version");
	json_object_del(o, "type");
	return o;
}

/**
 * opt_addr() - an optional address option: its text, or JSON null
 * @set:	whether the option was given
 * @family:	AF_INET or AF_INET6
 * @addr:	struct in_addr or struct in6_addr
 *
 * Return: new reference, or NULL on ENOMEM
 */
static json_t *opt_addr(bool set, int family, const void *addr)
{
	char buf[INET6_ADDRSTRLEN];

	if (!set)
		return json_null();
	inet_ntop(family, addr, buf, sizeof(buf));
	return json_string(buf);
}

/**
 * opt_str() - an optional string option: its text, or JSON null if empty
 * @s:		option value
 *
 * Return: new reference, or NULL on ENOMEM
 */
static json_t *opt_str(const char *s)
{
	return s[0] ? json_string(s) : json_null();
}

/**
 * options_json() - the options in force
 * @o:		options
 *
 * Return: new reference, or NULL on ENOMEM
 */
static json_t *options_json(const struct opts *o)
{
	return json_pack(
	        "{s:b,s:b,s:b,s:b,s:o,s:o,s:o,s:s,s:i,s:i,s:o,s:b,s:b,s:b}",
	        "configure", o->configure, "disable_host_loopback",
	        o->disable_host_loopback, "disable_dns", o->disable_dns, "ipv6",
	        o->ipv6, "outbound_addr",
	        opt_addr(o->outbound4_set, AF_INET, &o->outbound4),
	        "outbound_addr6",
	        opt_addr(o->outbound6_set, AF_INET6, &o->outbound6),
	        "api_socket", opt_str(o->api_socket), "forward_mode",
	        o->forward_mode == FORWARD_SPLICE ? "splice" : "tap", "exit_fd",
	        o->exit_fd, "ready_fd", o->ready_fd, "pcap", opt_str(o->pcap),
	        "debug", o->debug, "sandbox", o->sandbox, "seccomp",
	        o->seccomp);
}

/**
 * target_json() - the namespace tapir serves
 * @o:		options
 *
 * Return: new reference, or NULL on ENOMEM
 */
static json_t *target_json(const struct opts *o)
{
	if (o->netns_type == NETNS_PATH)
		return json_pack("{s:s,s:s,s:o}", "type", "path", "path",
		                 o->netns_path, "userns_path",
		                 opt_str(o->userns_path));
	return json_pack("{s:s,s:i}", "type", "pid", "pid", (int)o->pid);
}

/**
 * forwards_json() - forward table and splice counters
 * @c:		context
 * @ops:	forward table
 *
 * Return: new reference, or NULL on ENOMEM
 */
static json_t *forwards_json(const struct ctx *c, const struct api_fwd_ops *ops)
{
	struct hostfwd_status st = {0};

	ops->status(c, &st);
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:{s:i,s:i,s:I,s:s,s:I}}",
	                 "count", (json_int_t)st.forwards, "splice_connections",
	                 (json_int_t)st.splice_conns, "splice_total",
	                 (json_int_t)st.splice_total, "splice_waiting",
	                 (json_int_t)st.splice_waiting, "splice_fallbacks",
	                 (json_int_t)st.splice_fallbacks, "splice_refused",
	                 (json_int_t)st.splice_refused, "pool", "inet",
	                 (int)st.pool_inet, "inet6", (int)st.pool_inet6,
	                 "refills", (json_int_t)st.pool_refills, "helper",
	                 nssock_helper_name(st.pool_helper), "wait_ms",
	                 (json_int_t)st.pool_wait_ms);
}

/**
 * kernel_json() - the running kernel and the paths taken where kernels
 *		   differ
 * @c:		context
 *
 * Return: new reference, or NULL on ENOMEM
 */
static json_t *kernel_json(const struct ctx *c)
{
	struct utsname u;

	return json_pack("{s:s,s:{s:s,s:s}}", "release",
	                 uname(&u) ? "unknown" : u.release, "tcp_peek", "ipv4",
	                 probe_peek_mode(tcp_peek_in_use(c, AF_INET)), "ipv6",
	                 probe_peek_mode(tcp_peek_in_use(c, AF_INET6)));
}

/**
 * conditions_json() - the rules in force, and what they turn off
 * @c:		context
 *
 * Spliced forwards can't be delayed or dropped frame by frame: while
 * rules are in force, new connections of a spliced forward go through
 * the tap, and "splice_paused" says so.
 *
 * Return: new reference, or NULL on ENOMEM
 */
static json_t *conditions_json(const struct ctx *c)
{
	struct cond_set s;
	json_t *o;

	cond_current(&s);
	o = cond_set_json(&s);
	if (o &&
	    json_object_set_new(o, "splice_paused",
	                        json_boolean(s.n && c->o->forward_mode ==
	                                                    FORWARD_SPLICE))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/**
 * get_info() - {"execute":"get_info"}
 * @c:		context
 * @ops:	forward table
 *
 * Return: reply text, malloc'd, or NULL on ENOMEM
 */
static char *get_info(struct ctx *c, const struct api_fwd_ops *ops)
{
	char net[INET_ADDRSTRLEN], cidr[INET_ADDRSTRLEN + 4];
	json_t *tap = tap_json(c), *info;

	inet_ntop(AF_INET, &c->o->net, net, sizeof(net));
	snprintf(cidr, sizeof(cidr), "%s/%u", net, c->o->prefix);
	info = json_pack(
	        "{s:s,s:s,s:i,s:s,s:o,s:s,s:O?,s:O?,s:O?,s:O?,s:s,s:o,s:o,"
	        "s:o,s:o,s:o,s:s}",
	        "driver", "tapir", "version", TAPIR_VERSION, "pid",
	        (int)getpid(), "mode", c->o->mode == CLI_RUN ? "run" : "attach",
	        "target", target_json(c->o), "ifname", c->o->ifname, "mtu",
	        json_object_get(tap, "mtu"), "txqueuelen",
	        json_object_get(tap, "txqueuelen"), "offloads",
	        json_object_get(tap, "offloads"), "queues",
	        json_object_get(tap, "queues"), "cidr", cidr, "guest_addr",
	        opt_addr(true, AF_INET, &c->guest4), "gateway",
	        opt_addr(true, AF_INET, &c->gw4), "dns",
	        opt_addr(true, AF_INET, &c->dns4), "options",
	        options_json(c->o), "forwards", forwards_json(c, ops),
	        "features", tapir_features);
	if (info && tap)
		json_object_set(info, "tap", tap);
	json_decref(tap);
	if (info &&
	    (json_object_set_new(info, "kernel", kernel_json(c)) ||
	     json_object_set_new(info, "conditions", conditions_json(c)))) {
		json_decref(info);
		info = NULL;
	}
	return ok_reply(info);
}

/**
 * dir_json() - per-protocol counters of one direction
 * @d:		array of PROTO_COUNT counters
 *
 * Return: new reference, or NULL on ENOMEM
 */
static json_t *dir_json(const struct dir_stats *d)
{
	json_t *o = json_object();

	for (int p = 0; o && p < PROTO_COUNT; p++)
		if (json_object_set_new(o, stats_proto_name(p),
		                        json_pack("{s:I,s:I}", "packets",
		                                  (json_int_t)d[p].packets,
		                                  "bytes",
		                                  (json_int_t)d[p].bytes))) {
			json_decref(o);
			return NULL;
		}
	return o;
}

/**
 * counts_json() - an object of counters named by @name
 * @v:		counters
 * @n:		their number
 * @name:	name of counter i
 *
 * Return: new reference, or NULL on ENOMEM
 */
static json_t *counts_json(const uint64_t *v, int n, const char *(*name)(int))
{
	json_t *o = json_object();

	for (int i = 0; o && i < n; i++)
		if (json_object_set_new(o, name(i),
		                        json_integer((json_int_t)v[i]))) {
			json_decref(o);
			return NULL;
		}
	return o;
}

/**
 * drop_name() - drop_reason_name() over an int, for counts_json()
 * @i:		reason
 *
 * Return: its name
 */
static const char *drop_name(int i)
{
	return drop_reason_name((enum drop_reason)i);
}

/**
 * proto_name() - stats_proto_name() over an int, for counts_json()
 * @i:		protocol
 *
 * Return: its name
 */
static const char *proto_name(int i)
{
	return stats_proto_name((enum stats_proto)i);
}

/**
 * cond_name() - cond_count_name() over an int, for counts_json()
 * @i:		counter
 *
 * Return: its name
 */
static const char *cond_name(int i)
{
	return cond_count_name((enum cond_count)i);
}

/**
 * queues_json() - the per-queue counters, one object per tap queue
 * @c:		context
 * @st:		counters of every thread, added up
 *
 * Return: new reference to an array, or NULL on ENOMEM
 */
static json_t *queues_json(const struct ctx *c, const struct stats *st)
{
	json_t *a = json_array();

	for (unsigned int q = 0; a && q < c->tap.queues && q < TAPIR_MAX_QUEUES;
	     q++) {
		const struct queue_stats *s = &st->queues[q];

		if (json_array_append_new(
		            a, json_pack("{s:I,s:I,s:I,s:I}", "rx_frames",
		                         (json_int_t)s->rx_frames, "rx_bytes",
		                         (json_int_t)s->rx_bytes, "tx_frames",
		                         (json_int_t)s->tx_frames, "tx_bytes",
		                         (json_int_t)s->tx_bytes))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/**
 * api_stats_reply() - the reply to {"execute":"get_stats"}
 * @c:		context
 * @s:		every thread's counters, added up
 *
 * The benchmark harness reads this shape; keep it stable.
 *
 * Return: reply text, malloc'd, or NULL on ENOMEM
 */
char *api_stats_reply(const struct ctx *c, const struct stats *s)
{
	return ok_reply(json_pack(
	        "{s:{s:I,s:I,s:I,s:I},s:o,s:o,s:o,s:o,s:o,s:o}", "tap",
	        "rx_frames", (json_int_t)s->tap_rx_frames, "rx_bytes",
	        (json_int_t)s->tap_rx_bytes, "tx_frames",
	        (json_int_t)s->tap_tx_frames, "tx_bytes",
	        (json_int_t)s->tap_tx_bytes, "to_host", dir_json(s->to_host),
	        "to_guest", dir_json(s->to_guest), "drops",
	        counts_json(s->drops, DROP_REASONS, drop_name), "flows",
	        counts_json(s->flows, PROTO_COUNT, proto_name), "queues",
	        queues_json(c, s), "conditions",
	        counts_json(s->cond, CC_COUNT, cond_name)));
}

/**
 * get_stats() - {"execute":"get_stats"}: the datapath counters
 * @c:		context
 * @later:	if not NULL and there are datapath threads: set, and no
 *		reply: the caller has threads_stats_ask() get their counters
 *		first, then replies with api_stats_reply()
 *
 * Return: reply text, malloc'd, or NULL (ENOMEM, or @later set)
 */
static char *get_stats(struct ctx *c, bool *later)
{
	struct stats sum;

	if (later && c->threads) {
		*later = true;
		return NULL;
	}
	threads_stats_now(c, &sum);
	return api_stats_reply(c, &sum);
}

/**
 * set_conditions() - {"execute":"set_conditions","arguments":{"rules":[..]}}
 * @c:		context
 * @args:	arguments, or NULL
 *
 * The whole set is replaced, or on any error nothing changes.
 *
 * Return: reply text, malloc'd, or NULL on ENOMEM
 */
static char *set_conditions(struct ctx *c, const json_t *args)
{
	char why[240], desc[280];
	struct cond_set *s = malloc(sizeof(*s));
	char *reply;

	if (!s)
		return NULL;
	if (!COND_BUILT) {
		free(s);
		return api_error_reply("bad request: set_conditions: this "
		                       "tapir was built without network "
		                       "conditions");
	}
	if (!args || cond_json_set(s, args, why, sizeof(why))) {
		snprintf(desc, sizeof(desc), "bad request: set_conditions: %s",
		         args ? why : "arguments: missing");
		free(s);
		return api_error_reply(desc);
	}
	if (cond_install(s)) {
		free(s);
		return api_error_reply("bad request: set_conditions: out of "
		                       "memory; the old conditions stay");
	}
	free(s);
	reply = ok_reply(conditions_json(c));
	return reply;
}

/**
 * clear_conditions() - {"execute":"clear_conditions"}: no rules any more
 * @c:		context
 *
 * Return: reply text, malloc'd, or NULL on ENOMEM
 */
static char *clear_conditions(struct ctx *c)
{
	struct cond_set none = {0};

	if (cond_install(&none))
		return api_error_reply("bad request: clear_conditions: out of "
		                       "memory; the old conditions stay");
	return ok_reply(conditions_json(c));
}

/**
 * execute() - run one parsed request
 * @c:		context
 * @ops:	forward table
 * @root:	the request object
 *
 * Return: reply text, malloc'd, or NULL on ENOMEM
 */
static char *execute(struct ctx *c, const struct api_fwd_ops *ops,
                     const json_t *root, bool *later)
{
	const char *cmd = json_string_value(json_object_get(root, "execute"));
	const json_t *args = json_object_get(root, "arguments");

	if (!cmd)
		return api_error_reply("bad request: no execute found");
	if (!json_is_object(args))
		args = NULL;
	if (!strcmp(cmd, "add_hostfwd"))
		return add_hostfwd(c, ops, args);
	if (!strcmp(cmd, "list_hostfwd"))
		return list_hostfwd(c, ops);
	if (!strcmp(cmd, "remove_hostfwd"))
		return remove_hostfwd(c, ops, args);
	if (!strcmp(cmd, "get_info"))
		return get_info(c, ops);
	if (!strcmp(cmd, "get_stats"))
		return get_stats(c, later);
	if (!strcmp(cmd, "set_conditions"))
		return set_conditions(c, args);
	if (!strcmp(cmd, "get_conditions"))
		return ok_reply(conditions_json(c));
	if (!strcmp(cmd, "clear_conditions"))
		return clear_conditions(c);
	return api_error_reply("bad request: unknown execute");
}

/**
 * api_answer() - answer one request, or say that its reply comes later
 * @c:		context
 * @ops:	forward table (api_hostfwd_ops in the daemon)
 * @req:	request text, not NUL-terminated; bytes after the first JSON
 *		value are ignored, as slirp4netns does
 * @len:	its length, at most API_MAX_REQUEST
 * @later:	NULL to have every reply at once; else set for a get_stats
 *		that waits for the datapath threads' counters (get_stats())
 *
 * Return: the compact JSON reply, malloc'd, or NULL on ENOMEM or with
 *	   @later set
 */
char *api_answer(struct ctx *c, const struct api_fwd_ops *ops, const char *req,
                 size_t len, bool *later)
{
	json_error_t err;
	json_t *root;
	char *reply;

	if (len > API_MAX_REQUEST)
		return api_error_reply("bad request: too large message");
	skip_bom(&req, &len);
	root = json_loadb(req, len, JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK,
	                  &err);
	if (!root)
		return api_error_reply("bad request: cannot parse JSON");
	if (!json_is_object(root))
		reply = api_error_reply("bad request: json_object() failed");
	else
		reply = execute(c, ops, root, later);
	json_decref(root);
	return reply;
}

/**
 * api_respond() - answer one request at once
 * @c:		context
 * @ops:	forward table
 * @req:	request text, not NUL-terminated
 * @len:	its length
 *
 * get_stats answers with the datapath threads' last copies of their
 * counters (threads_stats_now()).
 *
 * Return: the compact JSON reply, malloc'd, or NULL on ENOMEM
 */
char *api_respond(struct ctx *c, const struct api_fwd_ops *ops, const char *req,
                  size_t len)
{
	return api_answer(c, ops, req, len, NULL);
}
