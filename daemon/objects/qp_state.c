/* SPDX-License-Identifier: MIT */
/*
 * The QP state machine of IBTA vol. 1 section 10.3 (as the kernel's
 * ib_modify_qp_is_ok() encodes it): for each transition and transport,
 * the attributes a modify must carry and those it may carry.  IBV_QP_STATE
 * itself is always allowed.  The two halves of XRC follow RC without the
 * attributes of the half they lack, as the kernel's table has them: the
 * initiator has no responder (no MAX_DEST_RD_ATOMIC, MIN_RNR_TIMER), the
 * target no requester (no RETRY_CNT, RNR_RETRY, MAX_QP_RD_ATOMIC).
 * A raw packet QP names its port going to INIT and nothing else.
 */
#include "daemon/core/core.h"

enum {
	T_UD,
	T_UC,
	T_RC,
	T_RAW,
	T__MAX
};

struct transition {
	bool valid;
	uint32_t req[T__MAX];
	uint32_t opt[T__MAX];
};

#define NSTATES (IBV_QPS_ERR + 1)

static const struct transition table[NSTATES][NSTATES] = {
	[IBV_QPS_RESET] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_INIT] = {
			.valid = true,
			.req = {
				[T_UD] = IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					 IBV_QP_QKEY,
				[T_UC] = IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					 IBV_QP_ACCESS_FLAGS,
				[T_RC] = IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					 IBV_QP_ACCESS_FLAGS,
				[T_RAW] = IBV_QP_PORT,
			},
		},
	},
	[IBV_QPS_INIT] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_INIT] = {
			.valid = true,
			.opt = {
				[T_UD] = IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					 IBV_QP_QKEY,
				[T_UC] = IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					 IBV_QP_ACCESS_FLAGS,
				[T_RC] = IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					 IBV_QP_ACCESS_FLAGS,
			},
		},
		[IBV_QPS_RTR] = {
			.valid = true,
			.req = {
				[T_UC] = IBV_QP_AV | IBV_QP_PATH_MTU |
					 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN,
				[T_RC] = IBV_QP_AV | IBV_QP_PATH_MTU |
					 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					 IBV_QP_MAX_DEST_RD_ATOMIC |
					 IBV_QP_MIN_RNR_TIMER,
			},
			.opt = {
				[T_UD] = IBV_QP_PKEY_INDEX | IBV_QP_QKEY,
				[T_UC] = IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
					 IBV_QP_PKEY_INDEX,
				[T_RC] = IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
					 IBV_QP_PKEY_INDEX,
			},
		},
	},
	[IBV_QPS_RTR] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = {
			.valid = true,
			.req = {
				[T_UD] = IBV_QP_SQ_PSN,
				[T_UC] = IBV_QP_SQ_PSN,
				[T_RC] = IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					 IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
					 IBV_QP_MAX_QP_RD_ATOMIC,
			},
			.opt = {
				[T_UD] = IBV_QP_CUR_STATE | IBV_QP_QKEY,
				[T_UC] = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH |
					 IBV_QP_ACCESS_FLAGS |
					 IBV_QP_PATH_MIG_STATE,
				[T_RC] = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH |
					 IBV_QP_ACCESS_FLAGS |
					 IBV_QP_MIN_RNR_TIMER |
					 IBV_QP_PATH_MIG_STATE,
			},
		},
	},
	[IBV_QPS_RTS] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = {
			.valid = true,
			.opt = {
				[T_UD] = IBV_QP_CUR_STATE | IBV_QP_QKEY,
				[T_UC] = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS |
					 IBV_QP_ALT_PATH |
					 IBV_QP_PATH_MIG_STATE,
				[T_RC] = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS |
					 IBV_QP_ALT_PATH |
					 IBV_QP_PATH_MIG_STATE |
					 IBV_QP_MIN_RNR_TIMER,
			},
		},
		[IBV_QPS_SQD] = {
			.valid = true,
			.opt = {
				[T_UD] = IBV_QP_EN_SQD_ASYNC_NOTIFY,
				[T_UC] = IBV_QP_EN_SQD_ASYNC_NOTIFY,
				[T_RC] = IBV_QP_EN_SQD_ASYNC_NOTIFY,
			},
		},
	},
	[IBV_QPS_SQD] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = {
			.valid = true,
			.opt = {
				[T_UD] = IBV_QP_CUR_STATE | IBV_QP_QKEY,
				[T_UC] = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH |
					 IBV_QP_ACCESS_FLAGS |
					 IBV_QP_PATH_MIG_STATE,
				[T_RC] = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH |
					 IBV_QP_ACCESS_FLAGS |
					 IBV_QP_MIN_RNR_TIMER |
					 IBV_QP_PATH_MIG_STATE,
			},
		},
		[IBV_QPS_SQD] = {
			.valid = true,
			.opt = {
				[T_UD] = IBV_QP_PKEY_INDEX | IBV_QP_QKEY,
				[T_UC] = IBV_QP_AV | IBV_QP_ALT_PATH |
					 IBV_QP_ACCESS_FLAGS |
					 IBV_QP_PKEY_INDEX |
					 IBV_QP_PATH_MIG_STATE,
				[T_RC] = IBV_QP_PORT | IBV_QP_AV |
					 IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					 IBV_QP_RNR_RETRY |
					 IBV_QP_MAX_QP_RD_ATOMIC |
					 IBV_QP_MAX_DEST_RD_ATOMIC |
					 IBV_QP_ALT_PATH |
					 IBV_QP_ACCESS_FLAGS |
					 IBV_QP_PKEY_INDEX |
					 IBV_QP_MIN_RNR_TIMER |
					 IBV_QP_PATH_MIG_STATE,
			},
		},
	},
	[IBV_QPS_SQE] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = {
			.valid = true,
			.opt = {
				[T_UD] = IBV_QP_CUR_STATE | IBV_QP_QKEY,
				[T_UC] = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS,
			},
		},
	},
	[IBV_QPS_ERR] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
	},
};

bool qp_modify_is_ok(enum ibv_qp_state cur, enum ibv_qp_state next,
		     enum ibv_qp_type type, uint32_t attr_mask)
{
	const struct transition *t;
	uint32_t req, opt, drop = 0;
	int tt;

	switch (type) {
	case IBV_QPT_UD:
		tt = T_UD;
		break;
	case IBV_QPT_UC:
		tt = T_UC;
		break;
	case IBV_QPT_RC:
		tt = T_RC;
		break;
	case IBV_QPT_RAW_PACKET:
		tt = T_RAW;
		break;
	case IBV_QPT_XRC_SEND:
		tt = T_RC;
		drop = IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		break;
	case IBV_QPT_XRC_RECV:
		tt = T_RC;
		drop = IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		       IBV_QP_MAX_QP_RD_ATOMIC;
		break;
	default:
		return false;
	}
	if ((unsigned int)cur >= NSTATES || (unsigned int)next >= NSTATES)
		return false;
	/* The current state may only be asserted where IBTA allows it. */
	if ((attr_mask & IBV_QP_CUR_STATE) && cur != IBV_QPS_RTR &&
	    cur != IBV_QPS_RTS && cur != IBV_QPS_SQD && cur != IBV_QPS_SQE)
		return false;
	t = &table[cur][next];
	if (!t->valid)
		return false;
	req = t->req[tt] & ~drop;
	opt = t->opt[tt] & ~drop;
	if ((attr_mask & req) != req)
		return false;
	if (attr_mask & ~(req | opt | IBV_QP_STATE))
		return false;
	return true;
}
