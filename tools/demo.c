/* SPDX-License-Identifier: MIT */
/*
 * softrdma-demo: the first thing to run.  The process forks; parent and
 * child each open the RDMA device, connect an RC QP pair over a
 * socketpair, and the parent measures latency and bandwidth, every
 * transfer checked.  Exit status 0 means all of it worked.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rcpair.h"

#define DEMO_BW_MAX (1 << 20)

struct demo_opts {
	const char *dev;
	unsigned int lat_iters;
	unsigned int bw_iters;
};

static void demo_usage(const char *argv0)
{
	printf("Usage: %s [options]\n", argv0);
	printf("Runs two processes over an RC QP pair on the soft RDMA "
	       "device and\nreports latency and bandwidth.\n\n");
	printf("Options:\n");
	printf("  -d, --ib-dev=<dev>   use device <dev> (default first "
	       "device found)\n");
	printf("  -n, --iters=<n>      latency round trips (default 10000)\n");
	printf("  -q, --quick          a short run\n");
	printf("  -h, --help           print this help\n");
}

static int demo_parse(int argc, char *argv[], struct demo_opts *o)
{
	static const struct option longopts[] = {
		{ .name = "ib-dev", .has_arg = 1, .val = 'd' },
		{ .name = "iters", .has_arg = 1, .val = 'n' },
		{ .name = "quick", .has_arg = 0, .val = 'q' },
		{ .name = "help", .has_arg = 0, .val = 'h' },
		{}
	};
	unsigned long v;
	char *end;
	int c;

	o->dev = NULL;
	o->lat_iters = 10000;
	o->bw_iters = 2000;
	while ((c = getopt_long(argc, argv, "d:n:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->dev = optarg;
			break;
		case 'n':
			v = strtoul(optarg, &end, 0);
			if (*end || !v || v > 10000000) {
				demo_usage(argv[0]);
				return 1;
			}
			o->lat_iters = v;
			break;
		case 'q':
			o->lat_iters = 1000;
			o->bw_iters = 200;
			break;
		case 'h':
			demo_usage(argv[0]);
			exit(0);
		default:
			demo_usage(argv[0]);
			return 1;
		}
	}
	if (optind < argc) {
		demo_usage(argv[0]);
		return 1;
	}
	return 0;
}

static int demo_child(int sock, const struct demo_opts *o)
{
	struct rcp p;
	int ret;

	ret = rcp_open(&p, sock, o->dev, DEMO_BW_MAX, 0);
	if (!ret)
		ret = rcp_serve(&p);
	if (ret)
		fprintf(stderr, "softrdma-demo (child): %s\n", p.err);
	rcp_close(&p);
	return ret ? 1 : 0;
}

static int demo_latency(struct rcp *p, const char *what, bool use_write,
			unsigned int iters)
{
	double med, p99;
	uint64_t *rtt;
	int ret;

	rtt = calloc(iters, sizeof(*rtt));
	if (!rtt)
		return -ENOMEM;
	if (use_write)
		ret = rcp_write_lat(p, iters, iters / 10, rtt);
	else
		ret = rcp_send_lat(p, iters, iters / 10, rtt);
	if (!ret) {
		/* Half a round trip is the one-way latency. */
		rcp_percentiles(rtt, iters, &med, &p99);
		printf("  %-30s %8.2f us   (p99 %.2f us, %u round trips, "
		       "half of each)\n",
		       what, med / 2000.0, p99 / 2000.0, iters);
	}
	free(rtt);
	return ret;
}

static int demo_bandwidth(struct rcp *p, const char *what, size_t size,
			  unsigned int iters)
{
	uint64_t ns;
	double gbps;
	int ret;

	ret = rcp_write_bw(p, size, iters, 64, 16, &ns);
	if (ret)
		return ret;
	gbps = (double)size * iters / (ns ? ns : 1);
	printf("  %-30s %8.2f GB/s (%.1f Gbit/s, %u writes, 64 in flight, "
	       "data verified)\n",
	       what, gbps, gbps * 8, iters);
	return 0;
}

static int demo_parent(int sock, pid_t child, const struct demo_opts *o)
{
	char lgid[INET6_ADDRSTRLEN], rgid[INET6_ADDRSTRLEN];
	unsigned int big_iters = o->bw_iters / 8 ? o->bw_iters / 8 : 1;
	struct rcp p;
	int ret;

	ret = rcp_open(&p, sock, o->dev, DEMO_BW_MAX, 0);
	if (ret)
		goto out;
	inet_ntop(AF_INET6, p.local.gid.raw, lgid, sizeof(lgid));
	inet_ntop(AF_INET6, p.remote.gid.raw, rgid, sizeof(rgid));
	printf("softrdma demo: two processes, one RC QP pair on %s\n",
	       ibv_get_device_name(p.ctx->device));
	printf("  parent pid %d  QPN 0x%06x  GID %s\n", (int)getpid(),
	       p.local.qpn, lgid);
	printf("  child  pid %d  QPN 0x%06x  GID %s\n", (int)child,
	       p.remote.qpn, rgid);
	if (p.yield)
		printf("  (%d CPUs for two polling processes and the daemon: "
		       "polling yields the CPU)\n",
		       rcp_cpus());
	printf("\n");
	fflush(stdout);

	ret = demo_latency(&p, "RDMA WRITE latency, 2 bytes", true,
			   o->lat_iters);
	if (!ret)
		ret = demo_latency(&p, "SEND latency, 2 bytes", false,
				   o->lat_iters);
	if (!ret)
		ret = demo_bandwidth(&p, "RDMA WRITE bandwidth, 64 KiB",
				     64 << 10, o->bw_iters);
	if (!ret)
		ret = demo_bandwidth(&p, "RDMA WRITE bandwidth, 1 MiB", 1 << 20,
				     big_iters);
	if (!ret)
		ret = rcp_quit(&p);
out:
	if (ret)
		fprintf(stderr, "softrdma-demo: %s\n", p.err);
	rcp_close(&p);
	return ret;
}

int main(int argc, char *argv[])
{
	struct demo_opts o;
	int sv[2], status, ret;
	pid_t pid;

	if (demo_parse(argc, argv, &o))
		return 1;
	/* Fork before any verbs call: each process opens its own device. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		perror("socketpair");
		return 1;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (!pid) {
		close(sv[0]);
		_exit(demo_child(sv[1], &o));
	}
	close(sv[1]);
	ret = demo_parent(sv[0], pid, &o);
	/* Closing our end frees a child stuck waiting for us. */
	close(sv[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "softrdma-demo: the child process failed\n");
		ret = ret ? ret : -EIO;
	}
	if (ret)
		return 1;
	printf("\nAll transfers completed and verified.\n");
	return 0;
}
