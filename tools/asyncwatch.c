/* SPDX-License-Identifier: MIT */
/*
 * ibv_asyncwatch: opens a device and prints its asynchronous events until
 * killed.  Port and device events print as rdma-core's does; QP, CQ and
 * SRQ events, which rdma-core calls "unexpected" with a meaningless port,
 * are named and print the number of the object instead.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

static const char *aw_port_event_name(enum ibv_event_type t)
{
	switch (t) {
	case IBV_EVENT_DEVICE_FATAL:
		return "IBV_EVENT_DEVICE_FATAL";
	case IBV_EVENT_PORT_ACTIVE:
		return "IBV_EVENT_PORT_ACTIVE";
	case IBV_EVENT_PORT_ERR:
		return "IBV_EVENT_PORT_ERR";
	case IBV_EVENT_LID_CHANGE:
		return "IBV_EVENT_LID_CHANGE";
	case IBV_EVENT_PKEY_CHANGE:
		return "IBV_EVENT_PKEY_CHANGE";
	case IBV_EVENT_SM_CHANGE:
		return "IBV_EVENT_SM_CHANGE";
	case IBV_EVENT_CLIENT_REREGISTER:
		return "IBV_EVENT_CLIENT_REREGISTER";
	case IBV_EVENT_GID_CHANGE:
		return "IBV_EVENT_GID_CHANGE";
	default:
		return NULL;
	}
}

static void aw_print(const struct ibv_async_event *ev)
{
	const char *name = aw_port_event_name(ev->event_type);
	enum ibv_event_type t = ev->event_type;

	if (name) {
		printf("  event_type %s (%d), port %d\n", name, t,
		       ev->element.port_num);
		return;
	}
	switch (t) {
	case IBV_EVENT_CQ_ERR:
		printf("  event_type IBV_EVENT_CQ_ERR (%d), cq %p\n", t,
		       (void *)ev->element.cq);
		return;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		printf("  event_type %s (%d), srq %p\n",
		       t == IBV_EVENT_SRQ_ERR ? "IBV_EVENT_SRQ_ERR"
					      : "IBV_EVENT_SRQ_LIMIT_REACHED",
		       t, (void *)ev->element.srq);
		return;
	default:
		break;
	}
	/* The rest are QP events. */
	printf("  event_type %s (%d), qp 0x%06x\n", ibv_event_type_str(t), t,
	       ev->element.qp ? ev->element.qp->qp_num : 0);
}

static void aw_usage(const char *argv0)
{
	printf("Usage:\n");
	printf("  %s            start an asyncwatch process\n", argv0);
	printf("\n");
	printf("Options:\n");
	printf("  -d, --ib-dev=<dev>     use IB device <dev> "
	       "(default first device found)\n");
	printf("  -h, --help             print a help text and exit\n");
}

int main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ .name = "ib-dev", .has_arg = 1, .val = 'd' },
		{ .name = "help", .has_arg = 0, .val = 'h' },
		{}
	};
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_async_event ev;
	const char *devname = NULL;
	int c, i = 0;

	/* Line-buffered even into a pipe: the reader wants each event now. */
	setvbuf(stdout, NULL, _IOLBF, 0);

	while ((c = getopt_long(argc, argv, "d:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			devname = optarg;
			break;
		case 'h':
			aw_usage(argv[0]);
			return 0;
		default:
			aw_usage(argv[0]);
			return 1;
		}
	}

	list = ibv_get_device_list(NULL);
	if (!list) {
		perror("Failed to get IB devices list");
		return 1;
	}
	if (devname)
		for (; list[i]; i++)
			if (!strcmp(ibv_get_device_name(list[i]), devname))
				break;
	if (!list[i]) {
		fprintf(stderr, "IB device %s not found\n",
			devname ? devname : "");
		return 1;
	}

	ctx = ibv_open_device(list[i]);
	if (!ctx) {
		fprintf(stderr, "Couldn't get context for %s\n",
			ibv_get_device_name(list[i]));
		return 1;
	}
	printf("%s: async event FD %d\n", ibv_get_device_name(list[i]),
	       ctx->async_fd);

	for (;;) {
		if (ibv_get_async_event(ctx, &ev))
			return 1;
		aw_print(&ev);
		ibv_ack_async_event(&ev);
	}
}
