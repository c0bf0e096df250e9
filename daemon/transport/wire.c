/* SPDX-License-Identifier: MIT */
/*
 * The dispatch between the wires (see wire.h), their set-up from the
 * daemon's configuration, and the UDP wire's send path.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "daemon/core/core.h"
#include "daemon/net/icrc.h"
#include "daemon/transport/wire_mcast.h"
#include "daemon/transport/engine.h"
#include "daemon/transport/wire.h"

/* Packets taken from the UDP socket per pass. */
#define RX_BUDGET 256
#define RX_IDLE_EVERY 8
/* How long captured packets may wait in memory. */
#define CAPTURE_FLUSH_NS 100000000ull
/* Payload pieces of one packet sent straight from the MRs. */
#define PAY_IOV 8

static const uint8_t zeros[4];

/* --- configuration ------------------------------------------------------- */

static void load_fault_file(struct srd_wire *w)
{
	char err[256] = "";
	int ret = srd_faults_load_file(&w->faults, w->fault_file, err,
				       sizeof(err));

	if (ret)
		srd_log(SRD_LOG_ERR, "faults: %s; rules unchanged", err);
	else
		srd_log(SRD_LOG_INFO, "faults: %u rules (%s)", w->faults.n,
			w->fault_file);
	w->slow = w->capturing || srd_faults_active(&w->faults);
}

static void on_sighup(struct srd_daemon *d, void *arg)
{
	struct srd_wire *w = arg;
	struct signalfd_siginfo si;
	char buf[2048];

	while (read(w->sighup_fd, &si, sizeof(si)) == sizeof(si))
		;
	srd_faults_describe(&w->faults, buf, sizeof(buf));
	if (*buf)
		srd_log(SRD_LOG_INFO, "faults before reload:\n%s", buf);
	load_fault_file(w);
}

static void on_udp(struct srd_daemon *d, void *arg)
{
	struct srd_wire *w = arg;

	/* The pass that follows every wake-up of the loop reads it. */
	w->rx_skip = 0;
}

static int faults_init(struct srd_wire *w)
{
	uint64_t seed = srd_net_cfg.fault_seed;
	char err[256] = "";
	sigset_t set;

	if (!seed)
		seed = srd_now_ns() ^ ((uint64_t)getpid() << 32);
	srd_faults_init(&w->faults, seed);
	for (unsigned int i = 0; i < srd_net_cfg.nfaults; i++) {
		if (srd_faults_add(&w->faults, srd_net_cfg.faults[i], err,
				   sizeof(err))) {
			srd_log(SRD_LOG_ERR, "faults: %s", err);
			return -EINVAL;
		}
	}
	srd_faults_fix(&w->faults);
	w->fault_file = srd_net_cfg.fault_file;
	if (w->fault_file) {
		load_fault_file(w);
		/* Only a daemon with a rule file takes SIGHUP over. */
		sigemptyset(&set);
		sigaddset(&set, SIGHUP);
		if (!sigprocmask(SIG_BLOCK, &set, NULL))
			w->sighup_fd =
				signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
		if (w->sighup_fd >= 0 &&
		    loop_add_fd(w->d, w->sighup_fd, on_sighup, w)) {
			close(w->sighup_fd);
			w->sighup_fd = -1;
		}
	}
	if (srd_faults_active(&w->faults))
		srd_log(SRD_LOG_INFO,
			"faults: %u rules, seed 0x%llx (%s to repeat)",
			w->faults.n, (unsigned long long)seed,
			SRD_ENV_FAULT_SEED);
	return 0;
}

