/* SPDX-License-Identifier: MIT */
#include "denial.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>

#include "policy/verdict.h"

int denial_reply(struct reply *r, const char *code, int err, const char *kind, const char *name,
		 const char *key, const char *fmt, ...)
{
	_cleanup_free_ char *text = NULL;
	json_object *e, *reasons, *denials, *text_obj = NULL, *entry = NULL;
	bool ok = false;
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
	e = reply_error_obj(r);
	reasons = json_object_new_array();
	denials = json_object_new_array();
	if (e && reasons && denials) {
		json_object_object_add(e, "reasons", reasons);
		json_object_object_add(e, "denials", denials);
		reasons = denials = NULL; /* the error owns them now */
		text_obj = json_object_new_string(text);
		if (text_obj &&
		    json_object_array_add(json_object_object_get(e, "reasons"), text_obj) == 0)
			text_obj = NULL;
		entry = verdict_denial_json(kind, name, text, key);
		if (entry &&
		    json_object_array_add(json_object_object_get(e, "denials"), entry) == 0)
			entry = NULL;
		ok = !text_obj && !entry;
	}
	json_object_put(reasons);
	json_object_put(denials);
	json_object_put(text_obj);
	json_object_put(entry);
	if (!ok)
		return -ENOMEM;
	return 0;
}
