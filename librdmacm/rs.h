/* SPDX-License-Identifier: MIT */
/*
 * rsockets: stream sockets over RC QPs, wire compatible with rdma-core's.
 *
 * Each side registers a receive buffer and gives the peer, half of it at a
 * time, where to RDMA WRITE (the "target SGL", two entries the peer writes
 * into our memory).  Data goes as RDMA WRITE WITH IMMEDIATE: the immediate
 * says what it is (bits 31..29) and how many bytes (bits 28..0).  Receive
 * credits (free receive WRs on the peer) travel in the immediate of the
 * SGL updates.  The descriptor of an rsocket is the fd of its rdma_cm id's
 * event channel, as in rdma-core.
 */
#ifndef SOFTRDMA_LIBRDMACM_RS_H
#define SOFTRDMA_LIBRDMACM_RS_H

#include <assert.h>
#include <endian.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <rdma/rdma_cma.h>
#include <rdma/rsocket.h>

#include "common/list.h"

/* Sizes and defaults rdma-core uses (its compiled-in defaults). */
#define RS_OLAP_START_SIZE 2048
#define RS_MAX_TRANSFER 65536
#define RS_SNDLOWAT 2048
#define RS_QP_MIN_SIZE 16
#define RS_QP_MAX_SIZE 0xFFFE
#define RS_QP_CTRL_SIZE 4 /* control messages in flight; power of 2 */
#define RS_CONN_RETRIES 6
#define RS_SGL_SIZE 2
#define RS_DEF_INLINE 64
#define RS_DEF_SQSIZE 384
#define RS_DEF_RQSIZE 384
#define RS_DEF_MEM (1 << 17)
#define RS_DEF_WMEM (1 << 17)
#define RS_POLL_SPIN_US 10 /* busy polling before sleeping on the CQ */

/* The immediate data: op in bits 31..29, data in 28..0. */
enum {
	RS_OP_DATA = 0,
	RS_OP_RSVD_DATA_MORE = 1,
	RS_OP_WRITE = 2, /* riowrite; local only, never on the wire */
	RS_OP_RSVD_DRA_MORE = 3,
	RS_OP_SGL = 4, /* data: receive credits granted (a sequence number) */
	RS_OP_RSVD = 5,
	RS_OP_IOMAP_SGL = 6, /* data: iomap index written */
	RS_OP_CTRL = 7,
};

static inline uint32_t rs_msg_set(uint32_t op, uint32_t data)
{
	return (op << 29) | (data & 0x1FFFFFFF);
}

static inline uint32_t rs_msg_op(uint32_t imm)
{
	return imm >> 29;
}

static inline uint32_t rs_msg_data(uint32_t imm)
{
	return imm & 0x1FFFFFFF;
}

enum {
	RS_CTRL_DISCONNECT = 0,
	RS_CTRL_KEEPALIVE = 1,
	RS_CTRL_SHUTDOWN = 2,
};

/* Receive WRs are told from send WRs by the top bit of wr_id; a send's
 * wr_id carries its message. */
#define RS_WR_ID_RECV (1ULL << 63)

/* On the wire (written into the peer's memory), in the writer's byte
 * order unless the connection data said otherwise. */
struct rs_sge {
	uint64_t addr;
	uint32_t key;
	uint32_t length;
};

struct rs_iomap {
	uint64_t offset;
	struct rs_sge sge;
};

#define RS_CONN_VERSION 1
#define RS_CONN_FLAG_NET (1 << 0)   /* the sender is big endian */
#define RS_CONN_FLAG_IOMAP (1 << 1) /* the iomap table follows the SGL */

/* The CM private data of REQ and REP; multi-byte fields big endian. */
struct rs_conn_data {
	uint8_t version;
	uint8_t flags;
	uint16_t credits; /* be16: receive WRs posted */
	uint8_t reserved[3];
	uint8_t target_iomap_size; /* scaled, see rs_value_to_scale */
	struct rs_sge target_sgl;  /* be: where the peer writes SGL updates */
	struct rs_sge data_buf;	   /* be: the first half of the rbuf */
};

