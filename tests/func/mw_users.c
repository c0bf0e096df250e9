/* SPDX-License-Identifier: MIT */
/*
 * A memory window's rkey cannot be guessed from another's (root only,
 * else skipped).  User A binds a type 1 window over her buffer for remote
 * READ and WRITE; user B, whose RC QPs are connected to hers and who knows
 * the buffer's address, binds a window of his own and tries the keys
 * around his: the indices next to his, each with his key byte and the
 * ones beside it, by READ and by WRITE, one QP each.  Every try is
 * REM_ACCESS_ERR, nothing of A's reaches B and her buffer is intact.
 * Then the rkeys of many windows: their indices are no counter, their
 * first key bytes vary, no two are equal, and a window made again does
 * not get the last one's key.
 */
#include <stdio.h>
#include <unistd.h>

#include "t_util.h"

#define LEN 4096
#define SEED_A 0xa11ce
#define SEED_B 0xb0b
#define SPREAD 3 /* indices tried each side of B's own */
#define NTRY (2 * SPREAD * 3 * 2)
#define NMW 64

static uid_t uid_a, uid_b;

static int child_a(int fd, void *arg)
{
	struct ibv_qp *qp[NTRY];
	struct t_ep ep[NTRY], peer[NTRY];
	struct ibv_qp_init_attr ia;
	struct t_conn_opts o;
	struct ibv_mw_bind bind;
	struct ibv_mw *mw;
	struct ibv_cq *cq;
	struct t_dev d;
	uint64_t addr;
	uint8_t *buf;
	struct ibv_mr *mr;

	(void)arg;
	t_become(uid_a);
	t_dev_open(&d);
	buf = t_zalloc(LEN);
	t_fill(buf, LEN, SEED_A);
	/* The MR itself grants nothing remote: only the window does. */
	mr = T_NONNULL(ibv_reg_mr(d.pd, buf, LEN,
				  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND));
	cq = t_cq_create(&d, 2 * NTRY, NULL);
	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	for (int i = 0; i < NTRY; i++) {
		qp[i] = t_qp_create(&d, &ia);
		t_ep_local(&d, qp[i], 0x100 + i, &ep[i]);
	}
	t_sock_send(fd, ep, sizeof(ep));
	t_sock_recv(fd, peer, sizeof(peer));
	t_conn_opts_init(&o);
	for (int i = 0; i < NTRY; i++)
		t_qp_connect(qp[i], ep[i].psn, &peer[i], &o);

	/* A's window, before B's: with windows handed out in order, B's
	 * key would tell hers. */
	mw = T_NONNULL(ibv_alloc_mw(d.pd, IBV_MW_TYPE_1));
	memset(&bind, 0, sizeof(bind));
	bind.wr_id = 1;
	bind.send_flags = IBV_SEND_SIGNALED;
	bind.bind_info.mr = mr;
	bind.bind_info.addr = (uintptr_t)buf;
	bind.bind_info.length = LEN;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ |
					 IBV_ACCESS_REMOTE_WRITE;
	T_OK(ibv_bind_mw(qp[0], mw, &bind));
	T_EXPECT_WC(cq, NULL, 1, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	printf("A's window rkey 0x%08x\n", mw->rkey);
	addr = (uintptr_t)buf;
	t_sock_send(fd, &addr, sizeof(addr));

	t_sock_sync(fd); /* B has tried */
	T_CHECK_FILL(buf, LEN, SEED_A);
	for (int i = 0; i < NTRY; i++)
		T_OK(ibv_destroy_qp(qp[i]));
	T_OK(ibv_dealloc_mw(mw));
	T_OK(ibv_dereg_mr(mr));
	T_OK(ibv_destroy_cq(cq));
	t_free(buf, LEN);
	t_dev_close(&d);
	return 0;
}

/* The keys B tries, around his own: index +-1..SPREAD, key byte -1, +0,
 * +1, each by READ (even) and WRITE (odd). */
static uint32_t guess(uint32_t own, int i)
{
	int n = i / 2, k = n % 3 - 1, s = n / 3; /* s: 0 .. 2 * SPREAD - 1 */
	int di = s < SPREAD ? -(s + 1) : s - SPREAD + 1;
	uint32_t idx = ((own >> 8) + (uint32_t)di) & 0xffffff;

	return idx << 8 | ((own + (uint32_t)k) & 0xff);
}

/* The rkeys of many windows of one context. */
static void keys_check(struct t_dev *d)
{
	struct ibv_mw *mw[NMW];
	uint32_t key[NMW], last;
	bool seen[256] = { false };
	int bytes = 0;

	for (int i = 0; i < NMW; i++) {
		mw[i] = T_NONNULL(ibv_alloc_mw(d->pd, IBV_MW_TYPE_1));
		key[i] = mw[i]->rkey;
		bytes += !seen[key[i] & 0xff];
		seen[key[i] & 0xff] = true;
	}
	/* A counter gives NMW - 1 steps, random draws about 2 %. */
	T_LT(t_counter_steps(key, NMW, 0xffffff, 8), NMW / 4);
	T_LT(t_counter_steps(key, NMW, 0xff, 0), NMW / 4);
	/* 64 random bytes take about 56 values; a fixed first byte one. */
	T_GT(bytes, NMW / 4);
	for (int i = 0; i < NMW; i++)
		for (int j = 0; j < i; j++)
			T_NE(key[i], key[j]);
	for (int i = 0; i < NMW; i++)
		T_OK(ibv_dealloc_mw(mw[i]));
	/* Made again, a window never gets the last one's key back. */
	last = key[NMW - 1];
	for (int i = 0; i < 16; i++) {
		struct ibv_mw *m =
			T_NONNULL(ibv_alloc_mw(d->pd, IBV_MW_TYPE_1));

		T_NE(m->rkey, last);
		last = m->rkey;
		T_OK(ibv_dealloc_mw(m));
	}
}

static int child_b(int fd, void *arg)
{
	struct ibv_qp *qp[NTRY];
	struct t_ep ep[NTRY], peer[NTRY];
	struct ibv_qp_init_attr ia;
	struct t_conn_opts o;
	struct ibv_mw_bind bind;
	struct ibv_mw *mw;
	struct ibv_cq *cq;
	struct ibv_wc wc;
	struct t_dev d;
	struct t_buf b;
	uint64_t addr;
	int hits = 0;

	(void)arg;
	t_become(uid_b);
	t_dev_open(&d);
	t_buf_alloc(&d, &b, NTRY * 64, T_ACCESS_ALL | IBV_ACCESS_MW_BIND);
	cq = t_cq_create(&d, 2 * NTRY, NULL);
	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	for (int i = 0; i < NTRY; i++) {
		qp[i] = t_qp_create(&d, &ia);
		t_ep_local(&d, qp[i], 0x200 + i, &ep[i]);
	}
	t_sock_recv(fd, peer, sizeof(peer));
	t_sock_send(fd, ep, sizeof(ep));
	t_conn_opts_init(&o);
	o.retry_cnt = 1;
	for (int i = 0; i < NTRY; i++)
		t_qp_connect(qp[i], ep[i].psn, &peer[i], &o);
	t_sock_recv(fd, &addr, sizeof(addr));

	/* B's own window, bound as A's was. */
	mw = T_NONNULL(ibv_alloc_mw(d.pd, IBV_MW_TYPE_1));
	memset(&bind, 0, sizeof(bind));
	bind.wr_id = 1000;
	bind.send_flags = IBV_SEND_SIGNALED;
	bind.bind_info.mr = b.mr;
	bind.bind_info.addr = (uintptr_t)b.p;
	bind.bind_info.length = 64;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
	T_OK(ibv_bind_mw(qp[0], mw, &bind));
	T_EXPECT_WC(cq, NULL, 1000, IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	printf("B's window rkey 0x%08x\n", mw->rkey);

	t_fill(b.p, NTRY * 64, SEED_B);
	for (int i = 0; i < NTRY; i++)
		t_post_send(qp[i], i,
			    i % 2 ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ, b.mr,
			    b.p + i * 64, 64, IBV_SEND_SIGNALED, addr,
			    guess(mw->rkey, i));
	for (int n = 0; n < NTRY; n++) {
		T_EQ(t_poll(cq, &wc, T_WAIT_MS), 1);
		T_LT(wc.wr_id, NTRY);
		if (wc.status != IBV_WC_REM_ACCESS_ERR) {
			printf("rkey 0x%08x: %s\n",
			       guess(mw->rkey, (int)wc.wr_id),
			       ibv_wc_status_str(wc.status));
			hits++;
		}
	}
	T_EQ(hits, 0);
	/* What the READs would have brought is not there. */
	T_CHECK_FILL(b.p, NTRY * 64, SEED_B);
	t_sock_sync(fd);

	for (int i = 0; i < NTRY; i++)
		T_OK(ibv_destroy_qp(qp[i]));
	T_OK(ibv_dealloc_mw(mw));
	keys_check(&d);
	T_OK(ibv_destroy_cq(cq));
	t_buf_free(&b);
	t_dev_close(&d);
	return 0;
}

int main(void)
{
	struct t_ep ep[NTRY];
	struct t_child a, b;
	struct t_dev d;
	uint64_t addr;

	t_init("mw_users");
	if (geteuid() != 0)
		t_skip("needs root to make two users");
	uid_a = t_user("srdtest_a");
	uid_b = t_user("srdtest_b");
	t_dev_open(&d); /* root's daemon on this test's name */

	t_fork(&a, child_a, NULL);
	t_fork(&b, child_b, NULL);
	t_sock_recv(a.fd, ep, sizeof(ep));
	t_sock_send(b.fd, ep, sizeof(ep));
	t_sock_recv(b.fd, ep, sizeof(ep));
	t_sock_send(a.fd, ep, sizeof(ep));
	t_sock_recv(a.fd, &addr, sizeof(addr)); /* A's window is bound */
	t_sock_send(b.fd, &addr, sizeof(addr));
	t_sock_sync(b.fd);
	t_sock_sync(a.fd);
	T_EQ(t_child_wait(&b, 30000), 0);
	T_EQ(t_child_wait(&a, 30000), 0);
	t_dev_close(&d);
	t_pass();
}
