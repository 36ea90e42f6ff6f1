/* SPDX-License-Identifier: MIT */
/*
 * A corpus of our own (issue 18, item 6): objects in the shapes real loaders
 * use, each loaded twice with the same setup, directly with libbpf as root
 * (direct_load.c) and through the broker as an unprivileged uid under a
 * policy that allows everything. The outcomes must be equal: both load, with
 * the same programs and maps as the kernel made them, or both fail with the
 * same errno and the broker's message names the cause libbpf (or the
 * verifier) gave, not only "failed to load object".
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fnmatch.h>
#include <ftw.h>
#include <linux/bpf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "client/libbpfbroker.h"
#include "direct_load.h"
#include "harness.h"
#include "harness_client.h"
#include "policy/attach_type.h"

#define UID_CORPUS 4601 /* everything allowed */

static const struct user corpus_user = {UID_CORPUS, UID_CORPUS};

/* Kernel attach types newer than the UAPI headers here (6.1): this kernel's numbers. */
#define ATTACH_TCX_INGRESS 46
#define ATTACH_CGROUP_UNIX_SENDMSG 50
#define ATTACH_NETKIT_PRIMARY 54

#define PROGS(...) ((const struct setup_prog[]){__VA_ARGS__, {}})
#define MAPS(...) ((const struct setup_map[]){__VA_ARGS__, {}})
#define GLOBALS(...) ((const struct setup_global[]){__VA_ARGS__, {}})
#define INNER(...) ((const struct setup_inner[]){__VA_ARGS__, {}})
#define TARGETS(...) ((const struct setup_target[]){__VA_ARGS__, {}})
/* A program in SEC("cgroup/sendmsg_unix"), as a loader on libbpf 1.1.2 must set it up. */
#define UNIX_SENDMSG(prog, attach)                                                                 \
	PROGS({prog, BPF_PROG_TYPE_CGROUP_SOCK_ADDR, "cgroup_sock_addr",                           \
	       ATTACH_CGROUP_UNIX_SENDMSG, attach})
#define GLOBAL(n, type, v)                                                                         \
	{                                                                                          \
		n, &(const type){v}, sizeof(type)                                                  \
	}
/* As object_name: the loader gives none. */
#define DEFAULT_NAME "(default)"

struct corpus_case {
	const char *name;
	const char *object; /* tests/bpf/NAME.bpf.c */
	struct setup setup;
	/*
	 * The direct load's outcome, checked first so that a case tests what it says; unless
	 * ENVIRONMENT, which takes any outcome and only compares (a program type this kernel
	 * may lack, such as fentry without trampolines).
	 */
	int err; /* 0, -errno or ENVIRONMENT */
	/*
	 * Failures: part of the line of libbpf's (or the verifier's) output that says why; the
	 * broker's message must hold that whole line. Where the direct load failed in a setter
	 * (bpf_program__set_attach_target), which prints nothing, the message must hold this.
	 */
	const char *cause;
};

/* As err: whatever the direct load does here, the broker must do the same. */
#define ENVIRONMENT 1

/* perf_max_stack_depth, as profilers default it */
#define STACK_DEPTH 127