static_assert(sizeof(struct rs_sge) == 16, "rs_sge is 16 bytes");
static_assert(sizeof(struct rs_iomap) == 24, "rs_iomap is 24 bytes");
static_assert(sizeof(struct rs_conn_data) == 40, "rs_conn_data size");

/* States are ordered: passive, opening, connected, closed. */
enum {
	rs_init = 0,
	rs_bound = 0x0001,
	rs_listening = 0x0002,
	rs_opening = 0x0004,
	rs_resolving_addr = rs_opening | 0x0010,
	rs_resolving_route = rs_opening | 0x0020,
	rs_connecting = rs_opening | 0x0040,
	rs_accepting = rs_opening | 0x0080,
	rs_connected = 0x0100,
	rs_writable = 0x0200,
	rs_readable = 0x0400,
	rs_connect_rdwr = rs_connected | rs_readable | rs_writable,
	rs_connect_error = 0x0800,
	rs_disconnected = 0x1000,
	rs_error = 0x2000,
};

#define RS_OPT_SWAP_SGL (1 << 0) /* the peer's byte order is not ours */

/* One received data message not yet read. */
struct rs_msg {
	uint32_t op;
	uint32_t data;
};

/* A buffer riomap'ed: local (index < 0) or in the peer's iomap table. */
struct rs_iomap_mr {
	struct list_node node;
	uint64_t offset;
	struct ibv_mr *mr;
	int index;
};

/* Datagram rsockets (rs_dgram.c): UD QPs, one per local address, found
 * through a UDP socket of the same address, which is also the descriptor. */
#define DS_UDP_TAG 0x55555555
#define DS_IPV4_HDR_LEN 8
#define DS_IPV6_HDR_LEN 24
#define DS_UDP_IPV4_HDR_LEN 16
#define DS_UDP_IPV6_HDR_LEN 28
#define DS_GRH_LEN 40
#define DS_MSG_SIZE RS_SNDLOWAT /* a datagram slot, header included */

/* Before every datagram on a UD QP: the sender's UDP address. */
struct ds_header {
	uint8_t version; /* 4 or 6 */
	uint8_t length;	 /* DS_IPV4_HDR_LEN or DS_IPV6_HDR_LEN */
	uint16_t port;	 /* be */
	union {
		uint32_t ipv4; /* be */
		struct {
			uint32_t flowinfo;
			uint8_t addr[16];
		} ipv6;
	} addr;
};

/* Over UDP, before a QPN is known: "my QPN is", with data or alone. */
struct ds_udp_header {
	uint32_t tag; /* be DS_UDP_TAG */
	uint8_t version;
	uint8_t op; /* RS_OP_DATA or RS_OP_CTRL (a reply) */
	uint8_t length;
	uint8_t reserved;
	uint32_t qpn; /* be, low 24 bits */
	union {
		uint32_t ipv4;
		uint8_t ipv6[16];
	} addr;
};

static_assert(sizeof(struct ds_header) == DS_IPV6_HDR_LEN, "ds_header");
static_assert(sizeof(struct ds_udp_header) == DS_UDP_IPV6_HDR_LEN, "ds_udp_"
								   "header");

struct ds_qp {
	struct ds_qp *next;
	struct rdma_cm_id *cm_id;
	struct sockaddr_storage src;
	struct ds_header hdr; /* src, formatted */
	uint8_t *rbuf;	      /* rq slots, then the GRH landing place */
	size_t rbuf_len;
	struct ibv_mr *rmr;
	struct ibv_mr *smr;
	bool cq_armed;
};

struct ds_dest {
	struct ds_dest *next;
	struct sockaddr_storage addr;
	struct ds_qp *qp;
	struct ibv_ah *ah; /* NULL until the peer's QPN is known */
	uint32_t qpn;
};

struct ds_rmsg {
	struct ds_qp *qp;
	uint32_t offset;
	uint32_t length; /* without the GRH */
};

