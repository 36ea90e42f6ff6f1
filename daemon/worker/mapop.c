/* SPDX-License-Identifier: MIT */
#include "mapop.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/shared/caps.h"
#include "common/json.h"
#include "common/macro.h"
#include "denial.h"

/* Linux 6.2, newer than these headers: keys are cgroup fds. */
#define MAP_TYPE_CGRP_STORAGE 32

enum mapop_class mapop_class_of(unsigned map_type)
{
	switch (map_type) {
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
	case BPF_MAP_TYPE_LPM_TRIE:
	case BPF_MAP_TYPE_STACK_TRACE:
	case BPF_MAP_TYPE_CGROUP_STORAGE:
	case BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE:
		return MAPOP_DATA;
	/*
	 * An update's value is an fd (a program, a map, a socket, a perf event,
	 * a cgroup; a devmap's or cpumap's may hold a program fd), which the
	 * kernel would resolve in the broker's own fd table. Lookups give ids
	 * or cookies, deletes take nothing: those are safe.
	 */
	case BPF_MAP_TYPE_PROG_ARRAY:
	case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
	case BPF_MAP_TYPE_CGROUP_ARRAY:
	case BPF_MAP_TYPE_ARRAY_OF_MAPS:
	case BPF_MAP_TYPE_HASH_OF_MAPS:
	case BPF_MAP_TYPE_DEVMAP:
	case BPF_MAP_TYPE_DEVMAP_HASH:
	case BPF_MAP_TYPE_SOCKMAP:
	case BPF_MAP_TYPE_SOCKHASH:
	case BPF_MAP_TYPE_CPUMAP:
	case BPF_MAP_TYPE_XSKMAP:
	case BPF_MAP_TYPE_REUSEPORT_SOCKARRAY:
		return MAPOP_FD_VALUES;
	/* Every key is an fd (socket, file, pidfd, cgroup), likewise resolved in the broker. */
	case BPF_MAP_TYPE_SK_STORAGE:
	case BPF_MAP_TYPE_INODE_STORAGE:
	case BPF_MAP_TYPE_TASK_STORAGE:
	case MAP_TYPE_CGRP_STORAGE:
		return MAPOP_FD_KEYS;
	default:
		return MAPOP_OTHER;
	}
}

bool mapop_type_is_percpu(unsigned map_type)
{
	return map_type == BPF_MAP_TYPE_PERCPU_HASH || map_type == BPF_MAP_TYPE_PERCPU_ARRAY ||
	       map_type == BPF_MAP_TYPE_LRU_PERCPU_HASH ||
	       map_type == BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE;
}

static const char *type_name(unsigned map_type)
{
	return libbpf_bpf_map_type_str((enum bpf_map_type)map_type) ?: "unknown";
}

int mapop_check(enum proto_map_op op, unsigned map_type, bool map_of_maps, enum map_access access,
		const char *name, char *msg, size_t size)
{
	bool writes = proto_map_op_writes(op);
	enum mapop_class class = mapop_class_of(map_type);
	const char *opname = proto_map_op_to_string(op);

	if (op == PROTO_MAP_INFO || op == PROTO_MAP_BTF)
		return 0; /* what the map is, for anyone it is visible to */
	/* As the kernel checks an fd's mode: ro reads, wo writes. */
	if (writes && map_of_maps) {
		snprintf(msg, size,
			 "map \"%s\" is a map of maps, never writable through the broker (a "
			 "map put in it would become writable for its programs): %s refused; "
			 "insert maps with map_insert",
			 name, opname);
		return -EPERM;
	}
	if (writes && !(access & MAP_ACCESS_WO)) {
		snprintf(msg, size,
			 "map \"%s\" is read-only for you (your access is %s): %s refused", name,
			 map_access_to_string(access), opname);
		return -EPERM;
	}
	if (!writes && !(access & MAP_ACCESS_RO)) {
		snprintf(msg, size,
			 "map \"%s\" is write-only for you (your access is %s): %s refused", name,
			 map_access_to_string(access), opname);
		return -EPERM;
	}
	switch (class) {
	case MAPOP_DATA:
		return 0;
	case MAPOP_FD_VALUES:
		if (op != PROTO_MAP_UPDATE)
			return 0;
		snprintf(msg, size,
			 "map \"%s\" (%s) holds file descriptors as values, which the broker "
			 "would look up in its own process: it does not update such maps for "
			 "you",
			 name, type_name(map_type));
		return -EOPNOTSUPP;
	case MAPOP_FD_KEYS:
		snprintf(msg, size,
			 "map \"%s\" (%s) has file descriptors as keys, which the broker would "
			 "look up in its own process: it does not %s it for you",
			 name, type_name(map_type), opname);
		return -EOPNOTSUPP;
	default:
		snprintf(msg, size,
			 "map \"%s\" (%s) has no keys and values the broker can %s for you (it "
			 "proxies hash, array, LRU, LPM trie, per-CPU, cgroup storage and "
			 "stack trace maps, and reads of fd arrays and maps of maps)",
			 name, type_name(map_type), opname);
		return -EOPNOTSUPP;
	}
}

