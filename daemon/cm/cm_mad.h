/* SPDX-License-Identifier: MIT */
/*
 * InfiniBand Communication Management messages (IBTA vol. 1 ch. 12.6),
 * carried as MADs of class 0x07, version 2, method Send on QP1.  Every
 * message is 256 bytes: the MAD header and 232 bytes of fields whose
 * layout follows the spec's tables 106-120; the private data areas are
 * fixed-size and always travel in full.
 *
 * The structs below hold the fields in host order, one member per field.
 * cm_mad_decode() fills one from a received MAD and rejects anything that
 * is not a well-formed CM message; cm_mad_encode() writes reserved bits as
 * zero and refuses values wider than their field.
 *
 * Also here: what rdma_cm adds on top of the IB CM, namely the service IDs
 * of the IP port spaces and the 36-byte header (struct cma_hdr) the kernel's
 * CMA puts in front of the consumer's private data of a REQ or SIDR_REQ.
 */
#ifndef SOFTRDMA_COMMON_CM_MAD_H
#define SOFTRDMA_COMMON_CM_MAD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "daemon/cm/mad.h"

#define CM_CLASS_VERSION 2

/* Attribute IDs (Table 104). */
enum cm_attr_id {
	CM_ATTR_CLASS_PORT_INFO = 0x0001,
	CM_ATTR_REQ = 0x0010,
	CM_ATTR_MRA = 0x0011,
	CM_ATTR_REJ = 0x0012,
	CM_ATTR_REP = 0x0013,
	CM_ATTR_RTU = 0x0014,
	CM_ATTR_DREQ = 0x0015,
	CM_ATTR_DREP = 0x0016,
	CM_ATTR_SIDR_REQ = 0x0017,
	CM_ATTR_SIDR_REP = 0x0018,
	CM_ATTR_LAP = 0x0019,
	CM_ATTR_APR = 0x001a,
};

/* Sizes of the variable areas, in bytes. */
#define CM_REQ_PRIVATE_DATA_SIZE 92
#define CM_MRA_PRIVATE_DATA_SIZE 222
#define CM_REJ_ARI_SIZE 72
#define CM_REJ_PRIVATE_DATA_SIZE 148
#define CM_REP_PRIVATE_DATA_SIZE 196
#define CM_RTU_PRIVATE_DATA_SIZE 224
#define CM_DREQ_PRIVATE_DATA_SIZE 220
#define CM_DREP_PRIVATE_DATA_SIZE 224
#define CM_LAP_PRIVATE_DATA_SIZE 168
#define CM_APR_INFO_SIZE 72
#define CM_APR_PRIVATE_DATA_SIZE 148
#define CM_SIDR_REQ_PRIVATE_DATA_SIZE 216
#define CM_SIDR_REP_INFO_SIZE 72
#define CM_SIDR_REP_PRIVATE_DATA_SIZE 136

/* REQ Transport Service Type; 3 means "see Extended Transport Type". */
enum cm_transport {
	CM_TST_RC = 0,
	CM_TST_UC = 1,
	CM_TST_RD = 2,
	CM_TST_EXTENDED = 3,
};
enum cm_ext_transport {
	CM_EXT_TST_NONE = 0,
	CM_EXT_TST_XRC = 1,
};

/* MRA "Message MRAed" and REJ "Message REJected". */
enum cm_msg_code {
	CM_MSG_CODE_REQ = 0,
	CM_MSG_CODE_REP = 1,
	CM_MSG_CODE_LAP = 2,   /* MRA */
	CM_MSG_CODE_OTHER = 2, /* REJ */
};

