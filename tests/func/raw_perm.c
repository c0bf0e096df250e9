/* SPDX-License-Identifier: MIT */
/*
 * Raw Ethernet is CAP_NET_RAW's, as uverbs has it (root only: real users
 * of a root daemon, else skipped).  An ordinary user gets EPERM from
 * create_qp(RAW_PACKET), and from create_flow (on a UD QP, where with the
 * right it would be EOPNOTSUPP: the permission is checked first).  The
 * same user holding CAP_NET_RAW in its effective set may create both; once
 * it drops the capability from the effective set, EPERM again (the daemon
 * asks at every call).  A user who is all-powerful only in a user
 * namespace of its own made after connecting is refused: its CapEff
 * speaks for that namespace, not the daemon's.
 */
#include <linux/capability.h>
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "t_util.h"

static uid_t uid;

/* Effective and permitted sets: CAP_NET_RAW or nothing. */
static void caps_set(bool eff, bool perm)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3,
						0 };
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	data[0].effective = eff ? 1u << CAP_NET_RAW : 0;
	data[0].permitted = perm ? 1u << CAP_NET_RAW : 0;
	if (syscall(SYS_capset, &hdr, data))
		T_FAIL("capset: %s", t_errname(errno));
}

static void expect_refused(struct t_dev *d, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia;
	struct ibv_flow_attr fa = { .type = IBV_FLOW_ATTR_SNIFFER,
				    .size = sizeof(fa),
				    .port = T_PORT };
	struct ibv_qp *ud;

	errno = 0;
	T_ASSERT(!t_raw_qp_create(d, cq));
	T_EQ(errno, EPERM);
	t_qp_init_attr(&ia, IBV_QPT_UD, cq, cq);
	ud = t_qp_create(d, &ia);
	errno = 0;
	T_ASSERT(!ibv_create_flow(ud, &fa));
	T_EQ(errno, EPERM);
	T_RET(ibv_destroy_qp(ud), 0);
}

/* An ordinary user; with arg, one that then makes a user namespace of
 * its own, with every capability there and none the daemon knows of. */
static int ordinary_user(int fd, void *arg)
{
	struct t_dev d;
	struct ibv_cq *cq;

	(void)fd;
	t_become(uid);
	t_dev_open(&d);
	cq = t_cq_create(&d, 16, NULL);
	if (arg && unshare(CLONE_NEWUSER))
		t_log("unshare(CLONE_NEWUSER): %s: not tried",
		      t_errname(errno));
	else
		expect_refused(&d, cq);
	T_RET(ibv_destroy_cq(cq), 0);
	t_dev_close(&d);
	return 0;
}

static int capable_user(int fd, void *arg)
{
	struct ibv_flow_attr fa = { .type = IBV_FLOW_ATTR_SNIFFER,
				    .size = sizeof(fa),
				    .port = T_PORT };
	struct ibv_flow *f;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct t_dev d;

	(void)fd;
	(void)arg;
	/* Keep the permitted set across setuid, then raise the one. */
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0))
		T_FAIL("PR_SET_KEEPCAPS: %s", t_errname(errno));
	t_become(uid);
	T_EQ(getuid(), uid);
	caps_set(true, true);
	t_dev_open(&d);
	cq = t_cq_create(&d, 16, NULL);
	qp = t_raw_qp_create(&d, cq);
	if (!qp)
		T_FAIL("raw QP with CAP_NET_RAW: %s", t_errname(errno));
	f = ibv_create_flow(qp, &fa);
	if (!f)
		T_FAIL("flow with CAP_NET_RAW: %s", t_errname(errno));
	T_RET(ibv_destroy_flow(f), 0);
	/* Out of the effective set: not any more. */
	caps_set(false, true);
	errno = 0;
	T_ASSERT(!t_raw_qp_create(&d, cq));
	T_EQ(errno, EPERM);
	errno = 0;
	T_ASSERT(!ibv_create_flow(qp, &fa));
	T_EQ(errno, EPERM);
	T_RET(ibv_destroy_qp(qp), 0);
	T_RET(ibv_destroy_cq(cq), 0);
	t_dev_close(&d);
	return 0;
}

int main(void)
{
	int (*fns[])(int, void *) = { ordinary_user, capable_user,
				      ordinary_user };
	void *args[] = { NULL, NULL, &uid };
	struct t_dev d;
	struct ibv_qp *qp;
	struct ibv_cq *cq;

	t_init("raw_perm");
	if (geteuid())
		t_skip("not root: needs a root daemon and another user");
	uid = t_user("srdrawuser");
	/* The daemon is root's, and root may. */
	t_dev_open(&d);
	cq = t_cq_create(&d, 16, NULL);
	qp = t_raw_qp_create(&d, cq);
	if (!qp)
		T_FAIL("raw QP as root: %s", t_errname(errno));
	for (unsigned int i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		struct t_child c;

		t_fork(&c, fns[i], args[i]);
		T_EQ(t_child_wait(&c, 20000), 0);
	}
	T_RET(ibv_destroy_qp(qp), 0);
	T_RET(ibv_destroy_cq(cq), 0);
	t_dev_close(&d);
	t_pass();
}
