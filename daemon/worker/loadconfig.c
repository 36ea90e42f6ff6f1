/* SPDX-License-Identifier: MIT */
/*
 * The object opened with libbpf and configured as the request asks: map sizes, globals, programs
 * selected and typed.
 */
#include "job.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btfcheck.h"
#include "common/macro.h"
#include "denial.h"
#include "inspect.h"
#include "libbpflog.h"
#include "policy/attach_type.h"
#include "proto/proto.h"
#include "reply.h"
#include "setup.h"

int job_open(struct job *j, struct reply *r)
{
	_cleanup_free_ char *error = NULL;
	struct libbpflog_cause cause = {};
	const char *why = NULL;
	char err_text[128];
	size_t log_len;
	int answered, k;

	/* Pins never resolve outside the caller's own directory, which only the broker writes. */
	snprintf(j->pin_dir, sizeof(j->pin_dir), "%s/%u/-pinned", j->cfg->store.pin_root,
		 (unsigned)j->id.uid);

	/* Without a name libbpf names .rodata/.data/.bss maps after the buffer's address;
	 * a fixed default keeps map names (which policies match) predictable. */
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = j->req.object_name ?: "obj",
		    .pin_root_path = j->pin_dir, .kernel_log_buf = j->verifier_log,
		    .kernel_log_size = PROTO_MAX_VERIFIER_LOG);

	/* Known libbpf crash inputs first: the most specific word on what is wrong. */
	if (!btfcheck_object(j->object, j->object_size, &why))
		return reply_error(r, PROTO_ERR_OBJECT, EINVAL, "not a usable BPF object: %s", why);
	k = inspect_elf_calls(j->object, j->object_size, &j->calls, &error);
	if (k == -ENOMEM)
		return k;
	if (k == -EPERM) /* no policy lets the broker load these */
		return denial_reply(r, PROTO_ERR_DENIED, EPERM, "object", NULL, NULL, "%s",
				    error ? error : strerror(-k));
	if (k < 0)
		return reply_error(r, PROTO_ERR_OBJECT, -k, "not a usable BPF object: %s",
				   error ? error : strerror(-k));
	j->obj = bpf_object__open_mem(j->object, j->object_size, &opts);
	if (!j->obj) {
		const char *log = libbpflog_text(&log_len);
		bool found = libbpflog_cause(log, log_len, &cause);

		k = negative_errno();
		j->obj = NULL;
		answered = reply_error(r, PROTO_ERR_OBJECT, -k,
				       "libbpf could not open the object: %s%s%s",
				       libbpflog_error_text(k, err_text, sizeof(err_text)),
				       found ? ": " : "", found ? cause.line : "");
		if (answered < 0)
			return answered;
		k = job_add_libbpf_log(j, r);
		return k < 0 ? k : answered;
	}
	return 0;
}

/* The DATASEC variable name in .rodata/.data/.bss (or .rodata.xxx etc.) of an internal map. */
static int find_global(struct bpf_object *obj, const char *name, struct bpf_map **ret_map,
		       uint32_t *ret_off, uint32_t *ret_size)
{
	const struct btf *btf = bpf_object__btf(obj);
	struct bpf_map *map;

	if (!btf)
		return -ENOENT;
	bpf_object__for_each_map(map, obj)
	{
		const struct btf_type *sec;
		const struct btf_var_secinfo *vs;
		uint32_t type_id;

		if (!bpf_map__is_internal(map))
			continue;
		/* libbpf points an internal map's value type at its DATASEC. */
		type_id = bpf_map__btf_value_type_id(map);
		sec = type_id ? btf__type_by_id(btf, type_id) : NULL;
		if (!sec || !btf_is_datasec(sec))
			continue;
		vs = btf_var_secinfos(sec);
		for (unsigned i = 0; i < btf_vlen(sec); i++, vs++) {
			const struct btf_type *var = btf__type_by_id(btf, vs->type);
			const char *vname = var ? btf__name_by_offset(btf, var->name_off) : NULL;

			if (var && btf_is_var(var) && vname && strcmp(vname, name) == 0) {
				*ret_map = map;
				*ret_off = vs->offset;
				*ret_size = vs->size;
				return 0;
			}
		}
	}
	return -ENOENT;
}

/*
 * libbpf 1.1 loads the kernel's BTF only for what needs it, struct_ops
 * programs that load among them, and describes struct_ops maps with it
 * whether it loaded it or not: a struct_ops map without a struct_ops
 * program to load (none in the object, an empty section, or none selected)
 * is a NULL dereference. btfcheck_object() refuses the plain case before
 * libbpf opens the object; this is the configured one, before libbpf loads.
 */
