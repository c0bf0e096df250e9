/* SPDX-License-Identifier: MIT */
/*
 * rpoll / rselect over rsockets and ordinary descriptors together.  An
 * rsocket's readiness is computed from its CQ and state; to sleep, poll()
 * watches the fds that change when it might: a connected rsocket's CQ
 * channel and CM channel, an opening or listening one's CM channel.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "librdmacm/cma.h"
#include "librdmacm/rs.h"

#define RS_POLL_WAKE_MS 500 /* sleep no longer: another thread may act */

static bool rs_poll_all(struct rsocket *rs)
{
	(void)rs;
	return true;
}

static bool rs_is_cq_armed(struct rsocket *rs)
{
	return rs->cq_armed;
}

static bool fd_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

short rs_poll_rs(struct rsocket *rs, short events, bool nonblock,
		 rs_test_fn test)
{
	short revents = 0;

	if (rs->type == SOCK_DGRAM)
		return ds_poll_rs(rs, events);
	if ((rs->state & rs_opening) && fd_readable(rs->cm_id->channel->fd)) {
		if (rs_do_connect(rs) && errno == EINPROGRESS)
			errno = 0;
	}
	if (rs->cm_id->qp &&
	    (rs->state & (rs_connected | rs_disconnected | rs_error))) {
		rs_process_cq(rs, nonblock, test);
		if ((events & POLLIN) && rs_conn_have_rdata(rs))
			revents |= POLLIN;
		if ((events & POLLOUT) && rs_can_send(rs))
			revents |= POLLOUT;
		/* Hang-up only once the data queued before it is read, as
		 * TCP reports it: readers that treat POLLHUP as the end
		 * would lose the tail of the stream. */
		if (rs->state & rs_error)
			revents |= POLLERR;
		else if (!(rs->state & rs_connected) && !rs_have_rdata(rs))
			revents |= POLLHUP;
		return revents;
	}
	if (rs->state == rs_listening) {
		if ((events & POLLIN) && fd_readable(rs->cm_id->channel->fd))
			revents |= POLLIN;
		return revents;
	}
	if (rs->state == rs_connect_error)
		revents = (short)((events & (POLLIN | POLLOUT)) | POLLERR);
	return revents;
}

static int rs_poll_check(struct pollfd *fds, nfds_t nfds)
{
	int cnt = 0;

	for (nfds_t i = 0; i < nfds; i++) {
		struct rsocket *rs = rs_lookup(fds[i].fd);

		if (rs)
			fds[i].revents = rs_poll_rs(rs, fds[i].events, true,
						    rs_poll_all);
		else
			poll(&fds[i], 1, 0);
		if (fds[i].revents)
			cnt++;
	}
	return cnt;
}

/* Arm every rsocket and fill the fds to sleep on; 1 if one is ready. */
static int rs_poll_arm(struct pollfd *rfds, struct pollfd *fds, nfds_t nfds)
{
	for (nfds_t i = 0; i < nfds; i++) {
		struct rsocket *rs = rs_lookup(fds[i].fd);
		struct pollfd *p = &rfds[2 * i];

		p[0].revents = p[1].revents = 0;
		p[1].fd = -1;
		p[0].events = p[1].events = POLLIN;
		if (!rs) {
			p[0].fd = fds[i].fd;
			p[0].events = fds[i].events;
			continue;
		}
		fds[i].revents =
			rs_poll_rs(rs, fds[i].events, false, rs_is_cq_armed);
		if (fds[i].revents)
			return 1;
		if (rs->type == SOCK_DGRAM) {
			p[0].fd = ds_poll_arm(rs);
			/* Armed: look once more, then sleep. */
			fds[i].revents = ds_poll_rs(rs, fds[i].events);
			if (fds[i].revents)
				return 1;
		} else if (rs->cm_id->qp && rs->state >= rs_connected) {
			p[0].fd = rs->cm_id->recv_cq_channel->fd;
			p[1].fd = rs->cm_id->channel->fd;
		} else {
			p[0].fd = rs->cm_id->channel->fd;
		}
	}
	return 0;
}

