/* SPDX-License-Identifier: MIT */
/*
 * The wires set up from the daemon's configuration (srd_net_cfg): the UDP
 * socket, the capture, the fault rules and their file, reloaded on SIGHUP.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "daemon/core/core.h"
#include "daemon/transport/engine.h"
#include "daemon/transport/wire.h"
#include "daemon/transport/wire_ctl.h"
#include "daemon/transport/wire_mcast.h"

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
