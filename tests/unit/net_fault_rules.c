/* SPDX-License-Identifier: MIT */
/*
 * Fault rules (daemon/fault): the syntax, what each key selects, how
 * count, every, skip and prob pace the injections, rule lists and files
 * (a bad file leaves the rules as they were), and softrdmad re-reading its
 * --fault-file on SIGHUP.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon/net/roce.h"
#include "daemon/fault/fault.h"
#include "tests/unit/t_proto.h"

#define TX SRD_FAULT_TX
#define RX SRD_FAULT_RX
#define BIT(a) (1u << SRD_FAULT_##a)

static void parse_ok(const char *text, struct srd_fault_rule *r)
{
	char err[128] = "";
	int ret = srd_fault_parse(text, r, err, sizeof(err));

	if (ret)
		fprintf(stderr, "\"%s\": %s\n", text, err);
	T_EQ(ret, 0);
}

static void parse_bad(const char *text, const char *why)
{
	struct srd_fault_rule r;
	char err[128] = "";

	T_EQ(srd_fault_parse(text, &r, err, sizeof(err)), -EINVAL);
	if (!strstr(err, why))
		T_FAIL("\"%s\": \"%s\" lacks \"%s\"", text, err, why);
}

static void syntax(void)
{
	struct srd_fault_rule r;

	parse_ok("drop dir=rx qpn=0x12 prob=0.05", &r);
	T_EQ(r.action, SRD_FAULT_DROP);
	T_EQ(r.dir, RX);
	T_EQ(r.any_qpn, false);
	T_EQ(r.qpn, 0x12);
	T_ASSERT(r.prob > 0.049 * 4294967295.0 &&
		 r.prob < 0.051 * 4294967295.0);
	T_ASSERT(r.any_dev && r.any_op);

	parse_ok("  delay us=1000 dev=softrdma0   # a comment", &r);
	T_EQ(r.action, SRD_FAULT_DELAY);
	T_EQ(r.dir, TX); /* the default */
	T_EQ(r.hold_ns, 1000000);
	T_ASSERT(!r.any_dev && !strcmp(r.dev, "softrdma0"));
	T_EQ(r.prob, UINT32_MAX);

	parse_ok("corrupt count=3 op=write", &r);
	T_EQ(r.action, SRD_FAULT_CORRUPT);
	T_EQ(r.count, 3);
	T_ASSERT(!r.any_op);
	T_ASSERT(r.ops[0] & (1ull << ROCE_RC_WRITE_FIRST));
	T_ASSERT(r.ops[0] & (1ull << ROCE_UC_WRITE_ONLY_IMM));
	T_ASSERT(!(r.ops[0] & (1ull << ROCE_RC_SEND_ONLY)));

	parse_ok("reorder n=3 us=50 every=2 skip=1 op=ack,0x64", &r);
	T_EQ(r.action, SRD_FAULT_REORDER);
	T_EQ(r.overtake, 3);
	T_EQ(r.hold_ns, 50000);
	T_EQ(r.every, 2);
	T_EQ(r.skip, 1);
	T_ASSERT(r.ops[0] & (1ull << ROCE_RC_ACKNOWLEDGE));
	T_ASSERT(r.ops[0] & (1ull << ROCE_RC_ATOMIC_ACKNOWLEDGE));
	T_ASSERT(r.ops[1] & (1ull << (ROCE_UD_SEND_ONLY - 64)));

	parse_ok("dup", &r);
	T_EQ(r.action, SRD_FAULT_DUP);

	T_EQ(srd_fault_parse("   # nothing", &r, NULL, 0), -ENODATA);
	T_EQ(srd_fault_parse("", &r, NULL, 0), -ENODATA);
	parse_bad("explode", "unknown action");
	parse_bad("drop prob=1.5", "prob");
	parse_bad("drop prob=x", "prob");
	parse_bad("drop qpn=0x1000000", "qpn");
	parse_bad("drop op=frobnicate", "unknown op");
	parse_bad("drop op=256", "unknown op");
	parse_bad("drop dir=up", "dir");
	parse_bad("drop colour=red", "unknown key");
	parse_bad("drop prob", "key=value");
	parse_bad("drop count=0", "count");
	parse_bad("drop every=0", "every");
}

static unsigned int judge(struct srd_faults *f, enum srd_fault_dir dir,
			  const char *dev, uint32_t qpn, uint8_t op)
{
	struct srd_fault_verdict v;

	srd_faults_judge(f, dir, dev, qpn, op, &v);
	return v.actions;
}

