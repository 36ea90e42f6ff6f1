/* SPDX-License-Identifier: MIT */
/*
 * Maps of named objects by name (libbpfbroker.h): on the fd where the kernel
 * lets the caller use bpf(), else through the broker's "map" method.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/hex.h"
#include "common/macro.h"
#include "libbpfbroker-internal.h"
#include "libbpfbroker.h"
#include "proto/proto.h"
#include "reply.h"

struct bpfbroker_map_handle {
	struct bpfbroker *b;
	struct bpfbroker_map_info info;
	char *object, *name, *type;
	int btf_fd; /* direct only, or -EBADF */
};

int bpfbroker_set_map_path(struct bpfbroker *b, enum bpfbroker_map_path path)
{
	if (!b || (unsigned)path > BPFBROKER_MAP_PATH_PROXY)
		return -EINVAL;
	b->map_path = path;
	return 0;
}

/*
 * Does the kernel refuse us bpf() altogether? Before Linux 6.5, with
 * kernel.unprivileged_bpf_disabled set and no CAP_BPF, every command fails
 * with EPERM before it looks at its arguments; seccomp profiles answer EPERM
 * or ENOSYS, LSMs EACCES or EPERM. Where bpf() is allowed, this call fails
 * with EBADF (no fd -1) and has no effect.
 */
static bool bpf_syscall_refused(void)
{
	union bpf_attr attr;
	long k;

	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = (uint32_t)-1;
	k = syscall(__NR_bpf, BPF_OBJ_GET_INFO_BY_FD, &attr, sizeof(attr.info));
	return k < 0 && (errno == EPERM || errno == EACCES || errno == ENOSYS);
}

static enum bpfbroker_map_path map_path_of(struct bpfbroker *b)
{
	if (b->map_path != BPFBROKER_MAP_PATH_AUTO)
		return b->map_path;
	if (b->map_path_found == BPFBROKER_MAP_PATH_AUTO)
		b->map_path_found = bpf_syscall_refused() ? BPFBROKER_MAP_PATH_PROXY
							  : BPFBROKER_MAP_PATH_DIRECT;
	return b->map_path_found;
}

void bpfbroker_map_close(struct bpfbroker_map_handle *h)
{
	if (!h)
		return;
	safe_close(h->info.fd);
	safe_close(h->btf_fd);
	free(h->object);
	free(h->name);
	free(h->type);
	free(h);
}

static struct bpfbroker_map_handle *handle_new(struct bpfbroker *b, const char *object,
					       const char *map, const char *type)
{
	struct bpfbroker_map_handle *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->b = b;
	h->info.fd = -1;
	h->btf_fd = -EBADF;
	h->object = strdup(object);
	h->name = strdup(map);
	h->type = strdup(type);
	if (!h->object || !h->name || !h->type) {
		bpfbroker_map_close(h);
		return NULL;
	}
	h->info.name = h->name;
	h->info.type = h->type;
	return h;
}

/* A proxied request of op on a map, borrowing the names (the encoder copies them). */
static struct proto_map_request map_request(const char *object, const char *map,
					    enum proto_map_op op)
{
	return (struct proto_map_request){.object = (char *)object,
					  .map = (char *)map,
					  .op = op,
					  .count = PROTO_MAP_DEFAULT_DUMP_ENTRIES};
}

/* Hex field key of o into out, which must be exactly size bytes; -EPROTO otherwise. */
static int get_hex_exact(json_object *o, const char *key, void *out, size_t size)
{
	_cleanup_free_ uint8_t *buf = NULL;
	const char *s = NULL;
	size_t n = 0;

	if (proto_get_string(o, key, true, &s, NULL) < 0 ||
	    hex_decode(s, strlen(s), &buf, &n) < 0 || n != size)
		return -EPROTO;
	memcpy(out, buf, size);
	return 0;
}

static bool u32(int64_t x)
{
	return x >= 0 && x <= UINT32_MAX;
}

