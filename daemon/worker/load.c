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
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "daemon/shared/audit.h"
#include "btfcheck.h"
#include "common/fdinfo.h"
#include "common/sha256.h"
#include "daemon/shared/caps.h"
#include "common/macro.h"
#include "inspect.h"
#include "proto/method.h"
#include "proto/proto.h"
#include "handout.h"
#include "identity.h"
#include "insns.h"
#include "kaddr.h"
#include "libbpflog.h"
#include "ledger.h"
#include "denial.h"
#include "policy/verdict.h"
#include "policy/attach_type.h"
#include "reply.h"
#include "setup.h"
#include "store.h"

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

/* ---- the job ---- */

struct job;
static int job_map_index(const struct job *j, const char *name);
static int job_add_libbpf_log(struct job *j, struct reply *r);

static void object_release(uint8_t *object, size_t size, bool mapped)
{
	if (mapped)
		munmap(object, size);
	else
		free(object);
}

struct job {
	const struct policy *policy;
	const struct load_config *cfg;
	struct policy_identity id;
	struct identity ident;
	int lock; /* the user's store lock while a load counts against quotas */
	struct ledger ledger; /* what the broker made for the user, still alive (ledger.h) */
	bool have_ledger;
	bool *pin_created; /* per map: pinned by name by this load (no pin existed) */
	struct proto_load_request req;
	/* load_insns: raw instructions instead of an ELF object (insns.h); no obj then */
	bool raw;
	struct proto_insns_request insns;
	int raw_prog_fd;
	struct policy_grant *grant;
	uint8_t *object;
	size_t object_size;
	bool object_mapped; /* a mapping of the client's sealed memfd, not a copy */
	struct bpf_object *obj;
	struct elf_calls *calls;
	struct object_desc desc;
	struct object_handles handles; /* libbpf's program and map of each desc index */
	struct policy_verdict verdict;
	bool have_verdict;
	char pin_dir[PATH_MAX];
	char *verifier_log;
	/*
	 * Could the programs read kernel pointers anyway (loaded with
	 * CAP_PERFMON, or read_kernel_memory granted)? Otherwise kernel
	 * addresses are taken out of what goes back (kaddr.h).
	 */
	bool kernel_addresses_visible;
	struct setup setup; /* map_defs, inner_maps, attach_targets (setup.h) */
};

static void job_done(struct job *j)
{
	if (j->have_verdict)
		policy_verdict_done(&j->verdict);
	object_desc_done(&j->desc);
	object_handles_done(&j->handles);
	elf_calls_free(j->calls);
	bpf_object__close(j->obj);
	policy_grant_free(j->grant);
	proto_load_request_done(&j->req);
	proto_insns_request_done(&j->insns);
	safe_close(j->raw_prog_fd);
	object_release(j->object, j->object_size, j->object_mapped);
	identity_done(&j->ident);
	safe_close(j->lock);
	if (j->have_ledger)
		ledger_done(&j->ledger);
	free(j->pin_created);
	free(j->verifier_log);
	setup_done(&j->setup);
}

static int job_parse(struct job *j, json_object *job, size_t n_fds, struct reply *r)
{
	json_object *params, *method;
	_cleanup_free_ char *error = NULL;
	int k;

	if (identity_from_job(job, &j->ident) < 0 ||
	    !json_object_object_get_ex(job, "params", &params))
		return reply_error(r, PROTO_E_INTERNAL, EINVAL, "malformed job from the broker");
	j->id = j->ident.id;
	j->raw = json_object_object_get_ex(job, "method", &method) &&
		 strcmp(json_object_get_string(method), "load_insns") == 0;
	if (!j->raw) {
		k = proto_load_request_decode(params, n_fds, &j->req, &error);
		if (k < 0)
			return reply_error(r, PROTO_E_INVALID, -k, "%s",
					   error ? error : "invalid request");
		return 1;
	}
	k = proto_insns_request_decode(params, n_fds, &j->insns, &error);
	if (k < 0)
		return reply_error(r, PROTO_E_INVALID, -k, "%s", error ? error : "invalid request");
	/* What the rest of the load reads from a request: the fd, the name, check_only. */
	j->req.object_fd = j->insns.insns_fd;
	j->req.name = TAKE_PTR(j->insns.name);
	j->req.check_only = j->insns.check_only;
	if (!j->insns.prog_name && !(j->insns.prog_name = strdup(PROTO_DEFAULT_PROG_NAME)))
		return -ENOMEM;
	return 1;
}

/* The size of the object as taken, against the request's kind and the caller's limit. */
static int job_check_object_size(struct job *j, uint64_t size, uint64_t limit, struct reply *r)
{
	if (j->raw) {
		_cleanup_free_ char *error = NULL;
		int k = insns_check_size(size, j->grant->limits.max_insns_per_program,
					 j->insns.prog_name, &error);

		if (k == -E2BIG) {
			char note[128];
			const char *key = policy_limit_key("max_insns_per_program",
							   size / sizeof(struct bpf_insn), note,
							   sizeof(note));

			return denial_reply(r, PROTO_E_DENIED, E2BIG, "program", j->insns.prog_name,
					    key, "%s%s", error ? error : strerror(-k), note);
		}
		if (k < 0)
			return reply_error(r, PROTO_E_OBJECT, -k, "%s",
					   error ? error : strerror(-k));
	}
	if (size == 0)
		return reply_error(r, PROTO_E_OBJECT, EINVAL, "the object is empty");
	if (size > limit) {
		char note[128];
		const char *key = policy_limit_key("max_object_bytes", size, note, sizeof(note));

		return denial_reply(r, PROTO_E_DENIED, EFBIG, "object", NULL, key,
				    "object is %llu bytes, over your limit of %llu bytes%s",
				    (unsigned long long)size, (unsigned long long)limit, note);
	}
	return 1;
}

/*
 * Copy what the fd holds, with pread() until its end, whatever size it said
 * it has (it may change while we read), and at most one byte over limit:
 * enough to know it is too large.
 */
