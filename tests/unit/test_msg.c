// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - unit tests for the helper reply's JSON encoding and validation */

#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <jansson.h>

#include "ipc/msg.h"
#include "tests/unit/unit.h"

/* The example of docs/ipc.md: the wire format must not drift from it. */
static const char tap_example[] =
        "{\"version\":1,\"type\":\"tap\",\"ifname\":\"tap0\",\"ifindex\":3,"
        "\"mtu\":1500,\"txqueuelen\":4000,\"mac\":\"52:54:00:12:34:56\","
        "\"addresses\":[{\"family\":\"inet\",\"address\":\"10.0.2.100\","
        "\"prefixlen\":24},{\"family\":\"inet6\",\"address\":\"fd00::64\","
        "\"prefixlen\":64}],\"offloads\":{\"vnet_hdr\":true,"
        "\"vnet_hdr_len\":12,\"flags\":[\"csum\",\"tso4\",\"tso6\",\"uso4\","
        "\"uso6\"]},\"queues\":1}";

static const char error_example[] =
        "{\"version\":1,\"type\":\"error\",\"error\":{\"errno\":2,"
        "\"op\":\"setns /proc/42/ns/net\",\"text\":\"No such file or "
        "directory\"}}";

/**
 * sample_tap() - fill @r with the reply of tap_example
 * @r:	reply to fill
 */
static void sample_tap(struct ipc_reply *r)
{
	struct ipc_tap_info *t = &r->tap;
	const uint8_t mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};

	memset(r, 0, sizeof(*r));
	r->kind = IPC_REPLY_TAP;
	strcpy(t->ifname, "tap0");
	t->ifindex = 3;
	t->mtu = 1500;
	t->txqueuelen = 4000;
	memcpy(t->mac, mac, sizeof(mac));
	t->naddrs = 2;
	t->addrs[0].family = AF_INET;
	inet_pton(AF_INET, "10.0.2.100", &t->addrs[0].addr.v4);
	t->addrs[0].prefixlen = 24;
	t->addrs[1].family = AF_INET6;
	inet_pton(AF_INET6, "fd00::64", &t->addrs[1].addr.v6);
	t->addrs[1].prefixlen = 64;
	t->vnet_hdr = true;
	t->vnet_hdr_len = 12;
	t->offloads = 0x01 | 0x02 | 0x04 | 0x20 | 0x40;
	t->queues = 1;
}

/**
 * sample_json() - the tap example as a mutable JSON tree
 *
 * Return: new reference
 */
static json_t *sample_json(void)
{
	json_t *root = json_loads(tap_example, 0, NULL);

	CHECK(root != NULL);
	return root;
}

/**
 * decode_text() - decode @text and report the verdict
 * @text:	JSON text, NUL-terminated
 * @why:	buffer for the reason
 * @whylen:	size of @why
 *
 * Return: what ipc_reply_decode() returned
 */
static int decode_text(const char *text, char *why, size_t whylen)
{
	struct ipc_reply r;

	return ipc_reply_decode(text, strlen(text), &r, why, whylen);
}

/**
 * rejects_text() - whether @text is refused with a reason mentioning @needle
 * @text:	JSON text, NUL-terminated
 * @needle:	expected part of the reason, typically the field name
 *
 * Return: true if rejected for the expected reason
 */
static bool rejects_text(const char *text, const char *needle)
{
	struct ipc_reply r;
	char why[256] = "unset";
	int rc;

	memset(&r, 0xa5, sizeof(r));
	rc = ipc_reply_decode(text, strlen(text), &r, why, sizeof(why));
	if (rc != -1 || !strstr(why, needle) || r.kind != 0) {
		printf("#   input %.120s: rc %d, why \"%s\", wanted \"%s\"\n",
		       text, rc, why, needle);
		return false;
	}
	return true;
}

/**
 * rejects() - whether the JSON tree @root is refused for @needle's reason
 * @root:	tree to serialise and decode; its reference is consumed
 * @needle:	expected part of the reason
 *
 * Return: true if rejected for the expected reason
 */
