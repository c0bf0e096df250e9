/* SPDX-License-Identifier: MIT */
/*
 * Placement by the owner (common/place.h): a thread of ours copies, into
 * our own in-place memory, what the device would otherwise write there
 * through our /proc/self/mem.  One process_vm_readv per batch of jobs
 * from one source process, with our rights, at the moment of the copy:
 * pages we write-protected or unmapped are not written, and the kernel
 * refuses a source we may not read.  A staged job's source is the ring's
 * staging area, which the daemon filled: we read it through our own pid,
 * so that the write into our memory (on demand) is still ours, ordered
 * with our mprotect() and munmap() by the kernel.
 *
 * The thread spins a little after its last job (a WRITE stream keeps it
 * busy; on fewer than 4 CPUs it yields as it spins), then sleeps on the
 * ring's futex; the daemon wakes it.  An application thread that finds
 * its CQ empty runs the jobs posted itself if the thread is not at them
 * (srd_place_help): a receive it waits for then needs no wake-up.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/place.h"
#include "libibverbs/ibverbs.h"

#define SPIN_NS 50000ull
#define BATCH_IOV 1024 /* the kernel's UIO_MAXIOV */

struct srd_place_lib {
	struct srd_context *ctx;
	struct srd_place_ring *ring;
	pthread_t thread;
	/* The next job to run: moved under running, by the thread or by
	 * an application thread polling a CQ (srd_place_help). */
	uint32_t next;
	uint32_t running;  /* 1 while one of them runs jobs */
	uint32_t gen;	   /* fork_gen when started: ours, not a parent's */
	uint32_t finished; /* jobs finished (atomic) */
	uint32_t stop;	   /* atomic */
	pid_t pid;	   /* the process the thread runs in */
	bool few_cpus;	   /* fewer than 4 online: spin yielding */
	uint64_t spin_ns;  /* how long the thread spins once idle */
	struct iovec lo[BATCH_IOV + 1], re[BATCH_IOV + 1];
};

/* Bytes at a fixed place in this process, for its life: a job reads them
 * with the source data, and finds them only in this address space. */
static uint8_t place_token[SRD_PLACE_TOKEN_BYTES];
static pthread_once_t token_once = PTHREAD_ONCE_INIT;

static void token_init(void)
{
	if (getrandom(place_token, sizeof(place_token), 0) !=
	    (ssize_t)sizeof(place_token))
		memset(place_token, 0xa5, sizeof(place_token));
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Is every destination range mapped writable now?  Only asked after a
 * copy failed, to tell our side from the source's. */
static bool dst_writable(const struct srd_place_job *j)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	bool ok = true;

	if (!f)
		return false;
	for (uint32_t i = 0; ok && i < j->ndst; i++) {
		uint64_t a = j->dst[i].addr, end = a + j->dst[i].len;

		rewind(f);
		while (a < end && fgets(line, sizeof(line), f)) {
			uint64_t lo, hi;
			char perm[5];

			if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s", &lo,
				   &hi, perm) != 3)
				continue;
			if (lo <= a && a < hi) {
				if (perm[1] != 'w')
					break;
				a = hi;
			}
		}
		ok = a >= end;
	}
	fclose(f);
	return ok;
}

/* Add job j's ranges to the batch at *n; false: they do not fit. */
static bool batch_add(struct srd_place_lib *pl, const struct srd_place_job *j,
		      int *nl, int *nr)
{
	if (j->nsrc > SRD_PLACE_MAX_IOV || j->ndst > SRD_PLACE_MAX_IOV ||
	    *nl + j->ndst > BATCH_IOV + 1 || *nr + j->nsrc > BATCH_IOV + 1)
		return false;
	for (uint32_t i = 0; i < j->ndst; i++) {
		pl->lo[*nl].iov_base = (void *)(uintptr_t)j->dst[i].addr;
		pl->lo[(*nl)++].iov_len = j->dst[i].len;
	}
	for (uint32_t i = 0; i < j->nsrc; i++) {
		uint64_t a = j->src[i].addr, n = j->src[i].len;

		/* Staged: offsets into our own mapping of the ring. */
		if (!j->src_pid) {
			if (a > SRD_PLACE_STAGE_BYTES ||
			    n > SRD_PLACE_STAGE_BYTES - a)
				return false;
			a += (uintptr_t)pl->ring + SRD_PLACE_STAGE_OFF;
		}
		pl->re[*nr].iov_base = (void *)(uintptr_t)a;
		pl->re[(*nr)++].iov_len = n;
	}
	return true;
}