static int job_copy_object(struct job *j, int fd, size_t hint, uint64_t limit, struct reply *r)
{
	size_t cap = (hint < limit ? hint : (size_t)limit) + 1, off = 0;
	uint8_t *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (off == cap) {
			uint8_t *grown;

			if (cap > limit)
				break;
			cap = cap * 2 > limit + 1 ? (size_t)limit + 1 : cap * 2;
			grown = realloc(buf, cap);
			if (!grown) {
				free(buf);
				return -ENOMEM;
			}
			buf = grown;
		}
		n = pread(fd, buf + off, cap - off, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return reply_error(r, PROTO_E_OBJECT, errno,
					   "cannot read the object fd: %m");
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	j->object = buf;
	j->object_size = off;
	return 1;
}

/*
 * Take the object from the client's fd so that the client can no longer
 * change what we inspect and load. Only regular files (memfds are regular)
 * are accepted, so a pipe or socket can't make us wait.
 *
 * A memfd already sealed against writing, growing and shrinking
 * (libbpfbroker sends one) can't change: it is mapped, privately, so nothing
 * is copied (a 1.8 MB object would otherwise cost a copy and a page fault per
 * page), and pages libbpf might write stay ours. Its size is read only once
 * the seals are seen: read before, it may be a size the client shrank the
 * memfd below before sealing it, and the mapping would then fault (SIGBUS)
 * past the end. Anything else is copied, never mapped, up to its end.
 */
static int job_read_object(struct job *j, int fd, struct reply *r)
{
	const int sealed = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW;
	uint64_t limit = j->grant->limits.max_object_bytes;
	struct stat st;
	int seals, k;

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
	seals = fcntl(fd, F_GET_SEALS);
	if (seals >= 0 && (seals & sealed) == sealed) {
		void *p;

		/* Sealed: this size is final. */
		if (fstat(fd, &st) < 0)
			return reply_error(r, PROTO_E_OBJECT, errno,
					   "cannot stat the object fd: %m");
		k = job_check_object_size(j, (uint64_t)st.st_size, limit, r);
		if (k <= 0)
			return k;
		p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			j->object = p;
			j->object_size = (size_t)st.st_size;
			j->object_mapped = true;
			return 1;
		}
	}
	/* What it claims now is only a hint; over the limit already, it is refused unread. */
	if (st.st_size > 0 && (uint64_t)st.st_size > limit)
		return job_check_object_size(j, (uint64_t)st.st_size, limit, r);
	k = job_copy_object(j, fd, st.st_size > 0 ? (size_t)st.st_size : 0, limit, r);
	if (k <= 0)
		return k;
	return job_check_object_size(j, j->object_size, limit, r);
}

