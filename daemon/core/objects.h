/* SPDX-License-Identifier: MIT */
/*
 * softrdmad's objects: what ib_core's object tables and a NIC's context
 * memory hold.  The daemon is single threaded (one epoll loop runs the
 * command channels and the transport engine), so nothing here is locked.
 *
 * Ownership: every object belongs to one client (an opened context).  When
 * the client's connection closes, client_destroy() releases everything it
 * owned, QPs first.
 */
#ifndef SOFTRDMA_DAEMON_OBJECTS_H
#define SOFTRDMA_DAEMON_OBJECTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <infiniband/softrdma.h>
#include <infiniband/verbs.h>

#include "common/list.h"
#include "common/msg.h"
#include "common/proto.h"
#include "common/ring.h"
#include "daemon/core/limits.h"

struct srd_daemon;
struct srd_client;
struct srd_qp_transport; /* engine-private per-QP state (transport/) */
struct srd_raw_port;	 /* raw packet QPs' socket and flow rules (flow.h) */

/* Generic index table: handles and keys are table indices. */
struct srd_table {
	void **slot;
	uint32_t size; /* allocated slots */
	uint32_t max;  /* hard limit (device attribute) */
	uint32_t count;
	uint32_t hint;	/* next index to try */
	uint32_t first; /* smallest index handed out */
	uint8_t *gen;	/* per slot: changed on every free (MR key byte) */
	/* table_randomize(): indices and generations drawn at random from
	 * at least span slots, so none can be guessed from another. */
	bool random;
	uint32_t span;
};

/* Per-QP counters (as rdma statistic shows them): the engine counts them,
 * a device keeps what its destroyed QPs had counted. */
struct srd_tp_counters {
	uint64_t tx_pkts;
	uint64_t rx_pkts;
	uint64_t retransmits;
	uint64_t timeouts;
	uint64_t rnr_naks_sent;
	uint64_t rnr_naks_rcvd;
	uint64_t seq_naks_sent;
	uint64_t seq_naks_rcvd;
	uint64_t dup_requests;
	uint64_t qkey_drops;
	uint64_t no_rwqe_drops;	 /* UC/UD message with no receive WQE */
	uint64_t uc_drops;	 /* UC messages dropped by the responder */
	uint64_t rx_drops;	 /* out of state, bad opcode for the QP */
	uint64_t delay_backoffs; /* window cuts for a growing round trip */
	uint64_t xrc_srqn_errs;	 /* XRC requests naming no SRQ of the domain */
	uint64_t place_jobs;	 /* WRITEs placed by the memory's owner */
	uint64_t place_copied;	 /* ... which the daemon copied after all */
	uint64_t place_waits;	 /* requests dropped behind a placement */
	uint64_t place_staged;	 /* jobs staged for memory on demand */
};

struct srd_port {
	enum ibv_port_state state;
	enum ibv_mtu max_mtu;
	enum ibv_mtu active_mtu;
	uint32_t netdev_mtu;
	union ibv_gid gid[SRD_MAX_GIDS];
	bool gid_valid[SRD_MAX_GIDS];
	uint32_t gid_count;
	/* PortInfo's P_Key and Q_Key violations: 16 bits, stopping at
	 * 0xffff. */
	uint32_t bad_pkey;
	uint32_t qkey_viol;
};

struct srd_device {
	struct list_node node; /* in daemon->devices */
	uint32_t index;
	char name[64];
	char netdev[64];
	uint64_t node_guid; /* big endian */
	struct ibv_device_attr attr;
	struct srd_port port; /* port 1 */
	/* QP1 (cm/gsi.c): reached by QPN 1 on this device, in no table. */
	struct srd_qp *gsi;
	struct srd_mcast *mcast; /* multicast groups (mcast.h), or NULL */
	struct srd_device_caps_ex caps_ex; /* ibv_query_device_ex's extras */
	uint64_t dm_used;	  /* bytes of device memory allocated (dm.c) */
	struct srd_raw_port *raw; /* while it has raw packet QPs, or NULL */
};

struct srd_pd {
	uint32_t handle;
	struct srd_client *owner;
	uint32_t refcnt; /* MRs, QPs, SRQs, AHs using it */
};

