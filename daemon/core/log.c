/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "daemon/core/core.h"

static int log_fd = -1;
static int log_level = SRD_LOG_INFO;

void srd_log_open(int fd, int level)
{
	log_fd = fd;
	log_level = level;
}

void srd_log(int level, const char *fmt, ...)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };
	char buf[1024];
	struct timespec ts;
	va_list ap;
	int n, m;

	if (log_fd < 0 || level > log_level)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	n = snprintf(buf, sizeof(buf),
		     "%lld.%06ld softrdmad[%d] %s: ", (long long)ts.tv_sec,
		     ts.tv_nsec / 1000, (int)getpid(), names[level]);
	va_start(ap, fmt);
	m = vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	n += m;
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	/* Best effort: a log that cannot be written is not worth stopping
	 * the device for. */
	if (write(log_fd, buf, n) < 0)
		return;
}
