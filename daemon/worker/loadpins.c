/* SPDX-License-Identifier: MIT */
/*
 * Maps pinned by name: only plain names, in the caller's own directory, reused only with write
 * access, undone on a refusal.
 */
#include "job.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "denial.h"
#include "proto/proto.h"
#include "reply.h"
#include "store.h"

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

/*
 * libbpf builds a pinned map's path as pin_root_path + "/" + map name, and an
 * ELF symbol name can hold anything, "../" included. Only plain names may pin.
 */
static bool pin_name_is_safe(const char *name)
{
	if (!name[0] || name[0] == '.' || strlen(name) > 64)
		return false;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '_' || *c == '.' || *c == '-'))
			return false;
	return true;
}

bool pinned_map_exists(const struct job *j, const char *name)
{
	char path[PATH_MAX + 256];

	snprintf(path, sizeof(path), "%s/%s", j->pin_dir, name);
	return access(path, F_OK) == 0;
}

/*
 * Reusing a map pinned by name lets this object's programs write it: that
 * needs write access. A ring buffer has no fd for writing (its fd is only
 * ever for consuming), so for it any grant but ro or none counts: wo or rw
 * (write, for the programs) or consume (the pins are the caller's own, so
 * whoever consumes it may also add to it).
 */
static bool pinned_map_reusable(const struct job *j, size_t i)
{
	if (j->desc.maps[i].map_type == BPF_MAP_TYPE_RINGBUF)
		return policy_grant_map_access(j->grant, j->desc.maps[i].name) &
		       (MAP_ACCESS_WO | MAP_ACCESS_CONSUME);
	return j->verdict.map_access[i] & MAP_ACCESS_WO;
}

int job_prepare_pins(struct job *j, struct reply *r)
{
	struct statfs sfs;
	bool any = false;
	struct bpf_map *map;

	if (!j->obj)
		return 0; /* raw instructions have no maps */
	bpf_object__for_each_map(map, j->obj)
	{
		const char *path = bpf_map__pin_path(map);
		size_t dir_len = strlen(j->pin_dir);

		if (!path)
			continue;
		/* The path must be exactly our directory, a slash, and the checked name. */
		if (!pin_name_is_safe(bpf_map__name(map)) ||
		    strncmp(path, j->pin_dir, dir_len) != 0 || path[dir_len] != '/' ||
		    strcmp(path + dir_len + 1, bpf_map__name(map)) != 0)
			return denial_reply(r, PROTO_ERR_DENIED, EPERM, "map", bpf_map__name(map),
					    NULL,
					    "map \"%s\" cannot be pinned: pinned maps need a plain "
					    "name of letters, digits, '_', '.' or '-'",
					    bpf_map__name(map));
		any = true;
	}
	if (!any)
		return 0;
	/*
	 * Reusing a pinned map makes this object's programs reach it, and the
	 * kernel doesn't check fd modes for that: it needs write access to the
	 * map, as a map of maps insert does.
	 */
	j->pin_created = calloc(j->desc.n_maps, sizeof(*j->pin_created));
	if (!j->pin_created)
		return -ENOMEM;
	for (size_t i = 0; i < j->desc.n_maps; i++) {
		const struct object_map *m = &j->desc.maps[i];
		bool exists = m->pinned && pinned_map_exists(j, m->name);

		if (exists && !pinned_map_reusable(j, i)) {
			bool possible = m->map_type == BPF_MAP_TYPE_RINGBUF ||
					job_access_possible(j, i, MAP_ACCESS_WO);

			return denial_reply(
				r, PROTO_ERR_DENIED, EPERM, "map", m->name, possible ? "maps" : "",
				"map \"%s\" is pinned by name and exists: this object's "
				"programs would reach it, which needs write access, and your "
				"policy grants %s%s",
				m->name, map_access_to_string(j->verdict.map_access[i]),
				possible ? ""
					 : " (and no policy grants write access to a map of its "
					   "type)");
		}
		/* Under the user's lock: nobody else pins in the user's directory meanwhile. */
		j->pin_created[i] = m->pinned && !exists;
	}
	if (statfs(j->cfg->store.pin_root, &sfs) < 0 || (unsigned long)sfs.f_type != BPF_FS_MAGIC)
		return reply_error(r, PROTO_ERR_LOAD, ENOENT,
				   "the object pins maps by name, but the broker has no bpffs "
				   "directory at %s (mount bpffs: mount -t bpf -o mode=0700 bpf "
				   "/sys/fs/bpf)",
				   j->cfg->store.pin_root);
	/* Owned by root, mode 0700: the user reaches its pins only through the broker. */
	{
		char dir[PATH_MAX];
		int k = store_pinned_dir(&j->cfg->store, j->id.uid, dir, sizeof(dir));

		if (k < 0)
			return reply_error(r, PROTO_ERR_INTERNAL, -k, "cannot create %s: %s",
					   j->pin_dir, strerror(-k));
	}
	return 0;
}

/* Maps libbpf pinned by name for this load (none existed before): undone on a refusal. */
void job_unpin_new(struct job *j)
{
	for (size_t i = 0; j->pin_created && !j->raw && i < j->desc.n_maps; i++) {
		const char *path = j->pin_created[i] ? bpf_map__pin_path(j->handles.maps[i]) : NULL;

		if (path)
			unlink(path);
	}
}
