/* SPDX-License-Identifier: MIT */
/*
 * Placement by the owner (common/place.h, docs/trust.md): an RC WRITE
 * between in-place buffers of two processes of one user is copied by a
 * thread of the destination's own library, one process_vm_readv per
 * batch of jobs, instead of by the daemon through two /proc/PID/mem
 * files and a bounce buffer.
 *
 * The responder checks and sequences a request as always, then posts a
 * job instead of copying.  Until the job is done nothing that would show
 * the data placed leaves: the QP's ACK waits on its newest job, and a
 * request the QP cannot also hand over as a job is dropped, to be asked
 * for again (a PSN sequence NAK) once every job of the QP is done.  Jobs
 * retire in ring order; a destination that cannot be written is a remote
 * access error, a source the owner could not read is copied by the daemon
 * itself, through the two mem files, as it would have been.
 *
 * Nothing here waits for a client: jobs are looked at in each engine pass
 * and the owner's thread rings the doorbell when it finishes some.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/place.h"
#include "daemon/core/core.h"
#include "daemon/transport/engine.h"

struct place_shadow {
	struct srd_qp_transport *tp; /* NULL: nothing to do at retirement */
	uint64_t posted_at;	     /* engine time */
	uint8_t kind;		     /* enum srd_place_kind */
	uint32_t idx;		     /* READ: its SQ index */
	uint32_t psn;		     /* WRITE: the job's last PSN */
	bool ack;		     /* an ACK waits on this job */
	uint32_t ack_psn;
	/* Staged: its source is the ring's staging area, freed up to
	 * stage_end when it retires. */
	bool staged;
	bool odp; /* into memory on demand: never taken back */
	uint64_t stage_end;
	/* To copy it ourselves: the source's address space, held. */
	struct srd_client_mem *src;
	uint16_t nsrc, ndst;
	uint64_t len;
	/* the receive CQE that waits on this job */
	bool has_cqe;
	struct srd_cq *cq;
	struct srd_cqe cqe;
	struct srd_place_iov siov[SRD_PLACE_MAX_IOV];
	struct srd_place_iov diov[SRD_PLACE_MAX_IOV];
};

struct srd_place {
	struct srd_client_mem *mem; /* whose ring (not held: it holds us) */
	struct srd_place_ring *ring;
	uint32_t posted, retired;
	/* Bytes of the staging area handed out and freed, in ring order. */
	uint64_t stage_head, stage_tail;
	bool busy;	       /* in the engine's list */
	struct list_node node; /* engine->place_busy */
	/* The owner, as PLACE_SETUP found it. */
	uid_t uid;
	gid_t gid;
	uint64_t ns_ino; /* its pid namespace, 0: unknown */
	pid_t ns_pid;	 /* its pid there */
	bool peer_read;
	uint64_t token_addr;
	uint8_t token[SRD_PLACE_TOKEN_BYTES];
	struct place_shadow sh[SRD_PLACE_SLOTS];
};

/* How long a job may wait for its owner's thread before the daemon looks
 * at why (stalled()). */
#define PLACE_STALL_NS 20000000ull

static uint32_t slot_of(uint32_t n)
{
	return n & (SRD_PLACE_SLOTS - 1);
}

/* --- setup and teardown -------------------------------------------------- */

int cmd_place_setup(struct srd_client *c, struct srd_req *rq,
		    struct srd_rep *rp)
{
	const struct srd_place_setup_req *req = rq->data;
	struct srd_client_mem *m = c->mem;
	struct srd_place_setup_rep *rep;
	struct srd_place *p;
	void *map;
	int fd;

	if (req->flags & ~SRD_PLACE_F_PEER_READ || req->rsvd)
		return -EINVAL;
	/* Only the process whose memory it is may ask, once. */
	if (m->kind != SRD_MEM_PROCMEM || !rq->sender.known ||
	    rq->sender.pid != m->pid)
		return -EPERM;
	if (m->place)
		return -EBUSY;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	fd = shm_create("softrdma-place", SRD_PLACE_RING_BYTES, 0, &map);
	if (fd < 0) {
		free(p);
		return fd;
	}
	p->mem = m;
	p->ring = map;
	p->uid = rq->sender.uid;
	p->gid = rq->sender.gid;
	/* The namespace learnt at connect is the sender's only when the
	 * sender is the process that connected. */
	if (c->pid == m->pid && c->ns.depth) {
		p->ns_ino = c->ns.ino[0];
		p->ns_pid = c->ns.pid[0];
	}
	p->peer_read = req->flags & SRD_PLACE_F_PEER_READ;
	p->token_addr = req->token_addr;
	memcpy(p->token, req->token, sizeof(p->token));
	m->place = p;
	rep = REP(rp, struct srd_place_setup_rep);
	rep->slots = SRD_PLACE_SLOTS;
	rep->ring_bytes = SRD_PLACE_RING_BYTES;
	rep_add_fd(rp, fd, false);
	return 0;
}

