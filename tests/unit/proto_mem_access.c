/* SPDX-License-Identifier: MIT */
/*
 * Who reaches whose memory, at the command channel.  OPEN_DEVICE takes a
 * memory access fd only when it is what it claims (a /proc/PID/mem open
 * for reading and writing; never a pidfd), and a context without one cannot
 * register memory the daemon would reach through its address space.  A
 * second client that tries every handle cannot deregister, re-register,
 * free or register over the first client's MRs, DM and windows, which go
 * on working for their owner.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tests/unit/t_proto.h"

#define PG 4096
#define GUESSES 8192 /* beyond every table's first size */

/* OPEN_DEVICE on a new connection with nfds fds and these flags. */
static int open_with_fds(const char *name, uint32_t mem_access, const int *fds,
			 int nfds, uint32_t flags)
{
	struct srd_open_device_req req = { .mem_access = mem_access,
					   .flags = flags };
	struct srd_open_device_rep rep;
	int rfds[SRD_MAX_FDS], n = 0, c = t_connect(name), ret;

	T_ASSERT(c >= 0);
	T_EQ(t_hello(c), 0);
	ret = t_cmd(c, SRD_CMD_OPEN_DEVICE, &req, sizeof(req), fds, nfds, &rep,
		    sizeof(rep), NULL, rfds, &n);
	for (int i = 0; i < n; i++)
		close(rfds[i]);
	close(c);
	return ret;
}

static int open_with(const char *name, uint32_t mem_access, int fd,
		     uint32_t flags)
{
	return open_with_fds(name, mem_access, &fd, fd >= 0 ? 1 : 0, flags);
}

/*
 * The maps file ODP checks against comes after the memory access fd and
 * must be a /proc maps file open for reading; it needs a memory access
 * fd to follow, and BIND and IMPORT exclude each other.
 */
static void open_maps_checks(const char *name)
{
	int rw = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	int maps = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	int p[2];

	T_ASSERT(rw >= 0 && maps >= 0 && !pipe(p));
	T_EQ(open_with_fds(name, SRD_MEM_PROCMEM, (int[]){ rw, maps }, 2,
			   SRD_OPEN_F_MAPS),
	     0);
	/* No memory access to follow: nothing for the maps to describe. */
	T_EQ(open_with_fds(name, SRD_MEM_NONE, &maps, 1, SRD_OPEN_F_MAPS),
	     -EINVAL);
	/* Not a maps file: a pipe, the mem file itself. */
	T_EQ(open_with_fds(name, SRD_MEM_PROCMEM, (int[]){ rw, p[0] }, 2,
			   SRD_OPEN_F_MAPS),
	     -EINVAL);
	T_EQ(open_with_fds(name, SRD_MEM_PROCMEM, (int[]){ rw, rw }, 2,
			   SRD_OPEN_F_MAPS),
	     -EINVAL);
	/* The flag without its fd, and the fd without its flag. */
	T_EQ(open_with_fds(name, SRD_MEM_PROCMEM, &rw, 1, SRD_OPEN_F_MAPS),
	     -EINVAL);
	T_EQ(open_with_fds(name, SRD_MEM_PROCMEM, (int[]){ rw, maps }, 2, 0),
	     -EINVAL);
	T_EQ(open_with_fds(name, SRD_MEM_PROCMEM, (int[]){ rw, maps, p[0] }, 3,
			   SRD_OPEN_F_MAPS | SRD_OPEN_F_BIND |
				   SRD_OPEN_F_IMPORT),
	     -EINVAL);
	close(rw);
	close(maps);
	close(p[0]);
	close(p[1]);
}

static void open_checks(const char *name)
{
	int p[2], ro = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	int rw = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);

	T_ASSERT(ro >= 0 && rw >= 0 && !pipe(p));
	T_EQ(open_with(name, SRD_MEM_PROCMEM, rw, 0), 0);
	T_EQ(open_with(name, SRD_MEM_PROCMEM, -1, 0), -EINVAL);
	T_EQ(open_with(name, SRD_MEM_PROCMEM, p[0], 0), -EINVAL);
	T_EQ(open_with(name, SRD_MEM_PROCMEM, ro, 0), -EINVAL);
	T_EQ(open_with(name, SRD_MEM_NONE, rw, 0), -EINVAL); /* fd extra */
	T_EQ(open_with(name, 7, rw, 0), -EINVAL);
	T_EQ(open_with(name, SRD_MEM_PROCMEM, rw, 1u << 3),
	     -EINVAL); /* unknown flag */
	/* A pid reaches the image of the next exec: never taken. */
	if (pidfd >= 0) {
		T_EQ(open_with(name, SRD_MEM_PIDFD, pidfd, 0), -EOPNOTSUPP);
		close(pidfd);
	}
	close(ro);
	close(rw);
	close(p[0]);
	close(p[1]);
}

