/* SPDX-License-Identifier: MIT */
/*
 * Data intact both ways in many sizes, 1 B to 1 MiB (around the inline
 * size, the 2 KiB low water mark, the 64 KiB transfer size and the
 * receive buffer's halves), sent in one call and received in pieces;
 * then partial reads, MSG_PEEK, MSG_WAITALL and vectors.
 */
#include <pthread.h>
#include <sys/uio.h>

#include "t_rs.h"

#define MAX (1u << 20)

static const size_t sizes[] = { 1,	2,	63,	64,	65,	2047,
				2048,	2049,	4096,	65535,	65536,	65537,
				100000, 131072, 131073, 262144, 500001, MAX };

struct side {
	int fd;
	uint8_t *buf;
	uint32_t seed;
};

static void *receiver(void *p)
{
	struct side *s = p;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		memset(s->buf, 0, sizes[i]);
		/* Pieces of odd sizes: messages get split across reads. */
		t_rs_recv_all(s->fd, s->buf, sizes[i], 1000 + i * 77);
		t_check_fill_at(__FILE__, __LINE__, s->buf, sizes[i],
				s->seed + (uint32_t)i, "received");
	}
	return NULL;
}

static void one_way(int from, int to, uint32_t seed)
{
	struct side r = { .fd = to, .buf = t_zalloc(MAX), .seed = seed };
	uint8_t *sbuf = t_zalloc(MAX);
	pthread_t th;

	T_EQ(pthread_create(&th, NULL, receiver, &r), 0);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		t_fill(sbuf, sizes[i], seed + (uint32_t)i);
		t_rs_send_all(from, sbuf, sizes[i], 0);
	}
	T_EQ(pthread_join(th, NULL), 0);
	t_free(sbuf, MAX);
	t_free(r.buf, MAX);
}

static void partial(int cfd, int sfd)
{
	uint8_t out[10000], in[10000], a[3000], b[4000], c[3000];
	struct iovec iov[3] = { { a, sizeof(a) },
				{ b, sizeof(b) },
				{ c, sizeof(c) } };
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 3 };
	ssize_t n;

	t_fill(out, sizeof(out), 99);
	t_rs_send_all(cfd, out, sizeof(out), 0);
	/* A peek leaves the data where it is. */
	memset(in, 0, sizeof(in));
	n = rrecv(sfd, in, 10, MSG_PEEK);
	T_EQ(n, 10);
	T_MEMEQ(in, out, 10);
	/* Short reads take what was asked. */
	T_EQ(rrecv(sfd, in, 1, 0), 1);
	T_EQ(rrecv(sfd, in + 1, 9, 0), 9);
	T_MEMEQ(in, out, 10);
	/* The rest, exactly, whatever the pieces it came in. */
	T_EQ(rrecv(sfd, in + 10, sizeof(in) - 10, MSG_WAITALL),
	     (ssize_t)sizeof(in) - 10);
	T_MEMEQ(in, out, sizeof(out));

	/* Vectors both ways. */
	t_fill(a, sizeof(a), 5);
	t_fill(b, sizeof(b), 6);
	t_fill(c, sizeof(c), 7);
	T_EQ(rwritev(sfd, iov, 3), 10000);
	T_EQ(rrecv(cfd, in, sizeof(in), MSG_WAITALL), 10000);
	t_check_fill_at(__FILE__, __LINE__, in, 3000, 5, "a");
	t_check_fill_at(__FILE__, __LINE__, in + 3000, 4000, 6, "b");
	t_check_fill_at(__FILE__, __LINE__, in + 7000, 3000, 7, "c");
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	memset(c, 0, sizeof(c));
	T_EQ(rsend(cfd, in, 10000, 0), 10000);
	/* rrecvmsg fills the vector in order. */
	T_EQ(rrecvmsg(sfd, &msg, MSG_WAITALL), 10000);
	t_check_fill_at(__FILE__, __LINE__, a, 3000, 5, "a");
	t_check_fill_at(__FILE__, __LINE__, b, 4000, 6, "b");
	t_check_fill_at(__FILE__, __LINE__, c, 3000, 7, "c");
}

int main(void)
{
	uint16_t port;
	int lfd, cfd, sfd;

	t_init("rs_sizes");
	lfd = t_rs_listen(&port);
	cfd = t_rs_pair(lfd, port, &sfd);
	one_way(cfd, sfd, 1000);
	one_way(sfd, cfd, 2000);
	partial(cfd, sfd);
	T_RS_OK(rclose(cfd));
	T_RS_OK(rclose(sfd));
	T_RS_OK(rclose(lfd));
	t_pass();
}
