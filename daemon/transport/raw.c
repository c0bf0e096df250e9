/* SPDX-License-Identifier: MIT */
/*
 * Raw packet QPs: each send WQE is one Ethernet frame, written to the
 * device's interface through a packet socket; frames the interface
 * receives go through the flow rules (flow.c) into the receive queues of
 * the raw QPs they steer to.  The socket is the device's, opened by its
 * first raw QP and closed with its last; it is non-blocking, so a full
 * socket leaves the WQE for the next pass and never stalls the loop.
 *
 * The kernel's stack still sees every frame: a packet socket receives a
 * copy, it takes nothing away (unlike a NIC's steering).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/core/core.h"
#include "daemon/core/flow.h"
#include "daemon/device/link.h"
#include "daemon/transport/engine.h"
#include "daemon/transport/wire.h"

#define RAW_RX_BUDGET 64     /* frames read per port and pass */
#define RAW_IDLE_EVERY 64    /* passes between reads of a quiet socket */
#define RAW_MAX_TARGETS 64   /* QPs one frame can be copied to */
#define RAW_BUF (65536 + 64) /* the largest frame lo can carry, a tag */

static uint8_t raw_buf[RAW_BUF + SRD_VLAN_HLEN];

bool raw_supported(void)
{
	static int can = -1;

	if (can < 0) {
		int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);

		can = fd >= 0;
		if (fd >= 0)
			close(fd);
	}
	return can;
}

uint32_t raw_max_frame(const struct srd_device *dev)
{
	return dev->port.netdev_mtu + SRD_ETH_HLEN + SRD_VLAN_HLEN;
}

static void on_raw(struct srd_daemon *d, void *arg)
{
	struct srd_raw_port *rp = arg;

	rp->ready = true;
}

static bool if_is_loopback(int fd, int ifindex)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	return if_indextoname((unsigned int)ifindex, ifr.ifr_name) &&
	       !ioctl(fd, SIOCGIFFLAGS, &ifr) && (ifr.ifr_flags & IFF_LOOPBACK);
}

static int raw_open(struct srd_raw_port *rp, const struct srd_device *dev)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(ETH_P_ALL),
				   .sll_ifindex = rp->ifindex };
	int one = 1, rcvbuf = 4 << 20;
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
			htons(ETH_P_ALL));

	if (fd < 0) {
		int err = errno;

		srd_log(SRD_LOG_WARN,
			"%s: no packet socket for raw packet QPs: %s%s",
			dev->name, strerror(err),
			err == EPERM ? " (the daemon needs CAP_NET_RAW)" : "");
		return err == EPERM || err == EACCES ? -EOPNOTSUPP : -err;
	}
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		int err = errno;

		close(fd);
		return err == ENODEV || err == ENXIO ? -ENODEV : -err;
	}
	/* Tags the interface took off come back as auxiliary data. */
	setsockopt(fd, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	rp->loopback = if_is_loopback(fd, rp->ifindex);
	rp->fd = fd;
	return 0;
}

int raw_port_get(struct srd_device *dev)
{
	struct srd_daemon *d = link_of(dev)->d;
	struct srd_raw_port *rp = dev->raw;
	int err;

	if (rp) {
		rp->nqps++;
		return 0;
	}
	rp = calloc(1, sizeof(*rp));
	if (!rp)
		return -ENOMEM;
	rp->dev = dev;
	list_head_init(&rp->rules);
	rp->ifindex = (int)link_of(dev)->ifindex;
	if (!rp->ifindex)
		rp->ifindex = (int)if_nametoindex(dev->netdev);
	err = rp->ifindex ? raw_open(rp, dev) : -ENODEV;
	if (err) {
		free(rp);
		return err;
	}
	err = loop_add_fd(d, rp->fd, on_raw, rp);
	if (err) {
		close(rp->fd);
		free(rp);
		return err;
	}
	rp->nqps = 1;
	rp->ready = true;
	dev->raw = rp;
	srd_log(SRD_LOG_INFO, "%s: raw packet socket on %s", dev->name,
		dev->netdev);
	return 0;
}

void raw_counters_add(struct srd_raw_counters *sum,
		      const struct srd_raw_counters *c)
{
	sum->rx_frames += c->rx_frames;
	sum->rx_unsteered += c->rx_unsteered;
	sum->rx_roce += c->rx_roce;
	sum->rx_no_rwqe += c->rx_no_rwqe;
	sum->rx_bad += c->rx_bad;
	sum->tx_frames += c->tx_frames;
	sum->tx_drops += c->tx_drops;
}

