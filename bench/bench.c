/* SPDX-License-Identifier: MIT */
/*
 * softrdma-bench: in-host RC latency and bandwidth on the soft device,
 * next to references measured in the same run (memcpy,
 * process_vm_writev, a cache line bouncing between two cores) and the
 * daemon's CPU use while idle.  See bench/README.md for how to read it.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon_cpu.h"
#include "rcpair.h"
#include "refs.h"

#define KIB (1024UL)
#define MIB (1024UL * 1024UL)

struct bench_opts {
	const char *dev;
	bool json;
	bool quick;
	bool odp; /* on-demand paging MRs on both sides */
};

struct bench_res {
	char dev[64];
	bool rdma_ok;
	char rdma_err[160];
	unsigned int lat_iters;
	double wlat_med, wlat_p99; /* ns, half round trip */
	double slat_med, slat_p99;
	double wbw_64k, wbw_1m; /* GB/s */
	double rbw_64k;
	double mc_64k_hot, mc_64k_rot, mc_1m_hot, mc_1m_rot;
	double pvm_64k, pvm_1m;
	double cl_med, cl_p99;
	int cl_pinned;
	bool yields; /* the RDMA polling loops call sched_yield() */
	pid_t dpid;
	double idle_secs;
	double idle_cpu;		    /* percent of one core */
	char path_local[16], path_peer[16]; /* how each buffer is reached */
};

static void bench_usage(const char *argv0)
{
	printf("Usage: %s [options]\n", argv0);
	printf("Measures in-host RC latency and bandwidth on the soft RDMA "
	       "device\nagainst memory-copy and cache-line references "
	       "taken in the same run.\n\n");
	printf("Options:\n");
	printf("  -d, --ib-dev=<dev>   use device <dev> (default first "
	       "device found)\n");
	printf("  -j, --json           machine-readable output\n");
	printf("  -o, --odp            register both buffers as ODP MRs "
	       "(IBV_ACCESS_ON_DEMAND)\n");
	printf("  -q, --quick          a short run (a few seconds)\n");
	printf("  -h, --help           print this help\n");
}