/* Copy jobs [first, first + n) of one source, token first; true if every
 * byte came and the token with them. */
static bool run_batch(struct srd_place_lib *pl, uint32_t first, uint32_t n)
{
	const struct srd_place_job *j0 =
		&pl->ring->job[first & (SRD_PLACE_SLOTS - 1)];
	uint8_t tok[SRD_PLACE_TOKEN_BYTES];
	uint64_t total = sizeof(tok);
	int nl = 1, nr = 1;
	ssize_t got;

	pl->lo[0].iov_base = tok;
	pl->lo[0].iov_len = sizeof(tok);
	pl->re[0].iov_base = (void *)(uintptr_t)j0->token_addr;
	pl->re[0].iov_len = sizeof(tok);
	for (uint32_t k = 0; k < n; k++) {
		const struct srd_place_job *j =
			&pl->ring->job[(first + k) & (SRD_PLACE_SLOTS - 1)];

		if (!batch_add(pl, j, &nl, &nr))
			return false;
		total += j->len;
	}
	/* By syscall(), not libc's wrapper: a sanitizer intercepts that and
	 * takes the kernel's stores for this thread's own, where they are
	 * the device's, as DMA (ordered for the application by the daemon's
	 * CQEs and its peers' messages). */
	got = syscall(SYS_process_vm_readv, j0->src_pid ? j0->src_pid : pl->pid,
		      pl->lo, nl, pl->re, nr, 0);
	return got == (ssize_t)total && !memcmp(tok, j0->token, sizeof(tok));
}

static uint32_t job_result(struct srd_place_lib *pl, uint32_t seq)
{
	const struct srd_place_job *j =
		&pl->ring->job[seq & (SRD_PLACE_SLOTS - 1)];

	if (run_batch(pl, seq, 1))
		return SRD_PLACE_DONE;
	return dst_writable(j) ? SRD_PLACE_FAIL_SRC : SRD_PLACE_FAIL_DST;
}

static bool same_source(const struct srd_place_job *a,
			const struct srd_place_job *b)
{
	return a->src_pid == b->src_pid && a->token_addr == b->token_addr &&
	       !memcmp(a->token, b->token, sizeof(a->token));
}