static int open_proxied(struct bpfbroker *b, const char *object, const char *map,
			struct bpfbroker_map_handle **ret, struct bpfbroker_error **err)
{
	struct bpfbroker_map_handle *h;
	struct proto_map_request req = map_request(object, map, PROTO_MAP_INFO);
	struct proto_msg m = {};
	json_object *result;
	const char *type = NULL, *access = NULL;
	int64_t key_size, value_size, max_entries, value_bytes, n_cpus, kid, vid;
	int k;

	k = bpfbroker_request(b, PROTO_METHOD_MAP, &req, NULL, 0, &m, &result, err);
	if (k < 0)
		return k;
	(void)proto_get_string(result, "type", true, &type, NULL);
	(void)proto_get_string(result, "access", true, &access, NULL);
	/* Each required, and -1 (refused below) when absent or not an integer. */
	key_size = get_int(result, "key_size", -1);
	value_size = get_int(result, "value_size", -1);
	max_entries = get_int(result, "max_entries", -1);
	value_bytes = get_int(result, "value_bytes", -1);
	n_cpus = get_int(result, "n_cpus", -1);
	kid = get_int(result, "btf_key_type_id", -1);
	vid = get_int(result, "btf_value_type_id", -1);
	if (!type || !access || !u32(key_size) || !u32(value_size) || !u32(max_entries) ||
	    value_bytes < 0 || n_cpus < 1 || !u32(n_cpus) || !u32(kid) || !u32(vid)) {
		proto_msg_done(&m);
		return -EPROTO;
	}
	h = handle_new(b, object, map, type);
	if (!h) {
		proto_msg_done(&m);
		return -ENOMEM;
	}
	h->info.key_size = (uint32_t)key_size;
	h->info.value_size = (uint32_t)value_size;
	h->info.max_entries = (uint32_t)max_entries;
	h->info.value_bytes = (size_t)value_bytes;
	h->info.n_cpus = (uint32_t)n_cpus;
	h->info.access = bpfbroker_access_from_string(access);
	h->info.btf_key_type_id = (uint32_t)kid;
	h->info.btf_value_type_id = (uint32_t)vid;
	h->info.proxied = true;
	proto_msg_done(&m);
	*ret = h;
	return 0;
}

/*
 * The fds of the object; -EAGAIN where the broker withheld ro and wo map fds
 * (its bpffs guard: policy-denied, EACCES), which the proxy needs not, or
 * the fd of this map (another user's, shared with us wo, or not plain data).
 * Another user's map shared rw comes with a read-only fd: reads use it,
 * writes the broker, where the path is AUTO.
 */
static int open_direct(struct bpfbroker *b, const char *object, const char *map,
		       struct bpfbroker_map_handle **ret, struct bpfbroker_error **err)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *e = NULL;
	struct bpfbroker_map_handle *h;
	const struct bpfbroker_map *m;
	int k, cpus = 1;

	k = bpfbroker_fds(b, object, &res, &e);
	if (k == -EACCES && e && strcmp(e->code, PROTO_E_DENIED) == 0) {
		bpfbroker_error_free(e);
		return -EAGAIN;
	}
	if (k < 0) {
		if (err)
			*err = e;
		else
			bpfbroker_error_free(e);
		return k;
	}
	m = bpfbroker_result_map(res, map);
	if (!m || m->fd < 0) {
		k = !m ? -ENOENT : m->access == BPFBROKER_ACCESS_NONE ? -EACCES : -EAGAIN;
		bpfbroker_result_free(res);
		return k;
	}
	/* Per-CPU maps: a value for each possible CPU, each padded to 8 bytes. */
	if (strstr(m->type, "percpu")) {
		cpus = libbpf_num_possible_cpus();
		if (cpus <= 0) {
			bpfbroker_result_free(res);
			return cpus < 0 ? cpus : -EINVAL;
		}
	}
	h = handle_new(b, object, map, m->type);
	if (!h) {
		bpfbroker_result_free(res);
		return -ENOMEM;
	}
	h->info.key_size = m->key_size;
	h->info.value_size = m->value_size;
	h->info.max_entries = m->max_entries;
	h->info.access = m->access;
	h->info.n_cpus = (uint32_t)cpus;
	h->info.value_bytes = strstr(m->type, "percpu") ? ((size_t)m->value_size + 7) / 8 * 8 * cpus
							: m->value_size;
	h->info.btf_key_type_id = m->btf_key_type_id;
	h->info.btf_value_type_id = m->btf_value_type_id;
	/* The broker writes what the fd does not, for us (an AUTO path only: DIRECT is the fd). */
	h->info.writes_proxied = b->map_path == BPFBROKER_MAP_PATH_AUTO &&
				 (m->access & BPFBROKER_ACCESS_WO) &&
				 !(m->fd_access & BPFBROKER_ACCESS_WO);
	h->info.fd = bpfbroker_result_take_map_fd(res, map);
	if (res->btf_fd >= 0)
		h->btf_fd = fcntl(res->btf_fd, F_DUPFD_CLOEXEC, 3);
	bpfbroker_result_free(res);
	*ret = h;
	return 0;
}