static int rs_poll_events(struct pollfd *rfds, struct pollfd *fds, nfds_t nfds)
{
	int cnt = 0;

	for (nfds_t i = 0; i < nfds; i++) {
		struct rsocket *rs = rs_lookup(fds[i].fd);
		struct pollfd *p = &rfds[2 * i];

		if (!rs) {
			fds[i].revents = p[0].revents;
		} else if (rs->type == SOCK_DGRAM) {
			if (p[0].revents)
				ds_poll_wake(rs);
			fds[i].revents = ds_poll_rs(rs, fds[i].events);
		} else {
			if (p[0].revents && rs->cm_id->qp &&
			    rs->state >= rs_connected) {
				pthread_mutex_lock(&rs->cq_wait_lock);
				rs_get_cq_event(rs);
				pthread_mutex_unlock(&rs->cq_wait_lock);
			}
			if (p[1].revents) {
				pthread_mutex_lock(&rs->cq_lock);
				rs_check_cm(rs);
				pthread_mutex_unlock(&rs->cq_lock);
			}
			fds[i].revents = rs_poll_rs(rs, fds[i].events, true,
						    rs_poll_all);
		}
		if (fds[i].revents)
			cnt++;
	}
	return cnt;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static bool any_rsocket(struct pollfd *fds, nfds_t nfds)
{
	for (nfds_t i = 0; i < nfds; i++)
		if (rs_lookup(fds[i].fd))
			return true;
	return false;
}

LIB_EXPORT int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	int64_t deadline = timeout > 0 ? now_ms() + timeout : 0;
	uint64_t start = now_us();
	struct pollfd *rfds;
	int ret;

	/* Ordinary descriptors only: what poll does. */
	if (!any_rsocket(fds, nfds))
		return poll(fds, nfds, timeout);
	do {
		ret = rs_poll_check(fds, nfds);
		if (ret || !timeout)
			return ret;
	} while (now_us() - start <= RS_POLL_SPIN_US);

	rfds = calloc(2 * nfds, sizeof(*rfds));
	if (!rfds)
		return cma_err(ENOMEM);
	do {
		int sleep_ms = RS_POLL_WAKE_MS;

		ret = rs_poll_arm(rfds, fds, nfds);
		if (ret)
			break;
		if (timeout > 0) {
			int64_t left = deadline - now_ms();

			if (left <= 0)
				break;
			if (left < sleep_ms)
				sleep_ms = (int)left;
		}
		ret = poll(rfds, 2 * nfds, sleep_ms);
		if (ret < 0)
			break;
		ret = rs_poll_events(rfds, fds, nfds);
	} while (!ret);
	free(rfds);
	return ret;
}

static struct pollfd *select_to_poll(int nfds, fd_set *rd, fd_set *wr,
				     fd_set *ex, nfds_t *n)
{
	struct pollfd *p = calloc(nfds > 0 ? (size_t)nfds : 1, sizeof(*p));

	*n = 0;
	if (!p)
		return NULL;
	for (int fd = 0; fd < nfds; fd++) {
		short ev = 0;

		if (rd && FD_ISSET(fd, rd))
			ev |= POLLIN;
		if (wr && FD_ISSET(fd, wr))
			ev |= POLLOUT;
		if (ex && FD_ISSET(fd, ex))
			ev |= POLLPRI;
		if (!ev)
			continue;
		p[*n].fd = fd;
		p[*n].events = ev;
		(*n)++;
	}
	return p;
}

static int poll_to_select(struct pollfd *p, nfds_t n, fd_set *rd, fd_set *wr,
			  fd_set *ex)
{
	int cnt = 0;

	if (rd)
		FD_ZERO(rd);
	if (wr)
		FD_ZERO(wr);
	if (ex)
		FD_ZERO(ex);
	for (nfds_t i = 0; i < n; i++) {
		short r = p[i].revents;

		if (rd && (r & (POLLIN | POLLHUP | POLLERR))) {
			FD_SET(p[i].fd, rd);
			cnt++;
		}
		if (wr && (r & (POLLOUT | POLLERR))) {
			FD_SET(p[i].fd, wr);
			cnt++;
		}
		if (ex && (r & POLLPRI)) {
			FD_SET(p[i].fd, ex);
			cnt++;
		}
	}
	return cnt;
}

LIB_EXPORT int rselect(int nfds, fd_set *readfds, fd_set *writefds,
		       fd_set *exceptfds, struct timeval *timeout)
{
	struct pollfd *p;
	nfds_t n;
	int ret, ms = -1;

	if (timeout)
		ms = (int)(timeout->tv_sec * 1000 + timeout->tv_usec / 1000);
	p = select_to_poll(nfds, readfds, writefds, exceptfds, &n);
	if (!p)
		return cma_err(ENOMEM);
	ret = rpoll(p, n, ms);
	if (ret >= 0)
		ret = poll_to_select(p, n, readfds, writefds, exceptfds);
	free(p);
	return ret;
}