static bool rejects(json_t *root, const char *needle)
{
	char *text = json_dumps(root, JSON_COMPACT | JSON_ENCODE_ANY);
	bool ok;

	json_decref(root);
	if (!text)
		return false;
	ok = rejects_text(text, needle);
	free(text);
	return ok;
}

/**
 * accepts() - whether the JSON tree @root decodes successfully
 * @root:	tree to serialise and decode; its reference is consumed
 *
 * Return: true if accepted
 */
static bool accepts(json_t *root)
{
	char *text = json_dumps(root, JSON_COMPACT);
	char why[256] = "";
	int rc;

	json_decref(root);
	if (!text)
		return false;
	rc = decode_text(text, why, sizeof(why));
	if (rc)
		printf("#   input %.120s rejected: %s\n", text, why);
	free(text);
	return rc == 0;
}

/**
 * with() - the tap example with one top-level member replaced
 * @key:	member to replace, or remove if @val is NULL
 * @val:	new value, reference stolen
 *
 * Return: new reference
 */
static json_t *with(const char *key, json_t *val)
{
	json_t *root = sample_json();

	if (val)
		json_object_set_new(root, key, val);
	else
		json_object_del(root, key);
	return root;
}

/**
 * with_in() - the tap example with one member of a nested object replaced
 * @obj:	top-level member holding the object ("offloads")
 * @key:	member to replace, or remove if @val is NULL
 * @val:	new value, reference stolen
 *
 * Return: new reference
 */
static json_t *with_in(const char *obj, const char *key, json_t *val)
{
	json_t *root = sample_json();
	json_t *o = json_object_get(root, obj);

	if (val)
		json_object_set_new(o, key, val);
	else
		json_object_del(o, key);
	return root;
}

/**
 * with_addr() - the tap example with one member of addresses[0] replaced
 * @key:	member to replace, or remove if @val is NULL
 * @val:	new value, reference stolen
 *
 * Return: new reference
 */
static json_t *with_addr(const char *key, json_t *val)
{
	json_t *root = sample_json();
	json_t *a = json_array_get(json_object_get(root, "addresses"), 0);

	if (val)
		json_object_set_new(a, key, val);
	else
		json_object_del(a, key);
	return root;
}

/**
 * error_json() - the error example with one member of "error" replaced
 * @key:	member to replace, or remove if @val is NULL
 * @val:	new value, reference stolen
 *
 * Return: new reference
 */
static json_t *error_json(const char *key, json_t *val)
{
	json_t *root = json_loads(error_example, 0, NULL);
	json_t *e = json_object_get(root, "error");

	if (val)
		json_object_set_new(e, key, val);
	else if (key)
		json_object_del(e, key);
	return root;
}

static void test_encode_tap_example(void)
{
	struct ipc_reply r;
	char *s;

	sample_tap(&r);
	s = ipc_reply_encode(&r);
	CHECK(s != NULL);
	CHECK(s && !strcmp(s, tap_example));
	free(s);
}

