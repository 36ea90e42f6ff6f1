/* SPDX-License-Identifier: MIT */
/*
 * The bpfbroker wire protocol, shared by daemon and client (see PROTOCOL.md).
 *
 * One message is one SOCK_SEQPACKET packet holding one JSON object, with the
 * fds it carries attached as SCM_RIGHTS and referred to by index. Everything
 * in here treats its input as hostile: sizes, fd counts and JSON shape are
 * checked before anything else looks at a message.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/parse.h"

#define PROTO_VERSION 1
#define PROTO_VERSION_KEY "bpfbroker"
#define PROTO_DEFAULT_SOCKET "/run/bpfbroker/bpfbroker.sock"
#define PROTO_SOCKET_ENV "BPFBROKER_SOCKET"

#define PROTO_MAX_REQUEST_BYTES (64u * 1024)
#define PROTO_MAX_REPLY_BYTES (1024u * 1024)
#define PROTO_MAX_REQUEST_FDS 4
#define PROTO_MAX_REPLY_FDS 250 /* below the kernel's SCM_MAX_FD (253) */
#define PROTO_MAX_JSON_DEPTH 16
#define PROTO_MAX_NAME 255
#define PROTO_MAX_CONFIG_ITEMS 256
#define PROTO_MAX_VERIFIER_LOG (64u * 1024)

/*
 * How messages are encoded: compact, and "/" as it is. json-c would write
 * "\/" for it, so a message parsed and encoded again (a request's params on
 * their way to a worker) could double in size; this way it never grows.
 */
#define PROTO_JSON_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/*
 * Error codes in the "code" field of an error reply, as clients compare them
 * (PROTOCOL.md, "Error codes"). The daemon passes enum proto_error around
 * instead and turns it into these with proto_error_code().
 */
#define PROTO_E_INVALID "invalid-request"
#define PROTO_E_VERSION "unsupported-version"
#define PROTO_E_METHOD "unknown-method"
#define PROTO_E_TOO_LARGE "too-large"
#define PROTO_E_FDS "bad-fds"
#define PROTO_E_DENIED "policy-denied"
#define PROTO_E_OBJECT "bad-object"
#define PROTO_E_LOAD "load-failed"
#define PROTO_E_TIMEOUT "timeout"
#define PROTO_E_BUSY "busy"
#define PROTO_E_INTERNAL "internal"
#define PROTO_E_NOT_FOUND "not-found"
#define PROTO_E_EXISTS "exists"
#define PROTO_E_QUOTA "quota"

/*
 * The errors a request is answered with, as the daemon's functions return
 * them: positive, so that one return value says "failed" (< 0, an errno),
 * "done" (0) or "answered with this error" (> 0; daemon/README.md,
 * "Errors"). 0 is no error. proto_error_code() is the one table of their
 * wire strings.
 */
enum proto_error {
	PROTO_ERR_INVALID = 1, /* 0: none */
	PROTO_ERR_VERSION,
	PROTO_ERR_METHOD,
	PROTO_ERR_TOO_LARGE,
	PROTO_ERR_FDS,
	PROTO_ERR_DENIED,
	PROTO_ERR_OBJECT,
	PROTO_ERR_LOAD,
	PROTO_ERR_TIMEOUT,
	PROTO_ERR_BUSY,
	PROTO_ERR_INTERNAL,
	PROTO_ERR_NOT_FOUND,
	PROTO_ERR_EXISTS,
	PROTO_ERR_QUOTA,
	_PROTO_ERR_MAX,
};

/* The wire code ("invalid-request", ...) of e, or NULL if e is none of them. */
const char *proto_error_code(enum proto_error e);

struct proto_msg {
	json_object *json;
	int *fds;
	size_t n_fds;
};

void proto_msg_done(struct proto_msg *m); /* closes fds that were not taken, puts json */

