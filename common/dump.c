/* SPDX-License-Identifier: MIT */
/*
 * WQE and CQE dumps: one decoded line, the data segments, then the bytes
 * in hex.  Each dump is formatted into one buffer and written at once, so
 * dumps from several threads do not interleave.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/dump.h"

struct sbuf {
	char b[4096];
	size_t len;
};

__attribute__((format(printf, 2, 3))) static void sb_add(struct sbuf *s,
							 const char *fmt, ...)
{
	va_list ap;
	int n;

	if (s->len >= sizeof(s->b))
		return;
	va_start(ap, fmt);
	n = vsnprintf(s->b + s->len, sizeof(s->b) - s->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		s->len += (size_t)n;
	if (s->len >= sizeof(s->b))
		s->len = sizeof(s->b) - 1;
}

static void sb_hex(struct sbuf *s, const void *p, size_t len)
{
	const uint8_t *b = p;

	for (size_t off = 0; off < len; off += 16) {
		sb_add(s, "  %04zx:", off);
		for (size_t i = off; i < off + 16 && i < len; i++)
			sb_add(s, " %02x", b[i]);
		sb_add(s, "\n");
	}
}

static void sb_flush(struct sbuf *s, FILE *f)
{
	fwrite(s->b, 1, s->len, f);
	fflush(f);
}

unsigned int srd_trace_flags_from_env(void)
{
	const char *env = secure_getenv(SRD_TRACE_ENV);
	unsigned int flags = 0;
	char buf[128], *tok, *save = NULL;

	if (!env || !*env)
		return 0;
	snprintf(buf, sizeof(buf), "%s", env);
	for (tok = strtok_r(buf, ",: ", &save); tok;
	     tok = strtok_r(NULL, ",: ", &save)) {
		if (!strcmp(tok, "wqe"))
			flags |= SRD_TRACE_F_WQE;
		else if (!strcmp(tok, "cqe"))
			flags |= SRD_TRACE_F_CQE;
		else if (!strcmp(tok, "all") || !strcmp(tok, "1"))
			flags |= SRD_TRACE_F_WQE | SRD_TRACE_F_CQE;
	}
	return flags;
}

/* enum ibv_wr_opcode */
static const char *wr_opcode_name(unsigned int op)
{
	static const char *const names[] = {
		[0] = "RDMA_WRITE",
		[1] = "RDMA_WRITE_WITH_IMM",
		[2] = "SEND",
		[3] = "SEND_WITH_IMM",
		[4] = "RDMA_READ",
		[5] = "ATOMIC_CMP_AND_SWP",
		[6] = "ATOMIC_FETCH_AND_ADD",
		[7] = "LOCAL_INV",
		[8] = "BIND_MW",
		[9] = "SEND_WITH_INV",
		[10] = "TSO",
		[11] = "DRIVER1",
		[15] = "ATOMIC_WRITE",
	};

	if (op < sizeof(names) / sizeof(names[0]) && names[op])
		return names[op];
	return "UNKNOWN";
}

/* enum ibv_wc_opcode */
static const char *wc_opcode_name(unsigned int op)
{
	switch (op) {
	case 0:
		return "SEND";
	case 1:
		return "RDMA_WRITE";
	case 2:
		return "RDMA_READ";
	case 3:
		return "COMP_SWAP";
	case 4:
		return "FETCH_ADD";
	case 5:
		return "BIND_MW";
	case 6:
		return "LOCAL_INV";
	case 7:
		return "TSO";
	case 9:
		return "ATOMIC_WRITE";
	case 128:
		return "RECV";
	case 129:
		return "RECV_RDMA_WITH_IMM";
	default:
		return "UNKNOWN";
	}
}