static int udp_init(struct srd_wire *w)
{
	int err;

	w->udp = calloc(1, sizeof(*w->udp));
	if (!w->udp)
		return -ENOMEM;
	err = srd_udp_open(w->udp, srd_net_cfg.udp_port);
	if (err) {
		free(w->udp);
		w->udp = NULL;
		/* Another daemon of this namespace (a test's) owns the
		 * port: this one serves its own devices only. */
		srd_log(err == -EADDRINUSE ? SRD_LOG_WARN : SRD_LOG_ERR,
			"udp: port %d: %s; no UDP wire", srd_net_cfg.udp_port,
			strerror(-err));
		return w->force_udp ? err : 0;
	}
	/* Bursts of a pass overflow a small buffer: losses, retries. */
	if (w->udp->rcvbuf && w->udp->rcvbuf < (2 << 20))
		srd_log(SRD_LOG_WARN,
			"udp: receive buffer %d bytes; raise "
			"net.core.rmem_max for fewer losses",
			w->udp->rcvbuf);
	srd_udp_mcast_setup(w->udp, w->force_udp);
	err = loop_add_fd(w->d, w->udp->rx_fd, on_udp, w);
	w->udp_in_loop = !err;
	srd_log(SRD_LOG_INFO, "udp: port %u%s%s%s", w->udp->port,
		w->udp->family == AF_INET ? " (IPv4 only)" : "",
		w->udp->gso ? ", GSO" : "", w->udp->gro ? ", GRO" : "");
	return 0;
}

int wire_init(struct srd_engine *e)
{
	struct srd_wire *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return -ENOMEM;
	w->e = e;
	w->d = e->d;
	w->sighup_fd = -1;
	list_head_init(&w->held);
	e->wire = w;
	w->force_udp = srd_net_cfg.wire == SRD_WIRE_UDP;
	w->scratch = malloc(SRD_UDP_MAX_PAYLOAD + 1);
	if (!w->scratch) {
		err = -ENOMEM;
		goto err;
	}
	if (srd_net_cfg.udp) {
		err = udp_init(w);
		if (err)
			goto err;
	}
	if (srd_net_cfg.pcap) {
		err = srd_net_capture_start(w->d, srd_net_cfg.pcap);
		if (err) {
			srd_log(SRD_LOG_ERR, "capture: %s: %s",
				srd_net_cfg.pcap, strerror(-err));
			goto err;
		}
	}
	err = faults_init(w);
	if (err)
		goto err;
	w->slow = w->capturing || srd_faults_active(&w->faults);
	return 0;

err:
	wire_fini(e);
	return err;
}

void wire_fini(struct srd_engine *e)
{
	struct srd_wire *w = e->wire;

	if (!w)
		return;
	wire_held_fini(w);
	if (w->udp) {
		srd_udp_tx_flush(w->udp);
		if (w->udp_in_loop)
			loop_del_fd(w->d, w->udp->rx_fd);
		srd_udp_close(w->udp);
		free(w->udp);
	}
	if (w->capturing)
		srd_capture_close(&w->cap);
	if (w->sighup_fd >= 0) {
		loop_del_fd(w->d, w->sighup_fd);
		close(w->sighup_fd);
	}
	srd_faults_fini(&w->faults);
	srd_net_counters_fini(w->d);
	free(w->scratch);
	free(w);
	e->wire = NULL;
}

/* --- run-time control (net.h) --------------------------------------------- */

static struct srd_wire *wire_of(struct srd_daemon *d)
{
	return d->engine ? d->engine->wire : NULL;
}

int srd_net_fault_add(struct srd_daemon *d, const char *rules, char *err,
		      size_t errlen)
{
	struct srd_wire *w = wire_of(d);
	int ret;

	if (!w)
		return -ENODEV;
	ret = srd_faults_add(&w->faults, rules, err, errlen);
	w->slow = w->capturing || srd_faults_active(&w->faults);
	return ret;
}

void srd_net_fault_clear(struct srd_daemon *d)
{
	struct srd_wire *w = wire_of(d);
	uint64_t rng;

	if (!w)
		return;
	rng = w->faults.rng;
	srd_faults_fini(&w->faults);
	srd_faults_init(&w->faults, rng);
	w->slow = w->capturing;
}

size_t srd_net_fault_show(struct srd_daemon *d, char *buf, size_t size)
{
	struct srd_wire *w = wire_of(d);

	if (!w) {
		if (size)
			*buf = 0;
		return 0;
	}
	return srd_faults_describe(&w->faults, buf, size);
}

