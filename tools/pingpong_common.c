/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pingpong_common.h"

struct pp_optdef {
	int val;
	const char *name;
	int has_arg;
	unsigned int needs; /* PP_OPT_* bit, 0 for options all programs take */
	const char *help;
};

/* Flags and defaults are rdma-core's, so scripts written for its
 * examples run unchanged. */
static const struct pp_optdef pp_optdefs[] = {
	{ 'p', "port", 1, 0,
	  "-p, --port=<port>      listen on/connect to port <port> "
	  "(default 18515)" },
	{ 'd', "ib-dev", 1, 0,
	  "-d, --ib-dev=<dev>     use IB device <dev> "
	  "(default first device found)" },
	{ 'i', "ib-port", 1, 0,
	  "-i, --ib-port=<port>   use port <port> of IB device (default 1)" },
	{ 's', "size", 1, 0, NULL },
	{ 'm', "mtu", 1, PP_OPT_MTU,
	  "-m, --mtu=<size>       path MTU (default 1024)" },
	{ 'q', "num-qp", 1, PP_OPT_NUM_QP,
	  "-q, --num-qp=<num>     number of QPs to use (default 16)" },
	{ 'r', "rx-depth", 1, 0,
	  "-r, --rx-depth=<dep>   number of receives to post at a time "
	  "(default 500)" },
	{ 'n', "iters", 1, 0,
	  "-n, --iters=<iters>    number of exchanges (default 1000)" },
	{ 'l', "sl", 1, 0,
	  "-l, --sl=<sl>          service level value (default 0)" },
	{ 'e', "events", 0, 0,
	  "-e, --events           sleep on CQ events (default poll)" },
	{ 'g', "gid-idx", 1, 0,
	  "-g, --gid-idx=<gid index> local port gid index" },
	{ 'o', "odp", 0, PP_OPT_ODP,
	  "-o, --odp              use on demand paging" },
	{ 'O', "iodp", 0, PP_OPT_IODP,
	  "-O, --iodp             use implicit on demand paging" },
	{ 'P', "prefetch", 0, PP_OPT_IODP,
	  "-P, --prefetch         prefetch an ODP MR" },
	{ 't', "ts", 0, PP_OPT_TS,
	  "-t, --ts               get CQE with timestamp" },
	{ 'c', "chk", 0, 0,
	  "-c, --chk              validate received buffer (exit 1 if bad)" },
	{ 'j', "dm", 0, PP_OPT_DM, "-j, --dm               use device memory" },
	{ 'N', "new_send", 0, PP_OPT_NEW_SEND,
	  "-N, --new_send         use new post send WR API" },
	{ 'h', "help", 0, 0, "-h, --help             print this help" },
};

#define PP_NOPTS (sizeof(pp_optdefs) / sizeof(pp_optdefs[0]))

static void pp_usage(const char *argv0, const struct pp_defaults *def)
{
	size_t i;

	printf("Usage:\n");
	printf("  %s            start a server and wait for connection\n",
	       argv0);
	printf("  %s <host>     connect to server at <host>\n", argv0);
	printf("\nOptions:\n");
	for (i = 0; i < PP_NOPTS; i++) {
		const struct pp_optdef *od = &pp_optdefs[i];

		if (od->needs && !(def->extra & od->needs))
			continue;
		if (od->val == 's')
			printf("  -s, --size=<size>      %s (default %u)\n",
			       def->size_help, def->size);
		else
			printf("  %s\n", od->help);
	}
}

/* strtoul that refuses trailing junk and values above max. */
static int pp_num(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > max || *s == '-')
		return -EINVAL;
	*out = v;
	return 0;
}