/* Take fd number idx out of m (it will not be closed by proto_msg_done); -EBADF if absent. */
int proto_msg_take_fd(struct proto_msg *m, size_t idx);

/* One message as it came off the socket: bytes not yet parsed, and its fds. */
struct proto_raw {
	char *buf;
	size_t len;
	int *fds;
	size_t n_fds;
};

void proto_raw_done(struct proto_raw *m); /* closes fds that were not taken, frees buf */

/*
 * Send msg (encoded with PROTO_JSON_FLAGS) with fds (may be NULL/0). Never
 * raises SIGPIPE. 0 or negative errno (-EMSGSIZE when the encoded message is
 * larger than max_bytes).
 */
int proto_send(int sock, json_object *msg, const int *fds, size_t n_fds, size_t max_bytes);

/*
 * Receive one message. Returns 1 with *ret filled, 0 on orderly EOF, -EAGAIN
 * when nothing is waiting on a non-blocking socket, or a negative errno for a
 * bad message, after which any fds that came with it are already closed and
 * *error (if error != NULL) says what was wrong:
 *   -EMSGSIZE  larger than max_bytes;
 *   -ETOOMANYREFS more than max_fds fds, or a truncated control message;
 *   -EBADMSG   not a JSON object, or too deep, or containing a NUL byte.
 */
int proto_recv(int sock, size_t max_bytes, size_t max_fds, struct proto_msg *ret, char **error);

/*
 * The same two without JSON: send len bytes as they are; receive one packet
 * with the same checks of size and fds but no parsing (1, 0 on EOF, -EAGAIN
 * or an error as above). For relaying a message whose sender is trusted.
 */
int proto_send_raw(int sock, const char *buf, size_t len, const int *fds, size_t n_fds);
int proto_recv_raw(int sock, size_t max_bytes, size_t max_fds, struct proto_raw *ret, char **error);

/* Pure: parse len bytes into a JSON object (the fuzzed entry point). */
int proto_parse(const char *buf, size_t len, json_object **ret, char **error);

/* Check version and id of a request and split out method and params (borrowed refs). */
int proto_request_check(json_object *msg, int64_t *ret_id, const char **ret_method,
			json_object **ret_params, char **error);

/* Build messages. All return a new reference or NULL on -ENOMEM. */
json_object *proto_request_new(int64_t id, const char *method, json_object *params /* taken */);
json_object *proto_reply_new(int64_t id, json_object *result /* taken */);
json_object *proto_error_new(int64_t id, const char *code, int err, const char *message);
/* Add "bpfbroker" and "id" to a reply body {"result"...} or {"error"...} made elsewhere. */
int proto_reply_stamp(json_object *body, int64_t id);

/*
 * Replace every invalid UTF-8 sequence in o's string values with U+FFFD, so
 * text that came from a hostile ELF (names, libbpf's and the verifier's
 * messages) can always be sent and parsed. 0 or -ENOMEM.
 */
int proto_json_sanitize_utf8(json_object *o);
/* The length of the valid UTF-8 sequence at s (1 to 4), or 0 if it is invalid. */
size_t proto_utf8_sequence(const unsigned char *s, size_t left);

/* Typed access with clear errors; *error names the key. */
int proto_get_string(json_object *o, const char *key, bool required, const char **ret,
		     char **error);
int proto_get_int(json_object *o, const char *key, bool required, int64_t min, int64_t max,
		  int64_t *ret, char **error);
int proto_get_bool(json_object *o, const char *key, bool required, bool *ret, char **error);
/* Reject keys of o other than those listed (NULL-terminated). */
int proto_check_keys(json_object *o, const char *what, const char *const *allowed, char **error);

/* ---- method "load" ---- */

struct proto_global {
	char *name;
	uint8_t *value;
	size_t size;
};

struct proto_map_size {
	char *name;
	uint32_t max_entries;
};

struct proto_program_select {
	char *name;
	char *type; /* libbpf program type name, or NULL to keep */
	char *attach_type; /* libbpf attach type name, or NULL to keep */
};

