/* SPDX-License-Identifier: MIT */
/* A named object unloaded, a map of it inserted into, its fds handed out again. */
#include "libbpfbroker.h"

#include <errno.h>
#include <stdlib.h>

#include "common/macro.h"
#include "libbpfbroker-internal.h"

int bpfbroker_unload(struct bpfbroker *b, const char *object, struct bpfbroker_error **err)
{
	if (!object)
		return -EINVAL;
	return request_done(b, PROTO_METHOD_UNLOAD, OBJECT_PARAMS(object), NULL, 0, err);
}

int bpfbroker_map_insert(struct bpfbroker *b, const char *object, const char *map, const void *key,
			 size_t key_size, int map_fd, struct bpfbroker_error **err)
{
	struct proto_map_insert_params p = {.object = (char *)object,
					    .map = (char *)map,
					    .key = {.data = (uint8_t *)key, .size = key_size},
					    .fd = 0};

	if (!object || !map || !key || key_size == 0 || map_fd < 0)
		return -EINVAL;
	return request_done(b, PROTO_METHOD_MAP_INSERT, &p, &map_fd, 1, err);
}

int bpfbroker_fds(struct bpfbroker *b, const char *object, struct bpfbroker_result **ret,
		  struct bpfbroker_error **err)
{
	struct proto_msg m = {};
	json_object *result;
	int k;

	if (!object)
		return -EINVAL;
	k = bpfbroker_request(b, PROTO_METHOD_FDS, OBJECT_PARAMS(object), NULL, 0, &m, &result,
			      err);
	if (k < 0)
		return k;
	k = result_build(&m, ret);
	proto_msg_done(&m);
	return k;
}
