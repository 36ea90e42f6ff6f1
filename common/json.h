/* SPDX-License-Identifier: MIT */
/*
 * Checked JSON building: members added and elements appended with every
 * failure reported, json-c's own (json_object_object_add() returns one) and
 * the NULL a json_object_new_*() returns when out of memory, so that a
 * reply is never sent with a member silently missing.
 */
#pragma once

#include <errno.h>
#include <json-c/json.h>

#include "macro.h"

static inline void json_putp(json_object **o)
{
	json_object_put(*o);
}
#define _cleanup_json_ _cleanup_(json_putp)

/*
 * Add val as key of object o. val is taken either way (put on failure; NULL,
 * from a failed json_object_new_*(), counts as one): 0 or -ENOMEM.
 */
static inline int json_add(json_object *o, const char *key, json_object *val)
{
	if (!val)
		return -ENOMEM;
	if (!o || json_object_object_add(o, key, val) < 0) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

/* Append val to array a, taken as json_add() takes it: 0 or -ENOMEM. */
static inline int json_append(json_object *a, json_object *val)
{
	if (!val)
		return -ENOMEM;
	if (!a || json_object_array_add(a, val) < 0) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}
