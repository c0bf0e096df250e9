/* SPDX-License-Identifier: MIT */
/*
 * Per-device packet counters.  They live here rather than in struct
 * srd_device so the wires own them; a device is recognized by its address
 * and index, and a slot whose device went away is taken over by the next
 * device that needs one (its counters start from zero).
 */
#include <stdlib.h>
#include <string.h>

#include "daemon/core/core.h"
#include "daemon/net/net.h"

#define C(name)                                                \
	{                                                      \
#name, offsetof(struct srd_net_counters, name) \
	}
const struct srd_net_counter_desc srd_net_counter_descs[] = {
	C(tx_packets),	   C(tx_bytes),	      C(rx_packets), C(rx_bytes),
	C(tx_udp_packets), C(rx_udp_packets), C(tx_drops),   C(rx_icrc_errors),
	C(rx_malformed),   C(rx_unknown_qp),  C(rx_drops),   C(rx_no_device),
	C(fault_drops),	   C(fault_other),    C(captured),   { NULL, 0 },
};
#undef C

struct slot {
	const struct srd_daemon *d;
	const struct srd_device *dev; /* NULL: the daemon-wide slot */
	uint32_t index;
	char name[64];
	struct srd_net_counters c;
};

/* Slots never move: the wires keep pointers to counters across a pass. */
static struct slot **slots;
static unsigned int nslots;
static struct slot *last; /* the last slot found: most packets repeat it */
static struct srd_net_counters overflow;

static bool slot_is(const struct slot *s, const struct srd_daemon *d,
		    const struct srd_device *dev)
{
	if (s->d != d || s->dev != dev)
		return false;
	return !dev || (s->index == dev->index && !strcmp(s->name, dev->name));
}

static struct slot *find(const struct srd_daemon *d,
			 const struct srd_device *dev)
{
	if (last && slot_is(last, d, dev))
		return last;
	for (unsigned int i = 0; i < nslots; i++)
		if (slot_is(slots[i], d, dev))
			return last = slots[i];
	return NULL;
}

static bool device_present(struct srd_daemon *d, const struct srd_device *dev)
{
	list_for_each (&d->devices, it)
		if (list_entry(it, struct srd_device, node) == dev)
			return true;
	return false;
}

static void slot_init(struct slot *s, struct srd_daemon *d,
		      const struct srd_device *dev)
{
	memset(s, 0, sizeof(*s));
	s->d = d;
	s->dev = dev;
	if (dev) {
		s->index = dev->index;
		memcpy(s->name, dev->name, sizeof(s->name));
		s->name[sizeof(s->name) - 1] = 0;
	}
}

struct srd_net_counters *srd_net_dev_counters(struct srd_daemon *d,
					      const struct srd_device *dev)
{
	struct slot *s = find(d, dev), **n;

	if (s)
		return &s->c;
	/* Reuse the slot of a device that is gone. */
	for (unsigned int i = 0; i < nslots; i++) {
		s = slots[i];
		if (!s->d ||
		    (s->d == d && s->dev &&
		     (!device_present(d, s->dev) || !slot_is(s, d, s->dev)))) {
			slot_init(s, d, dev);
			return &(last = s)->c;
		}
	}
	s = malloc(sizeof(*s));
	n = s ? realloc(slots, (nslots + 1) * sizeof(*slots)) : NULL;
	if (!n) {
		free(s);
		return &overflow;
	}
	slots = n;
	slots[nslots++] = s;
	slot_init(s, d, dev);
	last = s;
	return &s->c;
}

void srd_net_counters_read(struct srd_daemon *d, const struct srd_device *dev,
			   struct srd_net_counters *out)
{
	struct slot *s = find(d, dev);

	if (s)
		*out = s->c;
	else
		memset(out, 0, sizeof(*out));
}

void srd_net_counters_fini(struct srd_daemon *d)
{
	for (unsigned int i = 0; i < nslots; i++)
		if (slots[i]->d == d)
			slots[i]->d = NULL;
	last = NULL;
}
