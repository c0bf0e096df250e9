/* SPDX-License-Identifier: MIT */
/* Plumbing of the in-process CM tests (see t_cm_core.h). */
#include <arpa/inet.h>
#include <string.h>
#include <unistd.h>

#include "daemon/cm/cm.h"
#include "daemon/transport/engine.h"
#include "tests/unit/t_cm_core.h"

void (*tc_each_pass)(void);

void tc_pump(struct t_core *t)
{
	for (int i = 0; i < 64; i++) {
		uint64_t now = srd_now_ns();
		bool work;

		if (tc_each_pass)
			tc_each_pass();
		work = engine_progress(&t->d, now);
		if (!cm_progress(&t->d, now) && !work)
			return;
	}
}

int tc_cmd(struct t_core *t, struct srd_client *c, uint32_t op, const void *req,
	   uint32_t len, void *rep, size_t rep_len)
{
	static struct srd_rep rp;
	int ret = t_core_cmd(c, op, req, len, NULL, 0, &rp);

	for (int i = 0; i < rp.nfds; i++)
		close(rp.fds[i]);
	if (!ret && rep)
		memcpy(rep, rp.data, rep_len < rp.len ? rep_len : rp.len);
	tc_pump(t);
	return ret;
}

uint32_t tc_new_id(struct t_core *t, struct srd_client *c, uint32_t ps,
		   uint32_t qp_type)
{
	struct srd_cm_create_id_req req = { .ps = ps, .qp_type = qp_type };
	struct srd_handle_rep rep;

	T_EQ(tc_cmd(t, c, SRD_CMD_CM_CREATE_ID, &req, sizeof(req), &rep,
		    sizeof(rep)),
	     0);
	return rep.handle;
}

void tc_sin(struct sockaddr_storage *ss, const char *ip, uint16_t port)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	T_ASSERT(inet_pton(AF_INET, ip, &sin->sin_addr) == 1);
}
