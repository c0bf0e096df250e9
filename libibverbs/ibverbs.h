/* SPDX-License-Identifier: MIT */
/*
 * Private state of the verbs library and its soft provider: what the
 * public objects of <infiniband/verbs.h> carry besides their public part.
 */
#ifndef SOFTRDMA_LIBIBVERBS_IBVERBS_H
#define SOFTRDMA_LIBIBVERBS_IBVERBS_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <infiniband/softrdma.h>
#include <infiniband/verbs.h>

#include "common/list.h"
#include "common/proto.h"
#include "common/ring.h"
#include "libcommon/daemon_conn.h"
#include "libcommon/htab.h"
#include "libibverbs/mem.h"

#define LIB_EXPORT __attribute__((visibility("default")))

/* An entry of the device list; lives while listed or referenced. */
struct srd_udevice {
	struct ibv_device ibdev;
	uint32_t index;
	uint64_t guid; /* big endian */
	char netdev[SRD_DEV_NAME_MAX];
	atomic_int refcnt;
	bool listed;
	struct list_node node;
};

static inline struct srd_udevice *to_dev(struct ibv_device *d)
{
	return container_of(d, struct srd_udevice, ibdev);
}

struct srd_context {
	/* First, as providers lay it out; ends with the public context. */
	struct verbs_context vctx;
	struct srd_udevice *dev;
	struct srd_conn conn;
	int doorbell_fd;
	const struct srd_dev_page *dev_page;
	unsigned int trace; /* SRD_TRACE_F_* */
	atomic_uint_fast64_t next_id;
	/* QPs by number, for poll_cq; objects by user_handle, for events. */
	struct srd_htab qpn_tab;
	struct srd_htab obj_tab;
	/* The daemon closed the async pipe: DEVICE_FATAL was handed out. */
	atomic_bool device_gone;
	/* The device is lost (flush.c): queued work is flushed by us. */
	atomic_bool dead;
	/* ibv_import_device: cmd_fd is the shared context's (ours to close),
	 * conn our own connection to it. */
	bool imported;
	/* The thread placing the device's writes into our in-place memory
	 * (place.c), or NULL. */
	struct srd_place_lib *place;
	bool place_ok;	  /* in-place access: placement possible */
	bool place_tried; /* srd_place_want() ran */
};

/* place.c: start (at the first MR reached in place), stop, and wait out
 * what was given before now. */
void srd_place_want(struct srd_context *ctx);
/* An application thread with nothing to poll runs the jobs posted, if
 * the placement thread is not at them: no wake-up to wait for. */
void srd_place_help(struct srd_context *ctx);
/* A duration in microseconds from the environment variable name (up to
 * 10 s), else dflt ns; cached in *cache. */
uint64_t srd_env_ns(const char *name, uint64_t dflt, _Atomic uint64_t *cache);
void srd_place_stop(struct srd_context *ctx);
void srd_place_quiesce(struct srd_context *ctx);

static inline struct srd_context *to_ctx(struct ibv_context *c)
{
	return container_of(c, struct srd_context, vctx.context);
}

/* Objects named in events: the daemon echoes our id, never a pointer. */
enum srd_obj_type {
	SRD_OBJ_CQ = 1,
	SRD_OBJ_QP,
	SRD_OBJ_SRQ,
};

struct srd_evobj {
	struct srd_hnode hnode; /* key: the id given as user_handle */
	enum srd_obj_type type;
	/* Events handed to the application (under the table lock). */
	uint32_t async_reported;
	uint32_t comp_reported;
};

struct srd_comp_channel {
	struct ibv_comp_channel ch;
	uint32_t handle;
};

static inline struct srd_comp_channel *to_chan(struct ibv_comp_channel *c)
{
	return container_of(c, struct srd_comp_channel, ch);
}

/* A thread domain: parent domains on it promise single-threaded use. */
struct srd_td {
	struct ibv_td td;
	atomic_uint refcnt; /* parent domains on it */
};

static inline struct srd_td *to_td(struct ibv_td *t)
{
	return container_of(t, struct srd_td, td);
}

