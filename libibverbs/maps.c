/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "libibverbs/maps.h"

/* The whole file, NUL terminated; plain read(2) so it works in a child
 * right after fork(). */
static char *slurp(const char *path)
{
	size_t cap = 16384, len = 0;
	char *buf = malloc(cap);
	int fd;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				goto fail;
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
fail:
	close(fd);
	free(buf);
	return NULL;
}

static enum srd_vma_kind classify(const char *path, size_t plen, uint64_t ino)
{
	static const char ours[] = "/memfd:" SRD_MEMFD_NAME;

	if (plen == 0)
		return SRD_VMA_ANON;
	if (path[0] == '[') {
		if (!strncmp(path, "[heap]", 6) ||
		    !strncmp(path, "[stack", 6) || !strncmp(path, "[anon:", 6))
			return SRD_VMA_ANON;
		return SRD_VMA_SPECIAL;
	}
	if (ino && plen >= sizeof(ours) - 1 &&
	    !memcmp(path, ours, sizeof(ours) - 1))
		return SRD_VMA_OURS;
	return SRD_VMA_FILE;
}

/* Parse "start-end perms offset major:minor inode   path". */
static int parse_line(char *line, struct srd_vma *v)
{
	char *p = line, *end;
	size_t plen;

	v->start = strtoull(p, &end, 16);
	if (*end != '-')
		return -EINVAL;
	v->end = strtoull(end + 1, &end, 16);
	if (*end != ' ' || strlen(end) < 6)
		return -EINVAL;
	p = end + 1;
	v->prot = (p[0] == 'r' ? PROT_READ : 0) |
		  (p[1] == 'w' ? PROT_WRITE : 0) |
		  (p[2] == 'x' ? PROT_EXEC : 0);
	v->shared = p[3] == 's';
	p += 4;
	v->offset = strtoull(p, &end, 16);
	p = end;
	while (*p == ' ')
		p++;
	while (*p && *p != ' ') /* device */
		p++;
	v->ino = strtoull(p, &end, 10);
	p = end;
	while (*p == ' ')
		p++;
	plen = strlen(p);
	v->kind = classify(p, plen, v->ino);
	return 0;
}

int srd_maps_read(struct srd_vmas *m, uintptr_t lo, uintptr_t hi)
{
	char *buf = slurp("/proc/self/maps");
	size_t cap = 0;
	char *line, *save = NULL;

	m->v = NULL;
	m->n = 0;
	if (!buf)
		return errno ? -errno : -ENOMEM;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct srd_vma v;

		if (parse_line(line, &v) || v.end <= lo || v.start >= hi)
			continue;
		if (m->n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct srd_vma *nv = realloc(m->v, ncap * sizeof(*nv));

			if (!nv) {
				free(buf);
				srd_maps_free(m);
				return -ENOMEM;
			}
			m->v = nv;
			cap = ncap;
		}
		m->v[m->n++] = v;
	}
	free(buf);
	return 0;
}

void srd_maps_free(struct srd_vmas *m)
{
	free(m->v);
	m->v = NULL;
	m->n = 0;
}

const struct srd_vma *srd_maps_find(const struct srd_vmas *m, uintptr_t addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (addr < m->v[mid].start)
			hi = mid;
		else if (addr >= m->v[mid].end)
			lo = mid + 1;
		else
			return &m->v[mid];
	}
	return NULL;
}