/* How the daemon reaches one page-aligned piece of an MR's span. */
struct srd_mr {
	uint32_t handle;
	uint32_t lkey;
	uint32_t rkey;
	struct srd_client *owner;
	struct srd_pd *pd;
	struct srd_device *dev;
	int access;    /* IBV_ACCESS_* */
	uint64_t addr; /* client virtual address of byte 0 */
	uint64_t iova; /* address peers use for byte 0 */
	uint64_t length;
	/* The daemon's mapping of the span that covers [addr, addr+length):
	 * base points at the byte that corresponds to addr.  NULL when any
	 * piece is reached through the owner's address space (then pvm is
	 * set, see struct srd_client_mem). */
	uint8_t *base;
	void *map; /* start of the daemon mapping */
	size_t map_len;
	bool pvm; /* reached through mem */
	/* On-demand paging: nothing was checked or pinned at registration;
	 * every access checks that the pages are mapped with the rights it
	 * needs (mr_odp_check).  Implicit: addr = iova = 0, length
	 * UINT64_MAX, the owner's whole address space. */
	bool odp;
	/* pvm: the address space of the process that registered it (an
	 * importer's, on a shared context), held while the MR lives. */
	struct srd_client_mem *mem;
	struct srd_dm *dm; /* an MR over device memory (base points in it) */
	uint32_t num_mw;   /* windows bound to it */
	uint64_t charged_bytes; /* against the owner's limits */
	uint64_t charged_maps;
};

/* Device memory (ibv_alloc_dm): a memfd of the daemon the client maps. */
struct srd_dm {
	uint32_t handle;
	struct srd_client *owner;
	struct srd_device *dev;
	uint64_t length;  /* as allocated */
	uint64_t charged; /* what it counts against max_dm_size */
	uint8_t *map;	  /* the daemon's mapping */
	size_t map_len;
	int fd;		 /* its memfd, for importers to map */
	uint32_t refcnt; /* MRs over it */
};

/*
 * A memory window.  rkey == tag << 24 | (handle - 1) << 8 | key byte: the
 * handle and the first key byte drawn at random by the window table, the
 * tag drawn at each ibv_alloc_mw from SRD_MW_TAG_MIN up, the key byte set
 * by each bind.  An MR's index is at most 0x10000, so an MR key's top byte
 * is 0 or 1 and the tag alone tells a window's key from an MR's (rxe
 * splits the space too).
 */
#define SRD_MW_TAG_MIN 2u
#define SRD_MAX_MW 65536 /* handles fit the 16 bits below the tag */

struct srd_mw {
	uint32_t handle; /* the index */
	uint32_t rkey;
	struct srd_client *owner;
	struct srd_pd *pd;
	uint8_t type; /* enum ibv_mw_type */
	bool bound;
	/* while bound */
	struct srd_mr *mr;
	uint64_t addr; /* start in the MR's iova space */
	uint64_t length;
	int access;   /* IBV_ACCESS_* (remote rights, ZERO_BASED) */
	uint32_t qpn; /* type 2: the QP it was bound through */
};

struct srd_comp_channel {
	uint32_t handle;
	struct srd_client *owner;
	int wfd;	 /* write end; the client holds the read end */
	uint32_t refcnt; /* CQs attached */
};

struct srd_cq {
	uint32_t handle;
	struct srd_client *owner;
	uint64_t user_handle;
	struct srd_comp_channel *channel;
	uint32_t cqe; /* what the application asked for / was told */
	uint32_t log_entries;
	uint32_t entries;
	uint32_t prod;		/* daemon-private producer index */
	struct srd_cq_ctl *ctl; /* shared, client writable */
	struct srd_cqe *ring;	/* shared */
	void *map;
	size_t map_len;
	uint32_t refcnt;     /* QPs using it */
	uint32_t place_cqes; /* its CQEs waiting on placement jobs */
	bool in_error;	     /* overrun: no more CQEs are written */
	bool stamp;	     /* write the device clock into each CQE */
	/* Moderation (cq_mod.c): an armed CQ raises its event after count
	 * CQEs or period µs after the first, whichever comes first. */
	struct {
		uint16_t count;
		uint16_t period;
		uint32_t pending;  /* CQEs held back since the arm */
		uint64_t deadline; /* ns, while timed */
		bool timed;	   /* in daemon->cq_timers */
		struct list_node node;
	} mod;
};