/* ---- the operations, with CAP_BPF effective ---- */

struct map_shape {
	const char *name;
	struct bpf_map_info info;
	size_t value_bytes; /* one value as the syscalls take it */
	unsigned n_cpus; /* per-CPU maps: possible CPUs; else 1 */
};

/* The kernel refused op: its errno, with a hint where the errno alone is puzzling. */
static int kernel_refused(struct reply *r, const struct map_shape *m, const char *op, int err,
			  uint32_t flags)
{
	const char *hint = "";

	if (err == EEXIST && flags == BPF_NOEXIST)
		hint = " (the key exists, and flags 1 is BPF_NOEXIST)";
	else if (err == ENOENT && flags == BPF_EXIST)
		hint = " (no such key, and flags 2 is BPF_EXIST)";
	else if (err == E2BIG)
		hint = " (the map is full)";
	else if (err == EPERM)
		hint = " (the map is frozen or read-only for user space, as .rodata is)";
	else if (err == EINVAL && strcmp(op, "delete") == 0)
		hint = " (array maps have no deletes)";
	return reply_error(r, PROTO_ERR_LOAD, err, "the kernel refused the %s in map \"%s\": %s%s",
			   op, m->name, strerror(err), hint);
}

static int op_info(const struct map_shape *m, const struct mapop_btf *btf, enum map_access access,
		   struct reply *r)
{
	static const enum proto_map_op ops[] = {PROTO_MAP_LOOKUP, PROTO_MAP_UPDATE,
						PROTO_MAP_DELETE, PROTO_MAP_NEXT_KEY,
						PROTO_MAP_DUMP};
	_cleanup_json_ json_object *o = json_object_new_object(), *a = json_object_new_array();
	char msg[8];

	if (!a || json_add(o, "name", json_object_new_string(m->name)) < 0 ||
	    json_add(o, "type", json_object_new_string(type_name(m->info.type))) < 0 ||
	    json_add(o, "id", json_object_new_int64(m->info.id)) < 0 ||
	    json_add(o, "key_size", json_object_new_int64(m->info.key_size)) < 0 ||
	    json_add(o, "value_size", json_object_new_int64(m->info.value_size)) < 0 ||
	    json_add(o, "max_entries", json_object_new_int64(m->info.max_entries)) < 0 ||
	    json_add(o, "value_bytes", json_object_new_int64((int64_t)m->value_bytes)) < 0 ||
	    json_add(o, "n_cpus", json_object_new_int64(m->n_cpus)) < 0 ||
	    json_add(o, "access", json_object_new_string(map_access_to_string(access))) < 0 ||
	    json_add(o, "btf_key_type_id", json_object_new_int64(btf->key_type_id)) < 0 ||
	    json_add(o, "btf_value_type_id", json_object_new_int64(btf->value_type_id)) < 0)
		return -ENOMEM;
	/* What this caller may do through the broker now; the op's own limits still apply. */
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++)
		if (m->info.key_size > 0 &&
		    mapop_check(ops[i], m->info.type,
				m->info.type == BPF_MAP_TYPE_ARRAY_OF_MAPS ||
					m->info.type == BPF_MAP_TYPE_HASH_OF_MAPS,
				access, m->name, msg, sizeof(msg)) == 0 &&
		    json_append(a, json_object_new_string(proto_map_op_to_string(ops[i]))) < 0)
			return -ENOMEM;
	if (json_add(o, "ops", TAKE_PTR(a)) < 0)
		return -ENOMEM;
	return reply_result(r, TAKE_PTR(o));
}

