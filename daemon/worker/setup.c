/* SPDX-License-Identifier: MIT */
#include "setup.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/shared/caps.h"
#include "libbpflog.h"
#include "common/macro.h"

/* The sizes the kernel fixes for a map type (map_alloc_check of each type), or -1: any. */
struct fixed_sizes {
	int64_t key, value;
	bool value_nonzero;
};

static struct fixed_sizes fixed_sizes_of(int type)
{
	switch (type) {
	case BPF_MAP_TYPE_RINGBUF:
	case BPF_MAP_TYPE_USER_RINGBUF:
		return (struct fixed_sizes){.key = 0, .value = 0};
	case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
	case BPF_MAP_TYPE_CGROUP_ARRAY:
	case BPF_MAP_TYPE_PROG_ARRAY:
	case BPF_MAP_TYPE_ARRAY_OF_MAPS:
		return (struct fixed_sizes){.key = 4, .value = 4};
	case BPF_MAP_TYPE_HASH_OF_MAPS:
		return (struct fixed_sizes){.key = -1, .value = 4};
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
	case BPF_MAP_TYPE_STACK_TRACE:
		return (struct fixed_sizes){.key = 4, .value = -1, .value_nonzero = true};
	case BPF_MAP_TYPE_QUEUE:
	case BPF_MAP_TYPE_STACK:
		return (struct fixed_sizes){.key = 0, .value = -1, .value_nonzero = true};
	default:
		return (struct fixed_sizes){.key = -1, .value = -1};
	}
}

/*
 * Sizes the kernel would refuse for the type, said before anything loads and
 * naming the map and the field. what: "map \"X\"" or "the inner map of \"X\"".
 */
static int check_sizes(struct reply *r, const char *what, const char *where, int type,
		       const uint32_t *key, const uint32_t *value)
{
	struct fixed_sizes f = fixed_sizes_of(type);
	const char *tname = libbpf_bpf_map_type_str((enum bpf_map_type)type) ?: "of this type";

	if (key && f.key >= 0 && *key != f.key)
		return reply_error(r, PROTO_ERR_INVALID, EINVAL,
				   "%s: %s key_size %u is invalid: a %s map's key_size is %lld",
				   where, what, *key, tname, (long long)f.key);
	if (value && f.value >= 0 && *value != f.value)
		return reply_error(r, PROTO_ERR_INVALID, EINVAL,
				   "%s: %s value_size %u is invalid: a %s map's value_size is %lld",
				   where, what, *value, tname, (long long)f.value);
	if (value && f.value_nonzero && *value == 0)
		return reply_error(r, PROTO_ERR_INVALID, EINVAL,
				   "%s: %s value_size 0 is invalid for a %s map", where, what,
				   tname);
	if (value && type == BPF_MAP_TYPE_STACK_TRACE && *value % 8)
		return reply_error(r, PROTO_ERR_INVALID, EINVAL,
				   "%s: %s value_size %u is invalid: a stack_trace map's values "
				   "are 8-byte addresses",
				   where, what, *value);
	return 0;
}

static int setup_map_defs(struct bpf_object *obj, const struct proto_load_request *req,
			  struct reply *r)
{
	for (size_t i = 0; i < req->n_map_defs; i++) {
		const struct proto_map_def *d = &req->map_defs[i];
		struct bpf_map *map = bpf_object__find_map_by_name(obj, d->name);
		char what[PROTO_MAX_NAME + 16];
		int k = 0;

		if (!map)
			return reply_error(r, PROTO_ERR_INVALID, ENOENT,
					   "map_defs: no map \"%s\" in the object", d->name);
		for (size_t p = 0; p < i; p++)
			if (strcmp(req->map_defs[p].name, d->name) == 0)
				return reply_error(r, PROTO_ERR_INVALID, EINVAL,
						   "map_defs: map \"%s\" is given twice", d->name);
		/*
		 * libbpf 1.1 sizes .data/.bss/.rodata's contents and a struct_ops
		 * map's kernel value by the value size it read at open: another
		 * size would have it read past its own buffers.
		 */
		if (bpf_map__is_internal(map) || bpf_map__type(map) == BPF_MAP_TYPE_STRUCT_OPS)
			return reply_error(
				r, PROTO_ERR_INVALID, EINVAL,
				"map_defs: map \"%s\" holds the object's %s, whose sizes "
				"the object fixes",
				d->name,
				bpf_map__is_internal(map) ? "global variables"
							  : "struct_ops value");
		snprintf(what, sizeof(what), "map \"%s\"", d->name);
		k = check_sizes(r, what, "map_defs", bpf_map__type(map),
				d->set_key_size ? &d->key_size : NULL,
				d->set_value_size ? &d->value_size : NULL);
		if (k != 0)
			return k;
		if (d->set_key_size)
			k = bpf_map__set_key_size(map, d->key_size);
		if (k >= 0 && d->set_value_size)
			k = bpf_map__set_value_size(map, d->value_size);
		if (k < 0)
			return reply_error(r, PROTO_ERR_INVALID, -k,
					   "map_defs: cannot size map \"%s\": %s", d->name,
					   strerror(-k));
	}
	return 0;
}

