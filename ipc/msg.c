// SPDX-License-Identifier: GPL-2.0-or-later
/* tapir - encode and strictly validate the helper's JSON reply */

#include <arpa/inet.h>
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <jansson.h>

#include "ipc/msg.h"

/* Lowest MTU an IPv4 host must support (RFC 791), and the tap maximum. */
#define IPC_MTU_MIN 68
#define IPC_MTU_MAX 65521
#define IPC_TXQLEN_MAX 1000000
#define IPC_ERRNO_MAX 4095

/**
 * struct offload_name - wire name of one TUN_F_* flag
 * @flag:	the TUN_F_* bit
 * @name:	its name in "offloads.flags"
 */
struct offload_name {
	unsigned int flag;
	const char *name;
};

static const struct offload_name offload_names[] = {
        {TUN_F_CSUM, "csum"},       {TUN_F_TSO4, "tso4"}, {TUN_F_TSO6, "tso6"},
        {TUN_F_TSO_ECN, "tso_ecn"}, {TUN_F_UFO, "ufo"},   {TUN_F_USO4, "uso4"},
        {TUN_F_USO6, "uso6"},
};

#define N_OFFLOAD_NAMES (sizeof(offload_names) / sizeof(offload_names[0]))

/* Unknown keys are rejected: helper and parent are the same binary, so an
 * unexpected key can only be a bug or a forged message.
 */
static const char *const tap_keys[] = {
        "version", "type",      "ifname",   "ifindex", "mtu", "txqueuelen",
        "mac",     "addresses", "offloads", "queues",  NULL,
};
static const char *const addr_keys[] = {"family", "address", "prefixlen", NULL};
static const char *const offload_keys[] = {"vnet_hdr", "vnet_hdr_len", "flags",
                                           NULL};
static const char *const error_keys[] = {"version", "type", "error", NULL};
static const char *const error_obj_keys[] = {"errno", "op", "text", NULL};

/**
 * struct dec - state of one decode: where the failure reason goes
 * @why:	buffer for the one-line reason, may be NULL
 * @whylen:	size of @why
 */
struct dec {
	char *why;
	size_t whylen;
};

/**
 * fail() - record why decoding failed
 * @d:		decode state
 * @fmt:	printf format of the reason
 *
 * Return: always -1, so callers can "return fail(...)"
 */
