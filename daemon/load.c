/* SPDX-License-Identifier: MIT */
#include "load.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "caps.h"
#include "common/macro.h"
#include "inspect.h"
#include "proto/proto.h"

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

/* Program types by the capability the kernel demands to load them (kernel/bpf/syscall.c). */
static bool prog_type_needs_net_admin(int t)
{
	switch (t) {
	case BPF_PROG_TYPE_SCHED_CLS:
	case BPF_PROG_TYPE_SCHED_ACT:
	case BPF_PROG_TYPE_XDP:
	case BPF_PROG_TYPE_LWT_IN:
	case BPF_PROG_TYPE_LWT_OUT:
	case BPF_PROG_TYPE_LWT_XMIT:
	case BPF_PROG_TYPE_LWT_SEG6LOCAL:
	case BPF_PROG_TYPE_SK_SKB:
	case BPF_PROG_TYPE_SK_MSG:
	case BPF_PROG_TYPE_FLOW_DISSECTOR:
	case BPF_PROG_TYPE_CGROUP_DEVICE:
	case BPF_PROG_TYPE_CGROUP_SOCK:
	case BPF_PROG_TYPE_CGROUP_SOCK_ADDR:
	case BPF_PROG_TYPE_CGROUP_SOCKOPT:
	case BPF_PROG_TYPE_CGROUP_SYSCTL:
	case BPF_PROG_TYPE_SOCK_OPS:
	case BPF_PROG_TYPE_EXT:
	case 32: /* BPF_PROG_TYPE_NETFILTER, newer than these headers */
		return true;
	default:
		return false;
	}
}

static bool prog_type_needs_perfmon(int t)
{
	switch (t) {
	case BPF_PROG_TYPE_KPROBE:
	case BPF_PROG_TYPE_TRACEPOINT:
	case BPF_PROG_TYPE_PERF_EVENT:
	case BPF_PROG_TYPE_RAW_TRACEPOINT:
	case BPF_PROG_TYPE_RAW_TRACEPOINT_WRITABLE:
	case BPF_PROG_TYPE_TRACING:
	case BPF_PROG_TYPE_LSM:
	case BPF_PROG_TYPE_STRUCT_OPS:
	case BPF_PROG_TYPE_EXT:
		return true;
	default:
		return false;
	}
}

/* Map types whose creation needs CAP_NET_ADMIN (map_create() in kernel/bpf/syscall.c). */
static bool map_type_needs_net_admin(int t)
{
	switch (t) {
	case BPF_MAP_TYPE_SOCKMAP:
	case BPF_MAP_TYPE_SOCKHASH:
	case BPF_MAP_TYPE_DEVMAP:
	case BPF_MAP_TYPE_DEVMAP_HASH:
	case BPF_MAP_TYPE_XSKMAP:
	case BPF_MAP_TYPE_CPUMAP:
		return true;
	default:
		return false;
	}
}

/* Helpers the verifier only offers to perfmon_capable() callers (bpf_base_func_proto). */
static bool helper_needs_perfmon(int id)
{
	switch (helper_classify(id)) {
	case HELPER_CLASS_READ_KERNEL_MEMORY:
	case HELPER_CLASS_READ_USER_MEMORY:
	case HELPER_CLASS_WRITE_USER_MEMORY:
	case HELPER_CLASS_WRITE_GLOBAL_LOGS:
		return true;
	default:
		return false;
	}
}

/* ---- libbpf's messages, kept for the client's error ---- */

#define LIBBPF_LOG_MAX 8192
static char libbpf_log[LIBBPF_LOG_MAX];
static size_t libbpf_log_len;

static int libbpf_print_capture(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	int n;

	if (level == LIBBPF_DEBUG || libbpf_log_len >= LIBBPF_LOG_MAX - 1)
		return 0;
	n = vsnprintf(libbpf_log + libbpf_log_len, LIBBPF_LOG_MAX - libbpf_log_len, fmt, ap);
	if (n > 0)
		libbpf_log_len += (size_t)n < LIBBPF_LOG_MAX - libbpf_log_len
					  ? (size_t)n
					  : LIBBPF_LOG_MAX - 1 - libbpf_log_len;
	return 0;
}