static int job_open(struct job *j, struct reply *r)
{
	_cleanup_free_ char *error = NULL;
	struct libbpflog_cause cause = {};
	const char *why = NULL;
	char err_text[128];
	size_t log_len;
	int k;

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
		return reply_error(r, PROTO_E_OBJECT, EINVAL, "not a usable BPF object: %s", why);
	k = inspect_elf_calls(j->object, j->object_size, &j->calls, &error);
	if (k == -ENOMEM)
		return k;
	if (k == -EPERM) /* no policy lets the broker load these */
		return denial_reply(r, PROTO_E_DENIED, EPERM, "object", NULL, NULL, "%s",
				    error ? error : strerror(-k));
	if (k < 0)
		return reply_error(r, PROTO_E_OBJECT, -k, "not a usable BPF object: %s",
				   error ? error : strerror(-k));
	j->obj = bpf_object__open_mem(j->object, j->object_size, &opts);
	if (!j->obj) {
		const char *log = libbpflog_text(&log_len);
		bool found = libbpflog_cause(log, log_len, &cause);

		k = negative_errno();
		j->obj = NULL;
		k = reply_error(r, PROTO_E_OBJECT, -k, "libbpf could not open the object: %s%s%s",
				libbpflog_error_text(k, err_text, sizeof(err_text)),
				found ? ": " : "", found ? cause.line : "");
		if (k < 0)
			return k;
		return job_add_libbpf_log(j, r);
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
			r, PROTO_E_OBJECT, EINVAL,
			"not a usable BPF object: it declares a struct_ops map but loads "
			"no struct_ops program (libbpf 1.1 crashes on such objects, and "
			"the map would register nothing usable)");
	return 1;
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

	for (size_t i = 0; i < j->req.n_freeze; i++)
		if (!bpf_object__find_map_by_name(j->obj, j->req.freeze[i]))
			return reply_error(r, PROTO_E_INVALID, ENOENT,
					   "freeze: no map \"%s\" in the object", j->req.freeze[i]);

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
			int t = attach_type_from_string(sel->attach_type);

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
	/* After the program loop: an attach target is looked up for the attach type set there. */
	k = setup_configure(&j->setup, j->obj, &j->req, r);
	if (k <= 0)
		return k;
	return job_check_struct_ops(j, r);
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

/* "allowed", or every reason of the item joined by "; ". */
static json_object *verdict_item_json(const struct verdict_item *v)
{
	_cleanup_free_ char *text = verdict_item_text(v);

	return text ? json_object_new_string(text) : NULL;
}

/*
 * Whether the request's "programs" list (if any) names the program. Not
 * bpf_program__autoload(): libbpf's opt-in SEC("?...") programs are not
 * loaded by default either, though nobody left them out.
 */
static bool job_program_selected(const struct job *j, const char *name)
{
	if (j->raw || j->req.n_programs == 0)
		return true;
	for (size_t i = 0; i < j->req.n_programs; i++)
		if (strcmp(j->req.programs[i].name, name) == 0)
			return true;
	return false;
}

/* Describe programs and maps with their verdicts (fds and ids are added after loading). */
static json_object *describe(const struct job *j, json_object **ret_progs, json_object **ret_maps)
{
	json_object *result = json_object_new_object();
	json_object *progs = json_object_new_array(), *maps = json_object_new_array();
	json_object *reasons = json_object_new_array(), *denials = json_object_new_array();

	if (!result || !progs || !maps || !reasons || !denials ||
	    verdict_to_json(&j->verdict, &j->desc, reasons, denials) < 0) {
		json_object_put(result);
		json_object_put(progs);
		json_object_put(maps);
		json_object_put(reasons);
		json_object_put(denials);
		return NULL;
	}
	json_object_object_add(result, "allowed", json_object_new_boolean(j->verdict.allowed));
	for (size_t i = 0; i < j->desc.n_programs; i++) {
		const struct object_program *p = &j->desc.programs[i];
		const char *attach = attach_type_to_string(p->attach_type);
		json_object *o = json_object_new_object();

		json_object_object_add(o, "name", json_object_new_string(p->name));
		json_object_object_add(
			o, "type",
			json_object_new_string(policy_prog_type_to_string(p->prog_type)
						       ?: "unspec"));
		if (attach && p->attach_type != 0)
			json_object_object_add(o, "attach_type", json_object_new_string(attach));
		json_object_object_add(o, "selected",
				       json_object_new_boolean(job_program_selected(j, p->name)));
		json_object_object_add(o, "load", json_object_new_boolean(p->load));
		json_object_object_add(o, "insns", json_object_new_int64(p->insn_cnt));
		json_object_object_add(o, "helpers", json_helper_array(p->helpers, p->n_helpers));
		json_object_object_add(o, "kfuncs", json_string_array(p->kfuncs, p->n_kfuncs));
		json_object_object_add(o, "ksyms", json_string_array(p->ksyms, p->n_ksyms));
		json_object_object_add(o, "verdict", verdict_item_json(&j->verdict.programs[i]));
		json_object_object_add(o, "fd_granted",
				       json_object_new_boolean(j->verdict.prog_fd[i]));
		json_object_object_add(o, "test_run_only",
				       json_object_new_boolean(j->verdict.test_run_only[i]));
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
		json_object_object_add(o, "map_flags", json_object_new_int64(m->map_flags));
		json_object_object_add(o, "pinned", json_object_new_boolean(m->pinned));
		json_object_object_add(
			o, "access",
			json_object_new_string(map_access_to_string(j->verdict.map_access[i])));
		json_object_object_add(o, "verdict", verdict_item_json(&j->verdict.maps[i]));
		json_object_array_add(maps, o);
	}
	json_object_object_add(result, "reasons", reasons);
	json_object_object_add(result, "denials", denials);
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

static bool pinned_map_exists(const struct job *j, const char *name)
{
	char path[PATH_MAX + 256];

	snprintf(path, sizeof(path), "%s/%s", j->pin_dir, name);
	return access(path, F_OK) == 0;
}

/* Whether some grant in "maps" could give want for map i, whose type may cap it. */
static bool job_access_possible(const struct job *j, size_t i, enum map_access want)
{
	enum map_access most = policy_map_access_for_type(MAP_ACCESS_RW | MAP_ACCESS_CONSUME,
							  j->desc.maps[i].map_type);

	return (want & most) == want;
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

static int job_prepare_pins(struct job *j, struct reply *r)
{
	struct statfs sfs;
	bool any = false;
	struct bpf_map *map;

	if (!j->obj)
		return 1; /* raw instructions have no maps */
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
			return denial_reply(r, PROTO_E_DENIED, EPERM, "map", bpf_map__name(map),
					    NULL,
					    "map \"%s\" cannot be pinned: pinned maps need a plain "
					    "name of letters, digits, '_', '.' or '-'",
					    bpf_map__name(map));
		any = true;
	}
	if (!any)
		return 1;
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
				r, PROTO_E_DENIED, EPERM, "map", m->name, possible ? "maps" : "",
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
		return reply_error(r, PROTO_E_LOAD, ENOENT,
				   "the object pins maps by name, but the broker has no bpffs "
				   "directory at %s (mount bpffs: mount -t bpf -o mode=0700 bpf "
				   "/sys/fs/bpf)",
				   j->cfg->store.pin_root);
	/* Owned by root, mode 0700: the user reaches its pins only through the broker. */
	{
		char dir[PATH_MAX];
		int k = store_pinned_dir(&j->cfg->store, j->id.uid, dir, sizeof(dir));

		if (k < 0)
			return reply_error(r, PROTO_E_INTERNAL, -k, "cannot create %s: %s",
					   j->pin_dir, strerror(-k));
	}
	return 1;
}

static int job_raise_caps(struct job *j)
{
	bool net_admin = false, perfmon = j->grant->load_with_perfmon;
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
	/* libbpf creates an inner map template from the object during the load, too. */
	for (size_t i = 0; i < j->desc.n_maps; i++)
		net_admin |= caps_map_type_needs_net_admin(j->desc.maps[i].map_type) ||
			     caps_map_type_needs_net_admin(j->desc.maps[i].inner_map_type);

	caps[n++] = CAP_BPF;
	if (net_admin)
		caps[n++] = CAP_NET_ADMIN;
	if (perfmon)
		caps[n++] = CAP_PERFMON;
	/* With CAP_PERFMON the verifier lets programs store kernel pointers (allow_ptr_leaks). */
	j->kernel_addresses_visible =
		perfmon ||
		(j->grant->helper_classes & HELPER_CLASS_BIT(HELPER_CLASS_READ_KERNEL_MEMORY));
	return caps_set_effective(caps, n);
}

/*
 * Defense in depth: what libbpf handed the kernel (subprograms appended,
 * relocations applied) must still be within the grant. Our own call-graph
 * reading decided before loading; this re-checks it against libbpf's result.
 */
static int job_post_load_check(struct job *j, struct reply *r)
{
	for (size_t i = 0; i < j->desc.n_programs; i++) {
		_cleanup_(insns_summary_done) struct insns_summary sum = {};
		_cleanup_free_ char *error = NULL;
		struct bpf_program *prog = j->handles.programs[i];
		const struct bpf_insn *insns = bpf_program__insns(prog);
		size_t n = bpf_program__insn_cnt(prog);
		const char *name = j->desc.programs[i].name;
		int type = j->desc.programs[i].prog_type, k;

		if (!j->desc.programs[i].load || !insns)
			continue;
		k = inspect_insns_summary(insns, n, &sum, &error);
		if (k == -ENOMEM)
			return k;
		if (k < 0)
			return denial_reply(r, PROTO_E_DENIED, EPERM, "program", name, NULL,
					    "program \"%s\" after relocation: %s", name,
					    error ? error : strerror(-k));
		for (size_t h = 0; h < sum.n_helpers; h++) {
			int id = sum.helpers[h];
			char key[64], buf[32];

			if (policy_grant_helper(j->grant, type, id))
				continue;
			snprintf(key, sizeof(key), "helper_classes: %s",
				 helper_class_to_string(
					 policy_helper_class_needed(j->grant, type, id, NULL))
					 ?: "unknown");
			return denial_reply(r, PROTO_E_DENIED, EPERM, "program", name, key,
					    "program \"%s\" calls %s after relocation (class "
					    "%s), which your policy does not allow",
					    name, helper_display_name(id, buf),
					    helper_class_to_string(helper_classify(id)));
		}
		if (sum.n_kfunc_calls &&
		    !(j->grant->helper_classes & HELPER_CLASS_BIT(HELPER_CLASS_KFUNC)))
			return denial_reply(r, PROTO_E_DENIED, EPERM, "program", name,
					    "helper_classes: kfunc",
					    "program \"%s\" calls a kfunc after relocation, which "
					    "your policy does not allow",
					    name);
		if (sum.n_kernel_refs &&
		    !(j->grant->helper_classes & HELPER_CLASS_BIT(HELPER_CLASS_READ_KERNEL_MEMORY)))
			return denial_reply(r, PROTO_E_DENIED, EPERM, "program", name,
					    "helper_classes: read_kernel_memory",
					    "program \"%s\" references a kernel symbol after "
					    "relocation, which your policy does not allow",
					    name);
		if (n > j->grant->limits.max_insns_per_program) {
			char note[128];
			const char *key =
				policy_limit_key("max_insns_per_program", n, note, sizeof(note));

			return denial_reply(
				r, PROTO_E_DENIED, E2BIG, "program", name, key,
				"program \"%s\" has %zu instructions after relocation, over "
				"your limit of %llu%s",
				name, n, (unsigned long long)j->grant->limits.max_insns_per_program,
				note);
		}
	}
	return 1;
}

static volatile sig_atomic_t verifier_deadline_passed;

static void on_verifier_deadline(int sig)
{
	verifier_deadline_passed = 1;
}

/*
 * Bound the verifier's time: the kernel's verifier stops with EAGAIN when a
 * signal is pending. libbpf retries EAGAIN a few times, so after the
 * deadline the timer keeps firing (every 10 ms) until the load gives up.
 * The handler does nothing but note it; SA_RESTART is off on purpose.
 */
static int verifier_timer_arm(uint64_t usec)
{
	struct sigaction sa = {.sa_handler = on_verifier_deadline};
	struct itimerval it = {
		.it_value = {.tv_sec = (time_t)(usec / 1000000),
			     .tv_usec = (suseconds_t)(usec % 1000000)},
		.it_interval = {.tv_usec = 10000},
	};

	if (usec == 0)
		return 0;
	verifier_deadline_passed = 0;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) < 0 || setitimer(ITIMER_REAL, &it, NULL) < 0)
		return negative_errno();
	return 0;
}

static void verifier_timer_disarm(void)
{
	struct itimerval off = {};

	setitimer(ITIMER_REAL, &off, NULL);
}

