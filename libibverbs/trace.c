/* SPDX-License-Identifier: MIT */
/*
 * SOFTRDMA_TRACE: the library dumps every WQE it posts to stderr; with
 * "cqe" the daemon dumps every CQE it writes for this context to the same
 * stderr, which OPEN_DEVICE hands it.
 */
#include <fcntl.h>
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