/* REJ reasons (Table 109). */
enum cm_rej_reason {
	CM_REJ_NO_QP = 1,
	CM_REJ_NO_EEC = 2,
	CM_REJ_NO_RESOURCES = 3,
	CM_REJ_TIMEOUT = 4,
	CM_REJ_UNSUPPORTED = 5,
	CM_REJ_INVALID_COMM_ID = 6,
	CM_REJ_INVALID_COMM_INSTANCE = 7,
	CM_REJ_INVALID_SERVICE_ID = 8,
	CM_REJ_INVALID_TRANSPORT_TYPE = 9,
	CM_REJ_STALE_CONN = 10,
	CM_REJ_RDC_NOT_EXIST = 11,
	CM_REJ_INVALID_GID = 12,
	CM_REJ_INVALID_LID = 13,
	CM_REJ_INVALID_SL = 14,
	CM_REJ_INVALID_TRAFFIC_CLASS = 15,
	CM_REJ_INVALID_HOP_LIMIT = 16,
	CM_REJ_INVALID_PACKET_RATE = 17,
	CM_REJ_INVALID_ALT_GID = 18,
	CM_REJ_INVALID_ALT_LID = 19,
	CM_REJ_INVALID_ALT_SL = 20,
	CM_REJ_INVALID_ALT_TRAFFIC_CLASS = 21,
	CM_REJ_INVALID_ALT_HOP_LIMIT = 22,
	CM_REJ_INVALID_ALT_PACKET_RATE = 23,
	CM_REJ_PORT_CM_REDIRECT = 24,
	CM_REJ_PORT_REDIRECT = 25,
	CM_REJ_INVALID_MTU = 26,
	CM_REJ_INSUFFICIENT_RESP_RESOURCES = 27,
	CM_REJ_CONSUMER_DEFINED = 28,
	CM_REJ_INVALID_RNR_RETRY = 29,
	CM_REJ_DUPLICATE_LOCAL_COMM_ID = 30,
	CM_REJ_INVALID_CLASS_VERSION = 31,
	CM_REJ_INVALID_FLOW_LABEL = 32,
	CM_REJ_INVALID_ALT_FLOW_LABEL = 33,
	CM_REJ_VENDOR_OPTION_NOT_SUPPORTED = 35,
};

/* SIDR_REP status (Table 121). */
enum cm_sidr_status {
	CM_SIDR_SUCCESS = 0,
	CM_SIDR_UNSUPPORTED = 1,
	CM_SIDR_REJECT = 2,
	CM_SIDR_NO_QP = 3,
	CM_SIDR_REDIRECT = 4,
	CM_SIDR_UNSUPPORTED_VERSION = 5,
};

/* APR status (Table 117). */
enum cm_apr_status {
	CM_APR_SUCCESS = 0,
	CM_APR_INVALID_COMM_ID = 1,
	CM_APR_UNSUPPORTED = 2,
	CM_APR_REJECT = 3,
	CM_APR_REDIRECT = 4,
	CM_APR_IS_CURRENT = 5,
	CM_APR_INVALID_QPN_EECN = 6,
	CM_APR_INVALID_LID = 7,
	CM_APR_INVALID_GID = 8,
	CM_APR_INVALID_FLOW_LABEL = 9,
	CM_APR_INVALID_TCLASS = 10,
	CM_APR_INVALID_HOP_LIMIT = 11,
	CM_APR_INVALID_PACKET_RATE = 12,
	CM_APR_INVALID_SL = 13,
};

/*
 * A path as a REQ (primary, alternate) or a LAP (alternate) carries it.
 * Widths in bits where a field is narrower than its member.
 */
struct cm_path {
	uint16_t local_lid;
	uint16_t remote_lid;
	uint8_t local_gid[16];
	uint8_t remote_gid[16];
	uint32_t flow_label; /* 20 */
	uint8_t packet_rate; /* 6 */
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint8_t sl;		   /* 4 */
	uint8_t subnet_local;	   /* 1 */
	uint8_t local_ack_timeout; /* 5 */
};

struct cm_req {
	uint32_t local_comm_id;
	uint32_t vendor_id; /* 24, ECE */
	uint64_t service_id;
	uint64_t local_ca_guid;
	uint32_t local_qkey;
	uint32_t local_qpn; /* 24 */
	uint8_t responder_resources;
	uint32_t local_eecn; /* 24 */
	uint8_t initiator_depth;
	uint32_t remote_eecn;		    /* 24 */
	uint8_t remote_cm_response_timeout; /* 5 */
	uint8_t transport_type;		    /* 2, enum cm_transport */
	uint8_t flow_control;		    /* 1, end-to-end */
	uint32_t starting_psn;		    /* 24 */
	uint8_t local_cm_response_timeout;  /* 5 */
	uint8_t retry_count;		    /* 3 */
	uint16_t pkey;
	uint8_t path_mtu;	    /* 4 */
	uint8_t rdc_exists;	    /* 1 */
	uint8_t rnr_retry_count;    /* 3 */
	uint8_t max_cm_retries;	    /* 4 */
	uint8_t srq;		    /* 1 */
	uint8_t ext_transport_type; /* 3, enum cm_ext_transport */
	struct cm_path primary;
	struct cm_path alternate;
	uint8_t sap_supported; /* 1 */
	uint8_t private_data[CM_REQ_PRIVATE_DATA_SIZE];
};

