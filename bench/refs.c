/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rcpair.h"
#include "refs.h"

static void *ref_map(size_t len, bool shared)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1,
		       0);

	return p == MAP_FAILED ? NULL : p;
}

double ref_memcpy_gbps(size_t size, size_t pool, uint64_t total)
{
	size_t span = pool > size ? pool : size, slots = span / size, off;
	uint64_t n = total / size, i, t0, t1;
	char *src, *dst;

	if (!n)
		n = 1;
	src = ref_map(span, false);
	dst = ref_map(span, false);
	if (!src || !dst)
		goto err;
	/* Fault every page in first: we time copies, not page faults. */
	memset(src, 0x5a, span);
	memset(dst, 0, span);
	for (i = 0; i < slots; i++)
		memcpy(dst + i * size, src + i * size, size);

	t0 = rcp_now_ns();
	for (i = 0; i < n; i++) {
		off = (i % slots) * size;
		memcpy(dst + off, src + off, size);
		/* Keep the compiler from dropping or merging copies. */
		__asm__ volatile("" : : "r"(dst) : "memory");
	}
	t1 = rcp_now_ns();
	munmap(src, span);
	munmap(dst, span);
	return (double)n * size / (t1 - t0 ? t1 - t0 : 1);
err:
	if (src)
		munmap(src, span);
	if (dst)
		munmap(dst, span);
	return -1;
}

double ref_pvm_gbps(size_t size, uint64_t total)
{
	uint64_t n = total / size ? total / size : 1, i, t0 = 0, t1 = 0;
	int ready[2], go[2], status;
	char *dst, *src, c = 0;
	double ret = -1;
	struct iovec l, r;
	pid_t pid;

	dst = ref_map(size, false);
	src = ref_map(size, false);
	if (!dst || !src || pipe(ready))
		goto out_unmap;
	if (pipe(go))
		goto out_ready;
	pid = fork();
	if (pid < 0)
		goto out_go;
	if (!pid) {
		/* Own the pages before the parent writes them, then wait
		 * until it is done. */
		memset(dst, 0, size);
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		close(go[1]);
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(go[0]);
	go[0] = -1;
	memset(src, 0x5a, size);
	if (read(ready[0], &c, 1) != 1)
		goto out_child;

	l.iov_base = src;
	l.iov_len = size;
	r.iov_base = dst; /* the same address in the child, after fork */
	r.iov_len = size;
	for (i = 0; i < n + 8; i++) {
		if (i == 8)
			t0 = rcp_now_ns(); /* the first few warm up */
		if (process_vm_writev(pid, &l, 1, &r, 1, 0) != (ssize_t)size)
			goto out_child;
	}
	t1 = rcp_now_ns();
	ret = (double)n * size / (t1 - t0 ? t1 - t0 : 1);
out_child:
	close(go[1]);
	go[1] = -1;
	waitpid(pid, &status, 0);
out_go:
	if (go[0] >= 0)
		close(go[0]);
	if (go[1] >= 0)
		close(go[1]);
out_ready:
	close(ready[0]);
	close(ready[1]);
out_unmap:
	if (dst)
		munmap(dst, size);
	if (src)
		munmap(src, size);
	return ret;
}

/* The first two CPUs we may run on; false if there is only one. */
static bool ref_two_cpus(int *a, int *b)
{
	cpu_set_t set;
	int i, found = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return false;
	for (i = 0; i < CPU_SETSIZE && found < 2; i++) {
		if (!CPU_ISSET(i, &set))
			continue;
		if (found++)
			*b = i;
		else
			*a = i;
	}
	return found == 2;
}

static void ref_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* Spins until *flag == v; on one CPU it must yield for the peer to run.
 * False after ~5 s without the value. */
static bool ref_wait(volatile uint64_t *flag, uint64_t v, bool yield)
{
	uint64_t deadline = 0;
	unsigned int spins = 0;

	while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != v) {
		if (yield)
			sched_yield();
		if (++spins & 4095)
			continue;
		if (!deadline)
			deadline = rcp_now_ns() + 5000000000ULL;
		else if (rcp_now_ns() > deadline)
			return false;
	}
	return true;
}

#define REF_BATCH 64

int ref_cacheline_ns(unsigned int round_trips, double *median, double *p99,
		     int *pinned)
{
	unsigned int nb, b, j, i;
	volatile uint64_t *flag;
	int cpu_a = 0, cpu_b = 0, status, ret = 0;
	uint64_t *samples, t0;
	cpu_set_t saved;
	bool two, yield;
	pid_t pid;

	two = ref_two_cpus(&cpu_a, &cpu_b);
	*pinned = two;
	yield = !two;
	if (!two && round_trips > 2 * REF_BATCH)
		round_trips = 2 * REF_BATCH; /* scheduler-bound: keep short */
	nb = round_trips / REF_BATCH ? round_trips / REF_BATCH : 1;
	samples = calloc(nb, sizeof(*samples));
	flag = ref_map(4096, true);
	if (!samples || !flag) {
		ret = -ENOMEM;
		goto out;
	}
	*flag = 0;

	pid = fork();
	if (pid < 0) {
		ret = -errno;
		goto out;
	}
	if (!pid) {
		if (two)
			ref_pin(cpu_b);
		for (i = 0; i < nb * REF_BATCH; i++) {
			if (!ref_wait(flag, 2 * (uint64_t)i + 1, yield))
				_exit(1);
			__atomic_store_n(flag, 2 * (uint64_t)i + 2,
					 __ATOMIC_RELEASE);
		}
		_exit(0);
	}

	sched_getaffinity(0, sizeof(saved), &saved);
	if (two)
		ref_pin(cpu_a);
	for (b = 0; b < nb && !ret; b++) {
		t0 = rcp_now_ns();
		for (j = 0; j < REF_BATCH; j++) {
			i = b * REF_BATCH + j;
			__atomic_store_n(flag, 2 * (uint64_t)i + 1,
					 __ATOMIC_RELEASE);
			if (!ref_wait(flag, 2 * (uint64_t)i + 2, yield)) {
				ret = -ETIMEDOUT;
				break;
			}
		}
		/* Round trips in the batch, halved: one-way latency. */
		samples[b] = (rcp_now_ns() - t0) / 2;
	}
	sched_setaffinity(0, sizeof(saved), &saved);
	if (ret)
		kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid ||
	    (!ret && (!WIFEXITED(status) || WEXITSTATUS(status))))
		ret = ret ? ret : -EIO;
	if (!ret) {
		rcp_percentiles(samples, nb, median, p99);
		*median /= REF_BATCH;
		*p99 /= REF_BATCH;
	}
out:
	if (flag)
		munmap((void *)flag, 4096);
	free(samples);
	return ret;
}