static int pp_set(struct pp_opts *o, int c, const char *arg)
{
	unsigned long v;

	switch (c) {
	case 'p':
		if (pp_num(arg, 65535, &v))
			return -EINVAL;
		o->port = v;
		return 0;
	case 'd':
		o->ib_devname = arg;
		return 0;
	case 'i':
		if (pp_num(arg, 255, &v) || v < 1)
			return -EINVAL;
		o->ib_port = v;
		return 0;
	case 's':
		if (pp_num(arg, 1UL << 30, &v) || v < 1)
			return -EINVAL;
		o->size = v;
		return 0;
	case 'm':
		if (pp_num(arg, 4096, &v))
			return -EINVAL;
		o->mtu = pp_mtu_to_enum(v);
		return o->mtu ? 0 : -EINVAL;
	case 'q':
		if (pp_num(arg, PP_MAX_QP - 1, &v) || v < 1)
			return -EINVAL;
		o->num_qp = v;
		return 0;
	case 'r':
		if (pp_num(arg, 1 << 20, &v) || v < 1)
			return -EINVAL;
		o->rx_depth = v;
		return 0;
	case 'n':
		if (pp_num(arg, 1U << 31, &v) || v < 1)
			return -EINVAL;
		o->iters = v;
		return 0;
	case 'l':
		if (pp_num(arg, 15, &v))
			return -EINVAL;
		o->sl = v;
		return 0;
	case 'e':
		o->use_event++;
		return 0;
	case 'g':
		if (pp_num(arg, 255, &v))
			return -EINVAL;
		o->gidx = v;
		return 0;
	case 'o':
		o->use_odp = 1;
		return 0;
	case 'O':
		o->use_odp = 1;
		o->implicit_odp = 1;
		return 0;
	case 'P':
		o->prefetch = 1;
		return 0;
	case 't':
		o->use_ts = 1;
		return 0;
	case 'c':
		o->validate = 1;
		return 0;
	case 'j':
		o->use_dm = 1;
		return 0;
	case 'N':
		o->new_send = 1;
		return 0;
	}
	return -EINVAL;
}

int pp_parse(int argc, char *argv[], const struct pp_defaults *def,
	     struct pp_opts *o, int *exit_code)
{
	struct option longopts[PP_NOPTS + 1];
	char shortopts[2 * PP_NOPTS + 1];
	size_t i, nl = 0, ns = 0;
	int c;

	memset(o, 0, sizeof(*o));
	o->port = 18515;
	o->ib_port = 1;
	o->size = def->size;
	o->mtu = IBV_MTU_1024;
	o->rx_depth = 500;
	o->iters = 1000;
	o->num_qp = def->num_qp;
	o->gidx = -1;

	memset(longopts, 0, sizeof(longopts));
	for (i = 0; i < PP_NOPTS; i++) {
		const struct pp_optdef *od = &pp_optdefs[i];

		if (od->needs && !(def->extra & od->needs))
			continue;
		longopts[nl].name = od->name;
		longopts[nl].has_arg = od->has_arg;
		longopts[nl].val = od->val;
		nl++;
		shortopts[ns++] = od->val;
		if (od->has_arg)
			shortopts[ns++] = ':';
	}
	shortopts[ns] = '\0';

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == 'h') {
			pp_usage(argv[0], def);
			*exit_code = 0;
			return 1;
		}
		if (c == '?' || pp_set(o, c, optarg)) {
			pp_usage(argv[0], def);
			*exit_code = 1;
			return 1;
		}
	}

	if (optind == argc - 1) {
		o->servername = argv[optind];
	} else if (optind < argc) {
		pp_usage(argv[0], def);
		*exit_code = 1;
		return 1;
	}
	return 0;
}

enum ibv_mtu pp_mtu_to_enum(int mtu)
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

struct ibv_device *pp_find_device(const struct pp_opts *o,
				  struct ibv_device ***list)
{
	struct ibv_device **l;
	int i;

	l = ibv_get_device_list(NULL);
	if (!l) {
		perror("Failed to get IB devices list");
		return NULL;
	}
	if (!o->ib_devname) {
		if (!l[0]) {
			fprintf(stderr, "No IB devices found\n");
			goto err_free;
		}
		*list = l;
		return l[0];
	}
	for (i = 0; l[i]; i++) {
		if (!strcmp(ibv_get_device_name(l[i]), o->ib_devname)) {
			*list = l;
			return l[i];
		}
	}
	fprintf(stderr, "IB device %s not found\n", o->ib_devname);
err_free:
	ibv_free_device_list(l);
	return NULL;
}