/* Without memory access, memory outside memfds cannot be registered. */
static void no_access_no_pvm(const char *name)
{
	struct srd_open_device_req req = { 0 };
	struct srd_open_device_rep rep;
	union {
		struct srd_reg_mr_req r;
		struct {
			uint8_t hdr[offsetof(struct srd_reg_mr_req, piece)];
			struct srd_mr_piece p;
		};
	} q = { 0 };
	int rfds[SRD_MAX_FDS], n = 0, c = t_connect(name);
	void *buf = mmap(NULL, PG, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int64_t pd;

	T_ASSERT(c >= 0 && buf != MAP_FAILED);
	T_EQ(t_hello(c), 0);
	T_EQ(t_cmd(c, SRD_CMD_OPEN_DEVICE, &req, sizeof(req), NULL, 0, &rep,
		   sizeof(rep), NULL, rfds, &n),
	     0);
	for (int i = 0; i < n; i++)
		close(rfds[i]);
	pd = t_alloc_pd(c);
	T_ASSERT(pd >= 0);
	q.r.pd_handle = (uint32_t)pd;
	q.r.access = IBV_ACCESS_LOCAL_WRITE;
	q.r.addr = q.r.iova = q.r.span_start = (uintptr_t)buf;
	q.r.length = q.r.span_len = PG;
	q.r.num_pieces = 1;
	q.p.len = PG;
	q.p.kind = SRD_PIECE_PVM;
	T_EQ(t_cmd(c, SRD_CMD_REG_MR, &q, sizeof(q), NULL, 0, NULL, 0, NULL,
		   NULL, NULL),
	     -EINVAL);
	close(c);
	munmap(buf, PG);
}

static int64_t alloc_dm(int fd)
{
	struct srd_alloc_dm_req req = { .length = 256 };
	struct srd_alloc_dm_rep rep;
	int rfds[SRD_MAX_FDS], n = 0, ret;

	ret = t_cmd(fd, SRD_CMD_ALLOC_DM, &req, sizeof(req), NULL, 0, &rep,
		    sizeof(rep), NULL, rfds, &n);
	for (int i = 0; i < n; i++)
		close(rfds[i]);
	return ret ? ret : (int64_t)rep.handle;
}

static int reg_dm_mr(int fd, uint32_t pd, uint32_t dm,
		     struct srd_reg_mr_rep *rep)
{
	struct srd_reg_dm_mr_req req = {
		.pd_handle = pd,
		.dm_handle = dm,
		.length = 256,
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ZERO_BASED,
	};

	return t_cmd(fd, SRD_CMD_REG_DM_MR, &req, sizeof(req), NULL, 0, rep,
		     rep ? sizeof(*rep) : 0, NULL, NULL, NULL);
}

static int64_t alloc_mw(int fd, uint32_t pd)
{
	struct srd_alloc_mw_req req = { .pd_handle = pd,
					.type = IBV_MW_TYPE_2 };
	struct srd_alloc_mw_rep rep;
	int ret = t_cmd(fd, SRD_CMD_ALLOC_MW, &req, sizeof(req), NULL, 0, &rep,
			sizeof(rep), NULL, NULL, NULL);

	return ret ? ret : (int64_t)rep.handle;
}

/* c2 tries every handle on c1's MRs, DM and window. */
static void guessing(const char *name)
{
	struct srd_rereg_mr_req rr = { .flags = IBV_REREG_MR_CHANGE_ACCESS };
	struct srd_reg_mr_rep mrep, dmrep;
	struct t_client c1, c2;
	int64_t pd1, pd2, mr1, dm1, dmmr1, mw1;

	t_client_open(&c1, name);
	t_client_open(&c2, name);
	pd1 = t_alloc_pd(c1.fd);
	pd2 = t_alloc_pd(c2.fd);
	T_ASSERT(pd1 >= 0 && pd2 >= 0);
	mr1 = t_reg_mr(c1.fd, (uint32_t)pd1, PG,
		       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND, &mrep,
		       NULL);
	dm1 = alloc_dm(c1.fd);
	T_ASSERT(mr1 >= 0 && dm1 >= 0);
	T_EQ(reg_dm_mr(c1.fd, (uint32_t)pd1, (uint32_t)dm1, &dmrep), 0);
	dmmr1 = dmrep.handle;
	mw1 = alloc_mw(c1.fd, (uint32_t)pd1);
	T_ASSERT(mw1 >= 0);

	rr.reg.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ;
	for (uint32_t h = 0; h < GUESSES; h++) {
		rr.handle = h;
		T_EQ(t_cmd(c2.fd, SRD_CMD_REREG_MR, &rr,
			   offsetof(struct srd_rereg_mr_req, reg.piece), NULL,
			   0, NULL, 0, NULL, NULL, NULL),
		     -EINVAL);
		T_EQ(t_destroy(c2.fd, SRD_CMD_DEREG_MR, h), -EINVAL);
		T_EQ(reg_dm_mr(c2.fd, (uint32_t)pd2, h, NULL), -EINVAL);
		T_EQ(t_destroy(c2.fd, SRD_CMD_FREE_DM, h), -EINVAL);
		T_EQ(t_destroy(c2.fd, SRD_CMD_DEALLOC_MW, h), -EINVAL);
	}
	t_client_close(&c2);

	/* All of it still c1's, and as it was. */
	rr.handle = (uint32_t)mr1;
	rr.reg.access = IBV_ACCESS_LOCAL_WRITE;
	T_EQ(t_cmd(c1.fd, SRD_CMD_REREG_MR, &rr,
		   offsetof(struct srd_rereg_mr_req, reg.piece), NULL, 0, &mrep,
		   sizeof(mrep), NULL, NULL, NULL),
	     0);
	T_EQ(t_destroy(c1.fd, SRD_CMD_DEALLOC_MW, (uint32_t)mw1), 0);
	T_EQ(t_destroy(c1.fd, SRD_CMD_DEREG_MR, (uint32_t)mr1), 0);
	T_EQ(t_destroy(c1.fd, SRD_CMD_DEREG_MR, (uint32_t)dmmr1), 0);
	T_EQ(t_destroy(c1.fd, SRD_CMD_FREE_DM, (uint32_t)dm1), 0);
	t_client_close(&c1);
}

int main(void)
{
	struct t_daemon td;

	t_daemon_start(&td, NULL);
	open_checks(td.name);
	open_maps_checks(td.name);
	no_access_no_pvm(td.name);
	guessing(td.name);
	T_EQ(t_daemon_stop(&td), 0);
	return T_EXIT_PASS;
}
