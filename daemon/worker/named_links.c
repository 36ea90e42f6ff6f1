/* SPDX-License-Identifier: MIT */
/*
 * The kernel's links of named objects' programs: walked once, matched to an object by its pinned
 * programs, described for list and show.
 */
#include "named_call.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "daemon/shared/caps.h"
#include "policy/attach_type.h"
#include "store.h"

static bool link_pinned(const char *dir, uint32_t id)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/l%u", dir, id);
	return access(path, F_OK) == 0;
}

/* Every link in the kernel, with its info. Needs CAP_SYS_ADMIN (BPF_LINK_GET_FD_BY_ID). */
int links_walk(struct link_entry **ret, size_t *ret_n)
{
	static const cap_value_t caps[] = {CAP_BPF, CAP_SYS_ADMIN};
	struct link_entry *v = NULL;
	size_t n = 0;
	uint32_t id = 0;
	int k = caps_set_effective(caps, ARRAY_SIZE(caps));

	if (k < 0)
		return k;
	while (bpf_link_get_next_id(id, &id) == 0) {
		struct link_entry e = {.id = id}, *nv;
		uint32_t len = sizeof(e.info);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		/*
		 * Without buffers first: the union's members overlap, and a pointer
		 * meant for one type's name is another type's length (the kernel
		 * then refuses a perf event link's info).
		 */
		k = bpf_obj_get_info_by_fd(fd, &e.info, &len);
		if (k == 0 && e.info.type == BPF_LINK_TYPE_RAW_TRACEPOINT) {
			e.info.raw_tracepoint.tp_name = (uint64_t)(uintptr_t)e.tp_name;
			e.info.raw_tracepoint.tp_name_len = sizeof(e.tp_name);
			k = bpf_obj_get_info_by_fd(fd, &e.info, &len);
			e.tp_name[sizeof(e.tp_name) - 1] = '\0';
		} else if (k == 0 && e.info.type == BPF_LINK_TYPE_PERF_EVENT) {
			uprobe_link_describe(fd, e.uprobe, sizeof(e.uprobe));
		}
		safe_close(fd);
		if (k < 0)
			continue;
		e.prog_id = e.info.prog_id;
		nv = reallocarray(v, n + 1, sizeof(*v));
		if (!nv) {
			free(v);
			caps_clear_effective();
			return -ENOMEM;
		}
		v = nv;
		v[n++] = e;
	}
	caps_clear_effective();
	*ret = v;
	*ret_n = n;
	return 0;
}

static const char *prog_name_by_id(json_object *meta, uint32_t id)
{
	json_object *progs = meta_array(meta, "programs");

	for (size_t i = 0; progs && i < json_object_array_length(progs); i++) {
		json_object *p = json_object_array_get_idx(progs, i);

		if (meta_int(p, "id") == (int64_t)id)
			return meta_string(p, "name");
	}
	return NULL;
}

/*
 * The links (pinned by the broker, or held as an fd by anyone) of the
 * object's programs, out of all (from links_walk()): walking the kernel's
 * links is the only complete answer, and what unload detaches too.
 */
int object_links_of(const struct object *o, const struct link_entry *all, size_t n_all,
		    struct link_entry **ret, size_t *ret_n)
{
	_cleanup_free_ uint32_t *prog_ids = NULL;
	struct link_entry *v = NULL;
	size_t n = 0, n_progs = 0;
	bool any = false;
	int k;

	/*
	 * Most objects have no link: when no link's program is one the metadata
	 * names, there is nothing to verify (a list of 1,000 objects would
	 * otherwise open 1,000 pin directories and every program pin in them).
	 */
	for (size_t l = 0; l < n_all && !any; l++)
		any = prog_name_by_id(o->meta, all[l].prog_id) != NULL;
	if (!any) {
		*ret = NULL;
		*ret_n = 0;
		return 0;
	}
	/* The programs really pinned there, not ids from metadata that may be stale. */
	k = store_object_prog_ids(o->dir, &prog_ids, &n_progs);
	if (k < 0)
		return k;
	for (size_t l = 0; l < n_all; l++) {
		bool ours = false;
		struct link_entry *nv;

		for (size_t i = 0; i < n_progs && !ours; i++)
			ours = prog_ids[i] == all[l].prog_id;
		if (!ours)
			continue;
		nv = reallocarray(v, n + 1, sizeof(*v));
		if (!nv) {
			free(v);
			return -ENOMEM;
		}
		v = nv;
		v[n] = all[l];
		v[n++].pinned = link_pinned(o->dir, all[l].id);
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int object_links(const struct object *o, struct link_entry **ret, size_t *ret_n)
{
	_cleanup_free_ struct link_entry *all = NULL;
	size_t n_all = 0;
	int k = links_walk(&all, &n_all);

	if (k < 0)
		return k;
	return object_links_of(o, all, n_all, ret, ret_n);
}

json_object *link_json(const struct object *o, const struct link_entry *e)
{
	json_object *l = json_object_new_object();
	const char *type =
		e->info.type == LINK_TYPE_TCX ? "tcx" : libbpf_bpf_link_type_str(e->info.type);
	const char *prog = prog_name_by_id(o->meta, e->prog_id);
	char target[160] = "";

	if (!l)
		return NULL;
	json_object_object_add(l, "id", json_object_new_int64(e->id));
	json_object_object_add(l, "program", json_object_new_string(prog ? prog : "?"));
	json_object_object_add(l, "type", json_object_new_string(type ? type : "unknown"));
	switch (e->info.type) {
	case BPF_LINK_TYPE_CGROUP: {
		const char *at = attach_type_to_string((int)e->info.cgroup.attach_type);

		snprintf(target, sizeof(target), "cgroup id %llu",
			 (unsigned long long)e->info.cgroup.cgroup_id);
		if (at)
			json_object_object_add(l, "attach_type", json_object_new_string(at));
		break;
	}
	case BPF_LINK_TYPE_RAW_TRACEPOINT:
		snprintf(target, sizeof(target), "raw_tracepoint %s", e->tp_name);
		break;
	case BPF_LINK_TYPE_XDP:
		/* An index in the caller's network namespace, which may not be ours. */
		snprintf(target, sizeof(target), "xdp ifindex %u", e->info.xdp.ifindex);
		break;
	case BPF_LINK_TYPE_PERF_EVENT:
		snprintf(target, sizeof(target), "%s", e->uprobe);
		break;
	default:
		break;
	}
	if (target[0])
		json_object_object_add(l, "target", json_object_new_string(target));
	json_object_object_add(l, "pinned", json_object_new_boolean(e->pinned));
	if (object_link_is_protected(o, e->id))
		json_object_object_add(l, "protected", json_object_new_boolean(true));
	return l;
}
