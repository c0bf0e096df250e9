/* SPDX-License-Identifier: MIT */
/*
 * The wires: where a packet the engine sends goes.
 *
 * wire_send() (engine.h) dispatches: a destination GID owned by one of
 * this daemon's devices takes the in-memory wire (wire_mem.c: synchronous
 * delivery, payload by reference, trains), any other the UDP wire
 * (daemon/net/udp.h: serialized, queued, sent at the end of the pass).
 * With --wire udp every packet takes UDP, the daemon's own GIDs too.
 *
 * Capture and fault injection sit on both.  While neither is on, the
 * in-memory wire costs one test per packet more than a bare delivery.
 * With them, the in-memory wire looks at each packet of a train on its
 * own, and a packet a fault keeps (delay, reorder) or alters (corrupt,
 * dup) becomes a frame: a private serialized copy, ICRC included, which
 * later goes through the same receive path as a UDP packet (so a
 * corrupted one dies at the ICRC check).  Frames are released at the
 * start and the end of an engine pass, never inside wire_send(): the
 * engine's bounded recursion stays as it is.
 *
 * Receiving from UDP: each packet's destination address picks the device,
 * then ICRC, headers, QP, and the same responder_rx()/completer_rx() as
 * the in-memory wire, the payload a reference into the receive buffer.
 * Every drop is counted per device (daemon/net/net.h).
 */
#ifndef SOFTRDMA_TRANSPORT_WIRE_H
#define SOFTRDMA_TRANSPORT_WIRE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/list.h"
#include "common/proto.h"
#include "daemon/fault/fault.h"
#include "daemon/net/capture.h"
#include "daemon/net/net.h"
#include "daemon/net/udp.h"
#include "daemon/transport/pkt.h"

struct srd_engine;
struct srd_qp_transport;

/* Where a frame goes when it moves on. */
enum wire_next {
	WIRE_NEXT_ARRIVE,  /* in-memory: arrives at its device (rx faults) */
	WIRE_NEXT_UDP,	   /* onto the UDP socket */
	WIRE_NEXT_DELIVER, /* checked and delivered to its QP */
};

/* A serialized packet (BTH ... ICRC) and its addresses. */
struct wire_frame {
	struct list_node node; /* in wire->held */
	uint64_t due;	       /* held until then (monotonic ns) */
	uint64_t after_seq;    /* reorder: until wire->seq passes this */
	uint8_t next;	       /* enum wire_next */
	bool id_known;	       /* IPv4 identification 0 (our own frames) */
	uint32_t src_qpn;      /* local sender (UDP source port) */
	struct srd_net_counters *cnt; /* the sending device's */
	/* A multicast frame judged for one receiving device: its name (the
	 * device may go while the frame waits); empty: every member. */
	char to_dev[SRD_DEV_NAME_MAX];
	struct srd_udp_meta m;
	uint32_t len;
	uint8_t data[];
};

struct srd_wire {
	struct srd_engine *e;
	struct srd_daemon *d;
	bool force_udp;
	bool slow; /* capture or faults: the in-memory wire looks closer */
	struct srd_udp *udp; /* NULL: no UDP wire */
	bool udp_in_loop;
	uint32_t rx_skip; /* passes before the socket is read again */
	struct srd_capture cap;
	bool capturing;
	struct srd_faults faults;
	const char *fault_file;
	int sighup_fd;
	struct list_head held; /* frames, by due time */
	uint32_t nheld;
	uint64_t held_bytes;
	uint32_t nreorder;    /* held frames waiting for overtakes */
	uint64_t seq;	      /* packets seen, for reorder */
	uint8_t *scratch;     /* one packet's bytes */
	uint64_t frames_lost; /* held frames over the limit */
};

/* Set up from srd_net_cfg; 0 or -errno. */
int wire_init(struct srd_engine *e);
void wire_fini(struct srd_engine *e);
/* Start of a pass: UDP arrivals and held frames now due; true if any. */
bool wire_poll(struct srd_engine *e);
/* End of a pass: held frames now due, then the queued UDP packets. */
void wire_flush(struct srd_engine *e);
/* When held frames or the capture need a pass; UINT64_MAX: never. */
uint64_t wire_next_deadline(struct srd_engine *e);

/* --- wire_udp.c ----------------------------------------------------------- */
/* A packet (npkts 1) onto the UDP wire: transmit faults, then the queue. */
void wire_udp_send(struct srd_wire *w, const struct srd_device *dev,
		   uint32_t qpn, const struct srd_pkt *pkt);

/* --- wire_mem.c ----------------------------------------------------------- */
/* The device owning a GID, whatever the wire mode; NULL if none. */
struct srd_device *wire_dev_by_gid(struct srd_daemon *d, const uint8_t gid[16]);
/* The device for gid whose QP qpn is, when several devices (on one
 * interface) hold gid; else wire_dev_by_gid()'s. */
struct srd_device *wire_dev_for(struct srd_daemon *d, const uint8_t gid[16],
				uint32_t qpn);