/* The first line libbpf printed that says what failed, for one-line messages. */
static const char *libbpf_last_line(char *buf, size_t size)
{
	const char *last = NULL;
	char *save = NULL;
	_cleanup_free_ char *copy = strndup(libbpf_log, libbpf_log_len);

	if (!copy)
		return "";
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (!strstr(line, "BEGIN PROG LOAD LOG") && !strstr(line, "END PROG LOAD LOG") &&
		    strncmp(line, "libbpf: ", 8) == 0)
			last = line;
	snprintf(buf, size, "%s", last ? last + 8 : "");
	return buf;
}

/* ---- reply building ---- */

struct reply {
	json_object *body;
	int fds[PROTO_MAX_REPLY_FDS];
	size_t n_fds;
};

static void reply_done(struct reply *r)
{
	json_object_put(r->body);
	close_many(r->fds, r->n_fds);
}

_printf_(4, 5) static int reply_error(struct reply *r, const char *code, int err, const char *fmt,
				      ...)
{
	_cleanup_free_ char *msg = NULL;
	json_object *body, *e;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);

	body = proto_error_new(0, code, err, msg);
	if (!body)
		return -ENOMEM;
	/* The worker doesn't know the request id; the event loop stamps it. */
	json_object_object_del(body, "id");
	json_object_object_del(body, PROTO_VERSION_KEY);
	json_object_put(r->body);
	close_many(r->fds, r->n_fds);
	r->n_fds = 0;
	r->body = body;
	(void)json_object_object_get_ex(body, "error", &e);
	return 0;
}

static json_object *reply_error_obj(struct reply *r)
{
	json_object *e = NULL;

	if (r->body)
		json_object_object_get_ex(r->body, "error", &e);
	return e;
}

static int reply_add_fd(struct reply *r, int fd)
{
	if (r->n_fds >= ARRAY_SIZE(r->fds)) {
		safe_close(fd);
		return -ETOOMANYREFS;
	}
	r->fds[r->n_fds] = fd;
	return (int)r->n_fds++;
}

/* ---- the job ---- */

struct job {
	const struct policy *policy;
	const struct load_config *cfg;
	struct policy_identity id;
	gid_t *groups;
	struct proto_load_request req;
	struct policy_grant *grant;
	uint8_t *object;
	size_t object_size;
	struct bpf_object *obj;
	struct elf_calls *calls;
	struct object_desc desc;
	struct policy_verdict verdict;
	bool have_verdict;
	char pin_dir[PATH_MAX];
	char *verifier_log;
};

static void job_done(struct job *j)
{
	if (j->have_verdict)
		policy_verdict_done(&j->verdict);
	object_desc_done(&j->desc);
	elf_calls_free(j->calls);
	bpf_object__close(j->obj);
	policy_grant_free(j->grant);
	proto_load_request_done(&j->req);
	free(j->object);
	free(j->groups);
	free(j->verifier_log);
}

static int job_parse(struct job *j, json_object *job, size_t n_fds, struct reply *r)
{
	json_object *identity, *params, *groups;
	_cleanup_free_ char *error = NULL;
	int64_t uid = -1, gid = -1;
	size_t n;
	int k;

	if (!json_object_object_get_ex(job, "identity", &identity) ||
	    !json_object_object_get_ex(job, "params", &params) ||
	    proto_get_int(identity, "uid", true, 0, UINT32_MAX - 1, &uid, &error) < 0 ||
	    proto_get_int(identity, "gid", true, 0, UINT32_MAX - 1, &gid, &error) < 0 ||
	    !json_object_object_get_ex(identity, "groups", &groups) ||
	    !json_object_is_type(groups, json_type_array))
		return reply_error(r, PROTO_E_INTERNAL, EINVAL, "malformed job from the broker");
	j->id.uid = (uid_t)uid;
	j->id.gid = (gid_t)gid;
	n = json_object_array_length(groups);
	j->groups = calloc(n + 1, sizeof(gid_t));
	if (!j->groups)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		j->groups[i] = (gid_t)json_object_get_int64(json_object_array_get_idx(groups, i));
	j->id.groups = j->groups;
	j->id.n_groups = n;

	k = proto_load_request_decode(params, n_fds, &j->req, &error);
	if (k < 0)
		return reply_error(r, PROTO_E_INVALID, -k, "%s", error ? error : "invalid request");
	return 1;
}

