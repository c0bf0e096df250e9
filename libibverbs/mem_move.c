/* SPDX-License-Identifier: MIT */
/*
 * Moving pages between private memory and memfds under the application's
 * feet.  The content is copied and the new mapping then replaces the old
 * one in a single mmap/mremap, so the range never reads as unmapped.
 *
 * A range may hold the live stack of the calling thread (a registered
 * buffer on the stack): whatever this thread writes there between the
 * copy and the swap (return addresses, spilled registers) would be lost.
 * Such moves run on a short-lived thread while the caller is parked in
 * the kernel (see run_job()).
 */
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "libibverbs/maps.h"
#include "libibverbs/mem_move.h"

/* How far from our stack pointer a range must be to be safe to swap. */
#define SRD_STACK_MARGIN (256u * 1024)

struct move_job {
	uintptr_t start;
	size_t len;
	int prot;
	int fd;
	uint64_t off;
	uint64_t ino;
	int (*fn)(struct move_job *j);
	int ret;
};

/* A move run for a caller whose stack is in the range. */
struct parked_job {
	struct move_job *j;
	pid_t caller;	       /* its thread id */
	_Atomic uint32_t done; /* futex word: 0 while the caller waits */
	bool checked;	       /* the caller was seen parked in the kernel */
};

/*
 * Is the caller blocked in FUTEX_WAIT on pj->done?  Then it writes nothing
 * on its stack until it is woken.  fd is /proc/self/task/TID/syscall,
 * which names the system call a blocked thread is in and its arguments.
 */
static bool caller_parked(const struct parked_job *pj, int fd)
{
	unsigned long nr, arg0;
	char buf[128];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return false;
	buf[n] = '\0';
	return sscanf(buf, "%lu %lx", &nr, &arg0) == 2 && nr == SYS_futex &&
	       arg0 == (uintptr_t)&pj->done;
}

static void *job_thread(void *arg)
{
	struct parked_job *pj = arg;
	char path[64];
	int fd;

	/* Until the caller sleeps in the kernel it may still be returning
	 * from pthread_create (writing its stack): wait for that, a while
	 * at most.  Without procfs all that can be done is let it run. */
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall",
		 (int)pj->caller);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	for (int i = 0; i < (fd >= 0 ? 20000 : 100); i++) {
		if (fd >= 0 && caller_parked(pj, fd))
			break;
		sched_yield();
	}
	if (fd >= 0)
		close(fd);
	pj->j->ret = pj->j->fn(pj->j);
	atomic_store_explicit(&pj->done, 1, memory_order_release);
	syscall(SYS_futex, &pj->done, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	return NULL;
}

bool srd_near_stack(uintptr_t start, size_t len)
{
	char probe;
	uintptr_t sp = (uintptr_t)&probe;
	uintptr_t lo = sp > SRD_STACK_MARGIN ? sp - SRD_STACK_MARGIN : 0;
	uintptr_t hi = sp + SRD_STACK_MARGIN;

	return start < hi && start + len > lo;
}

/*
 * A range near our stack moves on another thread while this one is parked
 * in FUTEX_WAIT, so nothing this thread writes on its stack falls between
 * the copy and the swap.  Signals are held off meanwhile: a handler's
 * frame would be such a write.  The job lives on the heap.
 */
static int run_job(struct move_job *j)
{
	struct parked_job *pj;
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t t;
	int err;

	if (!srd_near_stack(j->start, j->len))
		return j->fn(j);
	pj = calloc(1, sizeof(*pj));
	if (!pj)
		return -ENOMEM;
	pj->j = j;
	pj->caller = (pid_t)syscall(SYS_gettid);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 128 * 1024);
	err = pthread_create(&t, &attr, job_thread, pj);
	pthread_attr_destroy(&attr);
	if (err) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		free(pj);
		return -err;
	}
	while (!atomic_load_explicit(&pj->done, memory_order_acquire))
		syscall(SYS_futex, &pj->done, FUTEX_WAIT_PRIVATE, 0, NULL, NULL,
			0);
	pthread_join(t, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	free(pj);
	return j->ret;
}

/*
 * Whole pages are copied, beyond the objects the application registered:
 * the raw system call keeps sanitizers from taking that for an overflow.
 */
static int write_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = syscall(SYS_pwrite64, fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

int srd_read_fd(int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* memfd_create, raising the soft descriptor limit once if we ran out:
 * every segment keeps its memfd open. */
static int new_memfd(void)
{
	int fd = memfd_create(SRD_MEMFD_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0 && errno == EMFILE) {
		struct rlimit rl;

		if (!getrlimit(RLIMIT_NOFILE, &rl) &&
		    rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
			fd = memfd_create(SRD_MEMFD_NAME,
					  MFD_CLOEXEC | MFD_ALLOW_SEALING);
		}
	}
	return fd < 0 ? -errno : fd;
}

static int do_to_memfd(struct move_job *j)
{
	void *p;
	int ret;

	ret = write_all(j->fd, (const void *)j->start, j->len, j->off);
	if (ret)
		return ret;
	p = mmap((void *)j->start, j->len, j->prot, MAP_SHARED | MAP_FIXED,
		 j->fd, (off_t)j->off);
	if (p == MAP_FAILED)
		return -errno;
	return 0;
}

int srd_move_into_fd(uintptr_t start, size_t len, int prot, int fd,
		     uint64_t off)
{
	struct move_job j = { .start = start,
			      .len = len,
			      .prot = prot,
			      .fd = fd,
			      .off = off,
			      .fn = do_to_memfd };

	return run_job(&j);
}

int srd_move_to_memfd(uintptr_t start, size_t len, int prot, uint64_t *ino)
{
	struct stat st;
	int fd, ret;

	fd = new_memfd();
	if (fd < 0)
		return fd;
	if (ftruncate(fd, (off_t)len) < 0 || fstat(fd, &st) < 0) {
		ret = -errno;
		goto err_close;
	}
	ret = srd_move_into_fd(start, len, prot, fd, 0);
	if (ret)
		goto err_close;
	/* The daemon maps the memfd too and refuses one that could shrink
	 * under it. */
	fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK);
	*ino = st.st_ino;
	return fd;

err_close:
	close(fd);
	return ret;
}

static int do_to_private(struct move_job *j)
{
	void *tmp, *p;
	int ret;

	tmp = mmap(NULL, j->len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tmp == MAP_FAILED)
		return -errno;
	/* Read the memfd rather than the range: the application may have
	 * made the range unreadable since. */
	ret = srd_read_fd(j->fd, tmp, j->len, j->off);
	if (!ret && j->prot != (PROT_READ | PROT_WRITE) &&
	    mprotect(tmp, j->len, j->prot) < 0)
		ret = -errno;
	if (!ret) {
		p = mremap(tmp, j->len, j->len, MREMAP_MAYMOVE | MREMAP_FIXED,
			   (void *)j->start);
		if (p != MAP_FAILED)
			return 0;
		ret = -errno;
	}
	munmap(tmp, j->len);
	return ret;
}

int srd_move_to_private(uintptr_t start, size_t len, int prot, int fd,
			uint64_t off)
{
	struct move_job j = { .start = start,
			      .len = len,
			      .prot = prot,
			      .fd = fd,
			      .off = off,
			      .fn = do_to_private };

	return run_job(&j);
}
