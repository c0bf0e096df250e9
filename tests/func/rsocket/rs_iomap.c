/* SPDX-License-Identifier: MIT */
/*
 * riomap / riowrite: the server maps a buffer for writing, the mapping
 * reaches the client's iomap table with the server's next message, and
 * the client's riowrite lands in the server's buffer at the offset asked
 * without the server reading anything; a message sent after it arrives
 * after it.  Offsets outside the mapping are refused, riounmap forgets
 * the mapping, and a side without an iomap table cannot riomap for
 * writing.
 */
#include <sys/mman.h>

#include "t_rs.h"

#define LEN (256 * 1024)
#define BASE 0x100000 /* the offset the mapping is known by */

int main(void)
{
	uint8_t *map, *src;
	uint16_t port;
	int lfd, cfd, sfd, v = 4;
	char c;

	t_init("rs_iomap");
	lfd = t_rs_listen(&port);
	map = t_zalloc(LEN);
	src = t_zalloc(LEN);
	/* The writing side keeps a table for the peer's mappings. */
	cfd = rsocket(AF_INET, SOCK_STREAM, 0);
	T_GE(cfd, 0);
	T_RS_OK(rsetsockopt(cfd, SOL_RDMA, RDMA_IOMAPSIZE, &v, sizeof(v)));
	sfd = t_rs_connect(cfd, lfd, port);

	T_EQ(riomap(sfd, map, LEN, PROT_WRITE, 0, BASE), BASE);
	/* The mapping travels with the next message. */
	T_EQ(rsend(sfd, "m", 1, 0), 1);
	T_EQ(rrecv(cfd, &c, 1, 0), 1);
	T_EQ(c, 'm');

	/* Several pieces, at offsets inside the mapping. */
	t_fill(src, LEN, 21);
	T_EQ(riowrite(cfd, src, 1000, BASE, 0), 1000);
	T_EQ(riowrite(cfd, src + 1000, LEN - 1000, BASE + 1000, 0), LEN - 1000);
	/* The stream is ordered after the writes. */
	T_EQ(rsend(cfd, "d", 1, 0), 1);
	T_EQ(rrecv(sfd, &c, 1, 0), 1);
	T_EQ(c, 'd');
	T_CHECK_FILL(map, LEN, 21);

	/* A write past the end is cut at the end of the mapping. */
	memset(map, 0, LEN);
	t_fill(src, LEN, 22);
	T_EQ(riowrite(cfd, src, 4096, BASE + LEN - 100, 0), 100);
	T_EQ(rsend(cfd, "e", 1, 0), 1);
	T_EQ(rrecv(sfd, &c, 1, 0), 1);
	t_check_fill_at(__FILE__, __LINE__, map + LEN - 100, 100, 22, "tail");
	for (size_t i = 0; i < LEN - 100; i++)
		if (map[i])
			T_FAIL("byte %zu written outside the range", i);
	/* Nothing is mapped there. */
	T_NEG_ERRNO((ssize_t)riowrite(cfd, src, 10, BASE + LEN, 0), EINVAL);
	T_NEG_ERRNO((ssize_t)riowrite(cfd, src, 10, 0, 0), EINVAL);

	/* The client has no table on the server's side (size 0). */
	T_NEG_ERRNO(riomap(cfd, src, LEN, PROT_WRITE, 0, -1), ENOMEM);
	/* Read-only mappings are local. */
	T_EQ(riomap(cfd, src, 4096, PROT_NONE, 0, -1), (off_t)(uintptr_t)src);
	T_RS_OK(riounmap(cfd, src, 4096));
	T_NEG_ERRNO(riounmap(cfd, src, 4096), EINVAL);
	T_NEG_ERRNO(riomap(cfd, src, 4096, PROT_READ, 0, -1), EINVAL);

	T_RS_OK(riounmap(sfd, map, LEN));
	T_NEG_ERRNO(riounmap(sfd, map, LEN), EINVAL);
	T_RS_OK(rclose(cfd));
	T_RS_OK(rclose(sfd));
	T_RS_OK(rclose(lfd));
	t_free(map, LEN);
	t_free(src, LEN);
	t_pass();
}
