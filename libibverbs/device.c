/* SPDX-License-Identifier: MIT */
/*
 * The device list: what the daemon reports, kept as ibv_device objects
 * that stay valid while listed or referenced (a list or an open context).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/proto.h"
#include "libibverbs/ibverbs.h"

static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct list_head devices = { { &devices.n, &devices.n } };

void srd_device_put(struct srd_udevice *dev)
{
	if (atomic_fetch_sub(&dev->refcnt, 1) == 1)
		free(dev);
}

static struct srd_udevice *device_new(const struct srd_device_info *di)
{
	struct srd_udevice *dev = calloc(1, sizeof(*dev));
	struct ibv_device *d;

	if (!dev)
		return NULL;
	d = &dev->ibdev;
	d->node_type = (enum ibv_node_type)di->node_type;
	d->transport_type = (enum ibv_transport_type)di->transport;
	snprintf(d->name, sizeof(d->name), "%.*s", (int)sizeof(d->name) - 1,
		 di->name);
	snprintf(d->dev_name, sizeof(d->dev_name), "uverbs%u", di->index);
	snprintf(d->dev_path, sizeof(d->dev_path),
		 "/sys/class/infiniband_verbs/uverbs%u", di->index);
	snprintf(d->ibdev_path, sizeof(d->ibdev_path),
		 "/sys/class/infiniband/%s", d->name);
	snprintf(dev->netdev, sizeof(dev->netdev), "%.*s",
		 (int)sizeof(dev->netdev) - 1, di->netdev);
	dev->index = di->index;
	dev->guid = di->node_guid;
	atomic_init(&dev->refcnt, 1); /* the list's */
	dev->listed = true;
	return dev;
}

static struct srd_udevice *device_find(const struct srd_device_info *di)
{
	list_for_each (&devices, it) {
		struct srd_udevice *dev =
			list_entry(it, struct srd_udevice, node);

		if (dev->index == di->index &&
		    !strncmp(dev->ibdev.name, di->name, sizeof(di->name)) &&
		    dev->guid == di->node_guid)
			return dev;
	}
	return NULL;
}

/* Ask the daemon and bring the global list up to date.  0 or -errno. */
static int refresh_devices(void)
{
	union {
		struct srd_list_devices_rep rep;
		uint8_t b[SRD_MSG_MAX];
	} u;
	struct srd_cmd_args a = {
		.op = SRD_CMD_LIST_DEVICES,
		.rep = &u,
		.rep_len = sizeof(u),
		.rep_var = true,
	};
	struct srd_conn c;
	uint32_t count;
	int ret;

	ret = srd_conn_open(&c);
	if (ret)
		return ret;
	ret = srd_cmd(&c, &a);
	srd_conn_close(&c);
	if (ret)
		return ret;
	if (a.rep_got < sizeof(u.rep))
		return -EPROTO;
	count = u.rep.count;
	if (count > (a.rep_got - sizeof(u.rep)) / sizeof(u.rep.dev[0]))
		return -EPROTO;

	list_for_each (&devices, it)
		list_entry(it, struct srd_udevice, node)->listed = false;
	for (uint32_t i = 0; i < count; i++) {
		struct srd_udevice *dev = device_find(&u.rep.dev[i]);

		if (dev) {
			dev->listed = true;
			continue;
		}
		dev = device_new(&u.rep.dev[i]);
		if (!dev)
			return -ENOMEM;
		list_add_tail(&devices, &dev->node);
	}
	list_for_each (&devices, it) {
		struct srd_udevice *dev =
			list_entry(it, struct srd_udevice, node);

		if (!dev->listed) {
			list_del(&dev->node);
			srd_device_put(dev);
		}
	}
	return 0;
}

LIB_EXPORT struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct ibv_device **list;
	int n = 0, ret;

	pthread_mutex_lock(&dev_lock);
	ret = refresh_devices();
	list_for_each (&devices, it)
		n++;
	list = calloc((size_t)n + 1, sizeof(*list));
	if (!list) {
		pthread_mutex_unlock(&dev_lock);
		errno = ENOMEM;
		return NULL;
	}
	n = 0;
	if (!ret) {
		list_for_each (&devices, it) {
			struct srd_udevice *dev =
				list_entry(it, struct srd_udevice, node);

			atomic_fetch_add(&dev->refcnt, 1);
			list[n++] = &dev->ibdev;
		}
	}
	pthread_mutex_unlock(&dev_lock);
	if (num_devices)
		*num_devices = n;
	/* No daemon could be reached: an empty list, and errno says why. */
	if (ret)
		errno = -ret;
	return list;
}

struct srd_udevice *srd_device_by_index(uint32_t index)
{
	struct srd_udevice *found = NULL;

	pthread_mutex_lock(&dev_lock);
	if (!refresh_devices()) {
		list_for_each (&devices, it) {
			struct srd_udevice *dev =
				list_entry(it, struct srd_udevice, node);

			if (dev->index == index) {
				atomic_fetch_add(&dev->refcnt, 1);
				found = dev;
				break;
			}
		}
	}
	pthread_mutex_unlock(&dev_lock);
	return found;
}

LIB_EXPORT void ibv_free_device_list(struct ibv_device **list)
{
	if (!list)
		return;
	for (struct ibv_device **d = list; *d; d++)
		srd_device_put(to_dev(*d));
	free(list);
}

LIB_EXPORT const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

LIB_EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
	return to_dev(device)->guid;
}

LIB_EXPORT int ibv_get_device_index(struct ibv_device *device)
{
	return (int)to_dev(device)->index;
}

/* Drop the list's references when the library is unloaded. */
__attribute__((destructor)) static void devices_fini(void)
{
	pthread_mutex_lock(&dev_lock);
	list_for_each (&devices, it) {
		struct srd_udevice *dev =
			list_entry(it, struct srd_udevice, node);

		list_del(&dev->node);
		srd_device_put(dev);
	}
	pthread_mutex_unlock(&dev_lock);
}
