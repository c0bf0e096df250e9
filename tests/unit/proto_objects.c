/* SPDX-License-Identifier: MIT */
/* Create/destroy of PD, MR, comp channel, CQ, QP, SRQ, AH: success, the
 * argument checks, EBUSY while in use, and other clients' handles. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/t_proto.h"

#define PG SRD_PAGE_SIZE

/* The request and its pieces, which follow it where its piece[] is. */
union mr_req {
	struct srd_reg_mr_req r;
	struct {
		uint8_t hdr[offsetof(struct srd_reg_mr_req, piece)];
		struct srd_mr_piece p[2];
	};
};

static int sealed_memfd(size_t len, bool seal)
{
	int fd = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	T_ASSERT(fd >= 0);
	T_ASSERT(!ftruncate(fd, len));
	if (seal)
		T_ASSERT(!fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK));
	return fd;
}

/* REG_MR with one FD piece of len at address base, described by the
 * caller-tweaked request. */
static int reg(int fd, union mr_req *q, int npieces, const int *fds, int nfds,
	       struct srd_reg_mr_rep *rep)
{
	return t_cmd(fd, SRD_CMD_REG_MR, q,
		     sizeof(q->r) + npieces * sizeof(q->p[0]), fds, nfds, rep,
		     sizeof(*rep), NULL, NULL, NULL);
}