static void test_roundtrip_tap_all_flags(void)
{
	struct ipc_reply in, out;
	char why[256] = "";
	char *s;

	sample_tap(&in);
	in.tap.offloads = 0x7f;
	in.tap.queues = IPC_MAX_QUEUES;
	in.tap.mtu = 65521;
	s = ipc_reply_encode(&in);
	CHECK(s != NULL);
	if (!s)
		return;
	CHECK(strstr(s, "\"flags\":[\"csum\",\"tso4\",\"tso6\",\"tso_ecn\","
	                "\"ufo\",\"uso4\",\"uso6\"]") != NULL);
	CHECK(ipc_reply_decode(s, strlen(s), &out, why, sizeof(why)) == 0);
	CHECK(why[0] == '\0');
	CHECK(out.kind == IPC_REPLY_TAP);
	CHECK(!strcmp(out.tap.ifname, "tap0"));
	CHECK(out.tap.ifindex == 3);
	CHECK(out.tap.mtu == 65521);
	CHECK(out.tap.txqueuelen == 4000);
	CHECK(!memcmp(out.tap.mac, in.tap.mac, 6));
	CHECK(out.tap.naddrs == 2);
	CHECK(out.tap.addrs[0].family == AF_INET);
	CHECK(out.tap.addrs[0].addr.v4.s_addr ==
	      in.tap.addrs[0].addr.v4.s_addr);
	CHECK(out.tap.addrs[0].prefixlen == 24);
	CHECK(out.tap.addrs[1].family == AF_INET6);
	CHECK(!memcmp(&out.tap.addrs[1].addr.v6, &in.tap.addrs[1].addr.v6,
	              sizeof(struct in6_addr)));
	CHECK(out.tap.addrs[1].prefixlen == 64);
	CHECK(out.tap.vnet_hdr);
	CHECK(out.tap.vnet_hdr_len == 12);
	CHECK(out.tap.offloads == 0x7f);
	CHECK(out.tap.queues == IPC_MAX_QUEUES);
	free(s);
}

static void test_roundtrip_tap_plain(void)
{
	struct ipc_reply in, out;
	char *s;

	/* No vnet header, no addresses: the smallest valid tap reply. */
	sample_tap(&in);
	in.tap.naddrs = 0;
	in.tap.vnet_hdr = false;
	in.tap.vnet_hdr_len = 0;
	in.tap.offloads = 0;
	s = ipc_reply_encode(&in);
	CHECK(s != NULL);
	if (!s)
		return;
	CHECK(strstr(s, "\"addresses\":[]") != NULL);
	CHECK(ipc_reply_decode(s, strlen(s), &out, NULL, 0) == 0);
	CHECK(out.tap.naddrs == 0 && !out.tap.vnet_hdr);
	CHECK(out.tap.vnet_hdr_len == 0 && out.tap.offloads == 0);
	free(s);
}

static void test_roundtrip_error(void)
{
	struct ipc_reply in, out;
	char why[256];
	char *s;

	memset(&in, 0, sizeof(in));
	in.kind = IPC_REPLY_ERROR;
	in.error.err = 2;
	strcpy(in.error.op, "setns /proc/42/ns/net");
	strcpy(in.error.text, "No such file or directory");
	s = ipc_reply_encode(&in);
	CHECK(s && !strcmp(s, error_example));
	if (!s)
		return;
	CHECK(ipc_reply_decode(s, strlen(s), &out, why, sizeof(why)) == 0);
	CHECK(out.kind == IPC_REPLY_ERROR);
	CHECK(out.error.err == 2);
	CHECK(!strcmp(out.error.op, "setns /proc/42/ns/net"));
	CHECK(!strcmp(out.error.text, "No such file or directory"));
	free(s);
}

static void test_error_text_truncated(void)
{
	struct ipc_reply r;
	char op[301], text[601];
	json_t *root;
	char *s;

	memset(op, 'x', 300);
	op[300] = '\0';
	/* "é" is two bytes: a naive cut would split the last one. */
	for (int i = 0; i < 300; i++)
		memcpy(text + 2 * i, "\xc3\xa9", 2);
	text[600] = '\0';
	root = error_json("op", json_string(op));
	json_object_set_new(json_object_get(root, "error"), "text",
	                    json_string(text));
	s = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	CHECK(s && ipc_reply_decode(s, strlen(s), &r, NULL, 0) == 0);
	CHECK(strlen(r.error.op) == sizeof(r.error.op) - 1);
	CHECK(strlen(r.error.text) == sizeof(r.error.text) - 2);
	CHECK(!strncmp(r.error.text, text, strlen(r.error.text)));
	free(s);
}