/*
 * An XRC domain.  Opened through a file it is shared by every context of
 * the device that opens the same file (uverbs keys it by the inode); it
 * lives while any context holds a handle on it.
 */
struct srd_xrcd {
	struct list_node node; /* in daemon->xrcds */
	struct srd_device *dev;
	bool shared; /* opened through a file: st_dev, st_ino name it */
	dev_t st_dev;
	ino_t st_ino;
	int fd;		/* the file while shared (it holds the inode), or -1 */
	uint32_t opens; /* handles on it */
};

/* One context's handle on an XRC domain. */
struct srd_xrcd_handle {
	uint32_t handle;
	struct srd_client *owner;
	struct srd_xrcd *xrcd;
	uint32_t refcnt; /* SRQs and QPs created or opened through it */
};

/* A context that holds an XRC_RECV QP: its creator or an opener. */
struct srd_qp_open {
	struct list_node node; /* in qp->opens */
	struct srd_client *c;
	struct srd_xrcd_handle *xh;
	uint64_t user_handle;
};

struct srd_srq {
	uint32_t handle; /* also the SRQ number an XRCETH names */
	struct srd_client *owner;
	struct srd_pd *pd;
	/* IBV_SRQT_XRC: its domain (through the owner's handle) and the CQ
	 * its receives complete on; NULL for a basic SRQ. */
	struct srd_xrcd_handle *xh;
	struct srd_cq *cq;
	uint64_t user_handle;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t entries;
	uint32_t slot_size;
	uint32_t cons;		 /* daemon-private consumer index */
	uint32_t limit;		 /* 0: not armed */
	struct srd_srq_ctl *ctl; /* shared */
	uint8_t *ring;		 /* shared */
	void *map;
	size_t map_len;
	uint32_t refcnt;     /* QPs using it */
	uint32_t place_cqes; /* its CQEs waiting on placement jobs */
	bool in_error;
};

struct srd_ah {
	uint32_t handle;
	struct srd_client *owner;
	struct srd_pd *pd;
	struct ibv_ah_attr attr;
};

/* A work queue as the daemon sees it: its own copies of the geometry. */
struct srd_wq {
	uint8_t *ring;		/* shared, client writable */
	struct srd_wq_ctl *ctl; /* shared */
	uint32_t entries;	/* power of two, 0 when absent */
	uint32_t slot_size;
	uint32_t max_wr; /* granted capability */
	uint32_t max_sge;
};

struct srd_qp {
	uint32_t handle;
	uint32_t qpn;
	struct srd_client *owner;
	struct srd_device *dev;
	struct srd_pd *pd;
	struct srd_cq *send_cq;
	struct srd_cq *recv_cq;
	/* NULL: the QP has its own RQ.  XRC_RECV: the SRQ the request being
	 * received names, and pd is that SRQ's PD (the QP has neither of
	 * its own); both NULL between requests that named none. */
	struct srd_srq *srq;
	uint64_t user_handle;
	/* XRC_RECV: its domain and the contexts that hold it (the owner is
	 * the first of them). */
	struct srd_xrcd *xrcd;
	struct list_head opens;
	enum ibv_qp_type type;
	bool sq_sig_all;
	struct ibv_qp_cap cap;
	/* Current attributes, as query_qp reports them; qp_state is the
	 * authoritative state. */
	struct ibv_qp_attr attr;
	struct srd_wq sq;
	struct srd_wq rq;
	void *map;
	size_t map_len;
	struct list_node node;	     /* in daemon->qps (engine scan list) */
	struct srd_qp_transport *tp; /* engine-owned */
	uint32_t mcast_attached;     /* multicast groups it is attached to */
	uint32_t nflows;	     /* flow rules steering to it */
};

/* RC and both halves of XRC: acknowledged, in order, with READs and
 * atomics; the transport treats them alike. */
static inline bool srd_qpt_reliable(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC || t == IBV_QPT_XRC_SEND ||
	       t == IBV_QPT_XRC_RECV;
}

/* What one uid holds, over all its clients (limits.c). */
struct srd_user {
	struct list_node node; /* in daemon->users */
	uid_t uid;
	uint32_t clients;
	struct srd_usage usage;
};

