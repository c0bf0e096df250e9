/* SPDX-License-Identifier: MIT */
/*
 * Memory regions.  The library hands over the pages of the MR's span as
 * memfd windows it has mapped shared at the same addresses; the daemon
 * maps them too, at an address of its own.  Memory the library did not
 * move is reached through the client's address space instead (mem.c).
 *
 * lkey == rkey == (table index << 8) | key byte.  Index and key byte are
 * drawn at random (table_randomize), and the key byte changes whenever the
 * index is reused or re-registered, so a stale key misses a new MR.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/core/core.h"

#define PAGE_MASK_LO ((uint64_t)SRD_PAGE_SIZE - 1)

/* Access bits a registration may ask for; optional bits are dropped. */
#define MR_ACCESS_KNOWN                                                    \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |                \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |               \
	 IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED | IBV_ACCESS_HUGETLB | \
	 IBV_ACCESS_FLUSH_GLOBAL | IBV_ACCESS_ON_DEMAND |                  \
	 IBV_ACCESS_OPTIONAL_RANGE)

/* The kernel's ib_check_mr_access() rules. */
static int mr_access_check(uint32_t access)
{
	/* As rxe over memory that is not persistent (no pmem here). */
	if (access & IBV_ACCESS_FLUSH_PERSISTENT)
		return -EINVAL;
	if (access & ~MR_ACCESS_KNOWN)
		return -EINVAL;
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

static int mr_access_keep(uint32_t access)
{
	return access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
			 IBV_ACCESS_MW_BIND | IBV_ACCESS_FLUSH_GLOBAL |
			 IBV_ACCESS_ON_DEMAND);
}

/* How the daemon reaches the memory of one registration. */
struct mr_map {
	void *map;
	size_t map_len;
	uint8_t *base;
	bool pvm;
	bool odp;
	struct srd_client_mem *mem; /* pvm: the registering process's */
};

/*
 * An ODP registration: no pieces, no fds, nothing looked at but the
 * numbers (the pages are checked when touched).  The implicit MR is addr 0
 * and length UINT64_MAX, with iova 0 (EINVAL otherwise, as mlx5).
 */
static int mr_map_odp(struct srd_client_mem *mem,
		      const struct srd_reg_mr_req *r, uint32_t len, int nfds,
		      struct mr_map *out)
{
	memset(out, 0, sizeof(*out));
	if (r->num_pieces || nfds || len != sizeof(*r) || r->span_start ||
	    r->span_len)
		return -EINVAL;
	/* Nothing to reach the pages in place with: no ODP on this
	 * context (its query reports none). */
	if (mem->kind == SRD_MEM_NONE)
		return -EOPNOTSUPP;
	if (r->addr == 0 && r->length == UINT64_MAX) {
		if (r->iova)
			return -EINVAL;
	} else if (r->length == 0 || r->addr + r->length < r->addr ||
		   r->iova + r->length < r->iova ||
		   (r->addr & PAGE_MASK_LO) != (r->iova & PAGE_MASK_LO)) {
		return -EINVAL;
	}
	out->pvm = true;
	out->odp = true;
	out->mem = mem;
	return 0;
}

/*
 * The memory a request may describe in place: its sender's.  The
 * connection's mem file is that only when the sender is the process that
 * handed it over; a child that inherited the connection, or a process it
 * was passed to, lives in another address space, and gets none (as if
 * its context had no in-place access).  After an exec under the same pid
 * the file reaches nothing, so a match of pids is enough.
 */
static struct srd_client_mem *req_mem(struct srd_client *c,
				      const struct srd_req *rq)
{
	static struct srd_client_mem none = { .kind = SRD_MEM_NONE,
					      .fd = -1,
					      .maps_fd = -1 };
	struct srd_client_mem *m = req_conn(c, rq)->mem;

	/* The CM's own client has none (its MRs are all memfd). */
	if (!m || (m->kind != SRD_MEM_NONE &&
		   (!rq->sender.known || rq->sender.pid != m->pid)))
		return &none;
	return m;
}

