/* SPDX-License-Identifier: MIT */
/*
 * Denial reasons: each a sentence for people, ending with the policy key that
 * would have to change, and the key itself for programs (struct
 * verdict_reason, policy.h). policy_decide() collects every reason of every
 * item here; the daemon's refusals outside it are worded the same way
 * (verdict_reason_format()), and both go out on the wire as "reasons" (the
 * sentences) with "denials" (one entry per sentence, in the same order; see
 * proto/PROTOCOL.md).
 */
#pragma once

#include <json-c/json.h>
#include <stdarg.h>

#include "common/macro.h"
#include "policy.h"

/*
 * fmt's sentence, followed by " (policy key KEY)" when key is neither NULL
 * nor "". NULL when out of memory.
 */
char *verdict_reason_vformat(const char *key, const char *fmt, va_list ap);
_printf_(2, 3) char *verdict_reason_format(const char *key, const char *fmt, ...);

/*
 * Add the reason text (taken, even on failure; NULL counts as -ENOMEM) with
 * key (NULL or "" for none) to it and mark it denied. 0 or -ENOMEM.
 */
int verdict_item_add(struct verdict_item *it, const char *key, char *text);
/* The same with the text formatted as verdict_reason_format() does. */
_printf_(3, 4) int verdict_item_deny(struct verdict_item *it, const char *key, const char *fmt,
				     ...);
void verdict_item_done(struct verdict_item *it);
/* An item's verdict on the wire: "allowed", or its reasons joined by "; ". NULL: -ENOMEM. */
char *verdict_item_text(const struct verdict_item *it);

/*
 * One "denials" entry: {"kind": "object"|"program"|"map", "name": NAME (not
 * for the object), "reason": TEXT, "key": KEY ("" for none)}. NULL: -ENOMEM.
 */
json_object *verdict_denial_json(const char *kind, const char *name, const char *text,
				 const char *key);
/*
 * Append every reason of v, in order (the object's, each program's, each
 * map's), to reasons (the sentences) and denials (their entries). 0 or -ENOMEM.
 */
int verdict_to_json(const struct policy_verdict *v, const struct object_desc *d,
		    json_object *reasons, json_object *denials);