static int bench_parse(int argc, char *argv[], struct bench_opts *o)
{
	static const struct option longopts[] = {
		{ .name = "ib-dev", .has_arg = 1, .val = 'd' },
		{ .name = "json", .has_arg = 0, .val = 'j' },
		{ .name = "odp", .has_arg = 0, .val = 'o' },
		{ .name = "quick", .has_arg = 0, .val = 'q' },
		{ .name = "help", .has_arg = 0, .val = 'h' },
		{}
	};
	int c;

	memset(o, 0, sizeof(*o));
	while ((c = getopt_long(argc, argv, "d:joqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->dev = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 'o':
			o->odp = true;
			break;
		case 'q':
			o->quick = true;
			break;
		case 'h':
			bench_usage(argv[0]);
			exit(0);
		default:
			bench_usage(argv[0]);
			return 1;
		}
	}
	if (optind < argc) {
		bench_usage(argv[0]);
		return 1;
	}
	return 0;
}

static int bench_mr_access(const struct bench_opts *o)
{
	return o->odp ? IBV_ACCESS_ON_DEMAND : 0;
}

static int bench_lat(struct rcp *p, bool write, unsigned int iters, double *med,
		     double *p99)
{
	uint64_t *rtt = calloc(iters, sizeof(*rtt));
	int ret;

	if (!rtt)
		return -ENOMEM;
	ret = write ? rcp_write_lat(p, iters, iters / 10, rtt)
		    : rcp_send_lat(p, iters, iters / 10, rtt);
	if (!ret) {
		rcp_percentiles(rtt, iters, med, p99);
		*med /= 2;
		*p99 /= 2;
	}
	free(rtt);
	return ret;
}

static int bench_bw(struct rcp *p, bool read, size_t size, uint64_t total,
		    double *gbps)
{
	unsigned int iters = total / size ? total / size : 1;
	uint64_t ns;
	int ret;

	/* 64 in flight, every 16th signaled, as the README says. */
	ret = read ? rcp_read_bw(p, size, iters, 64, 16, &ns)
		   : rcp_write_bw(p, size, iters, 64, 16, &ns);
	if (!ret)
		*gbps = (double)size * iters / (ns ? ns : 1);
	return ret;
}

static int bench_rdma_parent(struct rcp *p, int sock,
			     const struct bench_opts *o, struct bench_res *r)
{
	uint64_t bw_total = o->quick ? 256 * MIB : 2048 * MIB;
	int ret;

	ret = rcp_open(p, sock, o->dev, MIB, bench_mr_access(o));
	if (ret)
		return ret;
	snprintf(r->dev, sizeof(r->dev), "%s",
		 ibv_get_device_name(p->ctx->device));
	r->yields = p->yield;
	snprintf(r->path_local, sizeof(r->path_local), "%s", p->local.mem_path);
	snprintf(r->path_peer, sizeof(r->path_peer), "%s", p->remote.mem_path);
	ret = bench_lat(p, true, r->lat_iters, &r->wlat_med, &r->wlat_p99);
	if (!ret)
		ret = bench_lat(p, false, r->lat_iters, &r->slat_med,
				&r->slat_p99);
	if (!ret)
		ret = bench_bw(p, false, 64 * KIB, bw_total, &r->wbw_64k);
	if (!ret)
		ret = bench_bw(p, false, MIB, bw_total, &r->wbw_1m);
	if (!ret)
		ret = bench_bw(p, true, 64 * KIB, bw_total, &r->rbw_64k);
	if (ret)
		return ret;

	/* Idle, but with both contexts, QPs and MRs still open: the daemon
	 * must go to sleep anyway. */
	r->dpid = daemon_find_pid();
	r->idle_secs = o->quick ? 2.0 : 3.0;
	r->idle_cpu = daemon_cpu_percent(r->dpid, r->idle_secs);
	return rcp_quit(p);
}

static void bench_rdma(const struct bench_opts *o, struct bench_res *r)
{
	int sv[2], status, ret;
	struct rcp p;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		snprintf(r->rdma_err, sizeof(r->rdma_err), "socketpair: %s",
			 strerror(errno));
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(r->rdma_err, sizeof(r->rdma_err), "fork: %s",
			 strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return;
	}
	if (!pid) {
		close(sv[0]);
		ret = rcp_open(&p, sv[1], o->dev, MIB, bench_mr_access(o));
		if (!ret)
			ret = rcp_serve(&p);
		if (ret)
			fprintf(stderr, "softrdma-bench (child): %s\n", p.err);
		rcp_close(&p);
		_exit(ret ? 1 : 0);
	}
	close(sv[1]);
	ret = bench_rdma_parent(&p, sv[0], o, r);
	if (ret)
		snprintf(r->rdma_err, sizeof(r->rdma_err), "%s", p.err);
	rcp_close(&p);
	close(sv[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		if (!ret)
			snprintf(r->rdma_err, sizeof(r->rdma_err),
				 "the serving process failed");
		ret = -EIO;
	}
	r->rdma_ok = !ret;
}

static void bench_refs(const struct bench_opts *o, struct bench_res *r)
{
	uint64_t total = o->quick ? 512 * MIB : 4096 * MIB;
	uint64_t pvm_total = o->quick ? 256 * MIB : 2048 * MIB;
	unsigned int cl_iters = o->quick ? 100000 : 1000000;

	r->mc_64k_hot = ref_memcpy_gbps(64 * KIB, 0, total);
	r->mc_64k_rot = ref_memcpy_gbps(64 * KIB, 64 * MIB, total);
	r->mc_1m_hot = ref_memcpy_gbps(MIB, 0, total);
	r->mc_1m_rot = ref_memcpy_gbps(MIB, 64 * MIB, total);
	r->pvm_64k = ref_pvm_gbps(64 * KIB, pvm_total);
	r->pvm_1m = ref_pvm_gbps(MIB, pvm_total);
	if (ref_cacheline_ns(cl_iters, &r->cl_med, &r->cl_p99, &r->cl_pinned)) {
		r->cl_med = -1;
		r->cl_p99 = -1;
	}
}

/* a / b, or NAN when either side is missing. */
static double bench_ratio(double a, double b)
{
	if (!(a > 0) || !(b > 0))
		return NAN;
	return a / b;
}

static void bench_text_val(const char *label, double v, const char *unit,
			   const char *note)
{
	if (v > 0 || (v == 0 && !strcmp(unit, "%")))
		printf("  %-44s %10.2f %-5s %s\n", label, v, unit,
		       note ? note : "");
	else
		printf("  %-44s %10s %-5s %s\n", label, "n/a", unit,
		       note ? note : "");
}

static void bench_text(const struct bench_opts *o, const struct bench_res *r,
		       long ncpu)
{
	char note[96];

	printf("softrdma-bench: %s, %ld CPUs online%s%s\n",
	       r->dev[0] ? r->dev : "(no device)", ncpu,
	       o->quick ? ", quick run" : "", o->odp ? ", ODP MRs" : "");
	if (r->yields)
		printf("note: fewer than 3 CPUs for two busy-polling processes "
		       "and softrdmad:\n      the polling loops yield the CPU "
		       "(sched_yield) so the daemon runs\n");
	if (!r->rdma_ok)
		printf("RDMA measurements FAILED: %s\n", r->rdma_err);

	printf("\nsoftrdma, in-host RC (%u round trips, both sides "
	       "busy-poll)\n",
	       r->lat_iters);
	if (r->path_local[0])
		printf("  memory: initiator's buffer %s, responder's %s "
		       "(%s)\n",
		       r->path_local, r->path_peer,
		       geteuid() ? "an ordinary user" : "root");
	snprintf(note, sizeof(note), "p99 %.2f us", r->wlat_p99 / 1000);
	bench_text_val("RDMA WRITE 2 B latency, half RTT, median",
		       r->rdma_ok ? r->wlat_med / 1000 : -1, "us", note);
	snprintf(note, sizeof(note), "p99 %.2f us", r->slat_p99 / 1000);
	bench_text_val("SEND 2 B latency, half RTT, median",
		       r->rdma_ok ? r->slat_med / 1000 : -1, "us", note);
	bench_text_val("RDMA WRITE bandwidth, 64 KiB messages",
		       r->rdma_ok ? r->wbw_64k : -1, "GB/s",
		       "64 in flight, 1 in 16 signaled");
	bench_text_val("RDMA WRITE bandwidth, 1 MiB messages",
		       r->rdma_ok ? r->wbw_1m : -1, "GB/s",
		       "64 in flight, 1 in 16 signaled");
	bench_text_val("RDMA READ bandwidth, 64 KiB messages",
		       r->rdma_ok ? r->rbw_64k : -1, "GB/s",
		       "64 posted, 16 in flight");
	snprintf(note, sizeof(note), "pid %d, over %.0f s", (int)r->dpid,
		 r->idle_secs);
	bench_text_val("softrdmad CPU while idle, % of one core",
		       r->rdma_ok && r->idle_cpu >= 0 ? r->idle_cpu : -1, "%",
		       note);

	printf("\nreferences, same run\n");
	bench_text_val("memcpy 64 KiB, hot buffers", r->mc_64k_hot, "GB/s",
		       "one core");
	bench_text_val("memcpy 64 KiB, rotating over 64 MiB", r->mc_64k_rot,
		       "GB/s", "one core");
	bench_text_val("memcpy 1 MiB, hot buffers", r->mc_1m_hot, "GB/s",
		       "one core");
	bench_text_val("memcpy 1 MiB, rotating over 64 MiB", r->mc_1m_rot,
		       "GB/s", "one core");
	bench_text_val("process_vm_writev 64 KiB, to another process",
		       r->pvm_64k, "GB/s", NULL);
	bench_text_val("process_vm_writev 1 MiB, to another process", r->pvm_1m,
		       "GB/s", NULL);
	snprintf(note, sizeof(note), "p99 %.1f ns%s", r->cl_p99,
		 r->cl_pinned ? ", two cores" : ", ONE core: scheduler-bound");
	bench_text_val("cache-line ping-pong, half RTT, median",
		       r->cl_med > 0 ? r->cl_med : -1, "ns", note);

	printf("\nratios (softrdma / reference)\n");
	snprintf(note, sizeof(note), "vs rotating: %.2f",
		 bench_ratio(r->wbw_1m, r->mc_1m_rot));
	bench_text_val("WRITE 1 MiB / memcpy 1 MiB hot",
		       r->rdma_ok ? bench_ratio(r->wbw_1m, r->mc_1m_hot) : -1,
		       "x", note);
	bench_text_val("WRITE 64 KiB / process_vm_writev 64 KiB",
		       r->rdma_ok ? bench_ratio(r->wbw_64k, r->pvm_64k) : -1,
		       "x", "bandwidth: higher is better");
	bench_text_val("WRITE 1 MiB / process_vm_writev 1 MiB",
		       r->rdma_ok ? bench_ratio(r->wbw_1m, r->pvm_1m) : -1, "x",
		       "bandwidth: higher is better");
	bench_text_val("READ 64 KiB / process_vm_writev 64 KiB",
		       r->rdma_ok ? bench_ratio(r->rbw_64k, r->pvm_64k) : -1,
		       "x", "bandwidth: higher is better");
	bench_text_val("WRITE latency / cache-line latency",
		       r->rdma_ok ? bench_ratio(r->wlat_med, r->cl_med) : -1,
		       "x", "latency: lower is better");
}

/* A JSON number, or null for what was not measured. */
static void bench_json_num(const char *key, double v, bool last)
{
	if (isfinite(v) && v >= 0)
		printf("    \"%s\": %.4f%s\n", key, v, last ? "" : ",");
	else
		printf("    \"%s\": null%s\n", key, last ? "" : ",");
}

static void bench_json(const struct bench_opts *o, const struct bench_res *r,
		       long ncpu)
{
	double ok = r->rdma_ok ? 1 : -1;

	printf("{\n  \"device\": \"%s\",\n", r->dev);
	printf("  \"cpus_online\": %ld,\n", ncpu);
	printf("  \"quick\": %s,\n", o->quick ? "true" : "false");
	printf("  \"odp\": %s,\n", o->odp ? "true" : "false");
	printf("  \"polling_yields\": %s,\n", r->yields ? "true" : "false");
	printf("  \"rdma_ok\": %s,\n", r->rdma_ok ? "true" : "false");
	printf("  \"running_as_root\": %s,\n", geteuid() ? "false" : "true");
	printf("  \"memory_path_initiator\": \"%s\",\n", r->path_local);
	printf("  \"memory_path_responder\": \"%s\",\n", r->path_peer);
	if (!r->rdma_ok) {
		printf("  \"rdma_error\": \"");
		for (const char *c = r->rdma_err; *c; c++)
			if (*c != '"' && *c != '\\' && (unsigned char)*c >= 32)
				putchar(*c);
		printf("\",\n");
	}
	printf("  \"latency_round_trips\": %u,\n", r->lat_iters);
	printf("  \"softrdma\": {\n");
	bench_json_num("write_lat_half_rtt_median_ns", ok * r->wlat_med, 0);
	bench_json_num("write_lat_half_rtt_p99_ns", ok * r->wlat_p99, 0);
	bench_json_num("send_lat_half_rtt_median_ns", ok * r->slat_med, 0);
	bench_json_num("send_lat_half_rtt_p99_ns", ok * r->slat_p99, 0);
	bench_json_num("write_bw_64k_gbps", ok * r->wbw_64k, 0);
	bench_json_num("write_bw_1m_gbps", ok * r->wbw_1m, 0);
	bench_json_num("read_bw_64k_gbps", ok * r->rbw_64k, 0);
	printf("    \"daemon_pid\": %d,\n", (int)r->dpid);
	bench_json_num("daemon_idle_secs", r->idle_secs, 0);
	bench_json_num("daemon_idle_cpu_percent", r->rdma_ok ? r->idle_cpu : -1,
		       1);
	printf("  },\n  \"references\": {\n");
	bench_json_num("memcpy_64k_hot_gbps", r->mc_64k_hot, 0);
	bench_json_num("memcpy_64k_rotating_64m_gbps", r->mc_64k_rot, 0);
	bench_json_num("memcpy_1m_hot_gbps", r->mc_1m_hot, 0);
	bench_json_num("memcpy_1m_rotating_64m_gbps", r->mc_1m_rot, 0);
	bench_json_num("process_vm_writev_64k_gbps", r->pvm_64k, 0);
	bench_json_num("process_vm_writev_1m_gbps", r->pvm_1m, 0);
	bench_json_num("cacheline_half_rtt_median_ns", r->cl_med, 0);
	bench_json_num("cacheline_half_rtt_p99_ns", r->cl_p99, 0);
	printf("    \"cacheline_two_cores\": %s\n",
	       r->cl_pinned ? "true" : "false");
	printf("  },\n  \"ratios\": {\n");
	bench_json_num("write_1m_over_memcpy_1m_hot",
		       ok * bench_ratio(r->wbw_1m, r->mc_1m_hot), 0);
	bench_json_num("write_1m_over_memcpy_1m_rotating",
		       ok * bench_ratio(r->wbw_1m, r->mc_1m_rot), 0);
	bench_json_num("write_64k_over_process_vm_writev_64k",
		       ok * bench_ratio(r->wbw_64k, r->pvm_64k), 0);
	bench_json_num("write_1m_over_process_vm_writev_1m",
		       ok * bench_ratio(r->wbw_1m, r->pvm_1m), 0);
	bench_json_num("read_64k_over_process_vm_writev_64k",
		       ok * bench_ratio(r->rbw_64k, r->pvm_64k), 0);
	bench_json_num("write_lat_over_cacheline_lat",
		       ok * bench_ratio(r->wlat_med, r->cl_med), 1);
	printf("  }\n}\n");
}

int main(int argc, char *argv[])
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct bench_opts o;
	struct bench_res r;

	if (bench_parse(argc, argv, &o))
		return 1;
	memset(&r, 0, sizeof(r));
	r.dpid = -1;
	r.idle_cpu = -1;
	r.lat_iters = o.quick ? 5000 : 50000;
	if (!o.json) {
		printf("softrdma-bench: measuring%s...\n",
		       o.quick ? " (quick)" : "");
		fflush(stdout);
	}

	/* RDMA first, then the references with the device quiet. */
	bench_rdma(&o, &r);
	bench_refs(&o, &r);

	if (o.json)
		bench_json(&o, &r, ncpu);
	else
		bench_text(&o, &r, ncpu);
	return r.rdma_ok ? 0 : 1;
}
