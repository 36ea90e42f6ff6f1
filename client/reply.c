/* SPDX-License-Identifier: MIT */
/* A reply as text and its fields read with defaults for what is absent: strings, numbers, booleans,
 * string arrays, reasons and their keys. */
#include "libbpfbroker.h"

#include <stdlib.h>
#include <string.h>

#include "libbpfbroker-internal.h"
#include "proto/proto.h"
#include "reply.h"

/* A parsed reply as JSON text: as received (reply_parse()), or else serialized from the tree. */
const char *reply_text(json_object *reply)
{
	const char *text = json_object_get_userdata(reply);

	return text ?: json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PLAIN);
}

const char *get_str(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

int64_t get_int(json_object *o, const char *key, int64_t dflt)
{
	int64_t v = dflt;

	/* Checked as the broker checks requests: a number beyond int64 is none, not INT64_MAX. */
	if (proto_get_int(o, key, false, INT64_MIN, INT64_MAX, &v, NULL) < 0)
		return dflt;
	return v;
}

bool get_bool(json_object *o, const char *key)
{
	bool v = false;

	/* Only true is true: not a string, a number or an object that json-c would call true. */
	(void)proto_get_bool(o, key, false, &v, NULL);
	return v;
}

/* A NULL-terminated array of borrowed strings from a JSON array (NULL if absent). */
const char **string_array(json_object *o, const char *key)
{
	json_object *a;
	const char **v;
	size_t n;

	if (!json_object_object_get_ex(o, key, &a) || !json_object_is_type(a, json_type_array))
		return NULL;
	n = json_object_array_length(a);
	v = calloc(n + 1, sizeof(char *));
	for (size_t i = 0; v && i < n; i++)
		v[i] = json_object_get_string(json_object_array_get_idx(a, i));
	return v;
}

/*
 * The policy key of each of o's "reasons", from "denials" (one entry per
 * reason, in the same order): NULL-terminated, "" where a reason has none or
 * the broker sent no "denials" (older brokers). NULL without "reasons".
 */
const char **reason_keys(json_object *o)
{
	json_object *reasons, *denials = NULL;
	const char **v;
	size_t n, n_denials = 0;

	if (!json_object_object_get_ex(o, "reasons", &reasons) ||
	    !json_object_is_type(reasons, json_type_array))
		return NULL;
	n = json_object_array_length(reasons);
	if (json_object_object_get_ex(o, "denials", &denials) &&
	    json_object_is_type(denials, json_type_array))
		n_denials = json_object_array_length(denials);
	v = calloc(n + 1, sizeof(char *));
	for (size_t i = 0; v && i < n; i++) {
		json_object *d = i < n_denials ? json_object_array_get_idx(denials, i) : NULL;

		v[i] = (d && json_object_is_type(d, json_type_object) ? get_str(d, "key") : NULL)
			       ?: "";
	}
	return v;
}

/* Did string_array() and reason_keys() give o's reasons, and their keys, exactly when it has them?
 */
bool reasons_complete(json_object *o, const char *const *reasons, const char *const *keys)
{
	json_object *a;
	bool has = json_object_object_get_ex(o, "reasons", &a) &&
		   json_object_is_type(a, json_type_array);

	return has ? reasons && keys : !reasons && !keys;
}
