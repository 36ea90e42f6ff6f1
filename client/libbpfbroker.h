/* SPDX-License-Identifier: MIT */
/*
 * libbpfbroker: load BPF objects through bpfbrokerd and get back fds with the
 * access the broker's policy grants you.
 *
 *	struct bpfbroker *b;
 *	struct bpfbroker_result *res;
 *	struct bpfbroker_error *err;
 *
 *	if (bpfbroker_connect(NULL, &b) < 0) ...
 *	if (bpfbroker_load_file(b, "prog.bpf.o", NULL, &res, &err) < 0)
 *		fprintf(stderr, "%s\n", bpfbroker_error_message(err));
 *	int fd = bpfbroker_result_map_fd(res, "counts");
 *
 * All functions return 0 (or a documented non-negative value) or a negative
 * errno; output parameters are written only on success, except *err, which
 * is written exactly when the broker answered with an error (then the return
 * value is its errno, negated).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bpfbroker;

enum bpfbroker_access {
	BPFBROKER_ACCESS_NONE = 0,
	BPFBROKER_ACCESS_RO = 1,
	BPFBROKER_ACCESS_WO = 2,
	BPFBROKER_ACCESS_RW = 3,
};

struct bpfbroker_program {
	const char *name;
	const char *type; /* libbpf name, e.g. "socket_filter" */
	const char *attach_type; /* or NULL */
	bool loaded;
	uint32_t id; /* kernel id, 0 if not loaded */
	const char *tag; /* hex, or NULL */
	uint32_t insns;
	int fd; /* -1 unless the policy grants the fd (and with it the right to attach) */
	const char *verdict; /* "allowed" or the reason it is denied */
	const char *const *helpers; /* NULL-terminated names */
	const char *const *kfuncs; /* NULL-terminated names */
};

struct bpfbroker_map {
	const char *name;
	const char *type;
	uint32_t id;
	uint32_t key_size, value_size, max_entries;
	bool pinned;
	enum bpfbroker_access access; /* what fd carries; NONE: fd is -1 */
	int fd;
	const char *verdict;
};

struct bpfbroker_result {
	bool allowed; /* check: whether the broker would load it; load: always true */
	size_t n_programs;
	struct bpfbroker_program *programs;
	size_t n_maps;
	struct bpfbroker_map *maps;
	const char *const *reasons; /* NULL-terminated denial reasons (check) */
	const char *json; /* the broker's reply, as JSON text */
};

struct bpfbroker_error {
	const char *code; /* e.g. "policy-denied", "load-failed" (see PROTOCOL.md) */
	int err; /* positive errno */
	const char *message; /* one sentence */
	const char *verifier_log; /* or NULL */
	const char *const *reasons; /* NULL-terminated, or NULL */
};

struct bpfbroker_global {
	const char *name;
	const void *value;
	size_t size;
};

struct bpfbroker_map_size {
	const char *name;
	uint32_t max_entries;
};

struct bpfbroker_program_select {
	const char *name;
	const char *type; /* or NULL to keep what the section says */
	const char *attach_type; /* or NULL */
};

struct bpfbroker_load_opts {
	size_t sz; /* sizeof(struct bpfbroker_load_opts), for compatibility */
	const char *object_name;
	bool check_only; /* ask for the verdict, load nothing */
	const struct bpfbroker_global *globals;
	size_t n_globals;
	const struct bpfbroker_map_size *map_sizes;
	size_t n_map_sizes;
	const struct bpfbroker_program_select *programs; /* if given, only these load */
	size_t n_programs;
};

/* Connect to path, or $BPFBROKER_SOCKET, or /run/bpfbroker/bpfbroker.sock. */
int bpfbroker_connect(const char *path, struct bpfbroker **ret);
void bpfbroker_close(struct bpfbroker *b);

/* Load (or check) an object from a file, from memory (sent as a sealed memfd), or from an fd. */
int bpfbroker_load_file(struct bpfbroker *b, const char *path,
			const struct bpfbroker_load_opts *opts, struct bpfbroker_result **ret,
			struct bpfbroker_error **err);
int bpfbroker_load_mem(struct bpfbroker *b, const void *buf, size_t size,
		       const struct bpfbroker_load_opts *opts, struct bpfbroker_result **ret,
		       struct bpfbroker_error **err);
int bpfbroker_load_fd(struct bpfbroker *b, int fd, const struct bpfbroker_load_opts *opts,
		      struct bpfbroker_result **ret, struct bpfbroker_error **err);

/* The caller's effective policy as JSON text (free() it). */
int bpfbroker_policy(struct bpfbroker *b, char **ret_json, struct bpfbroker_error **err);

/* Closes every fd the result still owns. */
void bpfbroker_result_free(struct bpfbroker_result *r);
/* Take an fd out of the result (the result won't close it); -1 if there is none. */
int bpfbroker_result_take_map_fd(struct bpfbroker_result *r, const char *map_name);
int bpfbroker_result_take_prog_fd(struct bpfbroker_result *r, const char *prog_name);
const struct bpfbroker_map *bpfbroker_result_map(const struct bpfbroker_result *r,
						 const char *name);
const struct bpfbroker_program *bpfbroker_result_program(const struct bpfbroker_result *r,
							 const char *name);

void bpfbroker_error_free(struct bpfbroker_error *e);
const char *bpfbroker_access_to_string(enum bpfbroker_access a);

/* Low level: send a request and wait for the reply (JSON texts); for tools and tests. */
int bpfbroker_call_raw(struct bpfbroker *b, const char *request_json, const int *fds, size_t n_fds,
		       char **ret_reply_json, int **ret_fds, size_t *ret_n_fds);

#ifdef __cplusplus
}
#endif