static int op_lookup(int fd, const struct map_shape *m, const struct proto_map_request *req,
		     struct reply *r)
{
	_cleanup_free_ uint8_t *value = malloc(m->value_bytes);
	json_object *o;

	if (!value)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, req->key, value) < 0) {
		if (errno != ENOENT)
			return kernel_refused(r, m, "lookup", errno, 0);
		o = json_object_new_object();
		if (!o)
			return -ENOMEM;
		if (json_add(o, "found", json_object_new_boolean(false)) < 0) {
			json_object_put(o);
			return -ENOMEM;
		}
		return reply_result(r, o);
	}
	o = json_object_new_object();
	if (!o)
		return -ENOMEM;
	if (json_add(o, "found", json_object_new_boolean(true)) < 0) {
		json_object_put(o);
		return -ENOMEM;
	}
	if (proto_json_add_hex(o, "value", value, m->value_bytes) < 0) {
		json_object_put(o);
		return -ENOMEM;
	}
	return reply_result(r, o);
}

static int op_update(int fd, const struct map_shape *m, const struct proto_map_request *req,
		     struct reply *r)
{
	json_object *o;

	if (bpf_map_update_elem(fd, req->key, req->value, req->flags) < 0)
		return kernel_refused(r, m, "update", errno, req->flags);
	o = json_object_new_object();
	if (!o)
		return -ENOMEM;
	if (json_add(o, "updated", json_object_new_boolean(true)) < 0) {
		json_object_put(o);
		return -ENOMEM;
	}
	return reply_result(r, o);
}

static int op_delete(int fd, const struct map_shape *m, const struct proto_map_request *req,
		     struct reply *r)
{
	bool deleted = true;
	json_object *o;

	if (bpf_map_delete_elem(fd, req->key) < 0) {
		if (errno != ENOENT)
			return kernel_refused(r, m, "delete", errno, 0);
		deleted = false;
	}
	o = json_object_new_object();
	if (!o)
		return -ENOMEM;
	if (json_add(o, "deleted", json_object_new_boolean(deleted)) < 0) {
		json_object_put(o);
		return -ENOMEM;
	}
	return reply_result(r, o);
}

static int op_next_key(int fd, const struct map_shape *m, const struct proto_map_request *req,
		       struct reply *r)
{
	_cleanup_free_ uint8_t *next = malloc(m->info.key_size);
	json_object *o;

	if (!next)
		return -ENOMEM;
	o = json_object_new_object();
	if (!o)
		return -ENOMEM;
	if (bpf_map_get_next_key(fd, req->key, next) == 0) {
		if (proto_json_add_hex(o, "next_key", next, m->info.key_size) < 0) {
			json_object_put(o);
			return -ENOMEM;
		}
	} else if (errno == ENOENT) {
		/* null: no key after this one */
		if (json_object_object_add(o, "next_key", NULL) < 0) {
			json_object_put(o);
			return -ENOMEM;
		}
	} else {
		int err = errno;

		json_object_put(o);
		return kernel_refused(r, m, "next key lookup", err, 0);
	}
	return reply_result(r, o);
}

/*
 * One page of entries after the cursor (a key; none: from the start), with
 * get_next_key and lookup as bpftool does: no state is kept between pages, so
 * the cursor is just the last key this page visited. Bounded in entries, in
 * bytes and in steps (a hash map changed meanwhile may start over at a key
 * that was deleted; the client bounds the whole dump).
 */
static int op_dump(int fd, const struct map_shape *m, const struct proto_map_request *req,
		   struct reply *r)
{
	size_t key_size = m->info.key_size, per_entry = key_size + m->value_bytes;
	size_t max = PROTO_MAP_MAX_DUMP_BYTES / per_entry, steps = 0, n = 0;
	_cleanup_free_ uint8_t *key = malloc(key_size), *next = malloc(key_size),
			       *value = malloc(m->value_bytes);
	json_object *o, *entries;
	bool have_key = req->key != NULL, done = false;

