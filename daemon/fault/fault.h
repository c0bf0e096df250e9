/* SPDX-License-Identifier: MIT */
/*
 * Fault injection: rules that drop, duplicate, reorder, delay or corrupt
 * the packets matching them, on either wire, for testing what crosses a
 * network (retransmission, duplicate detection, ICRC checks).
 *
 * A rule is an action then key=value words:
 *   drop | dup | reorder | delay | corrupt
 *   dir=tx|rx      where it applies: a packet leaving (tx, the default)
 *                  or arriving at a device; every packet is seen once
 *                  leaving and once arriving
 *   dev=NAME       the local device (sender for tx, receiver for rx)
 *   qpn=N          the local QP (sender for tx, receiver for rx)
 *   op=LIST        BTH opcodes: numbers (0x04) or classes, comma separated:
 *                  send write read (request and responses) read_req
 *                  read_resp atomic ack (ACK, atomic ACK) rc uc ud
 *   prob=P         probability per matching packet, 0..1 (default 1)
 *   every=N        only every N-th matching packet
 *   skip=N         leave the first N matching packets alone
 *   count=N        at most N injections, then the rule rests
 *   us=N           delay: hold time (default 1000); reorder: longest hold
 *                  (default 1000)
 *   n=N            reorder: let N later packets overtake (default 1)
 * e.g. "drop dir=rx qpn=0x12 prob=0.05", "delay us=1000 dev=softrdma0",
 * "corrupt count=3 op=write".  Lists separate rules with ';' (or new
 * lines); '#' starts a comment.
 */
#ifndef SOFTRDMA_DAEMON_FAULT_FAULT_H
#define SOFTRDMA_DAEMON_FAULT_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum srd_fault_action {
	SRD_FAULT_DROP,
	SRD_FAULT_DUP,
	SRD_FAULT_REORDER,
	SRD_FAULT_DELAY,
	SRD_FAULT_CORRUPT,
	SRD_FAULT_NACTIONS,
};

enum srd_fault_dir {
	SRD_FAULT_TX = 1,
	SRD_FAULT_RX = 2,
};

struct srd_fault_rule {
	uint8_t action; /* enum srd_fault_action */
	uint8_t dir;	/* enum srd_fault_dir */
	bool any_dev;
	bool any_qpn;
	bool any_op;
	char dev[64];
	uint32_t qpn;
	uint64_t ops[4]; /* bitmap of the 256 BTH opcodes */
	uint32_t prob;	 /* out of 2^32 - 1; UINT32_MAX: always */
	uint64_t every;
	uint64_t skip;
	uint64_t count; /* 0: no limit */
	uint64_t hold_ns;
	uint32_t overtake; /* reorder */
	char text[160];	   /* the rule as written */
	/* statistics */
	uint64_t matched;
	uint64_t injected;
};

/* What happens to one packet at one point (dir) of one device. */
struct srd_fault_verdict {
	unsigned int actions; /* bits 1 << enum srd_fault_action */
	uint64_t hold_ns;     /* delay, or reorder's longest hold */
	uint32_t overtake;    /* reorder: packets to let pass first */
};

struct srd_faults {
	struct srd_fault_rule *rule;
	unsigned int n;
	unsigned int nfixed; /* rules from the command line, kept on reload */
	uint64_t rng;
	uint64_t injected[SRD_FAULT_NACTIONS];
};

/*
 * Parse one rule; 0 or -EINVAL with a reason in err.  Empty text (blank,
 * comment) is -ENODATA.
 */
int srd_fault_parse(const char *text, struct srd_fault_rule *r, char *err,
		    size_t errlen);

void srd_faults_init(struct srd_faults *f, uint64_t seed);
void srd_faults_fini(struct srd_faults *f);
/* Add the rules of a list ("rule;rule", new lines too); on error nothing
 * is added.  0 or -EINVAL (reason in err). */
int srd_faults_add(struct srd_faults *f, const char *list, char *err,
		   size_t errlen);
/* Mark the rules so far as fixed: srd_faults_load_file keeps them. */
void srd_faults_fix(struct srd_faults *f);
/* Replace the non-fixed rules by those of a file; on error the old ones
 * stay.  0 or -errno (reason in err). */
int srd_faults_load_file(struct srd_faults *f, const char *path, char *err,
			 size_t errlen);

static inline bool srd_faults_active(const struct srd_faults *f)
{
	return f && f->n;
}

/*
 * The verdict for a packet: its BTH opcode, at a device (name), for a
 * local QP, in a direction.  Counts the rules' matches and injections.
 */
void srd_faults_judge(struct srd_faults *f, enum srd_fault_dir dir,
		      const char *dev, uint32_t qpn, uint8_t opcode,
		      struct srd_fault_verdict *v);

/* Whether any rule could apply at this device and direction (cheap check
 * before a packet is looked at closer). */
bool srd_faults_may_match(const struct srd_faults *f, enum srd_fault_dir dir,
			  const char *dev);

/* A random number from the rules' generator (for what corrupt flips). */
uint64_t srd_faults_random(struct srd_faults *f);

/* One line per rule with its counters into buf (for logs and listings);
 * returns the length written (truncated to size). */
size_t srd_faults_describe(const struct srd_faults *f, char *buf, size_t size);

#endif