/* What the wire takes is what the policy decides on (and refuses beyond). */
_Static_assert(PROTO_MAX_INNER_MAP_FLAGS == POLICY_MAP_FLAGS_KNOWN, "inner map flags");

/* Only checked here: the inner maps are created once the load is allowed. */
static int setup_check_inner_maps(struct setup *s, struct bpf_object *obj,
				  const struct proto_load_request *req, struct reply *r)
{
	if (req->n_inner_maps == 0)
		return 0;
	s->inner_fds = malloc(req->n_inner_maps * sizeof(*s->inner_fds));
	if (!s->inner_fds)
		return -ENOMEM;
	s->n_inner_fds = req->n_inner_maps;
	for (size_t i = 0; i < s->n_inner_fds; i++)
		s->inner_fds[i] = -EBADF;
	for (size_t i = 0; i < req->n_inner_maps; i++) {
		const struct proto_inner_map *im = &req->inner_maps[i];
		struct bpf_map *map = bpf_object__find_map_by_name(obj, im->outer);
		int type = policy_map_type_from_string(im->type), k;
		char what[PROTO_MAX_NAME + 32];

		if (!map)
			return reply_error(r, PROTO_ERR_INVALID, ENOENT,
					   "inner_maps: no map \"%s\" in the object", im->outer);
		for (size_t p = 0; p < i; p++)
			if (strcmp(req->inner_maps[p].outer, im->outer) == 0)
				return reply_error(r, PROTO_ERR_INVALID, EINVAL,
						   "inner_maps: map \"%s\" is given twice",
						   im->outer);
		if (!policy_map_type_is_map_of_maps(bpf_map__type(map)))
			return reply_error(
				r, PROTO_ERR_INVALID, EINVAL,
				"inner_maps: map \"%s\" is not a map of maps (it is %s)", im->outer,
				libbpf_bpf_map_type_str(bpf_map__type(map)) ?: "unknown");
		if (bpf_map__inner_map(map))
			return reply_error(
				r, PROTO_ERR_INVALID, EEXIST,
				"inner_maps: map \"%s\" has an inner map template in the "
				"object already",
				im->outer);
		if (type < 0)
			return reply_error(
				r, PROTO_ERR_INVALID, EINVAL,
				"inner_maps: unknown map type \"%s\" for the inner map of "
				"\"%s\"",
				im->type, im->outer);
		/* The kernel nests maps one level deep only (bpf_map_meta_alloc()). */
		if (policy_map_type_is_map_of_maps(type))
			return reply_error(r, PROTO_ERR_INVALID, EINVAL,
					   "inner_maps: the inner map of \"%s\" cannot be a map of "
					   "maps itself",
					   im->outer);
		snprintf(what, sizeof(what), "the inner map of \"%s\"", im->outer);
		k = check_sizes(r, what, "inner_maps", type, &im->key_size, &im->value_size);
		if (k != 0)
			return k;
	}
	return 0;
}

static bool prog_type_takes_btf_target(int type)
{
	/* fentry/fexit/fmod_ret/tp_btf/iter programs, and LSM hooks. */
	return type == BPF_PROG_TYPE_TRACING || type == BPF_PROG_TYPE_LSM;
}

static int setup_attach_targets(struct bpf_object *obj, const struct proto_load_request *req,
				struct reply *r)
{
	for (size_t i = 0; i < req->n_attach_targets; i++) {
		const struct proto_attach_target *t = &req->attach_targets[i];
		struct bpf_program *prog = bpf_object__find_program_by_name(obj, t->program);
		int type, k;

		if (!prog)
			return reply_error(r, PROTO_ERR_INVALID, ENOENT,
					   "attach_targets: no program \"%s\" in the object",
					   t->program);
		for (size_t p = 0; p < i; p++)
			if (strcmp(req->attach_targets[p].program, t->program) == 0)
				return reply_error(r, PROTO_ERR_INVALID, EINVAL,
						   "attach_targets: program \"%s\" is given twice",
						   t->program);
		/* Checked again here: the decoder is not the only way in (tests, fuzzers). */
		if (!proto_attach_target_is_valid(t->target))
			return reply_error(r, PROTO_ERR_INVALID, EINVAL,
					   "attach_targets: the target of program \"%s\" must be 1 "
					   "to %d of [A-Za-z0-9_.]",
					   t->program, PROTO_MAX_ATTACH_TARGET);
		type = bpf_program__type(prog);
		/*
		 * An extension (freplace) replaces a function of another loaded
		 * program, which only a program fd could name: not expressible,
		 * and not to be guessed at with kernel functions.
		 */
		if (type == BPF_PROG_TYPE_EXT)
			return reply_error(r, PROTO_ERR_INVALID, EINVAL,
					   "attach_targets: program \"%s\" is an extension "
					   "(freplace), whose target is another program, which a "
					   "request cannot name",
					   t->program);
		if (!prog_type_takes_btf_target(type))
			return reply_error(
				r, PROTO_ERR_INVALID, EINVAL,
				"attach_targets: program \"%s\" has type %s, which takes no "
				"BTF attach target (tracing and lsm programs do)",
				t->program,
				libbpf_bpf_prog_type_str((enum bpf_prog_type)type) ?: "unknown");
		/* Looked up in the kernel's BTF for the program's attach type; nothing is created.
		 */
		k = bpf_program__set_attach_target(prog, 0, t->target);
		if (k == -ESRCH || k == -ENOENT) {
			char hint[256];

			/*
			 * Answered as a target named in the section is
			 * (load-failed, ESRCH from libbpf 1.1.2, as for root's own
			 * bpf_program__set_attach_target(), also where libbpf said
			 * ENOENT: the target is missing either way), and naming the module
			 * whose BTF has it, which workers never see (modbtf.h).
			 */
			libbpflog_module_hint(t->target, hint, sizeof(hint));
			return reply_error(r, PROTO_ERR_LOAD, ESRCH,
					   "attach_targets: libbpf could not set the attach target "
					   "of program \"%s\" to \"%s\": the kernel's BTF has no "
					   "such target for its attach type%s",
					   t->program, t->target, hint);
		}
		if (k < 0)
			return reply_error(
				r, PROTO_ERR_INVALID, -k,
				"attach_targets: cannot set the attach target of program "
				"\"%s\" to \"%s\": %s",
				t->program, t->target, strerror(-k));
	}
	return 0;
}

