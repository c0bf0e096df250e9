/* SPDX-License-Identifier: MIT */
/*
 * Keys and QPNs cannot be guessed: the key bytes and indices of
 * consecutive MRs and the numbers of consecutive QPs are no counter, a
 * re-registered or re-made MR does not get its old key back, and a second
 * daemon hands out other keys and QPNs than the first.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_util.h"

#define NMR 64
#define NQP 16

struct draw {
	uint32_t key[NMR];
	uint32_t qpn[NQP];
};

static void draw(struct draw *out)
{
	struct ibv_qp_init_attr ia;
	struct ibv_mr *mr[NMR];
	struct ibv_qp *qp[NQP];
	struct ibv_cq *cq;
	struct t_dev d;
	uint8_t *buf;

	t_dev_open(&d);
	buf = t_zalloc(4096);
	for (int i = 0; i < NMR; i++) {
		mr[i] = T_NONNULL(
			ibv_reg_mr(d.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE));
		T_EQ(mr[i]->lkey, mr[i]->rkey);
		out->key[i] = mr[i]->rkey;
	}
	cq = t_cq_create(&d, 16, NULL);
	t_qp_init_attr(&ia, IBV_QPT_RC, cq, cq);
	for (int i = 0; i < NQP; i++) {
		qp[i] = t_qp_create(&d, &ia);
		out->qpn[i] = qp[i]->qp_num;
		T_GT(out->qpn[i], 1);
		T_LT(out->qpn[i], 0xffffff);
	}
	for (int i = 0; i < NQP; i++)
		T_OK(ibv_destroy_qp(qp[i]));
	T_OK(ibv_destroy_cq(cq));
	for (int i = 0; i < NMR; i++)
		T_OK(ibv_dereg_mr(mr[i]));
	t_free(buf, 4096);
	t_dev_close(&d);
}

static void check_draw(const struct draw *x)
{
	/* A counter would give NMR - 1 steps; random bytes about 2 %. */
	T_LT(t_counter_steps(x->key, NMR, 0xff, 0), NMR / 4);
	T_LT(t_counter_steps(x->key, NMR, 0xffffff, 8), NMR / 4);
	T_LT(t_counter_steps(x->qpn, NQP, 0xffffff, 0), NQP / 2);
	for (int i = 0; i < NMR; i++)
		for (int j = 0; j < i; j++)
			T_NE(x->key[i], x->key[j]);
}

/* The abstract socket @name is bound. */
static bool listening(const char *name)
{
	char line[512], want[80];
	bool found = false;
	FILE *f = fopen("/proc/net/unix", "r");

	if (!f)
		return false;
	snprintf(want, sizeof(want), " @%s\n", name);
	while (!found && fgets(line, sizeof(line), f)) {
		size_t n = strlen(line), w = strlen(want);

		found = n >= w && !strcmp(line + n - w, want);
	}
	fclose(f);
	return found;
}

static int same(const uint32_t *a, const uint32_t *b, int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += a[i] == b[i];
	return s;
}

int main(void)
{
	struct draw one, two;
	struct ibv_mr *mr;
	struct t_dev d;
	uint32_t key, first_key;
	char name[64];
	const char *daemon;
	uint8_t *buf;
	pid_t pid;
	int changed = 0;

	t_init("keys_random");
	draw(&one);
	check_draw(&one);

	/* Registering again never hands back the last key, and the key
	 * bytes are no sequence.  (ibv_rereg_mr keeps keys, as rxe's.) */
	t_dev_open(&d);
	buf = t_zalloc(4096);
	mr = T_NONNULL(ibv_reg_mr(d.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE));
	first_key = mr->rkey;
	T_OK(ibv_dereg_mr(mr));
	key = first_key;
	for (int i = 0; i < 16; i++) {
		mr = T_NONNULL(
			ibv_reg_mr(d.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE));
		T_NE(mr->rkey, key);
		changed += (mr->rkey & 0xff) != ((key + 1) & 0xff);
		key = mr->rkey;
		T_OK(ibv_dereg_mr(mr));
	}
	T_GT(changed, 8);
	t_free(buf, 4096);
	t_dev_close(&d);

	/* A second daemon draws other keys and QPNs. */
	daemon = getenv("SOFTRDMAD");
	if (!daemon || !*daemon)
		t_skip("SOFTRDMAD not set");
	snprintf(name, sizeof(name), "%s.2", t_socket_name());
	pid = fork();
	T_GE(pid, 0);
	if (!pid) {
		execl(daemon, daemon, "--socket", name, "--foreground",
		      "--idle-exit", "30", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; !listening(name); i++) {
		if (i > 500)
			T_FAIL("second daemon not listening on @%s", name);
		t_sleep_ms(10);
	}
	T_OK(setenv("SOFTRDMA_SOCKET", name, 1));
	draw(&two);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	check_draw(&two);
	T_LT(same(one.key, two.key, NMR), 4);
	T_LT(same(one.qpn, two.qpn, NQP), 4);
	t_pass();
}
