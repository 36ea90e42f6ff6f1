/* SPDX-License-Identifier: MIT */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

int log_max_level = LOG_INFO;

void log_at(int level, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	if (level > log_max_level)
		return;
	/* "<N>" prefixes are understood by journald for stderr of services. */
	fprintf(stderr, "<%d>", level);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	errno = saved;
}
