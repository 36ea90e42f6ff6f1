/* SPDX-License-Identifier: MIT */
/* What the files of libbpfbroker share and its users don't see (hidden in the .so). */
#pragma once

#include <json-c/json.h>
#include <stdint.h>

#include "libbpfbroker.h"
#include "proto/proto.h"

#define BPFBROKER_HIDDEN __attribute__((visibility("hidden")))

struct bpfbroker {
	int fd;
	int64_t next_id;
	enum bpfbroker_map_path map_path; /* as set by bpfbroker_set_map_path() */
	/* AUTO, once decided for this connection: DIRECT or PROXY (map.c). */
	enum bpfbroker_map_path map_path_found;
};

/*
 * Send method with params (taken, may be NULL) and no fds, and wait for the
 * reply: on success *ret holds it and *ret_result points to its "result"
 * object; an error reply goes to *err (see libbpfbroker.h).
 */
BPFBROKER_HIDDEN int bpfbroker_request(struct bpfbroker *b, const char *method, json_object *params,
				       struct proto_msg *ret, json_object **ret_result,
				       struct bpfbroker_error **err);

/* "rw", "ro", "wo", "consume"; anything else (NULL too) is NONE. */
BPFBROKER_HIDDEN enum bpfbroker_access bpfbroker_access_from_string(const char *s);