struct cm_mra {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t message_mraed;	 /* 2, enum cm_msg_code (0..2) */
	uint8_t service_timeout; /* 5 */
	uint8_t private_data[CM_MRA_PRIVATE_DATA_SIZE];
};

struct cm_rej {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t message_rejected; /* 2, enum cm_msg_code (0..2) */
	uint8_t ari_length;	  /* 7, at most CM_REJ_ARI_SIZE */
	uint16_t reason;	  /* enum cm_rej_reason */
	uint8_t ari[CM_REJ_ARI_SIZE];
	uint8_t private_data[CM_REJ_PRIVATE_DATA_SIZE];
};

struct cm_rep {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t local_qkey;
	uint32_t local_qpn;    /* 24 */
	uint32_t local_eecn;   /* 24 */
	uint32_t starting_psn; /* 24 */
	uint32_t vendor_id;    /* 24, ECE, spread over three bytes */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t target_ack_delay;  /* 5 */
	uint8_t failover_accepted; /* 2 */
	uint8_t flow_control;	   /* 1 */
	uint8_t rnr_retry_count;   /* 3 */
	uint8_t srq;		   /* 1 */
	uint64_t local_ca_guid;
	uint8_t private_data[CM_REP_PRIVATE_DATA_SIZE];
};

struct cm_rtu {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t private_data[CM_RTU_PRIVATE_DATA_SIZE];
};

struct cm_dreq {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t remote_qpn_eecn; /* 24 */
	uint8_t private_data[CM_DREQ_PRIVATE_DATA_SIZE];
};

struct cm_drep {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t private_data[CM_DREP_PRIVATE_DATA_SIZE];
};

struct cm_lap {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t remote_qpn_eecn;	    /* 24 */
	uint8_t remote_cm_response_timeout; /* 5 */
	struct cm_path alternate;
	uint8_t private_data[CM_LAP_PRIVATE_DATA_SIZE];
};

struct cm_apr {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t info_length; /* at most CM_APR_INFO_SIZE */
	uint8_t status;	     /* enum cm_apr_status */
	uint8_t info[CM_APR_INFO_SIZE];
	uint8_t private_data[CM_APR_PRIVATE_DATA_SIZE];
};

struct cm_sidr_req {
	uint32_t request_id;
	uint16_t pkey;
	uint64_t service_id;
	uint8_t private_data[CM_SIDR_REQ_PRIVATE_DATA_SIZE];
};

struct cm_sidr_rep {
	uint32_t request_id;
	uint8_t status;	     /* enum cm_sidr_status */
	uint8_t info_length; /* at most CM_SIDR_REP_INFO_SIZE */
	uint32_t vendor_id;  /* 24, ECE, in two pieces */
	uint32_t qpn;	     /* 24 */
	uint64_t service_id;
	uint32_t qkey;
	uint8_t info[CM_SIDR_REP_INFO_SIZE];
	uint8_t private_data[CM_SIDR_REP_PRIVATE_DATA_SIZE];
};

/* One CM MAD: the header's attr_id says which member is valid. */
struct cm_msg {
	struct mad_hdr hdr;
	union {
		struct cm_req req;
		struct cm_mra mra;
		struct cm_rej rej;
		struct cm_rep rep;
		struct cm_rtu rtu;
		struct cm_dreq dreq;
		struct cm_drep drep;
		struct cm_lap lap;
		struct cm_apr apr;
		struct cm_sidr_req sidr_req;
		struct cm_sidr_rep sidr_rep;
	};
};

/* Zeroes m and fills a CM Send header (base 1, class 7, version 2). */
void cm_msg_init(struct cm_msg *m, uint16_t attr_id, uint64_t tid);

/*
 * Decodes a MAD of exactly MAD_SIZE bytes.  0, or -EBADMSG: wrong length,
 * base version, class, class version or method (only Send), an attribute
 * that is not a CM message, or a field value the spec reserves (MRAed or
 * REJected message code 3, an ARI or additional information length above
 * its area).  Reserved bits are ignored.  m is zeroed first in any case.
 */
int cm_mad_decode(const void *buf, size_t len, struct cm_msg *m);