/*
 * How the daemon reaches the client's memory outside memfds, as
 * OPEN_DEVICE handed it over (common/proto.h, docs/trust.md): with
 * pread/pwrite on the client's own /proc/PID/mem, which refers to the
 * address space it was opened in and to no other.
 */
struct srd_client_mem {
	uint32_t refs; /* the connection and the pvm MRs it registered */
	enum srd_mem_access kind;
	int fd; /* the mem file; -1 with SRD_MEM_NONE */
	/* The process that handed the mem file over: only requests it
	 * sends may describe memory reached through it. */
	pid_t pid;
	/* The client's /proc/self/maps, or -1.  The mem file reaches
	 * PROT_NONE and read-only pages too (FOLL_FORCE): ODP accesses ask
	 * this one what is mapped, and how, right now. */
	int maps_fd;
	/* Seen alive until then (objects/mem.c), 0: not yet. */
	uint64_t alive_until;
	/* Its placement ring (transport/place.c), once it asked for one. */
	struct srd_place *place;
};

#define SRD_NS_DEPTH 8
/* A process's pid namespaces, its own first, up to the daemon's, and its
 * pid in each (depth 0: unknown): a listing shows another's objects only
 * to a caller whose namespace sees the owner, with the pid it sees. */
struct srd_pidns {
	uint64_t ino[SRD_NS_DEPTH];
	pid_t pid[SRD_NS_DEPTH];
	uint32_t depth;
};

/*
 * A context: one command connection.  An importer's connection (OPEN_DEVICE
 * with SRD_OPEN_F_IMPORT) is a client of its own (its process, memory
 * access, async pipe) whose verbs commands work on ctx, the context it
 * imported: objects it makes are ctx's, as in a kernel ufile shared by
 * two processes.
 */
struct srd_client {
	struct list_node node; /* in daemon->clients */
	struct srd_daemon *d;
	int fd;	       /* command socket */
	int async_wfd; /* write end of the async event pipe, -1 if none */
	int trace_fd;  /* client's stderr for CQE traces, -1 if none */
	uint32_t trace_flags;
	bool trace_sock;	/* trace_fd is a socket: send(MSG_DONTWAIT) */
	uint64_t trace_dropped; /* trace lines that could not be written */
	pid_t pid;
	struct srd_device *dev;	    /* NULL until OPEN_DEVICE */
	struct srd_client_mem *mem; /* never NULL once connected */
	struct srd_client *ctx;	    /* importer: the context it works on */
	/* A context bound to its client end (SRD_OPEN_F_BIND): the inode
	 * a cmd_fd must have to import it. */
	bool bound;
	dev_t cmd_dev;
	ino_t cmd_ino;
	bool dead;
	bool hello;    /* HELLO accepted */
	uid_t uid;     /* from SO_PEERCRED */
	bool cred;     /* ... which the kernel gave */
	char comm[16]; /* the process's name, for listings */
	/* Who sent the request being served on this connection (its
	 * SCM_CREDENTIALS): what administration rights are judged on. */
	struct srd_msg_cred sender;
	/* The pid namespaces of the process that connected (learnt at
	 * accept), and of the request's sender when that is another
	 * process (learnt when a listing needs it, client_view()). */
	struct srd_pidns ns;
	struct srd_pidns sender_ns;
	/* The view the request being served is judged on (client_view()),
	 * NULL until a listing asks: unknown, its own objects only. */
	const struct srd_pidns *view;
	struct srd_usage usage; /* what it holds (limits.c) */
	struct srd_user *user;
};

