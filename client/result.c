/* SPDX-License-Identifier: MIT */
/* The result of a load or fds call (struct bpfbroker_result): built from the reply, its fds taken,
 * its programs and maps looked up. */
#include "libbpfbroker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/macro.h"
#include "libbpfbroker-internal.h"
#include "reply.h"

/*
 * The programs and maps are the library's arrays, handed out one element at a
 * time (bpfbroker_result_program_at()): their structs may grow (ABI.md).
 */
struct result_priv {
	struct bpfbroker_result pub;
	struct bpfbroker_program *programs;
	struct bpfbroker_map *maps;
	json_object *reply;
	int *fds;
	size_t n_fds;
	void **allocs; /* string arrays to free */
	size_t n_allocs;
};

static int fd_index(struct result_priv *r, int64_t idx)
{
	if (idx < 0 || (size_t)idx >= r->n_fds)
		return -1;
	return r->fds[idx];
}

static int fd_at(struct result_priv *r, json_object *o)
{
	return fd_index(r, get_int(o, "fd", -1));
}

static void *remember(struct result_priv *r, void *p)
{
	void **grown;

	if (!p)
		return NULL;
	grown = realloc(r->allocs, (r->n_allocs + 1) * sizeof(void *));
	if (!grown) {
		free(p);
		return NULL;
	}
	r->allocs = grown;
	r->allocs[r->n_allocs++] = p;
	return p;
}

enum bpfbroker_access bpfbroker_access_from_string(const char *s)
{
	return !s			   ? BPFBROKER_ACCESS_NONE
	       : strcmp(s, "rw") == 0	   ? BPFBROKER_ACCESS_RW
	       : strcmp(s, "ro") == 0	   ? BPFBROKER_ACCESS_RO
	       : strcmp(s, "wo") == 0	   ? BPFBROKER_ACCESS_WO
	       : strcmp(s, "consume") == 0 ? BPFBROKER_ACCESS_CONSUME
					   : BPFBROKER_ACCESS_NONE;
}

int result_build(struct proto_msg *m, struct bpfbroker_result **ret)
{
	struct result_priv *r = calloc(1, sizeof(*r));
	json_object *result, *progs, *maps;
	size_t np = 0, nm = 0;

	if (!r)
		return -ENOMEM;
	r->pub.btf_fd = -1;
	r->reply = TAKE_PTR(m->json);
	r->fds = TAKE_PTR(m->fds);
	r->n_fds = m->n_fds;
	m->n_fds = 0;
	if (!json_object_object_get_ex(r->reply, "result", &result)) {
		bpfbroker_result_free(&r->pub);
		return -EPROTO;
	}
	if (json_object_object_get_ex(result, "programs", &progs))
		np = json_object_array_length(progs);
	if (json_object_object_get_ex(result, "maps", &maps))
		nm = json_object_array_length(maps);
	r->programs = calloc(np + 1, sizeof(*r->programs));
	r->maps = calloc(nm + 1, sizeof(*r->maps));
	if (!r->programs || !r->maps) {
		bpfbroker_result_free(&r->pub);
		return -ENOMEM;
	}
	r->pub.allowed = get_bool(result, "allowed");
	r->pub.name = get_str(result, "name");
	r->pub.btf_fd = fd_index(r, get_int(result, "btf_fd", -1));
	r->pub.reasons = remember(r, string_array(result, "reasons"));
	r->pub.reason_keys = remember(r, reason_keys(result));
	if (!reasons_complete(result, r->pub.reasons, r->pub.reason_keys)) {
		bpfbroker_result_free(&r->pub);
		return -ENOMEM;
	}
	r->pub.json = reply_text(r->reply);
	for (size_t i = 0; i < np; i++) {
		json_object *o = json_object_array_get_idx(progs, i);
		struct bpfbroker_program *p = &r->programs[i];

		p->name = get_str(o, "name") ?: "";
		p->type = get_str(o, "type") ?: "";
		p->attach_type = get_str(o, "attach_type");
		p->loaded = get_int(o, "id", 0) > 0;
		p->id = (uint32_t)get_int(o, "id", 0);
		p->tag = get_str(o, "tag");
		p->insns = (uint32_t)get_int(o, "insns", 0);
		p->fd = fd_at(r, o);
		p->verdict = get_str(o, "verdict") ?: "";
		p->helpers = remember(r, string_array(o, "helpers"));
		p->kfuncs = remember(r, string_array(o, "kfuncs"));
	}
	r->pub.n_programs = np;
	for (size_t i = 0; i < nm; i++) {
		json_object *o = json_object_array_get_idx(maps, i);
		struct bpfbroker_map *p = &r->maps[i];
		const char *access = get_str(o, "access");

		p->name = get_str(o, "name") ?: "";
		p->type = get_str(o, "type") ?: "";
		p->id = (uint32_t)get_int(o, "id", 0);
		p->key_size = (uint32_t)get_int(o, "key_size", 0);
		p->value_size = (uint32_t)get_int(o, "value_size", 0);
		p->max_entries = (uint32_t)get_int(o, "max_entries", 0);
		p->pinned = get_bool(o, "pinned");
		p->access = bpfbroker_access_from_string(access);
		p->map_flags = (uint32_t)get_int(o, "map_flags", 0);
		p->frozen = get_bool(o, "frozen");
		p->fd = fd_at(r, o);
		/* Loads and older brokers: the fd carries the access. */
		p->fd_access = p->fd < 0 ? BPFBROKER_ACCESS_NONE
			       : !get_str(o, "fd_access")
				       ? p->access
				       : bpfbroker_access_from_string(get_str(o, "fd_access"));
		p->verdict = get_str(o, "verdict") ?: "";
		p->btf_key_type_id = (uint32_t)get_int(o, "btf_key_type_id", 0);
		p->btf_value_type_id = (uint32_t)get_int(o, "btf_value_type_id", 0);
	}
	r->pub.n_maps = nm;
	*ret = &r->pub;
	return 0;
}

