/* SPDX-License-Identifier: MIT */
/*
 * A registration reaches the address space it was made in, never the
 * image a later exec puts under the same pid.  User U's exporter maps
 * memory at 0x400000, registers it in place (no move), hands its context
 * to U's importer and execs a set-uid-root program whose own image is at
 * 0x400000 (tests/func/helpers/pause_fixed.c, static, not PIE).  It asks
 * for SOFTRDMA_MEM_ACCESS=pidfd, the mode that reached memory by pid.
 * Before the exec the importer's RDMA READ of the MR returns the
 * exporter's bytes; after it, a READ and a WRITE through the same rkey
 * complete with IBV_WC_REM_ACCESS_ERR, the READ brings no byte of root's
 * image and root's image is unchanged.  Root only (a root daemon, another
 * user and a set-uid copy); skipped otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_util.h"

#define FIXED_ADDR 0x400000UL
#define LEN 4096
#define SEED_EXPORTER 21
#define SEED_WRITE 22

struct msg {
	uint32_t pd_handle;
	uint32_t rkey;
};

static uid_t uid;
static char suid_prog[128];

static int exporter(int sock, void *arg)
{
	struct ibv_mr *mr;
	struct t_dev d;
	struct msg m;
	uint8_t *p;
	char c = 0;

	(void)arg;
	t_become(uid);
	setenv("SOFTRDMA_MEM_ACCESS", "pidfd", 1);
	setenv("SOFTRDMA_MOVE_GUARD", "none", 1);
	p = mmap((void *)FIXED_ADDR, LEN, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != (void *)FIXED_ADDR)
		T_FAIL("mmap at %#lx: %s", FIXED_ADDR, t_errname(errno));
	t_fill(p, LEN, SEED_EXPORTER);
	t_dev_open(&d);
	mr = T_NONNULL(ibv_reg_mr(d.pd, p, LEN, T_ACCESS_ALL));
	m.pd_handle = d.pd->handle;
	m.rkey = mr->rkey;
	t_sock_send_fd(sock, d.ctx->cmd_fd, &m, sizeof(m));
	t_sock_recv(sock, &c, 1);
	execl(suid_prog, "pause_fixed", (char *)NULL);
	T_FAIL("exec %s: %s", suid_prog, t_errname(errno));
	return 1;
}

/* One RC pair: the requester in the importer's own context, the
 * responder in the exporter's PD; the status of one operation on the
 * exporter's MR. */
static enum ibv_wc_status one_op(struct t_dev *own, struct t_dev *imp,
				 enum ibv_wr_opcode op, struct t_buf *b,
				 uint32_t rkey)
{
	struct ibv_cq *cq_req = t_cq_create(own, 16, NULL);
	struct ibv_cq *cq_resp = t_cq_create(imp, 16, NULL);
	struct ibv_qp_init_attr ia;
	struct ibv_qp *req, *resp;
	struct t_ep ep_req, ep_resp;
	struct t_conn_opts o;
	struct ibv_wc wc;

	t_qp_init_attr(&ia, IBV_QPT_RC, cq_req, cq_req);
	req = t_qp_create(own, &ia);
	t_qp_init_attr(&ia, IBV_QPT_RC, cq_resp, cq_resp);
	resp = t_qp_create(imp, &ia);
	t_ep_local(own, req, 100, &ep_req);
	t_ep_local(imp, resp, 200, &ep_resp);
	t_conn_opts_init(&o);
	t_qp_connect(req, 100, &ep_resp, &o);
	t_qp_connect(resp, 200, &ep_req, &o);
	t_post_send(req, 1, op, b->mr, b->p, LEN, IBV_SEND_SIGNALED, FIXED_ADDR,
		    rkey);
	T_EQ(t_poll(cq_req, &wc, T_WAIT_MS), 1);
	T_EQ(wc.wr_id, 1);
	T_OK(ibv_destroy_qp(req));
	T_OK(ibv_destroy_qp(resp));
	T_OK(ibv_destroy_cq(cq_req));
	T_OK(ibv_destroy_cq(cq_resp));
	return wc.status;
}

static int importer(int sock, void *arg)
{
	struct ibv_context *ctx;
	struct t_dev own, imp;
	struct t_buf b;
	struct msg m;
	int fd;

	(void)arg;
	fd = t_sock_recv_fd(sock, &m, sizeof(m));
	t_become(uid);
	ctx = T_NONNULL(ibv_import_device(fd));
	t_dev_of(&imp, ctx, T_NONNULL(ibv_import_pd(ctx, m.pd_handle)));
	t_dev_open(&own);
	t_buf_alloc(&own, &b, LEN, T_ACCESS_ALL);

	/* The path works while the registrant lives. */
	memset(b.p, 0, LEN);
	T_EQ(one_op(&own, &imp, IBV_WR_RDMA_READ, &b, m.rkey), IBV_WC_SUCCESS);
	T_CHECK_FILL(b.p, LEN, SEED_EXPORTER);
	t_sock_sync(sock);
	t_sock_sync(sock); /* the exporter is root's program now */

	memset(b.p, 0, LEN);
	T_EQ(one_op(&own, &imp, IBV_WR_RDMA_READ, &b, m.rkey),
	     IBV_WC_REM_ACCESS_ERR);
	if (!memcmp(b.p, "\177ELF", 4))
		T_FAIL("READ brought the set-uid program's ELF header");
	for (size_t i = 0; i < LEN; i++)
		T_EQ(b.p[i], 0);
	t_fill(b.p, LEN, SEED_WRITE);
	T_EQ(one_op(&own, &imp, IBV_WR_RDMA_WRITE, &b, m.rkey),
	     IBV_WC_REM_ACCESS_ERR);
	t_buf_free(&b);
	t_dev_close(&own);
	ibv_unimport_pd(imp.pd);
	T_OK(ibv_close_device(ctx));
	return 0;
}

/* Root's image at 0x400000 is its own ELF header, untouched. */
static void check_root_image(pid_t pid)
{
	uint8_t img[LEN], pat[LEN];
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		T_FAIL("open %s: %s", path, t_errname(errno));
	T_EQ(pread(fd, img, LEN, FIXED_ADDR), LEN);
	close(fd);
	T_EQ(memcmp(img, "\177ELF", 4), 0);
	t_fill(pat, LEN, SEED_WRITE);
	if (!memcmp(img + 64, pat + 64, 64))
		T_FAIL("root's image holds the importer's WRITE");
}

int main(void)
{
	struct t_child e, i;
	struct t_dev d;
	struct msg m;
	char c = 0;
	int fd;

	t_init("exec_mem");
	if (geteuid())
		t_skip("not root: needs a root daemon and another user");
	uid = t_user("srdexecuser");
	t_suid_copy(PAUSE_FIXED, "pause_fixed", suid_prog, sizeof(suid_prog));
	t_dev_open(&d); /* the daemon is root's, as a system daemon is */
	t_fork(&e, exporter, NULL);
	fd = t_sock_recv_fd(e.fd, &m, sizeof(m));
	t_fork(&i, importer, NULL);
	t_sock_send_fd(i.fd, fd, &m, sizeof(m));
	close(fd);
	t_sock_sync(i.fd); /* the control READ is done */
	t_sock_send(e.fd, &c, 1);
	T_ASSERT(t_wait_euid(e.pid, 0));
	t_sock_sync(i.fd);
	T_EQ(t_child_wait(&i, 30000), 0);
	check_root_image(e.pid);
	kill(e.pid, SIGKILL);
	waitpid(e.pid, NULL, 0);
	t_suid_remove(suid_prog);
	t_dev_close(&d);
	t_pass();
}