/*
 * Copy the object out of the client's fd, once, into private memory: after this
 * the client can change the file or memfd as it likes without affecting what
 * we inspect and load. Only regular files (memfds are regular) are accepted,
 * so a pipe or socket can't make us wait; the size is checked before reading.
 */
static int job_read_object(struct job *j, int fd, struct reply *r)
{
	uint64_t limit = j->grant->limits.max_object_bytes;
	struct stat st;
	size_t off = 0;

	if (limit > POLICY_HARD_MAX_OBJECT_BYTES)
		limit = POLICY_HARD_MAX_OBJECT_BYTES;
	if (fstat(fd, &st) < 0)
		return reply_error(r, PROTO_E_OBJECT, errno, "cannot stat the object fd: %m");
	if (!S_ISREG(st.st_mode))
		return reply_error(r, PROTO_E_OBJECT, EBADFD,
				   "the object fd must be a regular file or memfd, not %s",
				   S_ISFIFO(st.st_mode)	  ? "a pipe"
				   : S_ISSOCK(st.st_mode) ? "a socket"
				   : S_ISDIR(st.st_mode)  ? "a directory"
							  : "a special file");
	if (st.st_size <= 0)
		return reply_error(r, PROTO_E_OBJECT, EINVAL, "the object is empty");
	if ((uint64_t)st.st_size > limit)
		return reply_error(r, PROTO_E_DENIED, EFBIG,
				   "object is %lld bytes, over your limit of %llu bytes",
				   (long long)st.st_size, (unsigned long long)limit);
	j->object = malloc((size_t)st.st_size);
	if (!j->object)
		return -ENOMEM;
	while (off < (size_t)st.st_size) {
		ssize_t n = pread(fd, j->object + off, (size_t)st.st_size - off, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return reply_error(r, PROTO_E_OBJECT, errno,
					   "cannot read the object fd: %m");
		if (n == 0)
			break; /* shrank under us: use what is there */
		off += (size_t)n;
	}
	j->object_size = off;
	return 1;
}

static int job_open(struct job *j, struct reply *r)
{
	_cleanup_free_ char *error = NULL;
	char msg[512];
	int k;

	/* Pins never resolve outside the caller's own directory, which only the broker writes. */
	snprintf(j->pin_dir, sizeof(j->pin_dir), "%s/%u", j->cfg->pin_root, (unsigned)j->id.uid);
	j->verifier_log = calloc(1, PROTO_MAX_VERIFIER_LOG);
	if (!j->verifier_log)
		return -ENOMEM;

	/* Without a name libbpf names .rodata/.data/.bss maps after the buffer's address;
	 * a fixed default keeps map names (which policies match) predictable. */
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = j->req.object_name ?: "obj",
		    .pin_root_path = j->pin_dir, .kernel_log_buf = j->verifier_log,
		    .kernel_log_size = PROTO_MAX_VERIFIER_LOG);

	k = inspect_elf_calls(j->object, j->object_size, &j->calls, &error);
	if (k < 0)
		return reply_error(r, PROTO_E_OBJECT, -k, "not a usable BPF object: %s",
				   error ? error : strerror(-k));
	j->obj = bpf_object__open_mem(j->object, j->object_size, &opts);
	if (!j->obj) {
		k = negative_errno();
		j->obj = NULL;
		return reply_error(r, PROTO_E_OBJECT, -k, "libbpf cannot open the object: %s%s%s",
				   strerror(-k), libbpf_log_len ? ": " : "",
				   libbpf_last_line(msg, sizeof(msg)));
	}
	return 1;
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

static int job_configure(struct job *j, struct reply *r)
{
	struct bpf_program *prog;
	int k;

	for (size_t i = 0; i < j->req.n_map_sizes; i++) {
		struct bpf_map *map =
			bpf_object__find_map_by_name(j->obj, j->req.map_sizes[i].name);

		if (!map)
			return reply_error(r, PROTO_E_INVALID, ENOENT,
					   "no map \"%s\" in the object", j->req.map_sizes[i].name);
		k = bpf_map__set_max_entries(map, j->req.map_sizes[i].max_entries);
		if (k < 0)
			return reply_error(r, PROTO_E_INVALID, -k, "cannot size map \"%s\": %s",
					   j->req.map_sizes[i].name, strerror(-k));
	}

	for (size_t i = 0; i < j->req.n_globals; i++) {
		const struct proto_global *g = &j->req.globals[i];
		struct bpf_map *map;
		uint32_t off, size;
		size_t value_size;
		const void *value;
		_cleanup_free_ uint8_t *copy = NULL;

		if (find_global(j->obj, g->name, &map, &off, &size) < 0)
			return reply_error(r, PROTO_E_INVALID, ENOENT,
					   "no global variable \"%s\" in .rodata, .data or .bss",
					   g->name);
		if (g->size != size)
			return reply_error(r, PROTO_E_INVALID, EINVAL,
					   "global \"%s\" has %u bytes, the value given has %zu",
					   g->name, size, g->size);
		value = bpf_map__initial_value(map, &value_size);
		if (!value || (uint64_t)off + size > value_size)
			return reply_error(r, PROTO_E_OBJECT, EINVAL,
					   "global \"%s\" lies outside its section", g->name);
		copy = malloc(value_size);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, value, value_size);
		memcpy(copy + off, g->value, size);
		k = bpf_map__set_initial_value(map, copy, value_size);
		if (k < 0)
			return reply_error(r, PROTO_E_INVALID, -k, "cannot set global \"%s\": %s",
					   g->name, strerror(-k));
	}

	for (size_t i = 0; i < j->req.n_programs; i++) {
		const struct proto_program_select *sel = &j->req.programs[i];

		if (!bpf_object__find_program_by_name(j->obj, sel->name))
			return reply_error(r, PROTO_E_INVALID, ENOENT,
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
				return reply_error(r, PROTO_E_INVALID, EINVAL,
						   "unknown program type \"%s\" for program \"%s\"",
						   sel->type, sel->name);
			bpf_program__set_type(prog, t);
		}
		if (sel && sel->attach_type) {
			int t = -1;

			for (int a = 0; a < 64; a++) {
				const char *s = libbpf_bpf_attach_type_str(a);

				if (s && strcmp(s, sel->attach_type) == 0)
					t = a;
			}
			if (t < 0)
				return reply_error(r, PROTO_E_INVALID, EINVAL,
						   "unknown attach type \"%s\" for program \"%s\"",
						   sel->attach_type, sel->name);
			bpf_program__set_expected_attach_type(prog, t);
		}
		if (bpf_program__autoload(prog) && bpf_program__type(prog) == BPF_PROG_TYPE_UNSPEC)
			return reply_error(r, PROTO_E_INVALID, EINVAL,
					   "program \"%s\" is in section \"%s\", which this libbpf "
					   "does not know; give its type (--program %s:TYPE)",
					   bpf_program__name(prog), bpf_program__section_name(prog),
					   bpf_program__name(prog));
	}
	return 1;
}

