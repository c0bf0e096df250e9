/* SPDX-License-Identifier: MIT */
/*
 * The device list: at least one device, NULL terminated, softrdma0 among
 * them with a GUID and an index; open and close.
 */
#include <stdio.h>

#include "t_util.h"

int main(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	int num = -1, i, found = -1;

	t_init("device_list");
	list = T_NONNULL(ibv_get_device_list(&num));
	T_GE(num, 1);
	T_PTR_EQ(list[num], NULL);
	for (i = 0; i < num; i++) {
		const char *name = ibv_get_device_name(list[i]);

		T_ASSERT(name != NULL);
		t_log("device %d: %s guid %#llx index %d", i, name,
		      (unsigned long long)be64toh(ibv_get_device_guid(list[i])),
		      ibv_get_device_index(list[i]));
		if (!strcmp(name, "softrdma0"))
			found = i;
	}
	if (found < 0)
		T_FAIL("no device named softrdma0 among %d", num);

	T_STR_EQ(list[found]->name, "softrdma0");
	T_NE(ibv_get_device_guid(list[found]), 0);
	T_GE(ibv_get_device_index(list[found]), 0);
	T_EQ(list[found]->node_type, IBV_NODE_CA);
	T_EQ(list[found]->transport_type, IBV_TRANSPORT_IB);

	ctx = T_NONNULL(ibv_open_device(list[found]));
	T_PTR_EQ(ctx->device, list[found]);
	T_GE(ctx->async_fd, 0);
	T_GE(ctx->num_comp_vectors, 1);
	T_OK(ibv_close_device(ctx));

	/* Opening twice gives two independent contexts. */
	ctx = T_NONNULL(ibv_open_device(list[found]));
	{
		struct ibv_context *ctx2 =
			T_NONNULL(ibv_open_device(list[found]));
		struct ibv_pd *pd = T_NONNULL(ibv_alloc_pd(ctx2));

		T_ASSERT(ctx2 != ctx);
		T_NE(ctx2->async_fd, ctx->async_fd);
		T_OK(ibv_dealloc_pd(pd));
		T_OK(ibv_close_device(ctx2));
	}
	T_OK(ibv_close_device(ctx));
	ibv_free_device_list(list);

	/* A second list still shows the device (num may be NULL). */
	list = T_NONNULL(ibv_get_device_list(NULL));
	T_ASSERT(list[0] != NULL);
	ibv_free_device_list(list);
	t_pass();
}
