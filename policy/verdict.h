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
#include "decide.h"

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
/*
 * Bounds that keep a verdict within a reply (PROTO_MAX_REPLY_BYTES) however
 * many programs, maps and helpers an object has: an item's verdict joins at
 * most VERDICT_MAX_ITEM_REASONS reasons, and "reasons"/"denials" hold at most
 * VERDICT_MAX_REASONS, each followed by an "and N more reasons" entry (key "")
 * for the rest.
 */
#define VERDICT_MAX_ITEM_REASONS 16
#define VERDICT_MAX_REASONS 256
/* An item's joined verdict is at most this many bytes, cut with VERDICT_ELLIPSIS. */
#define VERDICT_MAX_ITEM_TEXT 1024
#define VERDICT_ELLIPSIS "\xe2\x80\xa6" /* U+2026 in UTF-8 */

/*
 * An item's verdict on the wire: "allowed", or its reasons joined by "; "
 * (VERDICT_MAX_ITEM_REASONS of them, then "and N more reasons"), at most
 * VERDICT_MAX_ITEM_TEXT bytes (cut, ending in VERDICT_ELLIPSIS). NULL: -ENOMEM.
 */
char *verdict_item_text(const struct verdict_item *it);

/*
 * One "denials" entry: {"kind": "object"|"program"|"map", "name": NAME (not
 * for the object), "key": KEY ("" for none)}. Its sentence is the "reasons"
 * entry of the same index: not repeated, to keep verdicts small. NULL: -ENOMEM.
 */
json_object *verdict_denial_json(const char *kind, const char *name, const char *key);
/*
 * Add "reasons": [text] and "denials": [its entry] to the "error" object of a
 * reply: a refusal outside the verdict. Pure JSON, for workers and the event
 * loop alike. 0 or -ENOMEM (then neither was added).
 */
int verdict_error_add(json_object *error, const char *kind, const char *name, const char *text,
		      const char *key);
/*
 * Append the reasons of v, in order (the object's, each program's, each
 * map's), to reasons (the sentences) and denials (their entries), at most
 * VERDICT_MAX_REASONS, then one "and N more reasons". 0 or -ENOMEM.
 */
int verdict_to_json(const struct policy_verdict *v, const struct object_desc *d,
		    json_object *reasons, json_object *denials);