static void mr_map_release(struct mr_map *m)
{
	if (m->map)
		munmap(m->map, m->map_len);
	memset(m, 0, sizeof(*m));
}

/* A memfd window the daemon can map without ever taking SIGBUS. */
static int piece_fd_check(int fd, uint64_t off, uint64_t len)
{
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);

	if (seals < 0 || !(seals & F_SEAL_SHRINK))
		return -EINVAL;
	/* hugetlb files fault with SIGBUS when the pool runs dry: only
	 * ordinary shmem pages are taken. */
	if (fstat(fd, &st) || st.st_size < 0 || st.st_blksize != SRD_PAGE_SIZE)
		return -EINVAL;
	if (off > (uint64_t)st.st_size || len > (uint64_t)st.st_size - off)
		return -EINVAL;
	return 0;
}

/*
 * Validate a registration request (r, with len bytes of payload from r on)
 * and its fds, and map its memory.
 */
static int mr_map_build(struct srd_client_mem *mem,
			const struct srd_reg_mr_req *r, uint32_t len,
			const int *fds, int nfds, bool odp, struct mr_map *out)
{
	uint64_t sum = 0, end;
	int nfd_pieces = 0, err;
	bool pvm = false;
	uint8_t *span;

	if (odp)
		return mr_map_odp(mem, r, len, nfds, out);
	memset(out, 0, sizeof(*out));
	if (r->num_pieces == 0 || r->num_pieces > SRD_MR_MAX_PIECES ||
	    len != sizeof(*r) + r->num_pieces * sizeof(r->piece[0]))
		return -EINVAL;
	if (r->length == 0 || r->addr + r->length < r->addr ||
	    r->iova + r->length < r->iova)
		return -EINVAL;
	/* As the kernel: the iova keeps the address's offset in its page. */
	if ((r->addr & PAGE_MASK_LO) != (r->iova & PAGE_MASK_LO))
		return -EINVAL;
	if ((r->span_start & PAGE_MASK_LO) || (r->span_len & PAGE_MASK_LO) ||
	    !r->span_len || r->span_start + r->span_len < r->span_start)
		return -EINVAL;
	end = r->span_start + r->span_len;
	if (r->addr < r->span_start || r->addr + r->length > end)
		return -EINVAL;
	for (uint32_t i = 0; i < r->num_pieces; i++) {
		const struct srd_mr_piece *p = &r->piece[i];

		if (!p->len || (p->len & PAGE_MASK_LO) ||
		    p->len > r->span_len - sum)
			return -EINVAL;
		sum += p->len;
		if (p->kind == SRD_PIECE_FD) {
			if (p->fd_offset & PAGE_MASK_LO)
				return -EINVAL;
			nfd_pieces++;
		} else if (p->kind == SRD_PIECE_PVM) {
			pvm = true;
		} else {
			return -EINVAL;
		}
	}
	if (sum != r->span_len || nfd_pieces != nfds)
		return -EINVAL;
	for (int i = 0, k = 0; i < (int)r->num_pieces; i++) {
		if (r->piece[i].kind != SRD_PIECE_FD)
			continue;
		err = piece_fd_check(fds[k++], r->piece[i].fd_offset,
				     r->piece[i].len);
		if (err)
			return err;
	}
	if (pvm) {
		/* Reach all of it through the client's address space: the
		 * memfd pieces are mapped there too.  Only through what the
		 * client handed over at OPEN_DEVICE, never a bare pid. */
		if (mem->kind == SRD_MEM_NONE)
			return -EINVAL;
		out->pvm = true;
		out->mem = mem;
		return 0;
	}
	span = mmap(NULL, r->span_len, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (span == MAP_FAILED)
		return -ENOMEM;
	out->map = span;
	out->map_len = r->span_len;
	sum = 0;
	for (int i = 0, k = 0; i < (int)r->num_pieces; i++) {
		const struct srd_mr_piece *p = &r->piece[i];

		if (mmap(span + sum, p->len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fds[k++],
			 p->fd_offset) == MAP_FAILED) {
			err = -errno;
			mr_map_release(out);
			return err == -ENOMEM ? err : -EINVAL;
		}
		sum += p->len;
	}
	out->base = span + (r->addr - r->span_start);
	return 0;
}

static void mr_set_map(struct srd_mr *mr, const struct srd_reg_mr_req *r,
		       const struct mr_map *m)
{
	mr->addr = r->addr;
	mr->iova = r->iova;
	mr->length = r->length;
	mr->map = m->map;
	mr->map_len = m->map_len;
	mr->base = m->base;
	mr->pvm = m->pvm;
	mr->odp = m->odp;
	client_mem_put(mr->mem);
	mr->mem = m->pvm ? client_mem_get(m->mem) : NULL;
}

static uint32_t mr_key(struct srd_daemon *d, uint32_t idx)
{
	return idx << 8 | table_gen(&d->mrs, idx);
}

struct srd_mr *mr_get(struct srd_client *c, uint32_t handle)
{
	struct srd_mr *mr = table_get(&c->d->mrs, handle);

	return mr && mr->owner == c ? mr : NULL;
}

struct srd_mr *mr_lookup_key(struct srd_daemon *d, uint32_t key)
{
	struct srd_mr *mr = table_get(&d->mrs, key >> 8);

	return mr && mr->lkey == key ? mr : NULL;
}

/* A new MR in the table with its keys, owner, PD and rights; NULL with
 * the negative errno in *idx. */
static struct srd_mr *mr_new(struct srd_client *c, struct srd_pd *pd,
			     uint32_t access, int64_t *idx)
{
	struct srd_mr *mr = calloc(1, sizeof(*mr));

	if (!mr) {
		*idx = -ENOMEM;
		return NULL;
	}
	*idx = res_alloc(c, SRD_RES_MR, mr);
	if (*idx < 0) {
		free(mr);
		return NULL;
	}
	mr->handle = (uint32_t)*idx;
	mr->lkey = mr->rkey = mr_key(c->d, (uint32_t)*idx);
	mr->owner = c;
	mr->pd = pd;
	mr->dev = c->dev;
	mr->access = mr_access_keep(access);
	return mr;
}

/* Mappings an MR of nfds memfd pieces may cost the daemon: its span, each
 * piece, and the gaps between them. */
static uint64_t mr_maps(int nfds)
{
	return 2 * (uint64_t)nfds + 1;
}

/* What a registration is charged in bytes: an ODP MR pins nothing and
 * costs the daemon no mapping, as ODP memory counts against no
 * RLIMIT_MEMLOCK. */
static uint64_t mr_cost_bytes(uint32_t access, uint64_t length)
{
	return access & IBV_ACCESS_ON_DEMAND ? 0 : length;
}

/* Registered bytes and mappings against the client's limits; ENOMEM as
 * RLIMIT_MEMLOCK gives it for ibv_reg_mr. */
static int mr_charge(struct srd_client *c, uint64_t bytes, int nfds)
{
	int err = limits_charge(c, SRD_RES_BYTES, bytes);

	if (err)
		return err;
	err = limits_charge(c, SRD_RES_MAPS, mr_maps(nfds));
	if (err)
		limits_uncharge(c, SRD_RES_BYTES, bytes);
	return err;
}

static void mr_uncharge(struct srd_client *c, uint64_t bytes, int nfds)
{
	limits_uncharge(c, SRD_RES_BYTES, bytes);
	limits_uncharge(c, SRD_RES_MAPS, mr_maps(nfds));
}

int cmd_reg_mr(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_reg_mr_req *req = rq->data;
	struct srd_reg_mr_rep *rep;
	struct srd_pd *pd = pd_get(c, req->pd_handle);
	struct srd_mr *mr;
	struct mr_map m;
	uint64_t bytes;
	int64_t idx;
	int err;

	if (!pd)
		return -EINVAL;
	err = mr_access_check(req->access);
	if (err)
		return err;
	bytes = mr_cost_bytes(req->access, req->length);
	err = mr_charge(c, bytes, rq->nfds);
	if (err)
		return err;
	err = mr_map_build(req_mem(c, rq), req, rq->len, rq->fds, rq->nfds,
			   req->access & IBV_ACCESS_ON_DEMAND, &m);
	if (err) {
		mr_uncharge(c, bytes, rq->nfds);
		return err;
	}
	mr = mr_new(c, pd, req->access, &idx);
	if (!mr) {
		mr_map_release(&m);
		mr_uncharge(c, bytes, rq->nfds);
		return (int)idx;
	}
	mr_set_map(mr, req, &m);
	mr->charged_bytes = bytes;
	mr->charged_maps = mr_maps(rq->nfds);
	pd->refcnt++;
	rep = REP(rp, struct srd_reg_mr_rep);
	rep->handle = mr->handle;
	rep->lkey = mr->lkey;
	rep->rkey = mr->rkey;
	return 0;
}

int cmd_rereg_mr(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_rereg_mr_req *req = rq->data;
	const uint32_t known = IBV_REREG_MR_CHANGE_TRANSLATION |
			       IBV_REREG_MR_CHANGE_PD |
			       IBV_REREG_MR_CHANGE_ACCESS;
	struct srd_mr *mr = mr_get(c, req->handle);
	struct srd_pd *pd = NULL;
	struct srd_reg_mr_rep *rep;
	struct mr_map m;
	uint64_t bytes;
	int err, access;

	/* As uverbs: an MR over device memory cannot be re-registered. */
	if (!mr || !req->flags || (req->flags & ~known) || mr->dm)
		return -EINVAL;
	if (req->flags & IBV_REREG_MR_CHANGE_PD) {
		pd = pd_get(c, req->reg.pd_handle);
		if (!pd)
			return -EINVAL;
	}
	access = mr->access;
	if (req->flags & IBV_REREG_MR_CHANGE_ACCESS) {
		err = mr_access_check(req->reg.access);
		if (err)
			return err;
		access = mr_access_keep(req->reg.access);
	}
	if (req->flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		bytes = mr_cost_bytes(access, req->reg.length);
		err = mr_charge(c, bytes, rq->nfds);
		if (err)
			return err;
		err = mr_map_build(req_mem(c, rq), &req->reg,
				   rq->len - offsetof(typeof(*req), reg),
				   rq->fds, rq->nfds,
				   access & IBV_ACCESS_ON_DEMAND, &m);
		if (err) {
			mr_uncharge(c, bytes, rq->nfds);
			return err;
		}
		if (mr->map)
			munmap(mr->map, mr->map_len);
		limits_uncharge(c, SRD_RES_BYTES, mr->charged_bytes);
		limits_uncharge(c, SRD_RES_MAPS, mr->charged_maps);
		mr_set_map(mr, &req->reg, &m);
		mr->charged_bytes = bytes;
		mr->charged_maps = mr_maps(rq->nfds);
	} else if (rq->len != sizeof(*req) || rq->nfds ||
		   ((access ^ mr->access) & IBV_ACCESS_ON_DEMAND)) {
		/* Paging on demand or not is a new translation. */
		return -EINVAL;
	}
	if (pd) {
		mr->pd->refcnt--;
		mr->pd = pd;
		pd->refcnt++;
	}
	mr->access = access;
	/* The keys stay, as rxe's and ConnectX's do: peers holding the rkey
	 * and WQEs posted with the lkey keep working on the new MR. */
	rep = REP(rp, struct srd_reg_mr_rep);
	rep->handle = mr->handle;
	rep->lkey = mr->lkey;
	rep->rkey = mr->rkey;
	return 0;
}

void mr_destroy(struct srd_mr *mr)
{
	if (mr->map)
		munmap(mr->map, mr->map_len);
	if (mr->dm)
		mr->dm->refcnt--;
	client_mem_put(mr->mem);
	mr->pd->refcnt--;
	limits_uncharge(mr->owner, SRD_RES_BYTES, mr->charged_bytes);
	limits_uncharge(mr->owner, SRD_RES_MAPS, mr->charged_maps);
	res_free(mr->owner->d, mr->owner, SRD_RES_MR, mr->handle);
	free(mr);
}

int cmd_dereg_mr(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_handle_req *req = rq->data;
	struct srd_mr *mr = mr_get(c, req->handle);

	if (!mr)
		return -EINVAL;
	/* As rxe (IBA 10.6.7.2.6): windows bound to it must go first. */
	if (mr->num_mw)
		return -EINVAL;
	mr_destroy(mr);
	return 0;
}

int mr_check_copy(const struct srd_mr *mr, const struct srd_pd *pd, uint64_t va,
		  uint64_t len, int access)
{
	uint64_t off;

	if (!mr)
		return -EINVAL;
	if (pd && mr->pd != pd)
		return -EACCES;
	if ((mr->access & access) != access)
		return -EACCES;
	if (!len)
		return 0;
	if (va < mr->iova)
		return -EFAULT;
	off = va - mr->iova;
	if (off > mr->length || len > mr->length - off)
		return -EFAULT;
	/* The mem file reaches pages whatever their protection: ODP asks
	 * the maps before every access, copies included. */
	if (mr->odp)
		return mr_odp_check(mr, va, len,
				    access & (IBV_ACCESS_LOCAL_WRITE |
					      IBV_ACCESS_REMOTE_WRITE |
					      IBV_ACCESS_REMOTE_ATOMIC));
	return 0;
}

int mr_check(const struct srd_mr *mr, const struct srd_pd *pd, uint64_t va,
	     uint64_t len, int access)
{
	int err = mr_check_copy(mr, pd, va, len, access);

	/* Memory of a client that died is no memory: as if the MR were
	 * gone (a peer gets a remote access error). */
	if (!err && len && mr->pvm && !mr_owner_alive(mr))
		return -EFAULT;
	return err;
}

/* What an MR over device memory may grant (mlx5's list). */
#define DM_MR_ACCESS                                         \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |  \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
	 IBV_ACCESS_ZERO_BASED | IBV_ACCESS_OPTIONAL_RANGE)

