/* SPDX-License-Identifier: MIT */
#include "log.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/escape.h"

int log_max_level = LOG_INFO;

/* What one message may say, before escaping; longer ones end in "...". */
#define LOG_TEXT_MAX 2048

/*
 * Every log line goes through here. Messages carry text clients chose (names
 * from their objects, request parameters, libbpf's words about them), so the
 * whole message is escaped (common/escape.h): nothing in it can start a line
 * of its own, such as a forged "<5>audit: ... uid=0" record. A line is one
 * write() of at most PIPE_BUF bytes: lines of concurrent workers never mix
 * (nor can another process's newline land before a client's text), and none
 * is long enough for journald to cut it into records of its own (LineMax).
 */
static void log_va(int level, const char *fmt, va_list ap)
{
	char text[LOG_TEXT_MAX], line[PIPE_BUF];
	int saved = errno, k;
	size_t n;

	if (level > log_max_level)
		return;
	k = vsnprintf(text, sizeof(text), fmt, ap);
	if (k < 0)
		snprintf(text, sizeof(text), "(a message that could not be formatted)");
	else if ((size_t)k >= sizeof(text))
		memcpy(text + sizeof(text) - 4, "...", 4);
	/* "<N>" prefixes are understood by journald for stderr of services. */
	k = snprintf(line, sizeof(line), "<%d>", level);
	n = (size_t)k;
	escape_text(line + n, sizeof(line) - n - 1, text, 0);
	n += strlen(line + n);
	line[n++] = '\n';
	while (write(STDERR_FILENO, line, n) < 0 && errno == EINTR)
		;
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
