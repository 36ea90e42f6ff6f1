/* SPDX-License-Identifier: MIT */
/*
 * The BTF a caller may see of a named object: the owner's whole, for anyone else only the types of
 * the maps shared with them, charged to their quota.
 */
#include "named_call.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "btffilter.h"
#include "daemon/shared/caps.h"
#include "daemon/shared/log.h"
#include "ledger.h"
#include "store.h"

/* The object's BTF, as the owner gets it: read-only type information for pretty-printing. */
static int object_btf_fd(const struct object *o)
{
	static const cap_value_t sys_admin[] = {CAP_SYS_ADMIN};
	int64_t id = meta_int(o->meta, "btf_id");
	int fd, k;

	if (id <= 0 || id > UINT32_MAX)
		return -ENOENT;
	/* BPF_BTF_GET_FD_BY_ID, like BPF_MAP_GET_FD_BY_ID, is CAP_SYS_ADMIN's. */
	k = caps_set_effective(sys_admin, 1);
	if (k < 0)
		return k;
	fd = bpf_btf_get_fd_by_id((uint32_t)id);
	k = fd < 0 ? negative_errno() : fd;
	caps_clear_effective();
	return k;
}

/* The object's BTF as the kernel holds it, read back by id. */
static int object_btf_read(const struct object *o, void **ret, size_t *ret_size)
{
	static const cap_value_t bpf_cap[] = {CAP_BPF};
	_cleanup_close_ int fd = object_btf_fd(o);
	_cleanup_free_ void *data = NULL;
	struct bpf_btf_info info = {};
	uint32_t len = sizeof(info), size;
	int k;

	if (fd < 0)
		return fd;
	/* Before Linux 6.5 with unprivileged BPF disabled, every bpf() command wants CAP_BPF. */
	k = caps_set_effective(bpf_cap, 1);
	if (k < 0)
		return k;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0) {
		k = negative_errno();
	} else if (info.btf_size == 0 || info.btf_size > BTFFILTER_MAX_BYTES) {
		k = -E2BIG;
	} else if (!(data = malloc(info.btf_size))) {
		k = -ENOMEM;
	} else {
		size = info.btf_size;
		info = (struct bpf_btf_info){.btf = (uint64_t)(uintptr_t)data, .btf_size = size};
		len = sizeof(info);
		if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
			k = negative_errno();
		else if (info.btf_size != size)
			k = -ESTALE;
	}
	caps_clear_effective();
	if (k < 0)
		return k;
	*ret = TAKE_PTR(data);
	*ret_size = size;
	return 0;
}

void btf_view_done(struct btf_view *v)
{
	free(v->data);
	free(v->ids);
}

int object_btf_view(const struct call *c, const struct object *o, bool want_bytes,
		    struct btf_view *ret)
{
	json_object *mm = meta_array(o->meta, "maps");
	struct btf_view v = {.n_maps = mm ? json_object_array_length(mm) : 0};
	_cleanup_free_ void *whole = NULL;
	size_t size = 0;
	int k;

	v.ids = calloc(2 * v.n_maps + 1, sizeof(*v.ids));
	if (!v.ids)
		return -ENOMEM;
	if (meta_int(o->meta, "btf_id") <= 0) {
		*ret = v; /* no BTF, no type ids */
		return 0;
	}
	for (size_t i = 0; i < v.n_maps; i++) {
		json_object *m = json_object_array_get_idx(mm, i);
		const char *name = meta_string(m, "name");

		if (!o->is_owner && (!name || object_map_access(c, o, name) == MAP_ACCESS_NONE))
			continue;
		v.ids[2 * i] = (uint32_t)meta_int(m, "btf_key_type_id");
		v.ids[2 * i + 1] = (uint32_t)meta_int(m, "btf_value_type_id");
	}
	if (o->is_owner) {
		k = want_bytes ? object_btf_read(o, &v.data, &v.size) : 0;
		if (k < 0) {
			btf_view_done(&v);
			return k;
		}
		*ret = v;
		return 0;
	}
	k = object_btf_read(o, &whole, &size);
	/* A root it cannot keep (a global-data map's section) becomes 0. */
	if (k >= 0)
		k = btffilter_build(whole, size, v.ids, 2 * v.n_maps, &v.data, &v.size);
	if (k < 0) {
		/* Never the whole BTF instead: none at all. */
		log_warning("no BTF for uid %u of %u/%s: %s", (unsigned)c->ident.id.uid,
			    (unsigned)o->owner, o->name, strerror(-k));
		memset(v.ids, 0, (2 * v.n_maps + 1) * sizeof(*v.ids));
	}
	*ret = v;
	return 0;
}

/*
 * A BTF the broker made for the caller stays in the kernel while the caller
 * holds its fd: it counts against the caller's max_map_memory_bytes like
 * any object the broker makes for them (ledger.h). -EDQUOT over the quota.
 */
static int call_charge_btf(struct call *c, int fd)
{
	_cleanup_close_ int lock = store_lock_user(&c->cfg->store, c->ident.id.uid);
	struct ledger l = {};
	struct ledger_usage u = {};
	int k;

	if (lock < 0)
		return lock;
	/* As for loads: the recorded figures first, every object looked up only if over. */
	k = ledger_open(&c->cfg->store, c->ident.id.uid, false, &l);
	if (k >= 0)
		k = ledger_add_btf(&l, fd);
	if (k >= 0) {
		ledger_usage(&l, &u);
		if (u.map_bytes > c->grant->limits.max_map_memory_bytes) {
			k = ledger_prune_now(&l);
			ledger_usage(&l, &u);
		}
	}
	if (k < 0) {
		ledger_done(&l);
		return k;
	}
	k = u.map_bytes <= c->grant->limits.max_map_memory_bytes ? ledger_commit(&l) : -EDQUOT;
	ledger_done(&l);
	return k;
}

/* A BTF fd of the caller's view: the object's own for the owner, a new one for others. */
int btf_view_fd(struct call *c, const struct object *o, const struct btf_view *v)
{
	static const cap_value_t bpf_cap[] = {CAP_BPF};
	int fd, k;

	if (o->is_owner)
		return object_btf_fd(o);
	if (!v->data)
		return -ENOENT;
	/* BPF_BTF_LOAD: CAP_BPF. The kernel keeps the new BTF while the client holds the fd. */
	k = caps_set_effective(bpf_cap, 1);
	if (k < 0)
		return k;
	fd = bpf_btf_load(v->data, v->size, NULL);
	k = fd < 0 ? negative_errno() : fd;
	caps_clear_effective();
	if (fd >= 0) {
		k = call_charge_btf(c, fd);
		if (k < 0)
			safe_close(fd);
		else
			k = fd;
	}
	return k;
}
