/* SPDX-License-Identifier: MIT */
/* Fault rules: lists, files, and the verdict on a packet (see fault.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/fault/fault.h"

void srd_faults_init(struct srd_faults *f, uint64_t seed)
{
	memset(f, 0, sizeof(*f));
	/* xorshift needs a non-zero state */
	f->rng = seed ? seed : 0x9e3779b97f4a7c15ull;
}

void srd_faults_fini(struct srd_faults *f)
{
	free(f->rule);
	f->rule = NULL;
	f->n = f->nfixed = 0;
}

uint64_t srd_faults_random(struct srd_faults *f)
{
	/* xorshift64* */
	f->rng ^= f->rng >> 12;
	f->rng ^= f->rng << 25;
	f->rng ^= f->rng >> 27;
	return f->rng * 0x2545f4914f6cdd1dull;
}

/* Parse a list into a new array (rules kept first: the first `keep`
 * rules of f).  0 or -EINVAL. */
static int parse_list(struct srd_faults *f, unsigned int keep, const char *list,
		      struct srd_fault_rule **out, unsigned int *nout,
		      char *err, size_t errlen)
{
	struct srd_fault_rule *rules = NULL, *n;
	unsigned int count = keep, line = 0;
	const char *p = list;

	if (keep) {
		rules = malloc(keep * sizeof(*rules));
		if (!rules)
			return -ENOMEM;
		memcpy(rules, f->rule, keep * sizeof(*rules));
	}
	while (*p) {
		size_t len = strcspn(p, ";\n");
		char text[512];
		struct srd_fault_rule r;
		int ret;

		line++;
		if (len >= sizeof(text)) {
			snprintf(err, errlen, "rule %u too long", line);
			free(rules);
			return -EINVAL;
		}
		memcpy(text, p, len);
		text[len] = 0;
		p += len;
		if (*p)
			p++;
		ret = srd_fault_parse(text, &r, err, errlen);
		if (ret == -ENODATA)
			continue;
		if (ret) {
			size_t l = strlen(err);

			snprintf(err + l, errlen - l, " (rule %u)", line);
			free(rules);
			return ret;
		}
		n = realloc(rules, (count + 1) * sizeof(*rules));
		if (!n) {
			free(rules);
			return -ENOMEM;
		}
		rules = n;
		rules[count++] = r;
	}
	*out = rules;
	*nout = count;
	return 0;
}

/* The first keep rules of f, then those of list: all or, on an error,
 * none of them. */
static int replace_rules(struct srd_faults *f, unsigned int keep,
			 const char *list, char *err, size_t errlen)
{
	struct srd_fault_rule *rules;
	unsigned int n;
	int ret = parse_list(f, keep, list, &rules, &n, err, errlen);

	if (ret)
		return ret;
	free(f->rule);
	f->rule = rules;
	f->n = n;
	return 0;
}

int srd_faults_add(struct srd_faults *f, const char *list, char *err,
		   size_t errlen)
{
	return replace_rules(f, f->n, list, err, errlen);
}

void srd_faults_fix(struct srd_faults *f)
{
	f->nfixed = f->n;
}

int srd_faults_load_file(struct srd_faults *f, const char *path, char *err,
			 size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	FILE *fp = fopen(path, "re");
	int ret;

	if (!fp) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	{
		char chunk[4096];
		size_t got;

		while ((got = fread(chunk, 1, sizeof(chunk), fp)) > 0) {
			char *t = realloc(text, len + got + 1);

			if (!t) {
				free(text);
				fclose(fp);
				return -ENOMEM;
			}
			text = t;
			memcpy(text + len, chunk, got);
			len += got;
			text[len] = '\0';
		}
	}
	fclose(fp);
	if (text)
		text[len] = 0;
	ret = replace_rules(f, f->nfixed, text ? text : "", err, errlen);
	free(text);
	return ret;
}

static bool rule_at(const struct srd_fault_rule *r, enum srd_fault_dir dir,
		    const char *dev)
{
	return r->dir == dir && (r->any_dev || !strcmp(r->dev, dev));
}

bool srd_faults_may_match(const struct srd_faults *f, enum srd_fault_dir dir,
			  const char *dev)
{
	for (unsigned int i = 0; f && i < f->n; i++)
		if (rule_at(&f->rule[i], dir, dev))
			return true;
	return false;
}

void srd_faults_judge(struct srd_faults *f, enum srd_fault_dir dir,
		      const char *dev, uint32_t qpn, uint8_t opcode,
		      struct srd_fault_verdict *v)
{
	memset(v, 0, sizeof(*v));
	for (unsigned int i = 0; f && i < f->n; i++) {
		struct srd_fault_rule *r = &f->rule[i];

		if (!rule_at(r, dir, dev) || (!r->any_qpn && r->qpn != qpn) ||
		    (!r->any_op &&
		     !(r->ops[opcode >> 6] & (1ull << (opcode & 63)))))
			continue;
		r->matched++;
		if (r->matched <= r->skip ||
		    (r->matched - r->skip) % r->every ||
		    (r->count && r->injected >= r->count))
			continue;
		if (r->prob != UINT32_MAX &&
		    (uint32_t)(srd_faults_random(f) >> 32) >= r->prob)
			continue;
		r->injected++;
		f->injected[r->action]++;
		v->actions |= 1u << r->action;
		if ((r->action == SRD_FAULT_DELAY ||
		     r->action == SRD_FAULT_REORDER) &&
		    r->hold_ns > v->hold_ns)
			v->hold_ns = r->hold_ns;
		if (r->action == SRD_FAULT_REORDER && r->overtake > v->overtake)
			v->overtake = r->overtake;
	}
}

size_t srd_faults_describe(const struct srd_faults *f, char *buf, size_t size)
{
	size_t len = 0;

	if (size)
		buf[0] = 0;
	for (unsigned int i = 0; f && i < f->n && len < size; i++) {
		int k = snprintf(buf + len, size - len,
				 "rule %u: %s: matched %llu injected %llu\n", i,
				 f->rule[i].text,
				 (unsigned long long)f->rule[i].matched,
				 (unsigned long long)f->rule[i].injected);

		if (k < 0)
			break;
		len += (size_t)k;
	}
	return len < size ? len : size ? size - 1 : 0;
}
