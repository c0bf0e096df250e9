/* SPDX-License-Identifier: MIT */
/*
 * librdmacm's insides.  An event channel is a command connection to
 * softrdmad (what an open /dev/infiniband/rdma_cm is to rdma-core) whose
 * fd, the one the application polls, is an eventfd the daemon counts
 * pending events on.  The application's rdma_cm_id, rdma_cm_event and
 * rdma_event_channel are the first members of the structs here.
 *
 * As in rdma-core: public int calls return 0, or -1 with errno set.
 */
#ifndef SOFTRDMA_LIBRDMACM_CMA_H
#define SOFTRDMA_LIBRDMACM_CMA_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <infiniband/ib.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "common/list.h"
#include "common/proto_cm.h"
#include "libcommon/daemon_conn.h"
#include "libcommon/htab.h"

#define LIB_EXPORT __attribute__((visibility("default")))

/* rdma-core's convention: -1 and errno. */
static inline int cma_err(int e)
{
	errno = e;
	return -1;
}

/* From a daemon status (0 or -errno) to the public convention. */
static inline int cma_ret(int status)
{
	return status ? cma_err(-status) : 0;
}

struct cma_channel {
	struct rdma_event_channel ch; /* ch.fd: the event fd */
	struct srd_conn conn;
	/* Threads waiting in rdma_get_cm_event, and whether the channel is
	 * being destroyed under them (they then wait for good, as they
	 * would on rdma-core's fd, and the memory stays theirs). */
	_Atomic int waiters;
	_Atomic bool closing;
};

/* One device as librdmacm sees it: an opened context, shared by all the
 * ids of the process on that device, as rdma-core keeps them. */
struct cma_device {
	char name[SRD_DEV_NAME_MAX];
	struct ibv_device *dev;
	struct ibv_context *verbs;
	struct ibv_pd *pd; /* for rdma_create_qp without a PD */
	uint8_t max_initiator_depth;
	uint8_t max_responder_resources;
};

struct cma_id_priv {
	struct rdma_cm_id id;
	struct srd_hnode hnode; /* by handle */
	uint32_t handle;
	struct cma_device *cma_dev;
	bool sync; /* made without a channel: calls wait for their event */
	bool connect_error;
	pthread_mutex_t mut;
	pthread_cond_t cond;
	uint32_t events_fetched;
	uint32_t events_completed;
	uint8_t initiator_depth;
	uint8_t responder_resources;
	struct ibv_qp_init_attr *qp_init_attr; /* a passive endpoint's */
	struct ibv_sa_path_rec path;
	struct ibv_ece local_ece;  /* what our REQ or REP offers */
	struct ibv_ece remote_ece; /* what the peer's said */
	/* QP attributes the last CONNECT_REQUEST or CONNECT_RESPONSE came
	 * with (SRD_CM_ATTR_*), for the library's own QP moves; bit i of
	 * attr_valid says attr[i] holds.  Options change them: cleared. */
	uint32_t attr_valid;
	struct srd_cm_init_qp_attr_rep attr[SRD_CM_NATTR];
};

struct cma_event {
	struct rdma_cm_event event;
	uint8_t private_data[SRD_CM_PRIVATE_DATA_MAX];
	struct cma_id_priv *id_priv; /* whose event count it is */
};

static inline struct cma_id_priv *cma_id(struct rdma_cm_id *id)
{
	return container_of(id, struct cma_id_priv, id);
}

static inline struct cma_channel *cma_chan(struct rdma_event_channel *ch)
{
	return container_of(ch, struct cma_channel, ch);
}

/* --- channel.c --- */
/* Once per process: the device list, the handle table. */
int cma_init(void);
/* One command on a channel; 0 or a negative errno.  rep may be NULL. */
int cma_cmd(struct rdma_event_channel *ch, uint32_t op, const void *req,
	    size_t req_len, void *rep, size_t rep_len);
/* Commands about an id go over its channel. */
int cma_id_cmd(struct cma_id_priv *p, uint32_t op, const void *req,
	       size_t req_len, void *rep, size_t rep_len);
struct cma_id_priv *cma_lookup(uint32_t handle);
void cma_insert(struct cma_id_priv *p);
void cma_remove(struct cma_id_priv *p);

/* --- device.c --- */
/* The device of that name, opened; NULL with errno set. */
struct cma_device *cma_dev_get(const char *name);
struct ibv_pd *cma_dev_pd(struct cma_device *d);

/* --- id.c --- */
struct cma_id_priv *cma_alloc_id(struct rdma_event_channel *ch, void *context,
				 enum rdma_port_space ps,
				 enum ibv_qp_type qp_type);
void cma_free_id(struct cma_id_priv *p);
/* Refresh the id's addresses, device and path from the daemon, or from
 * what an event brought. */
int cma_query(struct cma_id_priv *p);
int cma_query_apply(struct cma_id_priv *p, struct srd_cm_query_rep *r);
/* For a synchronous id: wait for its next event; 0 or -1 and errno. */
int cma_complete(struct cma_id_priv *p);
int cma_create_id2(struct rdma_event_channel *channel, struct rdma_cm_id **id,
		   void *context, enum rdma_port_space ps,
		   enum ibv_qp_type qp_type);

/* --- qp.c --- */
int cma_modify_qp_rtr(struct rdma_cm_id *id, uint8_t resp_res);
int cma_modify_qp_rts(struct rdma_cm_id *id, uint8_t init_depth);
int cma_modify_qp_err(struct rdma_cm_id *id);
/* rdma_init_qp_attr, answered from what the last event brought when it
 * can be (no round trip). */
int cma_qp_attr(struct cma_id_priv *p, struct ibv_qp_attr *a, int *mask);
bool cma_is_ud(enum ibv_qp_type t);

/* --- mcast.c --- */
/* A MULTICAST_JOIN or MULTICAST_ERROR event: fill it and attach the QP.
 * -1: the join was left meanwhile, the event is dropped. */
int cma_mc_event(struct cma_id_priv *p, struct cma_event *e,
		 const struct srd_cm_event_rep *r);
/* The id goes: its joins are forgotten. */
void cma_mc_id_gone(struct cma_id_priv *p);

/* --- conn.c --- */
/* The active side's answer to CONNECT_RESPONSE: QP to RTS, then RTU. */
int cma_process_conn_resp(struct cma_id_priv *p);

/* --- ece.c --- */
/* A QP made by rdma_create_qp: its provider's options become ours (and,
 * for a request's id, learn the peer's); then, once it is set up, what
 * the provider kept.  0, or -1 and errno. */
int cma_ece_qp_created(struct cma_id_priv *p, struct ibv_qp *qp);
int cma_ece_qp_ready(struct cma_id_priv *p, struct ibv_qp *qp);
/* CONNECT_RESPONSE for an id with a QP: the peer's options to the
 * provider, the QP to RTS, the RTU.  0 or a negative errno. */
int cma_ece_conn_resp(struct cma_id_priv *p, uint32_t vendor_id,
		      uint32_t options);

#endif
