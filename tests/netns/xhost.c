/* SPDX-License-Identifier: MIT */
/*
 * xhost: RDMA across hosts.  Run the server in one network namespace and
 * the client in another (the scripts in tests/netns do):
 *
 *   xhost server [options]
 *   xhost client [options] SERVER
 *   xhost ring --nodes N --index K [options] NEXT
 *
 * Options:
 *   -t, --test NAME   all (ops, then errors), ops, errors, stream, lossy,
 *                     cut (default all)
 *   -p, --port N      TCP port of the control connection (18600)
 *   -d, --dev NAME    RDMA device (default: the first)
 *   -f, --family F    v4 or v6: which of the device's GIDs (v4)
 *   -m, --mtu N       path MTU 256..4096 (default: the port's active MTU)
 *   -s, --bytes N     stream: MiB to move (64)
 *   -n, --count N     lossy: messages per transport (1000)
 *   --loss            lossy: the path loses packets, so some must be lost
 *   --faults          the daemons inject faults: UD may duplicate/reorder
 *   --cut-cmd CMD, --uncut-cmd CMD   cut: how to cut and mend the path
 *   --port-events     cut: the cut takes our link down: expect the port
 *                     to go DOWN (IBV_EVENT_PORT_ERR) and come back
 *   -T, --time S      watchdog (default 120 s)
 *
 * Exit status: 0 pass, 1 fail, 77 skip.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "xhost.h"

static void usage(void)
{
	fprintf(stderr, "usage: xhost server|client|ring [-t TEST] [-p PORT] "
			"[-d DEV] "
			"[-f v4|v6] [-m MTU] [-s MIB] [-n COUNT] [--loss] "
			"[--faults] "
			"[--cut-cmd CMD --uncut-cmd CMD] [--nodes N --index K] "
			"[-T SECS] [HOST]\n");
	exit(T_EXIT_FAIL);
}

static enum ibv_mtu mtu_enum(unsigned long mtu)
{
	switch (mtu) {
	case 256:
		return IBV_MTU_256;
	case 512:
		return IBV_MTU_512;
	case 1024:
		return IBV_MTU_1024;
	case 2048:
		return IBV_MTU_2048;
	case 4096:
		return IBV_MTU_4096;
	}
	return 0;
}

static unsigned long num(const char *s, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > max) {
		fprintf(stderr, "xhost: bad number \"%s\"\n", s);
		usage();
	}
	return v;
}

static bool known_test(const char *t)
{
	static const char *const tests[] = { "all",   "ops", "errors", "stream",
					     "lossy", "cut", "ring" };

	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (!strcmp(t, tests[i]))
			return true;
	return false;
}

static void parse(struct xh *x, int argc, char **argv, unsigned int *secs)
{
	static const struct option opts[] = {
		{ "test", required_argument, NULL, 't' },
		{ "port", required_argument, NULL, 'p' },
		{ "dev", required_argument, NULL, 'd' },
		{ "family", required_argument, NULL, 'f' },
		{ "mtu", required_argument, NULL, 'm' },
		{ "bytes", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'n' },
		{ "time", required_argument, NULL, 'T' },
		{ "loss", no_argument, NULL, 'L' },
		{ "faults", no_argument, NULL, 'F' },
		{ "cut-cmd", required_argument, NULL, 'C' },
		{ "uncut-cmd", required_argument, NULL, 'U' },
		{ "port-events", no_argument, NULL, 'P' },
		{ "nodes", required_argument, NULL, 'N' },
		{ "index", required_argument, NULL, 'I' },
		{ NULL, 0, NULL, 0 },
	};
	const char *role;
	int c;

	if (argc < 2)
		usage();
	role = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "t:p:d:f:m:s:n:T:", opts, NULL)) !=
	       -1) {
		switch (c) {
		case 't':
			x->test = optarg;
			break;
		case 'p':
			x->port = (unsigned int)num(optarg, 65535);
			break;
		case 'd':
			x->devname = optarg;
			break;
		case 'f':
			if (!strcmp(optarg, "v4"))
				x->family = AF_INET;
			else if (!strcmp(optarg, "v6"))
				x->family = AF_INET6;
			else
				usage();
			break;
		case 'm':
			x->mtu = mtu_enum(num(optarg, 4096));
			if (!x->mtu)
				usage();
			break;
		case 's':
			x->bytes = num(optarg, 1ul << 16) * XH_MIB;
			break;
		case 'n':
			x->count = (unsigned int)num(optarg, 1u << 20);
			break;
		case 'T':
			*secs = (unsigned int)num(optarg, 3600);
			break;
		case 'L':
			x->loss = true;
			break;
		case 'F':
			x->faults = true;
			break;
		case 'C':
			x->cut_cmd = optarg;
			break;
		case 'U':
			x->uncut_cmd = optarg;
			break;
		case 'P':
			x->port_events = true;
			break;
		case 'N':
			x->ring_nodes = (unsigned int)num(optarg, 64);
			break;
		case 'I':
			x->ring_index = (unsigned int)num(optarg, 64);
			break;
		default:
			usage();
		}
	}
	if (!strcmp(role, "server")) {
		x->server = true;
	} else if (!strcmp(role, "client") || !strcmp(role, "ring")) {
		if (optind >= argc)
			usage();
		x->host = argv[optind++];
		if (!strcmp(role, "ring"))
			x->test = "ring";
	} else {
		usage();
	}
	if (optind != argc)
		usage();
	if (!known_test(x->test)) {
		fprintf(stderr, "xhost: no test \"%s\"\n", x->test);
		usage();
	}
	if (!strcmp(x->test, "cut") && !x->server &&
	    (!x->cut_cmd || !x->uncut_cmd)) {
		fprintf(stderr, "xhost: cut needs --cut-cmd and --uncut-cmd\n");
		usage();
	}
}

int main(int argc, char **argv)
{
	struct xh x = {
		.test = "all",
		.port = 18600,
		.family = AF_INET,
		.bytes = 64ull * XH_MIB,
		.count = 1000,
		.fd = -1,
		.fd_prev = -1,
	};
	unsigned int secs = 120;
	char name[64];

	parse(&x, argc, argv, &secs);
	if (!strcmp(x.test, "ring"))
		snprintf(name, sizeof(name), "xhost-ring-node%u", x.ring_index);
	else
		snprintf(name, sizeof(name), "xhost-%s-%s", x.test,
			 x.server ? "server" : "client");
	t_init(name);
	alarm(secs);
	srand48((long)time(NULL) ^ (long)getpid() << 8);
	xh_dev_open(&x);

	if (!strcmp(x.test, "ring")) {
		xh_run_ring(&x);
	} else {
		if (x.server) {
			int lfd = xh_listen(x.port);

			x.fd = xh_accept(lfd, 60000);
			close(lfd);
		} else {
			x.fd = xh_connect(x.host, x.port, 30000);
		}
		if (!strcmp(x.test, "all") || !strcmp(x.test, "ops"))
			xh_run_ops(&x);
		if (!strcmp(x.test, "all") || !strcmp(x.test, "errors"))
			xh_run_errors(&x);
		if (!strcmp(x.test, "stream"))
			xh_run_stream(&x);
		if (!strcmp(x.test, "lossy"))
			xh_run_lossy(&x);
		if (!strcmp(x.test, "cut"))
			xh_run_cut(&x);
		/* Same verdict on both sides: the last step is shared. */
		xh_sync_fd(x.fd, 0xe0d, 60000);
	}
	if (x.fd >= 0)
		close(x.fd);
	if (x.fd_prev >= 0)
		close(x.fd_prev);
	xh_dev_close(&x);
	t_pass();
}
