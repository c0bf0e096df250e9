/* SPDX-License-Identifier: MIT */
/*
 * Interfaces between the daemon's subsystems, each a folder of daemon/
 * (docs/ARCHITECTURE.md, "The daemon's folders").  What the engine
 * (transport/) may use is in daemon/core/objects.h.
 */
#ifndef SOFTRDMA_DAEMON_CORE_H
#define SOFTRDMA_DAEMON_CORE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/proto.h"
#include "daemon/core/objects.h"

/* --- log.c ---------------------------------------------------------------- */
enum {
	SRD_LOG_ERR,
	SRD_LOG_WARN,
	SRD_LOG_INFO,
	SRD_LOG_DEBUG
};
/* Log to fd (-1: nowhere); messages above level are dropped. */
void srd_log_open(int fd, int level);
void srd_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* --- table.c -------------------------------------------------------------- */
/* Indices are handed out from [first, first + max). */
int table_init(struct srd_table *t, uint32_t first, uint32_t max);
/* Hand out indices at random among at least span slots (more as the table
 * fills), and random generation bytes, as rxe draws its keys. */
void table_randomize(struct srd_table *t, uint32_t span);
void table_fini(struct srd_table *t);
/* Store obj in a free slot; returns its index or -ENOMEM when full. */
int64_t table_alloc(struct srd_table *t, void *obj);
void *table_get(const struct srd_table *t, uint32_t idx);
void table_free(struct srd_table *t, uint32_t idx);
/* Generation byte of a slot (changed by every table_free). */
uint8_t table_gen(const struct srd_table *t, uint32_t idx);
void table_bump_gen(struct srd_table *t, uint32_t idx);
/* One past the highest index ever handed out (for scans). */
static inline uint32_t table_end(const struct srd_table *t)
{
	return t->first + t->size;
}

/* --- shm.c ---------------------------------------------------------------- */
/*
 * Create a memfd of len bytes, map it shared read-write into the daemon
 * (*map) and seal its size.  extra_seals are added after mapping.
 * Returns the fd or a negative errno.
 */
int shm_create(const char *name, size_t len, unsigned int extra_seals,
	       void **map);

/* --- device.c ------------------------------------------------------------- */
void devices_fini(struct srd_daemon *d);
struct srd_device *device_by_index(struct srd_daemon *d, uint32_t index);
uint32_t device_count(struct srd_daemon *d);
/* IB MTU enum that fits a netdev MTU once RoCEv2 headers are taken off. */
enum ibv_mtu device_mtu_for_netdev(uint32_t netdev_mtu);
bool device_gid_valid(const struct srd_device *dev, uint32_t index);

/* --- daemon.c ------------------------------------------------------------- */
struct srd_config; /* link.h */
struct srd_req;	   /* below */
struct srd_options {
	const char *socket_name;
	uint64_t spin_us;
	bool spin_yield; /* yield the CPU while idle-polling */
	uint64_t idle_exit_s;
	bool no_default_device;		 /* no softrdma0 on lo */
	const struct srd_config *config; /* devices to add; NULL: none */
};
int daemon_init(struct srd_daemon *d, const struct srd_options *o,
		int listen_fd);
void daemon_fini(struct srd_daemon *d);

/* --- loop.c --------------------------------------------------------------- */
/* Run until SIGTERM/SIGINT or the idle timeout; returns 0 or -errno. */
int daemon_run(struct srd_daemon *d);
/* Serve another fd in the loop: cb(d, arg) runs when fd is readable.
 * Returns 0, -ENOSPC (too many) or -errno from epoll_ctl. */
int loop_add_fd(struct srd_daemon *d, int fd,
		void (*cb)(struct srd_daemon *d, void *arg), void *arg);
void loop_del_fd(struct srd_daemon *d, int fd);

/* --- idle.c --------------------------------------------------------------- */
/* A device was added at run time: it holds the daemon while it lives. */
void idle_link_added(struct srd_daemon *d);
/* Does something keep the daemon from exiting when idle? */
bool idle_held(struct srd_daemon *d, uint64_t now);
/* When the idle daemon must look again (exit or re-check), or
 * UINT64_MAX. */