static void test_encode_non_utf8_error(void)
{
	struct ipc_reply in, out;
	char *s;

	/* A path in the op may hold any bytes; the reply must still go out. */
	memset(&in, 0, sizeof(in));
	in.kind = IPC_REPLY_ERROR;
	in.error.err = 13;
	strcpy(in.error.op, "open /tmp/\xff\xfe");
	strcpy(in.error.text, "Permission denied");
	s = ipc_reply_encode(&in);
	CHECK(s != NULL);
	if (!s)
		return;
	CHECK(ipc_reply_decode(s, strlen(s), &out, NULL, 0) == 0);
	CHECK(!strcmp(out.error.op, "open /tmp/??"));
	free(s);
}

static void test_encode_refuses_unrepresentable(void)
{
	struct ipc_reply r;

	memset(&r, 0, sizeof(r));
	CHECK(ipc_reply_encode(&r) == NULL);
	CHECK(ipc_reply_encode(NULL) == NULL);
	sample_tap(&r);
	r.tap.naddrs = IPC_MAX_ADDRS + 1;
	CHECK(ipc_reply_encode(&r) == NULL);
	sample_tap(&r);
	r.tap.addrs[1].family = AF_UNIX;
	CHECK(ipc_reply_encode(&r) == NULL);
	sample_tap(&r);
	r.tap.offloads |= 0x80;
	CHECK(ipc_reply_encode(&r) == NULL);
}

static void test_missing_fields(void)
{
	static const char *const keys[] = {
	        "version",    "type", "ifname",    "ifindex",  "mtu",
	        "txqueuelen", "mac",  "addresses", "offloads", "queues",
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char needle[64];

		snprintf(needle, sizeof(needle), "\"%s\": missing", keys[i]);
		CHECK(rejects(with(keys[i], NULL), needle));
	}
	CHECK(rejects(with_in("offloads", "vnet_hdr", NULL),
	              "\"offloads.vnet_hdr\": missing"));
	CHECK(rejects(with_in("offloads", "vnet_hdr_len", NULL),
	              "\"offloads.vnet_hdr_len\": missing"));
	CHECK(rejects(with_in("offloads", "flags", NULL),
	              "\"offloads.flags\": missing"));
	CHECK(rejects(with_addr("family", NULL),
	              "\"addresses[0].family\": missing"));
	CHECK(rejects(with_addr("address", NULL),
	              "\"addresses[0].address\": missing"));
	CHECK(rejects(with_addr("prefixlen", NULL),
	              "\"addresses[0].prefixlen\": missing"));
	CHECK(rejects(error_json("errno", NULL), "\"error.errno\": missing"));
	CHECK(rejects(error_json("op", NULL), "\"error.op\": missing"));
	CHECK(rejects(error_json("text", NULL), "\"error.text\": missing"));
}

static void test_wrong_types(void)
{
	CHECK(rejects(with("mtu", json_string("1500")), "\"mtu\""));
	CHECK(rejects(with("mtu", json_real(1500.0)), "\"mtu\""));
	CHECK(rejects_text("{\"version\":1.0,\"type\":\"tap\"}",
	                   "\"version\""));
	CHECK(rejects(with("ifindex", json_true()), "\"ifindex\""));
	CHECK(rejects(with("ifname", json_integer(5)), "\"ifname\""));
	CHECK(rejects(with("mac", json_null()), "\"mac\""));
	CHECK(rejects(with("type", json_integer(1)), "\"type\""));
	CHECK(rejects(with("addresses", json_object()), "\"addresses\""));
	CHECK(rejects(with("offloads", json_array()), "\"offloads\""));
	CHECK(rejects(with("queues", json_string("1")), "\"queues\""));
	CHECK(rejects(with_in("offloads", "vnet_hdr", json_integer(1)),
	              "\"offloads.vnet_hdr\""));
	CHECK(rejects(with_in("offloads", "flags", json_string("csum")),
	              "\"offloads.flags\""));
	CHECK(rejects(with_addr("prefixlen", json_real(24.0)),
	              "\"addresses[0].prefixlen\""));
	CHECK(rejects(error_json("errno", json_string("2")),
	              "\"error.errno\""));
	CHECK(rejects(error_json("text", json_integer(2)), "\"error.text\""));
	CHECK(rejects_text("{\"version\":1,\"type\":\"error\",\"error\":[]}",
	                   "\"error\""));
}