static const struct corpus_case cases[] = {
	/* Stack traces sized at run time: value size and entries set before load. */
	{"stack_sized",
	 "corpus_stack",
	 {.maps = MAPS({"stackmap", 0, STACK_DEPTH * sizeof(uint64_t), 1024},
		       {"comm_filter", 16, 0, 0})}},
	{"stack_unsized", "corpus_stack", {}, -EINVAL, "map 'stackmap': failed to create"},
	/* Event streams declared with the record as value, reset by the loader. */
	{"perf_value_reset", "corpus_events", {.maps = MAPS({"pb", 0, sizeof(uint32_t), 0})}},
	{"perf_value_as_declared", "corpus_events", {}, -EINVAL, "map 'pb': failed to create"},
	{"ring_value_reset", "corpus_ringbuf", {.maps = MAPS({"rb", 0, SETUP_ZERO, 0})}},
	{"ring_value_as_declared", "corpus_ringbuf", {}, -EINVAL, "map 'rb': failed to create"},
	/* A map of maps without an inner template: the loader gives the inner map. */
	{"mapinmap_inner_given",
	 "corpus_mapinmap",
	 {.inner = INNER({"cgroup_sets", BPF_MAP_TYPE_HASH, "hash", 4, 4, 128})}},
	{"mapinmap_no_inner",
	 "corpus_mapinmap",
	 {},
	 -EINVAL,
	 "map 'cgroup_sets': failed to create"},
	/* CO-RE probes guarding code: fields, enum values, a type no kernel has. */
	{"core_guarded_fields", "corpus_core", {.progs = PROGS({"fields"})}},
	{"core_guarded_missing_type", "corpus_core", {.progs = PROGS({"no_type"})}},
	{"core_plain_read", "corpus_core", {.progs = PROGS({"pid_read"})}},
	{"core_unguarded_missing_field",
	 "corpus_core",
	 {.progs = PROGS({"unguarded"})},
	 -EINVAL,
	 "failed to resolve CO-RE relocation"},
	/* Sections libbpf 1.1.2 does not know: the loader sets type and attach type. */
	{"newsec_unix_sendmsg",
	 "corpus_newsec",
	 {.progs = UNIX_SENDMSG("unix_sendmsg", "cgroup_unix_sendmsg")}},
	{"newsec_unix_sendmsg_number",
	 "corpus_newsec",
	 {.progs = UNIX_SENDMSG("unix_sendmsg", "50")}},
	/* A kfunc of unix socket address programs, in such a section. */
	{"newsec_unix_rewrite",
	 "corpus_unixpath",
	 {.progs = UNIX_SENDMSG("unix_rewrite", "cgroup_unix_sendmsg")}},
	/* The type without the attach type: the kernel refuses a socket address program. */
	{"newsec_unix_type_only",
	 "corpus_newsec",
	 {.progs = PROGS({"unix_sendmsg", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, "cgroup_sock_addr"})},
	 -EINVAL,
	 "prog 'unix_sendmsg': BPF program load failed"},
	{"newsec_tcx_ingress",
	 "corpus_newsec",
	 {.progs = PROGS({"tcx_in", BPF_PROG_TYPE_SCHED_CLS, "sched_cls", ATTACH_TCX_INGRESS,
			  "tcx_ingress"})}},
	{"newsec_netkit_primary",
	 "corpus_newsec",
	 {.progs = PROGS({"nk_primary", BPF_PROG_TYPE_SCHED_CLS, "sched_cls", ATTACH_NETKIT_PRIMARY,
			  "netkit_primary"})}},
	/* One probe as fentry and kprobe: the loader picks one. */
	{"select_kprobe", "corpus_select", {.progs = PROGS({"unlink_kprobe"})}},
	/* Loads where the kernel has fentry trampolines; where not (EPERM), fails alike. */
	{"select_fentry",
	 "corpus_select",
	 {.progs = PROGS({"unlink_fentry"})},
	 ENVIRONMENT,
	 "prog 'unlink_fentry': BPF program load failed"},
	{"target_given",
	 "corpus_select",
	 {.progs = PROGS({"any_fentry"}), .targets = TARGETS({"any_fentry", "do_unlinkat"})},
	 ENVIRONMENT,
	 "prog 'any_fentry': BPF program load failed"},
	{"target_missing",
	 "corpus_select",
	 {.progs = PROGS({"any_fentry"}),
	  .targets = TARGETS({"any_fentry", "corpus_no_such_function"})},
	 -ESRCH,
	 "corpus_no_such_function"},
	/* const volatile settings written before load. */
	{"globals_default", "corpus_globals", {}},
	{"globals_set",
	 "corpus_globals",
	 {.globals = GLOBALS(GLOBAL("targ_pid", uint32_t, 4242), GLOBAL("scale", uint64_t, 3))}},
	{"globals_make_branch_live",
	 "corpus_globals",
	 {.globals = GLOBALS(GLOBAL("strict", uint8_t, 1))},
	 -EACCES,
	 "invalid mem access 'map_value_or_null'"},
	/* What must just work. */
	{"common_all", "corpus_common", {}},
	{"common_default_name", "corpus_common", {.object_name = DEFAULT_NAME}},
	{"common_subset", "corpus_common", {.progs = PROGS({"small"}, {"large"})}},
	{"types_all", "corpus_types", {}},
	{"net_types_all", "corpus_net", {}},
	{"pinned_by_name", "corpus_pinned", {}},
	{"pinned_by_name_again", "corpus_pinned", {}},
	{"verifier_rejects",
	 "corpus_reject",
	 {.progs = PROGS({"unbounded"})},
	 -EACCES,
	 "unbounded memory access"},
	{"verifier_accepts", "corpus_reject", {.progs = PROGS({"bounded"})}},
	{"kconfig", "corpus_kconfig", {}},
	{"map_not_created", "corpus_badmap", {}, -EINVAL, "map 'prefixes': failed to create"},
};