/*
 * On the wire a GID is 32 hex digits: four groups of eight, each the
 * big-endian value of four raw GID bytes, i.e. the raw bytes in order.
 */
void pp_gid_to_wire(const union ibv_gid *gid, char wire[33])
{
	static const char hex[] = "0123456789abcdef";
	int i;

	for (i = 0; i < 16; i++) {
		wire[2 * i] = hex[gid->raw[i] >> 4];
		wire[2 * i + 1] = hex[gid->raw[i] & 0xf];
	}
	wire[32] = '\0';
}

static int pp_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int pp_wire_to_gid(const char *wire, union ibv_gid *gid)
{
	int i, hi, lo;

	for (i = 0; i < 16; i++) {
		hi = pp_hexval(wire[2 * i]);
		lo = hi < 0 ? -1 : pp_hexval(wire[2 * i + 1]);
		if (lo < 0)
			return -EINVAL;
		gid->raw[i] = hi << 4 | lo;
	}
	return 0;
}

void pp_dest_to_msg(const struct pp_dest *d, char msg[PP_MSG_SIZE])
{
	char gid[33];

	pp_gid_to_wire(&d->gid, gid);
	memset(msg, 0, PP_MSG_SIZE);
	snprintf(msg, PP_MSG_SIZE, "%04x:%06x:%06x:%s", d->lid & 0xffff,
		 d->qpn & 0xffffff, d->psn & 0xffffff, gid);
}

int pp_msg_to_dest(const char *msg, struct pp_dest *d)
{
	char buf[PP_MSG_SIZE + 1];
	unsigned int lid, qpn, psn;
	char gid[33];

	/* The peer's string need not be terminated: bound it ourselves. */
	memcpy(buf, msg, PP_MSG_SIZE);
	buf[PP_MSG_SIZE] = '\0';
	if (sscanf(buf, "%x:%x:%x:%32s", &lid, &qpn, &psn, gid) != 4 ||
	    strlen(gid) != 32 || pp_wire_to_gid(gid, &d->gid))
		return -EINVAL;
	d->lid = lid & 0xffff;
	d->qpn = qpn & 0xffffff;
	d->psn = psn & 0xffffff;
	return 0;
}

void pp_print_dest(const char *what, const struct pp_dest *d, char gid_sep)
{
	char gid[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET6, d->gid.raw, gid, sizeof(gid));
	printf("  %s LID 0x%04x, QPN 0x%06x, PSN 0x%06x%c GID %s\n", what,
	       d->lid, d->qpn, d->psn, gid_sep, gid);
}

int pp_local_dest(struct ibv_context *ctx, const struct pp_opts *o,
		  const struct ibv_port_attr *pa, int qpn, int need_lid,
		  struct pp_dest *d)
{
	memset(d, 0, sizeof(*d));
	d->lid = pa->lid;
	d->qpn = qpn;
	d->psn = lrand48() & 0xffffff;
	if (need_lid && pa->link_layer != IBV_LINK_LAYER_ETHERNET && !d->lid) {
		fprintf(stderr, "Couldn't get local LID\n");
		return -1;
	}
	if (o->gidx >= 0 && ibv_query_gid(ctx, o->ib_port, o->gidx, &d->gid)) {
		fprintf(stderr, "can't read sgid of index %d\n", o->gidx);
		return -1;
	}
	return 0;
}

/* Full-length read or write: the peer may split or merge our messages. */
static int pp_xfer(int fd, void *buf, size_t len, bool wr)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		if (wr)
			n = send(fd, (char *)buf + done, len - done,
				 MSG_NOSIGNAL);
		else
			n = read(fd, (char *)buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += n;
	}
	return 0;
}

static int pp_send_dests(int fd, const struct pp_dest *my, int n)
{
	char msg[PP_MSG_SIZE];
	int i;

	for (i = 0; i < n; i++) {
		pp_dest_to_msg(&my[i], msg);
		if (pp_xfer(fd, msg, sizeof(msg), true))
			return -1;
	}
	return 0;
}

