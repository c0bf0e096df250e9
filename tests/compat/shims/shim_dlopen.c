/* SPDX-License-Identifier: MIT */
/*
 * The mlx5 and EFA shims load with every symbol bound (RTLD_NOW) and answer
 * as rdma-core's libraries do for a device that is not theirs, looked up by
 * the versions programs were linked against.
 *
 *   shim_dlopen <path of libmlx5.so.1> <path of libefa.so.1>
 */

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "t_assert.h"

typedef bool (*is_supported_fn)(void *device);
typedef void *(*open_device_fn)(void *device, void *attr);
typedef int (*query_fn)(void *ctx, void *attr);
typedef int (*init_obj_fn)(void *obj, uint64_t obj_type);
typedef int (*cancel_fn)(void *qp, uint64_t wr_id);
typedef ssize_t (*get_event_fn)(void *channel, void *data, size_t len);
typedef void (*destroy_fn)(void *obj);
typedef int (*efa_query_fn)(void *ctx, void *attr, uint32_t inlen);
typedef void *(*efa_create_qp_fn)(void *ctx, void *attr, void *efa_attr,
				  uint32_t inlen);
typedef void *(*create_qp_fn)(void *ctx, void *attr, void *mlx5_attr);
typedef void *(*cq_from_fn)(void *cq);

static void *lookup(void *h, const char *name, const char *version)
{
	void *p = dlvsym(h, name, version);

	if (p == NULL)
		T_FAIL("%s@%s not found: %s", name, version, dlerror());
	return p;
}

static void check_mlx5(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	unsigned char attr[512];
	is_supported_fn is_supported;
	open_device_fn open_device;
	query_fn query_device;
	init_obj_fn init_obj;
	cancel_fn cancel;
	get_event_fn get_event;
	destroy_fn destroy;
	void *p;
	int ret;

	if (h == NULL)
		T_FAIL("dlopen %s: %s", path, dlerror());

	is_supported =
		(is_supported_fn)lookup(h, "mlx5dv_is_supported", "MLX5_1.8");
	if (is_supported(attr))
		T_FAIL("mlx5dv_is_supported() is true");

	open_device =
		(open_device_fn)lookup(h, "mlx5dv_open_device", "MLX5_1.7");
	errno = 0;
	p = open_device(attr, NULL);
	if (p != NULL || errno != EOPNOTSUPP)
		T_FAIL("mlx5dv_open_device: %p, errno %d", p, errno);

	query_device = (query_fn)lookup(h, "mlx5dv_query_device", "MLX5_1.0");
	ret = query_device(attr, attr);
	if (ret != EOPNOTSUPP)
		T_FAIL("mlx5dv_query_device: %d", ret);

	/* both versions of mlx5dv_init_obj, and the default one */
	init_obj = (init_obj_fn)lookup(h, "mlx5dv_init_obj", "MLX5_1.0");
	if (init_obj(attr, 1) != EOPNOTSUPP)
		T_FAIL("init_obj@MLX5_1.0");
	init_obj = (init_obj_fn)lookup(h, "mlx5dv_init_obj", "MLX5_1.2");
	if (init_obj(attr, 1) != EOPNOTSUPP)
		T_FAIL("init_obj@MLX5_1.2");
	if (dlsym(h, "mlx5dv_init_obj") !=
	    dlvsym(h, "mlx5dv_init_obj", "MLX5_1.2"))
		T_FAIL("mlx5dv_init_obj does not default to MLX5_1.2");

	p = lookup(h, "mlx5dv_create_qp", "MLX5_1.3");
	errno = 0;
	p = ((create_qp_fn)p)(attr, attr, attr);
	if (p != NULL || errno != EOPNOTSUPP)
		T_FAIL("mlx5dv_create_qp: %p, errno %d", p, errno);

	/* the functions whose convention is not a positive errno */
	cancel = (cancel_fn)lookup(h, "mlx5dv_qp_cancel_posted_send_wrs",
				   "MLX5_1.20");
	if (cancel(attr, 1) != -EOPNOTSUPP)
		T_FAIL("mlx5dv_qp_cancel_posted_send_wrs");
	get_event =
		(get_event_fn)lookup(h, "mlx5dv_devx_get_event", "MLX5_1.11");
	errno = 0;
	if (get_event(attr, attr, sizeof(attr)) != -1 || errno != EOPNOTSUPP)
		T_FAIL("mlx5dv_devx_get_event");
	destroy = (destroy_fn)lookup(h, "mlx5dv_devx_destroy_event_channel",
				     "MLX5_1.11");
	destroy(NULL);

	/* not an export of rdma-core: the internal name stays hidden */
	if (dlsym(h, "mlx5dv_init_obj_v1_0") != NULL)
		T_FAIL("internal alias mlx5dv_init_obj_v1_0 is exported");
	dlclose(h);
}

static void check_efa(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	unsigned char attr[512];
	efa_query_fn query_device;
	efa_create_qp_fn create_qp;
	void *p;
	int ret;

	if (h == NULL)
		T_FAIL("dlopen %s: %s", path, dlerror());

	query_device = (efa_query_fn)lookup(h, "efadv_query_device", "EFA_1.1");
	ret = query_device(attr, attr, sizeof(attr));
	if (ret != EOPNOTSUPP)
		T_FAIL("efadv_query_device: %d", ret);
	create_qp =
		(efa_create_qp_fn)lookup(h, "efadv_create_qp_ex", "EFA_1.1");
	errno = 0;
	p = create_qp(attr, attr, attr, sizeof(attr));
	if (p != NULL || errno != EOPNOTSUPP)
		T_FAIL("efadv_create_qp_ex: %p, errno %d", p, errno);
	p = lookup(h, "efadv_cq_from_ibv_cq_ex", "EFA_1.2");
	errno = 0;
	p = ((cq_from_fn)p)(attr);
	if (p != NULL || errno != EOPNOTSUPP)
		T_FAIL("efadv_cq_from_ibv_cq_ex: %p, errno %d", p, errno);
	dlclose(h);
}

int main(int argc, char **argv)
{
	if (argc != 3)
		T_FAIL("usage: %s libmlx5.so.1 libefa.so.1", argv[0]);
	check_mlx5(argv[1]);
	check_efa(argv[2]);
	t_pass();
}