/* ---- the broker's side, as the unprivileged user ---- */

struct run {
	const struct corpus_case *c;
	struct setup setup; /* the case's, as both loads got it */
	struct direct_outcome direct;
	char cause[512]; /* the whole line of the direct log that names the cause */
};

static size_t count_entries(const void *array, size_t size)
{
	size_t n = 0;

	/* Every setup array ends with an entry whose first member (a name) is NULL. */
	while (array && *(const char *const *)((const char *)array + n * size))
		n++;
	return n;
}

/* A case's setup as libbpfbroker options: the arrays the options point into. */
struct broker_setup {
	struct bpfbroker_program_select progs[DIRECT_MAX];
	struct bpfbroker_global globals[DIRECT_MAX];
	struct bpfbroker_map_size sizes[DIRECT_MAX];
	struct bpfbroker_map_def defs[DIRECT_MAX];
	struct bpfbroker_inner_map inner[DIRECT_MAX];
	struct bpfbroker_attach_target targets[DIRECT_MAX];
};

static void broker_opts(const struct setup *s, struct broker_setup *b,
			struct bpfbroker_load_opts *o)
{
	size_t n;

	*o = (struct bpfbroker_load_opts){
		.sz = sizeof(*o), .object_name = s->object_name, .libbpf_log = true};
	n = count_entries(s->progs, sizeof(*s->progs));
	for (size_t i = 0; i < n; i++)
		b->progs[i] = (struct bpfbroker_program_select){
			s->progs[i].name, s->progs[i].type_name, s->progs[i].attach_name};
	o->programs = b->progs;
	o->n_programs = n;
	n = count_entries(s->globals, sizeof(*s->globals));
	for (size_t i = 0; i < n; i++)
		b->globals[i] = (struct bpfbroker_global){s->globals[i].name, s->globals[i].value,
							  s->globals[i].size};
	o->globals = b->globals;
	o->n_globals = n;
	n = count_entries(s->maps, sizeof(*s->maps));
	for (size_t i = 0; i < n; i++) {
		const struct setup_map *m = &s->maps[i];

		if (m->max_entries)
			b->sizes[o->n_map_sizes++] =
				(struct bpfbroker_map_size){m->name, m->max_entries};
		/* Both mean the same: 0 keeps, SETUP_ZERO (BPFBROKER_SIZE_ZERO) sets 0. */
		if (m->key_size || m->value_size)
			b->defs[o->n_map_defs++] =
				(struct bpfbroker_map_def){m->name, m->key_size, m->value_size};
	}
	o->map_sizes = b->sizes;
	o->map_defs = b->defs;
	n = count_entries(s->inner, sizeof(*s->inner));
	for (size_t i = 0; i < n; i++)
		b->inner[i] = (struct bpfbroker_inner_map){
			s->inner[i].outer, s->inner[i].type_name, s->inner[i].key_size,
			s->inner[i].value_size, s->inner[i].max_entries};
	o->inner_maps = b->inner;
	o->n_inner_maps = n;
	n = count_entries(s->targets, sizeof(*s->targets));
	for (size_t i = 0; i < n; i++)
		b->targets[i] = (struct bpfbroker_attach_target){s->targets[i].program,
								 s->targets[i].target};
	o->attach_targets = b->targets;
	o->n_attach_targets = n;
}

static int differences;

#define DIFF(cond, ...)                                                                            \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "  differs: ");                                            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			differences++;                                                             \
		}                                                                                  \
	} while (0)

static const char *str_or(const char *s, const char *alt)
{
	return s ? s : alt;
}

