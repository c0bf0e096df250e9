/* SPDX-License-Identifier: MIT */
/*
 * SOFTRDMA_TRACE: the library dumps every WQE it posts to stderr; with
 * "cqe" the daemon dumps every CQE it writes for this context to the same
 * stderr, which OPEN_DEVICE hands it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/dump.h"
#include "libibverbs/ibverbs.h"

unsigned int srd_trace_setup(uint32_t *open_flags)
{
	unsigned int flags = srd_trace_flags_from_env();
	struct stat st;
	int fl;

	*open_flags = 0;
	if (!(flags & SRD_TRACE_F_CQE))
		return flags;
	*open_flags = SRD_TRACE_CQE;
	/* Two processes write to a file here, each through its own file
	 * offset unless the file appends: without O_APPEND they would
	 * overwrite each other's lines. */
	if (!fstat(STDERR_FILENO, &st) && S_ISREG(st.st_mode)) {
		fl = fcntl(STDERR_FILENO, F_GETFL);
		if (fl >= 0 && !(fl & O_APPEND))
			fcntl(STDERR_FILENO, F_SETFL, fl | O_APPEND);
	}
	return flags;
}

/*
 * What the daemon writes CQE traces to: stderr as a description it can
 * write without blocking and without rights of its own.  A socket or a
 * regular file is handed over as it is (the daemon sends to a socket with
 * MSG_DONTWAIT); for a pipe or a terminal we open a non-blocking
 * description of our own, with our own rights, as the daemon never opens
 * anything for us.  Returns an fd to pass and close, or -1: no CQE trace.
 */
int srd_trace_fd_open(void)
{
	struct stat st;
	int fd, fl;

	if (fstat(STDERR_FILENO, &st))
		return -1;
	if (S_ISSOCK(st.st_mode) || S_ISREG(st.st_mode))
		return fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 0);
	fd = open("/proc/self/fd/2",
		  O_WRONLY | O_APPEND | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	fl = fcntl(STDERR_FILENO, F_GETFL);
	if (fl >= 0 && (fl & O_NONBLOCK))
		return fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 0);
	fprintf(stderr, "softrdma: stderr cannot be written without "
			"blocking: no CQE trace\n");
	return -1;
}
