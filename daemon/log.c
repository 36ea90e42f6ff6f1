/* SPDX-License-Identifier: MIT */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

int log_max_level = LOG_INFO;

static void log_va(int level, const char *fmt, va_list ap)
{
	int saved = errno;

	if (level > log_max_level)
		return;
	/* "<N>" prefixes are understood by journald for stderr of services. */
	fprintf(stderr, "<%d>", level);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	errno = saved;
}

void log_at(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_va(level, fmt, ap);
	va_end(ap);
}

int log_error_errno(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_va(LOG_ERR, fmt, ap);
	va_end(ap);
	return err;
}