static json_object *json_string_array(char **v, size_t n)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; a && i < n; i++)
		json_object_array_add(a, json_object_new_string(v[i]));
	return a;
}

static json_object *json_helper_array(const int *ids, size_t n)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; a && i < n; i++) {
		const char *name = helper_name(ids[i]);
		char buf[32];

		if (!name) {
			snprintf(buf, sizeof(buf), "helper#%d", ids[i]);
			name = buf;
		}
		json_object_array_add(a, json_object_new_string(name));
	}
	return a;
}

static json_object *verdict_item_json(const struct verdict_item *v)
{
	return v->allowed ? json_object_new_string("allowed")
			  : json_object_new_string(v->reason ? v->reason : "denied");
}

/* Describe programs and maps with their verdicts (fds and ids are added after loading). */
static json_object *describe(const struct job *j, json_object **ret_progs, json_object **ret_maps)
{
	json_object *result = json_object_new_object();
	json_object *progs = json_object_new_array(), *maps = json_object_new_array();
	json_object *reasons = json_object_new_array();

	if (!result || !progs || !maps || !reasons) {
		json_object_put(result);
		json_object_put(progs);
		json_object_put(maps);
		json_object_put(reasons);
		return NULL;
	}
	json_object_object_add(result, "allowed", json_object_new_boolean(j->verdict.allowed));
	if (!j->verdict.object.allowed)
		json_object_array_add(reasons, json_object_new_string(j->verdict.object.reason));
	for (size_t i = 0; i < j->desc.n_programs; i++) {
		const struct object_program *p = &j->desc.programs[i];
		const char *attach = libbpf_bpf_attach_type_str(p->attach_type);
		json_object *o = json_object_new_object();

		json_object_object_add(o, "name", json_object_new_string(p->name));
		json_object_object_add(
			o, "type",
			json_object_new_string(policy_prog_type_to_string(p->prog_type)
						       ?: "unspec"));
		if (attach && p->attach_type != 0)
			json_object_object_add(o, "attach_type", json_object_new_string(attach));
		json_object_object_add(o, "load", json_object_new_boolean(p->load));
		json_object_object_add(o, "insns", json_object_new_int64(p->insn_cnt));
		json_object_object_add(o, "helpers", json_helper_array(p->helpers, p->n_helpers));
		json_object_object_add(o, "kfuncs", json_string_array(p->kfuncs, p->n_kfuncs));
		json_object_object_add(o, "verdict", verdict_item_json(&j->verdict.programs[i]));
		json_object_object_add(o, "fd_granted",
				       json_object_new_boolean(j->verdict.prog_fd[i]));
		if (!j->verdict.programs[i].allowed)
			json_object_array_add(
				reasons, json_object_new_string(j->verdict.programs[i].reason));
		json_object_array_add(progs, o);
	}
	for (size_t i = 0; i < j->desc.n_maps; i++) {
		const struct object_map *m = &j->desc.maps[i];
		json_object *o = json_object_new_object();

		json_object_object_add(o, "name", json_object_new_string(m->name));
		json_object_object_add(
			o, "type",
			json_object_new_string(libbpf_bpf_map_type_str(m->map_type) ?: "unknown"));
		json_object_object_add(o, "key_size", json_object_new_int64(m->key_size));
		json_object_object_add(o, "value_size", json_object_new_int64(m->value_size));
		json_object_object_add(o, "max_entries", json_object_new_int64(m->max_entries));
		json_object_object_add(o, "pinned", json_object_new_boolean(m->pinned));
		json_object_object_add(
			o, "access",
			json_object_new_string(map_access_to_string(j->verdict.map_access[i])));
		json_object_object_add(o, "verdict", verdict_item_json(&j->verdict.maps[i]));
		if (!j->verdict.maps[i].allowed)
			json_object_array_add(reasons,
					      json_object_new_string(j->verdict.maps[i].reason));
		json_object_array_add(maps, o);
	}
	json_object_object_add(result, "reasons", reasons);
	json_object_object_add(result, "programs", json_object_get(progs));
	json_object_object_add(result, "maps", json_object_get(maps));
	*ret_progs = progs;
	*ret_maps = maps;
	return result;
}

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

