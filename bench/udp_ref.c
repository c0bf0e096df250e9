/* SPDX-License-Identifier: MIT */
/*
 * udp_ref: what the kernel's UDP does between two hosts, the yardstick for
 * RoCE over the same path (bench/netns/run.sh).
 *
 *   udp_ref sink [-p PORT] [-T SECS]
 *	receives until the sender says it is done (or SECS, default 60),
 *	with UDP_GRO and recvmmsg; prints the goodput from the first to the
 *	last byte received
 *   udp_ref send HOST [-p PORT] [-t SECS] [-s SIZE] [--no-gso]
 *	sends SIZE-byte datagrams (default 4096) for SECS (default 3): with
 *	UDP_SEGMENT, as many as fit in one 64 KiB buffer per send, eight
 *	buffers per sendmmsg
 *   udp_ref send HOST --roce-write [-p PORT] [-t SECS]
 *	sends the datagrams of 64 KiB RC WRITEs at path MTU 4096, batched as
 *	softrdma batches them: the first packet carries a RETH, so it is 16
 *	bytes longer than the other fifteen, and UDP GSO lets only a batch's
 *	last segment differ; each message takes two sends (8240 bytes as
 *	4128 + 4112, then 14 x 4112).  What the kernel's UDP allows RoCE's
 *	packet sizes on this path, before any RDMA work
 *   udp_ref pong [-p PORT] [-T SECS]
 *	answers every datagram with itself
 *   udp_ref ping HOST [-p PORT] [-n N] [-s SIZE]
 *	N round trips of SIZE bytes (default 10000 of 16), one at a time;
 *	prints the median and 99th percentile in microseconds
 *
 * Both ends of the ping-pong busy-poll (MSG_DONTWAIT), as perftest's
 * latency tests do, so the two compare.  Output lines start with a key
 * ("goodput_gbps", "rtt_median_us", ...) for scripts.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define END_MAGIC "udp_ref:end"
#define MAX_DGRAM 65507
#define BATCH 8
#define RX_BATCH 32
#define RX_BUF 65536

struct opts {
	const char *host;
	unsigned int port;
	double secs;
	unsigned int size;
	unsigned int count;
	bool gso;
	bool roce_write;
};

/* One 64 KiB RC WRITE at path MTU 4096: BTH 12 + payload + ICRC 4, the
 * first packet with a RETH (16) too. */
#define RW_FIRST (12 + 16 + 4096 + 4)
#define RW_OTHER (12 + 4096 + 4)
#define RW_PKTS 16

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static __attribute__((noreturn)) void die(const char *what)
{
	fprintf(stderr, "udp_ref: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void big_buffers(int fd)
{
	int sz = 64 << 20;

	/* As root the limits can be passed; otherwise take what we get. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
}

static int bound_socket(unsigned int port)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6,
				   .sin6_port = htons((uint16_t)port),
				   .sin6_addr = IN6ADDR_ANY_INIT };
	int fd, zero = 0;

	fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket");
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		die("bind");
	big_buffers(fd);
	return fd;
}

static int connected_socket(const char *host, unsigned int port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *res;
	char service[16];
	int fd, gai;

	snprintf(service, sizeof(service), "%u", port);
	gai = getaddrinfo(host, service, &hints, &res);
	if (gai) {
		fprintf(stderr, "udp_ref: %s: %s\n", host, gai_strerror(gai));
		exit(1);
	}
	fd = socket(res->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket");
	if (connect(fd, res->ai_addr, res->ai_addrlen))
		die("connect");
	freeaddrinfo(res);
	big_buffers(fd);
	return fd;
}

/* The datagrams in one received buffer: GRO says how it was cut. */
static uint64_t datagrams(struct msghdr *mh, size_t len)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c))
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
			int gso;

			memcpy(&gso, CMSG_DATA(c), sizeof(gso));
			if (gso > 0)
				return (len + (size_t)gso - 1) / (size_t)gso;
		}
	return 1;
}

static int run_sink(const struct opts *o)
{
	static uint8_t buf[RX_BATCH][RX_BUF];
	static char ctl[RX_BATCH][CMSG_SPACE(sizeof(int))];
	struct mmsghdr mm[RX_BATCH];
	struct iovec iov[RX_BATCH];
	uint64_t bytes = 0, dgrams = 0, calls = 0;
	double first = 0, last = 0, end = now() + o->secs;
	bool done = false;
	int fd, one = 1, gro;

	fd = bound_socket(o->port);
	gro = !setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof(one));
	printf("sink: port %u, UDP_GRO %s\n", o->port, gro ? "on" : "off");
	fflush(stdout);
	while (!done) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int n, wait_ms = bytes ? 2000 : (int)((end - now()) * 1e3);

		if (wait_ms <= 0 || poll(&pfd, 1, wait_ms) <= 0)
			break; /* silence: the sender is gone */
		for (int i = 0; i < RX_BATCH; i++) {
			iov[i] = (struct iovec){ buf[i], RX_BUF };
			mm[i].msg_hdr = (struct msghdr){
				.msg_iov = &iov[i],
				.msg_iovlen = 1,
				.msg_control = ctl[i],
				.msg_controllen = sizeof(ctl[i]),
			};
		}
		n = recvmmsg(fd, mm, RX_BATCH, MSG_DONTWAIT, NULL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			die("recvmmsg");
		}
		calls++;
		for (int i = 0; i < n; i++) {
			size_t len = mm[i].msg_len;

			if (len == sizeof(END_MAGIC) &&
			    !memcmp(buf[i], END_MAGIC, sizeof(END_MAGIC))) {
				done = true;
				continue;
			}
			if (!bytes)
				first = now();
			bytes += len;
			dgrams += datagrams(&mm[i].msg_hdr, len);
			last = now();
		}
	}
	close(fd);
	if (!bytes || last <= first) {
		fprintf(stderr, "udp_ref: sink received nothing\n");
		return 1;
	}
	printf("sink: %llu bytes in %llu datagrams (%llu receive calls), "
	       "%.3f s\n",
	       (unsigned long long)bytes, (unsigned long long)dgrams,
	       (unsigned long long)calls, last - first);
	printf("goodput_gbps %.3f\n", (double)bytes / (last - first) / 1e9);
	return 0;
}

