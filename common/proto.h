/* SPDX-License-Identifier: MIT */
/*
 * The command channel between the verbs library and softrdmad: what
 * /dev/infiniband/uverbsN and the ib_uverbs commands are to a kernel
 * provider.  One SOCK_SEQPACKET connection per opened context (plus short
 * lived ones to list devices).  Every request is answered by exactly one
 * reply carrying the same op; file descriptors travel as SCM_RIGHTS.
 *
 * Both ends come from the same build; SRD_PROTO_VERSION is checked at
 * SRD_CMD_HELLO so a stale daemon is refused rather than misread.
 *
 * Handles are the daemon's; user_handle fields are the library's own
 * values (object pointers) echoed back in events.
 */
#ifndef SOFTRDMA_COMMON_PROTO_H
#define SOFTRDMA_COMMON_PROTO_H

#include <assert.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#define SRD_PROTO_VERSION 3

/* Abstract UNIX socket name (per network namespace).  SOFTRDMA_SOCKET in
 * the environment overrides it, for tests that run a private daemon. */
#define SRD_SOCKET_DEFAULT "softrdma"
#define SRD_SOCKET_ENV "SOFTRDMA_SOCKET"
/* Path of the daemon binary the library starts when none is running. */
#define SRD_DAEMON_ENV "SOFTRDMAD"

#define SRD_MSG_MAX 8192 /* largest request or reply, header included */
#define SRD_MAX_FDS 64	 /* most fds in one message */
#define SRD_DEV_NAME_MAX 64
#define SRD_MAX_GIDS 16
#define SRD_MAX_DEVICES 32
#define SRD_MR_MAX_PIECES 60 /* pieces (one fd each) in one REG_MR */
/*
 * The device's vendor ID (ibv_device_attr.vendor_id, and the ECE vendor ID
 * ibv_set_ece takes).  No IEEE OUI is assigned to softrdma; 0xFFFFFF is
 * what Soft-RoCE reports for the same reason, so tools that key on vendor
 * ids treat both alike.
 */
#define SRD_VENDOR_ID 0xFFFFFFu

enum srd_cmd {
	SRD_CMD_HELLO = 1,
	SRD_CMD_LIST_DEVICES,
	SRD_CMD_OPEN_DEVICE,
	SRD_CMD_QUERY_DEVICE,
	SRD_CMD_QUERY_PORT,
	SRD_CMD_QUERY_GID,
	SRD_CMD_QUERY_PKEY,
	SRD_CMD_ALLOC_PD,
	SRD_CMD_DEALLOC_PD,
	SRD_CMD_REG_MR,
	SRD_CMD_REREG_MR,
	SRD_CMD_DEREG_MR,
	SRD_CMD_CREATE_COMP_CHANNEL,
	SRD_CMD_DESTROY_COMP_CHANNEL,
	SRD_CMD_CREATE_CQ,
	SRD_CMD_RESIZE_CQ,
	SRD_CMD_DESTROY_CQ,
	SRD_CMD_CREATE_QP,
	SRD_CMD_MODIFY_QP,
	SRD_CMD_QUERY_QP,
	SRD_CMD_DESTROY_QP,
	SRD_CMD_CREATE_SRQ,
	SRD_CMD_MODIFY_SRQ,
	SRD_CMD_QUERY_SRQ,
	SRD_CMD_DESTROY_SRQ,
	SRD_CMD_CREATE_AH,
	SRD_CMD_DESTROY_AH,
	SRD_CMD_ATTACH_MCAST,
	SRD_CMD_DETACH_MCAST,
	SRD_CMD_MODIFY_CQ,
	SRD_CMD_ALLOC_DM,
	SRD_CMD_FREE_DM,
	SRD_CMD_REG_DM_MR,
	SRD_CMD_ALLOC_MW,
	SRD_CMD_DEALLOC_MW,
	SRD_CMD_OPEN_XRCD,
	SRD_CMD_CLOSE_XRCD,
	SRD_CMD_OPEN_QP,
	SRD_CMD_ADVISE_MR,
	SRD_CMD_IMPORT_PD,
	SRD_CMD_IMPORT_MR,
	SRD_CMD_IMPORT_DM,
	SRD_CMD_CREATE_FLOW,
	SRD_CMD_DESTROY_FLOW,
	SRD_CMD_PLACE_SETUP, /* common/place.h */
	SRD_CMD__MAX
};
/* Never a request (no command has this op: answered EOPNOTSUPP): what the
 * daemon sends through a client's own end of its connection at
 * OPEN_DEVICE (SRD_OPEN_F_BIND). */