/*
 * On request, libbpf's whole log goes with a failure's error (scrubbed as
 * the verifier's log is): libbpf's notes and warnings, not its debug lines.
 */
static int job_add_libbpf_log(struct job *j, struct reply *r)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	const char *log = libbpflog_text(&len);

	if (!j->req.libbpf_log || !reply_error_obj(r))
		return 0;
	text = j->kernel_addresses_visible ? strndup(log, len) : kaddr_scrub(log, len, &len);
	if (!text)
		return -ENOMEM;
	return reply_error_add(r, "libbpf_log",
			       json_object_new_string_len(text, (int)strlen(text)));
}

/* What went wrong in the kernel (or libbpf), with kernel addresses taken out where due. */
static int job_load_failed(struct job *j, struct reply *r, int k)
{
	size_t log_len = strnlen(j->verifier_log, PROTO_MAX_VERIFIER_LOG), len;
	_cleanup_free_ char *log = NULL, *text = NULL;
	char message[1024];
	int answered;

	/*
	 * libbpf retries a failed load with the verifier log on; a log longer
	 * than ours then fails with ENOSPC, hiding the first error. The log's
	 * tail (the kernel keeps the end) says what it was.
	 */
	if (k == -ENOSPC && log_len + 1 >= PROTO_MAX_VERIFIER_LOG)
		snprintf(message, sizeof(message),
			 "the verifier refused the object; its log overflowed the broker's %u "
			 "KiB, so the reason is in the last lines of the log",
			 PROTO_MAX_VERIFIER_LOG / 1024);
	else
		libbpflog_failure(j->verifier_log, log_len, k, j->raw ? j->insns.prog_name : NULL,
				  message, sizeof(message));
	if (j->kernel_addresses_visible) {
		text = strdup(message);
		log = strndup(j->verifier_log, log_len);
	} else {
		text = kaddr_scrub(message, strlen(message), NULL);
		log = kaddr_scrub(j->verifier_log, log_len, &log_len);
	}
	if (!text || !log)
		return -ENOMEM;
	answered = reply_error(r, PROTO_E_LOAD, -k, "%s", text);
	if (answered < 0)
		return answered;
	len = strlen(log);
	if (len > 0) {
		answered = reply_error_add(r, "verifier_log",
					   json_object_new_string_len(log, (int)len));
		if (answered < 0)
			return answered;
	}
	return j->raw ? 0 : job_add_libbpf_log(j, r);
}

static int job_load(struct job *j, struct reply *r)
{
	int k;

	k = job_raise_caps(j);
	if (k < 0)
		return reply_error(r, PROTO_E_INTERNAL, -k, "cannot raise capabilities: %s",
				   strerror(-k));
	k = verifier_timer_arm(j->cfg->verifier_timeout_usec);
	if (k >= 0 && j->raw) {
		k = insns_load(j->object, j->object_size, &j->desc.programs[0], j->insns.license,
			       j->verifier_log, PROTO_MAX_VERIFIER_LOG);
		if (k >= 0)
			j->raw_prog_fd = k;
	} else if (k >= 0) {
		k = bpf_object__load(j->obj);
	}
	verifier_timer_disarm();
	caps_clear_effective();
	if (k < 0 && verifier_deadline_passed)
		return reply_error(
			r, PROTO_E_TIMEOUT, ETIME,
			"the verifier ran over the broker's limit of %.3g s for one load "
			"and was stopped",
			(double)j->cfg->verifier_timeout_usec / 1e6);
	if (k < 0)
		return job_load_failed(j, r, k);
	/* Raw instructions went to the kernel as inspected: nothing was relocated. */
	return j->raw ? 1 : job_post_load_check(j, r);
}

/*
 * Freeze the maps the client named: from now on no fd writes them from user
 * space, the broker's included (the programs still do). That is what lets
 * an ro grant of an mmapable array come as an fd that can be mapped
 * (handout_map_fd()).
 */
static int job_freeze_maps(struct job *j, struct reply *r)
{
	for (size_t i = 0; i < j->req.n_freeze; i++) {
		int m = job_map_index(j, j->req.freeze[i]);
		int fd = m >= 0 ? bpf_map__fd(j->handles.maps[m]) : -1;
		uint64_t frozen = 0;
		int err;

		if (fd < 0)
			return reply_error(r, PROTO_E_INVALID, ENOENT,
					   "freeze: map \"%s\" was not created", j->req.freeze[i]);
		if (bpf_map_freeze(fd) == 0)
			continue;
		err = errno;
		/*
		 * Already frozen (libbpf freezes .rodata, a pin reused may have
		 * been): the kernel says EPERM, as a frozen map's fds write nothing.
		 */
		if ((err == EPERM || err == EBUSY) && fdinfo_get_u64(fd, "frozen", &frozen) == 0 &&
		    frozen)
			continue;
		return reply_error(r, PROTO_E_LOAD, err, "cannot freeze map \"%s\": %s",
				   j->req.freeze[i], strerror(err));
	}
	return 1;
}

/* The loaded fd of desc.programs[i], or -1. */
static int job_prog_fd(const struct job *j, size_t i)
{
	if (j->raw)
		return i == 0 ? j->raw_prog_fd : -1;
	return bpf_program__fd(j->handles.programs[i]);
}

/* The created fd of desc.maps[i], or -1 (not created: no loaded program needs it). */
static int job_map_fd(const struct job *j, size_t i)
{
	return j->raw ? -1 : bpf_map__fd(j->handles.maps[i]);
}

static int job_hand_out_maps(struct job *j, struct reply *r, json_object *maps);