/* enum ibv_wc_status, by its enumerator name */
const char *srd_wc_status_name(unsigned int st)
{
	static const char *const names[] = {
		"SUCCESS",
		"LOC_LEN_ERR",
		"LOC_QP_OP_ERR",
		"LOC_EEC_OP_ERR",
		"LOC_PROT_ERR",
		"WR_FLUSH_ERR",
		"MW_BIND_ERR",
		"BAD_RESP_ERR",
		"LOC_ACCESS_ERR",
		"REM_INV_REQ_ERR",
		"REM_ACCESS_ERR",
		"REM_OP_ERR",
		"RETRY_EXC_ERR",
		"RNR_RETRY_EXC_ERR",
		"LOC_RDD_VIOL_ERR",
		"REM_INV_RD_REQ_ERR",
		"REM_ABORT_ERR",
		"INV_EECN_ERR",
		"INV_EEC_STATE_ERR",
		"FATAL_ERR",
		"RESP_TIMEOUT_ERR",
		"GENERAL_ERR",
		"TM_ERR",
		"TM_RNDV_INCOMPLETE",
	};

	return st < sizeof(names) / sizeof(names[0]) ? names[st] : "UNKNOWN";
}

static void sb_flags(struct sbuf *s, unsigned int flags,
		     const char *const *names, unsigned int n)
{
	bool first = true;

	if (!flags) {
		sb_add(s, "0");
		return;
	}
	for (unsigned int i = 0; i < n; i++) {
		if (!(flags & (1u << i)))
			continue;
		sb_add(s, "%s%s", first ? "" : "|", names[i]);
		first = false;
		flags &= ~(1u << i);
	}
	if (flags)
		sb_add(s, "%s0x%x", first ? "" : "|", flags);
}

/* Bytes of a slot worth showing: header and what follows it. */
static size_t used_bytes(size_t hdr, size_t body, uint32_t slot_size)
{
	size_t n = hdr + body;

	return n < slot_size ? n : slot_size;
}

void srd_dump_send_wqe(FILE *f, uint32_t qpn, uint32_t idx, const void *slot,
		       uint32_t slot_size)
{
	static const char *const fl[] = { "SIGNALED", "FENCE", "SOLICITED",
					  "INLINE" };
	struct sbuf *s = malloc(sizeof(*s));
	struct srd_send_wqe w;
	const struct srd_sge *sge;
	unsigned int nsge;
	size_t body;

	if (!s || slot_size < sizeof(w)) {
		free(s);
		return;
	}
	s->len = 0;
	memcpy(&w, slot, sizeof(w));
	sb_add(s, "softrdma: qp 0x%x sq[%u] %s wr_id 0x%llx flags ", qpn, idx,
	       wr_opcode_name(w.opcode), (unsigned long long)w.wr_id);
	sb_flags(s, w.flags, fl, 4);
	sb_add(s, " num_sge %u", w.num_sge);
	if (w.opcode == 1 || w.opcode == 3)
		sb_add(s, " imm 0x%08x", w.imm_data);
	if (w.opcode == 9)
		sb_add(s, " inv_rkey 0x%x", w.imm_data);
	if (w.opcode <= 1 || (w.opcode >= 4 && w.opcode <= 6))
		sb_add(s, " rkey 0x%x raddr 0x%llx", w.rkey,
		       (unsigned long long)w.remote_addr);
	if (w.opcode == 5 || w.opcode == 6)
		sb_add(s, " compare_add 0x%llx swap 0x%llx",
		       (unsigned long long)w.compare_add,
		       (unsigned long long)w.swap);
	if (w.ah_handle || w.remote_qpn || w.remote_qkey)
		sb_add(s, " ah %u rqpn 0x%x qkey 0x%x", w.ah_handle,
		       w.remote_qpn, w.remote_qkey);
	if (w.flags & SRD_WQE_INLINE)
		sb_add(s, " inline_len %u", w.inline_len);
	sb_add(s, "\n");

	if (w.flags & SRD_WQE_INLINE) {
		body = w.inline_len;
	} else {
		nsge = w.num_sge;
		if (nsge > (slot_size - sizeof(w)) / sizeof(*sge))
			nsge = (slot_size - sizeof(w)) / sizeof(*sge);
		sge = (const struct srd_sge *)((const uint8_t *)slot +
					       sizeof(w));
		for (unsigned int i = 0; i < nsge; i++)
			sb_add(s, "  sge[%u] addr 0x%llx len %u lkey 0x%x\n", i,
			       (unsigned long long)sge[i].addr, sge[i].length,
			       sge[i].lkey);
		body = nsge * sizeof(*sge);
	}
	sb_hex(s, slot, used_bytes(sizeof(w), body, slot_size));
	sb_flush(s, f);
	free(s);
}

