/* SPDX-License-Identifier: MIT */
/*
 * softrdma-bench-reg: what ibv_reg_mr + ibv_dereg_mr cost, for 4 KiB,
 * 1 MiB and 64 MiB of touched private memory (a buffer the application
 * has written, as it has before registering it).  Median and minimum of N
 * cycles per size, in microseconds.  The memory access mode follows the
 * library's environment (SOFTRDMA_MOVE_GUARD, SOFTRDMA_MEM_ACCESS).
 *
 *     softrdma-bench-reg [-n N] [-d DEV]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <infiniband/verbs.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One size: n cycles, each of a registration and a deregistration. */
static int run(struct ibv_pd *pd, size_t len, int n, int odp)
{
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | odp;
	double *t = calloc((size_t)n, sizeof(*t));
	uint8_t *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (!t || buf == MAP_FAILED) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	/* An ODP range is left untouched: that is what it is for. */
	if (!odp)
		memset(buf, 0x5a, len);
	for (int i = 0; i < n; i++) {
		double t0 = now_us();
		struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, access);

		if (!mr || ibv_dereg_mr(mr)) {
			perror("ibv_reg_mr/ibv_dereg_mr");
			return 1;
		}
		t[i] = now_us() - t0;
	}
	qsort(t, (size_t)n, sizeof(*t), cmp_double);
	printf("%8zu KiB  %6d  %12.1f  %12.1f\n", len / 1024, n, t[n / 2],
	       t[0]);
	munmap(buf, len);
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 4096, 1 << 20, 64 << 20 };
	const char *dev_name = NULL;
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int n = 101, c, ret = 0, num, odp = 0;

	while ((c = getopt(argc, argv, "n:d:oh")) != -1) {
		switch (c) {
		case 'o':
			odp = IBV_ACCESS_ON_DEMAND;
			break;
		case 'n':
			n = (int)strtol(optarg, NULL, 10);
			break;
		case 'd':
			dev_name = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [-n N] [-d DEV] [-o]\n",
				argv[0]);
			return 2;
		}
	}
	if (n < 1)
		n = 1;
	list = ibv_get_device_list(&num);
	if (!list || !num) {
		fprintf(stderr, "no RDMA device\n");
		return 1;
	}
	for (c = 0; dev_name && c < num; c++)
		if (!strcmp(ibv_get_device_name(list[c]), dev_name))
			break;
	if (c == num) {
		fprintf(stderr, "%s: no such device\n", dev_name);
		return 1;
	}
	ctx = ibv_open_device(list[dev_name ? c : 0]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	if (!pd) {
		perror("ibv_open_device/ibv_alloc_pd");
		return 1;
	}
	printf("# ibv_reg_mr + ibv_dereg_mr%s, microseconds per cycle\n",
	       odp ? " (ODP, untouched memory)" : "");
	printf("#    size  cycles        median           min\n");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]) && !ret; i++)
		ret = run(pd, sizes[i], sizes[i] > (1 << 20) && n > 11 ? 11 : n,
			  odp);
	/* 1 GiB only on demand: a pinning one would fill the memory. */
	if (odp && !ret)
		ret = run(pd, (size_t)1 << 30, n > 11 ? 11 : n, odp);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return ret;
}