static int job_hand_out(struct job *j, struct reply *r, json_object *progs, json_object *maps)
{
	int k;

	for (size_t i = 0; i < j->desc.n_maps; i++) {
		char msg[2048];

		/* ro, wo and consume fds mean something only while the guard holds. */
		if (j->verdict.map_access[i] != MAP_ACCESS_NONE &&
		    j->verdict.map_access[i] != MAP_ACCESS_RW) {
			if (handout_check_bpffs(msg, sizeof(msg)) < 0)
				return denial_reply(r, PROTO_E_DENIED, EACCES, "map",
						    j->desc.maps[i].name, NULL, "%s", msg);
			break;
		}
	}
	for (size_t i = 0; i < j->desc.n_programs; i++) {
		json_object *o = json_object_array_get_idx(progs, i);
		struct bpf_prog_info info = {};
		uint32_t len = sizeof(info);
		char tag[2 * BPF_TAG_SIZE + 1];
		int fd;

		if (!j->desc.programs[i].load)
			continue;
		fd = job_prog_fd(j, i);
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
	/* Every map's fd in one go with CAP_SYS_ADMIN raised once (handout.h). */
	handout_batch_begin();
	k = job_hand_out_maps(j, r, maps);
	handout_batch_end();
	return k;
}

static int job_hand_out_maps(struct job *j, struct reply *r, json_object *maps)
{
	for (size_t i = 0; i < j->desc.n_maps; i++) {
		json_object *o = json_object_array_get_idx(maps, i);
		int map_fd = job_map_fd(j, i);
		struct handout_map h = {};
		int fd, idx;

		if (map_fd < 0)
			continue; /* not created: no loaded program needs it */
		if (j->verdict.map_access[i] == MAP_ACCESS_NONE) {
			struct bpf_map_info info = {};
			uint32_t len = sizeof(info);

			if (bpf_obj_get_info_by_fd(map_fd, &info, &len) == 0)
				json_object_object_add(o, "id", json_object_new_int64(info.id));
			continue;
		}
		fd = handout_map_fd(map_fd, j->verdict.map_access[i], &h);
		idx = fd < 0 ? fd : reply_add_fd(r, fd);
		if (idx < 0)
			return reply_error(
				r, PROTO_E_INTERNAL, -idx,
				"cannot open map \"%s\" with %s access: %s", j->desc.maps[i].name,
				map_access_to_string(j->verdict.map_access[i]), strerror(-idx));
		json_object_object_add(o, "id", json_object_new_int64(h.id));
		json_object_object_add(o, "map_flags", json_object_new_int64(h.map_flags));
		json_object_object_add(o, "frozen", json_object_new_boolean(h.frozen));
		json_object_object_add(o, "fd", json_object_new_int(idx));
	}
	return 1;
}

/* ---- named objects and quotas (see store.h) ---- */

/* Over a quota: look again this many times, this far apart (job_check_quotas()). */
#define LEDGER_SETTLE_TRIES 5
#define LEDGER_SETTLE_USEC 20000

static int quota_error(struct reply *r, const char *limit, uint64_t have, uint64_t adds,
		       uint64_t max)
{
	char note[128];
	const char *key = policy_limit_key(limit, u64_add_sat(have, adds), note, sizeof(note));

	return denial_reply(r, PROTO_E_QUOTA, EDQUOT, "object", NULL, key,
			    "this load would exceed your quota %s: you have %llu, the load adds "
			    "%llu, your limit is %llu%s",
			    limit, (unsigned long long)have, (unsigned long long)adds,
			    (unsigned long long)max, note);
}

static int job_map_index(const struct job *j, const char *name)
{
	for (size_t i = 0; i < j->desc.n_maps; i++)
		if (strcmp(j->desc.maps[i].name, name) == 0)
			return (int)i;
	return -ENOENT;
}

/* An owner's shares: each names a real map, a real principal, and no more than the owner has. */
static int job_check_shares(struct job *j, struct reply *r)
{
	for (size_t i = 0; i < j->req.n_shares; i++) {
		const struct proto_share *sh = &j->req.shares[i];
		enum map_access want;
		uint32_t who;
		int m = job_map_index(j, sh->map);
		int k = sh->user ? identity_parse_user(sh->user, &who)
				 : identity_parse_group(sh->group, &who);

		if (m < 0)
			return reply_error(r, PROTO_E_INVALID, ENOENT,
					   "shares[%zu]: the object has no map \"%s\"", i, sh->map);
		if (k < 0)
			return reply_error(r, PROTO_E_INVALID, ENOENT,
					   "shares[%zu]: there is no %s \"%s\"", i,
					   sh->user ? "user" : "group", sh->user ?: sh->group);
		if (map_access_from_string(sh->access, &want) < 0 || want == MAP_ACCESS_NONE)
			return reply_error(r, PROTO_E_INVALID, EINVAL,
					   "shares[%zu]: access must be ro, wo, rw or consume", i);
		if ((want & j->verdict.map_access[m]) != want) {
			/* What no grant gives a map of its type, no key can lift. */
			bool possible = job_access_possible(j, m, want);

			return denial_reply(
				r, PROTO_E_DENIED, EPERM, "map", sh->map, possible ? "maps" : "",
				"shares[%zu]: you may not share map \"%s\" as %s: your "
				"own access to it is %s%s",
				i, sh->map, sh->access,
				map_access_to_string(j->verdict.map_access[m]),
				possible ? ""
					 : " (and no policy grants that access to a map "
					   "of its type)");
		}
	}
	return 1;
}

/*
 * What stays in the kernel because of this load is checked against the
 * user's quotas over everything the broker made for them that still lives
 * (ledger.h): named or not, pinned or held only by a client's fd. Every load
 * takes the user's lock, so that two loads can't both pass the same check.
 * Maps are estimated here (full, one copy per CPU) so nothing over the
 * quota is ever created; job_record() counts what the kernel reports.
 */
static int job_check_quotas(struct job *j, struct reply *r)
{
	const struct policy_limits *l = &j->grant->limits;
	uint64_t progs = 0, memory = 0, threads = 0, named = 0;
	unsigned cpus = ledger_possible_cpus();
	struct ledger_usage u = {};
	int k;

	j->lock = store_lock_user(&j->cfg->store, j->id.uid);
	if (j->lock < 0)
		return reply_error(r, PROTO_E_INTERNAL, -j->lock, "cannot lock your state: %s",
				   strerror(-j->lock));
	if (j->req.name) {
		json_object *meta = NULL;

		store_sweep_user(&j->cfg->store, j->id.uid);
		k = store_meta_read(&j->cfg->store, j->id.uid, j->req.name, &meta);
		json_object_put(meta);
		if (k == 0)
			return reply_error(r, PROTO_E_EXISTS, EEXIST,
					   "you already have an object named \"%s\"; unload it "
					   "first or choose another name",
					   j->req.name);
		if (k != -ENOENT)
			return reply_error(r, PROTO_E_INTERNAL, -k, "cannot read your objects: %s",
					   strerror(-k));
		k = store_count_objects(&j->cfg->store, j->id.uid, &named);
		if (k < 0)
			return reply_error(r, PROTO_E_INTERNAL, -k, "cannot read your objects: %s",
					   strerror(-k));
		if (named + 1 > l->max_named_objects)
			return quota_error(r, "max_named_objects", named, 1, l->max_named_objects);
	}
	for (size_t i = 0; i < j->desc.n_programs; i++)
		progs += j->desc.programs[i].load;
	for (size_t i = 0; i < j->desc.n_maps; i++) {
		const struct object_map *m = &j->desc.maps[i];

		/* Its inner map lives only while the load runs, but then it takes memory too. */
		memory = u64_add_sat(memory, policy_map_inner_memory_estimate(m, cpus));
		/* A by-name pin that exists is reused: it is counted already. */
		if (m->pinned && pinned_map_exists(j, m->name))
			continue;
		memory = u64_add_sat(memory, policy_map_memory_estimate(m, cpus));
		if (m->map_type == BPF_MAP_TYPE_CPUMAP)
			threads += m->max_entries;
	}
	/*
	 * The ledger as recorded counts dead objects too (never too little): if
	 * that fits, nothing needs looking up. Over a quota, look up every
	 * object, and a few times more: the kernel frees what a client closed
	 * after an RCU grace period and a workqueue, so a client that closes its
	 * objects and loads at once would find them counted still.
	 */
	for (int tries = 0;; tries++) {
		if (j->have_ledger)
			ledger_done(&j->ledger);
		k = ledger_open(&j->cfg->store, j->id.uid, tries > 0, &j->ledger);
		if (k < 0)
			return reply_error(r, PROTO_E_INTERNAL, -k,
					   "cannot count your kernel objects: %s", strerror(-k));
		j->have_ledger = true;
		ledger_usage(&j->ledger, &u);
		if ((u.programs + progs <= l->max_loaded_programs &&
		     u64_add_sat(u.map_bytes, memory) <= l->max_map_memory_bytes &&
		     u.kernel_threads + threads <= l->max_kernel_threads) ||
		    tries >= LEDGER_SETTLE_TRIES || u.programs + u.maps == 0)
			break;
		if (tries > 0)
			usleep(LEDGER_SETTLE_USEC);
	}
	if (u.programs + progs > l->max_loaded_programs)
		return quota_error(r, "max_loaded_programs", u.programs, progs,
				   l->max_loaded_programs);
	if (u64_add_sat(u.map_bytes, memory) > l->max_map_memory_bytes)
		return quota_error(r, "max_map_memory_bytes", u.map_bytes, memory,
				   l->max_map_memory_bytes);
	if (u.kernel_threads + threads > l->max_kernel_threads)
		return quota_error(r, "max_kernel_threads", u.kernel_threads, threads,
				   l->max_kernel_threads);
	if (j->req.name) {
		k = job_check_shares(j, r);
		if (k <= 0)
			return k;
	}
	return 1;
}

/* Maps libbpf pinned by name for this load (none existed before): undone on a refusal. */
static void job_unpin_new(struct job *j)
{
	for (size_t i = 0; j->pin_created && !j->raw && i < j->desc.n_maps; i++) {
		const char *path = j->pin_created[i] ? bpf_map__pin_path(j->handles.maps[i]) : NULL;

		if (path)
			unlink(path);
	}
}

/*
 * Record what the load made in the ledger, charged as the kernel reports it
 * (fdinfo memlock, where that is more than the estimate), and check the
 * quota again with those figures. Written before anything is handed out or
 * committed, so a worker that dies from here on leaves no object uncounted
 * (a dead object's entry is dropped when the ledger is next read).
 */
static int job_record(struct job *j, struct reply *r)
{
	const struct policy_limits *l = &j->grant->limits;
	struct ledger_usage u = {};
	int k = 0;

	for (size_t i = 0; i < j->desc.n_programs && k >= 0; i++) {
		int fd = j->desc.programs[i].load ? job_prog_fd(j, i) : -1;

		if (fd >= 0)
			k = ledger_add_prog(&j->ledger, fd);
	}
	for (size_t i = 0; i < j->desc.n_maps && k >= 0; i++) {
		int fd = job_map_fd(j, i);

		if (fd >= 0)
			k = ledger_add_map(&j->ledger, fd);
	}
	/* The object's BTF stays in the kernel as long as a program or map refers to it. */
	if (k >= 0 && !j->raw && bpf_object__btf_fd(j->obj) >= 0)
		k = ledger_add_btf(&j->ledger, bpf_object__btf_fd(j->obj));
	if (k < 0)
		return reply_error(r, PROTO_E_INTERNAL, -k, "cannot count your kernel objects: %s",
				   strerror(-k));
	ledger_usage(&j->ledger, &u);
	if (u.map_bytes > l->max_map_memory_bytes) {
		char note[128];
		const char *key =
			policy_limit_key("max_map_memory_bytes", u.map_bytes, note, sizeof(note));

		return denial_reply(
			r, PROTO_E_QUOTA, EDQUOT, "object", NULL, key,
			"this load would exceed your quota max_map_memory_bytes: with "
			"its maps as the kernel made them you would have %llu, your limit "
			"is %llu%s",
			(unsigned long long)u.map_bytes,
			(unsigned long long)l->max_map_memory_bytes, note);
	}
	/* On any refusal from here on, job_run() removes the maps pinned by name for this load. */
	k = ledger_commit(&j->ledger);
	if (k < 0)
		return reply_error(r, PROTO_E_INTERNAL, -k, "cannot record your kernel objects: %s",
				   strerror(-k));
	return 1;
}

static int pin_into(const char *dir, char kind, size_t i, int fd)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%c%zu", dir, kind, i);
	return bpf_obj_pin(fd, path) < 0 ? negative_errno() : 0;
}