/* Even messages: the first packet and the second (gso_size the first's,
 * the last segment shorter); odd ones: the other fourteen. */
static void roce_write_batches(struct mmsghdr *mm, struct iovec *iov,
			       uint8_t *buf, uint8_t (*ctl)[CMSG_SPACE(2)])
{
	for (int i = 0; i < BATCH; i++) {
		struct msghdr *mh = &mm[i].msg_hdr;
		struct cmsghdr *c;
		uint16_t seg = i % 2 ? RW_OTHER : RW_FIRST;

		iov[i].iov_base = buf;
		iov[i].iov_len = i % 2 ? (size_t)(RW_PKTS - 2) * RW_OTHER
				       : (size_t)RW_FIRST + RW_OTHER;
		mh->msg_control = ctl[i];
		mh->msg_controllen = CMSG_SPACE(sizeof(seg));
		c = CMSG_FIRSTHDR(mh);
		c->cmsg_level = SOL_UDP;
		c->cmsg_type = UDP_SEGMENT;
		c->cmsg_len = CMSG_LEN(sizeof(seg));
		memcpy(CMSG_DATA(c), &seg, sizeof(seg));
	}
}

static int run_send(const struct opts *o)
{
	static uint8_t buf[MAX_DGRAM];
	static uint8_t ctl[BATCH][CMSG_SPACE(2)];
	struct mmsghdr mm[BATCH];
	struct iovec iov[BATCH];
	unsigned int per = 1, seg = o->size;
	uint64_t bytes = 0, calls = 0;
	double t0, t = 0;
	int fd;

	if (!o->size || o->size > MAX_DGRAM) {
		fprintf(stderr, "udp_ref: size %u\n", o->size);
		return 1;
	}
	memset(buf, 0xab, sizeof(buf));
	fd = connected_socket(o->host, o->port);
	if (o->roce_write) {
		per = RW_PKTS / 2;
		seg = RW_OTHER;
	} else if (o->gso) {
		/* As many whole datagrams as one 64 KiB send can carry. */
		per = (MAX_DGRAM - 8) / o->size;
		if (per > 64)
			per = 64;
		if (per < 2 ||
		    setsockopt(fd, SOL_UDP, UDP_SEGMENT, &seg, sizeof(seg))) {
			fprintf(stderr, "udp_ref: no UDP_SEGMENT, plain "
					"datagrams\n");
			per = 1;
		}
	}
	for (int i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){ buf, (size_t)per * o->size };
		mm[i].msg_hdr =
			(struct msghdr){ .msg_iov = &iov[i], .msg_iovlen = 1 };
	}
	if (o->roce_write)
		roce_write_batches(mm, iov, buf, ctl);
	t0 = now();
	do {
		int n = sendmmsg(fd, mm, BATCH, 0);

		if (n < 0) {
			if (errno == EINTR || errno == ENOBUFS ||
			    errno == EAGAIN || errno == ECONNREFUSED)
				continue;
			die("sendmmsg");
		}
		calls++;
		for (int i = 0; i < n; i++)
			bytes += mm[i].msg_len;
		t = now() - t0;
	} while (t < o->secs);
	/* Tell the sink, a few times in case one is dropped. */
	for (int i = 0; i < 5; i++) {
		int off = 0;

		setsockopt(fd, SOL_UDP, UDP_SEGMENT, &off, sizeof(off));
		send(fd, END_MAGIC, sizeof(END_MAGIC), 0);
		usleep(2000);
	}
	close(fd);
	if (o->roce_write)
		printf("send: %llu bytes as 64 KiB RC WRITE datagrams (%u + "
		       "%u bytes per message, %u datagrams), %llu sendmmsg "
		       "calls, %.3f s\n",
		       (unsigned long long)bytes, RW_FIRST, RW_OTHER, RW_PKTS,
		       (unsigned long long)calls, t);
	else
		printf("send: %llu bytes of %u-byte datagrams, %u per send "
		       "(UDP GSO %s), %llu sendmmsg calls, %.3f s\n",
		       (unsigned long long)bytes, o->size, per,
		       per > 1 ? "on" : "off", (unsigned long long)calls, t);
	printf("send_gbps %.3f\n", (double)bytes / t / 1e9);
	return 0;
}