/* Claim and run what is posted; returns how many jobs were run. */
static uint32_t run_posted(struct srd_place_lib *pl, uint32_t posted)
{
	struct srd_place_ring *r = pl->ring;
	uint32_t first = __atomic_load_n(&pl->next, __ATOMIC_RELAXED);
	uint32_t n = 0, lo = 0, ro = 0;

	/* A batch: consecutive jobs of one source that fit one call. */
	while (first + n != posted) {
		struct srd_place_job *j =
			&r->job[(first + n) & (SRD_PLACE_SLOTS - 1)];
		uint32_t want = SRD_PLACE_POSTED;

		if (n &&
		    !same_source(&r->job[first & (SRD_PLACE_SLOTS - 1)], j))
			break;
		if (lo + j->ndst > BATCH_IOV || ro + j->nsrc > BATCH_IOV)
			break;
		/* A slot holding a later job: ours was taken back, retired,
		 * and the slot used again. */
		if (__atomic_load_n(&j->seq, __ATOMIC_RELAXED) != first + n)
			break;
		if (!__atomic_compare_exchange_n(
			    &j->state, &want, SRD_PLACE_CLAIMED, false,
			    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			break;
		if (j->seq != first + n) {
			__atomic_store_n(&j->state, SRD_PLACE_POSTED,
					 __ATOMIC_RELEASE);
			break;
		}
		lo += j->ndst;
		ro += j->nsrc;
		n++;
	}
	if (!n) {
		/* Taken back by the daemon: its own to finish. */
		n = 1;
	} else if (run_batch(pl, first, n)) {
		for (uint32_t k = 0; k < n; k++)
			__atomic_store_n(
				&r->job[(first + k) & (SRD_PLACE_SLOTS - 1)]
					 .state,
				SRD_PLACE_DONE, __ATOMIC_RELEASE);
	} else {
		/* Which failed, one by one (what succeeds is copied again:
		 * the same bytes). */
		for (uint32_t k = 0; k < n; k++)
			__atomic_store_n(
				&r->job[(first + k) & (SRD_PLACE_SLOTS - 1)]
					 .state,
				job_result(pl, first + k), __ATOMIC_RELEASE);
	}
	__atomic_store_n(&pl->next, first + n, __ATOMIC_RELAXED);
	__atomic_store_n(&pl->finished, first + n, __ATOMIC_RELEASE);
	__atomic_store_n(&r->finished, first + n, __ATOMIC_RELAXED);
	return n;
}

static uint32_t next_job(struct srd_place_lib *pl)
{
	return __atomic_load_n(&pl->next, __ATOMIC_RELAXED);
}

/* Run every job posted, if no other thread of ours is at it; true if
 * this one did. */
static bool run_all(struct srd_place_lib *pl)
{
	uint32_t idle = 0, posted;

	if (!__atomic_compare_exchange_n(&pl->running, &idle, 1, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return false;
	while ((posted = __atomic_load_n(&pl->ring->posted,
					 __ATOMIC_ACQUIRE)) != next_job(pl))
		while (posted != next_job(pl))
			run_posted(pl, posted);
	__atomic_store_n(&pl->running, 0, __ATOMIC_RELEASE);
	srd_ring_doorbell(pl->ctx);
	return true;
}

/* Bumped in each forked child: a ring started before the fork is the
 * parent's, its jobs are for the parent's memory. */
static uint32_t fork_gen;
static _Atomic uint64_t spin_cache;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void place_atfork_child(void)
{
	__atomic_fetch_add(&fork_gen, 1, __ATOMIC_RELAXED);
}

static void atfork_init(void)
{
	pthread_atfork(NULL, NULL, place_atfork_child);
}

void srd_place_help(struct srd_context *ctx)
{
	struct srd_place_lib *pl =
		__atomic_load_n(&ctx->place, __ATOMIC_ACQUIRE);

	if (!pl || pl->gen != __atomic_load_n(&fork_gen, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&pl->ring->posted, __ATOMIC_ACQUIRE) ==
		    next_job(pl))
		return;
	run_all(pl);
}

static void *worker(void *arg)
{
	struct srd_place_lib *pl = arg;
	struct srd_place_ring *r = pl->ring;
	uint64_t idle_since = now_ns();

	while (!__atomic_load_n(&pl->stop, __ATOMIC_ACQUIRE)) {
		uint32_t posted = __atomic_load_n(&r->posted, __ATOMIC_ACQUIRE);

		if (posted != next_job(pl)) {
			/* An application thread may be running them. */
			if (!run_all(pl))
				sched_yield();
			idle_since = now_ns();
			continue;
		}
		if (now_ns() - idle_since < pl->spin_ns) {
			/* On few CPUs the spin must not starve the daemon and
			 * the application, whose work brings the next job. */
			if (pl->few_cpus)
				sched_yield();
			else
				__builtin_ia32_pause();
			continue;
		}
		/* Sequentially consistent, as the daemon's store of posted
		 * and its load of sleeping: one of us sees the other. */
		__atomic_store_n(&r->sleeping, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&r->posted, __ATOMIC_SEQ_CST) ==
			    next_job(pl) &&
		    !__atomic_load_n(&pl->stop, __ATOMIC_ACQUIRE))
			syscall(SYS_futex, &r->posted, FUTEX_WAIT, next_job(pl),
				NULL, NULL, 0);
		__atomic_store_n(&r->sleeping, 0, __ATOMIC_RELAXED);
		idle_since = now_ns();
	}
	return NULL;
}

static void place_start(struct srd_context *ctx)
{
	struct srd_place_setup_req req = { 0 };
	struct srd_place_setup_rep rep;
	struct srd_place_lib *pl;
	sigset_t all, old;
	int fd = -1;
	struct srd_cmd_args a = {
		.op = SRD_CMD_PLACE_SETUP,
		.req = &req,
		.req_len = sizeof(req),
		.rep = &rep,
		.rep_len = sizeof(rep),
		.rfds = &fd,
		.max_rfds = 1,
	};
	const char *env = secure_getenv("SOFTRDMA_PLACE");
	void *map;

	if (env && !strcmp(env, "0"))
		return;
	pthread_once(&token_once, token_init);
	req.token_addr = (uintptr_t)place_token;
	memcpy(req.token, place_token, sizeof(req.token));
	/* Peers of our user may read our memory with their own rights
	 * only while the kernel would let them anyway. */
	if (prctl(PR_GET_DUMPABLE) == 1)
		req.flags |= SRD_PLACE_F_PEER_READ;
	if (srd_cmd(&ctx->conn, &a) || a.nrfds != 1)
		goto err_fd;
	if (rep.ring_bytes != SRD_PLACE_RING_BYTES ||
	    rep.slots != SRD_PLACE_SLOTS)
		goto err_fd;
	map = mmap(NULL, SRD_PLACE_RING_BYTES, PROT_READ | PROT_WRITE,
		   MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return;
	pl = calloc(1, sizeof(*pl));
	if (!pl) {
		munmap(map, SRD_PLACE_RING_BYTES);
		return;
	}
	pl->ctx = ctx;
	pl->ring = map;
	pl->pid = getpid();
	pl->few_cpus = sysconf(_SC_NPROCESSORS_ONLN) < 4;
	pl->spin_ns =
		srd_env_ns("SOFTRDMA_PLACE_SPIN_US", SPIN_NS, &spin_cache);
	pthread_once(&atfork_once, atfork_init);
	pl->gen = __atomic_load_n(&fork_gen, __ATOMIC_RELAXED);
	/* No signal of the application's runs on this thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&pl->thread, NULL, worker, pl)) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		munmap(map, SRD_PLACE_RING_BYTES);
		free(pl);
		return;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	__atomic_store_n(&ctx->place, pl, __ATOMIC_RELEASE);
	return;

err_fd:
	if (fd >= 0)
		close(fd);
}

/* Started with the first MR the daemon reaches in place, not at open: a
 * process that never has one runs no thread. */
void srd_place_want(struct srd_context *ctx)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

	pthread_mutex_lock(&lock);
	if (ctx->place_ok && !ctx->place_tried) {
		ctx->place_tried = true;
		place_start(ctx);
	}
	pthread_mutex_unlock(&lock);
}

void srd_place_stop(struct srd_context *ctx)
{
	struct srd_place_lib *pl = ctx->place;

	if (!pl)
		return;
	/* A forked child has the context but not the thread. */
	if (pl->pid == getpid()) {
		__atomic_store_n(&pl->stop, 1, __ATOMIC_RELEASE);
		syscall(SYS_futex, &pl->ring->posted, FUTEX_WAKE, 1, NULL, NULL,
			0);
		pthread_join(pl->thread, NULL);
	}
	munmap(pl->ring, SRD_PLACE_RING_BYTES);
	free(pl);
	ctx->place = NULL;
}

void srd_place_quiesce(struct srd_context *ctx)
{
	struct srd_place_lib *pl =
		__atomic_load_n(&ctx->place, __ATOMIC_ACQUIRE);
	uint32_t posted;

	/* After a deregistration: whatever the device was given for that
	 * memory before it went is written before the verb returns. */
	if (!pl || pl->pid != getpid())
		return;
	posted = __atomic_load_n(&pl->ring->posted, __ATOMIC_ACQUIRE);
	while ((int32_t)(__atomic_load_n(&pl->finished, __ATOMIC_ACQUIRE) -
			 posted) < 0)
		sched_yield();
}
