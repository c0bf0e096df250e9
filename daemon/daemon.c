/* SPDX-License-Identifier: MIT */
/* Setting up and tearing down the daemon's state. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "daemon/core/core.h"
#include "daemon/device/link.h"
#include "daemon/core/loop_ev.h"

/* First QPN handed out: 0 and 1 are the SMI and GSI QPs. */
#define SRD_FIRST_QPN 0x11
/* Randomized tables start with this many slots to draw from. */
#define SRD_RANDOM_SPAN 4096

static int epoll_add(int epfd, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static int tables_init(struct srd_daemon *d)
{
	/* Limits are the default device's attributes; the tables are the
	 * daemon's, as ib_core's are per device and there is one. */
	table_init(&d->pds, 1, 65536);
	table_init(&d->mrs, 1, 65536);
	table_init(&d->mws, 1, SRD_MAX_MW);
	table_init(&d->cqs, 1, 16384);
	table_init(&d->qps_by_num, SRD_FIRST_QPN, 16384);
	table_init(&d->srqs, 1, 16384);
	table_init(&d->ahs, 1, 65536);
	table_init(&d->channels, 1, 16384);
	table_init(&d->dms, 1, 4096);
	table_init(&d->xrcds, 1, 16384);
	/* Keys and QPNs a peer could guess would let it aim at memory and
	 * connections it was never told of. */
	table_randomize(&d->mrs, SRD_RANDOM_SPAN);
	table_randomize(&d->qps_by_num, SRD_RANDOM_SPAN);
	/* Windows: from every handle at once (512 KiB of slots, made at the
	 * first window), which with the tag makes 24 random bits of index. */
	table_randomize(&d->mws, SRD_MAX_MW);
	return 0;
}

static void tables_fini(struct srd_daemon *d)
{
	table_fini(&d->pds);
	table_fini(&d->mrs);
	table_fini(&d->mws);
	table_fini(&d->cqs);
	table_fini(&d->qps_by_num);
	table_fini(&d->srqs);
	table_fini(&d->ahs);
	table_fini(&d->channels);
	table_fini(&d->dms);
	table_fini(&d->xrcds);
}

static int signals_init(struct srd_daemon *d)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	d->sig_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	return d->sig_fd < 0 ? -errno : 0;
}

/* Hold the status page's robust lock for the daemon's life (ring.h). */
static int alive_lock_take(struct srd_dev_page *page)
{
	pthread_mutexattr_t a;
	int err;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	err = pthread_mutex_init(&page->alive.mutex, &a);
	pthread_mutexattr_destroy(&a);
	if (!err)
		err = pthread_mutex_lock(&page->alive.mutex);
	return -err;
}

/* Say goodbye before unmapping: the lock leaves this thread's robust
 * list, which must never point into an unmapped page. */
static void alive_lock_drop(struct srd_dev_page *page)
{
	__atomic_store_n(&page->gone, 1, __ATOMIC_RELEASE);
	if (__atomic_load_n(&page->alive.word, __ATOMIC_RELAXED))
		pthread_mutex_unlock(&page->alive.mutex);
}

int daemon_init(struct srd_daemon *d, const struct srd_options *o,
		int listen_fd)
{
	void *page;
	int err;

	memset(d, 0, sizeof(*d));
	list_head_init(&d->devices);
	list_head_init(&d->clients);
	list_head_init(&d->qps);
	list_head_init(&d->xrcds_list);
	list_head_init(&d->cq_timers);
	list_head_init(&d->users);
	d->listen_fd = listen_fd;
	d->epfd = d->doorbell_fd = d->dev_page_fd = d->sig_fd = -1;
	d->spin_ns = o->spin_us * 1000;
	d->spin_yield = o->spin_yield;
	d->idle_exit_ns = o->idle_exit_s * 1000000000ull;
	tables_init(d);
	limits_defaults(d);
	for (unsigned int i = 0; o->config && i < o->config->nlimits; i++) {
		const struct srd_config_limit *cl = &o->config->limits[i];

		if (cl->reserve)
			d->limits.fd_reserve = cl->value;
		else if (cl->user)
			d->limits.user[cl->res] = cl->value;
		else
			d->limits.client[cl->res] = cl->value;
	}
	d->doorbell_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->doorbell_fd < 0) {
		err = -errno;
		goto err;
	}
	/* Clients map the status page read-only: it says whether the engine
	 * sleeps, and nobody but the daemon may say so. */
	err = shm_create("softrdma-dev", SRD_PAGE_SIZE,
			 F_SEAL_FUTURE_WRITE | F_SEAL_SEAL, &page);
	if (err < 0)
		goto err;
	d->dev_page_fd = err;
	d->dev_page = page;
	err = alive_lock_take(d->dev_page);
	if (err)
		goto err;
	err = signals_init(d);
	if (err)
		goto err;
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->epfd < 0) {
		err = -errno;
		goto err;
	}
	if (listen_fd >= 0) {
		err = epoll_add(d->epfd, listen_fd, SRD_EV_LISTEN);
		if (err)
			goto err;
	}
	err = epoll_add(d->epfd, d->doorbell_fd, SRD_EV_DOORBELL);
	if (!err)
		err = epoll_add(d->epfd, d->sig_fd, SRD_EV_SIGNAL);
	if (err)
		goto err;
	/* Devices (link.h) once the loop can serve their netlink socket. */
	err = links_init(d, o);
	if (err)
		goto err;
	err = engine_init(d);
	if (err)
		goto err;
	d->engine_up = true;
	client_spare_fd(true);
	d->idle_since = srd_now_ns();
	return 0;
err:
	daemon_fini(d);
	return err;
}

void daemon_fini(struct srd_daemon *d)
{
	list_for_each (&d->clients, it)
		client_destroy(list_entry(it, struct srd_client, node));
	cm_fini(d);
	if (d->engine_up)
		engine_fini(d);
	d->engine_up = false;
	devices_fini(d);
	tables_fini(d);
	if (d->dev_page) {
		alive_lock_drop(d->dev_page);
		munmap(d->dev_page, SRD_PAGE_SIZE);
	}
	d->dev_page = NULL;
	if (d->dev_page_fd >= 0)
		close(d->dev_page_fd);
	if (d->doorbell_fd >= 0)
		close(d->doorbell_fd);
	if (d->sig_fd >= 0)
		close(d->sig_fd);
	if (d->epfd >= 0)
		close(d->epfd);
	d->epfd = d->doorbell_fd = d->dev_page_fd = d->sig_fd = -1;
}
