/* SPDX-License-Identifier: MIT */
/*
 * Shared-memory formats between the verbs library (producer of WQEs,
 * consumer of CQEs) and the device daemon (consumer of WQEs, producer of
 * CQEs).  Everything here lives in memfds mapped by both sides.
 *
 * Trust: the daemon never trusts anything the client can write.  It reads
 * producer indices once, masks them, copies a WQE into private memory
 * before looking at it, and keeps its own copy of every size and offset.
 */
#ifndef SOFTRDMA_COMMON_RING_H
#define SOFTRDMA_COMMON_RING_H

#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SRD_CACHELINE 64
#define SRD_PAGE_SIZE 4096

/* ---------------------------------------------------------------------- */
/* Device status page: one per daemon, read-only for clients.            */

struct srd_dev_page {
	/* Non-zero while the engine is (about to be) blocked in the kernel:
	 * a client that posts work must then kick the doorbell eventfd. */
	_Alignas(SRD_CACHELINE) uint32_t engine_sleeping;
	uint32_t rsvd0;
	/* Bumped every time the engine goes to sleep (statistics). */
	uint64_t sleeps;
	/*
	 * Liveness.  The daemon holds a process-shared robust mutex here for
	 * its whole life: however it dies (SIGKILL too), the kernel then sets
	 * FUTEX_OWNER_DIED in the lock word, which clients read without a
	 * system call.  A daemon that exits on purpose sets gone first.
	 */
	_Alignas(SRD_CACHELINE) union {
		pthread_mutex_t mutex;
		uint32_t word; /* glibc: the futex word comes first */
	} alive;
	uint32_t gone;
};
static_assert(sizeof(struct srd_dev_page) == 128, "dev page layout");

/* linux/futex.h's FUTEX_OWNER_DIED. */
#define SRD_FUTEX_OWNER_DIED 0x40000000u

/* The daemon behind this status page has exited or died. */
static inline bool srd_dev_page_dead(const struct srd_dev_page *p)
{
	return (__atomic_load_n(&p->alive.word, __ATOMIC_RELAXED) &
		SRD_FUTEX_OWNER_DIED) ||
	       __atomic_load_n(&p->gone, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------------- */
/* Work queue elements.                                                   */

/* Send WQE flags (srd_send_wqe.flags). */
enum {
	SRD_WQE_SIGNALED = 1 << 0,
	SRD_WQE_FENCE = 1 << 1,
	SRD_WQE_SOLICITED = 1 << 2,
	SRD_WQE_INLINE = 1 << 3,
	/* SEND/WRITE: the payload was copied at post time into the QP's
	 * staging area, at srd_send_wqe.stage (the SGEs still say where it
	 * came from and are checked as ever). */
	SRD_WQE_STAGED = 1 << 4,
};

/* Scatter/gather element, as in a NIC's data segment. */
struct srd_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};
static_assert(sizeof(struct srd_sge) == 16, "sge layout");

/* A staged payload: bytes [offset, offset + length) of the QP's staging
 * area, never wrapping around its end. */
struct srd_wqe_stage {
	uint64_t offset;
	uint32_t length;
	uint32_t rsvd;
};
static_assert(sizeof(struct srd_wqe_stage) == 16, "stage layout");

/* A descriptor that lies inside an area of area_len bytes and holds len. */
static inline bool srd_wqe_stage_ok(const struct srd_wqe_stage *st,
				    uint64_t area_len, uint64_t len)
{
	return st->length == len && st->offset <= area_len &&
	       st->length <= area_len - st->offset;
}

/*
 * Send queue slot header.  The slot continues with num_sge srd_sge entries,
 * or with inline_len bytes of inline data when SRD_WQE_INLINE is set.
 */
struct srd_send_wqe {
	uint64_t wr_id;
	uint8_t opcode; /* enum ibv_wr_opcode */
	uint8_t flags;	/* SRD_WQE_* */
	uint8_t num_sge;
	uint8_t rsvd0;
	uint32_t imm_data; /* big endian, as ibv_send_wr.imm_data */
	uint32_t inline_len;
	uint32_t rkey;	      /* BIND_MW: the window's new rkey */
	uint64_t remote_addr; /* BIND_MW: the window's address */
	union {
		/* atomics; ATOMIC_WRITE: compare_add holds the 8 bytes as
		 * the application gave them; FLUSH: compare_add is the
		 * length, swap srd_wqe_flush_bits() */
		struct {
			uint64_t compare_add;
			uint64_t swap;
		};
		/* BIND_MW; imm_data holds the window's current rkey, as
		 * LOCAL_INV and SEND_WITH_INV hold the rkey to invalidate
		 * (host order, as ibv_send_wr.invalidate_rkey). */
		struct {
			uint64_t length;
			uint32_t mr_lkey; /* 0 with length 0: unbind */
			uint32_t access;  /* IBV_ACCESS_* of the window */
		} bind;
		/* SRD_WQE_STAGED: where in the staging area the payload
		 * lies; length is the SGEs' total. */
		struct srd_wqe_stage stage;
	};
	/* UD only; XRC_SEND: remote_srqn, the target's SRQ */
	uint32_t ah_handle;
	union {
		uint32_t remote_qpn;
		uint32_t remote_srqn;
	};
	uint32_t remote_qkey;
	uint32_t rsvd1;
};
static_assert(sizeof(struct srd_send_wqe) == 64, "send wqe layout");

/* A FLUSH WQE's placement type (bits 3:0) and selectivity level (5:4),
 * laid out as the FETH carries them. */
static inline uint64_t srd_wqe_flush_bits(uint8_t type, uint8_t level)
{
	return (uint64_t)(type & 0xf) | (uint64_t)(level & 0x3) << 4;
}

/* Receive queue (and SRQ) slot header, followed by num_sge srd_sge. */
struct srd_recv_wqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t rsvd;
};
static_assert(sizeof(struct srd_recv_wqe) == 16, "recv wqe layout");

