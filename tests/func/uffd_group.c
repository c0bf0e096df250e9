/* SPDX-License-Identifier: MIT */
/*
 * The move guard for a group: members of the group that owns
 * /dev/userfaultfd (mode 0660, as the package's udev rule and tmpfiles
 * line set it for the group "softrdma") get their MRs moved onto memfds,
 * as root does; other ordinary users get them in place.  Root only: for
 * its run the test gives /dev/userfaultfd to a group of its own, then
 * puts the node back as it was.
 *   - a member: the buffer is moved (its mapping is the library's memfd),
 *     and an RDMA WRITE and READ between two of its buffers carry the
 *     data; then func_mr_reg_race runs as that member (writers and a
 *     read(2) into a buffer registered 1000 times): nothing is lost;
 *   - a user outside the group: the buffer stays in place, and the same
 *     WRITE and READ carry the data.
 */
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/proto.h" /* SRD_MEMFD_NAME */
#include "t_util.h"

#define UFFD_DEV "/dev/userfaultfd"
#define GROUP_GID 64023 /* a gid of the test's own, in no /etc/group */
#define LEN 65536
#define SEED 31

static uid_t uid;

/* As uid, with GROUP_GID as the only supplementary group if member. */
static void become(bool member)
{
	gid_t g = GROUP_GID;
	struct passwd *pw = getpwuid(uid);

	T_NONNULL(pw);
	T_OK(setgroups(member ? 1 : 0, &g));
	T_OK(setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid));
	T_OK(setresuid(uid, uid, uid));
	/* As a login would be: /proc/self/mem is ours again. */
	T_OK(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0));
}

/* Is p on one of the library's memfds, from our own maps? */
static bool moved(const void *p)
{
	uintptr_t a = (uintptr_t)p, lo, hi;
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "re");

	T_NONNULL(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &lo, &hi) != 2 ||
		    a < lo || a >= hi)
			continue;
		found = strstr(line, "/memfd:" SRD_MEMFD_NAME) != NULL;
		break;
	}
	fclose(f);
	return found;
}

/* Two buffers of ours on a connected pair: a WRITE from one into the
 * other and a READ back carry the data.  Returns whether both were
 * moved. */
static bool traffic(void)
{
	struct t_buf a, b;
	struct ibv_wc wc;
	struct t_pair p;
	struct t_dev d;
	bool both;

	t_dev_open(&d);
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &a, LEN, T_ACCESS_ALL);
	t_buf_alloc(&d, &b, LEN, T_ACCESS_ALL);
	both = moved(a.p) && moved(b.p);
	if (moved(a.p) != moved(b.p))
		T_FAIL("one buffer moved, the other not");
	t_fill(a.p, LEN, SEED);
	memset(b.p, 0, LEN);
	t_post_send(p.a, 1, IBV_WR_RDMA_WRITE, a.mr, a.p, LEN,
		    IBV_SEND_SIGNALED, (uintptr_t)b.p, b.mr->rkey);
	T_EXPECT_WC(p.cq_a, &wc, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(b.p, LEN, SEED);
	memset(a.p, 0, LEN);
	t_post_send(p.a, 2, IBV_WR_RDMA_READ, a.mr, a.p, LEN, IBV_SEND_SIGNALED,
		    (uintptr_t)b.p, b.mr->rkey);
	T_EXPECT_WC(p.cq_a, &wc, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	T_CHECK_FILL(a.p, LEN, SEED);
	t_buf_free(&a);
	t_buf_free(&b);
	t_pair_destroy(&p);
	t_dev_close(&d);
	return both;
}

static int member(int sock, void *arg)
{
	(void)sock;
	(void)arg;
	become(true);
	if (access(UFFD_DEV, R_OK | W_OK))
		T_FAIL("a member cannot open %s: %s", UFFD_DEV,
		       t_errname(errno));
	if (!traffic())
		T_FAIL("a member's buffers stayed in place");
	return 0;
}

static int outsider(int sock, void *arg)
{
	(void)sock;
	(void)arg;
	become(false);
	if (traffic())
		T_FAIL("an outsider's buffers were moved");
	return 0;
}

/* func_mr_reg_race as a member, guard asked for. */
static int race(void)
{
	pid_t pid = fork();
	int st;

	T_ASSERT(pid >= 0);
	if (!pid) {
		become(true);
		setenv("SOFTRDMA_MOVE_GUARD", "uffd", 1);
		setenv("SRD_TEST_WATCHDOG_S", "110", 1);
		execl(MR_REG_RACE, "func_mr_reg_race", (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(void)
{
	struct t_child c;
	struct stat st;
	struct t_dev d;
	int rc_member, rc_outsider, rc_race;

	t_init("uffd_group");
	if (geteuid())
		t_skip("not root: changes %s's group", UFFD_DEV);
	if (stat(UFFD_DEV, &st) || !S_ISCHR(st.st_mode))
		t_skip("no %s (Linux 6.1+)", UFFD_DEV);
	uid = t_user("srduffduser");
	t_dev_open(&d); /* a root daemon, as the system's */

	T_OK(chown(UFFD_DEV, 0, GROUP_GID));
	T_OK(chmod(UFFD_DEV, 0660));
	t_fork(&c, member, NULL);
	rc_member = t_child_wait(&c, 30000);
	t_fork(&c, outsider, NULL);
	rc_outsider = t_child_wait(&c, 30000);
	rc_race = race();
	/* The node as it was, whatever the children said. */
	T_OK(chown(UFFD_DEV, st.st_uid, st.st_gid));
	T_OK(chmod(UFFD_DEV, st.st_mode & 07777));

	T_EQ(rc_member, 0);
	T_EQ(rc_outsider, 0);
	T_EQ(rc_race, 0);
	t_dev_close(&d);
	t_pass();
}
