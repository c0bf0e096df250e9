/* SPDX-License-Identifier: MIT */
/*
 * Output, as iproute2 prints it: a record per line of "key value" words,
 * or with -j one JSON array of objects (-p: indented).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tools/softrdma/softrdma.h"

#define MAX_DEPTH 8

static int depth;
static bool first[MAX_DEPTH]; /* no member written yet at this depth */
static int text_list;	      /* text: inside nested lists */
/* Text mode: the record being printed, so that no line ends in blanks. */
static char line[16384];
static size_t line_len;

static void text_put(const char *s, size_t n)
{
	if (n > sizeof(line) - 1 - line_len)
		n = sizeof(line) - 1 - line_len;
	memcpy(line + line_len, s, n);
	line_len += n;
}

static void text_flush(void)
{
	size_t start = 0;

	for (size_t i = 0; i <= line_len; i++) {
		size_t end = i;

		if (i < line_len && line[i] != '\n')
			continue;
		while (end > start && line[end - 1] == ' ')
			end--;
		fwrite(line + start, 1, end - start, stdout);
		putchar('\n');
		start = i + 1;
	}
	line_len = 0;
}

static void indent(void)
{
	if (!opt.pretty)
		return;
	putchar('\n');
	for (int i = 0; i < depth; i++)
		fputs("    ", stdout);
}

/* Before a member of the current JSON container. */
static void sep(void)
{
	if (!first[depth])
		putchar(',');
	first[depth] = false;
	indent();
}

static void json_string(const char *s)
{
	putchar('"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	putchar('"');
}

static void key(const char *jkey)
{
	sep();
	json_string(jkey);
	putchar(':');
	if (opt.pretty)
		putchar(' ');
}

static void open_container(char ch)
{
	putchar(ch);
	if (depth + 1 < MAX_DEPTH)
		depth++;
	first[depth] = true;
}

static void close_container(char ch)
{
	bool empty = first[depth];

	if (depth > 0)
		depth--;
	if (!empty)
		indent();
	putchar(ch);
}

/* tfmt with its one "%s" replaced by v (no printf: tfmt is data). */
static void text_field(const char *tfmt, const char *v)
{
	const char *at = strstr(tfmt, "%s");

	if (!at) {
		text_put(tfmt, strlen(tfmt));
		return;
	}
	text_put(tfmt, (size_t)(at - tfmt));
	text_put(v, strlen(v));
	text_put(at + 2, strlen(at + 2));
}

void out_begin(void)
{
	depth = 0;
	first[0] = true;
	if (opt.json)
		open_container('[');
}

void out_end(void)
{
	if (!opt.json)
		return;
	close_container(']');
	putchar('\n');
}

void out_obj_open(void)
{
	if (!opt.json)
		return;
	sep();
	open_container('{');
}

void out_obj_close(void)
{
	if (opt.json)
		close_container('}');
	else if (!text_list)
		text_flush();
}

void out_list_open(const char *jkey)
{
	if (opt.json) {
		key(jkey);
		open_container('[');
		return;
	}
	text_list++;
}

void out_list_close(void)
{
	if (opt.json)
		close_container(']');
	else
		text_list--;
}

void out_str(const char *jkey, const char *tfmt, const char *v)
{
	if (opt.json) {
		if (jkey) {
			key(jkey);
			json_string(v);
		}
	} else if (tfmt) {
		text_field(tfmt, v);
	}
}

void out_uint(const char *jkey, const char *tfmt, uint64_t v)
{
	char buf[32];

	if (opt.json) {
		if (jkey) {
			key(jkey);
			printf("%" PRIu64, v);
		}
	} else if (tfmt) {
		snprintf(buf, sizeof(buf), "%" PRIu64, v);
		text_field(tfmt, buf);
	}
}

void out_hex(const char *jkey, const char *tfmt, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	out_str(jkey, tfmt, buf);
}

void out_bool(const char *jkey, const char *tfmt, bool v)
{
	if (opt.json) {
		if (jkey) {
			key(jkey);
			fputs(v ? "true" : "false", stdout);
		}
	} else if (tfmt) {
		text_field(tfmt, v ? "yes" : "no");
	}
}

void out_text(const char *s)
{
	if (!opt.json)
		text_put(s, strlen(s));
}

void out_owner(uint32_t pid)
{
	char path[64], comm[64] = "";
	FILE *f;

	if (!pid) {
		/* The daemon's own objects, as the kernel's are [ib_core]. */
		out_str("comm", "comm %s ", "[softrdmad]");
		return;
	}
	out_uint("pid", "pid %s ", pid);
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(comm, sizeof(comm), f)) {
		comm[strcspn(comm, "\n")] = '\0';
		out_str("comm", "comm %s ", comm);
	}
	fclose(f);
}