static json_object *job_meta_new(struct job *j, const char *dir, int *ret_err)
{
	static const cap_value_t bpf_cap[] = {CAP_BPF};
	json_object *meta = json_object_new_object(), *progs = json_object_new_array();
	json_object *maps = json_object_new_array(), *shares = json_object_new_array();
	size_t n = 0;
	int k = caps_set_effective(bpf_cap, 1);

	if (!meta || !progs || !maps || !shares || k < 0) {
		json_object_put(meta);
		json_object_put(progs);
		json_object_put(maps);
		json_object_put(shares);
		*ret_err = k < 0 ? k : -ENOMEM;
		caps_clear_effective();
		return NULL;
	}
	json_object_object_add(meta, "name", json_object_new_string(j->req.name));
	json_object_object_add(meta, "owner", json_object_new_int64(j->id.uid));
	json_object_object_add(meta, "loaded_at", json_object_new_int64((int64_t)time(NULL)));
	json_object_object_add(meta, "programs", progs);
	json_object_object_add(meta, "maps", maps);
	json_object_object_add(meta, "shares", shares);
	for (size_t i = 0; i < j->desc.n_programs && k >= 0; i++) {
		const struct object_program *p = &j->desc.programs[i];
		int fd = job_prog_fd(j, i);
		json_object *o;
		uint32_t id = 0;
		char tag[17] = "", pin[24];

		if (!p->load || fd < 0)
			continue;
		k = handout_prog_info(fd, &id, tag);
		if (k >= 0)
			k = pin_into(dir, 'p', n, fd);
		snprintf(pin, sizeof(pin), "p%zu", n++);
		o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(p->name));
		json_object_object_add(
			o, "type",
			json_object_new_string(policy_prog_type_to_string(p->prog_type)
						       ?: "unspec"));
		json_object_object_add(o, "prog_type", json_object_new_int(p->prog_type));
		json_object_object_add(o, "expected_attach_type",
				       json_object_new_int(p->attach_type));
		if (attach_type_to_string(p->attach_type))
			json_object_object_add(
				o, "attach_type",
				json_object_new_string(attach_type_to_string(p->attach_type)));
		json_object_object_add(o, "id", json_object_new_int64(id));
		json_object_object_add(o, "tag", json_object_new_string(tag));
		json_object_object_add(o, "insns", json_object_new_int64(p->insn_cnt));
		json_object_object_add(o, "test_run_only",
				       json_object_new_boolean(j->verdict.test_run_only[i]));
		json_object_object_add(o, "pin", json_object_new_string(pin));
		json_object_array_add(progs, o);
	}
	n = 0;
	for (size_t i = 0; i < j->desc.n_maps && k >= 0; i++) {
		const struct object_map *m = &j->desc.maps[i];
		int map_fd = job_map_fd(j, i);
		struct bpf_map_info info = {};
		uint32_t len = sizeof(info);
		json_object *o;
		char pin[24];

		if (map_fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(map_fd, &info, &len) < 0)
			k = negative_errno();
		if (k >= 0)
			k = pin_into(dir, 'm', n, map_fd);
		snprintf(pin, sizeof(pin), "m%zu", n++);
		o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(m->name));
		json_object_object_add(
			o, "type",
			json_object_new_string(libbpf_bpf_map_type_str(m->map_type) ?: "unknown"));
		json_object_object_add(o, "id", json_object_new_int64(info.id));
		json_object_object_add(o, "key_size", json_object_new_int64(info.key_size));
		json_object_object_add(o, "value_size", json_object_new_int64(info.value_size));
		json_object_object_add(o, "max_entries", json_object_new_int64(info.max_entries));
		json_object_object_add(o, "map_flags", json_object_new_int64(info.map_flags));
		json_object_object_add(o, "btf_key_type_id",
				       json_object_new_int64(info.btf_key_type_id));
		json_object_object_add(o, "btf_value_type_id",
				       json_object_new_int64(info.btf_value_type_id));
		json_object_object_add(o, "pin", json_object_new_string(pin));
		json_object_array_add(maps, o);
		if (info.btf_id)
			json_object_object_add(meta, "btf_id", json_object_new_int64(info.btf_id));
	}
	caps_clear_effective();
	for (size_t i = 0; i < j->req.n_shares; i++) {
		const struct proto_share *sh = &j->req.shares[i];
		json_object *o = json_object_new_object();
		uint32_t who = 0;

		if (sh->user)
			identity_parse_user(sh->user, &who);
		else
			identity_parse_group(sh->group, &who);
		json_object_object_add(o, "map", json_object_new_string(sh->map));
		json_object_object_add(o, sh->user ? "uid" : "gid", json_object_new_int64(who));
		json_object_object_add(o, "access", json_object_new_string(sh->access));
		json_object_array_add(shares, o);
	}
	if (k < 0) {
		json_object_put(meta);
		*ret_err = k;
		return NULL;
	}
	return meta;
}

