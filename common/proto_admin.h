/* SPDX-License-Identifier: MIT */
/*
 * The administration command family (ops SRD_CMD_ADMIN_BASE and up): what
 * the rdma tool's netlink commands are to the kernel.  Used by the softrdma
 * CLI over the same socket as the verbs commands: HELLO, then admin ops
 * with no OPEN_DEVICE.  Same framing as common/proto.h: one request, one
 * reply with the same op, status 0 or a negative errno.
 *
 * Listings are paged: a request names the cursor to start from (0 at
 * first) and the reply carries as many entries as fit in one message plus
 * the cursor of the next page, SRD_ADMIN_END when the listing is complete.
 *
 * New ops go at the end of enum srd_admin_cmd; released values never move.
 */
#ifndef SOFTRDMA_COMMON_PROTO_ADMIN_H
#define SOFTRDMA_COMMON_PROTO_ADMIN_H

#include <assert.h>
#include <stdint.h>

#include "common/proto.h"

enum srd_admin_cmd {
	SRD_ADMIN_LINK_ADD = SRD_CMD_ADMIN_BASE,
	SRD_ADMIN_LINK_DEL,
	SRD_ADMIN_DEV_LIST,
	SRD_ADMIN_DEV_GIDS,
	SRD_ADMIN_RES_PD,
	SRD_ADMIN_RES_CQ,
	SRD_ADMIN_RES_MR,
	SRD_ADMIN_RES_QP,
	SRD_ADMIN_RES_CM_ID,
	SRD_ADMIN_STAT_DEV,
	SRD_ADMIN_STAT_QP,
	SRD_ADMIN_FAULT_ADD,
	SRD_ADMIN_FAULT_CLEAR,
	SRD_ADMIN_FAULT_LIST,
	SRD_ADMIN_CAPTURE_START,
	SRD_ADMIN_CAPTURE_STOP,
	SRD_ADMIN_CAPTURE_SHOW,
	SRD_ADMIN_RES_USAGE,
	SRD_ADMIN__END
};

#define SRD_ADMIN_END UINT32_MAX /* no next page; no such object */
#define SRD_ADMIN_ALL UINT32_MAX /* dev_index filter: every device */

/* --- LINK_ADD / LINK_DEL: devices on network interfaces -------------- */
/* Changing devices needs the daemon's own uid or root: -EPERM else. */
struct srd_admin_link_add_req {
	char name[SRD_DEV_NAME_MAX];   /* NUL terminated */
	char netdev[SRD_DEV_NAME_MAX]; /* interface name */
};
/* Errors: -EEXIST (name taken), -ENODEV (no such interface), -EINVAL
 * (bad name), -ENOSPC (SRD_MAX_DEVICES reached). */
struct srd_admin_link_add_rep {
	uint32_t index;
	uint32_t rsvd;
};
/* Errors: -ENODEV (no such device). */
struct srd_admin_link_del_req {
	char name[SRD_DEV_NAME_MAX];
};

/* --- listings: request and reply head --------------------------------- */
struct srd_admin_list_req {
	uint32_t start;	    /* cursor: 0, then the reply's next */
	uint32_t dev_index; /* SRD_ADMIN_ALL: objects of every device */
};
struct srd_admin_list_rep {
	uint32_t count; /* entries that follow */
	uint32_t next;	/* cursor of the next page, SRD_ADMIN_END */
};

/* --- DEV_LIST: one entry per device ------------------------------------ */
enum {
	SRD_ADMIN_DEV_F_DEFAULT = 1 << 0, /* the daemon's own softrdma0 */
	SRD_ADMIN_DEV_F_CONFIG = 1 << 1,  /* from the configuration file */
	SRD_ADMIN_DEV_F_RUNTIME = 1 << 2, /* added with LINK_ADD */
	SRD_ADMIN_DEV_F_REMOVED = 1 << 3, /* deleted, contexts still open */
};
/* IBTA PortPhysicalState values, as `rdma link` prints them. */
enum {
	SRD_PHYS_STATE_POLLING = 2,
	SRD_PHYS_STATE_DISABLED = 3,
	SRD_PHYS_STATE_LINK_UP = 5,
};
struct srd_admin_dev_info {
	char name[SRD_DEV_NAME_MAX];
	char netdev[SRD_DEV_NAME_MAX];
	uint64_t node_guid;	 /* big endian */
	uint64_t sys_image_guid; /* big endian */
	uint32_t index;
	uint32_t netdev_index; /* ifindex, 0 if unknown */
	uint32_t port_state;   /* enum ibv_port_state (port 1) */
	uint32_t phys_state;   /* SRD_PHYS_STATE_* */
	uint32_t max_mtu;      /* enum ibv_mtu */
	uint32_t active_mtu;   /* enum ibv_mtu */
	uint32_t netdev_mtu;   /* bytes */
	uint32_t gid_count;    /* valid entries */
	uint32_t contexts;     /* open contexts on the device */
	uint32_t qps;
	uint32_t flags;	      /* SRD_ADMIN_DEV_F_* */
	uint32_t link_downed; /* times the port left ACTIVE */
	char fw_ver[16];
	uint8_t mac[8]; /* the interface's, first 6 bytes; zero if none */
};
static_assert(sizeof(struct srd_admin_dev_info) == 216, "dev info");