static struct pp_dest *pp_recv_dests(int fd, int n)
{
	char msg[PP_MSG_SIZE];
	struct pp_dest *rem;
	int i;

	rem = calloc(n, sizeof(*rem));
	if (!rem)
		return NULL;
	for (i = 0; i < n; i++) {
		if (pp_xfer(fd, msg, sizeof(msg), false)) {
			fprintf(stderr, "Couldn't read remote address\n");
			goto err;
		}
		if (pp_msg_to_dest(msg, &rem[i])) {
			fprintf(stderr, "Malformed remote address\n");
			goto err;
		}
	}
	return rem;
err:
	free(rem);
	return NULL;
}

struct pp_dest *pp_client_exch(const char *servername, unsigned int port,
			       const struct pp_dest *my, int n)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
	};
	struct addrinfo *res, *t;
	struct pp_dest *rem = NULL;
	char service[8];
	int fd = -1, ret;

	snprintf(service, sizeof(service), "%u", port);
	ret = getaddrinfo(servername, service, &hints, &res);
	if (ret) {
		fprintf(stderr, "%s for %s:%u\n", gai_strerror(ret), servername,
			port);
		return NULL;
	}
	for (t = res; t; t = t->ai_next) {
		fd = socket(t->ai_family, t->ai_socktype | SOCK_CLOEXEC,
			    t->ai_protocol);
		if (fd < 0)
			continue;
		if (!connect(fd, t->ai_addr, t->ai_addrlen))
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		fprintf(stderr, "Couldn't connect to %s:%u\n", servername,
			port);
		return NULL;
	}

	if (pp_send_dests(fd, my, n)) {
		fprintf(stderr, "Couldn't send local address\n");
		goto out;
	}
	rem = pp_recv_dests(fd, n);
	if (!rem)
		goto out;
	if (pp_xfer(fd, "done", sizeof("done"), true)) {
		fprintf(stderr, "Couldn't read/write remote address\n");
		free(rem);
		rem = NULL;
	}
out:
	close(fd);
	return rem;
}

static int pp_listen(unsigned int port)
{
	struct addrinfo hints = {
		.ai_flags = AI_PASSIVE,
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
	};
	struct addrinfo *res, *t;
	char service[8];
	int fd = -1, one = 1, ret;

	snprintf(service, sizeof(service), "%u", port);
	ret = getaddrinfo(NULL, service, &hints, &res);
	if (ret) {
		fprintf(stderr, "%s for port %u\n", gai_strerror(ret), port);
		return -1;
	}
	for (t = res; t; t = t->ai_next) {
		fd = socket(t->ai_family, t->ai_socktype | SOCK_CLOEXEC,
			    t->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, t->ai_addr, t->ai_addrlen) && !listen(fd, 1))
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		fprintf(stderr, "Couldn't listen to port %u\n", port);
	return fd;
}