#define SRD_CMD_CTX_PROBE 0xffu

/*
 * Other command families have their own op ranges and their own headers:
 * administration (links, resources, counters, faults, capture) in
 * common/proto_admin.h, connection management (the rdma_cm) in
 * common/proto_cm.h.
 */
#define SRD_CMD_ADMIN_BASE 0x100
#define SRD_CMD_CM_BASE 0x200

/* Every message starts with this header.  In a reply, status is 0 or a
 * negative errno, and len counts the bytes that follow the header. */
struct srd_msg_hdr {
	uint32_t op;
	uint32_t len;
	int32_t status;
	uint32_t rsvd;
};
static_assert(sizeof(struct srd_msg_hdr) == 16, "msg hdr");

/* --- HELLO: first message on every connection ------------------------ */
struct srd_hello_req {
	uint32_t version;
	uint32_t pid; /* the sender's, in its own pid namespace: for logs */
};
struct srd_hello_rep {
	uint32_t version;
	uint32_t daemon_pid;
};

/* --- LIST_DEVICES ----------------------------------------------------- */
struct srd_device_info {
	char name[SRD_DEV_NAME_MAX];
	char netdev[SRD_DEV_NAME_MAX];
	uint64_t node_guid; /* big endian, as ibv_get_device_guid returns */
	uint32_t index;
	uint32_t node_type; /* enum ibv_node_type */
	uint32_t transport; /* enum ibv_transport_type */
	uint32_t rsvd;
};
struct srd_list_devices_rep {
	uint32_t count;
	uint32_t rsvd;
	struct srd_device_info dev[];
};

/* --- OPEN_DEVICE: turns the connection into a context ---------------- */
/* Trace flags: the daemon writes a decoded line for every CQE it writes to
 * this context's CQs onto the fd passed with the request (the client's
 * stderr), as a kernel provider would print in its debug log. */
enum {
	SRD_TRACE_CQE = 1 << 0,
};
/*
 * How the daemon may reach the client's memory that is not on a memfd
 * (docs/trust.md).  The fd comes after the trace fd:
 * - SRD_MEM_PROCMEM: the client's own /proc/self/mem, opened O_RDWR by the
 *   client.  It keeps referring to that address space (and reads nothing
 *   once it is gone), whatever becomes of the pid.
 * - SRD_MEM_NONE: no fd; only memfd pieces can be registered.
 * - SRD_MEM_PIDFD: refused (EOPNOTSUPP).  process_vm_* on a pidfd's pid
 *   reaches whatever image the process execs next, so a registration
 *   would outlive the address space it was made in (docs/trust.md).
 */
enum srd_mem_access {
	SRD_MEM_NONE = 0,
	SRD_MEM_PROCMEM = 1,
	SRD_MEM_PIDFD = 2,
};
/* The name the library gives the memfds it moves MR pages onto: a
 * mapping of "/memfd:softrdma-mr" in /proc/PID/maps is moved memory. */
#define SRD_MEMFD_NAME "softrdma-mr"
/*
 * Sharing a context (ibv_import_device).  A context's cmd_fd is the
 * client's end of its connection.  With SRD_OPEN_F_BIND the last fd is
 * that very end: the daemon sends a SRD_CMD_CTX_PROBE message with a
 * random token through it and must find the token waiting on this
 * connection, so the fd is proven to be this connection's; its inode
 * then names the context.  With SRD_OPEN_F_IMPORT the last fd is a
 * cmd_fd the client holds (dup'ed, passed by SCM_RIGHTS): the connection
 * is attached to the context bound to that fd's inode (index is ignored),
 * and every verbs command on it works on that context's objects.
 */