int srd_net_capture_start(struct srd_daemon *d, const char *path)
{
	struct srd_wire *w = wire_of(d);
	int err;

	if (!w)
		return -ENODEV;
	if (w->capturing)
		return -EBUSY;
	err = srd_capture_open(&w->cap, path);
	if (err)
		return err;
	w->capturing = true;
	if (w->udp) {
		w->udp->cap = &w->cap;
		/* Forced UDP loops back: what arrives was captured when it
		 * left. */
		w->udp->capture_rx = !w->force_udp;
	}
	w->slow = true;
	srd_log(SRD_LOG_INFO, "capture: %s", path);
	return 0;
}

const struct srd_faults *srd_net_faults(struct srd_daemon *d)
{
	struct srd_wire *w = wire_of(d);

	return w ? &w->faults : NULL;
}

const struct srd_capture *srd_net_capture(struct srd_daemon *d)
{
	struct srd_wire *w = wire_of(d);

	return w && w->capturing ? &w->cap : NULL;
}

int srd_net_capture_stop(struct srd_daemon *d)
{
	struct srd_wire *w = wire_of(d);

	if (!w || !w->capturing)
		return -ENOENT;
	if (w->udp) {
		/* What is queued was captured already. */
		srd_udp_tx_flush(w->udp);
		w->udp->cap = NULL;
	}
	srd_capture_close(&w->cap);
	w->capturing = false;
	w->slow = srd_faults_active(&w->faults);
	return 0;
}

/* --- the pass ------------------------------------------------------------- */

bool wire_poll(struct srd_engine *e)
{
	struct srd_wire *w = e->wire;
	bool work = false;

	if (!w)
		return false;
	if (w->nheld)
		work |= wire_release(w, e->now);
	/* A busy loop polls the socket without epoll's help; while nothing
	 * comes, only every RX_IDLE_EVERY passes (a system call each). */
	if (w->udp && (!w->rx_skip || !--w->rx_skip)) {
		unsigned int n;

		e->defer_acks = true;
		n = srd_udp_rx(w->udp, RX_BUDGET, wire_udp_rx, w);
		e->defer_acks = false;
		engine_acks_flush(e);
		if (n) {
			work = true;
		} else {
			w->rx_skip = RX_IDLE_EVERY;
		}
	}
	return work;
}

void wire_flush(struct srd_engine *e)
{
	struct srd_wire *w = e->wire;

	if (!w)
		return;
	if (w->nheld)
		wire_release(w, e->now);
	if (w->udp && w->udp->nmsg)
		srd_udp_tx_flush(w->udp);
	if (w->capturing)
		srd_capture_flush(&w->cap, e->now, CAPTURE_FLUSH_NS);
}

uint64_t wire_next_deadline(struct srd_engine *e)
{
	struct srd_wire *w = e ? e->wire : NULL;
	uint64_t t = UINT64_MAX;

	if (!w)
		return t;
	if (w->nheld) {
		struct wire_frame *f =
			list_entry(w->held.n.next, struct wire_frame, node);

		t = f->due;
	}
	if (w->capturing && w->cap.dirty &&
	    w->cap.last_flush + CAPTURE_FLUSH_NS < t)
		t = w->cap.last_flush + CAPTURE_FLUSH_NS;
	return t;
}

/* --- sending -------------------------------------------------------------- */

static struct srd_net_counters *dev_cnt(struct srd_wire *w,
					const struct srd_device *dev)
{
	return srd_net_dev_counters(w->d, dev);
}

/* Whether the kernel can carry a packet from m->src to m->dst of len
 * bytes (BTH ... ICRC) out of device dev. */
static bool udp_sendable(struct srd_wire *w, const struct srd_device *dev,
			 const struct srd_udp_meta *m, size_t len)
{
	bool v4 = srd_addr_v4(&m->dst);
	size_t ip = v4 ? 20 : 40;

	if (v4 != srd_addr_v4(&m->src) || IN6_IS_ADDR_UNSPECIFIED(&m->src))
		return false;
	if (!v4 && w->udp->family != AF_INET6)
		return false;
	if (len > SRD_UDP_MAX_PAYLOAD ||
	    (dev->port.netdev_mtu && ip + 8 + len > dev->port.netdev_mtu))
		return false;
	return true;
}

