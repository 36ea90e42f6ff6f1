/* SPDX-License-Identifier: MIT */
/* The public load options (opts with sz, frozen element arrays) translated into the wire's load
 * request. */
#include "libbpfbroker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "libbpfbroker-internal.h"

/*
 * The elements of load_opts' arrays are frozen (ABI.md): the library indexes a
 * caller's array with its own sizeof, so a field added to one would misread
 * the arrays of every program built before. Their sizes in LIBBPFBROKER_1.0,
 * on LP64; a new per-element attribute is a new array in the opts.
 */
#if __SIZEOF_POINTER__ == 8 && __SIZEOF_SIZE_T__ == 8
#define FROZEN(type, size)                                                                         \
	_Static_assert(sizeof(struct type) == (size), #type " is frozen (ABI.md)")
FROZEN(bpfbroker_global, 24);
FROZEN(bpfbroker_map_size, 16);
FROZEN(bpfbroker_program_select, 24);
FROZEN(bpfbroker_map_def, 16);
FROZEN(bpfbroker_inner_map, 32);
FROZEN(bpfbroker_attach_target, 16);
FROZEN(bpfbroker_share, 32);
#endif

/*
 * Copy a caller's opts struct of size sz into one of ours (size ours), so that
 * fields it doesn't have read as zero. sz 0 means min_sz (callers from before sz
 * was checked); bytes we don't know must be zero.
 */
int opts_copy(void *ours, size_t ours_size, const void *theirs, size_t sz, size_t min_sz)
{
	if (sz == 0)
		sz = min_sz;
	if (sz < min_sz)
		return -EINVAL;
	for (size_t i = ours_size; i < sz; i++)
		if (((const uint8_t *)theirs)[i])
			return -EINVAL;
	memset(ours, 0, ours_size);
	memcpy(ours, theirs, sz < ours_size ? sz : ours_size);
	return 0;
}

static char *access_dup(enum bpfbroker_access a)
{
	return a == BPFBROKER_ACCESS_NONE || (unsigned)a > BPFBROKER_ACCESS_CONSUME
		       ? NULL
		       : strdup(bpfbroker_access_to_string(a));
}

static int shares_to_request(const struct bpfbroker_load_opts *opts, struct proto_load_request *req)
{
	if (!opts->n_shares)
		return 0;
	if (!opts->shares || !opts->name)
		return -EINVAL;
	req->shares = calloc(opts->n_shares, sizeof(*req->shares));
	if (!req->shares)
		return -ENOMEM;
	for (size_t i = 0; i < opts->n_shares; i++) {
		const struct bpfbroker_share *s = &opts->shares[i];
		struct proto_share *out = &req->shares[i];

		req->n_shares = i + 1;
		if (!s->map || !s->user == !s->group || s->access == BPFBROKER_ACCESS_NONE ||
		    (unsigned)s->access > BPFBROKER_ACCESS_CONSUME)
			return -EINVAL;
		out->map = strdup(s->map);
		out->access = access_dup(s->access);
		if (!out->map || !out->access)
			return -ENOMEM;
		if (s->user && !(out->user = strdup(s->user)))
			return -ENOMEM;
		if (s->group && !(out->group = strdup(s->group)))
			return -ENOMEM;
	}
	return 0;
}

/* A size of bpfbroker_map_def: 0 keeps it, BPFBROKER_SIZE_ZERO sets 0. */
static void map_def_size(uint32_t size, bool *ret_set, uint32_t *ret)
{
	*ret_set = size != 0;
	*ret = size == BPFBROKER_SIZE_ZERO ? 0 : size;
}

/* map_defs, inner_maps, attach_targets: the setup between open and load. */
static int setup_to_request(const struct bpfbroker_load_opts *opts, struct proto_load_request *req)
{
	if (opts->n_map_defs) {
		req->map_defs = calloc(opts->n_map_defs, sizeof(*req->map_defs));
		if (!req->map_defs)
			return -ENOMEM;
		for (size_t i = 0; i < opts->n_map_defs; i++) {
			const struct bpfbroker_map_def *d = &opts->map_defs[i];
			struct proto_map_def *out = &req->map_defs[i];

			req->n_map_defs = i + 1;
			if (!d->name)
				return -EINVAL;
			if (!(out->name = strdup(d->name)))
				return -ENOMEM;
			map_def_size(d->key_size, &out->set_key_size, &out->key_size);
			map_def_size(d->value_size, &out->set_value_size, &out->value_size);
		}
	}
	if (opts->n_inner_maps) {
		req->inner_maps = calloc(opts->n_inner_maps, sizeof(*req->inner_maps));
		if (!req->inner_maps)
			return -ENOMEM;
		for (size_t i = 0; i < opts->n_inner_maps; i++) {
			const struct bpfbroker_inner_map *im = &opts->inner_maps[i];
			struct proto_inner_map *out = &req->inner_maps[i];

			req->n_inner_maps = i + 1;
			if (!im->outer || !im->type)
				return -EINVAL;
			out->outer = strdup(im->outer);
			out->type = strdup(im->type);
			if (!out->outer || !out->type)
				return -ENOMEM;
			out->key_size = im->key_size;
			out->value_size = im->value_size;
			out->max_entries = im->max_entries;
			out->map_flags = im->map_flags;
		}
	}
	if (opts->n_attach_targets) {
		req->attach_targets = calloc(opts->n_attach_targets, sizeof(*req->attach_targets));
		if (!req->attach_targets)
			return -ENOMEM;
		for (size_t i = 0; i < opts->n_attach_targets; i++) {
			struct proto_attach_target *out = &req->attach_targets[i];

			req->n_attach_targets = i + 1;
			if (!opts->attach_targets[i].program || !opts->attach_targets[i].target)
				return -EINVAL;
			out->program = strdup(opts->attach_targets[i].program);
			out->target = strdup(opts->attach_targets[i].target);
			if (!out->program || !out->target)
				return -ENOMEM;
		}
	}
	return 0;
}

/* Translate the public options into the wire request (copies; the caller keeps its own). */
int opts_to_request(const struct bpfbroker_load_opts *theirs, struct proto_load_request *req)
{
	struct bpfbroker_load_opts copy, *opts = &copy;
	int k;

	*req = (struct proto_load_request){.object_fd = 0};
	if (!theirs)
		return 0;
	k = opts_copy(&copy, sizeof(copy), theirs, theirs->sz, LOAD_OPTS_SIZE_V0);
	if (k < 0)
		return k;
	req->check_only = opts->check_only;
	req->libbpf_log = opts->libbpf_log;
	if (opts->name && !(req->name = strdup(opts->name)))
		return -ENOMEM;
	k = shares_to_request(opts, req);
	if (k < 0)
		return k;
	if (opts->object_name && !(req->object_name = strdup(opts->object_name)))
		return -ENOMEM;
	if (opts->n_globals) {
		req->globals = calloc(opts->n_globals, sizeof(*req->globals));
		if (!req->globals)
			return -ENOMEM;
		for (size_t i = 0; i < opts->n_globals; i++) {
			req->globals[i].name = strdup(opts->globals[i].name);
			req->globals[i].value = malloc(opts->globals[i].size + 1);
			req->n_globals = i + 1;
			if (!req->globals[i].name || !req->globals[i].value)
				return -ENOMEM;
			memcpy(req->globals[i].value, opts->globals[i].value,
			       opts->globals[i].size);
			req->globals[i].size = opts->globals[i].size;
		}
	}
	if (opts->n_map_sizes) {
		req->map_sizes = calloc(opts->n_map_sizes, sizeof(*req->map_sizes));
		if (!req->map_sizes)
			return -ENOMEM;
		for (size_t i = 0; i < opts->n_map_sizes; i++) {
			req->map_sizes[i].name = strdup(opts->map_sizes[i].name);
			req->map_sizes[i].max_entries = opts->map_sizes[i].max_entries;
			req->n_map_sizes = i + 1;
			if (!req->map_sizes[i].name)
				return -ENOMEM;
		}
	}
	if (opts->n_freeze) {
		req->freeze = calloc(opts->n_freeze, sizeof(*req->freeze));
		if (!req->freeze)
			return -ENOMEM;
		for (size_t i = 0; i < opts->n_freeze; i++) {
			req->freeze[i] = strdup(opts->freeze[i]);
			req->n_freeze = i + 1;
			if (!req->freeze[i])
				return -ENOMEM;
		}
	}
	if (opts->n_programs) {
		req->programs = calloc(opts->n_programs, sizeof(*req->programs));
		if (!req->programs)
			return -ENOMEM;
		for (size_t i = 0; i < opts->n_programs; i++) {
			const struct bpfbroker_program_select *s = &opts->programs[i];

			req->n_programs = i + 1;
			req->programs[i].name = strdup(s->name);
			if (!req->programs[i].name)
				return -ENOMEM;
			if (s->type && !(req->programs[i].type = strdup(s->type)))
				return -ENOMEM;
			if (s->attach_type &&
			    !(req->programs[i].attach_type = strdup(s->attach_type)))
				return -ENOMEM;
		}
	}
	return setup_to_request(opts, req);
}

/*
 * Send method with its params (the method table's typed struct, borrowed;
 * NULL for a method that takes none) and fds, and wait for the reply. The
 * table says what goes each way: the params are encoded by its encoder, a
 * request with fewer than fds_min or more than fds_max fds is refused here
 * (-EINVAL) rather than by the broker, and a reply with more fds than the
 * method hands out (reply_fds) is refused (-ETOOMANYREFS, its fds closed),
 * so no broker fills the caller's fd table. On success *ret holds the reply
 * and *ret_result points to its "result" object.
 */