enum {
	SRD_OPEN_F_BIND = 1 << 0,
	SRD_OPEN_F_IMPORT = 1 << 1,
	/* The client's /proc/self/maps follows the memory access fd (what
	 * on-demand paging checks each access against). */
	SRD_OPEN_F_MAPS = 1 << 2,
};
struct srd_ctx_probe {
	uint8_t token[16];
};
struct srd_open_device_req {
	uint32_t index;
	uint32_t trace_flags; /* SRD_TRACE_*; an fd is passed when non-zero */
	uint32_t mem_access;  /* enum srd_mem_access; an fd unless NONE */
	/* SRD_OPEN_F_*.  fds in this order: trace, memory access, maps,
	 * then the BIND or IMPORT fd. */
	uint32_t flags;
};
/* Reply fds: [0] async event fd (read end), [1] doorbell eventfd,
 * [2] device status page memfd (sealed, map read-only). */
struct srd_open_device_rep {
	uint32_t num_comp_vectors;
	uint32_t index; /* the device's (what an importer learns) */
};

/* Records read from the async event fd. */
struct srd_async_event {
	uint32_t event_type; /* enum ibv_event_type */
	uint32_t port_num;
	uint64_t user_handle; /* QP, CQ or SRQ, as given at creation */
};
static_assert(sizeof(struct srd_async_event) == 16, "async event");

/* Records read from a completion channel fd: the CQ's user_handle. */
struct srd_comp_event {
	uint64_t cq_user_handle;
};

/* --- queries ----------------------------------------------------------- */
/* What ibv_query_device_ex adds that the daemon decides. */
struct srd_device_caps_ex {
	uint64_t max_dm_size;		    /* bytes of device memory */
	uint64_t hca_core_clock;	    /* kHz */
	uint64_t completion_timestamp_mask; /* valid bits of a timestamp */
	uint16_t max_cq_count;		    /* CQ moderation */
	uint16_t max_cq_period;		    /* µs */
	uint32_t raw_packet_caps;	    /* enum ibv_raw_packet_caps */
	/* device_cap_flags_ex above bit 31 (IB_UVERBS_DEVICE_*) */
	uint64_t cap_flags_hi;
	/* On-demand paging: IBV_ODP_SUPPORT*, then IBV_ODP_SUPPORT_SEND..
	 * per transport (0 when this context cannot have ODP MRs). */
	uint32_t odp_general;
	uint32_t odp_rc;
	uint32_t odp_uc;
	uint32_t odp_ud;
	uint32_t odp_xrc;
	uint32_t rsvd2;
};
struct srd_query_device_rep {
	struct ibv_device_attr attr;
	struct srd_device_caps_ex ex;
};
struct srd_query_port_req {
	uint32_t port_num;
};
struct srd_query_port_rep {
	struct ibv_port_attr attr;
};
struct srd_query_gid_req {
	uint32_t port_num;
	uint32_t index;
};
struct srd_query_gid_rep {
	union ibv_gid gid;
	uint32_t gid_type; /* enum ibv_gid_type_sysfs: IBV_GID_TYPE_SYSFS_ROCE_V2 */
	uint32_t valid; /* 0: empty slot (all-zero gid) */
	char netdev[SRD_DEV_NAME_MAX];
};
struct srd_query_pkey_req {
	uint32_t port_num;
	uint32_t index;
};
struct srd_query_pkey_rep {
	uint16_t pkey; /* big endian */
	uint16_t rsvd[3];
};

/* --- generic handle request/reply ------------------------------------- */
struct srd_handle_req {
	uint32_t handle;
	uint32_t rsvd;
};
struct srd_handle_rep {
	uint32_t handle;
	uint32_t rsvd;
};

