/* SPDX-License-Identifier: MIT */
/*
 * The protocol's methods, defined once (PROTOCOL.md, NAMED.md): what each
 * takes and gives (fds, params and their decoder), where it runs, and what
 * the event loop must know before a worker sees it (whether it changes
 * state, whether it counts against max_loads_per_minute). The event loop
 * checks requests against it and the worker dispatches and decodes by it.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "params.h"

enum proto_method_id {
	PROTO_METHOD_HELLO,
	PROTO_METHOD_LOAD,
	PROTO_METHOD_LIST,
	PROTO_METHOD_SHOW,
	PROTO_METHOD_UNLOAD,
	PROTO_METHOD_FDS,
	PROTO_METHOD_ATTACH,
	PROTO_METHOD_DETACH,
	PROTO_METHOD_TEST_RUN,
	PROTO_METHOD_MAP_INSERT,
	PROTO_METHOD_LOAD_INSNS,
	PROTO_METHOD_MAP,
	PROTO_METHOD_POLICY,
	PROTO_METHOD_COUNT,
};

/* When a property of a request holds, which for some methods depends on its params. */
enum proto_when {
	PROTO_NEVER,
	PROTO_ALWAYS,
	PROTO_UNLESS_CHECK_ONLY, /* load, load_insns: not with "check_only": true */
	PROTO_IF_MAP_WRITES, /* map: only the ops that write (update, delete) */
};

struct proto_method {
	const char *name;
	enum proto_method_id id;
	/* Fds a request carries: fds_min..fds_max (load: 1, or 0 for a system object); a reply at
	 * most reply_fds. */
	unsigned fds_min, fds_max, reply_fds;
	bool in_worker; /* else the event loop answers it itself (hello) */
	/*
	 * Decoded by the event loop too, so a bad one never costs a worker, and
	 * sent on re-encoded with its fd at index 0 (load, load_insns). The
	 * others are decoded by the worker only, which audits what it refuses.
	 */
	bool checked_by_loop;
	/* Changes a user's store or kernel state: a worker dying in it is swept after (worker.h).
	 */
	enum proto_when changes_state;
	enum proto_when rate_limited; /* counts against max_loads_per_minute */
	/* A bad param is errno EINVAL whatever the decoder says (as these methods always answered).
	 */
	bool flat_errno;
	/* The params: a struct of params_size bytes, described by a table of fields (params.h). */
	size_t params_size;
	const struct proto_fields *fields;
};

extern const struct proto_method proto_methods[PROTO_METHOD_COUNT];

/* The method of that name, or NULL. */
const struct proto_method *proto_method_find(const char *name);
/* Does w hold for a request with these params (decoded or not: read defensively)? */
bool proto_method_when(enum proto_when w, json_object *params);
/*
 * Decode params (NULL: none) of a request that carries n_fds fds into ret
 * (m->params_size bytes; written only on success). 0, or a negative errno
 * with *error set: as proto_fields_decode(), and -EBADF for an fd index
 * beyond n_fds where the table checks it (load, load_insns).
 */
int proto_method_decode(const struct proto_method *m, json_object *params, size_t n_fds, void *ret,
			char **error);
json_object *proto_method_encode(const struct proto_method *m, const void *p);
void proto_method_done(const struct proto_method *m, void *p);
/* ---- the named-object methods' params (NAMED.md; named.c) ---- */

/* show, unload, fds: {"object": REF} */
struct proto_object_params {
	char *object;
};

struct proto_list_params {
	char *cursor; /* "UID/NAME" as the page before's "next" gave it; the worker parses it */
	bool all, shared;
	char *user;
	int64_t limit; /* 1..PROTO_MAX_LIST_LIMIT, the default */
};

/* An attach target: the keys of every type but uprobe, or a uprobe's own. */
#define PROTO_MAX_UPROBE_SYMBOL 255
struct proto_link_target {
	char *type;
	int64_t fd; /* index of an fd of the request, or -1 */
	char *attach_type; /* not uprobe */
	char *name; /* tracepoint or interface name; a uprobe's function symbol */
	/* uprobe only */
	int64_t pidfd; /* index of the pidfd */
	int64_t offset; /* into the function, or the file offset; -1: none */
	bool retprobe;
	char *semaphore; /* a USDT semaphore by symbol */
	int64_t semaphore_offset; /* or by file offset, 1..UINT32_MAX; 0: none */
};

struct proto_attach_params {
	char *program;
	bool pin;
	bool protect; /* cgroup: the target cgroup's processes may not remove the link */
	struct proto_link_target target;
	char *object;
	int64_t program_id; /* 1..UINT32_MAX: the program must be the one of that kernel id; 0 */
};

struct proto_detach_params {
	char *object;
	char *program;
	int64_t link; /* 1..UINT32_MAX; 0: every pinned link of the program */
};

#define PROTO_TEST_RUN_MAX_DATA (16u * 1024)
#define PROTO_TEST_RUN_MAX_CTX (4u * 1024)
#define PROTO_TEST_RUN_MAX_REPEAT 1000000
struct proto_test_run_params {
	char *object;
	char *program;
	struct proto_bytes data_in; /* "" is the same as absent */
	struct proto_bytes ctx_in;
	int64_t repeat; /* 1..PROTO_TEST_RUN_MAX_REPEAT; 0: the kernel's default, once */
};

struct proto_map_insert_params {
	char *object;
	char *map; /* a map of maps of the object */
	struct proto_bytes key; /* at most PROTO_MAP_MAX_KEY bytes */
	int64_t fd; /* index of the inner map's fd */
};

extern const struct proto_fields proto_object_fields_show, proto_object_fields_unload,
	proto_object_fields_fds, proto_list_fields, proto_attach_fields, proto_detach_fields,
	proto_test_run_fields, proto_map_insert_fields, proto_policy_fields;

/* ---- load (load_params.c), load_insns (load_insns.c), map (map_op.c): proto.h's structs ---- */

extern const struct proto_fields proto_load_fields, proto_insns_fields, proto_map_fields;
