/* SPDX-License-Identifier: MIT */
/*
 * Two users of one root daemon (a system daemon) are kept apart as the
 * kernel keeps uverbs users apart (root only, else skipped).  User A
 * registers a buffer others may READ and a buffer nobody else may touch;
 * user B, connected to A's QPs on the same daemon:
 *
 *   - does not see keys, addresses or Q_Keys in `softrdma resource
 *     show`, A's or his own (root does), as a user without CAP_NET_ADMIN
 *     sees none in `rdma resource show`;
 *   - READs A's readable buffer through its rkey (the one way in);
 *   - cannot WRITE it (REM_ACCESS_ERR: the MR has no remote write);
 *   - cannot READ the other buffer with its key (REM_ACCESS_ERR);
 *   - cannot use A's lkey in its own SGE (LOC_PROT_ERR);
 *   - cannot delete the device or start a capture (EPERM: "permission
 *     denied").
 * A's buffers are intact at the end.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_admin.h"

#define LEN 4096
#define SEED_PUB 0xa11ce
#define SEED_SECRET 0x5ec2e7
#define QKEY_A 0x1a2b3c4d

enum {
	CASE_READ,
	CASE_WRITE,
	CASE_READ_SECRET,
	CASE_LKEY,
	NCASES
};

struct a_info {
	uint64_t pub_addr, secret_addr;
	uint32_t pub_rkey, pub_lkey, secret_rkey, qpn_ud;
};

static uid_t uid_a, uid_b;

/* A: the buffers, then one QP per case, connected to B's. */
static int child_a(int fd, void *arg)
{
	struct t_conn_opts o;
	struct t_dev d;
	struct t_buf pub, secret;
	struct a_info info;
	struct ibv_qp_init_attr ia;
	struct ibv_cq *ud_cq;
	struct ibv_qp *ud;

	(void)arg;
	t_become(uid_a);
	t_dev_open(&d);
	t_buf_alloc(&d, &pub, LEN,
		    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	t_buf_alloc(&d, &secret, LEN, IBV_ACCESS_LOCAL_WRITE);
	t_fill(pub.p, LEN, SEED_PUB);
	t_fill(secret.p, LEN, SEED_SECRET);
	/* A UD QP whose Q_Key B must not learn. */
	ud_cq = t_cq_create(&d, 4, NULL);
	t_qp_init_attr(&ia, IBV_QPT_UD, ud_cq, ud_cq);
	ud = t_qp_create(&d, &ia);
	t_conn_opts_init(&o);
	o.qkey = QKEY_A;
	t_qp_to_init(ud, &o);
	info = (struct a_info){ .pub_addr = (uintptr_t)pub.p,
				.secret_addr = (uintptr_t)secret.p,
				.pub_rkey = pub.mr->rkey,
				.pub_lkey = pub.mr->lkey,
				.secret_rkey = secret.mr->rkey,
				.qpn_ud = ud->qp_num };
	t_sock_send(fd, &info, sizeof(info));
	for (int i = 0; i < NCASES; i++) {
		struct ibv_cq *cq = t_cq_create(&d, 16, NULL);
		struct ibv_qp *qp;
		struct t_ep mine, peer;

		t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
		qp = t_qp_create(&d, &ia);
		t_ep_local(&d, qp, 0x100 + i, &mine);
		t_sock_send(fd, &mine, sizeof(mine));
		t_sock_recv(fd, &peer, sizeof(peer));
		t_conn_opts_init(&o);
		t_qp_connect(qp, mine.psn, &peer, &o);
		t_sock_sync(fd); /* connected */
		t_sock_sync(fd); /* B is done with it */
		T_OK(ibv_destroy_qp(qp));
		T_OK(ibv_destroy_cq(cq));
	}
	t_sock_sync(fd); /* B's admin checks are over */
	T_CHECK_FILL(pub.p, LEN, SEED_PUB);
	T_CHECK_FILL(secret.p, LEN, SEED_SECRET);
	T_OK(ibv_destroy_qp(ud));
	T_OK(ibv_destroy_cq(ud_cq));
	t_buf_free(&pub);
	t_buf_free(&secret);
	t_dev_close(&d);
	return 0;
}

static void b_expect(struct ibv_cq *cq, enum ibv_wc_status st)
{
	struct ibv_wc wc;

	T_EQ(t_poll(cq, &wc, T_WAIT_MS), 1);
	T_WC_STATUS(&wc, st);
}

/* No line of text shows any of the fields. */
static void none_show(const char *text, const char *const *fields)
{
	for (const char *const *f = fields; *f; f++)
		if (strstr(text, *f))
			T_FAIL("\"%s\" is shown:\n%s", *f, text);
}

static void resource_show_hides(const struct a_info *a, bool hidden)
{
	static const char *const mr_keys[] = { "rkey ", "lkey ", "addr ",
					       "iova ", NULL };
	static const char *const qp_keys[] = { "qkey ", NULL };
	char key[32];
	struct t_run r;

	t_cli(&r, "-d", "resource", "show", "mr", NULL);
	T_EQ(r.status, 0);
	snprintf(key, sizeof(key), "rkey 0x%x ", a->pub_rkey);
	if (hidden)
		none_show(r.out, mr_keys);
	else
		T_EXPECT_IN(r.out, key);
	t_cli(&r, "resource", "show", "qp", NULL);
	T_EQ(r.status, 0);
	snprintf(key, sizeof(key), "qkey 0x%x ", QKEY_A);
	if (hidden)
		none_show(r.out, qp_keys);
	else
		T_EXPECT_IN(r.out, key);
}

/* B: one operation per case on A's buffers, then the admin checks. */
static int child_b(int fd, void *arg)
{
	struct t_dev d;
	struct t_buf own;
	struct a_info a;
	struct t_conn_opts o;
	struct t_run r;
	char key[32];

	(void)arg;
	t_sock_recv(fd, &a, sizeof(a));
	t_become(uid_b);
	t_dev_open(&d);
	t_buf_alloc(&d, &own, LEN, IBV_ACCESS_LOCAL_WRITE);
	resource_show_hides(&a, true);
	/* Not even B's own keys (B knows them). */
	t_cli(&r, "resource", "show", "mr", NULL);
	snprintf(key, sizeof(key), "rkey 0x%x ", own.mr->rkey);
	T_EXPECT_NOT_IN(r.out, key);

	for (int i = 0; i < NCASES; i++) {
		struct ibv_cq *cq = t_cq_create(&d, 16, NULL);
		struct ibv_qp_init_attr ia;
		struct ibv_qp *qp;
		struct t_ep mine, peer;

		t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
		qp = t_qp_create(&d, &ia);
		t_ep_local(&d, qp, 0x200 + i, &mine);
		t_sock_recv(fd, &peer, sizeof(peer));
		t_sock_send(fd, &mine, sizeof(mine));
		t_conn_opts_init(&o);
		o.retry_cnt = 1;
		t_qp_connect(qp, mine.psn, &peer, &o);
		t_sock_sync(fd);
		memset(own.p, 0, LEN);
		switch (i) {
		case CASE_READ:
			t_post_send(qp, 1, IBV_WR_RDMA_READ, own.mr, own.p, LEN,
				    IBV_SEND_SIGNALED, a.pub_addr, a.pub_rkey);
			b_expect(cq, IBV_WC_SUCCESS);
			T_CHECK_FILL(own.p, LEN, SEED_PUB);
			break;
		case CASE_WRITE:
			t_post_send(qp, 2, IBV_WR_RDMA_WRITE, own.mr, own.p,
				    LEN, IBV_SEND_SIGNALED, a.pub_addr,
				    a.pub_rkey);
			b_expect(cq, IBV_WC_REM_ACCESS_ERR);
			break;
		case CASE_READ_SECRET:
			t_post_send(qp, 3, IBV_WR_RDMA_READ, own.mr, own.p, LEN,
				    IBV_SEND_SIGNALED, a.secret_addr,
				    a.secret_rkey);
			b_expect(cq, IBV_WC_REM_ACCESS_ERR);
			T_ASSERT(!t_wait_fill(own.p, LEN, SEED_SECRET, 0));
			break;
		default: {
			/* A's lkey and address in B's own SGE. */
			struct ibv_sge sge = { .addr = a.pub_addr,
					       .length = 64,
					       .lkey = a.pub_lkey };
			struct ibv_send_wr wr = { .wr_id = 4,
						  .sg_list = &sge,
						  .num_sge = 1,
						  .opcode = IBV_WR_RDMA_WRITE,
						  .send_flags =
							  IBV_SEND_SIGNALED },
					   *bad;

			wr.wr.rdma.remote_addr = a.pub_addr;
			wr.wr.rdma.rkey = a.pub_rkey;
			T_OK(ibv_post_send(qp, &wr, &bad));
			b_expect(cq, IBV_WC_LOC_PROT_ERR);
			break;
		}
		}
		t_sock_sync(fd);
		T_OK(ibv_destroy_qp(qp));
		T_OK(ibv_destroy_cq(cq));
	}

	/* The device and the wire are root's. */
	t_cli(&r, "link", "delete", "softrdma0", NULL);
	T_NE(r.status, 0);
	T_EXPECT_IN(r.err, "permission denied");
	t_cli(&r, "capture", "start", "/tmp/srd-users-isolated.pcap", NULL);
	T_NE(r.status, 0);
	T_EXPECT_IN(r.err, "permission denied");
	T_ASSERT(t_have_device("softrdma0"));
	t_sock_sync(fd);
	t_buf_free(&own);
	t_dev_close(&d);
	return 0;
}

int main(void)
{
	struct t_child a, b;
	struct a_info info;
	struct t_dev d;

	t_init("users_isolated");
	t_cli_path();
	if (geteuid() != 0)
		t_skip("needs root to make two users");
	uid_a = t_user("srdtest_a");
	uid_b = t_user("srdtest_b");
	t_dev_open(&d); /* root's daemon on this test's name */

	t_fork(&a, child_a, NULL);
	t_fork(&b, child_b, NULL);
	t_sock_recv(a.fd, &info, sizeof(info));
	t_sock_send(b.fd, &info, sizeof(info));
	for (int i = 0; i < NCASES; i++) {
		struct t_ep ep;

		t_sock_recv(a.fd, &ep, sizeof(ep));
		t_sock_send(b.fd, &ep, sizeof(ep));
		t_sock_recv(b.fd, &ep, sizeof(ep));
		t_sock_send(a.fd, &ep, sizeof(ep));
		t_sock_sync(a.fd);
		t_sock_sync(b.fd);
		t_sock_sync(b.fd);
		t_sock_sync(a.fd);
		if (i == 0)
			resource_show_hides(&info, false); /* root sees */
	}
	t_sock_sync(b.fd);
	t_sock_sync(a.fd);
	T_EQ(t_child_wait(&b, 30000), 0);
	T_EQ(t_child_wait(&a, 30000), 0);
	t_dev_close(&d);
	t_pass();
}
