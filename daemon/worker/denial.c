/* SPDX-License-Identifier: MIT */
#include "denial.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

#include "policy/verdict.h"

int denial_reply(struct reply *r, enum proto_error code, int err, const char *kind,
		 const char *name, const char *key, const char *fmt, ...)
{
	_cleanup_free_ char *text = NULL;
	va_list ap;
	int answered, k;

	va_start(ap, fmt);
	text = verdict_reason_vformat(key, fmt, ap);
	va_end(ap);
	if (!text)
		return -ENOMEM;
	answered = reply_error(r, code, err, "%s", text);
	if (answered < 0)
		return answered;
	/* Without its reasons and denials the refusal is not sent: -ENOMEM makes it "internal". */
	k = verdict_error_add(reply_error_obj(r), kind, name, text, key);
	if (k < 0)
		return k;
	return answered;
}
