/* SPDX-License-Identifier: MIT */
/*
 * cq_push(): owner bits per lap, overrun (-ENOSPC, CQ_ERR once), arming
 * (NEXT, SOLICITED, errors) with one completion event per arm, the CQE
 * trace, and RESIZE_CQ carrying unpolled CQEs over.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/dump.h"
#include "tests/unit/t_core.h"

static struct srd_cqe cqe_n(uint64_t n)
{
	struct srd_cqe e = { 0 };

	e.wr_id = n;
	e.byte_len = n * 3;
	e.qp_num = 0x11;
	e.status = IBV_WC_SUCCESS;
	e.opcode = IBV_WC_RECV;
	e.owner = 0x55; /* cq_push sets it */
	return e;
}

/* Channel events waiting: count them, check they name the CQ. */
static int events(int fd, uint64_t user_handle)
{
	struct srd_comp_event ev;
	int n = 0;

	while (read(fd, &ev, sizeof(ev)) == sizeof(ev)) {
		T_EQ(ev.cq_user_handle, user_handle);
		n++;
	}
	return n;
}

static void laps(struct t_core *t, struct srd_comp_channel *ch, int chfd)
{
	struct srd_async_event aev;
	struct srd_cq *cq;
	struct srd_cqe e;
	int memfd;

	T_EQ(cq_create(t->c, 3, ch, 0xabc, &cq, &memfd), 0);
	close(memfd);
	T_EQ(cq->entries, 4);
	T_EQ(cq->cqe, 3);
	for (uint32_t i = 0; i < 12; i++) {
		struct srd_cqe *slot = &cq->ring[i & 3];

		e = cqe_n(i);
		T_EQ(cq_push(cq, &e), 0);
		T_EQ(slot->wr_id, i);
		T_EQ(slot->byte_len, i * 3);
		/* Lap 0 writes owner 1, lap 1 owner 0, lap 2 owner 1. */
		T_EQ(slot->owner, ((i >> 2) & 1) ^ 1);
		T_EQ(slot->owner, srd_cqe_owner_for(i, cq->log_entries));
		if ((i & 3) == 3)
			cq->ctl->cons = i + 1; /* the library polled a lap */
	}
	/* Four unpolled fill the ring: the next one overruns. */
	cq->ctl->cons = 8;
	e = cqe_n(99);
	T_EQ(cq_push(cq, &e), -ENOSPC);
	T_ASSERT(cq->in_error);
	T_EQ(cq->ring[0].wr_id, 8); /* nothing overwritten */
	T_EQ(read(t->async_fd, &aev, sizeof(aev)), sizeof(aev));
	T_EQ(aev.event_type, IBV_EVENT_CQ_ERR);
	T_EQ(aev.user_handle, 0xabc);
	/* In error for good, and the event came once. */
	cq->ctl->cons = 12;
	T_EQ(cq_push(cq, &e), -ENOSPC);
	T_EQ(read(t->async_fd, &aev, sizeof(aev)), -1);
	T_EQ(events(chfd, 0xabc), 0);
	cq_destroy(cq);
}

static void arming(struct t_core *t, struct srd_comp_channel *ch, int chfd)
{
	struct srd_cq *cq;
	struct srd_cqe e = cqe_n(1);
	int memfd;

	T_EQ(cq_create(t->c, 100, ch, 0x5eed, &cq, &memfd), 0);
	close(memfd);
	T_EQ(ch->refcnt, 1);
	/* Not armed: no event. */
	T_EQ(cq_push(cq, &e), 0);
	T_EQ(events(chfd, 0x5eed), 0);
	/* NEXT: one event, then disarmed. */
	cq->ctl->arm = SRD_CQ_ARM_NEXT;
	T_EQ(cq_push(cq, &e), 0);
	T_EQ(cq->ctl->arm, 0);
	T_EQ(cq_push(cq, &e), 0);
	T_EQ(events(chfd, 0x5eed), 1);
	/* SOLICITED: not for a plain success, yes for a solicited one. */
	cq->ctl->arm = SRD_CQ_ARM_SOLICITED;
	T_EQ(cq_push(cq, &e), 0);
	T_EQ(events(chfd, 0x5eed), 0);
	T_EQ(cq->ctl->arm, SRD_CQ_ARM_SOLICITED);
	e.flags = SRD_CQE_SOLICITED;
	T_EQ(cq_push(cq, &e), 0);
	T_EQ(events(chfd, 0x5eed), 1);
	T_EQ(cq->ctl->arm, 0);
	/* ... and for an error completion. */
	cq->ctl->arm = SRD_CQ_ARM_SOLICITED;
	e.flags = 0;
	e.status = IBV_WC_REM_ACCESS_ERR;
	T_EQ(cq_push(cq, &e), 0);
	T_EQ(events(chfd, 0x5eed), 1);
	/* Both bits: the first CQE wins. */
	cq->ctl->arm = SRD_CQ_ARM_NEXT | SRD_CQ_ARM_SOLICITED;
	e.status = IBV_WC_SUCCESS;
	T_EQ(cq_push(cq, &e), 0);
	T_EQ(cq_push(cq, &e), 0);
	T_EQ(events(chfd, 0x5eed), 1);
	cq_destroy(cq);
	T_EQ(ch->refcnt, 0);
}