static void mr_tests(int fd, uint32_t pd)
{
	struct srd_reg_mr_rep rep, rep2;
	union mr_req q, base = { 0 };
	int mfd = sealed_memfd(4 * PG, true);
	int unsealed = sealed_memfd(4 * PG, false);
	int p[2];
	uint8_t *map;

	map = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	T_ASSERT(map != MAP_FAILED);
	base.r.pd_handle = pd;
	base.r.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	base.r.addr = (uintptr_t)map + 100;
	base.r.length = 3 * PG;
	base.r.iova = base.r.addr;
	base.r.span_start = (uintptr_t)map;
	base.r.span_len = 4 * PG;
	base.r.num_pieces = 1;
	base.p[0].len = 4 * PG;
	base.p[0].kind = SRD_PIECE_FD;

	q = base;
	T_EQ(reg(fd, &q, 1, &mfd, 1, &rep), 0);
	T_EQ(rep.lkey, rep.rkey);
	T_EQ(rep.lkey >> 8, rep.handle);
	/* A second MR on the same pages gets another key. */
	T_EQ(reg(fd, &q, 1, &mfd, 1, &rep2), 0);
	T_ASSERT(rep2.lkey != rep.lkey);
	T_EQ(t_destroy(fd, SRD_CMD_DEREG_MR, rep2.handle), 0);
	T_EQ(t_destroy(fd, SRD_CMD_DEREG_MR, rep2.handle), -EINVAL);

	/* The pd is in use. */
	T_EQ(t_destroy(fd, SRD_CMD_DEALLOC_PD, pd), -EBUSY);

	/* Argument checks, as the kernel makes them. */
	q = base;
	q.r.pd_handle = 12345;
	T_EQ(reg(fd, &q, 1, &mfd, 1, &rep2), -EINVAL);
	q = base;
	q.r.access = IBV_ACCESS_REMOTE_WRITE;
	T_EQ(reg(fd, &q, 1, &mfd, 1, &rep2), -EINVAL);
	q.r.access = IBV_ACCESS_REMOTE_ATOMIC;
	T_EQ(reg(fd, &q, 1, &mfd, 1, &rep2), -EINVAL);
	q.r.access = 1 << 15;
	T_EQ(reg(fd, &q, 1, &mfd, 1, &rep2), -EINVAL);
	/* An ODP registration carries no pieces. */
	q.r.access = IBV_ACCESS_ON_DEMAND;
	T_EQ(reg(fd, &q, 1, &mfd, 1, &rep2), -EINVAL);
	q = base;
	q.r.length = 0;
	T_EQ(reg(fd, &q, 1, &mfd, 1, &rep2), -EINVAL);
	q = base;
	q.r.length = 4 * PG; /* runs past the span */
	T_EQ(reg(fd, &q, 1, &mfd, 1, &rep2), -EINVAL);
	q = base;
	q.r.iova = base.r.addr + 1; /* page offset differs */
	T_EQ(reg(fd, &q, 1, &mfd, 1, &rep2), -EINVAL);
	q = base;
	q.p[0].len = 3 * PG; /* pieces do not cover the span */
	T_EQ(reg(fd, &q, 1, &mfd, 1, &rep2), -EINVAL);
	q = base;
	q.p[0].kind = 9;
	T_EQ(reg(fd, &q, 1, &mfd, 1, &rep2), -EINVAL);
	q = base;
	T_EQ(reg(fd, &q, 1, NULL, 0, &rep2), -EINVAL); /* fd missing */
	T_EQ(reg(fd, &q, 1, (int[]){ mfd, mfd }, 2, &rep2), -EINVAL);
	T_EQ(reg(fd, &q, 1, &unsealed, 1, &rep2), -EINVAL);
	T_ASSERT(!pipe(p));
	T_EQ(reg(fd, &q, 1, &p[0], 1, &rep2), -EINVAL);
	q.p[0].fd_offset = PG; /* beyond the memfd's end */
	T_EQ(reg(fd, &q, 1, &mfd, 1, &rep2), -EINVAL);
	q = base;
	q.r.num_pieces = 2; /* length says 1 */
	T_EQ(reg(fd, &q, 1, &mfd, 1, &rep2), -EINVAL);
	q = base;
	q.r.span_start += 1;
	T_EQ(reg(fd, &q, 1, &mfd, 1, &rep2), -EINVAL);

	/* Two pieces: memfd then process_vm memory. */
	q = base;
	q.r.num_pieces = 2;
	q.p[0].len = 2 * PG;
	q.p[1].len = 2 * PG;
	q.p[1].kind = SRD_PIECE_PVM;
	T_EQ(reg(fd, &q, 2, &mfd, 1, &rep2), 0);
	T_EQ(t_destroy(fd, SRD_CMD_DEREG_MR, rep2.handle), 0);

	/* REREG: same handle, same keys; bad flags refused. */
	{
		union {
			struct {
				uint32_t handle, flags;
				struct srd_reg_mr_req reg;
			};
			struct {
				uint8_t hdr[offsetof(struct srd_rereg_mr_req,
						     reg.piece)];
				struct srd_mr_piece p;
			};
		} rr = { .handle = rep.handle };
		struct srd_reg_mr_rep rrep;

		rr.flags = IBV_REREG_MR_CHANGE_ACCESS;
		rr.reg.access = IBV_ACCESS_LOCAL_WRITE;
		T_EQ(t_cmd(fd, SRD_CMD_REREG_MR, &rr, sizeof(rr) - sizeof(rr.p),
			   NULL, 0, &rrep, sizeof(rrep), NULL, NULL, NULL),
		     0);
		T_EQ(rrep.handle, rep.handle);
		T_EQ(rrep.lkey, rep.lkey);
		T_EQ(rrep.rkey, rep.rkey);
		rr.reg.access = IBV_ACCESS_REMOTE_WRITE;
		T_EQ(t_cmd(fd, SRD_CMD_REREG_MR, &rr, sizeof(rr) - sizeof(rr.p),
			   NULL, 0, NULL, 0, NULL, NULL, NULL),
		     -EINVAL);
		rr.flags = 1 << 5;
		T_EQ(t_cmd(fd, SRD_CMD_REREG_MR, &rr, sizeof(rr) - sizeof(rr.p),
			   NULL, 0, NULL, 0, NULL, NULL, NULL),
		     -EINVAL);
		/* New translation: the first page only. */
		rr.flags = IBV_REREG_MR_CHANGE_TRANSLATION;
		rr.reg = base.r;
		rr.reg.addr = (uintptr_t)map;
		rr.reg.iova = rr.reg.addr;
		rr.reg.length = PG;
		rr.reg.span_len = PG;
		rr.p.len = PG;
		rr.p.kind = SRD_PIECE_FD;
		T_EQ(t_cmd(fd, SRD_CMD_REREG_MR, &rr, sizeof(rr), &mfd, 1,
			   &rrep, sizeof(rrep), NULL, NULL, NULL),
		     0);
		T_EQ(t_destroy(fd, SRD_CMD_DEREG_MR, rrep.handle), 0);
	}

	close(p[0]);
	close(p[1]);
	close(unsealed);
	close(mfd);
	munmap(map, 4 * PG);
}

