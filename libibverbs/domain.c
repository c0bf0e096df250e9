/* SPDX-License-Identifier: MIT */
/*
 * Thread domains and parent domains, and the ring memory a parent
 * domain's allocator provides.
 *
 * As in mlx5, both live in the library: a thread domain is the promise
 * that the objects on it are used by one thread at a time; a parent
 * domain bundles a PD with a thread domain and with alloc/free callbacks
 * that supply the memory of the rings of the CQs and QPs created on it.
 * The daemon owns ring memory (a memfd both map), so the library maps
 * that memfd over the buffer the allocator returns, and gives the buffer
 * back as private memory before handing it to free.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <infiniband/softrdma.h>

#include "libibverbs/ibverbs.h"

struct ibv_td *srd_alloc_td(struct ibv_context *context,
			    struct ibv_td_init_attr *init_attr)
{
	struct srd_td *td;

	if (!init_attr || init_attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	td = calloc(1, sizeof(*td));
	if (!td) {
		errno = ENOMEM;
		return NULL;
	}
	td->td.context = context;
	atomic_init(&td->refcnt, 0);
	return &td->td;
}

int srd_dealloc_td(struct ibv_td *ibtd)
{
	struct srd_td *td = to_td(ibtd);

	if (atomic_load(&td->refcnt))
		return EBUSY;
	free(td);
	return 0;
}

struct ibv_pd *srd_alloc_parent_domain(struct ibv_context *context,
				       struct ibv_parent_domain_init_attr *attr)
{
	const uint32_t known = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			       IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	struct srd_pd *pdom;

	/* A PD of this context is mandatory; a parent domain is no PD. */
	if (!attr || !attr->pd || attr->pd->context != context ||
	    srd_parent_domain(attr->pd) ||
	    (attr->td && attr->td->context != context) ||
	    (attr->comp_mask & ~known)) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	    (!attr->alloc || !attr->free)) {
		errno = EINVAL;
		return NULL;
	}
	pdom = calloc(1, sizeof(*pdom));
	if (!pdom) {
		errno = ENOMEM;
		return NULL;
	}
	pdom->protection = to_pd(attr->pd);
	atomic_fetch_add(&pdom->protection->refcnt, 1);
	if (attr->td) {
		pdom->td = to_td(attr->td);
		atomic_fetch_add(&pdom->td->refcnt, 1);
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		pdom->alloc = attr->alloc;
		pdom->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pdom->pd_context = attr->pd_context;
	pdom->pd.context = context;
	pdom->pd.handle = attr->pd->handle;
	atomic_init(&pdom->refcnt, 0);
	return &pdom->pd;
}

/* ibv_dealloc_pd of a parent domain. */
int srd_dealloc_parent_domain(struct srd_pd *pdom)
{
	if (atomic_load(&pdom->refcnt))
		return EBUSY;
	atomic_fetch_sub(&pdom->protection->refcnt, 1);
	if (pdom->td)
		atomic_fetch_sub(&pdom->td->refcnt, 1);
	free(pdom);
	return 0;
}

/* Memory from the allocator, or NULL for the default (mmap's choice). */
static void *ring_alloc(struct srd_pd *pdom, uint64_t res_type, size_t len,
			int *err)
{
	void *p;

	*err = 0;
	if (!pdom || !pdom->alloc)
		return NULL;
	p = pdom->alloc(&pdom->pd, pdom->pd_context, len, SRD_PAGE_SIZE,
			res_type);
	if (p == IBV_ALLOCATOR_USE_DEFAULT)
		return NULL;
	if (!p) {
		*err = -ENOMEM;
		return NULL;
	}
	/* The memfd goes over it page by page. */
	if ((uintptr_t)p & (SRD_PAGE_SIZE - 1)) {
		pdom->free(&pdom->pd, pdom->pd_context, p, res_type);
		*err = -EINVAL;
		return NULL;
	}
	return p;
}

int srd_ring_map(struct srd_ring_map *m, struct srd_pd *pdom, uint64_t res_type,
		 size_t len, int fd)
{
	void *buf, *map;
	int err;

	/* Mappings are whole pages: the buffer must be too, or the last
	 * page would cover memory the allocator gave someone else. */
	len = (len + SRD_PAGE_SIZE - 1) & ~((size_t)SRD_PAGE_SIZE - 1);
	buf = ring_alloc(pdom, res_type, len, &err);
	if (err)
		return err;
	map = mmap(buf, len, PROT_READ | PROT_WRITE,
		   MAP_SHARED | (buf ? MAP_FIXED : 0), fd, 0);
	if (map == MAP_FAILED) {
		err = -errno;
		if (buf)
			pdom->free(&pdom->pd, pdom->pd_context, buf, res_type);
		return err;
	}
	/* A forked child must not touch its parent's rings. */
	madvise(map, len, MADV_DONTFORK);
	m->addr = map;
	m->len = len;
	m->pdom = buf ? pdom : NULL;
	m->res_type = res_type;
	return 0;
}

void srd_ring_unmap(struct srd_ring_map *m)
{
	if (!m->addr)
		return;
	if (!m->pdom) {
		munmap(m->addr, m->len);
	} else {
		/* Private zeroed pages again, then back to the allocator. */
		mmap(m->addr, m->len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		madvise(m->addr, m->len, MADV_DOFORK);
		m->pdom->free(&m->pdom->pd, m->pdom->pd_context, m->addr,
			      m->res_type);
	}
	m->addr = NULL;
}