static void test_mtu_range(void)
{
	CHECK(rejects(with("mtu", json_integer(67)),
	              "field \"mtu\": must be an integer in 68..65521"));
	CHECK(rejects(with("mtu", json_integer(65522)),
	              "field \"mtu\": must be an integer in 68..65521"));
	CHECK(rejects(with("mtu", json_integer(-1500)), "\"mtu\""));
	CHECK(accepts(with("mtu", json_integer(68))));
	CHECK(accepts(with("mtu", json_integer(65521))));
}

static void test_integer_ranges(void)
{
	CHECK(rejects(with("version", json_integer(2)), "\"version\""));
	CHECK(rejects(with("ifindex", json_integer(0)), "\"ifindex\""));
	CHECK(rejects(with("ifindex", json_integer(2147483648LL)),
	              "\"ifindex\""));
	CHECK(accepts(with("ifindex", json_integer(2147483647LL))));
	CHECK(rejects(with("txqueuelen", json_integer(0)), "\"txqueuelen\""));
	CHECK(rejects(with("txqueuelen", json_integer(1000001)),
	              "\"txqueuelen\""));
	CHECK(accepts(with("txqueuelen", json_integer(1000000))));
	CHECK(rejects(with_addr("prefixlen", json_integer(33)),
	              "\"addresses[0].prefixlen\""));
	CHECK(rejects(with_addr("prefixlen", json_integer(-1)),
	              "\"addresses[0].prefixlen\""));
	CHECK(accepts(with_addr("prefixlen", json_integer(0))));
	CHECK(rejects(error_json("errno", json_integer(0)), "\"error.errno\""));
	CHECK(rejects(error_json("errno", json_integer(4096)),
	              "\"error.errno\""));
	/* Beyond what jansson can hold: a parse error, not a wrap-around. */
	CHECK(rejects_text("{\"version\":1,\"type\":\"tap\",\"mtu\":"
	                   "99999999999999999999}",
	                   "invalid JSON"));
}

static void test_queues_range(void)
{
	CHECK(rejects(with("queues", json_integer(0)),
	              "field \"queues\": must be an integer in 1..16"));
	CHECK(rejects(with("queues", json_integer(17)),
	              "field \"queues\": must be an integer in 1..16"));
	CHECK(accepts(with("queues", json_integer(16))));
}