struct rsocket {
	int index; /* the descriptor */
	int type;  /* SOCK_STREAM or SOCK_DGRAM */
	struct rdma_cm_id *cm_id;
	/* slock: senders; rlock: receivers; cq_lock: the CQ and the state
	 * both change; map_lock: the iomap lists. */
	pthread_mutex_t slock;
	pthread_mutex_t rlock;
	pthread_mutex_t cq_lock;
	pthread_mutex_t cq_wait_lock;
	pthread_mutex_t map_lock;

	int state;
	int err;
	int opts;
	int fs_flags; /* O_NONBLOCK */
	int fd_flags;
	int retries;
	uint64_t so_opts;
	uint64_t tcp_opts;
	uint64_t ipv6_opts;
	unsigned int keepalive_time;
	void *route; /* RDMA_ROUTE given before connecting */
	size_t route_len;

	uint32_t sbuf_size;
	uint32_t rbuf_size;
	uint16_t sq_size;
	uint16_t rq_size;
	uint16_t sq_inline;
	uint16_t target_iomap_size;

	/* Control messages: SGL updates and CTRL, RS_QP_CTRL_SIZE at most
	 * in flight, outside the data's send queue share. */
	unsigned int ctrl_seqno;
	unsigned int ctrl_max_seqno;
	uint16_t sseq_no;   /* data messages sent */
	uint16_t sseq_comp; /* ... the peer allows up to */
	uint16_t rseq_no;   /* data messages consumed */
	uint16_t rseq_comp; /* credits are due again at */

	/* The peer's target SGL, where our SGL updates go. */
	int remote_sge;
	struct rs_sge remote_sgl;
	struct rs_sge remote_iomap;

	/* Ours, which the peer writes: RS_SGL_SIZE entries, then the iomap
	 * table. */
	struct ibv_mr *target_mr;
	void *target_buf;
	size_t target_len;
	int target_sge;
	volatile struct rs_sge *target_sgl;
	volatile struct rs_iomap *target_iomap;

	/* Receive buffer: the peer writes into the half it was given. */
	uint8_t *rbuf;
	struct ibv_mr *rmr;
	int rbuf_bytes_avail;
	int rbuf_free_offset;
	int rbuf_offset;
	struct rs_msg *rmsg; /* rq_size + 1 entries, a ring */
	int rmsg_head;
	int rmsg_tail;

	/* Send buffer: a ring the data is staged in; control messages that
	 * cannot go inline have slots after it. */
	uint8_t *sbuf;
	size_t sbuf_alloc;
	struct ibv_mr *smr;
	int sbuf_bytes_avail;
	int sqe_avail;
	struct ibv_sge ssgl[2];

	int cq_armed;
	unsigned int unack_cqe;

	struct rs_iomap_mr **remote_iomappings; /* remote_iomap.length */
	struct list_head iomap_list;		/* sent or local */
	struct list_head iomap_queue;		/* to be sent */
	bool iomap_pending;

	/* SOCK_DGRAM */
	int udp_sock;
	int epfd; /* the UDP socket and every QP's CQ channel */
	struct ds_qp *qp_list;
	struct ds_dest *dests;
	struct ds_dest *conn_dest;
	struct ds_rmsg *dmsg; /* rq_size + 1, a ring */
	int rqe_avail;
	uint16_t *sfree; /* free send slots */
	int nsfree;
};

/* --- rs_table.c --- */
struct rsocket *rs_lookup(int fd);
int rs_insert(struct rsocket *rs, int fd);
void rs_remove(struct rsocket *rs);

/* --- rs_conn.c --- */
struct rsocket *rs_alloc(const struct rsocket *parent);
void rs_free(struct rsocket *rs);
int rs_do_connect(struct rsocket *rs);
int rs_accept(struct rsocket *listen);
int rs_set_nonblocking(struct rsocket *rs, bool on);
/* Take CM events without waiting: a disconnect ends the connection. */
void rs_check_cm(struct rsocket *rs);