static int job_prepare_pins(struct job *j, struct reply *r)
{
	struct statfs sfs;
	bool any = false;
	struct bpf_map *map;

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
			return reply_error(r, PROTO_E_DENIED, EPERM,
					   "map \"%s\" cannot be pinned: pinned maps need a plain "
					   "name of letters, digits, '_', '.' or '-'",
					   bpf_map__name(map));
		any = true;
	}
	if (!any)
		return 1;
	if (statfs(j->cfg->pin_root, &sfs) < 0 || (unsigned long)sfs.f_type != BPF_FS_MAGIC)
		return reply_error(r, PROTO_E_LOAD, ENOENT,
				   "the object pins maps by name, but the broker has no bpffs "
				   "directory at %s (mount bpffs: mount -t bpf -o mode=0700 bpf "
				   "/sys/fs/bpf)",
				   j->cfg->pin_root);
	/* Owned by root, mode 0700: the user reaches its pins only through the broker. */
	if (mkdir(j->pin_dir, 0700) < 0 && errno != EEXIST)
		return reply_error(r, PROTO_E_INTERNAL, errno, "cannot create %s: %m", j->pin_dir);
	return 1;
}

static int job_raise_caps(struct job *j)
{
	bool net_admin = false, perfmon = false;
	cap_value_t caps[3];
	int n = 0;

	for (size_t i = 0; i < j->desc.n_programs; i++) {
		const struct object_program *p = &j->desc.programs[i];

		if (!p->load)
			continue;
		net_admin |= prog_type_needs_net_admin(p->prog_type);
		perfmon |= prog_type_needs_perfmon(p->prog_type);
		for (size_t h = 0; h < p->n_helpers; h++)
			perfmon |= helper_needs_perfmon(p->helpers[h]);
	}
	for (size_t i = 0; i < j->desc.n_maps; i++)
		net_admin |= map_type_needs_net_admin(j->desc.maps[i].map_type);

	caps[n++] = CAP_BPF;
	if (net_admin)
		caps[n++] = CAP_NET_ADMIN;
	if (perfmon)
		caps[n++] = CAP_PERFMON;
	return caps_set_effective(caps, n);
}

