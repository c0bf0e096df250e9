/* SPDX-License-Identifier: MIT */
/*
 * Devices: one opened verbs context per device per process, found by the
 * name the daemon gives for an id's device, as rdma-core matches the
 * kernel's node GUID to its device list.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "librdmacm/cma.h"

#define CMA_MAX_DEVICES SRD_MAX_DEVICES

static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cma_device devs[CMA_MAX_DEVICES];
static int ndevs;
/* The lists our devices came from: contexts refer to their devices. */
static struct ibv_device **lists[CMA_MAX_DEVICES];
static int nlists;

/* Take in devices the daemon has gained since the last look.  Called
 * with dev_lock held. */
static void dev_scan(void)
{
	struct ibv_device **list;
	int n, added = 0;

	list = ibv_get_device_list(&n);
	if (!list)
		return;
	for (int i = 0; i < n && ndevs < CMA_MAX_DEVICES; i++) {
		const char *name = ibv_get_device_name(list[i]);
		bool known = false;

		for (int j = 0; j < ndevs; j++)
			known |= !strcmp(devs[j].name, name);
		if (known || strlen(name) >= sizeof(devs[0].name))
			continue;
		snprintf(devs[ndevs].name, sizeof(devs[0].name), "%s", name);
		devs[ndevs].dev = list[i];
		ndevs++;
		added++;
	}
	if (added && nlists < CMA_MAX_DEVICES)
		lists[nlists++] = list;
	else
		ibv_free_device_list(list);
}

static int dev_open(struct cma_device *d)
{
	struct ibv_device_attr attr;

	if (d->verbs)
		return 0;
	d->verbs = ibv_open_device(d->dev);
	if (!d->verbs)
		return -1;
	if (ibv_query_device(d->verbs, &attr)) {
		attr.max_qp_init_rd_atom = 1;
		attr.max_qp_rd_atom = 1;
	}
	d->max_initiator_depth = attr.max_qp_init_rd_atom > 255
					 ? 255
					 : (uint8_t)attr.max_qp_init_rd_atom;
	d->max_responder_resources =
		attr.max_qp_rd_atom > 255 ? 255 : (uint8_t)attr.max_qp_rd_atom;
	return 0;
}

struct cma_device *cma_dev_get(const char *name)
{
	struct cma_device *d = NULL;

	pthread_mutex_lock(&dev_lock);
	for (int pass = 0; pass < 2 && !d; pass++) {
		if (pass)
			dev_scan();
		for (int i = 0; i < ndevs; i++)
			if (!strcmp(devs[i].name, name))
				d = &devs[i];
	}
	if (!d)
		errno = ENODEV;
	else if (dev_open(d))
		d = NULL;
	pthread_mutex_unlock(&dev_lock);
	return d;
}

struct ibv_pd *cma_dev_pd(struct cma_device *d)
{
	pthread_mutex_lock(&dev_lock);
	if (!d->pd)
		d->pd = ibv_alloc_pd(d->verbs);
	pthread_mutex_unlock(&dev_lock);
	return d->pd;
}

LIB_EXPORT struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **list;
	int n = 0;

	if (cma_init())
		return NULL;
	pthread_mutex_lock(&dev_lock);
	dev_scan();
	list = calloc(ndevs + 1, sizeof(*list));
	if (!list) {
		pthread_mutex_unlock(&dev_lock);
		errno = ENOMEM;
		return NULL;
	}
	for (int i = 0; i < ndevs; i++)
		if (!dev_open(&devs[i]))
			list[n++] = devs[i].verbs;
	pthread_mutex_unlock(&dev_lock);
	if (num_devices)
		*num_devices = n;
	return list;
}

LIB_EXPORT void rdma_free_devices(struct ibv_context **list)
{
	/* The contexts stay open: ids share them for the process's life. */
	free(list);
}
