/* SPDX-License-Identifier: MIT */
/*
 * The configuration file, read when the daemon starts (as rdma-core's
 * /etc/rdma): one command per line, in the grammar of the softrdma CLI,
 * '#' starts a comment.  Commands:
 *
 *	link add NAME [type softrdma] netdev IFACE
 *	limit client|user RESOURCE VALUE
 *	limit reserve fds VALUE
 *
 * RESOURCE is pd, mr, cq, qp, srq, ah, mw, dm, channel, xrcd (objects),
 * maps (the daemon's memory mappings), mr_bytes (registered bytes),
 * dm_bytes (device memory), clients (connections: a user's only) or fds
 * (descriptors the daemon holds); VALUE a number with an optional K, M, G
 * or T (powers of 1024), or "unlimited".  The reserve is the descriptors
 * ordinary users' clients leave to root, the daemon's user and users'
 * first contexts (daemon/core/limits.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/device/link.h"

#define CONFIG_MAX_WORDS 16
#define CONFIG_MAX_LINKS 256

int config_parse_link_add(char **words, int n, struct srd_config_link *out,
			  const char **why)
{
	const char *netdev = NULL;
	int i;

	memset(out, 0, sizeof(*out));
	if (n < 2 || strcmp(words[0], "link") || strcmp(words[1], "add")) {
		*why = "expected \"link add NAME netdev IFACE\"";
		return -EINVAL;
	}
	if (n < 3) {
		*why = "link add: missing device name";
		return -EINVAL;
	}
	if (!device_name_ok(words[2])) {
		*why = "link add: bad device name (1-63 of A-Z a-z 0-9 _ . -)";
		return -EINVAL;
	}
	for (i = 3; i < n; i += 2) {
		if (i + 1 >= n) {
			*why = "link add: a keyword without its value";
			return -EINVAL;
		}
		if (!strcmp(words[i], "netdev")) {
			netdev = words[i + 1];
		} else if (!strcmp(words[i], "type")) {
			/* rdma(8) names the driver; accept what means us. */
			if (strcmp(words[i + 1], "softrdma") &&
			    strcmp(words[i + 1], "rxe")) {
				*why = "link add: type must be softrdma";
				return -EINVAL;
			}
		} else {
			*why = "link add: unknown keyword";
			return -EINVAL;
		}
	}
	if (!netdev) {
		*why = "link add: missing \"netdev IFACE\"";
		return -EINVAL;
	}
	if (!*netdev || strlen(netdev) >= sizeof(out->netdev) ||
	    strlen(netdev) >= 16 /* IFNAMSIZ */) {
		*why = "link add: bad interface name";
		return -EINVAL;
	}
	snprintf(out->name, sizeof(out->name), "%s", words[2]);
	snprintf(out->netdev, sizeof(out->netdev), "%s", netdev);
	return 0;
}

/* Split a line in place into words; a '#' ends it.  Returns the count,
 * or -E2BIG. */
static int split(char *line, char **words)
{
	int n = 0;
	char *p = line;

	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		if (!*p || *p == '#')
			return n;
		if (n == CONFIG_MAX_WORDS)
			return -E2BIG;
		words[n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\r' &&
		       *p != '\n' && *p != '#')
			p++;
		if (*p == '#') {
			*p = '\0';
			return n;
		}
		if (*p)
			*p++ = '\0';
	}
}

static int config_limit(struct srd_config *cfg, char **words, int n,
			const char **why)
{
	struct srd_config_limit cl = { 0 }, *l;
	unsigned long long v;
	char *end;
	int res;

	if (n != 4 || (strcmp(words[1], "client") && strcmp(words[1], "user") &&
		       strcmp(words[1], "reserve"))) {
		*why = "expected \"limit client|user|reserve RESOURCE VALUE\"";
		return -EINVAL;
	}
	res = limits_res_by_name(words[2]);
	if (res < 0) {
		*why = "limit: unknown resource";
		return -EINVAL;
	}
	if (!strcmp(words[1], "reserve") && res != SRD_RES_FDS) {
		*why = "limit reserve: only fds has a reserve";
		return -EINVAL;
	}
	if (!strcmp(words[1], "client") && res == SRD_RES_CLIENTS) {
		*why = "limit client clients: a client is one connection";
		return -EINVAL;
	}
	if (!strcmp(words[3], "unlimited")) {
		v = UINT64_MAX;
	} else {
		errno = 0;
		v = strtoull(words[3], &end, 10);
		if (errno || end == words[3] || words[3][0] == '-') {
			*why = "limit: bad value";
			return -EINVAL;
		}
		for (const char *s = "KMGT"; *end && *s; s++) {
			v = v > UINT64_MAX / 1024 ? UINT64_MAX : v * 1024;
			if (*end == *s) {
				end++;
				break;
			}
		}
		if (*end) {
			*why = "limit: bad value";
			return -EINVAL;
		}
	}
	cl.user = !strcmp(words[1], "user");
	cl.reserve = !strcmp(words[1], "reserve");
	cl.res = res;
	cl.value = v;
	l = realloc(cfg->limits, (cfg->nlimits + 1) * sizeof(*l));
	if (!l)
		return -ENOMEM;
	l[cfg->nlimits++] = cl;
	cfg->limits = l;
	return 0;
}

static int config_line(struct srd_config *cfg, char *line, unsigned int lineno,
		       const char **why)
{
	char *words[CONFIG_MAX_WORDS];
	struct srd_config_link cl, *links;
	int n = split(line, words);

	if (n == 0)
		return 0;
	if (n < 0) {
		*why = "too many words";
		return -EINVAL;
	}
	if (!strcmp(words[0], "limit"))
		return config_limit(cfg, words, n, why);
	if (config_parse_link_add(words, n, &cl, why))
		return -EINVAL;
	for (unsigned int i = 0; i < cfg->nlinks; i++) {
		if (!strcmp(cfg->links[i].name, cl.name)) {
			*why = "link add: device name used twice";
			return -EINVAL;
		}
	}
	if (cfg->nlinks >= CONFIG_MAX_LINKS) {
		*why = "too many links";
		return -EINVAL;
	}
	links = realloc(cfg->links, (cfg->nlinks + 1) * sizeof(*links));
	if (!links)
		return -ENOMEM;
	cl.line = lineno;
	links[cfg->nlinks++] = cl;
	cfg->links = links;
	return 0;
}

int config_load(const char *path, struct srd_config *cfg, FILE *err)
{
	unsigned int lineno = 0;
	char *line = NULL;
	size_t cap = 0;
	int ret = 0;
	FILE *f;

	memset(cfg, 0, sizeof(*cfg));
	cfg->path = strdup(path);
	if (!cfg->path)
		return -ENOMEM;
	f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		fprintf(err, "%s: %s\n", path, strerror(errno));
		return ret;
	}
	while (getline(&line, &cap, f) >= 0) {
		const char *why = "out of memory";
		int r;

		lineno++;
		r = config_line(cfg, line, lineno, &why);
		if (r) {
			fprintf(err, "%s:%u: %s\n", path, lineno, why);
			if (!ret)
				ret = r;
		}
	}
	if (ferror(f) && !ret) {
		ret = -EIO;
		fprintf(err, "%s: read error\n", path);
	}
	free(line);
	fclose(f);
	return ret;
}

void config_free(struct srd_config *cfg)
{
	free(cfg->links);
	free(cfg->limits);
	free(cfg->path);
	memset(cfg, 0, sizeof(*cfg));
}
