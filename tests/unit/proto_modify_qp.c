/* SPDX-License-Identifier: MIT */
/* MODIFY_QP: the IBTA state machine, table driven, for RC, UC and UD:
 * legal transitions with their required attributes pass; a missing
 * required or an extra attribute, an illegal transition or a value out of
 * range gives EINVAL. */
#include <errno.h>
#include <string.h>

#include "tests/unit/t_proto.h"

#define RC_INIT (IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
#define RC_RTR                                                           \
	(IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | \
	 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RC_RTS                                               \
	(IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | \
	 IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC)
#define UC_INIT RC_INIT
#define UC_RTR (IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN)
#define UC_RTS IBV_QP_SQ_PSN
#define UD_INIT (IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)
#define UD_RTR 0
#define UD_RTS IBV_QP_SQ_PSN

struct qp_kind {
	enum ibv_qp_type type;
	const char *name;
	uint32_t init, rtr, rts;
	uint32_t bad_init, bad_rtr, bad_rts; /* an attribute not allowed */
	uint32_t opt_rtr, opt_rts;	     /* an optional one */
};

static const struct qp_kind kinds[] = {
	{ IBV_QPT_RC, "RC", RC_INIT, RC_RTR, RC_RTS, IBV_QP_QKEY, IBV_QP_SQ_PSN,
	  IBV_QP_DEST_QPN, IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS,
	  IBV_QP_CUR_STATE | IBV_QP_MIN_RNR_TIMER | IBV_QP_ACCESS_FLAGS },
	{ IBV_QPT_UC, "UC", UC_INIT, UC_RTR, UC_RTS, IBV_QP_QKEY,
	  IBV_QP_MAX_DEST_RD_ATOMIC, IBV_QP_TIMEOUT,
	  IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS,
	  IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS },
	{ IBV_QPT_UD, "UD", UD_INIT, UD_RTR, UD_RTS, IBV_QP_ACCESS_FLAGS,
	  IBV_QP_AV, IBV_QP_RNR_RETRY, IBV_QP_PKEY_INDEX | IBV_QP_QKEY,
	  IBV_QP_CUR_STATE | IBV_QP_QKEY },
};

static int fd;
static struct ibv_qp_attr good;

static enum ibv_qp_state query_state(uint32_t qp, struct ibv_qp_attr *out);

/* Modify with good values; an asserted current state is the true one. */
static int mod(uint32_t qp, enum ibv_qp_state to, uint32_t mask)
{
	struct ibv_qp_attr a = good;
	uint32_t st = 99;
	int ret;

	a.qp_state = to;
	if (mask & IBV_QP_CUR_STATE)
		a.cur_qp_state = query_state(qp, NULL);
	ret = t_modify_qp(fd, qp, &a, mask | IBV_QP_STATE, &st);
	if (!ret)
		T_EQ(st, to);
	return ret;
}

static enum ibv_qp_state query_state(uint32_t qp, struct ibv_qp_attr *out)
{
	struct srd_query_qp_req q = { .handle = qp };
	struct srd_query_qp_rep r;

	T_EQ(t_cmd(fd, SRD_CMD_QUERY_QP, &q, sizeof(q), NULL, 0, &r, sizeof(r),
		   NULL, NULL, NULL),
	     0);
	if (out)
		*out = r.attr;
	T_EQ(r.attr.cur_qp_state, r.attr.qp_state);
	return r.attr.qp_state;
}

/* Bring a QP to a state along the legal path. */
static void go(const struct qp_kind *k, uint32_t qp, enum ibv_qp_state to)
{
	T_EQ(mod(qp, IBV_QPS_RESET, 0), 0);
	if (to == IBV_QPS_RESET)
		return;
	if (to == IBV_QPS_ERR) {
		T_EQ(mod(qp, IBV_QPS_ERR, 0), 0);
		return;
	}
	T_EQ(mod(qp, IBV_QPS_INIT, k->init), 0);
	if (to == IBV_QPS_INIT)
		return;
	T_EQ(mod(qp, IBV_QPS_RTR, k->rtr), 0);
	if (to == IBV_QPS_RTR)
		return;
	T_EQ(mod(qp, IBV_QPS_RTS, k->rts), 0);
	if (to == IBV_QPS_SQD)
		T_EQ(mod(qp, IBV_QPS_SQD, 0), 0);
	T_EQ(query_state(qp, NULL), to);
}

/* Each required attribute left out, and one not allowed added: EINVAL,
 * and the QP stays where it was. */
static void masks(const struct qp_kind *k, uint32_t qp, enum ibv_qp_state from,
		  enum ibv_qp_state to, uint32_t req, uint32_t bad,
		  uint32_t opt)
{
	for (uint32_t bit = 1; bit; bit <<= 1) {
		if (!(req & bit))
			continue;
		go(k, qp, from);
		if (mod(qp, to, req & ~bit) != -EINVAL)
			T_FAIL("%s %d->%d without 0x%x accepted", k->name, from,
			       to, bit);
		T_EQ(query_state(qp, NULL), from);
	}
	go(k, qp, from);
	if (mod(qp, to, req | bad) != -EINVAL)
		T_FAIL("%s %d->%d with 0x%x accepted", k->name, from, to, bad);
	if (mod(qp, to, req | opt))
		T_FAIL("%s %d->%d with optional 0x%x refused", k->name, from,
		       to, opt);
	go(k, qp, from);
	T_EQ(mod(qp, to, req), 0);
}

static void rc_values(const struct qp_kind *k, uint32_t qp)
{
	struct ibv_qp_attr a;
	uint32_t st;

	/* RESET -> INIT values. */
	go(k, qp, IBV_QPS_RESET);
	a = good;
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 2;
	T_EQ(t_modify_qp(fd, qp, &a, IBV_QP_STATE | k->init, &st), -EINVAL);
	a = good;
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 1;
	T_EQ(t_modify_qp(fd, qp, &a, IBV_QP_STATE | k->init, &st), -EINVAL);
	a = good;
	a.qp_state = IBV_QPS_INIT;
	a.qp_access_flags = 1 << 10;
	T_EQ(t_modify_qp(fd, qp, &a, IBV_QP_STATE | k->init, &st), -EINVAL);

	/* INIT -> RTR values. */
	go(k, qp, IBV_QPS_INIT);
#define RTR_BAD(field, val)                                                  \
	do {                                                                 \
		int r_;                                                      \
		a = good;                                                    \
		a.qp_state = IBV_QPS_RTR;                                    \
		a.field = (val);                                             \
		r_ = t_modify_qp(fd, qp, &a, IBV_QP_STATE | k->rtr, &st);    \
		if (r_ != -EINVAL)                                           \
			T_FAIL("%s RTR with %s = %lld: %d", k->name, #field, \
			       (long long)(val), r_);                        \
	} while (0)
	RTR_BAD(path_mtu, 6);
	RTR_BAD(path_mtu, 0);
	RTR_BAD(dest_qp_num, 1u << 24);
	if (k->type == IBV_QPT_RC) {
		RTR_BAD(max_dest_rd_atomic, 129);
		RTR_BAD(min_rnr_timer, 32);
	}
	RTR_BAD(ah_attr.is_global, 0);
	RTR_BAD(ah_attr.grh.sgid_index, SRD_MAX_GIDS - 1);
	RTR_BAD(ah_attr.grh.sgid_index, 200);
	RTR_BAD(ah_attr.port_num, 0);
	T_EQ(query_state(qp, NULL), IBV_QPS_INIT);
	a = good;
	a.qp_state = IBV_QPS_RTR;
	a.rq_psn = 0x1234567; /* 24 bits kept */
	T_EQ(t_modify_qp(fd, qp, &a, IBV_QP_STATE | k->rtr, &st), 0);
	T_EQ(query_state(qp, &a), IBV_QPS_RTR);
	T_EQ(a.rq_psn, 0x234567);
	T_EQ(a.dest_qp_num, good.dest_qp_num);
	T_EQ(a.path_mtu, good.path_mtu);
	if (k->type == IBV_QPT_RC)
		T_EQ(a.max_dest_rd_atomic, good.max_dest_rd_atomic);

#define RTS_BAD(field, val)                                                  \
	do {                                                                 \
		int r_;                                                      \
		a = good;                                                    \
		a.qp_state = IBV_QPS_RTS;                                    \
		a.field = (val);                                             \
		r_ = t_modify_qp(fd, qp, &a, IBV_QP_STATE | k->rts, &st);    \
		if (r_ != -EINVAL)                                           \
			T_FAIL("%s RTS with %s = %lld: %d", k->name, #field, \
			       (long long)(val), r_);                        \
	} while (0)
	if (k->type == IBV_QPT_RC) {
		RTS_BAD(timeout, 32);
		RTS_BAD(retry_cnt, 8);
		RTS_BAD(rnr_retry, 8);
		RTS_BAD(max_rd_atomic, 129);
	}
	a = good;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0xff000001;
	T_EQ(t_modify_qp(fd, qp, &a, IBV_QP_STATE | k->rts, &st), 0);
	T_EQ(query_state(qp, &a), IBV_QPS_RTS);
	T_EQ(a.sq_psn, 1);
	if (k->type == IBV_QPT_RC) {
		T_EQ(a.timeout, good.timeout);
		T_EQ(a.retry_cnt, good.retry_cnt);
		T_EQ(a.rnr_retry, good.rnr_retry);
		T_EQ(a.max_rd_atomic, good.max_rd_atomic);
	}
	T_EQ(a.qp_access_flags, good.qp_access_flags);
	T_EQ(a.ah_attr.grh.sgid_index, 0);
	T_EQ(a.ah_attr.is_global, 1);
}

static void common_rules(const struct qp_kind *k, uint32_t qp)
{
	struct ibv_qp_attr a;
	uint32_t st;

	/* Illegal jumps. */
	go(k, qp, IBV_QPS_RESET);
	T_EQ(mod(qp, IBV_QPS_RTR, k->init | k->rtr), -EINVAL);
	T_EQ(mod(qp, IBV_QPS_RTS, k->init | k->rtr | k->rts), -EINVAL);
	T_EQ(mod(qp, IBV_QPS_SQD, 0), -EINVAL);
	go(k, qp, IBV_QPS_INIT);
	T_EQ(mod(qp, IBV_QPS_RTS, k->rtr | k->rts), -EINVAL);
	go(k, qp, IBV_QPS_ERR);
	T_EQ(mod(qp, IBV_QPS_RTS, k->rts), -EINVAL);
	T_EQ(mod(qp, IBV_QPS_INIT, k->init), -EINVAL);
	/* No state change: only what the state allows. */
	go(k, qp, IBV_QPS_INIT);
	a = good;
	T_EQ(t_modify_qp(fd, qp, &a, k->init, &st), 0);
	T_EQ(st, IBV_QPS_INIT);
	T_EQ(t_modify_qp(fd, qp, &a, IBV_QP_SQ_PSN, &st), -EINVAL);
	/* Unknown and read-only mask bits. */
	T_EQ(mod(qp, IBV_QPS_INIT, 1u << 30), -EINVAL);
	T_EQ(mod(qp, IBV_QPS_INIT, IBV_QP_CAP), -EINVAL);
	/* A state that does not exist. */
	T_EQ(mod(qp, 9, 0), -EINVAL);

	/* Everything goes to RESET and to ERR. */
	for (int s = IBV_QPS_RESET; s <= IBV_QPS_SQD; s++) {
		go(k, qp, s);
		T_EQ(mod(qp, IBV_QPS_ERR, 0), 0);
		go(k, qp, s);
		T_EQ(mod(qp, IBV_QPS_RESET, 0), 0);
	}

	/* RTS <-> SQD, RTS -> RTS. */
	go(k, qp, IBV_QPS_RTS);
	T_EQ(mod(qp, IBV_QPS_RTS, 0), 0);
	T_EQ(mod(qp, IBV_QPS_SQD, IBV_QP_EN_SQD_ASYNC_NOTIFY), 0);
	T_EQ(mod(qp, IBV_QPS_SQD, 0), 0);
	T_EQ(mod(qp, IBV_QPS_RTS, 0), 0);

	/* CUR_STATE: only from RTR/RTS/SQD/SQE, and it must be true. */
	go(k, qp, IBV_QPS_RESET);
	a = good;
	a.qp_state = IBV_QPS_INIT;
	a.cur_qp_state = IBV_QPS_RESET;
	T_EQ(t_modify_qp(fd, qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE | k->init,
			 &st),
	     -EINVAL);
	go(k, qp, IBV_QPS_RTS);
	a = good;
	a.qp_state = IBV_QPS_RTS;
	a.cur_qp_state = IBV_QPS_RTS;
	T_EQ(t_modify_qp(fd, qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE, &st), 0);
	a.cur_qp_state = IBV_QPS_SQE;
	T_EQ(t_modify_qp(fd, qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE, &st),
	     -EINVAL);
}

int main(void)
{
	struct t_daemon td;
	struct t_client c;
	int64_t pd, cq;

	good.pkey_index = 0;
	good.port_num = 1;
	good.qkey = 0x11111111;
	good.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	good.ah_attr.is_global = 1;
	good.ah_attr.port_num = 1;
	good.ah_attr.grh.sgid_index = 0;
	good.ah_attr.grh.hop_limit = 1;
	good.ah_attr.grh.dgid.raw[10] = 0xff;
	good.ah_attr.grh.dgid.raw[11] = 0xff;
	good.ah_attr.grh.dgid.raw[12] = 127;
	good.ah_attr.grh.dgid.raw[15] = 1;
	good.path_mtu = IBV_MTU_1024;
	good.dest_qp_num = 0x12;
	good.max_dest_rd_atomic = 4;
	good.min_rnr_timer = 12;
	good.timeout = 14;
	good.retry_cnt = 7;
	good.rnr_retry = 7;
	good.max_rd_atomic = 4;

	t_daemon_start(&td, NULL);
	t_client_open(&c, td.name);
	fd = c.fd;
	pd = t_alloc_pd(fd);
	cq = t_create_cq(fd, 16, SRD_NO_HANDLE, NULL, NULL);
	T_ASSERT(pd > 0 && cq > 0);

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		const struct qp_kind *k = &kinds[i];
		int64_t qp = t_create_qp(fd, pd, cq, SRD_NO_HANDLE, k->type,
					 NULL, NULL, NULL);

		T_ASSERT(qp > 0);
		T_EQ(query_state(qp, NULL), IBV_QPS_RESET);
		masks(k, qp, IBV_QPS_RESET, IBV_QPS_INIT, k->init, k->bad_init,
		      0);
		masks(k, qp, IBV_QPS_INIT, IBV_QPS_RTR, k->rtr, k->bad_rtr,
		      k->opt_rtr);
		masks(k, qp, IBV_QPS_RTR, IBV_QPS_RTS, k->rts, k->bad_rts,
		      k->opt_rts);
		common_rules(k, qp);
		if (k->type != IBV_QPT_UD)
			rc_values(k, qp);
		T_EQ(t_destroy(fd, SRD_CMD_DESTROY_QP, qp), 0);
	}

	t_client_close(&c);
	T_EQ(t_daemon_stop(&td), 0);
	return T_EXIT_PASS;
}