/*
 * Hand a packet (pkt->dst_dev set) to its QP as a network would: the QP
 * must exist on that device, its type match the opcode's transport, the
 * P_Key match the default (roce_pkey_ok), and an RC/UC QP's path lead to
 * the source GID.  0, -ENOENT (no such QP) or -EPERM (refused).
 */
int wire_deliver(struct srd_engine *e, struct srd_pkt *pkt);
/* A packet for dev whose P_Key does not match: the port's bad_pkey_cntr
 * (16 bits: it stops at 0xffff). */
void wire_bad_pkey(struct srd_device *dev);
/* wire_deliver(), counting what could not be delivered in c (if any):
 * rx_unknown_qp for a QP that is not there, rx_drops otherwise. */
int wire_deliver_counted(struct srd_engine *e, struct srd_pkt *pkt,
			 struct srd_net_counters *c);

/* --- wire_ser.c: packets as bytes ----------------------------------------- */
/* Bytes on the wire (BTH ... ICRC) of a packet or train. */
uint32_t wire_pkt_bytes(const struct srd_pkt *pkt);
/* Packet i of a train as a packet of its own. */
void wire_train_part(const struct srd_pkt *train, uint32_t i,
		     struct srd_pkt *out);
/* Addresses of a packet sent by local QP qpn of device dev. */
void wire_pkt_meta(struct srd_wire *w, const struct srd_device *dev,
		   uint32_t qpn, const struct srd_pkt *pkt,
		   struct srd_udp_meta *m);
/*
 * Serialize a packet (npkts 1) with its payload into buf (room bytes),
 * the ICRC computed for m (IPv4 identification 0).  Returns the length
 * or a negative errno (-EFAULT: the payload is out of reach).
 */
int wire_serialize(struct srd_wire *w, const struct srd_pkt *pkt,
		   const struct srd_udp_meta *m, uint8_t *buf, size_t room);
/* The ICRC of a frame's bytes as m addresses them; 0 or -EBADMSG. */
int wire_check_icrc(const struct srd_udp_meta *m, bool id_known,
		    const uint8_t *buf, size_t len);
/* Whether m is IPv4 (both addresses IPv4-mapped). */
bool wire_meta_v4(const struct srd_udp_meta *m);

/* --- wire_rx.c ------------------------------------------------------------ */
/* A packet arriving from the UDP socket (srd_udp_rx_fn). */
void wire_udp_rx(void *arg, const struct srd_udp_meta *m, uint8_t *buf,
		 size_t len);
/* Check and deliver a frame's bytes to device dev (rx counted already). */
/* Count a packet that arrived for dev over UDP; NULL (counted as
 * malformed) if it came truncated, else the device's counters. */
struct srd_net_counters *wire_rx_count(struct srd_wire *w,
				       const struct srd_device *dev,
				       const struct srd_udp_meta *m,
				       size_t len);
void wire_rx_deliver(struct srd_wire *w, struct srd_device *dev,
		     const struct srd_udp_meta *m, bool id_known, uint8_t *buf,
		     size_t len);
/* The destination QPN and opcode of raw bytes (0 when too short). */
void wire_peek_bth(const uint8_t *buf, size_t len, uint32_t *qpn,
		   uint8_t *opcode);
/*
 * The receive fault rules for bytes arriving at dev (counted in c): true
 * to deliver them now; false when dropped or turned into a frame (which
 * goes to dev alone when to_dev, for a multicast copy).
 */
bool wire_rx_judge(struct srd_wire *w, const struct srd_device *dev,
		   struct srd_net_counters *c, const struct srd_udp_meta *m,
		   const uint8_t *buf, size_t len, bool to_dev);

/* --- wire_fault.c --------------------------------------------------------- */
/* A frame of a packet (npkts 1); NULL when it cannot be serialized. */
struct wire_frame *wire_frame_of_pkt(struct srd_wire *w,
				     const struct srd_device *dev, uint32_t qpn,
				     const struct srd_pkt *pkt);
struct wire_frame *wire_frame_of_bytes(const struct srd_udp_meta *m,
				       const uint8_t *buf, size_t len);
/* Apply a verdict's actions but drop to a frame, then move it on (or
 * hold it).  Takes the frame. */
void wire_frame_apply(struct srd_wire *w, struct wire_frame *f,
		      const struct srd_fault_verdict *v, enum wire_next next);
/* Move a frame on now; takes it. */
void wire_frame_go(struct srd_wire *w, struct wire_frame *f);
/* Release what is due; true if any. */
bool wire_release(struct srd_wire *w, uint64_t now);
void wire_held_fini(struct srd_wire *w);
/* The in-memory arrival of a packet at pkt->dst_dev (rx faults, capture
 * done before); delivers it or frames it. */
void wire_mem_arrive(struct srd_wire *w, struct srd_pkt *pkt);
/* Capture a packet sent by local QP qpn of dev (in-memory wire). */
void wire_capture_pkt(struct srd_wire *w, const struct srd_device *dev,
		      uint32_t qpn, const struct srd_pkt *pkt);

#endif