/* --- memory registration ---------------------------------------------- */
/*
 * The library describes the page-aligned span [start, start + span_len) of
 * its address space that covers the MR as pieces in address order.  Each
 * piece is either a window of a memfd (passed in the same message, in the
 * order of the pieces that have one) that the library has mapped MAP_SHARED
 * at that address, or - for memory the library could not move - a range
 * the daemon reaches with process_vm_readv/writev on the client's pid.
 */
enum srd_piece_kind {
	SRD_PIECE_FD = 1,
	SRD_PIECE_PVM = 2,
};
struct srd_mr_piece {
	uint64_t len;	    /* multiple of the page size */
	uint64_t fd_offset; /* SRD_PIECE_FD: offset within its memfd */
	uint32_t kind;
	uint32_t rsvd;
};
struct srd_reg_mr_req {
	uint32_t pd_handle;
	uint32_t access; /* IBV_ACCESS_* */
	uint64_t addr;	 /* start of the MR in the client */
	uint64_t length;
	uint64_t iova; /* address the peer uses (== addr for ibv_reg_mr) */
	uint64_t span_start; /* page aligned, <= addr */
	uint64_t span_len;
	uint32_t num_pieces;
	uint32_t rsvd;
	struct srd_mr_piece piece[];
};
/*
 * An MR with IBV_ACCESS_ON_DEMAND has no pieces (num_pieces 0, no fds, no
 * span): the daemon reaches [addr, addr + length) in place, page by page
 * as it is touched.  addr 0 with length UINT64_MAX is the implicit MR over
 * the whole address space.
 */
struct srd_reg_mr_rep {
	uint32_t handle;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t rsvd;
};
/* REREG_MR: flags are IBV_REREG_MR_CHANGE_*; with CHANGE_TRANSLATION the
 * addr..piece fields describe the new memory, as in REG_MR. */
struct srd_rereg_mr_req {
	uint32_t handle;
	uint32_t flags;
	struct srd_reg_mr_req reg;
};

/* --- ADVISE_MR: ibv_advise_mr over ODP MRs of a PD ------------------- */
#define SRD_ADVISE_MAX_SGE 256
struct srd_advise_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};
struct srd_advise_mr_req {
	uint32_t pd_handle;
	uint32_t advice; /* enum ibv_advise_mr_advice */
	uint32_t flags;	 /* IBV_ADVISE_MR_FLAG_* */
	uint32_t num_sge;
	struct srd_advise_sge sge[];
};

/* --- memory windows --------------------------------------------------- */
struct srd_alloc_mw_req {
	uint32_t pd_handle;
	uint32_t type; /* enum ibv_mw_type */
};
struct srd_alloc_mw_rep {
	uint32_t handle;
	uint32_t rkey;
};

/* --- completion channels and CQs -------------------------------------- */
/* CREATE_COMP_CHANNEL reply carries one fd: the read end to poll. */

/* srd_create_cq_req.flags */
enum {
	/* Write the device clock into every CQE (srd_cqe.timestamp). */
	SRD_CQ_F_TIMESTAMP = 1 << 0,
};
struct srd_create_cq_req {
	uint32_t cqe;		 /* requested */
	uint32_t channel_handle; /* UINT32_MAX: none */
	uint32_t comp_vector;
	uint32_t flags; /* SRD_CQ_F_* */
	uint64_t user_handle;
};
/* Reply fd: [0] the CQ memfd, of ring_offset + entries * 64 bytes. */
struct srd_create_cq_rep {
	uint32_t handle;
	uint32_t cqe;	      /* reported to the application */
	uint32_t log_entries; /* ring has 1 << log_entries CQEs */
	uint32_t ring_offset;
	uint64_t map_len;
};
struct srd_resize_cq_req {
	uint32_t handle;
	uint32_t cqe;
	/* CQEs the library has polled so far: entries after it are carried
	 * over to the new ring, which then starts at index 0. */
	uint32_t cons;
	uint32_t rsvd;
};
/* RESIZE_CQ reply: struct srd_create_cq_rep and the new memfd. */