/*
 * An MR over [offset, offset + length) of a DM.  It is zero based, as the
 * kernel requires: addresses in SGEs and from peers are offsets into the
 * MR, and the device reaches the bytes through the DM's own mapping.
 */
int cmd_reg_dm_mr(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp)
{
	const struct srd_reg_dm_mr_req *req = rq->data;
	struct srd_pd *pd = pd_get(c, req->pd_handle);
	struct srd_dm *dm = dm_get(c, req->dm_handle);
	struct srd_reg_mr_rep *rep;
	struct srd_mr *mr;
	int64_t idx;
	int err;

	if (!pd || !dm || req->rsvd)
		return -EINVAL;
	if (!(req->access & IBV_ACCESS_ZERO_BASED) ||
	    (req->access & ~(uint32_t)DM_MR_ACCESS))
		return -EINVAL;
	err = mr_access_check(req->access);
	if (err)
		return err;
	if (!req->length || req->offset > dm->length ||
	    req->length > dm->length - req->offset)
		return -EINVAL;
	mr = mr_new(c, pd, req->access, &idx);
	if (!mr)
		return (int)idx;
	mr->addr = 0;
	mr->iova = 0;
	mr->length = req->length;
	mr->base = dm->map + req->offset;
	mr->dm = dm;
	dm->refcnt++;
	pd->refcnt++;
	rep = REP(rp, struct srd_reg_mr_rep);
	rep->handle = mr->handle;
	rep->lkey = mr->lkey;
	rep->rkey = mr->rkey;
	return 0;
}