/* A packet (npkts 1) onto the UDP queue, its payload straight from the
 * MRs where the daemon maps them. */
static void udp_queue_pkt(struct srd_wire *w, const struct srd_device *dev,
			  uint32_t qpn, const struct srd_pkt *pkt,
			  struct srd_net_counters *c)
{
	struct srd_udp *u = w->udp;
	struct srd_udp_meta m;
	struct iovec iov[PAY_IOV + 2];
	unsigned int hl = srd_pkt_hdr_len(pkt), pad = srd_pkt_pad(pkt->paylen);
	size_t len = hl + pkt->paylen + pad + SRD_ICRC_SIZE;
	struct srd_dma pay = pkt->pay;
	int n = 0, k;
	uint8_t *hdr;

	wire_pkt_meta(w, dev, qpn, pkt, &m);
	if (!udp_sendable(w, dev, &m, len) ||
	    srd_udp_tx_reserve(u, hl + pkt->paylen, PAY_IOV + 2)) {
		c->tx_drops++;
		return;
	}
	hdr = srd_udp_tx_alloc(u, hl);
	srd_pkt_hdr_write(pkt, hdr, hl);
	iov[n].iov_base = hdr;
	iov[n++].iov_len = hl;
	if (pkt->paylen) {
		/* UC and UD complete once queued: their buffers may be
		 * reused before the flush, so they are copied too. */
		k = pay.kind == SRD_DMA_BUF ||
				    srd_op_transport(pkt->opcode) != ROCE_TR_RC
			    ? -ENOTSUP
			    : dma_map_iov(w->d, &pay, pkt->paylen, iov + n,
					  PAY_IOV);
		if (k == -ENOTSUP || k == -E2BIG) {
			/* Inline data (its slot may be reused before the
			 * flush) or memory reached through the client: a
			 * copy of our own. */
			struct srd_dma dst;
			uint8_t *b = srd_udp_tx_alloc(u, pkt->paylen);

			pay = pkt->pay;
			dma_init_buf(&dst, b, pkt->paylen);
			k = dma_copy(w->d, &dst, &pay, pkt->paylen) ? -EFAULT
								    : 1;
			iov[n].iov_base = b;
			iov[n].iov_len = pkt->paylen;
		}
		if (k < 0) {
			/* The memory went away: lost, as on a network. */
			c->tx_drops++;
			return;
		}
		n += k;
	}
	if (pad) {
		iov[n].iov_base = (void *)zeros;
		iov[n++].iov_len = pad;
	}
	srd_udp_tx_queue(u, qpn, &m, iov, n, len, false, c);
}

/* The UDP wire's tx point: faults, then the queue. */
static void udp_send(struct srd_wire *w, const struct srd_device *dev,
		     uint32_t qpn, const struct srd_pkt *pkt)
{
	struct srd_net_counters *c = dev_cnt(w, dev);
	struct srd_fault_verdict v = { 0 };

	w->seq++;
	c->tx_packets++;
	c->tx_udp_packets++;
	c->tx_bytes += wire_pkt_bytes(pkt);
	if (!w->udp) {
		c->tx_drops++;
		return;
	}
	if (w->slow &&
	    srd_faults_may_match(&w->faults, SRD_FAULT_TX, dev->name))
		srd_faults_judge(&w->faults, SRD_FAULT_TX, dev->name, qpn,
				 pkt->opcode, &v);
	if (v.actions & (1u << SRD_FAULT_DROP)) {
		c->fault_drops++;
		return;
	}
	if (v.actions) {
		struct wire_frame *f = wire_frame_of_pkt(w, dev, qpn, pkt);

		c->fault_other++;
		if (f) {
			f->cnt = c;
			wire_frame_apply(w, f, &v, WIRE_NEXT_UDP);
		} else {
			c->tx_drops++;
		}
		return;
	}
	udp_queue_pkt(w, dev, qpn, pkt, c);
}

