/* SPDX-License-Identifier: MIT */
/*
 * What `softrdma resource show` shows an ordinary user of a root daemon:
 * what `rdma resource show` shows a user without CAP_NET_ADMIN.  User A
 * holds a PD, an MR and a UD QP with a Q_Key; user B, with an MR of his
 * own:
 *
 *   - sees A's MR (number, length, PD, pid) but no key, address or IOVA
 *     of any MR, his own included, and A's QP without its Q_Key;
 *   - sees in `resource show usage` his own rows only.
 *
 * Root sees the keys, the addresses and every user's usage.  Needs root
 * to make the users.
 */
#include <stdio.h>
#include <unistd.h>

#include "t_admin.h"

#define QKEY_A 0x1a2b3c4d

static uid_t uid_a, uid_b;

struct a_info {
	uint32_t pid, mrn, pdn, qpn;
};

static int child_a(int fd, void *arg)
{
	struct ibv_qp_init_attr ia;
	struct t_conn_opts o;
	struct a_info info;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct t_dev d;
	struct t_buf b;

	(void)arg;
	t_become(uid_a);
	t_dev_open(&d);
	t_buf_alloc(&d, &b, 4096, IBV_ACCESS_LOCAL_WRITE);
	cq = t_cq_create(&d, 4, NULL);
	t_qp_init_attr(&ia, IBV_QPT_UD, cq, cq);
	qp = t_qp_create(&d, &ia);
	t_conn_opts_init(&o);
	o.qkey = QKEY_A;
	t_qp_to_init(qp, &o);
	info = (struct a_info){ .pid = (uint32_t)getpid(),
				.mrn = b.mr->handle,
				.pdn = d.pd->handle,
				.qpn = qp->qp_num };
	t_sock_send(fd, &info, sizeof(info));
	t_sock_sync(fd);
	T_OK(ibv_destroy_qp(qp));
	T_OK(ibv_destroy_cq(cq));
	t_buf_free(&b);
	t_dev_close(&d);
	return 0;
}

static void no_keys(const char *out)
{
	T_EXPECT_NOT_IN(out, "rkey ");
	T_EXPECT_NOT_IN(out, "lkey ");
	T_EXPECT_NOT_IN(out, "iova ");
	T_EXPECT_NOT_IN(out, "addr ");
	T_EXPECT_NOT_IN(out, "qkey ");
}

static int child_b(int fd, void *arg)
{
	static struct t_run r;
	char pat[64], line[1024], uid[32];
	struct a_info a;
	struct t_dev d;
	struct t_buf b;

	(void)arg;
	t_sock_recv(fd, &a, sizeof(a));
	t_become(uid_b);
	t_dev_open(&d);
	t_buf_alloc(&d, &b, 4096, IBV_ACCESS_LOCAL_WRITE);
	t_cli(&r, "-d", "resource", "show", "mr", NULL);
	T_EQ(r.status, 0);
	printf("B: resource show mr:\n%s", r.out);
	snprintf(pat, sizeof(pat), "mrn %u ", a.mrn);
	T_ASSERT(t_line_with(r.out, pat, line, sizeof(line)));
	T_EQ(T_FIELD(line, "mrlen"), 4096);
	T_EQ(T_FIELD(line, "pdn"), a.pdn);
	T_EQ(T_FIELD(line, "pid"), a.pid);
	snprintf(pat, sizeof(pat), "mrn %u ", b.mr->handle);
	T_EXPECT_IN(r.out, pat);
	no_keys(r.out);
	t_cli(&r, "resource", "show", "qp", NULL);
	T_EQ(r.status, 0);
	snprintf(pat, sizeof(pat), "lqpn %u ", a.qpn);
	T_ASSERT(t_line_with(r.out, pat, line, sizeof(line)));
	T_EXPECT_IN(line, " type UD state INIT ");
	no_keys(r.out);

	t_cli(&r, "resource", "show", "usage", NULL);
	T_EQ(r.status, 0);
	printf("B: resource show usage:\n%s", r.out);
	snprintf(uid, sizeof(uid), "uid %u ", (unsigned int)uid_b);
	T_ASSERT(t_line_with(r.out, "user ", line, sizeof(line)));
	T_EXPECT_IN(line, uid);
	/* Every row is B's. */
	for (char *save, *l = strtok_r(r.out, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save))
		T_ASSERT(strstr(l, uid) != NULL);
	snprintf(uid, sizeof(uid), "uid %u ", (unsigned int)uid_a);
	T_EXPECT_NOT_IN(r.out, uid);
	T_EXPECT_NOT_IN(r.out, "uid 0 ");
	t_sock_sync(fd);
	t_sock_sync(fd); /* root looks meanwhile */
	t_buf_free(&b);
	t_dev_close(&d);
	return 0;
}

int main(void)
{
	static struct t_run r;
	struct t_child a, b;
	struct a_info info;
	char uid[32];
	struct t_dev d;

	t_init("admin_res_show_user");
	t_cli_path();
	if (geteuid() != 0)
		t_skip("needs root to make other users");
	uid_a = t_user("srdtest_a");
	uid_b = t_user("srdtest_b");
	t_dev_open(&d); /* the daemon is root's */
	t_fork(&a, child_a, NULL);
	t_sock_recv(a.fd, &info, sizeof(info));
	t_fork(&b, child_b, NULL);
	t_sock_send(b.fd, &info, sizeof(info));
	t_sock_sync(b.fd);
	/* Root sees the keys and everybody's usage. */
	t_cli(&r, "-d", "resource", "show", "mr", NULL);
	T_EQ(r.status, 0);
	T_EXPECT_IN(r.out, "rkey ");
	T_EXPECT_IN(r.out, "iova ");
	t_cli(&r, "resource", "show", "usage", NULL);
	T_EQ(r.status, 0);
	snprintf(uid, sizeof(uid), "uid %u ", (unsigned int)uid_a);
	T_EXPECT_IN(r.out, uid);
	snprintf(uid, sizeof(uid), "uid %u ", (unsigned int)uid_b);
	T_EXPECT_IN(r.out, uid);
	t_sock_sync(b.fd);
	T_EQ(t_child_wait(&b, T_WAIT_MS), 0);
	t_sock_sync(a.fd);
	T_EQ(t_child_wait(&a, T_WAIT_MS), 0);
	t_dev_close(&d);
	t_pass();
}