static void shadow_clear(struct place_shadow *s)
{
	client_mem_put(s->src);
	s->src = NULL;
	s->tp = NULL;
	s->ack = false;
	s->staged = false;
	s->odp = false;
	if (s->has_cqe)
		s->cq->place_cqes--;
	s->has_cqe = false;
}

void engine_mem_gone(struct srd_client_mem *m)
{
	struct srd_place *p = m->place;

	if (!p)
		return;
	/* Jobs not done now never will be: their QPs hear nothing more
	 * from them (no ACK for data that did not land). */
	for (uint32_t n = p->retired; n != p->posted; n++) {
		struct place_shadow *s = &p->sh[slot_of(n)];

		if (s->tp && s->kind == SRD_PLACE_K_READ)
			s->tp->place_rd_pending--;
		else if (s->tp)
			s->tp->place_pending--;
		shadow_clear(s);
	}
	if (p->busy)
		list_del(&p->node);
	munmap(p->ring, SRD_PLACE_RING_BYTES);
	free(p);
	m->place = NULL;
}

void engine_place_tp_gone(struct srd_qp_transport *tp)
{
	struct srd_engine *e = tp->eng;

	tp->place_resend = false;
	tp->place_rd_resend = false;
	tp->place_defer = false;
	tp->place_failed = false;
	tp->place_fail_cqe = false;
	if (!tp->place_pending && !tp->place_rd_pending)
		return;
	list_for_each (&e->place_busy, it) {
		struct srd_place *p = list_entry(it, struct srd_place, node);

		for (uint32_t n = p->retired; n != p->posted; n++)
			if (p->sh[slot_of(n)].tp == tp)
				p->sh[slot_of(n)].tp = NULL;
	}
	tp->place_pending = 0;
	tp->place_rd_pending = 0;
	tp->place_last = NULL;
}

/* --- posting -------------------------------------------------------------- */

/* A source owner's pid as the destination owner's namespace numbers it. */
static bool peer_pid(const struct srd_place *src, const struct srd_place *dst,
		     pid_t *pid)
{
	if (!src->ns_ino || src->ns_ino != dst->ns_ino)
		return false;
	*pid = src->ns_pid;
	return true;
}

static bool peers(const struct srd_place *src, const struct srd_place *dst)
{
	return src->peer_read && src->uid == dst->uid && src->gid == dst->gid;
}

/* Publish the job whose shadow (at the next slot) is filled in. */
static void publish(struct srd_qp_transport *tp, struct srd_place *dp,
		    enum srd_place_kind kind, uint32_t arg, pid_t pid,
		    const struct srd_place *sp)
{
	struct place_shadow *s = &dp->sh[slot_of(dp->posted)];
	struct srd_place_job *j = &dp->ring->job[slot_of(dp->posted)];

	s->tp = tp;
	s->posted_at = tp->eng->now;
	s->kind = (uint8_t)kind;
	s->idx = arg;
	s->psn = arg & ROCE_PSN_MASK;
	s->ack = false;
	s->has_cqe = false;

	j->seq = dp->posted;
	j->src_pid = pid;
	j->nsrc = s->nsrc;
	j->ndst = s->ndst;
	j->len = s->len;
	j->token_addr = sp->token_addr;
	memcpy(j->token, sp->token, sizeof(j->token));
	memcpy(j->src, s->siov, sizeof(j->src[0]) * s->nsrc);
	memcpy(j->dst, s->diov, sizeof(j->dst[0]) * s->ndst);
	__atomic_store_n(&j->state, SRD_PLACE_POSTED, __ATOMIC_RELEASE);
	dp->posted++;
	if (kind == SRD_PLACE_K_READ) {
		tp->place_rd_pending++;
	} else {
		tp->place_pending++;
		tp->place_last = s;
	}
}