/* Pin everything, then commit by writing the metadata (see store.h for why in this order). */
static int job_commit_named(struct job *j, struct reply *r, json_object *result)
{
	const struct store_config *c = &j->cfg->store;
	char dir[PATH_MAX];
	json_object *meta;
	int k;

	k = store_object_dir(c, j->id.uid, j->req.name, dir, sizeof(dir));
	if (k >= 0)
		k = store_object_dir_create(c, j->id.uid, j->req.name);
	if (k < 0)
		return reply_error(r, PROTO_E_INTERNAL, -k,
				   "cannot create the directory for \"%s\": %s", j->req.name,
				   strerror(-k));
	meta = job_meta_new(j, dir, &k);
	if (meta) {
		store_fault(c, "load-pinned");
		k = store_meta_write(c, j->id.uid, j->req.name, meta);
		json_object_put(meta);
	}
	if (k < 0) {
		store_object_remove_pins(c, j->id.uid, j->req.name);
		return reply_error(r, PROTO_E_INTERNAL, -k, "cannot keep \"%s\" loaded: %s",
				   j->req.name, strerror(-k));
	}
	store_fault(c, "load-committed");
	json_object_object_add(result, "name", json_object_new_string(j->req.name));
	return 1;
}

static int job_open_and_inspect(struct job *j, struct reply *r)
{
	_cleanup_free_ char *error = NULL;
	int k;

	k = job_open(j, r);
	if (k > 0)
		k = job_configure(j, r);
	if (k <= 0)
		return k;
	k = inspect_object(j->obj, j->calls, j->object_size, &j->desc, &j->handles, &error);
	if (k < 0)
		return reply_error(r, PROTO_E_OBJECT, -k, "cannot inspect the object: %s",
				   error ? error : strerror(-k));
	setup_describe(&j->req, &j->desc);
	return 1;
}

