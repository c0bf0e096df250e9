/* SPDX-License-Identifier: MIT */
/*
 * On-demand paging.  An ODP MR pins and checks nothing at registration:
 * like a NIC walking the process's page tables, every access asks what is
 * mapped at that moment, in the client's /proc/PID/maps (handed over at
 * OPEN_DEVICE): PROCMAP_QUERY (Linux 6.11) gives the one mapping at an
 * address, older kernels get the text read.  /proc/PID/mem would reach
 * PROT_NONE pages and write read-only private ones (FOLL_FORCE), so the
 * check is what makes protections count; process_vm_* (pidfd) obeys them
 * itself, and the check tells beforehand which side's memory is missing.  Then ADVISE_MR, what ibv_advise_mr asks of the device.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "daemon/core/core.h"

/* struct procmap_query of <linux/fs.h> (6.11), which older headers lack. */
struct odp_procmap_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start;
	uint64_t vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};
#define ODP_PROCMAP_QUERY _IOWR('f', 17, struct odp_procmap_query)
#define ODP_VMA_READABLE 0x01
#define ODP_VMA_WRITABLE 0x02

#define MAPS_TEXT_MAX (64u << 20)

struct odp_vma {
	uint64_t start, end;
	bool read, write;
};

/* 1: the mapping at addr, 0: none there, negative: cannot ask this way. */
static int vma_query(int fd, uint64_t addr, struct odp_vma *v)
{
	struct odp_procmap_query q = {
		.size = sizeof(q),
		.query_addr = addr,
	};

	if (ioctl(fd, ODP_PROCMAP_QUERY, &q)) {
		if (errno == ENOENT)
			return 0;
		return -errno;
	}
	v->start = q.vma_start;
	v->end = q.vma_end;
	v->read = q.vma_flags & ODP_VMA_READABLE;
	v->write = q.vma_flags & ODP_VMA_WRITABLE;
	return 1;
}

/* The whole maps text (older kernels): malloc'ed, NUL terminated. */
static char *maps_text(int fd)
{
	size_t cap = 64 * 1024, len = 0;
	char *buf = malloc(cap), *n;
	ssize_t k;

	if (!buf)
		return NULL;
	for (;;) {
		if (cap - len < 4096) {
			if (cap >= MAPS_TEXT_MAX)
				break;
			n = realloc(buf, cap * 2);
			if (!n)
				break;
			buf = n;
			cap *= 2;
		}
		k = pread(fd, buf + len, cap - len - 1, (off_t)len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			free(buf);
			return NULL;
		}
		if (k == 0)
			break;
		len += (size_t)k;
	}
	buf[len] = '\0';
	return buf;
}

/* The mapping at addr from the text: 1 found, 0 none. */
static int vma_from_text(const char *t, uint64_t addr, struct odp_vma *v)
{
	while (t && *t) {
		char *e;
		unsigned long long s = strtoull(t, &e, 16), x;

		if (*e == '-') {
			x = strtoull(e + 1, &e, 16);
			if (*e == ' ' && addr >= s && addr < x) {
				v->start = s;
				v->end = x;
				v->read = e[1] == 'r';
				v->write = e[1] && e[2] == 'w';
				return 1;
			}
		}
		t = strchr(t, '\n');
		if (t)
			t++;
	}
	return 0;
}

/*
 * Is [addr, addr + len) of the client's address space mapped, readable
 * (and writable when write)?  0 or -EFAULT.  Asked of the listing it
 * handed over: the mem file alone reaches PROT_NONE and read-only pages
 * alike (FOLL_FORCE).
 */