static void compare_programs(const struct run *run, const struct bpfbroker_result *res)
{
	const struct direct_outcome *d = &run->direct;

	DIFF(res->n_programs == d->n_progs, "%zu programs, directly %zu", res->n_programs,
	     d->n_progs);
	for (size_t i = 0; i < d->n_progs; i++) {
		const struct direct_prog *p = &d->progs[i];
		const struct bpfbroker_program *b = bpfbroker_result_program(res, p->name);
		const char *type = libbpf_bpf_prog_type_str(p->type), *attach;

		DIFF(b, "program %s missing", p->name);
		if (!b)
			continue;
		DIFF(b->loaded == p->load, "program %s %s, directly %s", p->name,
		     b->loaded ? "loaded" : "not loaded", p->load ? "loaded" : "not loaded");
		DIFF(type && b->type && strcmp(b->type, type) == 0, "program %s has type %s, %s",
		     p->name, str_or(b->type, "(none)"), str_or(type, "(unknown)"));
		/*
		 * Named as the broker names attach types (libbpf's name, else the kernel's);
		 * 0, the default (also cgroup_inet_ingress), the broker reports as none.
		 */
		attach = p->attach_type ? attach_type_to_string(p->attach_type) : NULL;
		DIFF(attach ? b->attach_type && strcmp(b->attach_type, attach) == 0
			    : !b->attach_type,
		     "program %s has attach type %s, directly %s (%d)", p->name,
		     str_or(b->attach_type, "(none)"), str_or(attach, "(none)"), p->attach_type);
	}
}

static void compare_maps(const struct run *run, const struct bpfbroker_result *res)
{
	const struct direct_outcome *d = &run->direct;

	DIFF(res->n_maps == d->n_maps, "%zu maps, directly %zu", res->n_maps, d->n_maps);
	for (size_t i = 0; i < d->n_maps; i++) {
		const struct direct_map *m = &d->maps[i];
		const struct bpfbroker_map *b = bpfbroker_result_map(res, m->name);
		const char *type = libbpf_bpf_map_type_str(m->type);
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);

		DIFF(b, "map %s missing", m->name);
		if (!b)
			continue;
		DIFF(type && b->type && strcmp(b->type, type) == 0, "map %s has type %s, %s",
		     m->name, str_or(b->type, "(none)"), str_or(type, "(unknown)"));
		DIFF(b->key_size == m->key_size && b->value_size == m->value_size &&
			     b->max_entries == m->max_entries,
		     "map %s is %u/%u/%u (key/value/entries), directly %u/%u/%u", m->name,
		     b->key_size, b->value_size, b->max_entries, m->key_size, m->value_size,
		     m->max_entries);
		/* And what the kernel made of it, where we hold an fd. */
		if (b->fd >= 0 && bpf_obj_get_info_by_fd(b->fd, &info, &len) == 0)
			DIFF(info.key_size == m->key_size && info.value_size == m->value_size &&
				     info.max_entries == m->max_entries,
			     "map %s is in the kernel %u/%u/%u, directly %u/%u/%u", m->name,
			     info.key_size, info.value_size, info.max_entries, m->key_size,
			     m->value_size, m->max_entries);
		/* Globals set before load, and the kernel's configuration, as libbpf wrote them. */
		if (m->has_value) {
			uint8_t value[DIRECT_VALUE_MAX];

			DIFF(b->fd >= 0 && bpfbroker_map_lookup(b->fd, &(uint32_t){0}, value) == 0,
			     "map %s cannot be read", m->name);
			DIFF(b->fd < 0 || memcmp(value, m->value, m->value_size) == 0,
			     "map %s holds other values than directly", m->name);
		}
	}
}

/*
 * The broker's message names libbpf's cause: it contains the line, or, for a
 * program the kernel refused without a verifier log ("prog 'P': BPF program
 * load failed: TEXT"), names the program and the kernel's error as its own
 * sentence does ("the kernel refused program 'P': TEXT").
 */
static bool message_names_cause(const char *message, const char *cause)
{
	static const char failed[] = "': BPF program load failed: ";
	const char *end = strstr(cause, failed);
	char program[160];

	if (strstr(message, cause))
		return true;
	if (strncmp(cause, "prog '", 6) != 0 || !end)
		return false;
	snprintf(program, sizeof(program), "program '%.*s'", (int)(end - cause - 6), cause + 6);
	return strstr(message, program) && strstr(message, end + strlen(failed));
}