/*
 * A PD, or a parent domain: a PD (protection) plus an optional thread
 * domain and allocator for the library's ring memory.  A parent domain
 * carries the handle of its PD, so every command takes either.
 */
struct srd_pd {
	struct ibv_pd pd;
	struct srd_pd *protection; /* a parent domain's PD; NULL for a PD */
	struct srd_td *td;
	/* PD: parent domains on it.  Parent domain: CQs and QPs on it. */
	atomic_uint refcnt;
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t resource_type);
	void *pd_context;
};

static inline struct srd_pd *to_pd(struct ibv_pd *p)
{
	return container_of(p, struct srd_pd, pd);
}

/* The parent domain p is, or NULL when it is a plain PD. */
static inline struct srd_pd *srd_parent_domain(struct ibv_pd *p)
{
	return p && to_pd(p)->protection ? to_pd(p) : NULL;
}

/* Ring memory: the daemon's memfd mapped where a parent domain's
 * allocator says, or wherever mmap puts it. */
struct srd_ring_map {
	void *addr;
	size_t len;
	struct srd_pd *pdom; /* whose allocator gave addr, or NULL */
	uint64_t res_type;
};
int srd_ring_map(struct srd_ring_map *m, struct srd_pd *pdom, uint64_t res_type,
		 size_t len, int fd);
void srd_ring_unmap(struct srd_ring_map *m);

struct srd_ucq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
	struct srd_evobj ev;
	pthread_spinlock_t lock;
	struct srd_cq_ctl *ctl;
	struct srd_cqe *ring;
	uint32_t log_entries;
	uint32_t cons;
	struct srd_ring_map rmap;
	struct srd_pd *pdom; /* the parent domain it was created on */
	uint64_t wc_flags;   /* ibv_cq_init_attr_ex.wc_flags */
	/* ns: wall clock minus device clock, taken at start_poll when the
	 * CQ reads wall-clock timestamps. */
	int64_t wall_offset;
	/* ibv_cq_ex polling: the CQE being read, if any. */
	const struct srd_cqe *cur;
	uint32_t empty_polls; /* in a row, to yield the CPU now and then */
	uint64_t idle_since;  /* ns: when polls began to come back empty */
	/* QPs whose send CQ this is (send_cq_node), under the context's
	 * qpn_tab lock: a poller looks for a send completion due. */
	struct list_head send_qps;
	/* ... and whose receive CQ it is: flushed into it on device loss. */
	struct list_head recv_qps;
	/* XRC SRQs whose receives complete here (no QP of ours names them):
	 * flushed into it on device loss, under the same lock. */
	struct list_head xrc_srqs;
	/* A flush completion made by the library (flush.c), for cq_ex. */
	struct srd_cqe flush_cqe;
	/* The QP of the last CQE retired here, under lock: a poller finds
	 * it without the qpn_tab lock.  ibv_destroy_qp clears it under
	 * lock after taking the QP out of qpn_tab. */
	struct srd_uqp *last_qp;
};

/* Empty polls in a row after which a poller yields the CPU. */
#define SRD_EMPTY_POLLS_YIELD 16
/* Empty for this long with a send completion due: sleep on the CQ. */
#define SRD_POLL_SPIN_NS 50000u
/* The longest one empty poll sleeps. */
#define SRD_POLL_SLEEP_NS 1000000

static inline struct srd_ucq *to_cq(struct ibv_cq *c)
{
	return container_of(c, struct srd_ucq, cq);
}

/* The library's view of one work queue ring. */
struct srd_uwq {
	pthread_spinlock_t lock;
	uint8_t *ring;
	struct srd_wq_ctl *ctl;
	uint32_t entries; /* power of two, 0 when absent */
	uint32_t slot_size;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t max_inline;
	uint32_t head;	       /* private producer index */
	_Atomic uint32_t tail; /* completed: slots below are free */
	/* One past the newest signaled send WQE: sig_next as written,
	 * sig_head once published (read by pollers deciding to sleep). */
	uint32_t sig_next;
	_Atomic uint32_t sig_head;
	/* On a thread domain: one thread posts at a time, as the
	 * application promised, so posting takes no lock (mlx5 does the
	 * same). */
	bool single_thread;
	/* SRQ on device loss: the next WQE to flush (flush.c). */
	uint32_t flush_pos;
	bool flushing;
};

