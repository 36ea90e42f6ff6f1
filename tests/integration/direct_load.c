/* SPDX-License-Identifier: MIT */
#include "direct_load.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static struct direct_outcome *capture;

/* What the broker keeps of libbpf's output: everything but debug messages. */
static int print_capture(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	size_t len = strlen(capture->log), room = sizeof(capture->log) - len;

	if (level != LIBBPF_DEBUG && room > 1)
		vsnprintf(capture->log + len, room, fmt, ap);
	return 0;
}

static int setup_failed(struct direct_outcome *out, int err, const char *what, const char *name)
{
	size_t len = strlen(out->log);

	snprintf(out->log + len, sizeof(out->log) - len, "%s%s \"%s\": %s\n", DIRECT_SETUP_FAILED,
		 what, name, strerror(-err));
	return err;
}

/* Set a global as a skeleton does (skel->rodata->name = value): in its section's image. */
static int set_global(struct bpf_object *obj, const struct setup_global *g)
{
	const struct btf *btf = bpf_object__btf(obj);
	struct bpf_map *map;

	bpf_object__for_each_map(map, obj)
	{
		const struct btf_type *sec;
		const struct btf_var_secinfo *vs;
		size_t size;
		const char *image;
		char *copy;
		int id, k;

		if (!bpf_map__is_internal(map) || !btf)
			continue;
		id = btf__find_by_name_kind(btf, strchr(bpf_map__name(map), '.') ?: "",
					    BTF_KIND_DATASEC);
		if (id < 0)
			continue;
		sec = btf__type_by_id(btf, id);
		vs = btf_var_secinfos(sec);
		for (int i = 0; i < btf_vlen(sec); i++, vs++) {
			const struct btf_type *var = btf__type_by_id(btf, vs->type);

			if (strcmp(btf__name_by_offset(btf, var->name_off), g->name) != 0)
				continue;
			image = bpf_map__initial_value(map, &size);
			if (!image || vs->size != g->size || vs->offset + g->size > size)
				return -EINVAL;
			copy = malloc(size);
			if (!copy)
				return -ENOMEM;
			memcpy(copy, image, size);
			memcpy(copy + vs->offset, g->value, g->size);
			k = bpf_map__set_initial_value(map, copy, size);
			free(copy);
			return k;
		}
	}
	return -ENOENT;
}