void srd_dump_recv_wqe(FILE *f, uint32_t qpn, uint32_t idx, const void *slot,
		       uint32_t slot_size, int is_srq)
{
	struct sbuf *s = malloc(sizeof(*s));
	struct srd_recv_wqe w;
	const struct srd_sge *sge;
	unsigned int nsge;

	if (!s || slot_size < sizeof(w)) {
		free(s);
		return;
	}
	s->len = 0;
	memcpy(&w, slot, sizeof(w));
	sb_add(s, "softrdma: %s 0x%x %s[%u] RECV wr_id 0x%llx num_sge %u\n",
	       is_srq ? "srq" : "qp", qpn, is_srq ? "srq" : "rq", idx,
	       (unsigned long long)w.wr_id, w.num_sge);
	nsge = w.num_sge;
	if (nsge > (slot_size - sizeof(w)) / sizeof(*sge))
		nsge = (slot_size - sizeof(w)) / sizeof(*sge);
	sge = (const struct srd_sge *)((const uint8_t *)slot + sizeof(w));
	for (unsigned int i = 0; i < nsge; i++)
		sb_add(s, "  sge[%u] addr 0x%llx len %u lkey 0x%x\n", i,
		       (unsigned long long)sge[i].addr, sge[i].length,
		       sge[i].lkey);
	sb_hex(s, slot, used_bytes(sizeof(w), nsge * sizeof(*sge), slot_size));
	sb_flush(s, f);
	free(s);
}

void srd_dump_cqe(FILE *f, uint32_t cqn, uint32_t idx,
		  const struct srd_cqe *cqe)
{
	static const char *const wcf[] = { "GRH",	   "WITH_IMM",
					   "IP_CSUM_OK",   "WITH_INV",
					   "TM_SYNC_REQ",  "TM_MATCH",
					   "TM_DATA_VALID" };
	static const char *const cf[] = { "RECV", "SRQ", "SOLICITED" };
	struct sbuf *s = malloc(sizeof(*s));

	if (!s)
		return;
	s->len = 0;
	sb_add(s,
	       "softrdma: cq 0x%x cqe[%u] qp 0x%x %s wr_id 0x%llx status "
	       "%s(%u) "
	       "byte_len %u wqe_idx %u",
	       cqn, idx, cqe->qp_num, wc_opcode_name(cqe->opcode),
	       (unsigned long long)cqe->wr_id, srd_wc_status_name(cqe->status),
	       cqe->status, cqe->byte_len, cqe->wqe_idx);
	sb_add(s, " wc_flags ");
	sb_flags(s, cqe->wc_flags, wcf, 7);
	sb_add(s, " flags ");
	sb_flags(s, cqe->flags, cf, 3);
	if (cqe->wc_flags & 2) /* IBV_WC_WITH_IMM */
		sb_add(s, " imm 0x%08x", cqe->imm_data);
	if (cqe->wc_flags & 8) /* IBV_WC_WITH_INV */
		sb_add(s, " inv_rkey 0x%x", cqe->imm_data);
	if (cqe->flags & SRD_CQE_RECV)
		sb_add(s, " src_qp 0x%x", cqe->src_qp);
	if (cqe->vendor_err)
		sb_add(s, " vendor_err 0x%x", cqe->vendor_err);
	if (cqe->timestamp)
		sb_add(s, " ts %llu", (unsigned long long)cqe->timestamp);
	sb_add(s, " owner %u\n", cqe->owner);
	sb_hex(s, cqe, sizeof(*cqe));
	sb_flush(s, f);
	free(s);
}
