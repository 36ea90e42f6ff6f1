/* SPDX-License-Identifier: MIT */
/* What the files of libbpfbroker share and its users don't see (hidden in the .so). */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
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

/* The files of the library, by what they share (call.c, error.c, result.c, load_opts.c; reply.h).
 */
BPFBROKER_HIDDEN int call_raw(struct bpfbroker *b, json_object *req, const int *fds, size_t n_fds,
			      size_t max_fds, struct proto_raw *ret);
BPFBROKER_HIDDEN int reply_parse(struct proto_raw *raw, int64_t id, struct proto_msg *ret);
BPFBROKER_HIDDEN int request_done(struct bpfbroker *b, enum proto_method_id method,
				  const void *params, const int *fds, size_t n_fds,
				  struct bpfbroker_error **err);
BPFBROKER_HIDDEN int request_json(struct bpfbroker *b, enum proto_method_id method,
				  const void *params, char **ret_json,
				  struct bpfbroker_error **err);
BPFBROKER_HIDDEN int error_from_reply(json_object *reply, struct bpfbroker_error **err);
BPFBROKER_HIDDEN int result_build(struct proto_msg *m, struct bpfbroker_result **ret);
BPFBROKER_HIDDEN int opts_copy(void *ours, size_t ours_size, const void *theirs, size_t sz,
			       size_t min_sz);
BPFBROKER_HIDDEN int opts_to_request(const struct bpfbroker_load_opts *theirs,
				     struct proto_load_request *req);

/* What an opts struct without sz (0) has: the fields before name. */
#define LOAD_OPTS_SIZE_V0 (offsetof(struct bpfbroker_load_opts, n_programs) + sizeof(size_t))

/* {"object": REF}: show, unload, fds. Borrowed: the encoder copies it. */
#define OBJECT_PARAMS(ref) (&(struct proto_object_params){.object = (char *)(ref)})