struct srd_daemon {
	struct list_head devices;
	struct list_head clients;
	struct list_head qps; /* every QP, for the engine's scan */
	struct srd_table pds, mrs, mws, cqs, qps_by_num, srqs, ahs, channels,
		dms, xrcds;
	struct list_head xrcds_list; /* struct srd_xrcd */
	struct list_head users; /* struct srd_user, one per uid with clients */
	struct srd_limits limits;
	struct list_head cq_timers; /* CQs whose moderation period runs */
	int epfd;
	int listen_fd;
	int doorbell_fd; /* eventfd clients kick when the engine sleeps */
	int dev_page_fd;
	struct srd_dev_page *dev_page;
	uint32_t qp_handle_dummy;
	struct srd_engine *engine; /* transport/ state */
	struct srd_cm *cm;	   /* cm/ state, made by the first CM command */
	/* main loop (loop.c) */
	int sig_fd;
	bool stop;
	uint32_t nclients;
	uint64_t spin_ns;      /* busy-poll this long after the last work */
	bool spin_yield;       /* ... yielding the CPU between idle passes */
	uint64_t idle_exit_ns; /* exit after this long without clients; 0 */
	uint64_t idle_since;   /* when the last client left */
	struct {	       /* idle.c: what holds an idle daemon */
		bool looked;   /* netns searched for */
		bool held;
		bool netns_gone;
		char netns[256]; /* its name under /run/netns, or "" */
		uint64_t checked;
	} idle;
	bool engine_up; /* engine_init succeeded */
	/* Context sharing refused: probes that came on another connection
	 * than they were sent for, binds and imports that failed. */
	uint64_t share_rejects;
};

/* --- services the core offers to the engine ---------------------------- */

/* Monotonic clock in nanoseconds. */
uint64_t srd_now_ns(void);

/*
 * Write one CQE (everything but the owner byte, which cq_push sets) and
 * raise the completion channel if the CQ is armed for it.  Returns 0, or
 * -ENOSPC when the CQ overflowed: the CQ is then in error, IBV_EVENT_CQ_ERR
 * has been sent, and the caller must move the QP to the error state.
 */
int cq_push(struct srd_cq *cq, const struct srd_cqe *cqe);

/* Send an async event to the owner of an object. */
void client_async_event(struct srd_client *c, enum ibv_event_type type,
			uint64_t user_handle);

/* Move a QP to IBV_QPS_ERR from inside the daemon (engine errors, peer
 * loss, CQ overrun); sends IBV_EVENT_QP_FATAL-class events as asked
 * (event < 0: none). */
void qp_enter_error(struct srd_qp *qp, int event);

/* An async event of a QP to its owner (to each holder of a shared XRC
 * target QP). */
void qp_async_event(struct srd_qp *qp, enum ibv_event_type type);

/* Look up a QP by number on a device; NULL if none. */
struct srd_qp *qp_lookup_num(struct srd_daemon *d, uint32_t qpn);

/* An XRCETH's SRQ number: the XRC SRQ of domain xrcd, or NULL. */
struct srd_srq *xrc_srq_lookup(struct srd_daemon *d, uint32_t srqn,
			       const struct srd_xrcd *xrcd);

/* Look up an MR by lkey or rkey (the same value); NULL if none. */
struct srd_mr *mr_lookup_key(struct srd_daemon *d, uint32_t key);

/*
 * Resolve a remote key (an MR's rkey or a bound window's) for len bytes at
 * *va with the access rights asked for, arriving on QP qpn of PD pd.  On
 * success *va is moved into the MR's iova space (a window may be zero
 * based); NULL when the key, PD, QP, rights or bounds say no.
 */
struct srd_mr *rkey_lookup(struct srd_daemon *d, uint32_t key,
			   const struct srd_pd *pd, uint32_t qpn, uint64_t *va,
			   uint64_t len, int access);
/* The same for a copy about to be made (mr_copy, mr_read, mr_write):
 * whether a pvm MR's owner is still there is left to the copy, which
 * finds out anyway (-ESRCH) and so costs no system call of its own. */
struct srd_mr *rkey_lookup_copy(struct srd_daemon *d, uint32_t key,
				const struct srd_pd *pd, uint32_t qpn,
				uint64_t *va, uint64_t len, int access);
/* Execute a BIND_MW WQE posted on qp: 0 or a negative errno. */
int mw_bind(struct srd_daemon *d, const struct srd_qp *qp,
	    const struct srd_send_wqe *w);
/* Invalidate rkey for qp: a LOCAL_INV posted on it, or (remote) a SEND
 * with Invalidate that arrived on it.  0 or a negative errno. */
int key_invalidate(struct srd_daemon *d, const struct srd_qp *qp, uint32_t rkey,
		   bool remote);