static const struct setup_prog *prog_selected(const struct setup *s, const char *name)
{
	for (const struct setup_prog *p = s->progs; p && p->name; p++)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

static int configure(struct bpf_object *obj, const struct setup *s, struct direct_outcome *out)
{
	struct bpf_program *prog;
	struct bpf_map *map;
	int k;

	bpf_object__for_each_program(prog, obj)
	{
		const struct setup_prog *p = prog_selected(s, bpf_program__name(prog));

		if (s->progs)
			bpf_program__set_autoload(prog, p != NULL);
		if (p && p->type)
			bpf_program__set_type(prog, p->type);
		if (p && p->attach_name)
			bpf_program__set_expected_attach_type(prog, p->attach_type);
	}
	for (const struct setup_target *t = s->targets; t && t->program; t++) {
		prog = bpf_object__find_program_by_name(obj, t->program);
		k = prog ? bpf_program__set_attach_target(prog, 0, t->target) : -ENOENT;
		if (k < 0)
			return setup_failed(out, k, "attach target", t->target);
	}
	for (const struct setup_global *g = s->globals; g && g->name; g++)
		if ((k = set_global(obj, g)) < 0)
			return setup_failed(out, k, "global", g->name);
	for (const struct setup_map *m = s->maps; m && m->name; m++) {
		map = bpf_object__find_map_by_name(obj, m->name);
		if (!map)
			return setup_failed(out, -ENOENT, "map", m->name);
		if (m->key_size)
			bpf_map__set_key_size(map, m->key_size);
		if (m->value_size)
			bpf_map__set_value_size(map,
						m->value_size == SETUP_ZERO ? 0 : m->value_size);
		if (m->max_entries)
			bpf_map__set_max_entries(map, m->max_entries);
	}
	for (const struct setup_inner *in = s->inner; in && in->outer; in++) {
		map = bpf_object__find_map_by_name(obj, in->outer);
		if (!map)
			return setup_failed(out, -ENOENT, "outer map", in->outer);
		/* As a loader does: the inner map lives until the process exits. */
		k = bpf_map_create(in->type, "inner", in->key_size, in->value_size, in->max_entries,
				   NULL);
		if (k < 0 || (k = bpf_map__set_inner_map_fd(map, k)) < 0)
			return setup_failed(out, k < 0 ? k : -errno, "inner map of", in->outer);
	}
	return 0;
}

static void describe(struct bpf_object *obj, struct direct_outcome *out)
{
	struct bpf_program *prog;
	struct bpf_map *map;

	bpf_object__for_each_program(prog, obj)
	{
		struct direct_prog *p = &out->progs[out->n_progs];

		if (out->n_progs == DIRECT_MAX)
			break;
		snprintf(p->name, sizeof(p->name), "%s", bpf_program__name(prog));
		p->type = bpf_program__type(prog);
		p->attach_type = bpf_program__expected_attach_type(prog);
		p->load = bpf_program__autoload(prog);
		out->n_progs++;
	}
	bpf_object__for_each_map(map, obj)
	{
		struct direct_map *m = &out->maps[out->n_maps];
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);

		if (out->n_maps == DIRECT_MAX)
			break;
		snprintf(m->name, sizeof(m->name), "%s", bpf_map__name(map));
		m->type = bpf_map__type(map);
		m->key_size = bpf_map__key_size(map);
		m->value_size = bpf_map__value_size(map);
		m->max_entries = bpf_map__max_entries(map);
		/* What the kernel made, where it made it. */
		if (bpf_map__fd(map) >= 0 &&
		    bpf_obj_get_info_by_fd(bpf_map__fd(map), &info, &len) == 0) {
			m->type = (int)info.type;
			m->key_size = info.key_size;
			m->value_size = info.value_size;
			m->max_entries = info.max_entries;
		}
		if (direct_map_is_frozen_section(m->name) && m->value_size <= DIRECT_VALUE_MAX &&
		    bpf_map__fd(map) >= 0)
			m->has_value =
				bpf_map_lookup_elem(bpf_map__fd(map), &(__u32){0}, m->value) == 0;
		out->n_maps++;
	}
}

static int child(const char *path, const struct setup *s, struct direct_outcome *out)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = s->object_name,
		    .pin_root_path = s->pin_root);
	struct bpf_object *obj;
	int k;

	capture = out;
	libbpf_set_print(print_capture);
	obj = bpf_object__open_file(path, &opts);
	if (!obj)
		return -errno;
	k = configure(obj, s, out);
	if (k == 0)
		k = bpf_object__load(obj);
	describe(obj, out);
	/* Maps pinned by name stay pinned: the caller removes pin_root. */
	bpf_object__close(obj);
	return k;
}

int direct_load(const char *path, const struct setup *s, struct direct_outcome *out)
{
	struct direct_outcome *shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
					     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int status, k = 0;
	pid_t pid;

	if (shared == MAP_FAILED)
		return -errno;
	memset(shared, 0, sizeof(*shared));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		k = -errno;
	} else if (pid == 0) {
		shared->err = child(path, s, shared);
		_exit(0);
	} else if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		   WEXITSTATUS(status) != 0) {
		k = -ECHILD;
	} else {
		*out = *shared;
	}
	munmap(shared, sizeof(*shared));
	return k;
}

bool direct_map_is_frozen_section(const char *name)
{
	const char *dot = strchr(name, '.');

	return dot && (strncmp(dot, ".rodata", 7) == 0 || strcmp(dot, ".kconfig") == 0);
}

int direct_log_line(const struct direct_outcome *out, const char *needle, char *buf, size_t size)
{
	const char *hit = strstr(out->log, needle), *start, *end;

	if (!hit)
		return -ENOENT;
	for (start = hit; start > out->log && start[-1] != '\n'; start--)
		;
	if (strncmp(start, "libbpf: ", 8) == 0)
		start += 8;
	end = strchrnul(hit, '\n');
	snprintf(buf, size, "%.*s", (int)(end - start), start);
	return 0;
}
