/* SPDX-License-Identifier: MIT */
/*
 * Event channels and the commands that travel on them.  A channel is a
 * command connection to softrdmad made with the verbs library's own code
 * (it starts the daemon when none answers); CM_OPEN turns it into an
 * event channel and hands back the fd the application polls.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "librdmacm/cma.h"

/* Destroyed channels are kept a while: an event thread between two
 * rdma_get_cm_event calls (rping's, when main destroys the channel after
 * the last ack) then finds it marked closing, and waits for good instead
 * of reading freed memory and a closed fd. */
#define CHANNEL_GRAVE_SLOTS 64

static pthread_mutex_t grave_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cma_channel *grave[CHANNEL_GRAVE_SLOTS];
static unsigned int grave_next;

static void bury(struct cma_channel *c)
{
	struct cma_channel *old;

	pthread_mutex_lock(&grave_lock);
	old = grave[grave_next];
	grave[grave_next] = c;
	grave_next = (grave_next + 1) % CHANNEL_GRAVE_SLOTS;
	pthread_mutex_unlock(&grave_lock);
	free(old);
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_err;
static struct srd_htab ids; /* cma_id_priv by daemon handle */

static void do_init(void)
{
	struct ibv_device **list;
	int n;

	/* rdma-core needs a device to work at all: so do we, and listing
	 * them makes sure the daemon runs. */
	list = ibv_get_device_list(&n);
	if (!list) {
		init_err = errno ? errno : ENODEV;
		return;
	}
	ibv_free_device_list(list);
	if (!n) {
		init_err = ENODEV;
		return;
	}
	if (srd_htab_init(&ids))
		init_err = ENOMEM;
}

int cma_init(void)
{
	pthread_once(&init_once, do_init);
	return init_err ? cma_err(init_err) : 0;
}

struct cma_id_priv *cma_lookup(uint32_t handle)
{
	struct srd_hnode *n;

	pthread_mutex_lock(&ids.lock);
	n = srd_htab_find(&ids, handle);
	pthread_mutex_unlock(&ids.lock);
	return n ? container_of(n, struct cma_id_priv, hnode) : NULL;
}

void cma_insert(struct cma_id_priv *p)
{
	p->hnode.key = p->handle;
	pthread_mutex_lock(&ids.lock);
	srd_htab_add(&ids, &p->hnode);
	pthread_mutex_unlock(&ids.lock);
}

void cma_remove(struct cma_id_priv *p)
{
	pthread_mutex_lock(&ids.lock);
	srd_htab_del(&ids, &p->hnode);
	pthread_mutex_unlock(&ids.lock);
}

int cma_cmd(struct rdma_event_channel *ch, uint32_t op, const void *req,
	    size_t req_len, void *rep, size_t rep_len)
{
	struct srd_cmd_args a = {
		.op = op,
		.req = req,
		.req_len = req_len,
		.rep = rep,
		.rep_len = rep ? rep_len : 0,
	};

	return srd_cmd(&cma_chan(ch)->conn, &a);
}

int cma_id_cmd(struct cma_id_priv *p, uint32_t op, const void *req,
	       size_t req_len, void *rep, size_t rep_len)
{
	return cma_cmd(p->id.channel, op, req, req_len, rep, rep_len);
}

LIB_EXPORT struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct cma_channel *c;
	struct srd_cmd_args a = { .op = SRD_CMD_CM_OPEN, .max_rfds = 1 };
	int fd = -1, err;

	if (cma_init())
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	err = srd_conn_open(&c->conn);
	if (err)
		goto err_free;
	a.rfds = &fd;
	err = srd_cmd(&c->conn, &a);
	if (!err && a.nrfds != 1)
		err = -EPROTO;
	if (err)
		goto err_close;
	c->ch.fd = fd;
	return &c->ch;

err_close:
	srd_conn_close(&c->conn);
err_free:
	free(c);
	errno = -err;
	return NULL;
}

LIB_EXPORT void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct cma_channel *c;

	if (!channel)
		return;
	c = cma_chan(channel);
	c->closing = true;
	/* The daemon drops what the channel still had; a waiter's read
	 * then sees the end of its fd, and it waits for good.  Its fd stays
	 * open (rdma-core's blocked reader keeps the file too), so its
	 * number is not handed to another file under it.  The memory stays
	 * the waiters' for good, or anybody's for a while. */
	srd_conn_close(&c->conn);
	if (c->waiters)
		return;
	close(c->ch.fd);
	bury(c);
}