	if (!key || !next || !value)
		return -ENOMEM;
	if (max > req->count)
		max = req->count;
	if (have_key)
		memcpy(key, req->key, key_size);
	o = json_object_new_object();
	entries = json_object_new_array();
	if (json_add(o, "entries", entries) < 0) {
		json_object_put(o);
		return -ENOMEM;
	}
	while (n < max && steps++ < 2 * max + 16) {
		json_object *e;

		if (bpf_map_get_next_key(fd, have_key ? key : NULL, next) < 0) {
			int err = errno;

			if (err == ENOENT) {
				done = true;
				break;
			}
			json_object_put(o);
			return kernel_refused(r, m, "next key lookup", err, 0);
		}
		memcpy(key, next, key_size);
		have_key = true;
		if (bpf_map_lookup_elem(fd, key, value) < 0) {
			int err = errno;

			if (err == ENOENT)
				continue; /* deleted meanwhile */
			json_object_put(o);
			return kernel_refused(r, m, "lookup", err, 0);
		}
		e = json_object_new_object();
		if (!e || proto_json_add_hex(e, "key", key, key_size) < 0 ||
		    proto_json_add_hex(e, "value", value, m->value_bytes) < 0 ||
		    json_object_array_add(entries, e) < 0) {
			json_object_put(e);
			json_object_put(o);
			return -ENOMEM;
		}
		n++;
	}
	/* A full page: is there more? One look costs less than a client's next request. */
	if (!done && have_key && bpf_map_get_next_key(fd, key, next) < 0 && errno == ENOENT)
		done = true;
	if (json_add(o, "done", json_object_new_boolean(done)) < 0) {
		json_object_put(o);
		return -ENOMEM;
	}
	if (!done && have_key && proto_json_add_hex(o, "cursor", key, key_size) < 0) {
		json_object_put(o);
		return -ENOMEM;
	}
	return reply_result(r, o);
}

/* The BTF as bytes, for pretty-printing where the client cannot read a btf fd. */
static int op_btf(const struct mapop_btf *btf, const struct map_shape *m, struct reply *r)
{
	json_object *o;

	if (!btf->data)
		return reply_error(r, PROTO_ERR_NOT_FOUND, ENOENT,
				   "the object of map \"%s\" has no BTF (for you)", m->name);
	if (btf->size > PROTO_MAP_MAX_BTF)
		return reply_error(r, PROTO_ERR_TOO_LARGE, EMSGSIZE,
				   "the object's BTF is %zu bytes; the broker sends at most %u",
				   btf->size, PROTO_MAP_MAX_BTF);
	o = json_object_new_object();
	if (!o)
		return -ENOMEM;
	if (proto_json_add_hex(o, "btf", btf->data, btf->size) < 0) {
		json_object_put(o);
		return -ENOMEM;
	}
	return reply_result(r, o);
}

/* The sizes the request must have for this map, checked before the kernel sees it. */
static int check_sizes(const struct map_shape *m, const struct proto_map_request *req,
		       struct reply *r)
{
	const char *op = proto_map_op_to_string(req->op);
	bool values = req->op == PROTO_MAP_LOOKUP || req->op == PROTO_MAP_UPDATE ||
		      req->op == PROTO_MAP_DUMP;

	if (req->op == PROTO_MAP_INFO || req->op == PROTO_MAP_BTF)
		return 0;
	if (m->info.key_size == 0)
		return reply_error(r, PROTO_ERR_INVALID, EINVAL, "map \"%s\" (%s) has no keys",
				   m->name, type_name(m->info.type));
	if (m->info.key_size > PROTO_MAP_MAX_KEY)
		return reply_error(r, PROTO_ERR_TOO_LARGE, E2BIG,
				   "map \"%s\" has %u-byte keys; the broker handles keys of at "
				   "most %u bytes",
				   m->name, m->info.key_size, PROTO_MAP_MAX_KEY);
	if (values && m->value_bytes > PROTO_MAP_MAX_VALUE)
		return reply_error(r, PROTO_ERR_TOO_LARGE, E2BIG,
				   "map \"%s\" has %zu-byte values%s; the broker handles values "
				   "of at most %u bytes",
				   m->name, m->value_bytes,
				   m->n_cpus > 1 ? " (all CPUs' values)" : "", PROTO_MAP_MAX_VALUE);
	if (req->key && req->key_size != m->info.key_size)
		return reply_error(r, PROTO_ERR_INVALID, EINVAL,
				   "map \"%s\" takes %u-byte keys; the %s of %s has %zu bytes",
				   m->name, m->info.key_size,
				   req->op == PROTO_MAP_DUMP ? "cursor" : "key", op, req->key_size);
	if (req->value && req->value_size != m->value_bytes) {
		if (m->n_cpus > 1)
			return reply_error(r, PROTO_ERR_INVALID, EINVAL,
					   "map \"%s\" is per-CPU: a value is %u bytes for each "
					   "of %u CPUs, each padded to %zu, %zu bytes in all; the "
					   "value has %zu bytes",
					   m->name, m->info.value_size, m->n_cpus,
					   m->value_bytes / m->n_cpus, m->value_bytes,
					   req->value_size);
		return reply_error(r, PROTO_ERR_INVALID, EINVAL,
				   "map \"%s\" takes %zu-byte values; the value has %zu bytes",
				   m->name, m->value_bytes, req->value_size);
	}
	return 0;
}