int bpfbroker_map_open(struct bpfbroker *b, const char *object, const char *map,
		       struct bpfbroker_map_handle **ret, struct bpfbroker_error **err)
{
	int k;

	if (!b || !object || !map || !ret)
		return -EINVAL;
	if (map_path_of(b) == BPFBROKER_MAP_PATH_PROXY)
		return open_proxied(b, object, map, ret, err);
	k = open_direct(b, object, map, ret, err);
	if (k == -EAGAIN && b->map_path == BPFBROKER_MAP_PATH_AUTO)
		return open_proxied(b, object, map, ret, err);
	return k == -EAGAIN ? -EACCES : k;
}

const struct bpfbroker_map_info *bpfbroker_map_handle_info(const struct bpfbroker_map_handle *h)
{
	return h ? &h->info : NULL;
}

/* A proxied op: req sent, the result in *m / *ret_result. */
static int proxy(struct bpfbroker_map_handle *h, const struct proto_map_request *req,
		 struct proto_msg *m, json_object **ret_result, struct bpfbroker_error **err)
{
	return bpfbroker_request(h->b, PROTO_METHOD_MAP, req, NULL, 0, m, ret_result, err);
}

/* A request of op on h's map with the key (NULL: none; a dump's cursor), borrowed. */
static struct proto_map_request key_request(struct bpfbroker_map_handle *h, enum proto_map_op op,
					    const void *key)
{
	struct proto_map_request req = map_request(h->object, h->name, op);

	req.key = (uint8_t *)key;
	req.key_size = key ? h->info.key_size : 0;
	return req;
}

int bpfbroker_map_lookup_elem(struct bpfbroker_map_handle *h, const void *key, void *value,
			      struct bpfbroker_error **err)
{
	struct proto_map_request req;
	struct proto_msg m = {};
	json_object *result;
	int k;

	if (!h || !key || !value)
		return -EINVAL;
	if (!h->info.proxied)
		return bpf_map_lookup_elem(h->info.fd, key, value) < 0 ? negative_errno() : 0;
	req = key_request(h, PROTO_MAP_LOOKUP, key);
	k = proxy(h, &req, &m, &result, err);
	if (k < 0)
		return k;
	k = !get_bool(result, "found") ? -ENOENT
				       : get_hex_exact(result, "value", value, h->info.value_bytes);
	proto_msg_done(&m);
	return k;
}