/*
 * Defense in depth: what libbpf handed the kernel (subprograms appended,
 * relocations applied) must still be within the grant. Our own call-graph
 * reading decided before loading; this re-checks it against libbpf's result.
 */
static int job_post_load_check(struct job *j, struct reply *r)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, j->obj)
	{
		_cleanup_free_ int *helpers = NULL;
		size_t n_helpers = 0, n_kfunc = 0;
		const struct bpf_insn *insns = bpf_program__insns(prog);
		size_t n = bpf_program__insn_cnt(prog);

		if (!bpf_program__autoload(prog) || !insns)
			continue;
		if (inspect_insns_helpers(insns, n, &helpers, &n_helpers, &n_kfunc) < 0)
			return -ENOMEM;
		for (size_t h = 0; h < n_helpers; h++)
			if (!(j->grant->helper_classes &
			      HELPER_CLASS_BIT(helper_classify(helpers[h]))))
				return reply_error(
					r, PROTO_E_DENIED, EPERM,
					"program \"%s\" calls %s after relocation (class "
					"%s), which your policy does not allow",
					bpf_program__name(prog),
					helper_name(helpers[h]) ?: "an unknown helper",
					helper_class_to_string(helper_classify(helpers[h])));
		if (n_kfunc && !(j->grant->helper_classes & HELPER_CLASS_BIT(HELPER_CLASS_KFUNC)))
			return reply_error(
				r, PROTO_E_DENIED, EPERM,
				"program \"%s\" calls a kfunc after relocation, which your "
				"policy does not allow",
				bpf_program__name(prog));
		if (n > j->grant->limits.max_insns_per_program)
			return reply_error(
				r, PROTO_E_DENIED, E2BIG,
				"program \"%s\" has %zu instructions after relocation, over "
				"your limit of %llu",
				bpf_program__name(prog), n,
				(unsigned long long)j->grant->limits.max_insns_per_program);
	}
	return 1;
}

static int job_load(struct job *j, struct reply *r)
{
	char msg[512];
	int k;

	k = job_raise_caps(j);
	if (k < 0)
		return reply_error(r, PROTO_E_INTERNAL, -k, "cannot raise capabilities: %s",
				   strerror(-k));
	k = bpf_object__load(j->obj);
	caps_clear_effective();
	if (k < 0) {
		json_object *e;
		size_t log_len = strnlen(j->verifier_log, PROTO_MAX_VERIFIER_LOG);

		reply_error(r, PROTO_E_LOAD, -k, "the kernel refused the object: %s%s%s",
			    strerror(-k), libbpf_log_len ? ": " : "",
			    libbpf_last_line(msg, sizeof(msg)));
		e = reply_error_obj(r);
		if (e && log_len > 0)
			json_object_object_add(
				e, "verifier_log",
				json_object_new_string_len(j->verifier_log, (int)log_len));
		return 0;
	}
	return job_post_load_check(j, r);
}