static void selection(void)
{
	struct srd_faults f;
	char err[128];
	unsigned int n = 0;

	srd_faults_init(&f, 42);
	T_EQ(srd_faults_add(&f,
			    "drop dev=a qpn=5 op=send;\n"
			    "# comment line\n"
			    "dup dir=rx op=ack",
			    err, sizeof(err)),
	     0);
	T_EQ(f.n, 2);
	T_EQ(judge(&f, TX, "a", 5, ROCE_RC_SEND_ONLY), BIT(DROP));
	T_EQ(judge(&f, TX, "b", 5, ROCE_RC_SEND_ONLY), 0);
	T_EQ(judge(&f, TX, "a", 6, ROCE_RC_SEND_ONLY), 0);
	T_EQ(judge(&f, TX, "a", 5, ROCE_RC_WRITE_ONLY), 0);
	T_EQ(judge(&f, RX, "a", 5, ROCE_RC_SEND_ONLY), 0);
	T_EQ(judge(&f, RX, "z", 9, ROCE_RC_ACKNOWLEDGE), BIT(DUP));
	T_EQ(judge(&f, TX, "z", 9, ROCE_RC_ACKNOWLEDGE), 0);
	T_ASSERT(srd_faults_may_match(&f, TX, "a"));
	T_ASSERT(!srd_faults_may_match(&f, TX, "b"));
	T_ASSERT(srd_faults_may_match(&f, RX, "b"));
	T_EQ(f.rule[0].matched, 1);
	T_EQ(f.rule[0].injected, 1);
	/* A bad list adds nothing. */
	T_EQ(srd_faults_add(&f, "drop;oops", err, sizeof(err)), -EINVAL);
	T_ASSERT(strstr(err, "rule 2"));
	T_EQ(f.n, 2);
	srd_faults_fini(&f);

	/* Pacing. */
	srd_faults_init(&f, 42);
	T_EQ(srd_faults_add(&f, "drop count=3", err, sizeof(err)), 0);
	for (int i = 0; i < 100; i++)
		n += !!judge(&f, TX, "a", 1, 0);
	T_EQ(n, 3);
	srd_faults_fini(&f);

	srd_faults_init(&f, 42);
	T_EQ(srd_faults_add(&f, "drop every=4 skip=2", err, sizeof(err)), 0);
	for (int i = 1; i <= 20; i++)
		T_EQ(!!judge(&f, TX, "a", 1, 0), i > 2 && (i - 2) % 4 == 0);
	srd_faults_fini(&f);

	srd_faults_init(&f, 42);
	T_EQ(srd_faults_add(&f, "delay us=7 prob=0.25;reorder n=2 us=9", err,
			    sizeof(err)),
	     0);
	n = 0;
	for (int i = 0; i < 100000; i++) {
		struct srd_fault_verdict v;

		srd_faults_judge(&f, TX, "a", 1, 0, &v);
		T_ASSERT(v.actions & BIT(REORDER));
		T_EQ(v.overtake, 2);
		if (v.actions & BIT(DELAY)) {
			T_EQ(v.hold_ns, 9000); /* the longer hold wins */
			n++;
		}
	}
	/* 25 % of 100000: 25000, sd 137. */
	T_ASSERT(n > 24000 && n < 26000);
	T_EQ(f.injected[SRD_FAULT_DELAY], n);
	srd_faults_fini(&f);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	T_ASSERT(f);
	fputs(text, f);
	T_ASSERT(!fclose(f));
}

static void files(const char *path)
{
	struct srd_faults f;
	char err[256];

	srd_faults_init(&f, 1);
	T_EQ(srd_faults_add(&f, "drop qpn=1", err, sizeof(err)), 0);
	srd_faults_fix(&f);
	write_file(path, "dup\n\n# two rules\ncorrupt dir=rx\n");
	T_EQ(srd_faults_load_file(&f, path, err, sizeof(err)), 0);
	T_EQ(f.n, 3);
	T_EQ(f.rule[0].action, SRD_FAULT_DROP);
	T_EQ(f.rule[2].action, SRD_FAULT_CORRUPT);
	write_file(path, "delay\nbogus\n");
	T_EQ(srd_faults_load_file(&f, path, err, sizeof(err)), -EINVAL);
	T_EQ(f.n, 3);
	write_file(path, "");
	T_EQ(srd_faults_load_file(&f, path, err, sizeof(err)), 0);
	T_EQ(f.n, 1);
	T_ASSERT(srd_faults_load_file(&f, "/nonexistent/x", err, sizeof(err)) ==
		 -ENOENT);
	srd_faults_fini(&f);
}

/* Wait until the log holds text (the daemon logs asynchronously to us). */
static void wait_log(const char *log, const char *text, int count)
{
	for (int tries = 0; tries < 500; tries++) {
		char buf[65536];
		FILE *f = fopen(log, "r");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		int seen = 0;

		if (f)
			fclose(f);
		buf[n] = 0;
		for (char *p = buf; (p = strstr(p, text)); p++)
			seen++;
		if (seen >= count)
			return;
		usleep(10000);
	}
	T_FAIL("log %s never said \"%s\" %d times", log, text, count);
}

static void sighup(const char *rules)
{
	char log[] = "/tmp/net_fault_rules.log.XXXXXX";
	const char *extra[] = { "--fault-file", rules,	   "--log",	 log,
				"--no-udp",	"--fault", "drop qpn=7", NULL };
	struct t_daemon td;
	int fd = mkstemp(log);

	T_ASSERT(fd >= 0);
	close(fd);
	write_file(rules, "dup prob=0.5\n");
	t_daemon_start(&td, extra);
	wait_log(log, "faults: 2 rules", 1);
	write_file(rules, "dup prob=0.5\nreorder\ndelay us=10\n");
	T_ASSERT(!kill(td.pid, SIGHUP));
	wait_log(log, "faults: 4 rules", 1);
	write_file(rules, "dup prob=7\n");
	T_ASSERT(!kill(td.pid, SIGHUP));
	wait_log(log, "rules unchanged", 1);
	T_EQ(t_daemon_stop(&td), 0);
	unlink(log);
}

int main(void)
{
	char path[] = "/tmp/net_fault_rules.XXXXXX";
	int fd = mkstemp(path);

	T_ASSERT(fd >= 0);
	close(fd);
	syntax();
	selection();
	files(path);
	sighup(path);
	unlink(path);
	printf("PASS net_fault_rules\n");
	return T_EXIT_PASS;
}