/* --- rs_data.c --- */
typedef bool (*rs_test_fn)(struct rsocket *rs);
int rs_post_recv(struct rsocket *rs);
int rs_post_msg(struct rsocket *rs, uint32_t msg);
int rs_post_write_msg(struct rsocket *rs, struct ibv_sge *sgl, int nsge,
		      uint32_t msg, int flags, uint64_t addr, uint32_t rkey);
int rs_post_write(struct rsocket *rs, struct ibv_sge *sgl, int nsge,
		  uint32_t wr_data, int flags, uint64_t addr, uint32_t rkey);
/* Stage len bytes (from buf, or the iov cursor) in the send ring and
 * fill sgl; returns the number of SGEs. */
int rs_stage(struct rsocket *rs, const void *buf, uint32_t len,
	     struct ibv_sge *sgl);
int rs_process_cq(struct rsocket *rs, bool nonblock, rs_test_fn test);
int rs_get_comp(struct rsocket *rs, bool nonblock, rs_test_fn test);
int rs_get_cq_event(struct rsocket *rs);
bool rs_can_send(struct rsocket *rs);
bool rs_conn_can_send(struct rsocket *rs);
bool rs_conn_can_send_ctrl(struct rsocket *rs);
/* Wait (unless non-blocking) until a send may go: 0, or -1 with errno
 * (ECONNRESET if the connection stopped being writable meanwhile). */
int rs_wait_send(struct rsocket *rs, int flags);
/* The size of the next transfer of a send with left bytes to go: small
 * first, doubling from *olen, within what the send buffer holds. */
uint32_t rs_next_xfer(struct rsocket *rs, uint32_t *olen, size_t left);
bool rs_have_rdata(struct rsocket *rs);
bool rs_conn_have_rdata(struct rsocket *rs);
bool rs_conn_all_sends_done(struct rsocket *rs);
bool rs_ctrl_avail(struct rsocket *rs);
ssize_t rs_sendv(struct rsocket *rs, const struct iovec *iov, int iovcnt,
		 int flags);
ssize_t rs_recvv(struct rsocket *rs, const struct iovec *iov, int iovcnt,
		 int flags);
static inline bool rs_nonblocking(struct rsocket *rs, int flags)
{
	return (rs->fs_flags & O_NONBLOCK) || (flags & MSG_DONTWAIT);
}

/* --- rs_dgram.c --- */
int ds_socket(struct rsocket *rs, int domain);
void ds_free(struct rsocket *rs);
int ds_bind(struct rsocket *rs, const struct sockaddr *addr, socklen_t addrlen);
int ds_connect(struct rsocket *rs, const struct sockaddr *addr,
	       socklen_t addrlen);
ssize_t ds_sendto(struct rsocket *rs, const void *buf, size_t len, int flags,
		  const struct sockaddr *addr, socklen_t addrlen);
ssize_t ds_recvfrom(struct rsocket *rs, void *buf, size_t len, int flags,
		    struct sockaddr *src, socklen_t *srclen);
short ds_poll_rs(struct rsocket *rs, short events);
/* Arm the CQs; the fd to sleep on. */
int ds_poll_arm(struct rsocket *rs);
void ds_poll_wake(struct rsocket *rs);

/* --- rs_iomap.c --- */
int rs_send_iomaps(struct rsocket *rs, int flags);
void rs_free_iomaps(struct rsocket *rs);

/* --- rs_poll.c --- */
/* What poll would report for this rsocket now. */
short rs_poll_rs(struct rsocket *rs, short events, bool nonblock,
		 rs_test_fn test);

/* Scaled 8-bit sizes of the connection data (iomap table size). */
static inline int rs_value_to_scale(int value, int bits)
{
	return value <= (1 << (bits - 1)) ? value
					  : (1 << (bits - 1)) | (value >> bits);
}

static inline int rs_scale_to_value(int value, int bits)
{
	return value <= (1 << (bits - 1))
		       ? value
		       : (value & ~(1 << (bits - 1))) << bits;
}

#endif