/* An fd for the map with exactly the granted access, checked after opening. */
static int open_map_fd(int map_fd, enum map_access access, uint32_t *ret_id)
{
	static const cap_value_t sys_admin[] = {CAP_SYS_ADMIN};
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info);
	int fd, k, want;

	if (bpf_obj_get_info_by_fd(map_fd, &info, &len) < 0)
		return negative_errno();
	LIBBPF_OPTS(bpf_get_fd_by_id_opts, opts,
		    .open_flags = access == MAP_ACCESS_RO   ? BPF_F_RDONLY
				  : access == MAP_ACCESS_WO ? BPF_F_WRONLY
							    : 0);
	/* BPF_MAP_GET_FD_BY_ID is the kernel's only way to open a map with fewer rights. */
	k = caps_set_effective(sys_admin, 1);
	if (k < 0)
		return k;
	fd = bpf_map_get_fd_by_id_opts(info.id, &opts);
	k = fd < 0 ? negative_errno() : 0;
	caps_clear_effective();
	if (fd < 0)
		return k;
	/* The file's access mode is what the kernel checks on every map operation. */
	want = access == MAP_ACCESS_RO ? O_RDONLY : access == MAP_ACCESS_WO ? O_WRONLY : O_RDWR;
	if ((fcntl(fd, F_GETFL) & O_ACCMODE) != want) {
		safe_close(fd);
		return -EACCES;
	}
	*ret_id = info.id;
	return fd;
}

static int job_hand_out(struct job *j, struct reply *r, json_object *progs, json_object *maps)
{
	for (size_t i = 0; i < j->desc.n_programs; i++) {
		json_object *o = json_object_array_get_idx(progs, i);
		struct bpf_program *prog =
			bpf_object__find_program_by_name(j->obj, j->desc.programs[i].name);
		struct bpf_prog_info info = {};
		uint32_t len = sizeof(info);
		char tag[2 * BPF_TAG_SIZE + 1];
		int fd;

		if (!prog || !j->desc.programs[i].load)
			continue;
		fd = bpf_program__fd(prog);
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
			return reply_error(r, PROTO_E_INTERNAL, EIO, "cannot query program \"%s\"",
					   j->desc.programs[i].name);
		for (int b = 0; b < BPF_TAG_SIZE; b++)
			snprintf(tag + 2 * b, 3, "%02x", info.tag[b]);
		json_object_object_add(o, "id", json_object_new_int64(info.id));
		json_object_object_add(o, "tag", json_object_new_string(tag));
		if (j->verdict.prog_fd[i]) {
			int dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);
			int idx = dup < 0 ? -errno : reply_add_fd(r, dup);

			if (idx < 0)
				return reply_error(r, PROTO_E_INTERNAL, -idx,
						   "cannot pass program \"%s\"",
						   j->desc.programs[i].name);
			json_object_object_add(o, "fd", json_object_new_int(idx));
		}
	}
	for (size_t i = 0; i < j->desc.n_maps; i++) {
		json_object *o = json_object_array_get_idx(maps, i);
		struct bpf_map *map = bpf_object__find_map_by_name(j->obj, j->desc.maps[i].name);
		uint32_t id = 0;
		int fd, idx;

		if (!map || bpf_map__fd(map) < 0)
			continue; /* not created: no loaded program needs it */
		if (j->verdict.map_access[i] == MAP_ACCESS_NONE) {
			struct bpf_map_info info = {};
			uint32_t len = sizeof(info);

			if (bpf_obj_get_info_by_fd(bpf_map__fd(map), &info, &len) == 0)
				json_object_object_add(o, "id", json_object_new_int64(info.id));
			continue;
		}
		fd = open_map_fd(bpf_map__fd(map), j->verdict.map_access[i], &id);
		idx = fd < 0 ? fd : reply_add_fd(r, fd);
		if (idx < 0)
			return reply_error(
				r, PROTO_E_INTERNAL, -idx,
				"cannot open map \"%s\" with %s access: %s", j->desc.maps[i].name,
				map_access_to_string(j->verdict.map_access[i]), strerror(-idx));
		json_object_object_add(o, "id", json_object_new_int64(id));
		json_object_object_add(o, "fd", json_object_new_int(idx));
	}
	return 1;
}

