/* SPDX-License-Identifier: MIT */
/* Error messages for callers that pass char **error: one formatted sentence, or nothing. */
#pragma once

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "macro.h"

/* Replace *error (if error is not NULL) with the formatted message; returns r. */
_printf_(3, 4) static inline int error_setf(char **error, int r, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	if (!error)
		return r;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	free(*error);
	*error = s;
	return r;
}