struct pp_dest *
pp_server_exch(unsigned int port, const struct pp_dest *my, int n,
	       int (*connect_cb)(void *arg, const struct pp_dest *rem),
	       void *arg)
{
	struct pp_dest *rem = NULL;
	char done[sizeof("done")];
	int lfd, fd;

	lfd = pp_listen(port);
	if (lfd < 0)
		return NULL;
	do {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	close(lfd);
	if (fd < 0) {
		fprintf(stderr, "accept() failed\n");
		return NULL;
	}

	rem = pp_recv_dests(fd, n);
	if (!rem)
		goto out;
	if (connect_cb(arg, rem)) {
		fprintf(stderr, "Couldn't connect to remote QP\n");
		goto err_free;
	}
	if (pp_send_dests(fd, my, n) ||
	    pp_xfer(fd, done, sizeof(done), false)) {
		fprintf(stderr, "Couldn't send/recv local address\n");
		goto err_free;
	}
	goto out;

err_free:
	free(rem);
	rem = NULL;
out:
	close(fd);
	return rem;
}

int pp_wait_cq_event(struct ibv_comp_channel *channel, struct ibv_cq *cq,
		     unsigned int *num_events)
{
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	if (ibv_get_cq_event(channel, &ev_cq, &ev_ctx)) {
		fprintf(stderr, "Failed to get cq_event\n");
		return 1;
	}
	++*num_events;
	if (ev_cq != cq) {
		fprintf(stderr, "CQ event for unknown CQ %p\n", (void *)ev_cq);
		return 1;
	}
	if (ibv_req_notify_cq(cq, 0)) {
		fprintf(stderr, "Couldn't request CQ notification\n");
		return 1;
	}
	return 0;
}

void pp_report(unsigned int size, unsigned int iters,
	       const struct timeval *start, const struct timeval *end)
{
	double usec = (end->tv_sec - start->tv_sec) * 1000000.0 +
		      (end->tv_usec - start->tv_usec);
	long long bytes = (long long)size * iters * 2;

	if (usec <= 0)
		usec = 1;
	printf("%lld bytes in %.2f seconds = %.2f Mbit/sec\n", bytes,
	       usec / 1000000., bytes * 8. / usec);
	printf("%u iters in %.2f seconds = %.2f usec/iter\n", iters,
	       usec / 1000000., usec / iters);
}

static unsigned char pp_pattern_byte(size_t i, size_t page)
{
	if (i % page == 0)
		return 0;
	return (unsigned char)(i % 251 + 1);
}

void pp_fill_pattern(char *buf, size_t size)
{
	size_t page = sysconf(_SC_PAGESIZE), i;

	for (i = 0; i < size; i++)
		buf[i] = pp_pattern_byte(i, page);
	/* Test hook: damage one byte so the peer's -c check must object. */
	if (getenv("SOFTRDMA_PP_CORRUPT") && size > 1)
		buf[size - 1] ^= 0x5a;
}

/*
 * rdma-core's -c rule: the first byte of every page is 0 (its client sets
 * only those).  When the page carries our own fill (a peer running these
 * tools), every byte of it is checked as well.
 */
int pp_check_pattern(const char *buf, size_t size)
{
	size_t page = sysconf(_SC_PAGESIZE), start, i;
	int bad = 0;

	for (start = 0; start < size; start += page) {
		size_t end = start + page < size ? start + page : size;
		bool ours = end - start > 1 &&
			    (unsigned char)buf[start + 1] ==
				    pp_pattern_byte(start + 1, page);

		for (i = start; i < end; i++) {
			if (i != start && !ours)
				break;
			if ((unsigned char)buf[i] != pp_pattern_byte(i, page)) {
				printf("invalid data in page %zu\n",
				       start / page);
				bad++;
				break;
			}
		}
	}
	return bad;
}

int pp_arm_and_query_port(struct ibv_context *ctx, struct ibv_cq *cq,
			  const struct pp_opts *o,
			  struct ibv_port_attr *portinfo)
{
	if (o->use_event && ibv_req_notify_cq(cq, 0)) {
		fprintf(stderr, "Couldn't request CQ notification\n");
		return 1;
	}
	if (ibv_query_port(ctx, o->ib_port, portinfo)) {
		fprintf(stderr, "Couldn't get port info\n");
		return 1;
	}
	return 0;
}

int pp_destroy_cq_mr(struct ibv_cq *cq, struct ibv_mr *mr)
{
	if (cq && ibv_destroy_cq(cq)) {
		fprintf(stderr, "Couldn't destroy CQ\n");
		return 1;
	}
	if (mr && ibv_dereg_mr(mr)) {
		fprintf(stderr, "Couldn't deregister MR\n");
		return 1;
	}
	return 0;
}

int pp_close_device(struct ibv_pd *pd, struct ibv_comp_channel *channel,
		    struct ibv_context *context)
{
	if (pd && ibv_dealloc_pd(pd)) {
		fprintf(stderr, "Couldn't deallocate PD\n");
		return 1;
	}
	if (channel && ibv_destroy_comp_channel(channel)) {
		fprintf(stderr, "Couldn't destroy completion channel\n");
		return 1;
	}
	if (context && ibv_close_device(context)) {
		fprintf(stderr, "Couldn't release context\n");
		return 1;
	}
	return 0;
}
