/* SPDX-License-Identifier: MIT */
/* The wires' run-time control, for the admin commands (wire_ctl.h). */
#include <errno.h>

#include "daemon/core/core.h"
#include "daemon/transport/engine.h"
#include "daemon/transport/wire.h"
#include "daemon/transport/wire_ctl.h"

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