void raw_port_put(struct srd_device *dev)
{
	struct srd_raw_port *rp = dev->raw;

	if (!rp || --rp->nqps)
		return;
	srd_log(SRD_LOG_INFO,
		"%s: raw: rx %llu (unsteered %llu, roce %llu, no wqe %llu, "
		"bad %llu), tx %llu (dropped %llu)",
		dev->name, (unsigned long long)rp->cnt.rx_frames,
		(unsigned long long)rp->cnt.rx_unsteered,
		(unsigned long long)rp->cnt.rx_roce,
		(unsigned long long)rp->cnt.rx_no_rwqe,
		(unsigned long long)rp->cnt.rx_bad,
		(unsigned long long)rp->cnt.tx_frames,
		(unsigned long long)rp->cnt.tx_drops);
	/* The port's counters outlive its packet socket. */
	raw_counters_add(&link_of(dev)->raw_retired, &rp->cnt);
	loop_del_fd(link_of(dev)->d, rp->fd);
	close(rp->fd);
	free(rp);
	dev->raw = NULL;
}

/* --- receiving ------------------------------------------------------------ */

static void raw_deliver(struct srd_qp_transport *tp, struct srd_raw_port *rp,
			const uint8_t *frame, uint32_t len)
{
	struct srd_qp *qp = tp->qp;
	struct srd_recv_cqe_info info = { .status = IBV_WC_SUCCESS,
					  .opcode = IBV_WC_RECV,
					  .byte_len = len };
	struct srd_rwqe *rw = &tp->rwqe;
	enum ibv_qp_state st = tp_state(tp);
	struct srd_dma dst, src;

	/* A QP receives from RTR on; in ERR its queue is being flushed. */
	if (st != IBV_QPS_RTR && st != IBV_QPS_RTS && st != IBV_QPS_SQD &&
	    st != IBV_QPS_SQE)
		return;
	tp->cnt.rx_pkts++;
	if (!rw->valid && rq_take(tp)) {
		tp->cnt.no_rwqe_drops++;
		rp->cnt.rx_no_rwqe++;
		return;
	}
	if (rw->malformed) {
		info.status = IBV_WC_LOC_QP_OP_ERR;
	} else if (len > rw->total) {
		info.status = IBV_WC_LOC_LEN_ERR;
	} else {
		dma_init_sgl(&dst, rw->sge, rw->num_sge, qp->pd,
			     qp->srq ? qp->srq->pd : NULL,
			     IBV_ACCESS_LOCAL_WRITE);
		dma_init_buf(&src, (void *)frame, len);
		if (dma_copy(tp->eng->d, &dst, &src, len))
			info.status = IBV_WC_LOC_PROT_ERR;
	}
	if (info.status != IBV_WC_SUCCESS)
		info.byte_len = 0;
	tp_recv_cqe(tp, &info);
	if (info.status != IBV_WC_SUCCESS)
		tp_error(tp, -1);
}

/* Copy a received frame to every QP its rules name. */
static void raw_steer(struct srd_engine *e, struct srd_raw_port *rp,
		      const uint8_t *frame, uint32_t len, bool outgoing)
{
	struct srd_qp *to[RAW_MAX_TARGETS];
	struct srd_flow_key k;
	uint16_t roce_port = e->wire && e->wire->udp ? e->wire->udp->port : 0;
	uint32_t n, steered;
	bool roce;

	if (!flow_key_of(frame, len, &k)) {
		rp->cnt.rx_bad++;
		return;
	}
	roce = flow_key_is_roce(&k, roce_port);
	n = flow_steer(rp, &k, outgoing, roce, to, RAW_MAX_TARGETS, &steered);
	/* A sniffer's copy steers nothing: the frame is still unsteered. */
	if (!outgoing && roce)
		rp->cnt.rx_roce++;
	else if (!outgoing && !steered)
		rp->cnt.rx_unsteered++;
	for (uint32_t i = 0; i < n; i++)
		if (to[i]->tp)
			raw_deliver(to[i]->tp, rp, frame, len);
}

/* One frame from the socket into raw_buf; its length, 0 when none is
 * left, -1 for one to skip.  A tag the interface stripped is put back,
 * so rules and receivers see the frame as it was on the wire. */
static int raw_read(struct srd_raw_port *rp, uint8_t **frame, bool *outgoing)
{
	union {
		struct cmsghdr h;
		uint8_t b[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
	} cbuf;
	struct sockaddr_ll sll;
	uint8_t *p = raw_buf + SRD_VLAN_HLEN;
	struct iovec iov = { p, RAW_BUF };
	struct msghdr m = { .msg_name = &sll,
			    .msg_namelen = sizeof(sll),
			    .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = &cbuf,
			    .msg_controllen = sizeof(cbuf) };
	ssize_t n = recvmsg(rp->fd, &m, MSG_DONTWAIT | MSG_TRUNC);

	if (n < 0)
		return errno == EINTR ? -1 : 0;
	/* Frames leaving the interface come too (the sniffers' share);
	 * only arriving ones count as received. */
	*outgoing = sll.sll_pkttype == PACKET_OUTGOING;
	if (!*outgoing)
		rp->cnt.rx_frames++;
	if ((size_t)n > RAW_BUF || n < SRD_ETH_HLEN) {
		rp->cnt.rx_bad++;
		return -1;
	}
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		struct tpacket_auxdata aux;
		uint16_t tpid, tci;

		if (c->cmsg_level != SOL_PACKET ||
		    c->cmsg_type != PACKET_AUXDATA ||
		    c->cmsg_len < CMSG_LEN(sizeof(aux)))
			continue;
		memcpy(&aux, CMSG_DATA(c), sizeof(aux));
		if (!(aux.tp_status & TP_STATUS_VLAN_VALID))
			continue;
		tpid = aux.tp_status & TP_STATUS_VLAN_TPID_VALID
			       ? aux.tp_vlan_tpid
			       : ETH_P_8021Q;
		tci = aux.tp_vlan_tci;
		memmove(raw_buf, p, 12);
		p = raw_buf;
		p[12] = (uint8_t)(tpid >> 8);
		p[13] = (uint8_t)tpid;
		p[14] = (uint8_t)(tci >> 8);
		p[15] = (uint8_t)tci;
		n += SRD_VLAN_HLEN;
	}
	*frame = p;
	return (int)n;
}