int bpfbroker_map_update_elem(struct bpfbroker_map_handle *h, const void *key, const void *value,
			      uint64_t flags, struct bpfbroker_error **err)
{
	struct proto_map_request req;
	struct proto_msg m = {};
	json_object *result;
	int k;

	if (!h || !key || !value)
		return -EINVAL;
	if (!h->info.proxied && !h->info.writes_proxied)
		return bpf_map_update_elem(h->info.fd, key, value, flags) < 0 ? negative_errno()
									      : 0;
	if (flags > PROTO_MAP_MAX_FLAGS)
		return -EOPNOTSUPP;
	req = key_request(h, PROTO_MAP_UPDATE, key);
	req.value = (uint8_t *)value;
	req.value_size = h->info.value_bytes;
	req.flags = (uint32_t)flags;
	k = proxy(h, &req, &m, &result, err);
	if (k < 0)
		return k;
	proto_msg_done(&m);
	return 0;
}

int bpfbroker_map_delete_elem(struct bpfbroker_map_handle *h, const void *key,
			      struct bpfbroker_error **err)
{
	struct proto_map_request req;
	struct proto_msg m = {};
	json_object *result;
	int k;

	if (!h || !key)
		return -EINVAL;
	if (!h->info.proxied && !h->info.writes_proxied)
		return bpf_map_delete_elem(h->info.fd, key) < 0 ? negative_errno() : 0;
	req = key_request(h, PROTO_MAP_DELETE, key);
	k = proxy(h, &req, &m, &result, err);
	if (k < 0)
		return k;
	k = get_bool(result, "deleted") ? 0 : -ENOENT;
	proto_msg_done(&m);
	return k;
}

int bpfbroker_map_get_next_key(struct bpfbroker_map_handle *h, const void *key, void *next_key,
			       struct bpfbroker_error **err)
{
	struct proto_map_request req;
	struct proto_msg m = {};
	json_object *result, *v;
	int k;

	if (!h || !next_key)
		return -EINVAL;
	if (!h->info.proxied)
		return bpf_map_get_next_key(h->info.fd, key, next_key) < 0 ? negative_errno() : 0;
	req = key_request(h, PROTO_MAP_NEXT_KEY, key);
	k = proxy(h, &req, &m, &result, err);
	if (k < 0)
		return k;
	if (!json_object_object_get_ex(result, "next_key", &v))
		k = -EPROTO;
	else if (!v)
		k = -ENOENT;
	else
		k = get_hex_exact(result, "next_key", next_key, h->info.key_size);
	proto_msg_done(&m);
	return k;
}

/* A dump page on the fd, as the broker makes one: bounded in entries and in steps. */
static int dump_direct(struct bpfbroker_map_handle *h, const void *cursor, uint8_t *keys,
		       uint8_t *values, uint32_t max, uint32_t *ret_n, void *next_cursor,
		       bool *ret_done)
{
	size_t ks = h->info.key_size, vs = h->info.value_bytes, steps = 0;
	_cleanup_free_ uint8_t *key = malloc(ks), *peek = malloc(ks);
	bool have_key = cursor != NULL, done = false;
	uint32_t n = 0;

	if (!key || !peek)
		return -ENOMEM;
	if (cursor)
		memcpy(key, cursor, ks);
	while (n < max && steps++ < 2 * (size_t)max + 16) {
		if (bpf_map_get_next_key(h->info.fd, have_key ? key : NULL, keys + n * ks) < 0) {
			if (errno != ENOENT)
				return negative_errno();
			done = true;
			break;
		}
		memcpy(key, keys + n * ks, ks);
		have_key = true;
		if (bpf_map_lookup_elem(h->info.fd, key, values + n * vs) < 0) {
			if (errno != ENOENT)
				return negative_errno();
			continue; /* deleted meanwhile */
		}
		n++;
	}
	/* A full page: is there more? */
	if (!done && bpf_map_get_next_key(h->info.fd, key, peek) < 0 && errno == ENOENT)
		done = true;
	if (!done)
		memcpy(next_cursor, key, ks); /* the last key visited */
	*ret_n = n;
	*ret_done = done;
	return 0;
}