int setup_configure(struct setup *s, struct bpf_object *obj, const struct proto_load_request *req,
		    struct reply *r)
{
	int k = setup_map_defs(obj, req, r);

	if (k == 0)
		k = setup_check_inner_maps(s, obj, req, r);
	if (k == 0)
		k = setup_attach_targets(obj, req, r);
	return k;
}

void setup_describe(const struct proto_load_request *req, struct object_desc *desc)
{
	for (size_t i = 0; i < req->n_inner_maps; i++) {
		const struct proto_inner_map *im = &req->inner_maps[i];

		for (size_t m = 0; m < desc->n_maps; m++) {
			struct object_map *om = &desc->maps[m];

			if (strcmp(om->name, im->outer) != 0)
				continue;
			om->inner_map_type = policy_map_type_from_string(im->type);
			om->inner_key_size = im->key_size;
			om->inner_value_size = im->value_size;
			om->inner_max_entries = im->max_entries;
			om->inner_map_flags = im->map_flags;
		}
	}
}

int setup_create_inner_maps(struct setup *s, struct bpf_object *obj,
			    const struct proto_load_request *req, struct reply *r)
{
	for (size_t i = 0; i < req->n_inner_maps && i < s->n_inner_fds; i++) {
		const struct proto_inner_map *im = &req->inner_maps[i];
		int type = policy_map_type_from_string(im->type);
		cap_value_t caps[2] = {CAP_BPF, CAP_NET_ADMIN};
		struct bpf_map *outer = bpf_object__find_map_by_name(obj, im->outer);
		LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = im->map_flags);
		int k, fd;

		if (!outer || type < 0)
			return reply_error(r, PROTO_ERR_INTERNAL, EINVAL,
					   "inner map of \"%s\" vanished", im->outer);
		k = caps_set_effective(caps, caps_map_type_needs_net_admin(type) ? 2 : 1);
		if (k < 0)
			return reply_error(r, PROTO_ERR_INTERNAL, -k,
					   "cannot raise capabilities: %s", strerror(-k));
		fd = bpf_map_create((enum bpf_map_type)type, "inner", im->key_size, im->value_size,
				    im->max_entries, &opts);
		k = fd < 0 ? negative_errno() : 0;
		caps_clear_effective();
		if (fd < 0)
			return reply_error(r, PROTO_ERR_LOAD, -k,
					   "the kernel refused to create the inner map of \"%s\" "
					   "(%s, key_size %u, value_size %u, max_entries %u, "
					   "map_flags 0x%x): %s",
					   im->outer, im->type, im->key_size, im->value_size,
					   im->max_entries, im->map_flags, strerror(-k));
		s->inner_fds[i] = fd;
		/* libbpf passes it as the outer map's template; it never closes it. */
		k = bpf_map__set_inner_map_fd(outer, fd);
		if (k < 0)
			return reply_error(r, PROTO_ERR_INTERNAL, -k,
					   "cannot give map \"%s\" its inner map: %s", im->outer,
					   strerror(-k));
	}
	return 0;
}

void setup_close_inner_maps(struct setup *s)
{
	for (size_t i = 0; i < s->n_inner_fds; i++) {
		if (s->inner_fds[i] >= 0)
			safe_close(s->inner_fds[i]);
		s->inner_fds[i] = -EBADF;
	}
}

void setup_done(struct setup *s)
{
	if (s->inner_fds)
		setup_close_inner_maps(s);
	free(s->inner_fds);
	*s = (struct setup){};
}