static void cq_tests(int fd)
{
	struct srd_create_cq_rep rep;
	struct srd_handle_rep ch;
	struct srd_resize_cq_req rs = { 0 };
	struct stat st;
	int memfd, chfd, n;
	int64_t cq;

	T_EQ(t_create_cq(fd, 0, SRD_NO_HANDLE, NULL, NULL), -EINVAL);
	T_EQ(t_create_cq(fd, 32768, SRD_NO_HANDLE, NULL, NULL), -EINVAL);
	T_EQ(t_create_cq(fd, 1, 777, NULL, NULL), -EINVAL);
	cq = t_create_cq(fd, 32767, SRD_NO_HANDLE, &rep, NULL);
	T_ASSERT(cq > 0);
	T_EQ(rep.cqe, 32767);
	T_EQ(t_destroy(fd, SRD_CMD_DESTROY_CQ, cq), 0);

	cq = t_create_cq(fd, 100, SRD_NO_HANDLE, &rep, &memfd);
	T_ASSERT(cq > 0);
	T_EQ(rep.log_entries, 7);
	T_EQ(rep.cqe, 127);
	T_EQ(rep.ring_offset, SRD_RING_CTL_BYTES);
	T_EQ(rep.map_len, SRD_RING_CTL_BYTES + 128 * 64);
	T_ASSERT(!fstat(memfd, &st));
	T_EQ(st.st_size, rep.map_len);
	T_ASSERT(ftruncate(memfd, 64) != 0); /* sealed */
	close(memfd);

	/* Resize: the client's cons must make sense. */
	rs.handle = cq;
	rs.cqe = 500;
	rs.cons = 5;
	T_EQ(t_cmd(fd, SRD_CMD_RESIZE_CQ, &rs, sizeof(rs), NULL, 0, NULL, 0,
		   NULL, NULL, NULL),
	     -EINVAL);
	rs.cons = 0;
	rs.cqe = 0;
	T_EQ(t_cmd(fd, SRD_CMD_RESIZE_CQ, &rs, sizeof(rs), NULL, 0, NULL, 0,
		   NULL, NULL, NULL),
	     -EINVAL);
	rs.cqe = 500;
	T_EQ(t_cmd(fd, SRD_CMD_RESIZE_CQ, &rs, sizeof(rs), NULL, 0, &rep,
		   sizeof(rep), NULL, &memfd, &n),
	     0);
	T_EQ(n, 1);
	T_EQ(rep.log_entries, 9);
	T_EQ(rep.cqe, 511);
	T_EQ(rep.handle, cq);
	close(memfd);
	T_EQ(t_destroy(fd, SRD_CMD_DESTROY_CQ, cq), 0);
	T_EQ(t_destroy(fd, SRD_CMD_DESTROY_CQ, cq), -EINVAL);

	/* A channel with a CQ on it is busy. */
	T_EQ(t_cmd(fd, SRD_CMD_CREATE_COMP_CHANNEL, NULL, 0, NULL, 0, &ch,
		   sizeof(ch), NULL, &chfd, &n),
	     0);
	T_EQ(n, 1);
	cq = t_create_cq(fd, 10, ch.handle, NULL, NULL);
	T_ASSERT(cq > 0);
	T_EQ(t_destroy(fd, SRD_CMD_DESTROY_COMP_CHANNEL, ch.handle), -EBUSY);
	T_EQ(t_destroy(fd, SRD_CMD_DESTROY_CQ, cq), 0);
	T_EQ(t_destroy(fd, SRD_CMD_DESTROY_COMP_CHANNEL, ch.handle), 0);
	close(chfd);
}