/* ---------------------------------------------------------------------- */
/* Queue control blocks.  Producer and consumer words sit on their own     */
/* cache lines so the two sides do not false-share.                        */

struct srd_wq_ctl {
	/* Written by the library: number of WQEs posted, free running. */
	_Alignas(SRD_CACHELINE) uint32_t prod;
	/* Written by the daemon: number of WQEs it has taken, free running. */
	_Alignas(SRD_CACHELINE) uint32_t cons;
};
static_assert(sizeof(struct srd_wq_ctl) == 128, "wq ctl layout");

/*
 * A QP's memfd:  [ctl page][SQ ring][RQ ring][staging]   (offsets in the
 * create reply)
 * page 0 holds sq ctl at offset 0 and rq ctl at offset 128.
 */
struct srd_qp_ctl {
	struct srd_wq_ctl sq;
	struct srd_wq_ctl rq;
};

/*
 * The staging area follows the RQ ring in the QP's memfd, page aligned
 * (stage_offset, stage_len in the create reply).  The library asks for
 * stage_bytes at creation (by default max_send_wr * SRD_STAGE_MAX_MSG,
 * at least SRD_STAGE_DEFAULT_BYTES / 16); the daemon grants at most
 * SRD_STAGE_MAX_BYTES, rounded up to whole pages, or none.  Payloads above
 * SRD_STAGE_MAX_MSG (or the area) are not staged.
 */
#define SRD_STAGE_MAX_BYTES (16u << 20)
#define SRD_STAGE_DEFAULT_BYTES (4u << 20)
#define SRD_STAGE_MAX_MSG (64u << 10)

/* An SRQ's memfd: [ctl page][ring]. */
struct srd_srq_ctl {
	struct srd_wq_ctl rq;
};

/* ---------------------------------------------------------------------- */
/* Completion queue.                                                      */