void bpfbroker_result_free(struct bpfbroker_result *pub)
{
	struct result_priv *r = (struct result_priv *)pub;

	if (!r)
		return;
	if (r->fds)
		close_many(r->fds, r->n_fds);
	free(r->fds);
	for (size_t i = 0; i < r->n_allocs; i++)
		free(r->allocs[i]);
	free(r->allocs);
	free(r->programs);
	free(r->maps);
	json_object_put(r->reply);
	free(r);
}

static int result_take(struct result_priv *r, int *slot)
{
	int fd = *slot;

	if (fd < 0)
		return -1;
	for (size_t i = 0; i < r->n_fds; i++)
		if (r->fds[i] == fd)
			r->fds[i] = -EBADF;
	*slot = -1;
	return fd;
}

int bpfbroker_result_take_map_fd(struct bpfbroker_result *pub, const char *name)
{
	struct result_priv *r = (struct result_priv *)pub;

	for (size_t i = 0; i < pub->n_maps; i++)
		if (strcmp(r->maps[i].name, name) == 0)
			return result_take(r, &r->maps[i].fd);
	return -1;
}

int bpfbroker_result_take_prog_fd(struct bpfbroker_result *pub, const char *name)
{
	struct result_priv *r = (struct result_priv *)pub;

	for (size_t i = 0; i < pub->n_programs; i++)
		if (strcmp(r->programs[i].name, name) == 0)
			return result_take(r, &r->programs[i].fd);
	return -1;
}

const struct bpfbroker_map *bpfbroker_result_map_at(const struct bpfbroker_result *pub, size_t i)
{
	return i < pub->n_maps ? &((const struct result_priv *)pub)->maps[i] : NULL;
}

const struct bpfbroker_program *bpfbroker_result_program_at(const struct bpfbroker_result *pub,
							    size_t i)
{
	return i < pub->n_programs ? &((const struct result_priv *)pub)->programs[i] : NULL;
}

const struct bpfbroker_map *bpfbroker_result_map(const struct bpfbroker_result *r, const char *name)
{
	const struct bpfbroker_map *m;

	for (size_t i = 0; (m = bpfbroker_result_map_at(r, i)); i++)
		if (strcmp(m->name, name) == 0)
			return m;
	return NULL;
}

const struct bpfbroker_program *bpfbroker_result_program(const struct bpfbroker_result *r,
							 const char *name)
{
	const struct bpfbroker_program *p;

	for (size_t i = 0; (p = bpfbroker_result_program_at(r, i)); i++)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

/* The reply's "programs" entry of the program called name, or NULL. */
static json_object *result_program_json(const struct bpfbroker_result *pub, const char *name)
{
	const struct result_priv *r = (const struct result_priv *)pub;
	json_object *result = NULL, *progs = NULL;

	if (!json_object_object_get_ex(r->reply, "result", &result) ||
	    !json_object_object_get_ex(result, "programs", &progs))
		return NULL;
	for (size_t i = 0; i < json_object_array_length(progs); i++) {
		json_object *o = json_object_array_get_idx(progs, i);
		const char *n = get_str(o, "name");

		if (n && strcmp(n, name) == 0)
			return o;
	}
	return NULL;
}

/* "load": whether the broker loads it, libbpf's autoload (true when absent). */
static bool program_json_load(json_object *o)
{
	return !json_object_object_get_ex(o, "load", NULL) || get_bool(o, "load");
}

bool bpfbroker_result_program_selected(const struct bpfbroker_result *pub, const char *name)
{
	json_object *o = result_program_json(pub, name);

	/*
	 * "selected": false only for programs the request's list left out. Not
	 * "load", which is false for libbpf's opt-in SEC("?...") programs too;
	 * brokers before "selected" sent only that.
	 */
	if (!o)
		return false;
	return json_object_object_get_ex(o, "selected", NULL) ? get_bool(o, "selected")
							      : program_json_load(o);
}

bool bpfbroker_result_program_autoload(const struct bpfbroker_result *pub, const char *name)
{
	json_object *o = result_program_json(pub, name);

	return o && program_json_load(o);
}

const char *bpfbroker_access_to_string(enum bpfbroker_access a)
{
	switch (a) {
	case BPFBROKER_ACCESS_RO:
		return "ro";
	case BPFBROKER_ACCESS_WO:
		return "wo";
	case BPFBROKER_ACCESS_RW:
		return "rw";
	case BPFBROKER_ACCESS_CONSUME:
		return "consume";
	default:
		return "none";
	}
}