int mem_maps_check(const struct srd_client_mem *cm, uint64_t addr, uint64_t len,
		   bool write)
{
	uint64_t a = addr, end = addr + len;
	char *text = NULL;
	int ret = 0, k;

	if (!len)
		return 0;
	if (cm->maps_fd < 0)
		return -EFAULT;
	while (a < end) {
		struct odp_vma v = { 0 };

		k = text ? vma_from_text(text, a, &v)
			 : vma_query(cm->maps_fd, a, &v);
		if (k < 0) {
			text = maps_text(cm->maps_fd);
			if (!text) {
				ret = -EFAULT;
				break;
			}
			continue;
		}
		if (!k || v.start > a || !v.read || (write && !v.write)) {
			ret = -EFAULT;
			break;
		}
		if (v.end >= end)
			break;
		a = v.end;
	}
	free(text);
	return ret;
}

/* The same for [va, va + len) of an ODP MR, whose own bounds and rights
 * mr_check has checked. */
int mr_odp_check(const struct srd_mr *mr, uint64_t va, uint64_t len, bool write)
{
	return mem_maps_check(mr->mem, mr->addr + (va - mr->iova), len, write);
}

static bool in_mr(const struct srd_mr *mr, uint64_t va, uint64_t len)
{
	return va >= mr->iova && va - mr->iova <= mr->length &&
	       len <= mr->length - (va - mr->iova);
}

/* An ODP MR of pd that advice may prefetch, or NULL. */
static struct srd_mr *advise_mr_of(struct srd_client *c,
				   const struct srd_pd *pd, uint32_t lkey,
				   uint32_t advice)
{
	struct srd_mr *mr = mr_lookup_key(c->d, lkey);

	if (!mr || mr->owner != c || mr->pd != pd || !mr->odp)
		return NULL;
	if (advice == IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    !(mr->access & IBV_ACCESS_LOCAL_WRITE))
		return NULL;
	return mr;
}

/*
 * ibv_advise_mr, with mlx5's answers: an unknown advice is EOPNOTSUPP, an
 * unknown flag or no SGE EINVAL; an lkey that is not an ODP MR of the PD
 * (or not writable, for PREFETCH_WRITE) is ENOENT with FLUSH and EINVAL
 * without it.  With FLUSH the work is done before the reply and its
 * failure (a range outside the MR, or not mapped as the advice needs) is
 * EFAULT; without FLUSH the device works on its own time and reports
 * nothing.  The reply gives each SGE's address in the client (0 length:
 * nothing to fault in), which the library then populates: faulting pages
 * in is the owner's own page tables' business.
 */
int cmd_advise_mr(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_advise_mr_req *req = rq->data;
	struct srd_pd *pd = pd_get(c, req->pd_handle);
	bool flush = req->flags & IBV_ADVISE_MR_FLAG_FLUSH;
	struct srd_advise_sge *out;

	if (!pd)
		return -EINVAL;
	if (req->advice > IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return -EOPNOTSUPP;
	if (req->flags & ~(uint32_t)IBV_ADVISE_MR_FLAG_FLUSH)
		return -EINVAL;
	if (!req->num_sge || req->num_sge > SRD_ADVISE_MAX_SGE ||
	    rq->len != sizeof(*req) + req->num_sge * sizeof(req->sge[0]))
		return -EINVAL;
	for (uint32_t i = 0; i < req->num_sge; i++)
		if (!advise_mr_of(c, pd, req->sge[i].lkey, req->advice))
			return flush ? -ENOENT : -EINVAL;
	out = rep_payload(rp, req->num_sge * sizeof(*out));
	for (uint32_t i = 0; i < req->num_sge; i++) {
		const struct srd_advise_sge *s = &req->sge[i];
		struct srd_mr *mr = advise_mr_of(c, pd, s->lkey, req->advice);
		bool write = req->advice == IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE;
		int err = in_mr(mr, s->addr, s->length) ? 0 : -EFAULT;

		/* NO_FAULT maps what is present and faults nothing in. */
		if (!err &&
		    req->advice != IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
			err = mr_odp_check(mr, s->addr, s->length, write);
		if (err) {
			if (flush)
				return -EFAULT;
			continue;
		}
		if (req->advice == IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
			continue;
		out[i].addr = mr->addr + (s->addr - mr->iova);
		out[i].length = s->length;
		out[i].lkey = s->lkey;
	}
	return 0;
}