static int job_check_struct_ops(struct job *j, struct reply *r)
{
	bool maps = false, progs = false;
	struct bpf_program *prog;
	struct bpf_map *map;

	/* Spelled out: clang-format doesn't know libbpf's for_each macros. */
	for (map = bpf_object__next_map(j->obj, NULL); map; map = bpf_object__next_map(j->obj, map))
		maps = maps || bpf_map__type(map) == BPF_MAP_TYPE_STRUCT_OPS;
	for (prog = bpf_object__next_program(j->obj, NULL); prog;
	     prog = bpf_object__next_program(j->obj, prog))
		progs = progs || (bpf_program__autoload(prog) &&
				  bpf_program__type(prog) == BPF_PROG_TYPE_STRUCT_OPS);
	if (maps && !progs)
		return reply_error(
			r, PROTO_ERR_OBJECT, EINVAL,
			"not a usable BPF object: it declares a struct_ops map but loads "
			"no struct_ops program (libbpf 1.1 crashes on such objects, and "
			"the map would register nothing usable)");
	return 0;
}

int job_configure(struct job *j, struct reply *r)
{
	struct bpf_program *prog;
	int k;

	for (size_t i = 0; i < j->req.n_map_sizes; i++) {
		struct bpf_map *map =
			bpf_object__find_map_by_name(j->obj, j->req.map_sizes[i].name);

		if (!map)
			return reply_error(r, PROTO_ERR_INVALID, ENOENT,
					   "no map \"%s\" in the object", j->req.map_sizes[i].name);
		k = bpf_map__set_max_entries(map, j->req.map_sizes[i].max_entries);
		if (k < 0)
			return reply_error(r, PROTO_ERR_INVALID, -k, "cannot size map \"%s\": %s",
					   j->req.map_sizes[i].name, strerror(-k));
	}

	for (size_t i = 0; i < j->req.n_freeze; i++)
		if (!bpf_object__find_map_by_name(j->obj, j->req.freeze[i]))
			return reply_error(r, PROTO_ERR_INVALID, ENOENT,
					   "freeze: no map \"%s\" in the object", j->req.freeze[i]);

	for (size_t i = 0; i < j->req.n_globals; i++) {
		const struct proto_global *g = &j->req.globals[i];
		struct bpf_map *map;
		uint32_t off, size;
		size_t value_size;
		const void *value;
		_cleanup_free_ uint8_t *copy = NULL;

		if (find_global(j->obj, g->name, &map, &off, &size) < 0)
			return reply_error(r, PROTO_ERR_INVALID, ENOENT,
					   "no global variable \"%s\" in .rodata, .data or .bss",
					   g->name);
		if (g->size != size)
			return reply_error(r, PROTO_ERR_INVALID, EINVAL,
					   "global \"%s\" has %u bytes, the value given has %zu",
					   g->name, size, g->size);
		value = bpf_map__initial_value(map, &value_size);
		if (!value || (uint64_t)off + size > value_size)
			return reply_error(r, PROTO_ERR_OBJECT, EINVAL,
					   "global \"%s\" lies outside its section", g->name);
		copy = malloc(value_size);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, value, value_size);
		memcpy(copy + off, g->value, size);
		k = bpf_map__set_initial_value(map, copy, value_size);
		if (k < 0)
			return reply_error(r, PROTO_ERR_INVALID, -k, "cannot set global \"%s\": %s",
					   g->name, strerror(-k));
	}

	for (size_t i = 0; i < j->req.n_programs; i++) {
		const struct proto_program_select *sel = &j->req.programs[i];

		if (!bpf_object__find_program_by_name(j->obj, sel->name))
			return reply_error(r, PROTO_ERR_INVALID, ENOENT,
					   "no program \"%s\" in the object", sel->name);
	}

	bpf_object__for_each_program(prog, j->obj)
	{
		const struct proto_program_select *sel = NULL;

		for (size_t i = 0; i < j->req.n_programs; i++)
			if (strcmp(j->req.programs[i].name, bpf_program__name(prog)) == 0)
				sel = &j->req.programs[i];
		if (j->req.n_programs > 0)
			bpf_program__set_autoload(prog, sel != NULL);
		if (sel && sel->type) {
			int t = policy_prog_type_from_string(sel->type);

			if (t < 0)
				return reply_error(r, PROTO_ERR_INVALID, EINVAL,
						   "unknown program type \"%s\" for program \"%s\"",
						   sel->type, sel->name);
			bpf_program__set_type(prog, t);
		}
		if (sel && sel->attach_type) {
			int t = attach_type_from_string(sel->attach_type);

			if (t < 0)
				return reply_error(r, PROTO_ERR_INVALID, EINVAL,
						   "unknown attach type \"%s\" for program \"%s\"",
						   sel->attach_type, sel->name);
			bpf_program__set_expected_attach_type(prog, t);
		}
		if (bpf_program__autoload(prog) && bpf_program__type(prog) == BPF_PROG_TYPE_UNSPEC)
			return reply_error(r, PROTO_ERR_INVALID, EINVAL,
					   "program \"%s\" is in section \"%s\", which this libbpf "
					   "does not know; give its type (--program %s:TYPE)",
					   bpf_program__name(prog), bpf_program__section_name(prog),
					   bpf_program__name(prog));
	}
	/* After the program loop: an attach target is looked up for the attach type set there. */
	k = setup_configure(&j->setup, j->obj, &j->req, r);
	if (k != 0)
		return k;
	return job_check_struct_ops(j, r);
}
