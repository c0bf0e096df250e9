/* SPDX-License-Identifier: MIT */
/*
 * Many rsockets at once: 24 connections open together, each carrying its
 * own data both ways, the servers' side watched with one rpoll, then
 * closed in a different order than opened.
 */
#include "t_rs.h"

#define N 24
#define LEN 20000

int main(void)
{
	static uint8_t out[N][LEN], in[LEN];
	int cfd[N], sfd[N], lfd, done = 0;
	struct pollfd p[N];
	uint16_t port;
	uint64_t end;

	t_init("rs_many");
	lfd = t_rs_listen(&port);
	for (int i = 0; i < N; i++)
		cfd[i] = t_rs_pair(lfd, port, &sfd[i]);
	for (int i = 0; i < N; i++) {
		t_fill(out[i], LEN, 100 + (uint32_t)i);
		T_EQ(rsend(cfd[i], out[i], LEN, 0), LEN);
	}
	/* Every server side turns readable; each has its own data. */
	end = t_now_ms() + T_WAIT_MS;
	while (done < N) {
		int n = 0;

		T_ASSERT(t_now_ms() < end);
		for (int i = 0; i < N; i++)
			p[i] = (struct pollfd){ .fd = sfd[i],
						.events = POLLIN };
		n = rpoll(p, N, 1000);
		T_GT(n, 0);
		for (int i = 0; i < N; i++) {
			if (!(p[i].revents & POLLIN))
				continue;
			T_EQ(p[i].revents & (POLLERR | POLLHUP), 0);
			memset(in, 0, LEN);
			T_EQ(rrecv(sfd[i], in, LEN, MSG_WAITALL), LEN);
			t_check_fill_at(__FILE__, __LINE__, in, LEN,
					100 + (uint32_t)i, "server side");
			/* Echo it back, reversed index. */
			T_EQ(rsend(sfd[i], out[N - 1 - i], LEN, 0), LEN);
			sfd[i] = -sfd[i] - 1; /* done: out of the next rpoll */
			done++;
		}
	}
	for (int i = 0; i < N; i++) {
		sfd[i] = -sfd[i] - 1;
		memset(in, 0, LEN);
		T_EQ(rrecv(cfd[i], in, LEN, MSG_WAITALL), LEN);
		t_check_fill_at(__FILE__, __LINE__, in, LEN,
				100 + (uint32_t)(N - 1 - i), "client side");
	}
	for (int i = 0; i < N; i += 2)
		T_RS_OK(rclose(sfd[i]));
	for (int i = N - 1; i >= 0; i--)
		T_RS_OK(rclose(cfd[i]));
	for (int i = 1; i < N; i += 2)
		T_RS_OK(rclose(sfd[i]));
	T_RS_OK(rclose(lfd));
	t_pass();
}