static int run_pong(const struct opts *o)
{
	static uint8_t buf[RX_BUF];
	struct sockaddr_storage from;
	double end = now() + o->secs;
	unsigned long n = 0;
	int fd;

	fd = bound_socket(o->port);
	printf("pong: port %u\n", o->port);
	fflush(stdout);
	while (now() < end) {
		socklen_t fl = sizeof(from);
		ssize_t len = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT,
				       (struct sockaddr *)&from, &fl);

		if (len < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			die("recvfrom");
		}
		if ((size_t)len == sizeof(END_MAGIC) &&
		    !memcmp(buf, END_MAGIC, sizeof(END_MAGIC)))
			break;
		if (sendto(fd, buf, (size_t)len, 0, (struct sockaddr *)&from,
			   fl) < 0)
			die("sendto");
		n++;
	}
	close(fd);
	printf("pong: %lu answered\n", n);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int run_ping(const struct opts *o)
{
	static uint8_t buf[RX_BUF], got[RX_BUF];
	unsigned int warm = o->count / 10, total = o->count + warm, lost = 0;
	double *rtt = calloc(o->count, sizeof(*rtt));
	int fd;

	if (!rtt || !o->count || o->size > RX_BUF)
		return 1;
	fd = connected_socket(o->host, o->port);
	for (unsigned int i = 0; i < total; i++) {
		double t0, deadline;
		ssize_t len;

		memcpy(buf, &i, sizeof(i));
		t0 = now();
		deadline = t0 + 1.0;
		if (send(fd, buf, o->size, 0) < 0) {
			if (errno == ECONNREFUSED) {
				/* The pong end is not up yet. */
				usleep(10000);
				i--;
				continue;
			}
			die("send");
		}
		for (;;) {
			len = recv(fd, got, sizeof(got), MSG_DONTWAIT);
			if (len >= (ssize_t)sizeof(i) &&
			    !memcmp(got, &i, sizeof(i)))
				break;
			if (len < 0 && errno != EAGAIN && errno != EINTR &&
			    errno != ECONNREFUSED)
				die("recv");
			if (now() > deadline) {
				len = -1;
				break;
			}
		}
		if (len < 0) {
			lost++;
			if (lost > 10) {
				fprintf(stderr, "udp_ref: no answers\n");
				return 1;
			}
			i--;
			continue;
		}
		if (i >= warm)
			rtt[i - warm] = (now() - t0) * 1e6;
	}
	send(fd, END_MAGIC, sizeof(END_MAGIC), 0);
	close(fd);
	qsort(rtt, o->count, sizeof(*rtt), cmp_double);
	printf("ping: %u round trips of %u bytes (%u warm-up), busy polling\n",
	       o->count, o->size, warm);
	printf("rtt_median_us %.2f\n", rtt[o->count / 2]);
	printf("rtt_p99_us %.2f\n", rtt[(size_t)o->count * 99 / 100]);
	free(rtt);
	return 0;
}

static __attribute__((noreturn)) void usage(void)
{
	fprintf(stderr, "usage: udp_ref sink [-p PORT] [-T SECS]\n"
			"       udp_ref send HOST [-p PORT] [-t SECS] [-s "
			"SIZE] "
			"[--no-gso | --roce-write]\n"
			"       udp_ref pong [-p PORT] [-T SECS]\n"
			"       udp_ref ping HOST [-p PORT] [-n N] [-s "
			"SIZE]\n");
	exit(2);
}

static unsigned long num(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	struct opts o = { .port = 19500, .gso = true };
	const char *mode;
	bool sized = false;

	if (argc < 2)
		usage();
	mode = argv[1];
	o.secs = !strcmp(mode, "send") ? 3 : 60;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--no-gso")) {
			o.gso = false;
		} else if (!strcmp(a, "--roce-write")) {
			o.roce_write = true;
		} else if (a[0] == '-' && i + 1 < argc) {
			const char *v = argv[++i];

			if (!strcmp(a, "-p"))
				o.port = (unsigned int)num(v);
			else if (!strcmp(a, "-t") || !strcmp(a, "-T"))
				o.secs = (double)num(v);
			else if (!strcmp(a, "-s") && (sized = true))
				o.size = (unsigned int)num(v);
			else if (!strcmp(a, "-n"))
				o.count = (unsigned int)num(v);
			else
				usage();
		} else if (!o.host && a[0] != '-') {
			o.host = a;
		} else {
			usage();
		}
	}
	if (!sized)
		o.size = !strcmp(mode, "ping") ? 16 : 4096;
	if (!o.count)
		o.count = 10000;
	if (!strcmp(mode, "sink") && !o.host)
		return run_sink(&o);
	if (!strcmp(mode, "pong") && !o.host)
		return run_pong(&o);
	if (!strcmp(mode, "send") && o.host)
		return run_send(&o);
	if (!strcmp(mode, "ping") && o.host)
		return run_ping(&o);
	usage();
}
