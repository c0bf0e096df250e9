/* SPDX-License-Identifier: MIT */
/*
 * Per-client and per-user limits from the daemon's configuration file: a
 * greedy client creating CQs, QPs and MRs is refused with ENOMEM at its
 * limits (objects and registered bytes), while a second client of the
 * same user keeps creating objects and runs verified RC traffic until
 * the user's limit stops it too; `softrdma resource show usage` shows what
 * each holds (the CLI's own connection counts as a client of the user).
 * When the greedy client goes, its share comes back.
 */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "t_util.h"

#define CLIENT_CQ 6
#define CLIENT_QP 8
#define CLIENT_MR 10
#define USER_QP 12
#define MR_LEN (64 * 1024)

static const char config[] = "# limits for func.limits_quota\n"
			     "limit client cq 6\n"
			     "limit client qp 8\n"
			     "limit client mr 10\n"
			     "limit client mr_bytes 1M\n"
			     "limit user qp 12\n";

static struct ibv_qp *qp_try(struct t_dev *d, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia;

	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
	return ibv_create_qp(d->pd, &ia);
}

static int greedy(int fd, void *arg)
{
	struct ibv_cq *cqs[64], *cq;
	struct ibv_qp *qps[64];
	struct ibv_mr *mrs[64], *mr;
	uint8_t *buf, *big;
	struct t_dev d;
	int n;

	(void)arg;
	t_dev_open(&d);
	for (n = 0; n < 64; n++) {
		cqs[n] = ibv_create_cq(d.ctx, 8, NULL, NULL, 0);
		if (!cqs[n])
			break;
	}
	t_log("greedy: %d CQs, then %s", n, t_errname(errno));
	T_EQ(n, CLIENT_CQ);
	T_EQ(errno, ENOMEM);
	cq = cqs[0];
	for (int i = 1; i < n; i++)
		T_OK(ibv_destroy_cq(cqs[i]));
	for (n = 0; n < 64; n++) {
		qps[n] = qp_try(&d, cq);
		if (!qps[n])
			break;
	}
	t_log("greedy: %d QPs, then %s", n, t_errname(errno));
	T_EQ(n, CLIENT_QP);
	T_EQ(errno, ENOMEM);
	buf = t_zalloc((size_t)MR_LEN * 64);
	for (n = 0; n < 64; n++) {
		mrs[n] = ibv_reg_mr(d.pd, buf + (size_t)n * MR_LEN, MR_LEN,
				    IBV_ACCESS_LOCAL_WRITE);
		if (!mrs[n])
			break;
	}
	t_log("greedy: %d MRs, then %s", n, t_errname(errno));
	T_EQ(n, CLIENT_MR);
	T_EQ(errno, ENOMEM);
	for (int i = 0; i < n; i++)
		T_OK(ibv_dereg_mr(mrs[i]));
	/* Registered bytes: 2 MiB is over the 1 MiB limit, 512 KiB not. */
	big = t_zalloc(2u << 20);
	T_NULL_ERRNO(ibv_reg_mr(d.pd, big, 2u << 20, IBV_ACCESS_LOCAL_WRITE),
		     ENOMEM);
	mr = T_NONNULL(
		ibv_reg_mr(d.pd, big, 512u << 10, IBV_ACCESS_LOCAL_WRITE));
	/* Hold everything while the other client works. */
	t_sock_sync(fd);
	t_sock_sync(fd);
	T_OK(ibv_dereg_mr(mr));
	for (int i = 0; i < CLIENT_QP; i++)
		T_OK(ibv_destroy_qp(qps[i]));
	T_OK(ibv_destroy_cq(cq));
	t_dev_close(&d);
	return 0;
}

/* `softrdma resource show usage` (-d: with limits), next to the daemon. */
static char *usage_show(bool details)
{
	char *daemon = strdup(getenv("SOFTRDMAD"));
	char cmd[4096], *out = calloc(1, 1 << 16);
	size_t len = 0;
	FILE *p;

	T_ASSERT(daemon && out);
	snprintf(cmd, sizeof(cmd), "%s/softrdma %s resource show usage",
		 dirname(daemon), details ? "-d" : "");
	p = popen(cmd, "r");
	T_ASSERT(p != NULL);
	len = fread(out, 1, (1 << 16) - 1, p);
	out[len] = 0;
	T_EQ(pclose(p), 0);
	free(daemon);
	printf("%s", out);
	return out;
}