/* --- DEV_GIDS: the GID table of port 1 --------------------------------- */
struct srd_admin_dev_gids_req {
	uint32_t dev_index;
	uint32_t rsvd;
};
struct srd_admin_gid {
	uint8_t raw[16];
	uint32_t index;
	uint32_t valid;	   /* 0: empty slot */
	uint32_t gid_type; /* enum ibv_gid_type_sysfs: 1 = RoCE v2 */
	uint32_t rsvd;
};
struct srd_admin_dev_gids_rep {
	uint32_t count; /* table length, SRD_MAX_GIDS */
	uint32_t rsvd;
	struct srd_admin_gid gid[];
};

/* --- RES_*: objects, as `rdma resource show` lists them ----------------- */
/* Cursors are the objects' handles (QPNs for QPs). */
struct srd_admin_pd_info {
	uint32_t pdn; /* handle */
	uint32_t dev_index;
	uint32_t pid; /* owner process */
	uint32_t users;
	uint32_t uid;
	uint32_t rsvd;
};
struct srd_admin_cq_info {
	uint32_t cqn; /* handle */
	uint32_t dev_index;
	uint32_t pid;
	uint32_t cqe;	  /* as the application was told */
	uint32_t entries; /* ring slots */
	uint32_t users;	  /* QPs */
	uint32_t channel; /* handle, SRD_ADMIN_END: none */
	uint32_t in_error;
};
enum {
	SRD_ADMIN_MR_F_PVM = 1 << 0,	/* reached with process_vm_* */
	SRD_ADMIN_MR_F_NOKEYS = 1 << 1, /* keys, addr, iova not shown */
};
struct srd_admin_mr_info {
	uint32_t mrn; /* handle */
	uint32_t dev_index;
	uint32_t pid;
	uint32_t pdn;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t access; /* IBV_ACCESS_* */
	uint32_t flags;	 /* SRD_ADMIN_MR_F_* */
	uint64_t addr;
	uint64_t iova;
	uint64_t length;
};
struct srd_admin_qp_info {
	uint32_t qpn;
	uint32_t dev_index;
	uint32_t pid;
	uint32_t type;	/* enum ibv_qp_type */
	uint32_t state; /* enum ibv_qp_state */
	uint32_t sq_psn;
	uint32_t rq_psn;
	uint32_t dest_qpn;
	uint32_t pdn;
	uint32_t send_cqn;
	uint32_t recv_cqn;
	uint32_t srqn;	   /* SRD_ADMIN_END: none */
	uint32_t path_mtu; /* enum ibv_mtu, 0 before RTR */
	uint32_t port;
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
	uint32_t qkey;
	uint32_t flags; /* SRD_ADMIN_QP_F_* */
};
enum {
	SRD_ADMIN_QP_F_NOKEYS = 1 << 0, /* qkey not shown */
};

/*
 * RES_USAGE: what each client and each user holds against its limits
 * (daemon/core/limits.h), clients first, then users.  The cursor counts rows.
 * n[] is indexed by enum srd_res: pd mr cq qp srq ah mw dm channel maps
 * mr_bytes xrcd dm_bytes clients fds.  Root and the daemon's own user get
 * every row, anyone else the rows of its own uid.
 */
#define SRD_ADMIN_USAGE_NRES 15
enum {
	SRD_ADMIN_USAGE_CLIENT,
	SRD_ADMIN_USAGE_USER,
};
struct srd_admin_usage_info {
	uint32_t kind; /* SRD_ADMIN_USAGE_* */
	uint32_t pid;  /* a client's; 0 for a user */
	uint32_t uid;
	uint32_t clients; /* a user's open connections */
	char comm[16];	  /* a client's process name */
	uint64_t n[SRD_ADMIN_USAGE_NRES];
	uint64_t limit[SRD_ADMIN_USAGE_NRES];
};