/*
 * Writes MAD_SIZE bytes to buf (len must be at least that): the header
 * as given and the message that hdr.attr_id names, reserved bits zero.
 * 0, or -EINVAL: unknown attribute, a value wider than its field, or one
 * the decoder would refuse.
 */
int cm_mad_encode(const struct cm_msg *m, void *buf, size_t len);

/* Names for logs: "REQ", "REP"...; "unknown" for anything else. */
const char *cm_mad_str(uint16_t attr_id);
const char *cm_rej_reason_str(uint16_t reason);
const char *cm_sidr_status_str(uint8_t status);
const char *cm_apr_status_str(uint8_t status);

/* One line describing m (no newline), as snprintf returns. */
int cm_msg_format(char *buf, size_t size, const struct cm_msg *m);

/*
 * Copies len bytes into a private data area of cap bytes and zeroes the
 * rest; -EINVAL (nothing copied) if len > cap.
 */
int cm_set_private_data(uint8_t *area, size_t cap, const void *src, size_t len);

/*
 * Self-checks of the field tables, for tests: no two fields share a bit,
 * every field sits inside the MAD and fits its member, and the private
 * data runs to the end of the MAD.  0 or -EINVAL.
 */
int cm_mad_layout_check(void);

/*
 * Sets, in mask (MAD_DATA_SIZE bytes, the data after the MAD header),
 * the bits that attr_id's message reserves.  0 or -EINVAL.
 */
int cm_mad_reserved_mask(uint16_t attr_id, uint8_t *mask);

/* --- rdma_cm on top of the IB CM --------------------------------------- */

/* Port spaces (as rdma_cma.h's enum rdma_port_space). */
enum cm_port_space {
	CM_PS_IPOIB = 0x0002,
	CM_PS_TCP = 0x0106,
	CM_PS_UDP = 0x0111,
	CM_PS_IB = 0x013f,
};

/*
 * The service ID of an IP port space: 0x0000000001PPpppp, PP the low byte
 * of the port space (whose high byte is the 0x01), pppp the port.
 */
#define CM_IP_SERVICE_ID_MASK 0xffffffffffff0000ull

static inline uint64_t cm_ip_service_id(uint16_t ps, uint16_t port)
{
	return (uint64_t)ps << 16 | port;
}

/* 0 and the port space and port if sid is an IP one, else -EINVAL. */
int cm_ip_service_id_parse(uint64_t sid, uint16_t *ps, uint16_t *port);

/*
 * The header the CMA puts in front of the consumer's private data in a
 * REQ (and SIDR_REQ) of an IP port space.  The destination port is not
 * in it: it is the low 16 bits of the service ID.
 */
#define CMA_HDR_SIZE 36
#define CMA_HDR_VERSION 0x00
#define CMA_REQ_USER_DATA_SIZE (CM_REQ_PRIVATE_DATA_SIZE - CMA_HDR_SIZE)
#define CMA_SIDR_REQ_USER_DATA_SIZE \
	(CM_SIDR_REQ_PRIVATE_DATA_SIZE - CMA_HDR_SIZE)

struct cma_hdr {
	uint8_t version;      /* CMA_HDR_VERSION */
	uint8_t ip_version;   /* 4 or 6 (the high nibble on the wire) */
	uint16_t src_port;    /* host order */
	uint8_t src_addr[16]; /* IPv6, or IPv4 in the last four bytes */
	uint8_t dst_addr[16];
};

/* 0, or -EBADMSG (short, unknown version, IP version not 4 or 6). */
int cma_hdr_decode(const void *buf, size_t len, struct cma_hdr *h);
/* Writes CMA_HDR_SIZE bytes; 0 or -EINVAL (len, version, IP version). */
int cma_hdr_encode(const struct cma_hdr *h, void *buf, size_t len);

/*
 * From a pair of sockaddr_in or sockaddr_in6 of one family: 0, -EINVAL or
 * -EAFNOSUPPORT.
 */
int cma_hdr_from_sockaddr(struct cma_hdr *h, const struct sockaddr *src,
			  const struct sockaddr *dst);
/*
 * To sockaddr_in or sockaddr_in6, the destination port taken from the
 * REQ's service ID; 0 or -EINVAL.
 */
int cma_hdr_to_sockaddr(const struct cma_hdr *h, uint64_t service_id,
			struct sockaddr_storage *src,
			struct sockaddr_storage *dst);

#endif