/* MODIFY_CQ: attr_mask is enum ibv_cq_attr_mask (IBV_CQ_ATTR_MODERATE):
 * a completion event waits for cq_count CQEs or cq_period µs after the
 * first one, whichever comes first. */
struct srd_modify_cq_req {
	uint32_t handle;
	uint32_t attr_mask;
	uint16_t cq_count;
	uint16_t cq_period;
	uint32_t rsvd;
};

/* --- device memory -------------------------------------------------------- */
/* ALLOC_DM: memory of the device (the daemon), shared with the client. */
struct srd_alloc_dm_req {
	uint64_t length;
	uint32_t log_align_req;
	uint32_t rsvd;
};
/* Reply fd: [0] the DM memfd (map_len bytes; the first length count). */
struct srd_alloc_dm_rep {
	uint32_t handle;
	uint32_t rsvd;
	uint64_t map_len;
};
/* REG_DM_MR: an MR over [offset, offset + length) of a DM, zero based. */
struct srd_reg_dm_mr_req {
	uint32_t pd_handle;
	uint32_t dm_handle;
	uint64_t offset;
	uint64_t length;
	uint32_t access;
	uint32_t rsvd;
};
/* REG_DM_MR reply: struct srd_reg_mr_rep. */

/*
 * IMPORT_PD, IMPORT_MR, IMPORT_DM: what the context holds under a handle
 * (ibv_import_*).  As uverbs: no object of the type under that handle is
 * ENOENT, an object of another type there is EINVAL.  IMPORT_PD takes a
 * struct srd_handle_req and replies nothing.  IMPORT_MR takes the PD the
 * MR is imported into (EINVAL if the MR is not on it).  IMPORT_DM replies
 * with the DM's memfd.
 */
struct srd_import_mr_req {
	uint32_t handle;
	uint32_t pd_handle;
};
struct srd_import_mr_rep {
	uint32_t lkey;
	uint32_t rkey;
	uint64_t iova; /* ibv_mr.addr: the exporter's address of byte 0 */
	uint64_t length;
	uint32_t access;
	uint32_t rsvd;
};
struct srd_import_dm_rep {
	uint64_t length;
	uint64_t map_len;
};

/* --- QPs ---------------------------------------------------------------- */
#define SRD_NO_HANDLE UINT32_MAX

/*
 * By type: RC, UC, UD use every handle but xrcd_handle.  XRC_SEND has a
 * PD and a send CQ, no receive side.  XRC_RECV has nothing but its XRCD:
 * no rings, no CQ, no PD (the reply then carries no fd).  RAW_PACKET
 * comes with one fd, a raw AF_PACKET socket the sender opened for the
 * call: its proof of CAP_NET_RAW (CREATE_FLOW too); other types with none.
 */
struct srd_create_qp_req {
	uint32_t pd_handle;
	uint32_t send_cq_handle;
	uint32_t recv_cq_handle;
	uint32_t srq_handle; /* SRD_NO_HANDLE: none */
	uint32_t qp_type;    /* enum ibv_qp_type */
	uint32_t sq_sig_all;
	struct ibv_qp_cap cap;
	uint64_t user_handle;
	uint32_t xrcd_handle; /* XRC_RECV only */
	uint32_t rsvd;
};
/* Reply fd: [0] the QP memfd: ctl page, SQ ring, RQ ring. */
struct srd_create_qp_rep {
	uint32_t handle;
	uint32_t qp_num;
	struct ibv_qp_cap cap; /* what was granted (>= requested) */
	uint32_t sq_entries;   /* ring slots, power of two */
	uint32_t sq_slot_size;
	uint32_t sq_offset;
	uint32_t rq_entries; /* 0 when the QP uses an SRQ */
	uint32_t rq_slot_size;
	uint32_t rq_offset;
	uint64_t map_len;
};
struct srd_modify_qp_req {
	uint32_t handle;
	uint32_t attr_mask; /* enum ibv_qp_attr_mask */
	struct ibv_qp_attr attr;
};
struct srd_query_qp_req {
	uint32_t handle;
	uint32_t attr_mask;
};
struct srd_query_qp_rep {
	struct ibv_qp_attr attr;
	struct ibv_qp_cap cap;
	uint32_t sq_sig_all;
	uint32_t rsvd;
};
/* MODIFY_QP reply: the new state (the library caches it in qp->state). */
struct srd_modify_qp_rep {
	uint32_t qp_state;
	uint32_t rsvd;
};

