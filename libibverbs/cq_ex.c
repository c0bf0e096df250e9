/* SPDX-License-Identifier: MIT */
/*
 * ibv_create_cq_ex and the iterator-style polling of struct ibv_cq_ex:
 * start_poll takes the CQ lock and exposes the first CQE, next_poll
 * consumes it and moves on, end_poll consumes the last one and publishes
 * the consumer index.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "common/dev_clock.h"
#include "libibverbs/ibverbs.h"

/* Every field rdma-core 44 defines.  The device has no VLAN stripping,
 * flow steering or tag matching: those read as absent (0). */
#define SRD_CQ_EX_WC_FLAGS \
	(((uint64_t)IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK << 1) - 1)
#define SRD_CQ_EX_TS_FLAGS                     \
	(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
	 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

static struct srd_ucq *cq_of(struct ibv_cq_ex *c)
{
	return container_of(c, struct srd_ucq, cq_ex);
}

/* Expose the CQE at cq->cons, if there is one. */
static int load_cur(struct srd_ucq *cq)
{
	uint32_t cons = cq->cons;
	const struct srd_cqe *cqe =
		&cq->ring[cons & ((1u << cq->log_entries) - 1)];

	if (__atomic_load_n(&cqe->owner, __ATOMIC_ACQUIRE) !=
	    srd_cqe_owner_for(cons, cq->log_entries)) {
		cq->cur = NULL;
		/* Device lost: queued work completes in flush error; the
		 * flush CQE is consumed as it is made. */
		if (!srd_ctx_dead(to_ctx(cq->cq.context)) ||
		    !srd_cq_flush_one(cq, &cq->flush_cqe))
			return ENOENT;
		cqe = &cq->flush_cqe;
	}
	cq->cur = cqe;
	cq->cq_ex.wr_id = cqe->wr_id;
	cq->cq_ex.status = (enum ibv_wc_status)cqe->status;
	return 0;
}

static void consume_cur(struct srd_ucq *cq)
{
	if (!cq->cur || cq->cur == &cq->flush_cqe) {
		cq->cur = NULL;
		return;
	}
	srd_cqe_retire(cq, cq->cur);
	cq->cons++;
	cq->cur = NULL;
}

static int64_t wall_minus_dev_ns(void)
{
	struct timespec ts;
	uint64_t dev = srd_dev_clock_ns();

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)((uint64_t)ts.tv_sec * 1000000000ull +
			 (uint64_t)ts.tv_nsec - dev);
}