static int run(int fd, const struct mapop_btf *btf, const char *name, enum map_access access,
	       enum map_access most, const char *access_key, const struct proto_map_request *req,
	       struct reply *r)
{
	struct map_shape m = {.name = name, .n_cpus = 1};
	uint32_t len = sizeof(m.info);
	char msg[512];
	int k;

	if (bpf_obj_get_info_by_fd(fd, &m.info, &len) < 0)
		return negative_errno();
	m.value_bytes = m.info.value_size;
	if (mapop_type_is_percpu(m.info.type)) {
		int cpus = libbpf_num_possible_cpus();

		if (cpus <= 0)
			return cpus < 0 ? cpus : -EINVAL;
		m.n_cpus = (unsigned)cpus;
		m.value_bytes = ((size_t)m.info.value_size + 7) / 8 * 8 * m.n_cpus;
	}
	k = mapop_check(req->op, m.info.type,
			m.info.type == BPF_MAP_TYPE_ARRAY_OF_MAPS ||
				m.info.type == BPF_MAP_TYPE_HASH_OF_MAPS,
			access, name, msg, sizeof(msg));
	/*
	 * The access's key only where some grant could give the access op needs
	 * (most: the most any grant gives this caller for a map of this type);
	 * a map of maps is never written through the broker either way.
	 */
	if (k == -EPERM) {
		enum map_access need = proto_map_op_writes(req->op) ? MAP_ACCESS_WO : MAP_ACCESS_RO;
		bool possible = (most & need) == need;

		return denial_reply(r, PROTO_ERR_DENIED, EPERM, "map", name,
				    possible ? access_key : "", "%s%s", msg,
				    possible ? ""
					     : " (and no policy grants that access to a map of "
					       "its type)");
	}
	if (k < 0)
		return reply_error(r, PROTO_ERR_INVALID, -k, "%s", msg);
	k = check_sizes(&m, req, r);
	if (k != 0)
		return k;
	switch (req->op) {
	case PROTO_MAP_INFO:
		return op_info(&m, btf, access, r);
	case PROTO_MAP_LOOKUP:
		return op_lookup(fd, &m, req, r);
	case PROTO_MAP_UPDATE:
		return op_update(fd, &m, req, r);
	case PROTO_MAP_DELETE:
		return op_delete(fd, &m, req, r);
	case PROTO_MAP_NEXT_KEY:
		return op_next_key(fd, &m, req, r);
	case PROTO_MAP_DUMP:
		return op_dump(fd, &m, req, r);
	case PROTO_MAP_BTF:
		return op_btf(btf, &m, r);
	}
	return -EINVAL;
}

int mapop_run(int map_fd, const struct mapop_btf *btf, const char *name, enum map_access access,
	      enum map_access most, const char *access_key, const struct proto_map_request *req,
	      struct reply *r)
{
	static const cap_value_t bpf_cap[] = {CAP_BPF};
	int k;

	/*
	 * Before Linux 6.5 a non-zero kernel.unprivileged_bpf_disabled makes
	 * every bpf() command EPERM without CAP_BPF in the effective set, map
	 * operations on an fd one holds included: exactly why clients ask the
	 * broker. Since 6.5 these need no capability and CAP_BPF changes nothing.
	 */
	k = caps_set_effective(bpf_cap, 1);
	if (k < 0)
		return k;
	k = run(map_fd, btf, name, access, most, access_key, req, r);
	caps_clear_effective();
	return k;
}
