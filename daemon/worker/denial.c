/* SPDX-License-Identifier: MIT */
#include "denial.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

#include "policy/verdict.h"

int denial_reply(struct reply *r, const char *code, int err, const char *kind, const char *name,
		 const char *key, const char *fmt, ...)
{
	_cleanup_free_ char *text = NULL;
	va_list ap;
	int k;

	va_start(ap, fmt);
	text = verdict_reason_vformat(key, fmt, ap);
	va_end(ap);
	if (!text)
		return -ENOMEM;
	k = reply_error(r, code, err, "%s", text);
	if (k < 0)
		return k;
	return verdict_error_add(reply_error_obj(r), kind, name, text, key);
}