/* rdma_cm identifiers (the CM part of the daemon fills these in).  States
 * and port spaces carry the Linux rdma_cm values. */
enum {
	SRD_CM_STATE_IDLE,
	SRD_CM_STATE_ADDR_QUERY,
	SRD_CM_STATE_ADDR_RESOLVED,
	SRD_CM_STATE_ROUTE_QUERY,
	SRD_CM_STATE_ROUTE_RESOLVED,
	SRD_CM_STATE_CONNECT,
	SRD_CM_STATE_DISCONNECT,
	SRD_CM_STATE_ADDR_BOUND,
	SRD_CM_STATE_LISTEN,
	SRD_CM_STATE_DEVICE_REMOVAL,
	SRD_CM_STATE_DESTROYING,
};
struct srd_admin_sockaddr {
	uint16_t family; /* AF_INET, AF_INET6, 0: none */
	uint16_t port;	 /* host order */
	uint32_t rsvd;
	uint8_t addr[16]; /* AF_INET: the first 4 bytes */
};
struct srd_admin_cm_id_info {
	uint32_t id;
	uint32_t dev_index; /* SRD_ADMIN_END: not bound to a device */
	uint32_t pid;
	uint32_t port;
	uint32_t qpn; /* 0: none */
	uint32_t qp_type;
	uint32_t state; /* SRD_CM_STATE_* */
	uint32_t ps;	/* RDMA_PS_TCP 0x106, RDMA_PS_UDP 0x111, ... */
	struct srd_admin_sockaddr src;
	struct srd_admin_sockaddr dst;
};
static_assert(sizeof(struct srd_admin_cm_id_info) == 80, "cm id info");

/* --- STAT_DEV / STAT_QP: counters, as `rdma statistic` shows them ------ */
struct srd_admin_stat_dev_req {
	uint32_t dev_index;
	uint32_t rsvd;
};
struct srd_admin_stat_qp_req {
	uint32_t qpn;
	uint32_t rsvd;
};
#define SRD_COUNTER_NAME_MAX 40
struct srd_admin_counter {
	char name[SRD_COUNTER_NAME_MAX]; /* NUL terminated */
	uint64_t value;
};
static_assert(sizeof(struct srd_admin_counter) == 48, "counter");
struct srd_admin_stat_rep {
	uint32_t count; /* counters that follow */
	uint32_t dev_index;
	uint32_t qpn; /* STAT_QP: the QP; STAT_DEV: SRD_ADMIN_END */
	uint32_t pid; /* STAT_QP: its owner */
	struct srd_admin_counter c[];
};

/* --- FAULT_*: fault injection rules at run time ------------------------- */
/* Changing rules needs the daemon's own uid or root (-EPERM). */
#define SRD_ADMIN_TEXT_MAX 2048
/* Rules as --fault takes them ("rule;rule", daemon/fault/fault.h).  On
 * -EINVAL the reply carries a struct srd_admin_error saying why, and no
 * rule of the list was added. */
struct srd_admin_fault_add_req {
	char rules[SRD_ADMIN_TEXT_MAX]; /* NUL terminated */
};
struct srd_admin_fault_add_rep {
	uint32_t first; /* index of the first rule added */
	uint32_t count; /* rules now in force */
};
/* A failed command's reason, when the op documents one. */
struct srd_admin_error {
	char reason[256]; /* NUL terminated */
};
/* FAULT_LIST: srd_admin_list_req (dev_index ignored), srd_admin_list_rep
 * then entries; the cursor is the rule index. */
#define SRD_ADMIN_RULE_TEXT_MAX 160
struct srd_admin_fault_info {
	uint32_t index;
	uint32_t fixed; /* from --fault / SOFTRDMA_FAULTS: kept on SIGHUP */
	uint64_t matched;
	uint64_t injected;
	char text[SRD_ADMIN_RULE_TEXT_MAX]; /* the rule as written */
};
static_assert(sizeof(struct srd_admin_fault_info) == 184, "fault info");

/* --- CAPTURE_*: recording both wires into a pcap file ------------------- */
/* The daemon creates the file with its own rights, so only its own uid or
 * root may start or stop a capture (-EPERM).  START: -EBUSY if one runs;
 * STOP: -ENOENT if none does. */
struct srd_admin_capture_start_req {
	char path[SRD_ADMIN_TEXT_MAX]; /* absolute, NUL terminated */
};
struct srd_admin_capture_show_rep {
	uint32_t active;
	uint32_t rsvd;
	uint64_t packets; /* written to the file so far */
	char path[SRD_ADMIN_TEXT_MAX];
};

#endif