static bool raw_port_poll(struct srd_engine *e, struct srd_raw_port *rp)
{
	unsigned int got = 0;

	if (!rp->ready && ++rp->idle_passes < RAW_IDLE_EVERY)
		return false;
	rp->idle_passes = 0;
	for (unsigned int i = 0; i < RAW_RX_BUDGET; i++) {
		uint8_t *frame;
		bool outgoing = false;
		int n = raw_read(rp, &frame, &outgoing);

		if (!n) {
			rp->ready = false;
			break;
		}
		got++;
		/* On lo what leaves comes straight back in: seen once. */
		if (n < 0 || (outgoing && rp->loopback))
			continue;
		raw_steer(e, rp, frame, (uint32_t)n, outgoing);
	}
	return got;
}

bool raw_poll(struct srd_engine *e)
{
	bool work = false;

	list_for_each (&e->d->devices, it) {
		struct srd_device *dev =
			list_entry(it, struct srd_device, node);

		if (dev->raw)
			work |= raw_port_poll(e, dev->raw);
	}
	return work;
}

/* --- sending -------------------------------------------------------------- */

/* Send the frame of WQE s: 0, -EAGAIN (the socket is full: again later),
 * or the completion status in *st. */
static int raw_tx_one(struct srd_qp_transport *tp, struct srd_raw_port *rp,
		      struct srd_swqe *s, enum ibv_wc_status *st)
{
	struct srd_qp *qp = tp->qp;
	uint32_t len = s->length, hdr = SRD_ETH_HLEN;
	uint8_t *frame = raw_buf;
	struct srd_dma dst, src;
	ssize_t n;

	if (s->w.flags & SRD_WQE_INLINE) {
		frame = s->body;
	} else {
		dma_init_sgl(&src, swqe_sge(s), s->w.num_sge, qp->pd, NULL, 0);
		dma_init_buf(&dst, raw_buf, len);
		if (dma_copy(tp->eng->d, &dst, &src, len)) {
			*st = IBV_WC_LOC_PROT_ERR;
			return 0;
		}
	}
	if (len >= SRD_ETH_HLEN + 2 &&
	    ((frame[12] == 0x81 && frame[13] == 0x00) ||
	     (frame[12] == 0x88 && frame[13] == 0xa8)))
		hdr += SRD_VLAN_HLEN;
	if (len < SRD_ETH_HLEN || len > qp->dev->port.netdev_mtu + hdr) {
		*st = IBV_WC_LOC_LEN_ERR;
		return 0;
	}
	n = send(rp->fd, frame, len, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == ENOBUFS || errno == EINTR))
		return -EAGAIN;
	if (n < 0) {
		/* The interface is down or gone: lost, as on a wire. */
		rp->cnt.tx_drops++;
		return 0;
	}
	rp->cnt.tx_frames++;
	/* A packet socket does not see what it sent itself; sniffers do
	 * (on lo the frame comes back in and is steered then). */
	if (!rp->loopback)
		raw_steer(tp->eng, rp, frame, len, true);
	return 0;
}

bool raw_send_run(struct srd_qp_transport *tp)
{
	struct srd_raw_port *rp = tp->qp->dev->raw;
	unsigned int budget = SRD_REQ_BUDGET;
	bool work = false;

	if (sq_fetch(tp) < 0 || !rp)
		return true;
	while (tp->sq_head != tp->sq_fetched && budget--) {
		uint32_t idx = tp->sq_head;
		struct srd_swqe *s = tp_swqe(tp, idx);
		enum ibv_wc_status st = s->state == SWQE_BAD ? s->status
							     : IBV_WC_SUCCESS;

		if (st == IBV_WC_SUCCESS && raw_tx_one(tp, rp, s, &st))
			return true; /* retried next pass */
		tp_send_cqe(tp, s, idx, st);
		tp->sq_head = tp->sq_next = idx + 1;
		work = true;
		if (st != IBV_WC_SUCCESS) {
			/* As a NIC's error CQE: the QP stops, the rest is
			 * flushed. */
			tp_error(tp, -1);
			break;
		}
	}
	return work;
}
