/* SPDX-License-Identifier: MIT */
/*
 * Another user cannot join an XRC domain through a file she may not read
 * (root only, else skipped).  User A makes a domain on her file (mode
 * 0600), a target QP and an XRC SRQ in it, and closes the file.  User B:
 *
 *   - opens the file with O_PATH (no read right needed) and opens a
 *     domain through it: EBADF, as uverbs' fdget() refuses O_PATH; a
 *     write-only descriptor of his own file is EBADF too;
 *   - once A has unlinked the file (her domain lives on), makes new files
 *     beside it: none gets its inode number, as the domain holds the
 *     inode, and a domain opened on one is a new, empty one: A's target
 *     QP cannot be opened in it (EINVAL), and a SEND naming A's SRQ
 *     through a target of B's domain is refused (REM_INV_REQ_ERR) and
 *     never reaches her.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t_xrc.h"

#define NFILES 256

struct a_info {
	uint64_t dev, ino; /* of A's file */
	uint32_t tgt_qpn, srqn;
};

static uid_t uid_a, uid_b;
static char dir[64], path_a[96];

static struct ibv_qp *qp_open(struct ibv_context *ctx, struct ibv_xrcd *xrcd,
			      uint32_t qpn)
{
	struct ibv_qp_open_attr oa;

	memset(&oa, 0, sizeof(oa));
	oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
		       IBV_QP_OPEN_ATTR_TYPE;
	oa.qp_num = qpn;
	oa.xrcd = xrcd;
	oa.qp_type = IBV_QPT_XRC_RECV;
	return ibv_open_qp(ctx, &oa);
}

static int child_a(int fd, void *arg)
{
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
	struct ibv_qp *tgt;
	struct ibv_cq *cq;
	struct a_info info;
	struct t_buf b;
	struct t_dev d;
	struct stat st;
	int f;

	(void)arg;
	t_become(uid_a);
	t_dev_open(&d);
	f = open(path_a, O_RDWR | O_CREAT | O_EXCL, 0600);
	T_ASSERT(f >= 0);
	T_OK(fstat(f, &st));
	xrcd = T_NONNULL(t_xrcd_open(d.ctx, f, O_CREAT | O_EXCL));
	/* The domain alone keeps the file now. */
	close(f);
	cq = t_cq_create(&d, 16, NULL);
	t_buf_alloc(&d, &b, 4096, T_ACCESS_ALL);
	srq = T_NONNULL(t_xsrq_create(d.ctx, xrcd, cq, d.pd, 8));
	for (int i = 0; i < 8; i++)
		t_post_srq_recv(srq, i, b.mr, b.p, 4096);
	tgt = T_NONNULL(t_xrc_tgt_create(d.ctx, xrcd));
	info.dev = st.st_dev;
	info.ino = st.st_ino;
	info.tgt_qpn = tgt->qp_num;
	T_OK(ibv_get_srq_num(srq, &info.srqn));
	t_sock_send(fd, &info, sizeof(info));

	t_sock_sync(fd); /* B tried O_PATH */
	T_OK(unlink(path_a));
	t_sock_sync(fd);
	t_sock_sync(fd); /* B is done */
	T_EXPECT_NO_WC(cq, T_QUIET_MS);
	T_OK(ibv_destroy_qp(tgt));
	T_OK(ibv_destroy_srq(srq));
	T_OK(ibv_close_xrcd(xrcd));
	T_OK(ibv_destroy_cq(cq));
	t_buf_free(&b);
	t_dev_close(&d);
	return 0;
}