/* A map's key and value size, set before load (bpf_map__set_key_size/_value_size). */
#define PROTO_MAX_MAP_KEY_SIZE 65536u
#define PROTO_MAX_MAP_VALUE_SIZE (16u * 1024 * 1024)
struct proto_map_def {
	char *name;
	bool set_key_size, set_value_size; /* at least one; 0 is a size (a ring buffer's) */
	uint32_t key_size, value_size;
};

/* The inner map the broker creates for a map of maps declared without a template. */
struct proto_inner_map {
	char *outer;
	char *type; /* libbpf map type name */
	uint32_t key_size, value_size, max_entries;
	uint32_t map_flags; /* BPF_F_*, at most PROTO_MAX_INNER_MAP_FLAGS */
};
/* The BPF_F_* map flags a policy knows (bits 0 to 12, POLICY_MAP_FLAGS_KNOWN). */
#define PROTO_MAX_INNER_MAP_FLAGS 0x1fffu

/* A program's BTF attach target in the kernel (bpf_program__set_attach_target(prog, 0, target)). */
#define PROTO_MAX_ATTACH_TARGET 128 /* 1..this of [A-Za-z0-9_.] */
struct proto_attach_target {
	char *program;
	char *target;
};

/* An owner's grant of one map of a named object to a user or a group. */
struct proto_share {
	char *map;
	char *user; /* user name or decimal uid, or NULL */
	char *group; /* group name or decimal gid, or NULL (exactly one of user, group) */
	char *access; /* "ro", "wo" or "rw" */
};

#define PROTO_NO_OBJECT_FD SIZE_MAX

struct proto_load_request {
	/* Index into the message's fds; PROTO_NO_OBJECT_FD (not sent) with system_object. */
	size_t object_fd;
	/* Load the installed system object of this name instead (no fd; POLICY.md, "Vetted
	 * objects") */
	char *system_object;
	char *name; /* keep loaded under this name (see NAMED.md), or NULL */
	struct proto_share *shares;
	size_t n_shares;
	char *object_name; /* optional, for libbpf's object name and logs */
	bool check_only; /* decide, but don't load */
	bool libbpf_log; /* on failure, the error carries libbpf's whole log */
	struct proto_global *globals;
	size_t n_globals;
	struct proto_map_size *map_sizes;
	size_t n_map_sizes;
	struct proto_program_select *programs; /* non-empty: only these load */
	size_t n_programs;
	char **freeze; /* maps to freeze (BPF_MAP_FREEZE) once loaded */
	size_t n_freeze;
	struct proto_map_def *map_defs;
	size_t n_map_defs;
	struct proto_inner_map *inner_maps;
	size_t n_inner_maps;
	struct proto_attach_target *attach_targets;
	size_t n_attach_targets;
};

int proto_load_request_decode(json_object *params, size_t n_fds, struct proto_load_request *ret,
			      char **error);
json_object *proto_load_request_encode(const struct proto_load_request *r);
void proto_load_request_done(struct proto_load_request *r);

/* ---- method "load_insns": one program from raw instructions (load_insns.c) ---- */

#define PROTO_MAX_LICENSE 127 /* the kernel reads at most 127 bytes of it */
#define PROTO_MAX_PROG_NAME 15 /* BPF_OBJ_NAME_LEN, without the NUL */
#define PROTO_DEFAULT_PROG_NAME "prog"

struct proto_insns_request {
	size_t insns_fd; /* index into the message's fds: raw struct bpf_insn */
	char *type; /* libbpf program type name */
	char *attach_type; /* libbpf attach type name, or NULL */
	char *license; /* 1..PROTO_MAX_LICENSE printable ASCII characters */
	char *prog_name; /* 1..PROTO_MAX_PROG_NAME of [A-Za-z0-9_.], or NULL for the default */
	char *name; /* keep loaded under this name (see NAMED.md), or NULL */
	bool check_only;
};