static int start_poll(struct ibv_cq_ex *c, struct ibv_poll_cq_attr *attr)
{
	struct srd_ucq *cq = cq_of(c);
	int ret;

	if (attr && attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&cq->lock);
	ret = load_cur(cq);
	if (!ret) {
		if (cq->wc_flags &
		    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
			cq->wall_offset = wall_minus_dev_ns();
		cq->empty_polls = 0;
		cq->idle_since = 0;
	} else if (++cq->empty_polls >= SRD_EMPTY_POLLS_YIELD) {
		cq->empty_polls = 0;
		pthread_spin_unlock(&cq->lock);
		srd_place_help(to_ctx(c->context));
		srd_poll_idle(cq);
		return ret;
	} else {
		pthread_spin_unlock(&cq->lock);
		srd_place_help(to_ctx(c->context));
	}
	return ret;
}

static int next_poll(struct ibv_cq_ex *c)
{
	struct srd_ucq *cq = cq_of(c);

	consume_cur(cq);
	return load_cur(cq);
}

static void end_poll(struct ibv_cq_ex *c)
{
	struct srd_ucq *cq = cq_of(c);

	consume_cur(cq);
	__atomic_store_n(&cq->ctl->cons, cq->cons, __ATOMIC_RELEASE);
	pthread_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *c)
{
	return (enum ibv_wc_opcode)cq_of(c)->cur->opcode;
}

static uint32_t read_vendor_err(struct ibv_cq_ex *c)
{
	return cq_of(c)->cur->vendor_err;
}

static uint32_t read_byte_len(struct ibv_cq_ex *c)
{
	return cq_of(c)->cur->byte_len;
}

static __be32 read_imm_data(struct ibv_cq_ex *c)
{
	return cq_of(c)->cur->imm_data;
}

static uint32_t read_qp_num(struct ibv_cq_ex *c)
{
	return cq_of(c)->cur->qp_num;
}

static uint32_t read_src_qp(struct ibv_cq_ex *c)
{
	return cq_of(c)->cur->src_qp;
}

static unsigned int read_wc_flags(struct ibv_cq_ex *c)
{
	return cq_of(c)->cur->wc_flags;
}

static uint32_t read_slid(struct ibv_cq_ex *c)
{
	return cq_of(c)->cur->slid;
}

static uint8_t read_sl(struct ibv_cq_ex *c)
{
	return cq_of(c)->cur->sl;
}

static uint8_t read_dlid_path_bits(struct ibv_cq_ex *c)
{
	return cq_of(c)->cur->dlid_path_bits;
}

/* Device clock ticks are ns: the wall clock is the same count moved by
 * the offset between the two clocks. */
static uint64_t read_completion_ts(struct ibv_cq_ex *c)
{
	return cq_of(c)->cur->timestamp;
}

static uint64_t read_completion_wallclock_ns(struct ibv_cq_ex *c)
{
	struct srd_ucq *cq = cq_of(c);

	return cq->cur->timestamp + (uint64_t)cq->wall_offset;
}

static uint16_t read_cvlan(struct ibv_cq_ex *c)
{
	return 0;
}

static uint32_t read_flow_tag(struct ibv_cq_ex *c)
{
	return 0;
}

static void read_tm_info(struct ibv_cq_ex *c, struct ibv_wc_tm_info *tm_info)
{
	memset(tm_info, 0, sizeof(*tm_info));
}

/* mlx5's answers: a bad mask, flag or domain is EINVAL, a completion
 * field the device cannot fill EOPNOTSUPP. */
struct ibv_cq_ex *srd_create_cq_ex(struct ibv_context *context,
				   struct ibv_cq_init_attr_ex *attr)
{
	struct srd_pd *pdom = NULL;
	struct srd_ucq *cq;
	struct ibv_cq_ex *x;

	if (!attr || !attr->cqe || attr->cqe > INT32_MAX ||
	    (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS |
					   IBV_CQ_INIT_ATTR_MASK_PD)) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(uint32_t)(IBV_CREATE_CQ_ATTR_SINGLE_THREADED |
					IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN)))) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->wc_flags & ~SRD_CQ_EX_WC_FLAGS) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
		pdom = srd_parent_domain(attr->parent_domain);
		if (!pdom || pdom->pd.context != context) {
			errno = EINVAL;
			return NULL;
		}
	}
	cq = srd_cq_create(
		context, (int)attr->cqe, attr->cq_context, attr->channel,
		(int)attr->comp_vector,
		(attr->wc_flags & SRD_CQ_EX_TS_FLAGS) ? SRD_CQ_F_TIMESTAMP : 0,
		pdom);
	if (!cq)
		return NULL;
	cq->wc_flags = attr->wc_flags;
	x = &cq->cq_ex;
	x->comp_mask = 0;
	x->start_poll = start_poll;
	x->next_poll = next_poll;
	x->end_poll = end_poll;
	x->read_opcode = read_opcode;
	x->read_vendor_err = read_vendor_err;
	x->read_byte_len = read_byte_len;
	x->read_imm_data = read_imm_data;
	x->read_qp_num = read_qp_num;
	x->read_src_qp = read_src_qp;
	x->read_wc_flags = read_wc_flags;
	x->read_slid = read_slid;
	x->read_sl = read_sl;
	x->read_dlid_path_bits = read_dlid_path_bits;
	x->read_completion_ts = read_completion_ts;
	x->read_completion_wallclock_ns = read_completion_wallclock_ns;
	x->read_cvlan = read_cvlan;
	x->read_flow_tag = read_flow_tag;
	x->read_tm_info = read_tm_info;
	return x;
}