static int client_compare(void *arg)
{
	const struct run *run = arg;
	const struct corpus_case *c = run->c;
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	struct bpfbroker_load_opts o;
	struct broker_setup *b = calloc(1, sizeof(*b));
	int k;

	if (!b)
		return 1;
	broker_opts(&run->setup, b, &o);
	k = harness_load(c->object, &o, &res, &err);
	differences = 0;
	if (run->direct.err == 0) {
		DIFF(k == 0, "the broker failed: %s (errno %d): %s", err ? err->code : "no reply",
		     -k, err ? err->message : strerror(-k));
		if (k == 0) {
			compare_programs(run, res);
			compare_maps(run, res);
		}
	} else {
		DIFF(k < 0 && err, "the broker loaded it, directly: %s", run->cause);
		if (err) {
			DIFF(err->err == -run->direct.err, "errno %d (%s), directly %d (%s)",
			     err->err, strerror(err->err), -run->direct.err,
			     strerror(-run->direct.err));
			/* An ENVIRONMENT case whose failure is not the one its cause names. */
			DIFF(!run->cause[0] || message_names_cause(err->message, run->cause),
			     "the broker's message does not name the cause \"%s\": %s", run->cause,
			     err->message);
		}
	}
	if (differences) {
		fprintf(stderr, "  case %s: %d differences; the direct load's libbpf log:\n%s",
			c->name, differences, run->direct.log);
		if (err && err->libbpf_log)
			fprintf(stderr, "  the broker's libbpf log:\n%s", err->libbpf_log);
		if (err && err->verifier_log)
			fprintf(stderr, "  the broker's verifier log:\n%s", err->verifier_log);
	}
	bpfbroker_result_free(res);
	bpfbroker_error_free(err);
	free(b);
	return differences ? 1 : 0;
}

/* ---- one case ---- */

static char direct_pin_root[128];

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path) < 0 ? -1 : 0;
}