static inline void srd_wq_lock(struct srd_uwq *wq)
{
	if (!wq->single_thread)
		pthread_spin_lock(&wq->lock);
}

static inline void srd_wq_unlock(struct srd_uwq *wq)
{
	if (!wq->single_thread)
		pthread_spin_unlock(&wq->lock);
}

/* After publishing up to wq->head: a signaled WQE written by a post that
 * failed later lies beyond head and is not announced. */
static inline void srd_wq_publish_signaled(struct srd_uwq *wq)
{
	if ((int32_t)(wq->head - wq->sig_next) >= 0)
		atomic_store_explicit(&wq->sig_head, wq->sig_next,
				      memory_order_relaxed);
}

static inline void *srd_wq_slot(struct srd_uwq *wq, uint32_t idx)
{
	return wq->ring + (size_t)(idx & (wq->entries - 1)) * wq->slot_size;
}

struct srd_uqp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
		/* rdma-core 47's layout: wr_flush follows qp_ex */
		struct softrdma_qp_ex_flush qp_ex_flush;
	};
	struct srd_evobj ev;
	struct srd_hnode qpn_node;     /* key: qp_num */
	struct list_node send_cq_node; /* in its send CQ's send_qps */
	struct list_node recv_cq_node; /* in its receive CQ's recv_qps */
	struct srd_uwq sq;
	struct srd_uwq rq;
	uint32_t ece_options; /* ibv_set_ece's, what ibv_query_ece reads */
	bool sq_sig_all;
	bool has_ex; /* created with send_ops_flags: ibv_qp_ex usable */
	struct ibv_qp_cap cap;
	struct srd_ring_map rmap;
	struct srd_pd *pdom; /* the parent domain it was created on */
	/* ibv_wr_* state between wr_start and wr_complete. */
	uint32_t wr_head_start;
	int wr_err;
	struct srd_send_wqe *wr_cur;
};

static inline struct srd_uqp *to_qp(struct ibv_qp *q)
{
	return container_of(q, struct srd_uqp, qp);
}

struct srd_usrq {
	struct ibv_srq srq;
	struct srd_evobj ev;
	struct srd_uwq wq;
	uint32_t limit;
	struct srd_ring_map rmap;
	struct srd_pd *pdom; /* the parent domain it was created on */
	uint32_t srq_num;    /* IBV_SRQT_XRC: what an XRC sender names */
	bool xrc;
	struct ibv_cq *xrc_cq;	  /* IBV_SRQT_XRC: where receives complete */
	struct list_node cq_node; /* in xrc_cq's xrc_srqs */
};

static inline struct srd_usrq *to_srq(struct ibv_srq *s)
{
	return container_of(s, struct srd_usrq, srq);
}

/* An XRC domain: the daemon's handle on it (shared by inode there). */
struct srd_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t handle;
};

static inline struct srd_xrcd *to_xrcd(struct ibv_xrcd *x)
{
	return container_of(x, struct srd_xrcd, xrcd);
}

struct srd_umr {
	struct ibv_mr mr;
	int access;
	struct srd_mem_ref mem;
};

static inline struct srd_umr *to_mr(struct ibv_mr *m)
{
	return container_of(m, struct srd_umr, mr);
}

/* --- device.c ----------------------------------------------------------- */
void srd_device_put(struct srd_udevice *dev);
/* The listed device with that index, referenced; NULL if none. */
struct srd_udevice *srd_device_by_index(uint32_t index);

/* --- context.c ---------------------------------------------------------- */
/* A synchronous command on the context's connection. */
int srd_ctx_cmd(struct srd_context *ctx, struct srd_cmd_args *a);
/* One whose reply brings one descriptor, stored in *fd; -EPROTO if the
 * reply brings none. */
int srd_ctx_cmd_fd(struct srd_context *ctx, uint32_t op, const void *req,
		   size_t req_len, void *rep, size_t rep_len, int *fd);
