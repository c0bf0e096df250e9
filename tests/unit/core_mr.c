/* SPDX-License-Identifier: MIT */
/*
 * Memory regions seen from the engine's side: key lookup (stale keys
 * miss), mr_check bounds and rights, and copies between memfd-mapped and
 * process_vm-reached MRs, in every combination, iova different from addr.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/t_core.h"

#define LEN (256 * 1024) /* more than the bounce buffer */
#define IOVA_BASE 0x7000000000ull

struct tmr {
	struct srd_mr *mr;
	uint8_t *p;
	uint64_t iova;
};

static void reg(struct t_core *t, uint32_t pd, bool pvm, uint32_t access,
		struct tmr *out)
{
	union {
		struct srd_reg_mr_req r;
		struct {
			uint8_t hdr[offsetof(struct srd_reg_mr_req, piece)];
			struct srd_mr_piece p;
		};
	} q = { 0 };
	static struct srd_rep rp;
	struct srd_reg_mr_rep *rep = (void *)rp.data;
	int fd = -1;

	if (pvm) {
		out->p = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	} else {
		fd = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);
		T_ASSERT(fd >= 0 && !ftruncate(fd, LEN));
		T_ASSERT(!fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK));
		out->p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			      0);
	}
	T_ASSERT(out->p != MAP_FAILED);
	out->iova = IOVA_BASE + (pvm ? 0x100000000ull : 0);
	q.r.pd_handle = pd;
	q.r.access = access;
	q.r.addr = (uintptr_t)out->p;
	q.r.length = LEN;
	q.r.iova = out->iova;
	q.r.span_start = (uintptr_t)out->p;
	q.r.span_len = LEN;
	q.r.num_pieces = 1;
	q.p.len = LEN;
	q.p.kind = pvm ? SRD_PIECE_PVM : SRD_PIECE_FD;
	T_EQ(t_core_cmd(t->c, SRD_CMD_REG_MR, &q, sizeof(q), &fd, !pvm, &rp),
	     0);
	out->mr = mr_lookup_key(&t->d, rep->lkey);
	T_ASSERT(out->mr);
	T_EQ(out->mr->handle, rep->handle);
	T_ASSERT(pvm ? !out->mr->base && out->mr->pvm : out->mr->base != NULL);
}

static void fill(struct tmr *m, uint8_t seed)
{
	for (size_t i = 0; i < LEN; i++)
		m->p[i] = (uint8_t)(i * 7 + seed);
}

static void copies(struct tmr *a, struct tmr *b, const char *what)
{
	uint8_t buf[100];

	fill(a, 1);
	memset(b->p, 0, LEN);
	/* Everything but the first and last few bytes. */
	T_EQ(mr_copy(b->mr, b->iova + 3, a->mr, a->iova + 5, LEN - 10, NULL),
	     0);
	for (size_t i = 0; i < LEN - 10; i++)
		if (b->p[i + 3] != a->p[i + 5])
			T_FAIL("%s: byte %zu differs", what, i);
	T_EQ(b->p[0], 0);
	T_EQ(b->p[LEN - 1], 0);
	T_EQ(mr_read(a->mr, a->iova + 1000, buf, sizeof(buf)), 0);
	T_ASSERT(!memcmp(buf, a->p + 1000, sizeof(buf)));
	memset(buf, 0xee, sizeof(buf));
	T_EQ(mr_write(b->mr, b->iova + LEN - sizeof(buf), buf, sizeof(buf)), 0);
	T_EQ(b->p[LEN - 1], 0xee);
	T_EQ(mr_copy(b->mr, b->iova, a->mr, a->iova, 0, NULL), 0);
}

/*
 * The owner's address space as a client that died leaves it: a
 * /proc/PID/mem of a child that has exited.  Its pvm MR reads and writes
 * nothing.
 */
static void dead_client_fails(struct tmr *pvm, struct tmr *fdm)
{
	struct srd_client_mem *cm = pvm->mr->mem;
	int saved = cm->fd, fd, st;
	char path[64];
	pid_t pid = fork();

	T_ASSERT(pid >= 0);
	if (!pid) {
		pause();
		_exit(0);
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDWR | O_CLOEXEC);
	T_ASSERT(fd >= 0);
	T_ASSERT(!kill(pid, SIGKILL));
	T_EQ(waitpid(pid, &st, 0), pid);
	cm->fd = fd;
	T_ASSERT(mr_read(pvm->mr, pvm->iova, fdm->p, 8) < 0);
	T_ASSERT(mr_write(pvm->mr, pvm->iova, fdm->p, 8) < 0);
	cm->fd = saved;
	close(fd);
}