static int dump_proxied(struct bpfbroker_map_handle *h, const void *cursor, uint8_t *keys,
			uint8_t *values, uint32_t max, uint32_t *ret_n, void *next_cursor,
			bool *ret_done, struct bpfbroker_error **err)
{
	size_t ks = h->info.key_size, vs = h->info.value_bytes, n;
	struct proto_map_request req = key_request(h, PROTO_MAP_DUMP, cursor);
	struct proto_msg m = {};
	json_object *result, *entries;
	bool done;
	int k;

	if (max > PROTO_MAP_MAX_DUMP_ENTRIES)
		max = PROTO_MAP_MAX_DUMP_ENTRIES;
	req.count = max;
	k = proxy(h, &req, &m, &result, err);
	if (k < 0)
		return k;
	done = get_bool(result, "done");
	if (!json_object_object_get_ex(result, "entries", &entries) ||
	    !json_object_is_type(entries, json_type_array) ||
	    (n = json_object_array_length(entries)) > max ||
	    (!done && get_hex_exact(result, "cursor", next_cursor, ks) < 0)) {
		proto_msg_done(&m);
		return -EPROTO;
	}
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(entries, i);

		if (get_hex_exact(e, "key", keys + i * ks, ks) < 0 ||
		    get_hex_exact(e, "value", values + i * vs, vs) < 0) {
			proto_msg_done(&m);
			return -EPROTO;
		}
	}
	proto_msg_done(&m);
	*ret_n = (uint32_t)n;
	*ret_done = done;
	return 0;
}

int bpfbroker_map_dump(struct bpfbroker_map_handle *h, const void *cursor, void *keys, void *values,
		       uint32_t max, uint32_t *ret_n, void *next_cursor, bool *ret_done,
		       struct bpfbroker_error **err)
{
	if (!h || !keys || !values || max == 0 || !ret_n || !next_cursor || !ret_done)
		return -EINVAL;
	if (h->info.key_size == 0)
		return -EOPNOTSUPP;
	if (!h->info.proxied)
		return dump_direct(h, cursor, keys, values, max, ret_n, next_cursor, ret_done);
	return dump_proxied(h, cursor, keys, values, max, ret_n, next_cursor, ret_done, err);
}

/* The BTF behind fd: its size first, then its bytes. */
static int btf_read(int fd, void **ret_data, size_t *ret_size)
{
	struct bpf_btf_info info = {};
	uint32_t len = sizeof(info), size;
	void *data;

	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
		return negative_errno();
	size = info.btf_size;
	if (size == 0 || size > 64u << 20)
		return -EBADMSG;
	data = malloc(size);
	if (!data)
		return -ENOMEM;
	info = (struct bpf_btf_info){.btf = (uint64_t)(uintptr_t)data, .btf_size = size};
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0 || info.btf_size != size) {
		int k = info.btf_size != size ? -ESTALE : negative_errno();

		free(data);
		return k;
	}
	*ret_data = data;
	*ret_size = size;
	return 0;
}

int bpfbroker_map_btf(struct bpfbroker_map_handle *h, void **ret_data, size_t *ret_size,
		      struct bpfbroker_error **err)
{
	struct proto_map_request req;
	struct proto_msg m = {};
	json_object *result;
	const char *hex = NULL;
	uint8_t *data = NULL;
	size_t size = 0;
	int k;

	if (!h || !ret_data || !ret_size)
		return -EINVAL;
	if (!h->info.proxied)
		return h->btf_fd < 0 ? -ENOENT : btf_read(h->btf_fd, ret_data, ret_size);
	req = map_request(h->object, h->name, PROTO_MAP_BTF);
	k = proxy(h, &req, &m, &result, err);
	if (k < 0)
		return k;
	if (proto_get_string(result, "btf", true, &hex, NULL) < 0 || !hex[0] ||
	    hex_decode(hex, strlen(hex), &data, &size) < 0) {
		proto_msg_done(&m);
		return -EPROTO;
	}
	proto_msg_done(&m);
	*ret_data = data;
	*ret_size = size;
	return 0;
}