/* Look up an AH by handle, checking it belongs to c. */
struct srd_ah *ah_lookup(struct srd_client *c, uint32_t handle);

/*
 * Check that [va, va+len) lies within mr (va is in the MR's iova space),
 * that access (IBV_ACCESS_* bits needed) is granted, that pd matches
 * (pd == NULL: don't check), and that a pvm MR's owner still has its
 * address space.  Returns 0 or -EACCES / -EINVAL / -EFAULT.
 */
int mr_check(const struct srd_mr *mr, const struct srd_pd *pd, uint64_t va,
	     uint64_t len, int access);
/* mr_check without the owner check, for a range about to be copied. */
int mr_check_copy(const struct srd_mr *mr, const struct srd_pd *pd, uint64_t va,
		  uint64_t len, int access);

/*
 * Copy len bytes between two MR ranges already checked with
 * mr_check_copy: dst at dst_va within dst_mr, src at src_va within src_mr
 * (iova space).  One copy when both are mapped; through the owners'
 * address spaces (struct srd_client_mem) otherwise.  Returns 0, -ESRCH
 * when an owner's address space is gone (the MR is as good as gone), or
 * -EFAULT when a page could not be reached; *failed (if not NULL) names
 * the MR that failed.  Bytes before the failure may have been copied.
 */
int mr_copy(struct srd_mr *dst_mr, uint64_t dst_va, struct srd_mr *src_mr,
	    uint64_t src_va, uint64_t len, struct srd_mr **failed);
/* Copy between an MR range and daemon memory (errors as mr_copy's). */
int mr_read(struct srd_mr *mr, uint64_t va, void *buf, uint64_t len);
/* Does the address space a pvm MR is reached through still exist?  Once
 * its client is gone the MR reads and writes nothing. */
bool mr_owner_alive(const struct srd_mr *mr);
/* pread/pwrite on a client's mem file: 0, -ESRCH (the address space is
 * gone) or -EFAULT. */
int mem_file_xfer(const struct srd_client_mem *m, uint64_t addr, void *buf,
		  uint64_t len, bool write);
/* Is that range of the client mapped readable (writable if write) now,
 * by the maps it handed over?  0 or -EFAULT (objects/odp.c). */
int mem_maps_check(const struct srd_client_mem *cm, uint64_t addr, uint64_t len,
		   bool write);
/* The client's memory is no longer reachable: its placement ring goes. */
void engine_mem_gone(struct srd_client_mem *m);
/* A CQ goes: its CQEs still waiting on placement jobs go with it. */
void engine_place_cq_gone(struct srd_daemon *d, struct srd_cq *cq);
int mr_odp_check(const struct srd_mr *mr, uint64_t va, uint64_t len,
		 bool write);
int mr_write(struct srd_mr *mr, uint64_t va, const void *buf, uint64_t len);
/* Daemon pointer to an MR range (for atomics); NULL when not mapped. */
uint8_t *mr_ptr(struct srd_mr *mr, uint64_t va);

/* --- the engine's entry points (transport/) ---------------------------- */

int engine_init(struct srd_daemon *d);
void engine_fini(struct srd_daemon *d);
/* One pass over every QP and the in-memory wire.  Returns true if any
 * work was done (the main loop keeps polling while work comes). */
bool engine_progress(struct srd_daemon *d, uint64_t now_ns);
/* Earliest timer (retransmit, RNR) in ns, or UINT64_MAX. */
uint64_t engine_next_deadline(struct srd_daemon *d);
/* QP lifecycle hooks, called by the core. */
int engine_qp_create(struct srd_qp *qp);
void engine_qp_destroy(struct srd_qp *qp);
/*
 * Called after a successful modify_qp; old is the previous state.  Ring
 * indices are free running and never rewound: after a move to RESET the
 * engine takes the rings' current prod as its starting point (what was
 * posted before is dropped) and the library keeps counting from there.
 */
void engine_qp_modified(struct srd_qp *qp, enum ibv_qp_state old,
			int attr_mask);
/* The device's GIDs, MTU or devices changed: qp takes its route and path
 * MTU anew before it next sends. */
void engine_qp_path_changed(struct srd_qp *qp);
/* Called after an SRQ was armed or destroyed. */
void engine_srq_destroyed(struct srd_srq *srq);

#endif