static void trace(struct t_core *t)
{
	struct srd_cq *cq;
	struct srd_cqe e = cqe_n(0x1234);
	char buf[4096];
	int p[2], memfd;
	ssize_t n;

	T_ASSERT(!pipe2(p, O_NONBLOCK | O_CLOEXEC));
	t->c->trace_fd = p[1];
	t->c->trace_flags = SRD_TRACE_CQE;
	T_EQ(cq_create(t->c, 4, NULL, 1, &cq, &memfd), 0);
	close(memfd);
	T_EQ(cq_push(cq, &e), 0);
	n = read(p[0], buf, sizeof(buf) - 1);
	T_ASSERT(n > 0);
	buf[n] = 0;
	T_ASSERT(strstr(buf, "1234"));
	t->c->trace_fd = -1;
	t->c->trace_flags = 0;
	close(p[0]);
	close(p[1]);
	cq_destroy(cq);
}

static void resize(struct t_core *t)
{
	struct srd_resize_cq_req rs = { 0 };
	static struct srd_rep rp;
	struct srd_create_cq_rep *rep = (void *)rp.data;
	struct srd_cq *cq;
	struct srd_cqe e;
	int memfd;

	T_EQ(cq_create(t->c, 7, NULL, 2, &cq, &memfd), 0);
	close(memfd);
	/* 10 pushed, 6 polled: 4 unpolled, wr_ids 6..9, across a lap. */
	for (int i = 0; i < 10; i++) {
		e = cqe_n(i);
		if (i == 6)
			cq->ctl->cons = 6;
		T_EQ(cq_push(cq, &e), 0);
	}
	cq->ctl->arm = SRD_CQ_ARM_NEXT;
	rs.handle = cq->handle;
	rs.cons = 6;
	rs.cqe = 3; /* fewer than unpolled */
	T_EQ(t_core_cmd(t->c, SRD_CMD_RESIZE_CQ, &rs, sizeof(rs), NULL, 0, &rp),
	     -EINVAL);
	rs.cqe = 4;
	T_EQ(t_core_cmd(t->c, SRD_CMD_RESIZE_CQ, &rs, sizeof(rs), NULL, 0, &rp),
	     0);
	T_EQ(rp.nfds, 1);
	close(rp.fds[0]);
	T_EQ(rep->log_entries, 3);
	T_EQ(cq->entries, 8);
	T_EQ(cq->prod, 4);
	for (int i = 0; i < 4; i++) {
		T_EQ(cq->ring[i].wr_id, 6 + i);
		T_EQ(cq->ring[i].owner, 1);
	}
	T_EQ(cq->ring[4].owner, 0);
	T_EQ(cq->ctl->cons, 0);
	T_EQ(cq->ctl->arm, SRD_CQ_ARM_NEXT);
	/* The ring goes on from there. */
	e = cqe_n(10);
	T_EQ(cq_push(cq, &e), 0);
	T_EQ(cq->ring[4].wr_id, 10);
	T_EQ(cq->ring[4].owner, 1);
	cq_destroy(cq);
}

int main(void)
{
	static struct srd_rep rp;
	struct srd_comp_channel *ch;
	struct t_core t;
	int chfd;

	t_core_init(&t);
	T_EQ(t_core_cmd(t.c, SRD_CMD_CREATE_COMP_CHANNEL, NULL, 0, NULL, 0,
			&rp),
	     0);
	T_EQ(rp.nfds, 1);
	chfd = rp.fds[0];
	T_ASSERT(!fcntl(chfd, F_SETFL, O_NONBLOCK));
	ch = channel_get(t.c, ((struct srd_handle_rep *)rp.data)->handle);
	T_ASSERT(ch);

	laps(&t, ch, chfd);
	arming(&t, ch, chfd);
	trace(&t);
	resize(&t);

	close(chfd);
	t_core_fini(&t);
	return T_EXIT_PASS;
}