static int job_run(struct job *j, json_object *jobmsg, int *fds, size_t n_fds, struct reply *r)
{
	json_object *progs = NULL, *maps = NULL, *result;
	int k;

	k = job_parse(j, jobmsg, n_fds, r);
	if (k <= 0)
		return k;
	k = policy_resolve(j->policy, &j->id, &j->grant);
	if (k < 0)
		return k;
	if (!j->grant->matched)
		return reply_error(r, PROTO_E_DENIED, EPERM,
				   "no policy rule matches uid %u; the broker allows you nothing",
				   (unsigned)j->id.uid);
	k = job_read_object(j, fds[j->req.object_fd], r);
	if (k <= 0)
		return k;
	k = job_open(j, r);
	if (k <= 0)
		return k;
	k = job_configure(j, r);
	if (k <= 0)
		return k;
	{
		_cleanup_free_ char *error = NULL;

		k = inspect_object(j->obj, j->calls, j->object_size, &j->desc, &error);
		if (k < 0)
			return reply_error(r, PROTO_E_OBJECT, -k, "cannot inspect the object: %s",
					   error ? error : strerror(-k));
	}
	k = policy_decide(j->grant, &j->desc, &j->verdict);
	if (k < 0)
		return k;
	j->have_verdict = true;

	result = describe(j, &progs, &maps);
	if (!result)
		return -ENOMEM;
	if (j->req.check_only || !j->verdict.allowed) {
		if (!j->verdict.allowed && !j->req.check_only) {
			json_object *e;
			json_object *reasons = NULL;

			json_object_object_get_ex(result, "reasons", &reasons);
			reply_error(r, PROTO_E_DENIED, EPERM, "%s",
				    policy_verdict_first_reason(&j->verdict));
			e = reply_error_obj(r);
			if (e)
				json_object_object_add(e, "reasons", json_object_get(reasons));
			json_object_put(result);
		} else {
			r->body = json_object_new_object();
			json_object_object_add(r->body, "result", result);
		}
		json_object_put(progs);
		json_object_put(maps);
		return 0;
	}

	k = job_prepare_pins(j, r);
	if (k > 0)
		k = job_load(j, r);
	if (k > 0)
		k = job_hand_out(j, r, progs, maps);
	json_object_put(progs);
	json_object_put(maps);
	if (k <= 0) {
		json_object_put(result);
		return k;
	}
	r->body = json_object_new_object();
	if (!r->body) {
		json_object_put(result);
		return -ENOMEM;
	}
	json_object_object_add(r->body, "result", result);
	return 0;
}

int load_handle(const struct policy *policy, const struct load_config *cfg, json_object *jobmsg,
		int *fds, size_t n_fds, json_object **ret_body, int **ret_fds, size_t *ret_n_fds)
{
	struct job j = {.policy = policy, .cfg = cfg};
	struct reply r = {};
	int k;

	libbpf_set_print(libbpf_print_capture);
	k = job_run(&j, jobmsg, fds, n_fds, &r);
	job_done(&j);
	close_many(fds, n_fds);
	if (k < 0 &&
	    reply_error(&r, PROTO_E_INTERNAL, -k, "the broker failed: %s", strerror(-k)) < 0)
		return -ENOMEM;
	if (!r.body) {
		reply_done(&r);
		return -ENOMEM;
	}
	*ret_fds = malloc(sizeof(int) * (r.n_fds + 1));
	if (!*ret_fds) {
		reply_done(&r);
		return -ENOMEM;
	}
	memcpy(*ret_fds, r.fds, sizeof(int) * r.n_fds);
	*ret_n_fds = r.n_fds;
	*ret_body = r.body;
	return 0;
}