static bool has_line(const char *out, const char *a, const char *b,
		     const char *c)
{
	for (const char *l = out; l && *l;
	     l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);
		char line[1024];

		if (n >= sizeof(line))
			continue;
		memcpy(line, l, n);
		line[n] = 0;
		if (strstr(line, a) && strstr(line, b) && strstr(line, c))
			return true;
	}
	return false;
}

int main(void)
{
	char path[] = "/tmp/srd-limits-XXXXXX", want[64], uid[32];
	struct ibv_qp *extra[8];
	struct t_buf s, r;
	struct t_child ch;
	struct ibv_wc wc;
	struct t_pair p;
	struct t_dev d;
	char *out;
	int fd, n;

	if (!getenv("SOFTRDMAD"))
		t_skip("needs SOFTRDMAD");
	fd = mkstemp(path);
	T_ASSERT(fd >= 0);
	T_EQ(write(fd, config, sizeof(config) - 1),
	     (ssize_t)sizeof(config) - 1);
	close(fd);
	setenv("SOFTRDMA_CONFIG", path, 1);
	t_init("limits_quota");

	t_fork(&ch, greedy, NULL);
	t_sock_sync(ch.fd);
	unlink(path);

	/* The greedy client is at its limits; this one still works. */
	t_dev_open(&d);
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &s, 4096, T_ACCESS_ALL);
	t_buf_alloc(&d, &r, 4096, T_ACCESS_ALL);
	for (uint32_t i = 0; i < 50; i++) {
		t_fill(s.p, 4096, i);
		t_post_send(p.a, i, IBV_WR_RDMA_WRITE, s.mr, s.p, 4096,
			    IBV_SEND_SIGNALED, (uintptr_t)r.p, r.mr->rkey);
		T_EXPECT_WC(p.cq_a, &wc, i, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
		T_CHECK_FILL(r.p, 4096, i);
	}
	/* QPs of the user: 8 (greedy) + 2 (pair) so far; 12 allowed. */
	for (n = 0; n < 8; n++) {
		extra[n] = qp_try(&d, p.cq_a);
		if (!extra[n])
			break;
	}
	t_log("second client: %d more QPs, then %s", n, t_errname(errno));
	T_EQ(n, USER_QP - CLIENT_QP - 2);
	T_EQ(errno, ENOMEM);

	out = usage_show(false);
	snprintf(want, sizeof(want), "client pid %d ", (int)ch.pid);
	T_ASSERT(has_line(out, want, " qp 8 ", " cq 1 "));
	T_ASSERT(has_line(out, want, " mr 1 ", " mr_bytes 524288"));
	snprintf(want, sizeof(want), "client pid %d ", (int)getpid());
	T_ASSERT(has_line(out, want, " qp 4 ", " cq 2 "));
	snprintf(uid, sizeof(uid), "user uid %u ", (unsigned int)getuid());
	T_ASSERT(has_line(out, uid, "clients 3 ", " qp 12 "));
	free(out);
	out = usage_show(true);
	T_ASSERT(has_line(out, want, " qp_max 8 ", " cq_max 6 "));
	T_ASSERT(has_line(out, uid, " qp_max 12 ", " mr_bytes_max "));
	free(out);

	/* The greedy client lets go: the user's QPs come back. */
	t_sock_sync(ch.fd);
	T_EQ(t_child_wait(&ch, T_WAIT_MS), 0);
	extra[n] = T_NONNULL(qp_try(&d, p.cq_a));
	n++;
	for (int i = 0; i < n; i++)
		T_OK(ibv_destroy_qp(extra[i]));
	t_buf_free(&s);
	t_buf_free(&r);
	t_pair_destroy(&p);
	t_dev_close(&d);
	t_pass();
}