/* srd_cqe.flags */
enum {
	SRD_CQE_RECV = 1 << 0,	    /* completes a receive WQE of the QP's RQ */
	SRD_CQE_SRQ = 1 << 1,	    /* ... taken from an SRQ (no RQ index) */
	SRD_CQE_SOLICITED = 1 << 2, /* the message carried the SE bit */
};

/*
 * A CQE.  The owner byte is written last, with release ordering.  For ring
 * index i of a ring of 2^n entries the CQE is valid when
 *     owner == (((i >> n) & 1) ^ 1)
 * so a zero-filled ring holds no valid entry and the library needs no
 * producer index.
 */
struct srd_cqe {
	uint64_t wr_id;
	uint32_t byte_len;
	uint32_t imm_data; /* big endian, or invalidated rkey */
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t vendor_err;
	uint32_t wqe_idx; /* free-running index of the completed WQE */
	uint16_t pkey_index;
	uint16_t slid;
	uint8_t status;	  /* enum ibv_wc_status */
	uint8_t opcode;	  /* enum ibv_wc_opcode */
	uint8_t wc_flags; /* enum ibv_wc_flags (all fit in 8 bits) */
	uint8_t sl;
	uint8_t dlid_path_bits;
	uint8_t flags; /* SRD_CQE_* */
	uint8_t rsvd0[6];
	/* Device clock (common/dev_clock.h) when the CQE was written, on
	 * CQs created with SRD_CQ_F_TIMESTAMP; 0 otherwise. */
	uint64_t timestamp;
	uint8_t rsvd1[3];
	uint8_t owner;
};
static_assert(sizeof(struct srd_cqe) == 64, "cqe layout");
static_assert(offsetof(struct srd_cqe, timestamp) == 48, "cqe timestamp");
static_assert(offsetof(struct srd_cqe, owner) == 59, "cqe owner");

static inline uint8_t srd_cqe_owner_for(uint32_t idx, uint32_t log_entries)
{
	return ((idx >> log_entries) & 1) ^ 1;
}

/* Arm bits in srd_cq_ctl.arm, set by the library, cleared by the daemon. */
enum {
	SRD_CQ_ARM_NEXT = 1 << 0,
	SRD_CQ_ARM_SOLICITED = 1 << 1,
};

/* A CQ's memfd:  [ctl page][CQE ring of 2^n entries] */
struct srd_cq_ctl {
	/* Written by the library: number of CQEs it has polled. */
	_Alignas(SRD_CACHELINE) uint32_t cons;
	/* Written by the library (atomic or), exchanged to 0 by the daemon
	 * when it signals the completion channel. */
	_Alignas(SRD_CACHELINE) uint32_t arm;
	/* A futex word: the library sets it to 1 and waits on it (FUTEX_WAIT,
	 * shared) while it expects a completion; the daemon exchanges it to 0
	 * and wakes the waiters after writing a CQE. */
	_Alignas(SRD_CACHELINE) uint32_t sleep;
};
static_assert(sizeof(struct srd_cq_ctl) == 192, "cq ctl layout");

#define SRD_RING_CTL_BYTES SRD_PAGE_SIZE

/* Slot size for a send queue: a power of two that holds the header and
 * either max_sge data segments or max_inline bytes. */
static inline uint32_t srd_pow2_roundup(uint32_t v)
{
	uint32_t r = 1;

	while (r < v)
		r <<= 1;
	return r;
}

static inline uint32_t srd_send_slot_size(uint32_t max_sge, uint32_t max_inline)
{
	uint32_t body = max_sge * sizeof(struct srd_sge);

	if (max_inline > body)
		body = max_inline;
	return srd_pow2_roundup(sizeof(struct srd_send_wqe) + body);
}

static inline uint32_t srd_recv_slot_size(uint32_t max_sge)
{
	return srd_pow2_roundup(sizeof(struct srd_recv_wqe) +
				max_sge * sizeof(struct srd_sge));
}

#endif
