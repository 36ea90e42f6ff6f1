/* SPDX-License-Identifier: MIT */
/* One field of a JSON object: read with its type and range checked, keys checked, names validated,
 * bytes added as hex. */
#include "proto.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "common/error.h"
#include "common/hex.h"

int proto_get_string(json_object *o, const char *key, bool required, const char **ret, char **error)
{
	json_object *v;
	const char *s;

	if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null)) {
		if (required)
			return error_setf(error, -EINVAL, "missing \"%s\"", key);
		*ret = NULL;
		return 0;
	}
	if (!json_object_is_type(v, json_type_string))
		return error_setf(error, -EINVAL, "\"%s\" must be a string", key);
	s = json_object_get_string(v);
	if (strlen(s) != (size_t)json_object_get_string_len(v))
		return error_setf(error, -EINVAL, "\"%s\" contains a NUL character", key);
	*ret = s;
	return 0;
}

int proto_get_int(json_object *o, const char *key, bool required, int64_t min, int64_t max,
		  int64_t *ret, char **error)
{
	json_object *v;
	int64_t x;

	if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null)) {
		if (required)
			return error_setf(error, -EINVAL, "missing \"%s\"", key);
		return 0; /* *ret keeps its default */
	}
	if (!json_object_is_type(v, json_type_int))
		return error_setf(error, -EINVAL, "\"%s\" must be an integer", key);
	errno = 0;
	x = json_object_get_int64(v);
	/*
	 * json-c clamps out-of-range values to INT64_MIN/MAX; a value above
	 * INT64_MAX is kept as a uint64 and clamped without setting errno.
	 */
	if (x == INT64_MAX && json_object_get_uint64(v) != (uint64_t)INT64_MAX)
		errno = ERANGE;
	if (errno != 0 || x < min || x > max)
		return error_setf(error, -ERANGE, "\"%s\" must be between %" PRId64 " and %" PRId64,
				  key, min, max);
	*ret = x;
	return 0;
}

int proto_get_bool(json_object *o, const char *key, bool required, bool *ret, char **error)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null)) {
		if (required)
			return error_setf(error, -EINVAL, "missing \"%s\"", key);
		return 0;
	}
	if (!json_object_is_type(v, json_type_boolean))
		return error_setf(error, -EINVAL, "\"%s\" must be true or false", key);
	*ret = json_object_get_boolean(v);
	return 0;
}

int proto_check_keys(json_object *o, const char *what, const char *const *allowed, char **error)
{
	json_object_object_foreach (o, key, val) {
		bool known = false;

		(void)val;
		for (const char *const *a = allowed; *a; a++)
			if (strcmp(*a, key) == 0)
				known = true;
		if (!known)
			return error_setf(error, -EINVAL, "%s: unknown key \"%.64s\"", what, key);
	}
	return 0;
}

bool proto_attach_target_is_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > PROTO_MAX_ATTACH_TARGET)
		return false;
	for (const char *c = s; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '_' || *c == '.'))
			return false;
	return true;
}

int proto_json_add_hex(json_object *o, const char *key, const void *buf, size_t size)
{
	char *hex = hex_encode(buf, size);
	json_object *s = hex ? json_object_new_string(hex) : NULL;

	free(hex);
	if (!s || json_object_object_add(o, key, s) < 0) {
		json_object_put(s);
		return -ENOMEM;
	}
	return 0;
}
