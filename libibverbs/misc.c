/* SPDX-License-Identifier: MIT */
/* Rates, fork support, sysfs access and other small library calls. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libibverbs/ibverbs.h"

struct rate_row {
	enum ibv_rate rate;
	int mult; /* of 2.5 Gb/s, -1 when not a multiple */
	int mbps;
};

static const struct rate_row rates[] = {
	{ IBV_RATE_2_5_GBPS, 1, 2500 },
	{ IBV_RATE_5_GBPS, 2, 5000 },
	{ IBV_RATE_10_GBPS, 4, 10000 },
	{ IBV_RATE_20_GBPS, 8, 20000 },
	{ IBV_RATE_30_GBPS, 12, 30000 },
	{ IBV_RATE_40_GBPS, 16, 40000 },
	{ IBV_RATE_60_GBPS, 24, 60000 },
	{ IBV_RATE_80_GBPS, 32, 80000 },
	{ IBV_RATE_120_GBPS, 48, 120000 },
	{ IBV_RATE_14_GBPS, -1, 14062 },
	{ IBV_RATE_56_GBPS, -1, 56250 },
	{ IBV_RATE_112_GBPS, -1, 112500 },
	{ IBV_RATE_168_GBPS, -1, 168750 },
	{ IBV_RATE_25_GBPS, -1, 25781 },
	{ IBV_RATE_100_GBPS, -1, 103125 },
	{ IBV_RATE_200_GBPS, -1, 206250 },
	{ IBV_RATE_300_GBPS, -1, 309375 },
	{ IBV_RATE_28_GBPS, 11, 28125 },
	{ IBV_RATE_50_GBPS, 20, 53125 },
	{ IBV_RATE_400_GBPS, 160, 425000 },
	{ IBV_RATE_600_GBPS, 240, 637500 },
	{ IBV_RATE_800_GBPS, 320, 850000 },
	{ IBV_RATE_1200_GBPS, 480, 1275000 },
};

#define NRATES (sizeof(rates) / sizeof(rates[0]))

LIB_EXPORT int ibv_rate_to_mult(enum ibv_rate rate)
{
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].rate == rate)
			return rates[i].mult;
	return -1;
}

LIB_EXPORT enum ibv_rate mult_to_ibv_rate(int mult)
{
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].mult == mult && mult > 0)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

LIB_EXPORT int ibv_rate_to_mbps(enum ibv_rate rate)
{
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].rate == rate)
			return rates[i].mbps;
	return -1;
}

LIB_EXPORT enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].mbps == mbps)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

/*
 * Registered memory never needs MADV_DONTFORK here: a forked child gets
 * private copies of it (mem.c).  So fork support is always on.
 */
static int fork_init_called;

LIB_EXPORT int ibv_fork_init(void)
{
	fork_init_called = 1;
	return 0;
}

LIB_EXPORT enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

LIB_EXPORT int ibv_dontfork_range(void *base, size_t size)
{
	return 0;
}

LIB_EXPORT int ibv_dofork_range(void *base, size_t size)
{
	return 0;
}

static char sysfs_path[4096] = "/sys";
static pthread_once_t sysfs_path_once = PTHREAD_ONCE_INIT;

/* Read once, as rdma-core does; $SYSFS_PATH only when not set-uid (nor
 * set-capability: AT_SECURE). */
static void sysfs_path_init(void)
{
	const char *env = NULL;
	size_t len;

	if (getuid() == geteuid())
		env = secure_getenv("SYSFS_PATH");
	if (!env || !*env)
		return;
	len = strnlen(env, sizeof(sysfs_path) - 1);
	while (len > 1 && env[len - 1] == '/')
		len--;
	memcpy(sysfs_path, env, len);
	sysfs_path[len] = '\0';
}

/* Callers (librdmacm, MPI) take the returned string as the root of the
 * sysfs paths they read through ibv_read_sysfs_file(). */
LIB_EXPORT const char *ibv_get_sysfs_path(void)
{
	pthread_once(&sysfs_path_once, sysfs_path_init);
	return sysfs_path;
}

/* What a kernel RDMA device would show in sysfs, for the few attributes
 * tools read from our (absent) device directories. */
static const char *emulated_attr(const char *dir, const char *file)
{
	static const char ibdev[] = "/sys/class/infiniband/";

	if (strncmp(dir, ibdev, sizeof(ibdev) - 1))
		return NULL;
	if (!strcmp(file, "board_id"))
		return "softrdma";
	if (!strcmp(file, "hca_type"))
		return "softrdma";
	if (!strcmp(file, "hw_rev"))
		return "0";
	if (!strcmp(file, "node_type"))
		return "1: CA";
	return NULL;
}

LIB_EXPORT int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
				   size_t size)
{
	const char *emu;
	char *path;
	ssize_t len;
	int fd;

	if (!size)
		return -1;
	if (asprintf(&path, "%s/%s", dir, file) < 0)
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd < 0) {
		emu = emulated_attr(dir, file);
		if (!emu)
			return -1;
		len = (ssize_t)snprintf(buf, size, "%s", emu);
		return len < (ssize_t)size ? (int)len : (int)size - 1;
	}
	len = read(fd, buf, size);
	close(fd);
	if (len <= 0)
		return -1;
	if ((size_t)len == size)
		len--;
	/* Drop the trailing newline sysfs puts there. */
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	buf[len] = '\0';
	return (int)len;
}

LIB_EXPORT int ibv_resolve_eth_l2_from_gid(struct ibv_context *context,
					   struct ibv_ah_attr *attr,
					   uint8_t eth_mac[6], uint16_t *vid)
{
	/* Providers use this to build Ethernet headers; the device builds
	 * its own. */
	errno = EOPNOTSUPP;
	return -EOPNOTSUPP;
}