int main(void)
{
	static struct srd_rep rp;
	struct tmr fdm, fdm2, pvm, pvm2;
	struct srd_pd *pd, *pd2;
	struct t_core t;
	uint32_t pdh, key;
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
		       IBV_ACCESS_REMOTE_WRITE;

	t_core_init(&t);
	T_EQ(t_core_cmd(t.c, SRD_CMD_ALLOC_PD, NULL, 0, NULL, 0, &rp), 0);
	pdh = ((struct srd_handle_rep *)rp.data)->handle;
	pd = pd_get(t.c, pdh);
	T_EQ(t_core_cmd(t.c, SRD_CMD_ALLOC_PD, NULL, 0, NULL, 0, &rp), 0);
	pd2 = pd_get(t.c, ((struct srd_handle_rep *)rp.data)->handle);
	T_ASSERT(pd && pd2);

	reg(&t, pdh, false, rw, &fdm);
	reg(&t, pdh, false, rw, &fdm2);
	reg(&t, pdh, true, rw, &pvm);
	reg(&t, pdh, true, IBV_ACCESS_LOCAL_WRITE, &pvm2);
	T_EQ(pd->refcnt, 4);

	/* mr_check: bounds in iova space, rights, PD. */
	T_EQ(mr_check(fdm.mr, pd, fdm.iova, LEN, IBV_ACCESS_REMOTE_WRITE), 0);
	T_EQ(mr_check(fdm.mr, NULL, fdm.iova + LEN - 1, 1, 0), 0);
	T_EQ(mr_check(fdm.mr, pd, fdm.iova + LEN, 0, 0), 0);
	T_EQ(mr_check(fdm.mr, pd, fdm.iova - 1, 1, 0), -EFAULT);
	T_EQ(mr_check(fdm.mr, pd, fdm.iova + 1, LEN, 0), -EFAULT);
	T_EQ(mr_check(fdm.mr, pd, fdm.iova + LEN, 1, 0), -EFAULT);
	T_EQ(mr_check(fdm.mr, pd, fdm.iova + 8, UINT64_MAX - 4, 0), -EFAULT);
	T_EQ(mr_check(fdm.mr, pd, UINT64_MAX, 2, 0), -EFAULT);
	T_EQ(mr_check(fdm.mr, pd, (uintptr_t)fdm.p, 1, 0), -EFAULT);
	T_EQ(mr_check(fdm.mr, pd2, fdm.iova, 1, 0), -EACCES);
	T_EQ(mr_check(pvm2.mr, pd, pvm2.iova, 1, IBV_ACCESS_REMOTE_READ),
	     -EACCES);
	T_EQ(mr_check(fdm.mr, pd, fdm.iova, 1, IBV_ACCESS_REMOTE_ATOMIC),
	     -EACCES);
	T_EQ(mr_check(NULL, pd, 0, 0, 0), -EINVAL);
	T_ASSERT(mr_ptr(fdm.mr, fdm.iova + 10) == fdm.mr->base + 10);
	T_ASSERT(!mr_ptr(pvm.mr, pvm.iova));
	/* The daemon's mapping is the same memory. */
	fdm.p[77] = 0x42;
	T_EQ(*mr_ptr(fdm.mr, fdm.iova + 77), 0x42);

	copies(&fdm, &fdm2, "fd->fd");
	copies(&fdm, &pvm, "fd->pvm");
	copies(&pvm, &fdm, "pvm->fd");
	copies(&pvm, &pvm2, "pvm->pvm");
	copies(&fdm, &fdm, "fd->same fd");

	/* Keys: a destroyed MR's key misses, also once the index is
	 * reused; a key with another key byte misses. */
	key = fdm2.mr->lkey;
	T_ASSERT(!mr_lookup_key(&t.d, key ^ 0x1));
	T_ASSERT(!mr_lookup_key(&t.d, 0));
	T_ASSERT(!mr_lookup_key(&t.d, UINT32_MAX));
	T_EQ(t_core_cmd(t.c, SRD_CMD_DEREG_MR,
			&(struct srd_handle_req){ fdm2.mr->handle },
			sizeof(struct srd_handle_req), NULL, 0, &rp),
	     0);
	T_ASSERT(!mr_lookup_key(&t.d, key));
	T_ASSERT(table_gen(&t.d.mrs, key >> 8) != (uint8_t)key);
	/* Steer the next registration onto the freed index. */
	t.d.mrs.random = false;
	t.d.mrs.hint = key >> 8;
	reg(&t, pdh, false, rw, &fdm2);
	t.d.mrs.random = true;
	T_EQ(fdm2.mr->lkey >> 8, key >> 8);
	T_ASSERT(fdm2.mr->lkey != key);
	T_ASSERT(!mr_lookup_key(&t.d, key));
	T_ASSERT(mr_lookup_key(&t.d, fdm2.mr->lkey) == fdm2.mr);

	/* A dead client's address space: reads and writes fail cleanly. */
	dead_client_fails(&pvm, &fdm);

	t_core_fini(&t);
	return T_EXIT_PASS;
}