uint64_t idle_deadline(struct srd_daemon *d, uint64_t now);

/* --- context.c ------------------------------------------------------------ */
/* May the process that sent rq use raw Ethernet (CAP_NET_RAW)?  It
 * proves it with a packet socket of the daemon's network namespace as the
 * request's one fd. */
bool req_net_raw(const struct srd_req *rq);

/* --- client.c ------------------------------------------------------------- */
/* Accept every pending connection on the listening socket. */
void client_accept_all(struct srd_daemon *d);
/* Serve readable input; destroys the client on EOF or a fatal error. */
void client_input(struct srd_client *c, uint32_t events);
/* Hold (or let go of) the fd kept for refusing connections when the
 * daemon runs out of fds. */
void client_spare_fd(bool hold);
/* Release everything c owned, close its connection and free it. */
void client_destroy(struct srd_client *c);
/* A client's memory access, refcounted: pvm MRs hold the one of the
 * process that registered them. */
struct srd_client_mem *client_mem_new(void);
struct srd_client_mem *client_mem_get(struct srd_client_mem *m);
void client_mem_put(struct srd_client_mem *m);

/* --- share.c: shared contexts (ibv_import_device) ------------------------ */
/* OPEN_DEVICE's SRD_OPEN_F_BIND / _IMPORT with the fd that came last. */
int share_bind(struct srd_client *c, int fd);
int share_import(struct srd_client *c, int fd);
/* A SRD_CMD_CTX_PROBE arrived as a request on c: not c's bind. */
void share_stray_probe(struct srd_client *c);
/* c goes: a context cuts off its importers' connections. */
void share_client_gone(struct srd_client *c);

/* A listing is judged on the namespace of the request's sender: learnt
 * (once per request) by client_view(), which listings call first. */
void client_view(struct srd_client *c);
/* The pid of owner as who's view sees it; 0 when it does not (the kernel
 * lists such objects to nobody there). */
pid_t client_pid_seen_by(const struct srd_client *owner,
			 const struct srd_client *who);

/* --- limits.c ------------------------------------------------------------- */
/* Defaults from the device tables, vm.max_map_count and the RAM. */
void limits_defaults(struct srd_daemon *d);
/* A client is accounted to its uid from its first request on. */
int limits_client_add(struct srd_client *c);
void limits_client_gone(struct srd_client *c);
/* Take n of r for c (and its user): 0 or -ENOMEM over a limit. */
int limits_charge(struct srd_client *c, enum srd_res r, uint64_t n);
void limits_uncharge(struct srd_client *c, enum srd_res r, uint64_t n);
/* Take n of r for c even over a limit: what c inherits (a shared XRC
 * target QP whose owner went) cannot be refused. */
void limits_charge_over(struct srd_client *c, enum srd_res r, uint64_t n);
/* table_alloc / table_free of an object of type r owned by c, charged. */
int64_t res_alloc(struct srd_client *c, enum srd_res r, void *obj);
void res_free(struct srd_daemon *d, struct srd_client *c, enum srd_res r,
	      uint32_t idx);