static void qp_srq_ah_tests(int fd, uint32_t pd)
{
	struct ibv_qp_cap cap = { 10, 20, 3, 2, 100 };
	struct srd_create_qp_rep rep;
	struct srd_create_srq_req sreq = { .pd_handle = pd,
					   .max_wr = 100,
					   .max_sge = 4 };
	struct srd_create_srq_rep srep;
	struct srd_modify_srq_req msrq = { 0 };
	struct srd_query_srq_rep qsrq;
	struct srd_query_qp_req qq = { 0 };
	struct srd_query_qp_rep qrep;
	struct srd_create_ah_req ah = { .pd_handle = pd };
	struct srd_handle_rep ahrep;
	int64_t cq, qp, qp2, srq;
	int memfd, n;

	cq = t_create_cq(fd, 64, SRD_NO_HANDLE, NULL, NULL);
	T_ASSERT(cq > 0);
	qp = t_create_qp(fd, pd, cq, SRD_NO_HANDLE, IBV_QPT_RC, &cap, &rep,
			 &memfd);
	T_ASSERT(qp >= 0x11);
	T_EQ(rep.qp_num, qp);
	T_EQ(rep.sq_entries, 16);
	T_EQ(rep.rq_entries, 32);
	T_ASSERT(rep.cap.max_send_wr >= 10 && rep.cap.max_recv_wr >= 20);
	T_ASSERT(rep.cap.max_send_sge >= 3 && rep.cap.max_recv_sge >= 2);
	T_ASSERT(rep.cap.max_inline_data >= 100);
	T_ASSERT(rep.cap.max_inline_data <= 512);
	T_ASSERT(rep.sq_slot_size >= 64 + 100);
	T_ASSERT(rep.sq_offset >= SRD_RING_CTL_BYTES);
	T_ASSERT(rep.rq_offset >= rep.sq_offset + 16 * rep.sq_slot_size);
	T_ASSERT(rep.map_len >= rep.rq_offset + 32 * rep.rq_slot_size);
	close(memfd);
	T_EQ(t_destroy(fd, SRD_CMD_DESTROY_CQ, cq), -EBUSY);

	qq.handle = qp;
	T_EQ(t_cmd(fd, SRD_CMD_QUERY_QP, &qq, sizeof(qq), NULL, 0, &qrep,
		   sizeof(qrep), NULL, NULL, NULL),
	     0);
	T_EQ(qrep.attr.qp_state, IBV_QPS_RESET);
	T_EQ(qrep.cap.max_send_wr, rep.cap.max_send_wr);
	T_EQ(qrep.attr.cap.max_recv_wr, rep.cap.max_recv_wr);
	T_EQ(qrep.sq_sig_all, 0);

	/* Capability and type checks. */
	cap.max_send_wr = 16385;
	T_EQ(t_create_qp(fd, pd, cq, SRD_NO_HANDLE, IBV_QPT_RC, &cap, NULL,
			 NULL),
	     -EINVAL);
	cap.max_send_wr = 1;
	cap.max_recv_sge = 33;
	T_EQ(t_create_qp(fd, pd, cq, SRD_NO_HANDLE, IBV_QPT_UD, &cap, NULL,
			 NULL),
	     -EINVAL);
	cap.max_recv_sge = 1;
	cap.max_inline_data = 513;
	T_EQ(t_create_qp(fd, pd, cq, SRD_NO_HANDLE, IBV_QPT_UC, &cap, NULL,
			 NULL),
	     -EINVAL);
	cap.max_inline_data = 0;
	T_EQ(t_create_qp(fd, pd, cq, SRD_NO_HANDLE, IBV_QPT_DRIVER, &cap, NULL,
			 NULL),
	     -EOPNOTSUPP);
	T_EQ(t_create_qp(fd, pd, cq, SRD_NO_HANDLE, 77, &cap, NULL, NULL),
	     -EINVAL);
	T_EQ(t_create_qp(fd, pd, 999, SRD_NO_HANDLE, IBV_QPT_RC, &cap, NULL,
			 NULL),
	     -EINVAL);
	T_EQ(t_create_qp(fd, 999, cq, SRD_NO_HANDLE, IBV_QPT_RC, &cap, NULL,
			 NULL),
	     -EINVAL);
	T_EQ(t_create_qp(fd, pd, cq, 999, IBV_QPT_RC, &cap, NULL, NULL),
	     -EINVAL);

	/* SRQ. */
	sreq.max_wr = 0;
	T_EQ(t_cmd(fd, SRD_CMD_CREATE_SRQ, &sreq, sizeof(sreq), NULL, 0, NULL,
		   0, NULL, NULL, NULL),
	     -EINVAL);
	sreq.max_wr = 16385;
	T_EQ(t_cmd(fd, SRD_CMD_CREATE_SRQ, &sreq, sizeof(sreq), NULL, 0, NULL,
		   0, NULL, NULL, NULL),
	     -EINVAL);
	sreq.max_wr = 100;
	sreq.max_sge = 28;
	T_EQ(t_cmd(fd, SRD_CMD_CREATE_SRQ, &sreq, sizeof(sreq), NULL, 0, NULL,
		   0, NULL, NULL, NULL),
	     -EINVAL);
	sreq.max_sge = 4;
	sreq.srq_limit = 101;
	T_EQ(t_cmd(fd, SRD_CMD_CREATE_SRQ, &sreq, sizeof(sreq), NULL, 0, NULL,
		   0, NULL, NULL, NULL),
	     -EINVAL);
	sreq.srq_limit = 0;
	T_EQ(t_cmd(fd, SRD_CMD_CREATE_SRQ, &sreq, sizeof(sreq), NULL, 0, &srep,
		   sizeof(srep), NULL, &memfd, &n),
	     0);
	T_EQ(n, 1);
	close(memfd);
	srq = srep.handle;
	T_EQ(srep.entries, 128);
	T_ASSERT(srep.max_wr >= 100 && srep.max_sge >= 4);
	T_EQ(srep.map_len, SRD_RING_CTL_BYTES + 128 * srep.slot_size);
	msrq.handle = srq;
	msrq.attr_mask = IBV_SRQ_LIMIT;
	msrq.attr.srq_limit = 10;
	T_EQ(t_cmd(fd, SRD_CMD_MODIFY_SRQ, &msrq, sizeof(msrq), NULL, 0, NULL,
		   0, NULL, NULL, NULL),
	     0);
	msrq.attr.srq_limit = srep.max_wr + 1;
	T_EQ(t_cmd(fd, SRD_CMD_MODIFY_SRQ, &msrq, sizeof(msrq), NULL, 0, NULL,
		   0, NULL, NULL, NULL),
	     -EINVAL);
	msrq.attr_mask = IBV_SRQ_MAX_WR;
	msrq.attr.max_wr = 1000;
	T_EQ(t_cmd(fd, SRD_CMD_MODIFY_SRQ, &msrq, sizeof(msrq), NULL, 0, NULL,
		   0, NULL, NULL, NULL),
	     -EINVAL);
	T_EQ(t_cmd(fd, SRD_CMD_QUERY_SRQ, &(struct srd_handle_req){ srq },
		   sizeof(struct srd_handle_req), NULL, 0, &qsrq, sizeof(qsrq),
		   NULL, NULL, NULL),
	     0);
	T_EQ(qsrq.attr.srq_limit, 10);
	T_EQ(qsrq.attr.max_wr, srep.max_wr);

	/* A QP on the SRQ: no RQ, receive caps ignored. */
	cap.max_recv_wr = 1 << 30;
	cap.max_recv_sge = 1000;
	qp2 = t_create_qp(fd, pd, cq, srq, IBV_QPT_UD, &cap, &rep, NULL);
	T_ASSERT(qp2 >= 0x11 && qp2 != qp); /* QPNs are drawn at random */
	T_EQ(rep.rq_entries, 0);
	T_EQ(rep.cap.max_recv_wr, 0);
	T_EQ(t_destroy(fd, SRD_CMD_DESTROY_SRQ, srq), -EBUSY);
	T_EQ(t_destroy(fd, SRD_CMD_DESTROY_QP, qp2), 0);
	T_EQ(t_destroy(fd, SRD_CMD_DESTROY_SRQ, srq), 0);
	T_EQ(t_destroy(fd, SRD_CMD_DESTROY_SRQ, srq), -EINVAL);

	/* AH: RoCE needs the GRH and a valid source GID. */
	ah.attr.port_num = 1;
	ah.attr.is_global = 1;
	ah.attr.grh.sgid_index = 0;
	ah.attr.grh.hop_limit = 64;
	T_EQ(t_cmd(fd, SRD_CMD_CREATE_AH, &ah, sizeof(ah), NULL, 0, &ahrep,
		   sizeof(ahrep), NULL, NULL, NULL),
	     0);
	ah.attr.is_global = 0;
	T_EQ(t_cmd(fd, SRD_CMD_CREATE_AH, &ah, sizeof(ah), NULL, 0, NULL, 0,
		   NULL, NULL, NULL),
	     -EINVAL);
	ah.attr.is_global = 1;
	ah.attr.grh.sgid_index = SRD_MAX_GIDS - 1;
	T_EQ(t_cmd(fd, SRD_CMD_CREATE_AH, &ah, sizeof(ah), NULL, 0, NULL, 0,
		   NULL, NULL, NULL),
	     -EINVAL);
	ah.attr.grh.sgid_index = 0;
	ah.attr.port_num = 2;
	T_EQ(t_cmd(fd, SRD_CMD_CREATE_AH, &ah, sizeof(ah), NULL, 0, NULL, 0,
		   NULL, NULL, NULL),
	     -EINVAL);
	T_EQ(t_destroy(fd, SRD_CMD_DEALLOC_PD, pd), -EBUSY);
	T_EQ(t_destroy(fd, SRD_CMD_DESTROY_AH, ahrep.handle), 0);
	T_EQ(t_destroy(fd, SRD_CMD_DESTROY_AH, ahrep.handle), -EINVAL);

	T_EQ(t_destroy(fd, SRD_CMD_DESTROY_QP, qp), 0);
	T_EQ(t_destroy(fd, SRD_CMD_DESTROY_QP, qp), -EINVAL);
	T_EQ(t_destroy(fd, SRD_CMD_DESTROY_CQ, cq), 0);
}

