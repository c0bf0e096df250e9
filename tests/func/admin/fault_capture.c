/* SPDX-License-Identifier: MIT */
/*
 * `softrdma fault` and `softrdma capture` change a running daemon: a rule
 * added at run time drops exactly the packets it names (RC recovers, the
 * data arrives intact, the counters say what happened), flush removes it;
 * a capture started at run time records the transfer into a pcap file and
 * stops on command.  Bad rules are refused with the parser's reason.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t_admin.h"

#define LEN 40000 /* 10 packets at an MTU of 4096 */
#define DROPS 3

static void write_once(struct t_pair *p, struct t_buf *src, struct t_buf *dst,
		       int seed)
{
	struct ibv_wc wc;

	t_fill(src->p, LEN, seed);
	t_post_send(p->a, seed, IBV_WR_RDMA_WRITE, src->mr, src->p, LEN,
		    IBV_SEND_SIGNALED, (uintptr_t)dst->p, dst->mr->rkey);
	T_EXPECT_WC(p->cq_a, &wc, seed, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	T_CHECK_FILL(dst->p, LEN, seed);
}

static void check_faults(struct t_pair *p, struct t_buf *src, struct t_buf *dst)
{
	static struct t_run r;
	char line[8192];

	t_cli(&r, "fault", "show", NULL);
	T_EQ(r.status, 0);
	T_EQ(strlen(r.out), 0);

	/* Refused, with the parser's reason; nothing added. */
	t_cli(&r, "fault", "add", "explode", "prob=1", NULL);
	T_EQ(r.status, 1);
	T_EXPECT_IN(r.err, "fault add: ");
	T_EXPECT_IN(r.err, "explode");
	t_cli(&r, "fault", "add", "drop", "prob=2", NULL);
	T_EQ(r.status, 1);
	t_cli(&r, "fault", "add", NULL);
	T_EQ(r.status, 2);
	t_cli(&r, "fault", "show", NULL);
	T_EQ(strlen(r.out), 0);

	/* Only the WRITE packets of this QP, three times. */
	snprintf(line, sizeof(line), "qpn=%u", p->a->qp_num);
	t_cli(&r, "fault", "add", "drop", "op=write", line, "count=3", NULL);
	T_EQ(r.status, 0);
	t_cli(&r, "fault", "show", NULL);
	T_EQ(r.status, 0);
	if (!t_line_with(r.out, "rule 0 drop op=write", line, sizeof(line)))
		T_FAIL("no rule 0 in:\n%s", r.out);
	T_EQ(T_FIELD(line, "injected"), 0);

	write_once(p, src, dst, 11);
	write_once(p, src, dst, 12);
	t_cli(&r, "fault", "show", NULL);
	if (!t_line_with(r.out, "rule 0 ", line, sizeof(line)))
		T_FAIL("no rule 0 in:\n%s", r.out);
	T_EQ(T_FIELD(line, "injected"), DROPS);
	T_GE(T_FIELD(line, "matched"), 20);
	snprintf(line, sizeof(line), "%u", p->a->qp_num);
	t_cli(&r, "statistic", "show", "qp", line, NULL);
	T_EQ(r.status, 0);
	T_GE(T_FIELD(r.out, "retransmits"), 1);

	/* Two rules in one add, listed in JSON; then flushed. */
	t_cli(&r, "fault", "add", "delay", "us=10", "dev=nosuch;", "dup",
	      "dev=nosuch", NULL);
	T_EQ(r.status, 0);
	t_cli(&r, "-j", "fault", NULL);
	T_EQ(r.status, 0);
	T_EXPECT_IN(r.out, "\"index\":1,\"rule\":\"delay us=10 dev=nosuch\"");
	T_EXPECT_IN(r.out, "\"index\":2,\"rule\":\"dup dev=nosuch\"");
	t_cli(&r, "fault", "flush", NULL);
	T_EQ(r.status, 0);
	t_cli(&r, "fault", NULL);
	T_EQ(strlen(r.out), 0);
	write_once(p, src, dst, 13);
}

static void check_capture(struct t_pair *p, struct t_buf *src,
			  struct t_buf *dst)
{
	static struct t_run r;
	char dir[] = "/tmp/srd-capture-XXXXXX", path[256], line[8192];
	unsigned char magic[4];
	struct stat st;
	FILE *f;

	T_ASSERT(mkdtemp(dir));
	T_EQ(chdir(dir), 0);

	t_cli(&r, "capture", NULL);
	T_EQ(r.status, 0);
	T_EXPECT_IN(r.out, "capture inactive");
	t_cli(&r, "capture", "stop", NULL);
	T_EQ(r.status, 1);
	T_EXPECT_IN(r.err, "no capture runs");
	t_cli(&r, "capture", "start", "/nonexistent-dir/x.pcap", NULL);
	T_EQ(r.status, 1);

	/* A relative name: the file lands here, not in the daemon's cwd. */
	t_cli(&r, "capture", "start", "run.pcap", NULL);
	T_EQ(r.status, 0);
	t_cli(&r, "capture", "start", "again.pcap", NULL);
	T_EQ(r.status, 1);
	T_EXPECT_IN(r.err, "runs already");
	write_once(p, src, dst, 21);
	t_cli(&r, "capture", "show", NULL);
	T_EQ(r.status, 0);
	snprintf(path, sizeof(path), "file %s/run.pcap", dir);
	T_EXPECT_IN(r.out, path);
	/* 10 WRITE packets and at least one ACK. */
	T_GE(T_FIELD(r.out, "packets"), 11);
	t_cli(&r, "capture", "stop", NULL);
	T_EQ(r.status, 0);
	if (!t_line_with(r.out, "packets in", line, sizeof(line)))
		T_FAIL("capture stop said:\n%s", r.out);
	T_GE(strtoull(line, NULL, 10), 11);

	snprintf(path, sizeof(path), "%s/run.pcap", dir);
	T_EQ(stat(path, &st), 0);
	T_GE(st.st_size, 24 + 11 * (16 + 14 + 20 + 8 + 12 + 4));
	f = fopen(path, "rb");
	T_ASSERT(f);
	T_EQ(fread(magic, 1, 4, f), 4);
	fclose(f);
	/* pcap, microsecond or nanosecond resolution, either byte order */
	T_ASSERT((magic[0] == 0xd4 && magic[1] == 0xc3) ||
		 (magic[0] == 0x4d && magic[1] == 0x3c) ||
		 (magic[3] == 0xd4 && magic[2] == 0xc3) ||
		 (magic[3] == 0x4d && magic[2] == 0x3c));
	t_cli(&r, "capture", NULL);
	T_EXPECT_IN(r.out, "capture inactive");
	unlink(path);
	T_EQ(chdir("/"), 0);
	rmdir(dir);
}

int main(void)
{
	struct t_dev d;
	struct t_pair p;
	struct t_buf src, dst;

	t_init("admin_fault_capture");
	t_cli_path();
	t_dev_open(&d);
	t_pair_create(&d, &p, IBV_QPT_RC, NULL, NULL);
	t_buf_alloc(&d, &src, LEN, T_ACCESS_ALL);
	t_buf_alloc(&d, &dst, LEN, T_ACCESS_ALL);

	check_faults(&p, &src, &dst);
	check_capture(&p, &src, &dst);

	t_buf_free(&src);
	t_buf_free(&dst);
	t_pair_destroy(&p);
	t_dev_close(&d);
	t_pass();
}