/* --- dispatch.c ----------------------------------------------------------- */
#define SRD_REP_MAX_FDS 4
struct srd_req {
	uint32_t op;
	const void *data; /* payload after the header */
	uint32_t len;
	int *fds; /* received fds; a handler that keeps one sets it to -1 */
	int nfds;
	/* The connection it came on: c itself, or an importer of c (its
	 * process's memory is what REG_MR describes).  NULL: c. */
	struct srd_client *conn;
	/* The process that sent it, as the kernel saw it send: every
	 * right is judged on it, not on whoever opened the connection. */
	struct srd_msg_cred sender;
};
static inline struct srd_client *req_conn(struct srd_client *c,
					  const struct srd_req *rq)
{
	return rq->conn ? rq->conn : c;
}
struct srd_rep {
	uint32_t len;
	int fds[SRD_REP_MAX_FDS];
	int nfds;
	unsigned int keep_mask; /* bit i: the daemon keeps fds[i] open */
	bool err_payload; /* an error reply keeps the payload (a reason) */
	_Alignas(8) uint8_t data[SRD_MSG_MAX - sizeof(struct srd_msg_hdr)];
};
/* Handle one request; returns 0 or the negative errno to reply with. */
int dispatch(struct srd_client *c, struct srd_req *rq, struct srd_rep *rp);
/* Typed view of the reply payload; sets its length. */
#define REP(rp, type) ((type *)rep_payload((rp), sizeof(type)))
void *rep_payload(struct srd_rep *rp, size_t len);
void rep_add_fd(struct srd_rep *rp, int fd, bool keep);

/* Command handlers (one per op), in the file of their object. */
typedef int srd_cmd_fn(struct srd_client *c, struct srd_req *rq,
		       struct srd_rep *rp);

/* Command descriptor flags. */
enum {
	F_VAR = 1 << 0,	     /* variable length: len is a minimum */
	F_FDS = 1 << 1,	     /* may carry fds (the handler checks how many) */
	F_NO_HELLO = 1 << 2, /* allowed before HELLO */
	F_NO_DEV = 1 << 3,   /* allowed before OPEN_DEVICE */
};

struct cmd_desc {
	srd_cmd_fn *fn;
	uint32_t len; /* exact payload size, or the minimum with F_VAR */
	unsigned int flags;
};

/* A family of commands: ops base .. base + count - 1 (common/proto.h). */
struct cmd_family {
	uint32_t base;
	uint32_t count;
	const struct cmd_desc *cmds; /* indexed by op - base */
};

extern const struct cmd_family verbs_cmd_family; /* dispatch.c */
extern const struct cmd_family admin_cmd_family; /* admin.c */
extern const struct cmd_family cm_cmd_family;	 /* cm/ */

/* --- cm/: the connection manager's place in the loop -------------------- */
/* Its pass: QP1 completions and CM timers.  True if it did any work. */
bool cm_progress(struct srd_daemon *d, uint64_t now_ns);
/* Earliest CM timer in ns, or UINT64_MAX. */
uint64_t cm_next_deadline(struct srd_daemon *d);
/* A client's connection closes: its event channel and ids go. */
void cm_client_gone(struct srd_client *c);
void cm_fini(struct srd_daemon *d);
srd_cmd_fn cmd_hello, cmd_list_devices, cmd_open_device;
srd_cmd_fn cmd_query_device, cmd_query_port, cmd_query_gid, cmd_query_pkey;
srd_cmd_fn cmd_alloc_pd, cmd_dealloc_pd;
srd_cmd_fn cmd_reg_mr, cmd_rereg_mr, cmd_dereg_mr, cmd_advise_mr;
srd_cmd_fn cmd_alloc_mw, cmd_dealloc_mw;
srd_cmd_fn cmd_create_comp_channel, cmd_destroy_comp_channel;
srd_cmd_fn cmd_create_cq, cmd_resize_cq, cmd_destroy_cq;
srd_cmd_fn cmd_create_qp, cmd_modify_qp, cmd_query_qp, cmd_destroy_qp;
srd_cmd_fn cmd_create_srq, cmd_modify_srq, cmd_query_srq, cmd_destroy_srq;
srd_cmd_fn cmd_create_ah, cmd_destroy_ah;
srd_cmd_fn cmd_modify_cq;
srd_cmd_fn cmd_alloc_dm, cmd_free_dm, cmd_reg_dm_mr;
srd_cmd_fn cmd_place_setup;
srd_cmd_fn cmd_open_xrcd, cmd_close_xrcd, cmd_open_qp;
srd_cmd_fn cmd_import_pd, cmd_import_mr, cmd_import_dm;
srd_cmd_fn cmd_create_flow, cmd_destroy_flow;