__attribute__((format(printf, 2, 3))) static int fail(struct dec *d,
                                                      const char *fmt, ...)
{
	va_list ap;

	if (!d->why || !d->whylen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(d->why, d->whylen, fmt, ap);
	va_end(ap);
	/* Keys and parser excerpts come from the peer: keep the line one line. */
	for (char *p = d->why; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	}
	return -1;
}

/**
 * check_keys() - reject keys of @obj that are not in @allowed
 * @d:		decode state
 * @obj:	JSON object to check
 * @pfx:	path of @obj for the reason, "" at top level, else ending in "."
 * @allowed:	NULL-terminated list of known keys
 *
 * Return: 0 if every key is known, -1 otherwise
 */
static int check_keys(struct dec *d, json_t *obj, const char *pfx,
                      const char *const *allowed)
{
	const char *key;
	json_t *val;

	json_object_foreach(obj, key, val)
	{
		int known = 0;

		for (int i = 0; allowed[i]; i++) {
			if (!strcmp(key, allowed[i])) {
				known = 1;
				break;
			}
		}
		if (!known)
			return fail(d, "field \"%s%s\": unknown field", pfx,
			            key);
	}
	return 0;
}

/**
 * get_field() - look up a mandatory member of an object
 * @d:		decode state
 * @obj:	JSON object
 * @pfx:	path of @obj for the reason
 * @key:	member name
 *
 * Return: borrowed reference to the member, NULL if missing
 */
static json_t *get_field(struct dec *d, json_t *obj, const char *pfx,
                         const char *key)
{
	json_t *v = json_object_get(obj, key);

	if (!v)
		fail(d, "field \"%s%s\": missing", pfx, key);
	return v;
}

/**
 * get_int() - fetch a mandatory integer member and check its range
 * @d:		decode state
 * @obj:	JSON object
 * @pfx:	path of @obj for the reason
 * @key:	member name
 * @min:	smallest accepted value
 * @max:	largest accepted value
 * @out:	the value, on success
 *
 * Reals such as 1500.0 are refused: jansson keeps them distinct.
 *
 * Return: 0 on success, -1 on failure
 */
static int get_int(struct dec *d, json_t *obj, const char *pfx, const char *key,
                   json_int_t min, json_int_t max, json_int_t *out)
{
	json_t *v = get_field(d, obj, pfx, key);

	if (!v)
		return -1;
	if (!json_is_integer(v) || json_integer_value(v) < min ||
	    json_integer_value(v) > max)
		return fail(d,
		            "field \"%s%s\": must be an integer in %lld..%lld",
		            pfx, key, (long long)min, (long long)max);
	*out = json_integer_value(v);
	return 0;
}

/**
 * get_str() - fetch a mandatory string member
 * @d:		decode state
 * @obj:	JSON object
 * @pfx:	path of @obj for the reason
 * @key:	member name
 * @out:	the string, owned by @obj, on success
 *
 * Return: 0 on success, -1 on failure
 */
static int get_str(struct dec *d, json_t *obj, const char *pfx, const char *key,
                   const char **out)
{
	json_t *v = get_field(d, obj, pfx, key);

	if (!v)
		return -1;
	if (!json_is_string(v))
		return fail(d, "field \"%s%s\": must be a string", pfx, key);
	*out = json_string_value(v);
	return 0;
}

/**
 * get_obj() - fetch a mandatory object member, checking its keys
 * @d:		decode state
 * @obj:	JSON object
 * @pfx:	path of @obj for the reason
 * @key:	member name
 * @allowed:	NULL-terminated list of keys the member may have
 * @out:	borrowed reference to the member, on success
 *
 * Return: 0 on success, -1 on failure
 */
static int get_obj(struct dec *d, json_t *obj, const char *pfx, const char *key,
                   const char *const *allowed, json_t **out)
{
	json_t *v = get_field(d, obj, pfx, key);
	char sub[64];

	if (!v)
		return -1;
	if (!json_is_object(v))
		return fail(d, "field \"%s%s\": must be an object", pfx, key);
	snprintf(sub, sizeof(sub), "%s%s.", pfx, key);
	if (check_keys(d, v, sub, allowed))
		return -1;
	*out = v;
	return 0;
}

/**
 * copy_trunc() - copy a string into a fixed buffer, truncating if needed
 * @dst:	destination buffer
 * @size:	size of @dst, > 0
 * @src:	NUL-terminated UTF-8 source
 *
 * A cut never falls inside a UTF-8 sequence, so the result stays valid text.
 */
static void copy_trunc(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n >= size) {
		n = size - 1;
		while (n > 0 && ((unsigned char)src[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/**
 * hexval() - value of one hexadecimal digit
 * @c:	the character
 *
 * Return: 0..15, or -1 if @c is not a hex digit
 */
static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/**
 * parse_mac() - parse exactly "xx:xx:xx:xx:xx:xx"
 * @s:		the text
 * @mac:	the six bytes, on success
 *
 * Return: 0 on success, -1 on any deviation from the format
 */
static int parse_mac(const char *s, uint8_t mac[6])
{
	if (strlen(s) != 17)
		return -1;
	for (int i = 0; i < 6; i++) {
		const char *p = s + i * 3;
		int hi = hexval(p[0]), lo = hexval(p[1]);

		if (hi < 0 || lo < 0 || (i < 5 && p[2] != ':'))
			return -1;
		mac[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/**
 * valid_ifname() - whether the kernel could have given the tap this name
 * @s:	the name
 *
 * Mirrors the kernel's dev_valid_name(): the name later goes into paths and
 * log lines, so "/", ":", whitespace, "." and ".." are refused.
 *
 * Return: true if the name is acceptable
 */
static bool valid_ifname(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= IFNAMSIZ || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '/' || s[i] == ':' || isspace((unsigned char)s[i]))
			return false;
	}
	return true;
}

/**
 * decode_addr() - validate one entry of "addresses"
 * @d:		decode state
 * @v:		the entry
 * @idx:	its index, for the reason
 * @a:		the address, on success
 *
 * Return: 0 on success, -1 on failure
 */
static int decode_addr(struct dec *d, json_t *v, size_t idx, struct ipc_addr *a)
{
	const char *family = "", *address = "";
	json_int_t plen = 0;
	char pfx[40];

	snprintf(pfx, sizeof(pfx), "addresses[%zu].", idx);
	if (!json_is_object(v))
		return fail(d, "field \"addresses[%zu]\": must be an object",
		            idx);
	if (check_keys(d, v, pfx, addr_keys) ||
	    get_str(d, v, pfx, "family", &family))
		return -1;
	if (!strcmp(family, "inet"))
		a->family = AF_INET;
	else if (!strcmp(family, "inet6"))
		a->family = AF_INET6;
	else
		return fail(d,
		            "field \"%sfamily\": must be \"inet\" or \"inet6\"",
		            pfx);
	if (get_str(d, v, pfx, "address", &address))
		return -1;
	if (inet_pton(a->family, address, &a->addr) != 1)
		return fail(d, "field \"%saddress\": not a valid %s address",
		            pfx, a->family == AF_INET ? "IPv4" : "IPv6");
	if (get_int(d, v, pfx, "prefixlen", 0, a->family == AF_INET ? 32 : 128,
	            &plen))
		return -1;
	a->prefixlen = (unsigned int)plen;
	return 0;
}

/**
 * decode_offloads() - validate the "offloads" object
 * @d:		decode state
 * @root:	top-level object
 * @t:		tap info to fill
 *
 * Return: 0 on success, -1 on failure
 */
static int decode_offloads(struct dec *d, json_t *root, struct ipc_tap_info *t)
{
	json_t *o = NULL, *vh, *flags, *f;
	json_int_t hlen = 0;
	size_t i;

	if (get_obj(d, root, "", "offloads", offload_keys, &o))
		return -1;

	vh = get_field(d, o, "offloads.", "vnet_hdr");
	if (!vh)
		return -1;
	if (!json_is_boolean(vh))
		return fail(d,
		            "field \"offloads.vnet_hdr\": must be a boolean");
	t->vnet_hdr = json_is_true(vh);

	if (get_int(d, o, "offloads.", "vnet_hdr_len", 0, 12, &hlen))
		return -1;
	if (!t->vnet_hdr && hlen != 0)
		return fail(d, "field \"offloads.vnet_hdr_len\": must be 0 "
		               "without vnet_hdr");
	if (t->vnet_hdr && hlen != 10 && hlen != 12)
		return fail(d, "field \"offloads.vnet_hdr_len\": must be 10 or "
		               "12 with vnet_hdr");
	t->vnet_hdr_len = (unsigned int)hlen;

	flags = get_field(d, o, "offloads.", "flags");
	if (!flags)
		return -1;
	if (!json_is_array(flags))
		return fail(d, "field \"offloads.flags\": must be an array");
	/* Offloads change the frame format, which needs the vnet header. */
	if (!t->vnet_hdr && json_array_size(flags))
		return fail(d, "field \"offloads.flags\": must be empty "
		               "without vnet_hdr");

	json_array_foreach(flags, i, f)
	{
		const struct offload_name *on = NULL;

		if (!json_is_string(f))
			return fail(d,
			            "field \"offloads.flags[%zu]\": must be a "
			            "string",
			            i);
		for (size_t k = 0; k < N_OFFLOAD_NAMES; k++) {
			if (!strcmp(json_string_value(f),
			            offload_names[k].name))
				on = &offload_names[k];
		}
		if (!on)
			return fail(d,
			            "field \"offloads.flags[%zu]\": unknown "
			            "offload \"%.32s\"",
			            i, json_string_value(f));
		if (t->offloads & on->flag)
			return fail(d,
			            "field \"offloads.flags[%zu]\": duplicate "
			            "offload \"%s\"",
			            i, on->name);
		t->offloads |= on->flag;
	}
	return 0;
}

/**
 * decode_tap() - validate a reply of type "tap"
 * @d:		decode state
 * @root:	top-level object
 * @t:		tap info to fill
 *
 * Return: 0 on success, -1 on failure
 */
static int decode_tap(struct dec *d, json_t *root, struct ipc_tap_info *t)
{
	const char *ifname = "", *mac = "";
	json_t *addrs, *a;
	json_int_t v = 0;
	size_t i;

	if (check_keys(d, root, "", tap_keys))
		return -1;

	if (get_str(d, root, "", "ifname", &ifname))
		return -1;
	if (!valid_ifname(ifname))
		return fail(
		        d,
		        "field \"ifname\": must be a non-empty interface name "
		        "shorter than %d bytes, without '/', ':' or whitespace",
		        IFNAMSIZ);
	copy_trunc(t->ifname, sizeof(t->ifname), ifname);

	if (get_int(d, root, "", "ifindex", 1, INT_MAX, &v))
		return -1;
	t->ifindex = (int)v;
	if (get_int(d, root, "", "mtu", IPC_MTU_MIN, IPC_MTU_MAX, &v))
		return -1;
	t->mtu = (unsigned int)v;
	if (get_int(d, root, "", "txqueuelen", 1, IPC_TXQLEN_MAX, &v))
		return -1;
	t->txqueuelen = (unsigned int)v;

	if (get_str(d, root, "", "mac", &mac))
		return -1;
	if (parse_mac(mac, t->mac))
		return fail(
		        d,
		        "field \"mac\": must be \"xx:xx:xx:xx:xx:xx\" in hex");

	addrs = get_field(d, root, "", "addresses");
	if (!addrs)
		return -1;
	if (!json_is_array(addrs) || json_array_size(addrs) > IPC_MAX_ADDRS)
		return fail(d,
		            "field \"addresses\": must be an array of at most "
		            "%d objects",
		            IPC_MAX_ADDRS);
	json_array_foreach(addrs, i, a)
	{
		if (decode_addr(d, a, i, &t->addrs[i]))
			return -1;
	}
	t->naddrs = (unsigned int)json_array_size(addrs);

	if (decode_offloads(d, root, t))
		return -1;

	if (get_int(d, root, "", "queues", 1, IPC_MAX_QUEUES, &v))
		return -1;
	t->queues = (unsigned int)v;
	return 0;
}

/**
 * decode_error() - validate a reply of type "error"
 * @d:		decode state
 * @root:	top-level object
 * @e:		error info to fill
 *
 * Return: 0 on success, -1 on failure
 */
static int decode_error(struct dec *d, json_t *root, struct ipc_error *e)
{
	const char *op = "", *text = "";
	json_t *eo = NULL;
	json_int_t err = 0;

	if (check_keys(d, root, "", error_keys) ||
	    get_obj(d, root, "", "error", error_obj_keys, &eo) ||
	    get_int(d, eo, "error.", "errno", 1, IPC_ERRNO_MAX, &err) ||
	    get_str(d, eo, "error.", "op", &op) ||
	    get_str(d, eo, "error.", "text", &text))
		return -1;
	e->err = (int)err;
	copy_trunc(e->op, sizeof(e->op), op);
	copy_trunc(e->text, sizeof(e->text), text);
	return 0;
}

/**
 * ipc_reply_decode() - parse and strictly validate one helper reply
 * @buf:	the JSON text, need not be NUL-terminated
 * @len:	length of @buf in bytes
 * @r:		the reply, on success; zeroed on failure
 * @why:	buffer for a one-line reason naming the bad field, may be NULL
 * @whylen:	size of @why
 *
 * Return: 0 on success, -1 if @buf is not a valid reply
 */
int ipc_reply_decode(const char *buf, size_t len, struct ipc_reply *r,
                     char *why, size_t whylen)
{
	struct dec d = {.why = why, .whylen = whylen};
	json_error_t jerr;
	json_t *root, *type, *version;
	int ret = -1;

	if (why && whylen)
		why[0] = '\0';
	memset(r, 0, sizeof(*r));
	if (!buf || !len)
		return fail(&d, "empty message");

	/* Duplicate keys would let two readers of one message disagree. */
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return fail(&d, "invalid JSON at line %d, column %d: %s",
		            jerr.line, jerr.column, jerr.text);

	if (!json_is_object(root)) {
		fail(&d, "top level must be an object");
		goto out;
	}
	version = json_object_get(root, "version");
	if (!version) {
		fail(&d, "field \"version\": missing");
		goto out;
	}
	if (!json_is_integer(version) ||
	    json_integer_value(version) != IPC_MSG_VERSION) {
		fail(&d, "field \"version\": must be the integer %d",
		     IPC_MSG_VERSION);
		goto out;
	}

	type = get_field(&d, root, "", "type");
	if (!type)
		goto out;
	if (json_is_string(type) && !strcmp(json_string_value(type), "tap")) {
		r->kind = IPC_REPLY_TAP;
		ret = decode_tap(&d, root, &r->tap);
	} else if (json_is_string(type) &&
	           !strcmp(json_string_value(type), "error")) {
		r->kind = IPC_REPLY_ERROR;
		ret = decode_error(&d, root, &r->error);
	} else {
		fail(&d, "field \"type\": must be \"tap\" or \"error\"");
	}
out:
	json_decref(root);
	if (ret)
		memset(r, 0, sizeof(*r));
	return ret;
}

/**
 * text_value() - JSON string for a fixed-size C string buffer
 * @s:		the buffer, NUL-terminated or exactly @size bytes long
 * @size:	size of the buffer
 *
 * An error text may hold a path with bytes that are not UTF-8; rather than
 * lose the whole error reply, such bytes are sent as '?'.
 *
 * Return: new reference, or NULL on allocation failure
 */
static json_t *text_value(const char *s, size_t size)
{
	size_t n = strnlen(s, size);
	json_t *v = json_stringn(s, n);
	char *copy;

	if (v)
		return v;
	copy = malloc(n + 1);
	if (!copy)
		return NULL;
	for (size_t i = 0; i < n; i++)
		copy[i] = (unsigned char)s[i] < 0x80 ? s[i] : '?';
	v = json_stringn(copy, n);
	free(copy);
	return v;
}

/**
 * encode_addr() - JSON object for one configured address
 * @a:	the address
 *
 * Return: new reference, or NULL if @a has an unknown family or on ENOMEM
 */
static json_t *encode_addr(const struct ipc_addr *a)
{
	char text[INET6_ADDRSTRLEN];
	json_t *o;

	if (a->family != AF_INET && a->family != AF_INET6)
		return NULL;
	if (!inet_ntop(a->family, &a->addr, text, sizeof(text)))
		return NULL;
	o = json_object();
	if (!o)
		return NULL;
	if (json_object_set_new(
	            o, "family",
	            json_string(a->family == AF_INET ? "inet" : "inet6")) ||
	    json_object_set_new(o, "address", json_string(text)) ||
	    json_object_set_new(o, "prefixlen", json_integer(a->prefixlen))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/**
 * encode_offloads() - JSON object for the vnet header and offload flags
 * @t:	tap info
 *
 * Return: new reference, or NULL if @t has unknown offload bits or on ENOMEM
 */
static json_t *encode_offloads(const struct ipc_tap_info *t)
{
	unsigned int known = 0;
	json_t *o, *flags;

	o = json_object();
	flags = json_array();
	if (!o || !flags)
		goto err;
	for (size_t k = 0; k < N_OFFLOAD_NAMES; k++) {
		known |= offload_names[k].flag;
		if (!(t->offloads & offload_names[k].flag))
			continue;
		if (json_array_append_new(flags,
		                          json_string(offload_names[k].name)))
			goto err;
	}
	if (t->offloads & ~known)
		goto err;
	if (json_object_set_new(o, "vnet_hdr", json_boolean(t->vnet_hdr)) ||
	    json_object_set_new(o, "vnet_hdr_len",
	                        json_integer(t->vnet_hdr_len))) {
		goto err;
	}
	/* json_object_set_new() drops the reference even when it fails. */
	if (json_object_set_new(o, "flags", flags)) {
		json_decref(o);
		return NULL;
	}
	return o;
err:
	json_decref(flags);
	json_decref(o);
	return NULL;
}

/**
 * encode_tap() - JSON object for a "tap" reply
 * @t:	tap info
 *
 * Return: new reference, or NULL if @t cannot be represented or on ENOMEM
 */
static json_t *encode_tap(const struct ipc_tap_info *t)
{
	char mac[18];
	json_t *o, *addrs;

	if (t->naddrs > IPC_MAX_ADDRS)
		return NULL;
	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", t->mac[0],
	         t->mac[1], t->mac[2], t->mac[3], t->mac[4], t->mac[5]);

	o = json_object();
	if (!o)
		return NULL;
	if (json_object_set_new(o, "version", json_integer(IPC_MSG_VERSION)) ||
	    json_object_set_new(o, "type", json_string("tap")) ||
	    json_object_set_new(
	            o, "ifname",
	            json_stringn(t->ifname, strnlen(t->ifname, IFNAMSIZ))) ||
	    json_object_set_new(o, "ifindex", json_integer(t->ifindex)) ||
	    json_object_set_new(o, "mtu", json_integer(t->mtu)) ||
	    json_object_set_new(o, "txqueuelen", json_integer(t->txqueuelen)) ||
	    json_object_set_new(o, "mac", json_string(mac)) ||
	    json_object_set_new(o, "addresses", json_array()))
		goto err;

	addrs = json_object_get(o, "addresses");
	for (unsigned int i = 0; i < t->naddrs; i++) {
		if (json_array_append_new(addrs, encode_addr(&t->addrs[i])))
			goto err;
	}

	if (json_object_set_new(o, "offloads", encode_offloads(t)) ||
	    json_object_set_new(o, "queues", json_integer(t->queues)))
		goto err;
	return o;
err:
	json_decref(o);
	return NULL;
}

/**
 * encode_error() - JSON object for an "error" reply
 * @e:	error info
 *
 * Return: new reference, or NULL on ENOMEM
 */
static json_t *encode_error(const struct ipc_error *e)
{
	json_t *o, *eo;

	o = json_object();
	if (!o)
		return NULL;
	if (json_object_set_new(o, "version", json_integer(IPC_MSG_VERSION)) ||
	    json_object_set_new(o, "type", json_string("error")) ||
	    json_object_set_new(o, "error", json_object()))
		goto err;
	eo = json_object_get(o, "error");
	if (json_object_set_new(eo, "errno", json_integer(e->err)) ||
	    json_object_set_new(eo, "op", text_value(e->op, sizeof(e->op))) ||
	    json_object_set_new(eo, "text",
	                        text_value(e->text, sizeof(e->text))))
		goto err;
	return o;
err:
	json_decref(o);
	return NULL;
}

/**
 * ipc_reply_encode() - serialise a helper reply as compact JSON
 * @r:	the reply
 *
 * Values are not range-checked here: the parent's ipc_reply_decode() does
 * that and reports a bad field with its name.
 *
 * Return: malloc'd NUL-terminated JSON text (caller frees), or NULL if @r
 *	   has an unknown kind, address family or offload bit, or on ENOMEM
 */
char *ipc_reply_encode(const struct ipc_reply *r)
{
	json_t *root = NULL;
	char *s;

	if (!r)
		return NULL;
	if (r->kind == IPC_REPLY_TAP)
		root = encode_tap(&r->tap);
	else if (r->kind == IPC_REPLY_ERROR)
		root = encode_error(&r->error);
	if (!root)
		return NULL;
	s = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return s;
}
