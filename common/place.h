/* SPDX-License-Identifier: MIT */
/*
 * The placement ring: payload the device would write into a process's
 * in-place memory, copied instead by a thread of that process's own
 * library (docs/trust.md, "Placement by the owner").  The daemon produces
 * jobs, the owner's library claims and runs them: one process_vm_readv
 * from the source process into its own memory, so the kernel judges the
 * access on the owner at that moment, the destination is always the
 * address space that registered it, and its page protections hold.
 *
 * The ring is a memfd of the daemon, sealed against resizing.  The daemon
 * keeps every fact it acts on in private memory and reads back only each
 * slot's state word and the sleeping flag; a state it does not know is a
 * failure of the destination.
 */
#ifndef SOFTRDMA_COMMON_PLACE_H
#define SOFTRDMA_COMMON_PLACE_H

#include <assert.h>
#include <stdint.h>

#include "common/ring.h"

#define SRD_PLACE_SLOTS 128  /* a power of two */
#define SRD_PLACE_MAX_IOV 32 /* per side of one job */
#define SRD_PLACE_TOKEN_BYTES 16
/* Bytes the daemon stages for jobs whose source the owner cannot read
 * itself (a packet, another user's memory): see src_pid. */
#define SRD_PLACE_STAGE_BYTES (4u << 20)
/* The most one staged job carries; longer payloads take several. */
#define SRD_PLACE_STAGE_JOB_MAX (256u * 1024)

enum srd_place_state {
	SRD_PLACE_FREE = 0,
	SRD_PLACE_POSTED = 1,  /* written by the daemon */
	SRD_PLACE_CLAIMED = 2, /* the owner's thread is running it */
	SRD_PLACE_DONE = 3,
	/* The destination could not be written: not mapped, or not
	 * writable now.  The device reports a protection error. */
	SRD_PLACE_FAIL_DST = 4,
	/* Anything else (the source is gone, or the kernel refused the
	 * read): the daemon copies it itself, the way it would have. */
	SRD_PLACE_FAIL_SRC = 5,
	/* Taken back by the daemon before the owner claimed it (the owner
	 * did not run, or is gone): the owner skips it. */
	SRD_PLACE_REVOKED = 6,
};

struct srd_place_iov {
	uint64_t addr;
	uint64_t len;
};

/* One job: copy the source ranges of process src_pid (as the owner's pid
 * namespace numbers it), in order, onto the destination ranges of the
 * owner, in order; the same number of bytes on both sides.  The source's
 * token is read in the same call: it proves the pid still names the
 * address space the source registered in (an exec or a new process under
 * the pid has no such bytes there).
 *
 * src_pid 0: a staged job.  The source ranges are offsets into the
 * ring's staging area (SRD_PLACE_STAGE_OFF of the same mapping), and the
 * token is the owner's own: the owner copies from its mapping of the ring
 * onto its memory, so that only its own thread ever writes there (memory
 * on demand, whose protections must hold at the moment of each write). */
struct srd_place_job {
	_Alignas(SRD_CACHELINE) uint32_t state; /* enum srd_place_state */
	uint32_t seq;				/* producer count when posted */
	int32_t src_pid;     /* in the owner's pid namespace */
	uint16_t nsrc;	     /* source ranges */
	uint16_t ndst;	     /* destination ranges */
	uint64_t len;	     /* bytes */
	uint64_t token_addr; /* in the source process */
	uint8_t token[SRD_PLACE_TOKEN_BYTES];
	struct srd_place_iov src[SRD_PLACE_MAX_IOV];
	struct srd_place_iov dst[SRD_PLACE_MAX_IOV];
};

struct srd_place_ring {
	/* Jobs posted so far (daemon); the futex the owner's thread sleeps
	 * on. */
	_Alignas(SRD_CACHELINE) uint32_t posted;
	/* Non-zero while the owner's thread is (about to be) asleep: the
	 * daemon then wakes it after posting. */
	uint32_t sleeping;
	/* Jobs the owner's thread has finished (owner; the daemon never
	 * trusts it, it reads each slot's state). */
	_Alignas(SRD_CACHELINE) uint32_t finished;
	_Alignas(SRD_CACHELINE) struct srd_place_job job[SRD_PLACE_SLOTS];
};

#define SRD_PLACE_STAGE_OFF                                    \
	((sizeof(struct srd_place_ring) + SRD_PAGE_SIZE - 1) & \
	 ~(size_t)(SRD_PAGE_SIZE - 1))
#define SRD_PLACE_RING_BYTES (SRD_PLACE_STAGE_OFF + SRD_PLACE_STAGE_BYTES)

/* PLACE_SETUP: the process that handed over its mem file asks for a ring.
 * It names its token (bytes at an address that stay for the process's
 * life) and whether peers of its own user may read its registered memory
 * with their own rights (it is dumpable). Reply: the ring's memfd. */
enum {
	SRD_PLACE_F_PEER_READ = 1 << 0,
};
struct srd_place_setup_req {
	uint32_t flags;
	uint32_t rsvd;
	uint64_t token_addr;
	uint8_t token[SRD_PLACE_TOKEN_BYTES];
};
struct srd_place_setup_rep {
	uint32_t slots;
	uint32_t ring_bytes;
};

#endif