/* --- object lookups and destructors (per object file) ---------------------- */
struct srd_pd *pd_get(struct srd_client *c, uint32_t handle);
void pd_destroy(struct srd_pd *pd);
struct srd_mr *mr_get(struct srd_client *c, uint32_t handle);
void mr_destroy(struct srd_mr *mr);
void mw_destroy(struct srd_mw *mw);
struct srd_comp_channel *channel_get(struct srd_client *c, uint32_t handle);
void channel_destroy(struct srd_comp_channel *ch);
struct srd_cq *cq_get(struct srd_client *c, uint32_t handle);
void cq_destroy(struct srd_cq *cq);
struct srd_qp *qp_get(struct srd_client *c, uint32_t handle);
void qp_destroy(struct srd_qp *qp);
struct srd_srq *srq_get(struct srd_client *c, uint32_t handle);
void srq_destroy(struct srd_srq *srq);
void ah_destroy(struct srd_ah *ah);
struct srd_dm *dm_get(struct srd_client *c, uint32_t handle);
void dm_destroy(struct srd_dm *dm);
/* Check an address vector as CREATE_AH and MODIFY_QP(AV) need it. */
int ah_attr_check(const struct srd_device *dev, const struct ibv_ah_attr *a);

/* --- xrcd.c: XRC domains ------------------------------------------------ */
struct srd_xrcd_handle *xrcd_get(struct srd_client *c, uint32_t handle);
void xrcd_handle_destroy(struct srd_xrcd_handle *xh);
/* c holds the XRC_RECV QP qp (created or opened it): its entry, or NULL. */
struct srd_qp_open *xrc_qp_open_of(const struct srd_qp *qp,
				   const struct srd_client *c);
/* c lets go of the XRC_RECV QP qp; the last holder destroys it, others
 * inherit it from its owner. */
void xrc_qp_close(struct srd_qp *qp, struct srd_client *c);
/* c goes: its hold on every XRC_RECV QP goes first. */
void xrc_client_gone(struct srd_client *c);

/* --- qp_state.c ------------------------------------------------------------ */
/*
 * The IBTA QP state machine: whether going from cur to next with attr_mask
 * is legal for the QP type (required attributes present, nothing else but
 * the optional ones).
 */
bool qp_modify_is_ok(enum ibv_qp_state cur, enum ibv_qp_state next,
		     enum ibv_qp_type type, uint32_t attr_mask);

/* --- dm.c, device memory --------------------------------------------------- */
/* Bytes of device memory a device has (max_dm_size), and the granule an
 * allocation is counted in, as ConnectX's MEMIC counts it. */
#define SRD_DM_MAX_SIZE (256u * 1024)
#define SRD_DM_GRANULE 64u

/* --- cq_mod.c: CQ moderation ------------------------------------------------ */
/* The limits ConnectX reports (cq_mod_caps). */
#define SRD_CQ_MOD_MAX_COUNT 65535
#define SRD_CQ_MOD_MAX_PERIOD 4095 /* µs */
/* A CQE that the CQ's arm asks an event for was written: true if
 * moderation holds the event back for now. */
bool cq_mod_hold(struct srd_cq *cq);
/* The event was raised (or the CQ goes): forget what was held. */
void cq_mod_reset(struct srd_cq *cq);
/* Raise the events whose period ran out; true if any was. */
bool cq_mod_progress(struct srd_daemon *d, uint64_t now_ns);
/* Earliest moderation deadline in ns, or UINT64_MAX. */
uint64_t cq_mod_next_deadline(struct srd_daemon *d);
/* Raise cq's completion event now, if it is armed. */
void cq_raise_event(struct srd_cq *cq);

/* --- cq.c --------------------------------------------------------------- */
/* Create a CQ object without a command (unit tests, internal users). */
int cq_create(struct srd_client *c, uint32_t cqe, struct srd_comp_channel *ch,
	      uint64_t user_handle, struct srd_cq **out, int *memfd);

#endif