/* The in-memory wire with capture or faults on. */
static void mem_slow(struct srd_wire *w, const struct srd_device *dev,
		     uint32_t qpn, struct srd_pkt *pkt)
{
	struct srd_net_counters *c = dev_cnt(w, dev);
	bool tx = srd_faults_may_match(&w->faults, SRD_FAULT_TX, dev->name);
	bool rx = srd_faults_may_match(&w->faults, SRD_FAULT_RX,
				       pkt->dst_dev->name);
	struct srd_pkt part;

	w->seq += pkt->npkts;
	c->tx_packets += pkt->npkts;
	c->tx_bytes += wire_pkt_bytes(pkt);
	if (!tx && !rx) {
		/* Seen whole: captured packet by packet, delivered as is. */
		for (uint32_t i = 0; w->capturing && i < pkt->npkts; i++) {
			if (pkt->npkts == 1) {
				wire_capture_pkt(w, dev, qpn, pkt);
			} else {
				wire_train_part(pkt, i, &part);
				wire_capture_pkt(w, dev, qpn, &part);
			}
		}
		wire_mem_arrive(w, pkt);
		return;
	}
	for (uint32_t i = 0; i < pkt->npkts; i++) {
		struct srd_pkt *p = pkt;
		struct srd_fault_verdict v = { 0 };

		if (pkt->npkts > 1) {
			wire_train_part(pkt, i, &part);
			p = &part;
		}
		if (tx)
			srd_faults_judge(&w->faults, SRD_FAULT_TX, dev->name,
					 qpn, p->opcode, &v);
		if (v.actions & (1u << SRD_FAULT_DROP)) {
			c->fault_drops++;
			continue;
		}
		if (v.actions) {
			struct wire_frame *f =
				wire_frame_of_pkt(w, dev, qpn, p);

			c->fault_other++;
			if (f) {
				f->cnt = c;
				wire_frame_apply(w, f, &v, WIRE_NEXT_ARRIVE);
			}
			continue;
		}
		if (w->capturing)
			wire_capture_pkt(w, dev, qpn, p);
		wire_mem_arrive(w, p);
	}
}

void wire_send(struct srd_qp_transport *src, struct srd_pkt *pkt)
{
	struct srd_engine *e = src->eng;
	struct srd_wire *w = e->wire;
	struct srd_device *dev = src->qp->dev;

	/* Multicast: the local members first, then maybe UDP below. */
	if (!pkt->dst_dev && wire_pkt_is_mcast(pkt) &&
	    wire_mcast_send(src, pkt))
		return;
	if (pkt->dst_dev && (!w || !w->slow)) {
		struct srd_net_counters *c = NULL;
		uint32_t bytes = wire_pkt_bytes(pkt);

		if (w) {
			c = dev_cnt(w, dev);
			c->tx_packets += pkt->npkts;
			c->tx_bytes += bytes;
			c = dev_cnt(w, pkt->dst_dev);
			c->rx_packets += pkt->npkts;
			c->rx_bytes += bytes;
		}
		if (wire_deliver_counted(e, pkt, c))
			e->wire_drops++;
		return;
	}
	if (!w) {
		e->wire_drops++;
		return;
	}
	if (pkt->dst_dev) {
		mem_slow(w, dev, src->qp->qpn, pkt);
		return;
	}
	/* Trains never leave for UDP (tp_route_local() says the path is
	 * not local), but should one come, it goes packet by packet. */
	if (pkt->npkts > 1) {
		struct srd_pkt part;

		for (uint32_t i = 0; i < pkt->npkts; i++) {
			wire_train_part(pkt, i, &part);
			udp_send(w, dev, src->qp->qpn, &part);
		}
	} else {
		udp_send(w, dev, src->qp->qpn, pkt);
	}
	/* Queued payload points into MRs: outside a pass nothing says they
	 * stay until the pass's end, so it leaves now. */
	if (!e->in_progress && w->udp && w->udp->nmsg)
		srd_udp_tx_flush(w->udp);
}