/* The library's object of size bytes (zeroed) for what the command makes
 * or names: NULL with errno set, and nothing allocated, if it fails. */
void *srd_ctx_cmd_new(struct ibv_context *context, size_t size,
		      struct srd_cmd_args *a);
uint64_t srd_ctx_new_id(struct srd_context *ctx);
void srd_ctx_set_ops(struct srd_context *ctx);

/* --- events (async.c, cq.c) --------------------------------------------- */
void srd_evobj_add(struct srd_context *ctx, struct srd_evobj *ev,
		   enum srd_obj_type type);
void srd_evobj_del(struct srd_context *ctx, struct srd_evobj *ev);

/* --- trace.c ------------------------------------------------------------ */
/* SRD_TRACE_F_* from the environment; *open_flags gets the SRD_TRACE_*
 * bits to ask the daemon for (stderr then goes with OPEN_DEVICE). */
unsigned int srd_trace_setup(uint32_t *open_flags);
/* A description of stderr the daemon may write CQE traces to, or -1. */
int srd_trace_fd_open(void);

/* --- pd.c --------------------------------------------------------------- */
int srd_destroy_handle(struct ibv_context *context, uint32_t op,
		       uint32_t handle);
/* A PD for command a (ALLOC_PD, IMPORT_PD), whose handle is *handle once
 * the command is done; NULL with errno set. */
struct ibv_pd *srd_pd_new(struct ibv_context *context, struct srd_cmd_args *a,
			  const uint32_t *handle);

/* --- mr.c --------------------------------------------------------------- */
void srd_umr_init(struct srd_umr *mr, struct ibv_pd *pd, void *addr,
		  size_t length, int access, uint32_t handle, uint32_t lkey,
		  uint32_t rkey);

/* --- query.c ------------------------------------------------------------ */
bool srd_mr_implicit(const struct ibv_mr *mr);
int srd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		  uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge);
int srd_query_device_ex(struct ibv_context *context,
			const struct ibv_query_device_ex_input *input,
			struct ibv_device_attr_ex *attr, size_t attr_size);
int srd_query_port(struct ibv_context *context, uint8_t port_num,
		   struct ibv_port_attr *attr, size_t attr_len);
int srd_query_rt_values(struct ibv_context *context,
			struct ibv_values_ex *values);

/* --- cq.c, domain.c, dm.c: verbs_context operations ---------------------- */
int srd_modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
struct ibv_td *srd_alloc_td(struct ibv_context *context,
			    struct ibv_td_init_attr *init_attr);
int srd_dealloc_td(struct ibv_td *td);
int srd_dealloc_parent_domain(struct srd_pd *pdom);
struct ibv_pd *
srd_alloc_parent_domain(struct ibv_context *context,
			struct ibv_parent_domain_init_attr *attr);
struct ibv_dm *srd_alloc_dm(struct ibv_context *context,
			    struct ibv_alloc_dm_attr *attr);
int srd_free_dm(struct ibv_dm *dm);
/* A DM of the context by handle (share.c): mapped, not allocated. */
struct ibv_dm *srd_import_dm(struct ibv_context *context, uint32_t handle);
void srd_unimport_dm(struct ibv_dm *dm);
struct ibv_mr *srd_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm,
			     uint64_t dm_offset, size_t length,
			     unsigned int access);
int srd_query_gid_raw(struct srd_context *ctx, uint32_t port, uint32_t index,
		      struct srd_query_gid_rep *rep);

/* --- xrc.c: XRC domains, target QPs ------------------------------------- */
struct ibv_xrcd *srd_open_xrcd(struct ibv_context *context,
			       struct ibv_xrcd_init_attr *attr);
int srd_close_xrcd(struct ibv_xrcd *xrcd);
struct ibv_qp *srd_open_qp(struct ibv_context *context,
			   struct ibv_qp_open_attr *attr);
int srd_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);
/* flow.c */
struct ibv_flow *srd_create_flow(struct ibv_qp *qp, struct ibv_flow_attr *attr);
int srd_destroy_flow(struct ibv_flow *flow);
/* A raw packet socket, proof to the daemon that this process holds
 * CAP_NET_RAW now (raw packet QPs, flows); -1 without it. */