static int child_b(int fd, void *arg)
{
	static int files[NFILES];
	struct ibv_qp *tgt, *ini;
	struct ibv_xrcd *xrcd;
	struct a_info a;
	struct ibv_cq *cq;
	struct ibv_wc wc;
	struct t_buf b;
	struct t_dev d;
	struct stat st;
	char path[128];
	int f, n, reused = -1;

	(void)arg;
	t_sock_recv(fd, &a, sizeof(a));
	t_become(uid_b);
	t_dev_open(&d);

	/* (a) The file is not B's to read, but O_PATH needs no right. */
	T_ASSERT(open(path_a, O_RDONLY) < 0 && errno == EACCES);
	f = open(path_a, O_PATH);
	T_ASSERT(f >= 0);
	T_OK(fstat(f, &st));
	T_EQ(st.st_ino, a.ino);
	T_NULL_ERRNO(t_xrcd_open(d.ctx, f, 0), EBADF);
	T_NULL_ERRNO(t_xrcd_open(d.ctx, f, O_CREAT), EBADF);
	close(f);
	snprintf(path, sizeof(path), "%s/b.wronly", dir);
	f = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	T_ASSERT(f >= 0);
	T_NULL_ERRNO(t_xrcd_open(d.ctx, f, O_CREAT), EBADF);
	close(f);
	T_OK(unlink(path));
	t_sock_sync(fd);

	/* (b) A's file is unlinked; new files beside it, kept so that
	 * each takes another inode, until one has its number. */
	t_sock_sync(fd);
	for (n = 0; n < NFILES && reused < 0; n++) {
		snprintf(path, sizeof(path), "%s/b.%d", dir, n);
		files[n] = open(path, O_RDONLY | O_CREAT | O_EXCL, 0600);
		T_ASSERT(files[n] >= 0);
		T_OK(fstat(files[n], &st));
		if (st.st_dev == a.dev && st.st_ino == a.ino)
			reused = n;
	}
	if (reused >= 0)
		printf("inode %llu of the domain's file reused by file %d\n",
		       (unsigned long long)a.ino, reused);
	f = files[n - 1];
	/* No domain on the new file... */
	T_NULL_ERRNO(t_xrcd_open(d.ctx, f, 0), EAGAIN);
	/* ...and the one made there is not A's. */
	xrcd = T_NONNULL(t_xrcd_open(d.ctx, f, O_CREAT));
	T_NULL_ERRNO(qp_open(d.ctx, xrcd, a.tgt_qpn), EINVAL);
	cq = t_cq_create(&d, 16, NULL);
	t_buf_alloc(&d, &b, 4096, T_ACCESS_ALL);
	tgt = T_NONNULL(t_xrc_tgt_create(d.ctx, xrcd));
	ini = T_NONNULL(t_xrc_ini_create(&d, cq, 4, 0));
	t_xrc_connect(&d, ini, 0x10, tgt, 0x20);
	t_fill(b.p, 64, 0xb0b);
	t_xrc_send(ini, 1, &b, 64, a.srqn);
	T_EXPECT_WC(cq, &wc, 1, IBV_WC_REM_INV_REQ_ERR, T_ANY_OPCODE);
	/* The domain holds its inode: the number stayed A's. */
	T_EQ(reused, -1);
	t_sock_sync(fd);

	T_OK(ibv_destroy_qp(ini));
	T_OK(ibv_destroy_qp(tgt));
	T_OK(ibv_close_xrcd(xrcd));
	T_OK(ibv_destroy_cq(cq));
	t_buf_free(&b);
	for (int i = 0; i < n; i++) {
		close(files[i]);
		snprintf(path, sizeof(path), "%s/b.%d", dir, i);
		unlink(path);
	}
	t_dev_close(&d);
	return 0;
}

int main(void)
{
	struct t_child a, b;
	struct a_info info;
	struct t_dev d;

	t_init("xrc_users");
	if (geteuid() != 0)
		t_skip("needs root to make two users");
	uid_a = t_user("srdtest_a");
	uid_b = t_user("srdtest_b");
	/* A directory both may make files in, as /tmp. */
	snprintf(dir, sizeof(dir), "/tmp/srd_xrcu.%d", (int)getpid());
	T_OK(mkdir(dir, 0700));
	T_OK(chmod(dir, 01777));
	snprintf(path_a, sizeof(path_a), "%s/a", dir);
	t_dev_open(&d); /* root's daemon on this test's name */

	t_fork(&a, child_a, NULL);
	t_fork(&b, child_b, NULL);
	t_sock_recv(a.fd, &info, sizeof(info));
	t_sock_send(b.fd, &info, sizeof(info));
	t_sock_sync(b.fd); /* (a) */
	t_sock_sync(a.fd);
	t_sock_sync(a.fd); /* unlinked */
	t_sock_sync(b.fd);
	t_sock_sync(b.fd); /* (b) */
	t_sock_sync(a.fd);
	T_EQ(t_child_wait(&b, 30000), 0);
	T_EQ(t_child_wait(&a, 30000), 0);
	unlink(path_a);
	rmdir(dir);
	t_dev_close(&d);
	t_pass();
}