static void test_case(void **state)
{
	const struct corpus_case *c = *state;
	struct run *run = calloc(1, sizeof(*run));
	struct setup s = c->setup;

	assert_non_null(run);
	run->c = c;
	s.pin_root = direct_pin_root;
	/*
	 * libbpf names .rodata & co after the object: given, the same on both sides; not
	 * given (DEFAULT_NAME), libbpf's default from the file name, and the library's.
	 */
	if (!s.object_name)
		s.object_name = c->object;
	else if (strcmp(s.object_name, DEFAULT_NAME) == 0)
		s.object_name = NULL;
	run->setup = s;
	assert_int_equal(direct_load(harness_object(c->object), &s, &run->direct), 0);
	/* Pins of the direct load are not the broker's (it pins in its own root). */
	nftw(direct_pin_root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	if (c->err != ENVIRONMENT && run->direct.err != c->err)
		fprintf(stderr, "case %s: directly %d (%s), expected %d; libbpf said:\n%s", c->name,
			run->direct.err, strerror(-run->direct.err), c->err, run->direct.log);
	if (c->err != ENVIRONMENT)
		assert_int_equal(run->direct.err, c->err);
	if (c->err == ENVIRONMENT && run->direct.err != 0) {
		/* The cause if libbpf gave it; else the errno alone is compared. */
		if (c->cause)
			direct_log_line(&run->direct, c->cause, run->cause, sizeof(run->cause));
	} else if (c->cause) {
		if (direct_log_line(&run->direct, c->cause, run->cause, sizeof(run->cause)) < 0)
			fprintf(stderr, "case %s: libbpf did not say \"%s\":\n%s", c->name,
				c->cause, run->direct.log);
		assert_true(run->cause[0]);
		if (strncmp(run->cause, DIRECT_SETUP_FAILED, strlen(DIRECT_SETUP_FAILED)) == 0)
			snprintf(run->cause, sizeof(run->cause), "%s", c->cause);
	}
	assert_int_equal(harness_as_user(&corpus_user, client_compare, run), 0);
	free(run);
}

/* ---- setup: a policy that allows everything ---- */

static const char *const helper_classes[] = {
	"base",
	"read_kernel_memory",
	"read_user_memory",
	"write_user_memory",
	"write_global_logs",
	"signal",
	"override_return",
	"current_task",
	"net_read",
	"net_modify",
	"redirect",
	"perf_event",
	"sysctl",
	"socket_options",
	"security",
	"syscall",
	"inject_input",
	"kfunc",
	"unknown",
	"read_user_memory_any_task",
	"write_user_memory_any_task",
	"signal_any_task",
};

/* A JSON array of every name str() has for 1..: libbpf's program or map types. */
static void append_names(char *buf, size_t size, const char *(*str)(int))
{
	const char *sep = "";

	strncat(buf, "[", size - strlen(buf) - 1);
	for (int t = 1; t < 256; t++) {
		const char *name = str(t);

		if (!name)
			continue;
		snprintf(buf + strlen(buf), size - strlen(buf), "%s\"%s\"", sep, name);
		sep = ", ";
	}
	strncat(buf, "]", size - strlen(buf) - 1);
}

static const char *prog_type_name(int t)
{
	return libbpf_bpf_prog_type_str(t);
}

static const char *map_type_name(int t)
{
	return libbpf_bpf_map_type_str(t);
}

static int write_allow_all_policy(void)
{
	char *p = calloc(1, 16384);
	size_t size = 16384;
	int k;

	if (!p)
		return -ENOMEM;
	snprintf(p, size,
		 "{\"rules\": [{\"match\": {\"uids\": [\"%d\"]}, \"allow\": {\"program_types\": ",
		 UID_CORPUS);
	append_names(p, size, prog_type_name);
	strncat(p, ", \"program_fds\": ", size - strlen(p) - 1);
	append_names(p, size, prog_type_name);
	strncat(p, ", \"map_types\": ", size - strlen(p) - 1);
	append_names(p, size, map_type_name);
	strncat(p, ", \"helper_classes\": [", size - strlen(p) - 1);
	for (size_t i = 0; i < sizeof(helper_classes) / sizeof(*helper_classes); i++)
		snprintf(p + strlen(p), size - strlen(p), "%s\"%s\"", i ? ", " : "",
			 helper_classes[i]);
	snprintf(p + strlen(p), size - strlen(p),
		 "], \"maps\": [{\"name\": \"*\", \"access\": \"rw\"}], \"pinning\": true,"
		 " \"maps_of_maps\": true, \"load_with_perfmon\": true},"
		 " \"limits\": {\"max_object_bytes\": 67108864, \"max_insns_per_program\": 1000000,"
		 " \"max_programs\": 128, \"max_maps\": 120, \"max_map_entries\": 4294967295,"
		 " \"max_named_objects\": 4096, \"max_loaded_programs\": 65536,"
		 " \"max_map_memory_bytes\": 68719476736, \"max_kernel_threads\": 4096,"
		 " \"max_attachments\": 4096, \"max_loads_per_minute\": 100000}},"
		 /* Ring buffers get an fd only with consume; every other map keeps rw. */
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"maps\": [{\"name\": \"*\", \"access\": \"consume\"}]}}]}",
		 UID_CORPUS);
	k = harness_write_policy("50-allow-all.json", p);
	free(p);
	return k;
}

static int setup(void **state)
{
	if (harness_init() < 0 || write_allow_all_policy() < 0)
		return -1;
	snprintf(direct_pin_root, sizeof(direct_pin_root), "/sys/fs/bpf/bpfbroker-corpus-%d",
		 (int)getpid());
	harness_mark_kernel_objects();
	return harness_start(NULL) < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	nftw(direct_pin_root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	return harness_finish();
}

int main(void)
{
	enum { N = sizeof(cases) / sizeof(*cases) };
	/* BPFBROKER_CORPUS_CASES=GLOB: only the cases it matches (to study one). */
	const char *only = getenv("BPFBROKER_CORPUS_CASES");
	struct CMUnitTest tests[N];
	size_t n = 0;

	for (size_t i = 0; i < N; i++)
		if (!only || fnmatch(only, cases[i].name, 0) == 0)
			tests[n++] = (struct CMUnitTest){.name = cases[i].name,
							 .test_func = test_case,
							 .initial_state = (void *)&cases[i]};
	return _cmocka_run_group_tests("test_corpus", tests, n, setup, teardown);
}