int proto_insns_request_decode(json_object *params, size_t n_fds, struct proto_insns_request *ret,
			       char **error);
json_object *proto_insns_request_encode(const struct proto_insns_request *r);
void proto_insns_request_done(struct proto_insns_request *r);
/* A kernel program name: 1..PROTO_MAX_PROG_NAME of [A-Za-z0-9_.]. */
bool proto_prog_name_is_valid(const char *name);

/* Named objects: parse_object_name_is_valid() (common/parse.h). */
#define PROTO_MAX_OBJECT_NAME PARSE_OBJECT_NAME_MAX
#define PROTO_MAX_SHARES 32
/*
 * "list" answers in pages (NAMED.md): at most "limit" objects (default and
 * most this) and PROTO_LIST_PAGE_BYTES of them, well below the reply limit;
 * "next" says where the next page starts.
 */
#define PROTO_MAX_LIST_LIMIT 65536
#define PROTO_LIST_PAGE_BYTES (PROTO_MAX_REPLY_BYTES - 64u * 1024)
/* A BTF attach target: 1..PROTO_MAX_ATTACH_TARGET of [A-Za-z0-9_.]. */
bool proto_attach_target_is_valid(const char *s);

/* Add key: the hex of size bytes at buf to object o. 0 or -ENOMEM. */
int proto_json_add_hex(json_object *o, const char *key, const void *buf, size_t size);

/* ---- method "map": map operations done by the broker for the caller (map_op.c) ---- */

#define PROTO_MAP_MAX_KEY 512 /* bytes; the kernel's hash maps take no longer keys */
#define PROTO_MAP_MAX_VALUE 16384 /* bytes of one value (per-CPU maps: of all CPUs' values) */
#define PROTO_MAP_MAX_DUMP_ENTRIES 256 /* entries per dump page */
#define PROTO_MAP_DEFAULT_DUMP_ENTRIES 64
#define PROTO_MAP_MAX_DUMP_BYTES (256u * 1024) /* keys and values of one page, before hex */
#define PROTO_MAP_MAX_BTF (384u * 1024) /* the object's BTF, before hex */
#define PROTO_MAP_MAX_FLAGS 2 /* BPF_ANY 0, BPF_NOEXIST 1, BPF_EXIST 2 */

enum proto_map_op {
	PROTO_MAP_INFO,
	PROTO_MAP_LOOKUP,
	PROTO_MAP_UPDATE,
	PROTO_MAP_DELETE,
	PROTO_MAP_NEXT_KEY,
	PROTO_MAP_DUMP,
	PROTO_MAP_BTF,
};

struct proto_map_request {
	char *object; /* "NAME" or "OWNER/NAME", checked by the worker */
	char *map;
	enum proto_map_op op;
	/* lookup, update, delete: the key; next_key: the key (NULL: the first); dump: the cursor */
	uint8_t *key;
	size_t key_size;
	uint8_t *value; /* update only */
	size_t value_size;
	uint32_t flags; /* update only: 0..PROTO_MAP_MAX_FLAGS */
	uint32_t count; /* dump only: 1..PROTO_MAP_MAX_DUMP_ENTRIES */
};

/*
 * Decode the params of "map": strict (keys that op does not take are errors),
 * bounded (-E2BIG for a key or value over the limits above, else -EINVAL or
 * -ERANGE). Sizes are checked against the map itself by the worker.
 */
int proto_map_request_decode(json_object *params, struct proto_map_request *ret, char **error);
json_object *proto_map_request_encode(const struct proto_map_request *r);
void proto_map_request_done(struct proto_map_request *r);
const char *proto_map_op_to_string(enum proto_map_op op);
/* Does op change the map (update, delete)? */
bool proto_map_op_writes(enum proto_map_op op);
/* The same for an op given by its wire name (false for a name that is no op). */
bool proto_map_op_name_writes(const char *name);