/* Another client names c1's objects: refused, and they still work. */
static void foreign_tests(const char *name, int fd1, uint32_t pd1)
{
	struct srd_query_qp_req qq = { 0 };
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct t_client c2;
	int64_t cq1, qp1, pd2, cq2, mr1;
	struct srd_reg_mr_rep mrep;

	cq1 = t_create_cq(fd1, 4, SRD_NO_HANDLE, NULL, NULL);
	qp1 = t_create_qp(fd1, pd1, cq1, SRD_NO_HANDLE, IBV_QPT_RC, NULL, NULL,
			  NULL);
	mr1 = t_reg_mr(fd1, pd1, PG, IBV_ACCESS_LOCAL_WRITE, &mrep, NULL);
	T_ASSERT(cq1 > 0 && qp1 > 0 && mr1 > 0);

	t_client_open(&c2, name);
	pd2 = t_alloc_pd(c2.fd);
	cq2 = t_create_cq(c2.fd, 4, SRD_NO_HANDLE, NULL, NULL);
	T_ASSERT(pd2 > 0 && cq2 > 0);
	T_EQ(t_destroy(c2.fd, SRD_CMD_DEALLOC_PD, pd1), -EINVAL);
	T_EQ(t_destroy(c2.fd, SRD_CMD_DESTROY_CQ, cq1), -EINVAL);
	T_EQ(t_destroy(c2.fd, SRD_CMD_DESTROY_QP, qp1), -EINVAL);
	T_EQ(t_destroy(c2.fd, SRD_CMD_DEREG_MR, mr1), -EINVAL);
	T_EQ(t_create_qp(c2.fd, pd1, cq2, SRD_NO_HANDLE, IBV_QPT_RC, NULL, NULL,
			 NULL),
	     -EINVAL);
	T_EQ(t_create_qp(c2.fd, pd2, cq1, SRD_NO_HANDLE, IBV_QPT_RC, NULL, NULL,
			 NULL),
	     -EINVAL);
	T_EQ(t_reg_mr(c2.fd, pd1, PG, 0, NULL, NULL), -EINVAL);
	T_EQ(t_modify_qp(c2.fd, qp1, &attr, IBV_QP_STATE, NULL), -EINVAL);
	qq.handle = qp1;
	T_EQ(t_cmd(c2.fd, SRD_CMD_QUERY_QP, &qq, sizeof(qq), NULL, 0, NULL, 0,
		   NULL, NULL, NULL),
	     -EINVAL);
	/* c2 leaving takes nothing of c1's. */
	t_client_close(&c2);
	T_EQ(t_cmd(fd1, SRD_CMD_QUERY_QP, &qq, sizeof(qq), NULL, 0, NULL, 0,
		   NULL, NULL, NULL),
	     0);
	T_EQ(t_destroy(fd1, SRD_CMD_DESTROY_QP, qp1), 0);
	T_EQ(t_destroy(fd1, SRD_CMD_DESTROY_CQ, cq1), 0);
	T_EQ(t_destroy(fd1, SRD_CMD_DEREG_MR, mr1), 0);
}

