/* SPDX-License-Identifier: MIT */
/* The fault rule syntax (see fault.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/fault/fault.h"

static const char *const action_names[SRD_FAULT_NACTIONS] = {
	[SRD_FAULT_DROP] = "drop",	 [SRD_FAULT_DUP] = "dup",
	[SRD_FAULT_REORDER] = "reorder", [SRD_FAULT_DELAY] = "delay",
	[SRD_FAULT_CORRUPT] = "corrupt",
};

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static void set_op(uint64_t ops[4], unsigned int op)
{
	ops[op >> 6] |= 1ull << (op & 63);
}

static void set_range(uint64_t ops[4], unsigned int lo, unsigned int hi)
{
	for (unsigned int op = lo; op <= hi; op++)
		set_op(ops, op);
}

/* One opcode class or number into the bitmap; false if unknown. */
static bool add_ops(uint64_t ops[4], const char *w)
{
	char *end;
	unsigned long v;

	if (!strcmp(w, "send")) {
		set_range(ops, 0x00, 0x05);
		set_range(ops, 0x16, 0x17);
		set_range(ops, 0x20, 0x25);
		set_range(ops, 0x64, 0x65);
	} else if (!strcmp(w, "write")) {
		set_range(ops, 0x06, 0x0b);
		set_range(ops, 0x26, 0x2b);
	} else if (!strcmp(w, "read")) {
		set_range(ops, 0x0c, 0x10);
	} else if (!strcmp(w, "read_req")) {
		set_op(ops, 0x0c);
	} else if (!strcmp(w, "read_resp")) {
		set_range(ops, 0x0d, 0x10);
	} else if (!strcmp(w, "atomic")) {
		set_range(ops, 0x13, 0x14);
	} else if (!strcmp(w, "ack")) {
		set_range(ops, 0x11, 0x12);
	} else if (!strcmp(w, "rc")) {
		set_range(ops, 0x00, 0x1f);
	} else if (!strcmp(w, "uc")) {
		set_range(ops, 0x20, 0x3f);
	} else if (!strcmp(w, "ud")) {
		set_range(ops, 0x60, 0x7f);
	} else {
		errno = 0;
		v = strtoul(w, &end, 0);
		if (errno || end == w || *end || v > 255)
			return false;
		set_op(ops, v);
	}
	return true;
}

static bool parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	*out = strtoull(s, &end, 0);
	return !errno && !*end;
}

static int parse_key(struct srd_fault_rule *r, const char *key, const char *val,
		     char *err, size_t errlen)
{
	uint64_t v;

	if (!strcmp(key, "dir")) {
		if (!strcmp(val, "tx"))
			r->dir = SRD_FAULT_TX;
		else if (!strcmp(val, "rx"))
			r->dir = SRD_FAULT_RX;
		else
			return fail(err, errlen, "dir is tx or rx: %s", val);
	} else if (!strcmp(key, "dev")) {
		if (!*val || strlen(val) >= sizeof(r->dev))
			return fail(err, errlen, "bad dev: %s", val);
		memcpy(r->dev, val, strlen(val) + 1);
		r->any_dev = false;
	} else if (!strcmp(key, "qpn")) {
		if (!parse_u64(val, &v) || v > 0xffffff)
			return fail(err, errlen, "bad qpn: %s", val);
		r->qpn = v;
		r->any_qpn = false;
	} else if (!strcmp(key, "op")) {
		char buf[128], *save = NULL, *w;

		if (strlen(val) >= sizeof(buf))
			return fail(err, errlen, "op list too long");
		memcpy(buf, val, strlen(val) + 1);
		memset(r->ops, 0, sizeof(r->ops));
		for (w = strtok_r(buf, ",", &save); w;
		     w = strtok_r(NULL, ",", &save))
			if (!add_ops(r->ops, w))
				return fail(err, errlen, "unknown op: %s", w);
		r->any_op = false;
	} else if (!strcmp(key, "prob")) {
		char *end;
		double p;

		errno = 0;
		p = strtod(val, &end);
		if (errno || end == val || *end || !(p >= 0 && p <= 1))
			return fail(err, errlen, "prob is 0..1: %s", val);
		r->prob = p >= 1 ? UINT32_MAX : (uint32_t)(p * 4294967295.0);
	} else if (!strcmp(key, "every")) {
		if (!parse_u64(val, &r->every) || !r->every)
			return fail(err, errlen, "bad every: %s", val);
	} else if (!strcmp(key, "skip")) {
		if (!parse_u64(val, &r->skip))
			return fail(err, errlen, "bad skip: %s", val);
	} else if (!strcmp(key, "count")) {
		if (!parse_u64(val, &r->count) || !r->count)
			return fail(err, errlen, "bad count: %s", val);
	} else if (!strcmp(key, "us")) {
		if (!parse_u64(val, &v) || v > 60000000)
			return fail(err, errlen, "us is 0..60000000: %s", val);
		r->hold_ns = v * 1000;
	} else if (!strcmp(key, "n")) {
		if (!parse_u64(val, &v) || !v || v > 1000000)
			return fail(err, errlen, "bad n: %s", val);
		r->overtake = v;
	} else {
		return fail(err, errlen, "unknown key: %s", key);
	}
	return 0;
}

int srd_fault_parse(const char *text, struct srd_fault_rule *r, char *err,
		    size_t errlen)
{
	char buf[512], *save = NULL, *w;
	unsigned int a;
	size_t len;
	int ret;

	while (*text == ' ' || *text == '\t')
		text++;
	len = strcspn(text, "#");
	while (len && strchr(" \t\r\n", text[len - 1]))
		len--;
	if (!len)
		return -ENODATA;
	if (len >= sizeof(buf))
		return fail(err, errlen, "rule too long");
	memcpy(buf, text, len);
	buf[len] = 0;

	memset(r, 0, sizeof(*r));
	snprintf(r->text, sizeof(r->text), "%.*s", (int)sizeof(r->text) - 1,
		 buf);
	r->dir = SRD_FAULT_TX;
	r->any_dev = r->any_qpn = r->any_op = true;
	r->prob = UINT32_MAX;
	r->every = 1;
	r->hold_ns = 1000000;
	r->overtake = 1;

	w = strtok_r(buf, " \t\r\n", &save);
	for (a = 0; a < SRD_FAULT_NACTIONS; a++)
		if (!strcmp(w, action_names[a]))
			break;
	if (a == SRD_FAULT_NACTIONS)
		return fail(err, errlen, "unknown action: %s", w);
	r->action = a;
	while ((w = strtok_r(NULL, " \t\r\n", &save))) {
		char *eq = strchr(w, '=');

		if (!eq)
			return fail(err, errlen, "expected key=value: %s", w);
		*eq = 0;
		ret = parse_key(r, w, eq + 1, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}
