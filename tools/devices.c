/* SPDX-License-Identifier: MIT */
/* ibv_devices: lists the RDMA devices and their node GUIDs. */
#include <endian.h>
#include <stdio.h>

#include <infiniband/verbs.h>

int main(int argc, char *argv[])
{
	struct ibv_device **list;
	int n, i;

	list = ibv_get_device_list(&n);
	if (!list) {
		perror("Failed to get IB devices list");
		return 1;
	}

	/* Column layout as rdma-core prints it, which scripts parse. */
	printf("    %-16s\t   node GUID\n", "device");
	printf("    %-16s\t----------------\n", "------");
	for (i = 0; i < n; i++)
		printf("    %-16s\t%016llx\n", ibv_get_device_name(list[i]),
		       (unsigned long long)be64toh(
			       ibv_get_device_guid(list[i])));

	ibv_free_device_list(list);
	return 0;
}
