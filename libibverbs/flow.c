/* SPDX-License-Identifier: MIT */
/*
 * Flow steering (ibv_create_flow / ibv_destroy_flow): the attribute and
 * its specs go to the daemon as they are laid out after it, which checks
 * them as uverbs does.  Only raw packet QPs take rules (flow.c in the
 * daemon, docs/ARCHITECTURE.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "libibverbs/ibverbs.h"

/* Protocol 0: the socket receives nothing; it only shows that the kernel
 * let us make it, which it does only with CAP_NET_RAW (uverbs asks for
 * the capability of the caller of each create, and so does the daemon). */
int srd_net_raw_proof(void)
{
	return socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
}

/* The bytes of the specs after attr, walked by each spec's own size. */
static int specs_len(const struct ibv_flow_attr *attr, size_t *len)
{
	const uint8_t *p = (const uint8_t *)(attr + 1);
	size_t n = 0;

	for (unsigned int i = 0; i < attr->num_of_specs; i++) {
		struct ibv_flow_spec s;
		uint16_t size;

		memcpy(&s.hdr, p + n, sizeof(s.hdr));
		size = s.hdr.size;
		if (size < sizeof(s.hdr) || n + size > SRD_FLOW_SPECS_MAX)
			return -EINVAL;
		n += size;
	}
	*len = n;
	return 0;
}

struct ibv_flow *srd_create_flow(struct ibv_qp *qp, struct ibv_flow_attr *attr)
{
	uint8_t buf[sizeof(struct srd_create_flow_req) + SRD_FLOW_SPECS_MAX];
	struct srd_create_flow_req *req = (struct srd_create_flow_req *)buf;
	struct srd_create_flow_rep rep;
	struct srd_cmd_args a = {
		.op = SRD_CMD_CREATE_FLOW,
		.req = req,
		.rep = &rep,
		.rep_len = sizeof(rep),
	};
	struct ibv_flow *flow;
	size_t len = 0;
	int ret, proof;

	if (!attr) {
		errno = EINVAL;
		return NULL;
	}
	ret = specs_len(attr, &len);
	if (ret) {
		errno = -ret;
		return NULL;
	}
	memset(req, 0, sizeof(*req));
	req->qp_handle = qp->handle;
	req->comp_mask = attr->comp_mask;
	req->type = attr->type;
	req->flags = attr->flags;
	req->priority = attr->priority;
	req->num_of_specs = attr->num_of_specs;
	req->port = attr->port;
	req->specs_len = (uint32_t)len;
	memcpy(req->specs, attr + 1, len);
	a.req_len = sizeof(*req) + len;
	flow = calloc(1, sizeof(*flow));
	if (!flow) {
		errno = ENOMEM;
		return NULL;
	}
	proof = srd_net_raw_proof();
	if (proof >= 0) {
		a.fds = &proof;
		a.nfds = 1;
	}
	ret = srd_ctx_cmd(to_ctx(qp->context), &a);
	if (proof >= 0)
		close(proof);
	if (ret) {
		free(flow);
		errno = -ret;
		return NULL;
	}
	flow->context = qp->context;
	flow->handle = rep.handle;
	return flow;
}

int srd_destroy_flow(struct ibv_flow *flow)
{
	struct srd_handle_req req = { .handle = flow->handle };
	struct srd_cmd_args a = {
		.op = SRD_CMD_DESTROY_FLOW,
		.req = &req,
		.req_len = sizeof(req),
	};
	int ret = srd_ctx_cmd(to_ctx(flow->context), &a);

	if (ret)
		return srd_ret_errno(ret);
	free(flow);
	return 0;
}