int main(void)
{
	struct t_daemon td;
	struct t_client c;
	int64_t pd;

	t_daemon_start(&td, NULL);
	t_client_open(&c, td.name);
	pd = t_alloc_pd(c.fd);
	T_ASSERT(pd > 0);

	mr_tests(c.fd, pd);
	cq_tests(c.fd);
	qp_srq_ah_tests(c.fd, pd);
	foreign_tests(td.name, c.fd, pd);

	/* Everything is gone: the PD goes too. */
	{
		struct srd_reg_mr_rep r;
		int64_t mr = t_reg_mr(c.fd, pd, PG, 0, &r, NULL);

		T_ASSERT(mr > 0);
		T_EQ(t_destroy(c.fd, SRD_CMD_DEREG_MR, mr), 0);
	}
	/* mr_tests left its first MR: dereg it by handle scan. */
	for (uint32_t h = 1; h < 64; h++)
		t_destroy(c.fd, SRD_CMD_DEREG_MR, h);
	T_EQ(t_destroy(c.fd, SRD_CMD_DEALLOC_PD, pd), 0);
	T_EQ(t_destroy(c.fd, SRD_CMD_DEALLOC_PD, pd), -EINVAL);

	t_client_close(&c);
	T_EQ(t_daemon_stop(&td), 0);
	return T_EXIT_PASS;
}