/* Tell the owner's thread. */
static void kick(struct srd_qp_transport *tp, struct srd_place *dp)
{
	/* Sequentially consistent, as the owner's store of sleeping and its
	 * load of posted: one of us sees the other. */
	__atomic_store_n(&dp->ring->posted, dp->posted, __ATOMIC_SEQ_CST);
	if (!dp->busy) {
		list_add_tail(&tp->eng->place_busy, &dp->node);
		dp->busy = true;
	}
	if (__atomic_load_n(&dp->ring->sleeping, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &dp->ring->posted, FUTEX_WAKE, 1, NULL, NULL,
			0);
}

/* Where n staged bytes go after *head (which it moves past them): a run
 * never wraps.  False: the area has no room now. */
static bool stage_alloc(const struct srd_place *dp, uint64_t *head, uint64_t n,
			uint64_t *off)
{
	uint64_t pos = *head % SRD_PLACE_STAGE_BYTES;

	if (pos + n > SRD_PLACE_STAGE_BYTES) {
		*head += SRD_PLACE_STAGE_BYTES - pos;
		pos = 0;
	}
	if (*head + n - dp->stage_tail > SRD_PLACE_STAGE_BYTES)
		return false;
	*off = pos;
	*head += n;
	return true;
}

/*
 * Memory on demand at dst: the bytes are copied now into the staging
 * area, and the owner's thread copies them onto its memory.  Jobs of at
 * most SRD_PLACE_STAGE_JOB_MAX each; all of them or none.
 */
static int post_staged(struct srd_qp_transport *tp, struct srd_place *dp,
		       struct srd_dma *dst, struct srd_dma *src, uint64_t len,
		       enum srd_place_kind kind, uint32_t arg)
{
	struct srd_daemon *d = tp->eng->d;
	uint8_t *stage = (uint8_t *)dp->ring + SRD_PLACE_STAGE_OFF;
	uint32_t nj = (uint32_t)((len + SRD_PLACE_STAGE_JOB_MAX - 1) /
				 SRD_PLACE_STAGE_JOB_MAX);
	struct srd_dma dc = *dst, sc = *src;
	uint64_t head = dp->stage_head, done = 0;

	if (SRD_PLACE_SLOTS - (dp->posted - dp->retired) < nj)
		return -ENOBUFS;
	for (uint32_t k = 0; k < nj; k++) {
		struct place_shadow *s = &dp->sh[slot_of(dp->posted + k)];
		uint64_t n = len - done, off;
		struct srd_client_mem *m;
		struct srd_dma sb;
		bool odp;
		int nd;

		if (n > SRD_PLACE_STAGE_JOB_MAX)
			n = SRD_PLACE_STAGE_JOB_MAX;
		nd = dma_client_iov(d, &dc, n, s->diov, SRD_PLACE_MAX_IOV, &m,
				    &odp);
		if (nd <= 0 || m != dp->mem)
			return -EAGAIN;
		if (!stage_alloc(dp, &head, n, &off))
			return -ENOBUFS;
		dma_init_buf(&sb, stage + off, n);
		if (dma_copy(d, &sb, &sc, n))
			return -EFAULT;
		s->staged = true;
		s->odp = true;
		s->stage_end = head;
		s->src = NULL;
		s->nsrc = 1;
		s->siov[0].addr = off;
		s->siov[0].len = n;
		s->ndst = (uint16_t)nd;
		s->len = n;
		done += n;
	}
	/* Only the final job marks the packet placed. */
	for (uint32_t k = 0; k < nj; k++)
		publish(tp, dp,
			k + 1 == nj			? kind
			: kind == SRD_PLACE_K_LAST	? SRD_PLACE_K_WRITE
			: kind == SRD_PLACE_K_SEND_LAST ? SRD_PLACE_K_SEND
							: kind,
			arg, 0, dp);
	dp->stage_head = head;
	tp->cnt.place_staged += nj;
	kick(tp, dp);
	return (int)nj;
}

int place_post(struct srd_qp_transport *tp, struct srd_dma *dst,
	       struct srd_dma *src, uint64_t len, enum srd_place_kind kind,
	       uint32_t arg, bool peer)
{
	struct srd_daemon *d = tp->eng->d;
	struct srd_place_iov siov[SRD_PLACE_MAX_IOV], diov[SRD_PLACE_MAX_IOV];
	struct srd_client_mem *smem, *dmem;
	struct srd_place *sp, *dp;
	struct place_shadow *s;
	struct srd_dma sc = *src, dc = *dst;
	bool odp, sodp;
	int ns, nd;
	pid_t pid;

	if (!len || len > INT_MAX)
		return -EAGAIN;
	nd = dma_client_iov(d, &dc, len, diov, SRD_PLACE_MAX_IOV, &dmem, &odp);
	if (nd <= 0 || !dmem->place)
		return -EAGAIN;
	dp = dmem->place;
	/* On demand: always the owner's; from a peer of its user straight
	 * out of the source (one copy), else staged. */
	if (!odp && !peer)
		return -EAGAIN;
	if (dp->posted - dp->retired >= SRD_PLACE_SLOTS)
		return odp ? -ENOBUFS : -EAGAIN;
	ns = dma_client_iov(d, &sc, len, siov, SRD_PLACE_MAX_IOV, &smem, &sodp);
	if (ns <= 0 || !smem->place || !peers(smem->place, dp) ||
	    !peer_pid(smem->place, dp, &pid))
		return odp ? post_staged(tp, dp, dst, src, len, kind, arg)
			   : -EAGAIN;
	sp = smem->place;
	s = &dp->sh[slot_of(dp->posted)];
	memcpy(s->siov, siov, sizeof(siov[0]) * ns);
	memcpy(s->diov, diov, sizeof(diov[0]) * nd);
	s->src = client_mem_get(smem);
	s->nsrc = (uint16_t)ns;
	s->ndst = (uint16_t)nd;
	s->len = len;
	s->staged = false;
	s->odp = odp;
	publish(tp, dp, kind, arg, pid, sp);
	kick(tp, dp);
	return 1;
}

void place_defer_cqe(struct srd_qp_transport *tp, struct srd_cq *cq,
		     const struct srd_cqe *c)
{
	struct place_shadow *s = tp->place_last;

	/* Set with the job just posted, in the same pass. */
	if (!s || !cq) {
		tp_cq_push(tp, cq, c);
		return;
	}
	s->has_cqe = true;
	s->cq = cq;
	s->cqe = *c;
	cq->place_cqes++;
}

void engine_place_cq_gone(struct srd_daemon *d, struct srd_cq *cq)
{
	list_for_each (&d->engine->place_busy, it) {
		struct srd_place *p = list_entry(it, struct srd_place, node);

		for (uint32_t n = p->retired; n != p->posted; n++) {
			struct place_shadow *s = &p->sh[slot_of(n)];

			if (s->has_cqe && s->cq == cq) {
				s->has_cqe = false;
				cq->place_cqes--;
			}
		}
	}
}

bool place_hold_ack(struct srd_qp_transport *tp, uint32_t psn)
{
	struct place_shadow *s = tp->place_last;

	if (!tp->place_pending || !s)
		return false;
	s->ack = true;
	s->ack_psn = psn & ROCE_PSN_MASK;
	return true;
}

/* --- retiring ------------------------------------------------------------- */

/* What the owner did not copy, through the two mem files: a source the
 * owner's thread could not read, or a job taken back from it. */
static int copy_ourselves(struct srd_client_mem *dst,
			  const struct place_shadow *s)
{
	static uint8_t bounce[64 * 1024];
	uint32_t si = 0, di = 0;
	uint64_t so = 0, dof = 0, left = s->len;

	while (left) {
		uint64_t n = left < sizeof(bounce) ? left : sizeof(bounce);
		uint64_t done;
		int err;

		for (done = 0; done < n;) {
			uint64_t k = s->siov[si].len - so;

			if (k > n - done)
				k = n - done;
			err = mem_file_xfer(s->src, s->siov[si].addr + so,
					    bounce + done, k, false);
			if (err)
				return err;
			done += k;
			so += k;
			if (so == s->siov[si].len) {
				si++;
				so = 0;
			}
		}
		for (done = 0; done < n;) {
			uint64_t k = s->diov[di].len - dof;

			if (k > n - done)
				k = n - done;
			/* The owner's protections, as its thread would have
			 * met them (up to a change racing this look). */
			err = mem_maps_check(dst, s->diov[di].addr + dof, k,
					     true);
			if (!err)
				err = mem_file_xfer(dst, s->diov[di].addr + dof,
						    bounce + done, k, true);
			if (err)
				return -EACCES;
			done += k;
			dof += k;
			if (dof == s->diov[di].len) {
				di++;
				dof = 0;
			}
		}
		left -= n;
	}
	return 0;
}

static void retire(struct srd_place *p, struct place_shadow *s, uint32_t st)
{
	struct srd_qp_transport *tp = s->tp;
	int err = 0;

	if (s->staged) {
		p->stage_tail = s->stage_end;
		/* Our own staging area unreadable: the owner unmapped it. */
		if (st == SRD_PLACE_FAIL_SRC)
			err = -EIO;
		else if (st != SRD_PLACE_DONE)
			err = -EACCES;
	} else if (tp && st == SRD_PLACE_FAIL_SRC) {
		err = copy_ourselves(p->mem, s);
		tp->cnt.place_copied++;
	} else if (st != SRD_PLACE_DONE) {
		err = -EACCES;
	}
	if (tp && s->kind == SRD_PLACE_K_READ) {
		tp->cnt.place_jobs++;
		tp->place_rd_pending--;
		completer_place_retired(tp, s->idx, err);
	} else if (tp) {
		tp->cnt.place_jobs++;
		tp->place_pending--;
		if (tp->place_last == s)
			tp->place_last = NULL;
		struct srd_place_done d = {
			.psn = s->psn,
			.err = err,
			.kind = (enum srd_place_kind)s->kind,
			.ack = s->ack,
			.ack_psn = s->ack_psn,
			.cqe = s->has_cqe ? &s->cqe : NULL,
			.cq = s->cq,
		};

		responder_place_retired(tp, &d);
	}
	shadow_clear(s);
}

/* Is the owner's address space still there?  0 bytes read: gone. */
static bool owner_alive(const struct srd_place *p)
{
	uint8_t b;

	return !mem_file_xfer(p->mem, p->token_addr, &b, 1, false);
}

/*
 * The oldest job has waited PLACE_STALL_NS: one still posted is taken
 * back and copied by the daemon (the owner's thread does not run, or is
 * gone); one claimed by an owner that is gone failed.  A claimed job of a
 * live owner is waited for: it stalls only that user's own QPs.  A job
 * into memory on demand (staged or not) is never taken back: only the
 * owner's thread writes that memory, whose protections may change at any
 * moment; while the owner lives, its peers wait for it as for a slow
 * responder.  (One whose source the owner could not read is still copied
 * here, after the maps check: a peer of the owner's own user that exec'd
 * or died mid-message, which could have written the memory anyway.)
 */
static uint32_t stalled(struct srd_place *p, const struct place_shadow *s,
			struct srd_place_job *j, uint32_t st)
{
	uint32_t want = SRD_PLACE_POSTED;

	if (s->staged || s->odp)
		return owner_alive(p) ? st : SRD_PLACE_FAIL_DST;
	if (st == SRD_PLACE_POSTED) {
		if (__atomic_compare_exchange_n(
			    &j->state, &want, SRD_PLACE_REVOKED, false,
			    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return SRD_PLACE_FAIL_SRC;
		st = want; /* claimed meanwhile, or finished */
	}
	if (st == SRD_PLACE_CLAIMED && !owner_alive(p))
		return SRD_PLACE_FAIL_DST;
	return st;
}

bool place_poll(struct srd_engine *e)
{
	bool work = false;

	list_for_each (&e->place_busy, it) {
		struct srd_place *p = list_entry(it, struct srd_place, node);

		while (p->retired != p->posted) {
			struct srd_place_job *j =
				&p->ring->job[slot_of(p->retired)];
			struct place_shadow *s = &p->sh[slot_of(p->retired)];
			uint32_t st =
				__atomic_load_n(&j->state, __ATOMIC_ACQUIRE);

			if ((st == SRD_PLACE_POSTED ||
			     st == SRD_PLACE_CLAIMED) &&
			    e->now - s->posted_at >= PLACE_STALL_NS)
				st = stalled(p, s, j, st);
			if (st == SRD_PLACE_POSTED || st == SRD_PLACE_CLAIMED)
				break;
			if (st != SRD_PLACE_DONE && st != SRD_PLACE_FAIL_SRC)
				st = SRD_PLACE_FAIL_DST;
			__atomic_store_n(&j->state, SRD_PLACE_FREE,
					 __ATOMIC_RELAXED);
			retire(p, &p->sh[slot_of(p->retired)], st);
			p->retired++;
			work = true;
		}
		if (p->retired == p->posted) {
			list_del(&p->node);
			p->busy = false;
		}
	}
	return work;
}

bool place_waiting(const struct srd_engine *e)
{
	return !list_empty(&e->place_busy);
}
