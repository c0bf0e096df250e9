/* SPDX-License-Identifier: MIT */
/*
 * Moving pages between private memory and memfds under the application's
 * feet.  The content is copied and the new mapping then replaces the old
 * one in a single mmap/mremap, so the range never reads as unmapped.
 *
 * Nothing written to the range between the copy and the swap may be lost:
 * a move is guarded by a userfaultfd that write-protects the range first
 * (UFFDIO_REGISTER_MODE_WP + UFFDIO_WRITEPROTECT, unpopulated pages too).
 * Writers, threads and the kernel's copy_to_user alike, block in the fault
 * until the new mapping is in place, are then woken and write to it.
 * Without a userfaultfd that can do this (srd_move_guard()), nothing is
 * moved at all (mem.c).
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
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/userfaultfd.h>

#include "libibverbs/maps.h"
#include "libibverbs/mem_move.h"

#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(0xAA, 0x00) /* Linux 6.1 */
#endif
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13) /* Linux 6.4 */
#endif

/* What a guard needs: write-protect faults, on shmem (moving back) and on
 * pages never touched yet. */
#define SRD_UFFD_FEATURES                                                   \
	(UFFD_FEATURE_PAGEFAULT_FLAG_WP | UFFD_FEATURE_WP_HUGETLBFS_SHMEM | \
	 UFFD_FEATURE_WP_UNPOPULATED)

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

/* A userfaultfd from /dev/userfaultfd (Linux 6.1), which its mode lets
 * an administrator open to users that userfaultfd() refuses. */
static int uffd_dev_open(void)
{
	int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC), fd;

	if (dev < 0)
		return -1;
	fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
	close(dev);
	return fd;
}

/* A userfaultfd with the guard's features, or -errno.  No
 * UFFD_USER_MODE_ONLY: the kernel's own writes (read(2) into the range)
 * must wait in the fault too. */
static int uffd_open(void)
{
	struct uffdio_api api = { .api = UFFD_API,
				  .features = SRD_UFFD_FEATURES };
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	int err;

	if (fd < 0 && errno == EPERM)
		fd = uffd_dev_open();
	if (fd < 0)
		return -errno;
	if (ioctl(fd, UFFDIO_API, &api) < 0 ||
	    (api.features & SRD_UFFD_FEATURES) != SRD_UFFD_FEATURES) {
		err = errno ? -errno : -ENOSYS;
		close(fd);
		return err;
	}
	return fd;
}

static enum srd_move_guard guard_probe(void)
{
	const char *env = secure_getenv("SOFTRDMA_MOVE_GUARD");
	int fd;

	if (env && !strcmp(env, "none"))
		return SRD_GUARD_NONE;
	fd = uffd_open();
	if (fd < 0)
		return SRD_GUARD_NONE;
	close(fd);
	return SRD_GUARD_UFFD;
}

enum srd_move_guard srd_move_guard(void)
{
	static int mode = -1;
	int m = __atomic_load_n(&mode, __ATOMIC_RELAXED);

	/* Threads asking at once may all probe: same answer. */
	if (m < 0) {
		m = (int)guard_probe();
		__atomic_store_n(&mode, m, __ATOMIC_RELAXED);
	}
	return (enum srd_move_guard)m;
}

/* Write-protect [start, start + len) until guard_off().  Returns the
 * userfaultfd or -errno (the range is then untouched). */
static int guard_on(uintptr_t start, size_t len)
{
	struct uffdio_register reg = {
		.range = { .start = start, .len = len },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};
	struct uffdio_writeprotect wp = {
		.range = { .start = start, .len = len },
		.mode = UFFDIO_WRITEPROTECT_MODE_WP,
	};
	int fd = uffd_open(), err;

	if (fd < 0)
		return fd;
	if (ioctl(fd, UFFDIO_REGISTER, &reg) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (ioctl(fd, UFFDIO_WRITEPROTECT, &wp) < 0) {
		err = -errno;
		ioctl(fd, UFFDIO_UNREGISTER, &reg.range);
		close(fd);
		return err;
	}
	return fd;
}

/*
 * End a guard.  swapped: a new mapping replaced the range, so the blocked
 * writers are woken to fault again, on it.  Otherwise the old mapping
 * is unprotected (which wakes them) and unregistered.  Closing the
 * userfaultfd wakes whoever is left.
 */
static void guard_off(int fd, uintptr_t start, size_t len, bool swapped)
{
	struct uffdio_range r = { .start = start, .len = len };
	struct uffdio_writeprotect wp = { .range = r, .mode = 0 };

	if (swapped) {
		ioctl(fd, UFFDIO_WAKE, &r);
	} else {
		ioctl(fd, UFFDIO_WRITEPROTECT, &wp);
		ioctl(fd, UFFDIO_UNREGISTER, &r);
	}
	close(fd);
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

/* Write-protect j's range if anybody can write there: *g is the guard's
 * userfaultfd, -1 when none is needed.  0 or -errno. */
static int job_guard(const struct move_job *j, int *g)
{
	*g = -1;
	if (!(j->prot & PROT_WRITE))
		return 0;
	*g = guard_on(j->start, j->len);
	return *g < 0 ? *g : 0;
}

static int do_to_memfd(struct move_job *j)
{
	void *p;
	int g, ret = job_guard(j, &g);

	if (ret)
		return ret;
	ret = write_all(j->fd, (const void *)j->start, j->len, j->off);
	if (!ret) {
		p = mmap((void *)j->start, j->len, j->prot,
			 MAP_SHARED | MAP_FIXED, j->fd, (off_t)j->off);
		if (p == MAP_FAILED)
			ret = -errno;
	}
	if (g >= 0)
		guard_off(g, j->start, j->len, !ret);
	return ret;
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
	int g, ret;

	tmp = mmap(NULL, j->len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tmp == MAP_FAILED)
		return -errno;
	/* Unguarded (no userfaultfd since), the move goes on as it always
	 * did: leaving the pages on the memfd is no option here. */
	g = -1;
	if (srd_move_guard() == SRD_GUARD_UFFD && job_guard(j, &g))
		g = -1;
	/* Read the memfd rather than the range: the application may have
	 * made the range unreadable since. */
	ret = srd_read_fd(j->fd, tmp, j->len, j->off);
	if (!ret && j->prot != (PROT_READ | PROT_WRITE) &&
	    mprotect(tmp, j->len, j->prot) < 0)
		ret = -errno;
	if (!ret) {
		p = mremap(tmp, j->len, j->len, MREMAP_MAYMOVE | MREMAP_FIXED,
			   (void *)j->start);
		if (p != MAP_FAILED) {
			if (g >= 0)
				guard_off(g, j->start, j->len, true);
			return 0;
		}
		ret = -errno;
	}
	if (g >= 0)
		guard_off(g, j->start, j->len, false);
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
