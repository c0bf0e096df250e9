/* SPDX-License-Identifier: MIT */
/*
 * Built by install_pkgconfig.py against an installed tree: lists the
 * devices, opens softrdma0 and queries port 1.  Prints the path of the
 * libibverbs it runs with, so the caller can check it is the installed one.
 * Exit 0 when softrdma0 is listed and opens, 1 otherwise.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

int main(void)
{
	struct ibv_device **list, *dev = NULL;
	struct ibv_context *ctx;
	struct ibv_port_attr attr;
	Dl_info info;
	int i, num = 0, ret;

	if (dladdr((void *)ibv_open_device, &info) && info.dli_fname)
		printf("library %s\n", info.dli_fname);
	list = ibv_get_device_list(&num);
	if (!list) {
		printf("ibv_get_device_list: %s\n", strerror(errno));
		return 1;
	}
	for (i = 0; i < num; i++) {
		printf("device %s\n", ibv_get_device_name(list[i]));
		if (!strcmp(ibv_get_device_name(list[i]), "softrdma0"))
			dev = list[i];
	}
	if (!dev) {
		printf("softrdma0 not listed\n");
		ibv_free_device_list(list);
		return 1;
	}
	ctx = ibv_open_device(dev);
	if (!ctx) {
		printf("ibv_open_device: %s\n", strerror(errno));
		ibv_free_device_list(list);
		return 1;
	}
	ret = ibv_query_port(ctx, 1, &attr);
	printf("port 1: ret %d state %s\n", ret,
	       ret ? "-" : ibv_port_state_str(attr.state));
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return ret ? 1 : 0;
}