/* load_insns: the blob is one program, described for the same decision as an object's. */
static int job_describe_insns(struct job *j, struct reply *r)
{
	_cleanup_free_ char *error = NULL;
	int k = insns_describe(j->object, j->object_size, j->insns.prog_name, j->insns.type,
			       j->insns.attach_type, true, &j->desc, &error);

	if (k == -ENOMEM)
		return k;
	if (k == -EPERM) /* maps and modules' symbols: no policy lets raw instructions use them */
		return denial_reply(r, PROTO_E_DENIED, EPERM, "program", j->insns.prog_name, NULL,
				    "%s", error ? error : strerror(-k));
	if (k < 0)
		return reply_error(r, k == -EINVAL ? PROTO_E_INVALID : PROTO_E_OBJECT, -k, "%s",
				   error ? error : strerror(-k));
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
		return denial_reply(r, PROTO_E_DENIED, EPERM, "object", NULL, "match",
				    "no policy rule matches uid %u; the broker allows you nothing",
				    (unsigned)j->id.uid);
	/* malloc, not calloc: pages the verifier never writes are never touched. */
	j->verifier_log = malloc(PROTO_MAX_VERIFIER_LOG);
	if (!j->verifier_log)
		return -ENOMEM;
	j->verifier_log[0] = '\0';
	k = job_read_object(j, fds[j->req.object_fd], r);
	if (k <= 0)
		return k;
	k = j->raw ? job_describe_insns(j, r) : job_open_and_inspect(j, r);
	if (k <= 0)
		return k;
	k = policy_decide(j->grant, &j->desc, &j->verdict);
	if (k < 0)
		return k;
	j->have_verdict = true;

	result = describe(j, &progs, &maps);
	if (!result)
		return -ENOMEM;
	if (j->req.check_only || !j->verdict.allowed) {
		if (!j->verdict.allowed && !j->req.check_only) {
			json_object *reasons = NULL, *denials = NULL;

			/* The first reason as the message; all of them, with their keys, beside it.
			 */
			json_object_object_get_ex(result, "reasons", &reasons);
			json_object_object_get_ex(result, "denials", &denials);
			k = reply_error(r, PROTO_E_DENIED, EPERM, "%s",
					policy_verdict_first_reason(&j->verdict));
			if (k < 0) {
				json_object_put(result);
				json_object_put(progs);
				json_object_put(maps);
				return k;
			}
			/* Both or neither: reasons without their keys would mislead. */
			k = reply_error_add(r, "reasons", json_object_get(reasons));
			if (k >= 0)
				k = reply_error_add(r, "denials", json_object_get(denials));
			json_object_put(result);
		} else {
			k = reply_result(r, result);
		}
		json_object_put(progs);
		json_object_put(maps);
		return k;
	}

	/* A test_run-only program is only of use as a named object the caller can test-run. */
	for (size_t i = 0; i < j->desc.n_programs && !j->req.name; i++) {
		const char *type = policy_prog_type_to_string(j->desc.programs[i].prog_type);
		char key[64];

		if (!j->desc.programs[i].load || !j->verdict.test_run_only[i])
			continue;
		json_object_put(progs);
		json_object_put(maps);
		json_object_put(result);
		/* Without a name it would need the type in program_types. */
		snprintf(key, sizeof(key), "program_types: %s", type ?: "");
		return denial_reply(r, PROTO_E_DENIED, EPERM, "program", j->desc.programs[i].name,
				    key,
				    "program \"%s\" has type %s, which your policy allows for test "
				    "runs only: load it with a name, then test-run it",
				    j->desc.programs[i].name, type);
	}
	k = job_check_quotas(j, r);
	if (k > 0)
		k = job_prepare_pins(j, r);
	if (k > 0)
		k = setup_create_inner_maps(&j->setup, j->obj, &j->req, r);
	if (k > 0)
		k = job_load(j, r);
	/* The outer maps keep only the inner maps' shape: not recorded, not kept. */
	setup_close_inner_maps(&j->setup);
	if (k > 0)
		k = job_record(j, r);
	if (k > 0)
		k = job_freeze_maps(j, r);
	if (k > 0)
		k = job_hand_out(j, r, progs, maps);
	if (k > 0 && j->req.name)
		k = job_commit_named(j, r, result);
	json_object_put(progs);
	json_object_put(maps);
	if (k <= 0) {
		/*
		 * Refused or failed once loaded (the post-load check, freezing,
		 * the hand-out, the commit): maps libbpf pinned by name for this
		 * load go again, or they would outlive a request that failed.
		 */
		job_unpin_new(j);
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

/* "name:type,..." of the programs that load, and the helper classes they use. */
static void job_describe_programs(const struct job *j, char *progs, size_t n_progs, char *classes,
				  size_t n_classes)
{
	uint64_t used = 0;
	size_t len = 0;

	progs[0] = classes[0] = '\0';
	for (size_t i = 0; i < j->desc.n_programs; i++) {
		const struct object_program *p = &j->desc.programs[i];

		if (!p->load)
			continue;
		if (len < n_progs)
			len += (size_t)snprintf(progs + len, n_progs - len, "%s%s:%s",
						len ? "," : "", p->name ? p->name : "?",
						policy_prog_type_to_string(p->prog_type) ?: "?");
		for (size_t h = 0; h < p->n_helpers; h++) {
			int c = (int)helper_classify(p->helpers[h]);

			if (c >= 0 && c < 64)
				used |= 1ull << c;
		}
		if (p->n_kfuncs)
			used |= 1ull << HELPER_CLASS_KFUNC;
	}
	len = 0;
	for (int c = 0; c < 64 && c < _HELPER_CLASS_MAX; c++)
		if ((used & (1ull << c)) && len < n_classes)
			len += (size_t)snprintf(
				classes + len, n_classes - len, "%s%s", len ? "," : "",
				helper_class_to_string((enum helper_class)c) ?: "?");
}

/*
 * The load's audit record, kept until the reply is out: hashing a large
 * object takes milliseconds the client need not wait for (load_audit_flush()).
 */
static struct {
	bool set;
	struct audit_record a;
	uint8_t *object; /* taken from the job, hashed at flush */
	size_t object_size;
	bool object_mapped;
	char progs[1024], classes[512], object_name[128], reason[1024], unit[256], user_unit[256];
} pending_audit;

/* Did the load keep anything that outlives its client (named, or a new map pinned by name)? */
static bool job_kept_state(const struct job *j)
{
	if (j->req.name && !j->req.check_only)
		return true;
	for (size_t i = 0; j->pin_created && i < j->desc.n_maps; i++)
		if (j->pin_created[i])
			return true;
	return false;
}

/* One audit record per request, whatever happened (see audit.h). */
static void job_audit(struct job *j, struct reply *r)
{
	const char *code = reply_error_code(r), *reason = NULL;
	struct audit_record *a = &pending_audit.a;

	*a = (struct audit_record){
		.event = j->req.check_only ? "check" : "load",
		.uid = j->id.uid,
		.pid = j->ident.pid,
	};
	/* The job's identity is gone by the time the record is written. */
	if (j->id.unit) {
		snprintf(pending_audit.unit, sizeof(pending_audit.unit), "%s", j->id.unit);
		a->unit = pending_audit.unit;
	}
	if (j->id.user_unit) {
		snprintf(pending_audit.user_unit, sizeof(pending_audit.user_unit), "%s",
			 j->id.user_unit);
		a->user_unit = pending_audit.user_unit;
	}
	pending_audit.object = TAKE_PTR(j->object);
	pending_audit.object_size = j->object_size;
	pending_audit.object_mapped = j->object_mapped;
	job_describe_programs(j, pending_audit.progs, sizeof(pending_audit.progs),
			      pending_audit.classes, sizeof(pending_audit.classes));
	a->programs = pending_audit.progs[0] ? pending_audit.progs : NULL;
	a->helper_classes = pending_audit.classes[0] ? pending_audit.classes : NULL;
	if (j->req.name) {
		snprintf(pending_audit.object_name, sizeof(pending_audit.object_name), "%u/%s",
			 (unsigned)j->id.uid, j->req.name);
		a->object = pending_audit.object_name;
	}
	if (!code) {
		/* check: the verdict; load: it loaded. */
		a->decision = !j->req.check_only || (j->have_verdict && j->verdict.allowed)
				      ? "allow"
				      : "deny";
		if (j->req.check_only && j->have_verdict)
			reason = policy_verdict_first_reason(&j->verdict);
	} else {
		a->decision = strcmp(code, PROTO_E_DENIED) == 0 || strcmp(code, PROTO_E_QUOTA) == 0
				      ? "deny"
				      : "error";
		reason = reply_error_message(r);
	}
	if (reason) {
		snprintf(pending_audit.reason, sizeof(pending_audit.reason), "%s", reason);
		a->reason = pending_audit.reason;
	}
	pending_audit.set = true;
	/*
	 * A load that kept something beyond the client (a named object, a map
	 * pinned by name): its record goes out before the reply, so that nothing
	 * after the commit (a kill at the time limit) leaves the change
	 * unrecorded. Others keep the hashing off the reply's path.
	 */
	if (job_kept_state(j))
		load_audit_flush();
}

void load_audit_flush(void)
{
	char sha[SHA256_HEX_SIZE];

	if (!pending_audit.set)
		return;
	if (pending_audit.object) {
		sha256_hex(pending_audit.object, pending_audit.object_size, sha);
		pending_audit.a.object_sha256 = sha;
	}
	audit_log(&pending_audit.a);
	object_release(pending_audit.object, pending_audit.object_size,
		       pending_audit.object_mapped);
	pending_audit.object = NULL;
	pending_audit.set = false;
}

int load_handle(const struct policy *policy, const struct load_config *cfg, json_object *jobmsg,
		int *fds, size_t n_fds, json_object **ret_body, int **ret_fds, size_t *ret_n_fds)
{
	struct job j = {.policy = policy, .cfg = cfg, .lock = -EBADF, .raw_prog_fd = -1};
	struct reply r = {};
	int k;

	libbpflog_reset();
	libbpf_set_print(libbpflog_print);
	k = job_run(&j, jobmsg, fds, n_fds, &r);
	if (k >= 0)
		k = reply_limit_fds(
			&r, &proto_methods[j.raw ? PROTO_METHOD_LOAD_INSNS : PROTO_METHOD_LOAD]);
	/* A failure after the load started is on record too (with what it left undone). */
	k = reply_fail(&r, k);
	if (k >= 0)
		job_audit(&j, &r);
	job_done(&j);
	close_many(fds, n_fds);
	return reply_finish(&r, k, ret_body, ret_fds, ret_n_fds);
}