int srd_net_raw_proof(void);
/* An XRC_RECV QP (ibv_create_qp_ex with IBV_QP_INIT_ATTR_XRCD). */
struct srd_uqp *srd_xrc_tgt_create(struct ibv_context *context,
				   struct ibv_qp_init_attr_ex *attr);

/* --- fast path (post.c, poll.c, srq.c) ----------------------------------- */
int srd_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		  struct ibv_send_wr **bad_wr);
int srd_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		  struct ibv_recv_wr **bad_wr);
int srd_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);
int srd_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int srd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
void srd_ring_doorbell(struct srd_context *ctx);
/* An empty poll of cq came back SRD_EMPTY_POLLS_YIELD times in a row. */
void srd_poll_idle(struct srd_ucq *cq);
/* Account a completed WQE of a QP's SQ or RQ, found by number. */
void srd_cqe_retire(struct srd_ucq *cq, const struct srd_cqe *cqe);
void srd_cq_forget_qp(struct srd_ucq *cq, struct srd_uqp *qp);

/* --- flush.c: device loss ---------------------------------------------- */
/* The daemon died or hung up (a few loads, no system call). */
bool srd_ctx_dead(struct srd_context *ctx);
/* With cq->lock held: the next flush completion of a WR still queued on
 * a QP or SRQ that completes into cq, into *cqe.  False when none is left. */
bool srd_cq_flush_one(struct srd_ucq *cq, struct srd_cqe *cqe);

/* --- cq_ex.c, qp_ex.c ---------------------------------------------------- */
struct ibv_cq_ex *srd_create_cq_ex(struct ibv_context *context,
				   struct ibv_cq_init_attr_ex *attr);
struct ibv_qp *srd_create_qp_ex(struct ibv_context *context,
				struct ibv_qp_init_attr_ex *attr);
struct ibv_srq *srd_create_srq_ex(struct ibv_context *context,
				  struct ibv_srq_init_attr_ex *attr);

/* Internal creation shared by the classic and extended verbs. */
struct srd_ucq *srd_cq_create(struct ibv_context *context, int cqe,
			      void *cq_context,
			      struct ibv_comp_channel *channel, int comp_vector,
			      uint32_t flags, struct srd_pd *pdom);
struct srd_uqp *srd_qp_create(struct ibv_context *context, struct ibv_pd *pd,
			      struct ibv_qp_init_attr *attr);
/* xrcd and cq: an XRC SRQ's domain and CQ, NULL for a basic SRQ. */
struct srd_usrq *srd_srq_create(struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr,
				struct ibv_xrcd *xrcd, struct ibv_cq *cq);

/* Opcodes a QP type may post (post.c). */
bool srd_opcode_valid(enum ibv_qp_type type, enum ibv_wr_opcode op);
/* Fill the window fields of a BIND_MW WQE. */
void srd_wqe_bind(struct srd_send_wqe *w, const struct ibv_mw *mw,
		  uint32_t rkey, const struct ibv_mw_bind_info *info);

/* mw.c */
struct ibv_mw *srd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int srd_dealloc_mw(struct ibv_mw *mw);
int srd_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		struct ibv_mw_bind *mw_bind);

/* --- exported non-standard names (rdma-core's driver.h) ------------------ */
enum srd_gid_type_sysfs {
	SRD_GID_TYPE_SYSFS_IB_ROCE_V1,
	SRD_GID_TYPE_SYSFS_ROCE_V2,
};
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		       unsigned int index, enum srd_gid_type_sysfs *type);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
			size_t size);
/* rdma-core 44 driver.h: the sysfs root, $SYSFS_PATH or "/sys". */
const char *ibv_get_sysfs_path(void);
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);
int ibv_resolve_eth_l2_from_gid(struct ibv_context *context,
				struct ibv_ah_attr *attr, uint8_t eth_mac[6],
				uint16_t *vid);

/* Map a negative errno to rdma-core's convention for int verbs. */
static inline int srd_ret_errno(int ret)
{
	if (ret < 0) {
		errno = -ret;
		return -ret;
	}
	return 0;
}

#endif
