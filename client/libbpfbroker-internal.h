/* SPDX-License-Identifier: MIT */
/* What the files of libbpfbroker share and its users don't see (hidden in the .so). */
#pragma once

#include <json-c/json.h>
#include <stdint.h>

#include "libbpfbroker.h"
#include "proto/method.h"
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
 * Send method with its params (the method table's typed struct of it,
 * proto/method.h; borrowed) and fds, and wait for the reply: on success *ret
 * holds it and *ret_result points to its "result" object; an error reply goes
 * to *err (see libbpfbroker.h). Fds outside the method's fds_min..fds_max are
 * refused before sending (-EINVAL), a reply with more than its reply_fds on
 * receipt (-ETOOMANYREFS).
 */
BPFBROKER_HIDDEN int bpfbroker_request(struct bpfbroker *b, enum proto_method_id method,
				       const void *params, const int *fds, size_t n_fds,
				       struct proto_msg *ret, json_object **ret_result,
				       struct bpfbroker_error **err);

/* "rw", "ro", "wo", "consume"; anything else (NULL too) is NONE. */
BPFBROKER_HIDDEN enum bpfbroker_access bpfbroker_access_from_string(const char *s);