/* --- SRQs ---------------------------------------------------------------- */
struct srd_create_srq_req {
	uint32_t pd_handle;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;
	uint64_t user_handle;
	uint32_t srq_type;    /* enum ibv_srq_type: BASIC or XRC */
	uint32_t xrcd_handle; /* IBV_SRQT_XRC: its domain ... */
	uint32_t cq_handle;   /* ... and the CQ its receives complete on */
	uint32_t rsvd;
};
/* Reply fd: [0] the SRQ memfd: ctl page, ring. */
struct srd_create_srq_rep {
	uint32_t handle;
	uint32_t max_wr; /* granted */
	uint32_t max_sge;
	uint32_t entries; /* ring slots, power of two */
	uint32_t slot_size;
	uint32_t ring_offset;
	uint64_t map_len;
	uint32_t srq_num; /* the XRCETH's SRQ number of an XRC SRQ */
	uint32_t rsvd;
};
struct srd_modify_srq_req {
	uint32_t handle;
	uint32_t attr_mask; /* enum ibv_srq_attr_mask */
	struct ibv_srq_attr attr;
};
struct srd_query_srq_rep {
	struct ibv_srq_attr attr;
};

/* --- XRC domains ------------------------------------------------------------ */
/*
 * OPEN_XRCD: with has_fd, the file passed as the message's one fd names
 * the domain (by its inode, as uverbs keys it), shared by every process
 * that opens the same file; oflags are O_CREAT / O_EXCL.  Without, a
 * private domain.  Reply: struct srd_handle_rep.  CLOSE_XRCD takes a
 * struct srd_handle_req.
 */
struct srd_open_xrcd_req {
	uint32_t has_fd;
	uint32_t oflags;
};
/* OPEN_QP: a handle on the XRC_RECV QP qp_num of the domain xrcd_handle
 * (ibv_open_qp), usable from this context like the one it created.
 * Reply: struct srd_open_qp_rep. */
struct srd_open_qp_req {
	uint32_t xrcd_handle;
	uint32_t qp_num;
	uint64_t user_handle;
};
struct srd_open_qp_rep {
	uint32_t handle;
	uint32_t qp_num;
};

/* --- flow steering (ibv_create_flow) --------------------------------------- */
#define SRD_FLOW_SPECS_MAX 1024 /* bytes of specs in one rule */
/* CREATE_FLOW: a rule steering received frames to raw packet QP qp_handle.
 * The ibv_flow_attr fields, then specs_len bytes of ibv_flow_spec_*
 * structures as <infiniband/verbs.h> lays them out, back to back.
 * Reply: struct srd_create_flow_rep. */
struct srd_create_flow_req {
	uint32_t qp_handle;
	uint32_t comp_mask;
	uint32_t type; /* enum ibv_flow_attr_type */
	uint32_t flags;
	uint16_t priority;
	uint8_t num_of_specs;
	uint8_t port;
	uint32_t specs_len;
	uint8_t specs[];
};
struct srd_create_flow_rep {
	uint32_t handle;
	uint32_t rsvd;
};

/* --- address handles ------------------------------------------------------ */
struct srd_create_ah_req {
	uint32_t pd_handle;
	uint32_t rsvd;
	struct ibv_ah_attr attr;
};

/* --- multicast ------------------------------------------------------------ */
/* ATTACH_MCAST / DETACH_MCAST: a UD QP joins or leaves a group.  The LID
 * is carried as ibv_attach_mcast gives it; RoCE ignores it. */
struct srd_mcast_req {
	uint32_t qp_handle;
	uint16_t lid;
	uint16_t rsvd;
	union ibv_gid gid;
};

#endif