static void test_bad_mac(void)
{
	static const char *const bad[] = {
	        "52:54:00:12:34",
	        "52:54:00:12:34:5g",
	        "52-54-00-12-34-56",
	        "52:54:00:12:34:56 ",
	        "052:54:00:12:34:5",
	        "52:54:00:12:34:56:78",
	        "",
	        "525400123456",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(rejects(with("mac", json_string(bad[i])), "\"mac\""));
	CHECK(accepts(with("mac", json_string("52:54:00:AB:cd:EF"))));
}

static void test_bad_ifname(void)
{
	static const char *const bad[] = {
	        "",  "a/b", "a b", "tap\t0", "0123456789abcdef",
	        ".", "..",  "a:1",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(rejects(with("ifname", json_string(bad[i])),
		              "\"ifname\""));
	CHECK(accepts(with("ifname", json_string("0123456789abcde"))));
}

static void test_bad_address(void)
{
	CHECK(rejects(with_addr("address", json_string("10.0.2.256")),
	              "\"addresses[0].address\""));
	CHECK(rejects(with_addr("address", json_string("fd00::64")),
	              "\"addresses[0].address\""));
	CHECK(rejects(with_addr("address", json_string("")),
	              "\"addresses[0].address\""));
	CHECK(rejects(with_addr("address", json_string("10.0.2.100/24")),
	              "\"addresses[0].address\""));
	CHECK(rejects(with_addr("family", json_string("inet4")),
	              "\"addresses[0].family\""));
	CHECK(rejects_text("{\"version\":1,\"type\":\"tap\",\"ifname\":\"t\","
	                   "\"ifindex\":1,\"mtu\":1500,\"txqueuelen\":1,"
	                   "\"mac\":\"52:54:00:12:34:56\",\"addresses\":["
	                   "{\"family\":\"inet6\",\"address\":\"10.0.2.100\","
	                   "\"prefixlen\":64}]}",
	                   "\"addresses[0].address\""));
	CHECK(rejects_text("{\"version\":1,\"type\":\"tap\",\"ifname\":\"t\","
	                   "\"ifindex\":1,\"mtu\":1500,\"txqueuelen\":1,"
	                   "\"mac\":\"52:54:00:12:34:56\",\"addresses\":["
	                   "{\"family\":\"inet6\",\"address\":\"fd00::1\","
	                   "\"prefixlen\":129}]}",
	                   "\"addresses[0].prefixlen\""));
}

static void test_address_count(void)
{
	json_t *root = sample_json();
	json_t *addrs = json_object_get(root, "addresses");
	json_t *first = json_array_get(addrs, 0);

	while (json_array_size(addrs) < IPC_MAX_ADDRS)
		json_array_append(addrs, first);
	CHECK(accepts(json_incref(root)));
	json_array_append(addrs, first);
	CHECK(rejects(root, "\"addresses\""));
	CHECK(rejects_text("{\"version\":1,\"type\":\"tap\",\"ifname\":\"t\","
	                   "\"ifindex\":1,\"mtu\":1500,\"txqueuelen\":1,"
	                   "\"mac\":\"52:54:00:12:34:56\",\"addresses\":[1]}",
	                   "\"addresses[0]\""));
}

static void test_offload_flags(void)
{
	json_t *flags = json_array();

	json_array_append_new(flags, json_string("csum"));
	json_array_append_new(flags, json_string("gso"));
	CHECK(rejects(with_in("offloads", "flags", flags),
	              "\"offloads.flags[1]\": unknown offload \"gso\""));

	flags = json_array();
	json_array_append_new(flags, json_string("csum"));
	json_array_append_new(flags, json_string("csum"));
	CHECK(rejects(with_in("offloads", "flags", flags),
	              "\"offloads.flags[1]\""));

	flags = json_array();
	json_array_append_new(flags, json_integer(1));
	CHECK(rejects(with_in("offloads", "flags", flags),
	              "\"offloads.flags[0]\""));
}

static void test_vnet_hdr_rules(void)
{
	json_t *root;

	root = with_in("offloads", "vnet_hdr", json_false());
	json_object_set_new(json_object_get(root, "offloads"), "vnet_hdr_len",
	                    json_integer(0));
	CHECK(rejects(root, "\"offloads.flags\": must be empty"));

	CHECK(rejects(with_in("offloads", "vnet_hdr", json_false()),
	              "\"offloads.vnet_hdr_len\""));
	CHECK(rejects(with_in("offloads", "vnet_hdr_len", json_integer(11)),
	              "\"offloads.vnet_hdr_len\""));
	CHECK(rejects(with_in("offloads", "vnet_hdr_len", json_integer(0)),
	              "\"offloads.vnet_hdr_len\""));
	CHECK(accepts(with_in("offloads", "vnet_hdr_len", json_integer(10))));

	root = with_in("offloads", "vnet_hdr", json_false());
	json_object_set_new(json_object_get(root, "offloads"), "vnet_hdr_len",
	                    json_integer(0));
	json_object_set_new(json_object_get(root, "offloads"), "flags",
	                    json_array());
	CHECK(accepts(root));
}

static void test_type_and_keys(void)
{
	CHECK(rejects(with("type", json_string("tun")), "\"type\""));
	CHECK(rejects(with("extra", json_integer(1)), "\"extra\""));
	CHECK(rejects(with_in("offloads", "gso", json_true()),
	              "\"offloads.gso\""));
	CHECK(rejects(error_json("errnum", json_integer(1)),
	              "\"error.errnum\""));
	CHECK(rejects_text("{\"version\":1,\"version\":1,\"type\":\"error\"}",
	                   "duplicate"));
	/* A tap reply carrying an error object is neither. */
	CHECK(rejects(with("error", json_object()), "\"error\""));
}

static void test_trailing_garbage(void)
{
	char buf[sizeof(tap_example) + 8];
	struct ipc_reply r;

	CHECK(decode_text(tap_example, NULL, 0) == 0);
	snprintf(buf, sizeof(buf), "%sx", tap_example);
	CHECK(rejects_text(buf, "invalid JSON"));
	snprintf(buf, sizeof(buf), "%s{}", tap_example);
	CHECK(rejects_text(buf, "invalid JSON"));
	/* An embedded NUL must not cut the message short in the parser. */
	memcpy(buf, tap_example, sizeof(tap_example));
	buf[sizeof(tap_example)] = 'x';
	CHECK(ipc_reply_decode(buf, sizeof(tap_example) + 1, &r, NULL, 0) ==
	      -1);
	/* Whitespace around the object is still one object. */
	snprintf(buf, sizeof(buf), " %s\n", tap_example);
	CHECK(decode_text(buf, NULL, 0) == 0);
}

static void test_not_an_object(void)
{
	CHECK(rejects_text("[]", "object"));
	CHECK(rejects_text("[1,2]", "object"));
	CHECK(rejects_text("1", "invalid JSON"));
	CHECK(rejects_text("\"tap\"", "invalid JSON"));
	CHECK(rejects_text("null", "invalid JSON"));
	CHECK(rejects_text("{}", "\"version\": missing"));
}

static void test_empty_input(void)
{
	struct ipc_reply r;
	char why[64] = "";

	CHECK(ipc_reply_decode("", 0, &r, why, sizeof(why)) == -1);
	CHECK(why[0] != '\0');
	CHECK(ipc_reply_decode(NULL, 0, &r, why, sizeof(why)) == -1);
	CHECK(rejects_text(" \n", "invalid JSON"));
}

static void test_deep_nesting(void)
{
	size_t depth = 100000;
	char *buf = malloc(2 * depth + 64);
	size_t n = 0;

	if (!buf) {
		CHECK(buf != NULL);
		return;
	}
	for (size_t i = 0; i < depth; i++)
		buf[n++] = '[';
	for (size_t i = 0; i < depth; i++)
		buf[n++] = ']';
	buf[n] = '\0';
	CHECK(rejects_text(buf, "invalid JSON"));

	/* Nesting inside an otherwise fine object, unterminated. */
	n = (size_t)sprintf(buf, "{\"version\":1,\"type\":\"tap\",\"ifname\":");
	for (size_t i = 0; i < depth; i++)
		buf[n++] = i % 2 ? '[' : '{';
	buf[n] = '\0';
	CHECK(rejects_text(buf, "invalid JSON"));

	/* Within the parser's limit, the schema still refuses it. */
	n = (size_t)sprintf(buf, "{\"version\":1,\"type\":\"tap\",\"ifname\":");
	for (size_t i = 0; i < 500; i++)
		buf[n++] = '[';
	for (size_t i = 0; i < 500; i++)
		buf[n++] = ']';
	buf[n++] = '}';
	buf[n] = '\0';
	CHECK(rejects_text(buf, "\"ifname\""));
	free(buf);
}

/**
 * next_rand() - xorshift64, so that failures reproduce
 * @s:	state, non-zero
 *
 * Return: next pseudo-random value
 */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void test_random_bytes(void)
{
	uint64_t seed = 0x7a91c0ffee;
	unsigned char buf[512];
	int bad = 0;

	for (int round = 0; round < 5000; round++) {
		size_t len = next_rand(&seed) % sizeof(buf);
		struct ipc_reply r;
		char why[128] = "";

		for (size_t i = 0; i < len; i++)
			buf[i] = (unsigned char)next_rand(&seed);
		if (ipc_reply_decode((const char *)buf, len, &r, why,
		                     sizeof(why)) != -1 ||
		    !why[0] || strchr(why, '\n') || r.kind != 0)
			bad++;
	}
	CHECK(bad == 0);
}

static void test_mutated_messages(void)
{
	static const char subst[] = "\"{}[]:,0-9ex\\\x80";
	uint64_t seed = 42;
	char buf[sizeof(tap_example)];
	int insane = 0;

	/* Single-byte damage anywhere: decoded or refused, but sane. */
	for (size_t pos = 0; pos < sizeof(tap_example) - 1; pos++) {
		for (int k = 0; k < 4; k++) {
			struct ipc_reply r;
			const struct ipc_tap_info *t = &r.tap;

			memcpy(buf, tap_example, sizeof(buf));
			buf[pos] =
			        subst[next_rand(&seed) % (sizeof(subst) - 1)];
			if (ipc_reply_decode(buf, sizeof(buf) - 1, &r, NULL, 0))
				continue;
			if (t->mtu < 68 || t->mtu > 65521 || t->queues < 1 ||
			    t->queues > IPC_MAX_QUEUES ||
			    t->naddrs > IPC_MAX_ADDRS || t->ifindex < 1 ||
			    strlen(t->ifname) >= IFNAMSIZ)
				insane++;
		}
	}
	CHECK(insane == 0);
}

static void test_why_buffer(void)
{
	struct ipc_reply r;
	char small[8];
	char why[128];

	CHECK(ipc_reply_decode("[]", 2, &r, NULL, 0) == -1);
	memset(small, 'z', sizeof(small));
	CHECK(ipc_reply_decode("[]", 2, &r, small, sizeof(small)) == -1);
	CHECK(memchr(small, '\0', sizeof(small)) != NULL);
	/* A hostile key must not break the one-line reason. */
	CHECK(rejects_text("{\"version\":1,\"type\":\"tap\",\"a\\nb\":1}",
	                   "\"a?b\""));
	CHECK(decode_text("{\"version\":1,\"type\":\"tap\",\"a\\nb\":1}", why,
	                  sizeof(why)) == -1);
	CHECK(!strchr(why, '\n'));
}

const struct unit_case unit_cases[] = {
        {"encode tap matches the documented example", test_encode_tap_example},
        {"tap reply with all offloads round-trips",
         test_roundtrip_tap_all_flags},
        {"tap reply without vnet_hdr or addresses round-trips",
         test_roundtrip_tap_plain},
        {"error reply round-trips", test_roundtrip_error},
        {"long error op and text are truncated on a character boundary",
         test_error_text_truncated},
        {"error op with non-UTF-8 bytes is still encoded",
         test_encode_non_utf8_error},
        {"encode refuses what it cannot represent",
         test_encode_refuses_unrepresentable},
        {"missing fields are named", test_missing_fields},
        {"wrong JSON types are refused", test_wrong_types},
        {"mtu 67 and 65522 are refused", test_mtu_range},
        {"integer ranges are enforced", test_integer_ranges},
        {"queues 0 and 17 are refused", test_queues_range},
        {"malformed mac is refused", test_bad_mac},
        {"malformed ifname is refused", test_bad_ifname},
        {"malformed address is refused", test_bad_address},
        {"at most IPC_MAX_ADDRS addresses", test_address_count},
        {"unknown or duplicate offload flag is refused", test_offload_flags},
        {"vnet_hdr, vnet_hdr_len and flags agree", test_vnet_hdr_rules},
        {"unknown type, unknown keys and duplicate keys are refused",
         test_type_and_keys},
        {"trailing garbage is refused", test_trailing_garbage},
        {"top level must be an object", test_not_an_object},
        {"empty input is refused", test_empty_input},
        {"deeply nested junk is refused without a crash", test_deep_nesting},
        {"random bytes are refused", test_random_bytes},
        {"damaged messages never decode to insane values",
         test_mutated_messages},
        {"reason fits the buffer and stays on one line", test_why_buffer},
        {NULL, NULL},
};
