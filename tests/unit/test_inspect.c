/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for daemon/worker/inspect_*.c: call graphs of the test objects built
 * from tests/bpf (found through BPFBROKER_TEST_BPF_DIR), the description of
 * opened libbpf objects, and hostile ELF input. No root needed: objects are
 * only opened, never loaded.
 */
#include <bpf/libbpf.h>
#include <elf.h>
#include <libelf.h>
#include <linux/bpf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/macro.h"
#include "daemon/worker/insncheck.h"
#include "daemon/worker/inspect.h"

struct blob {
	uint8_t *data;
	size_t len;
};

static void blob_done(struct blob *b)
{
	free(b->data);
	*b = (struct blob){0};
}

static struct blob load_object(const char *name)
{
	const char *dir = getenv("BPFBROKER_TEST_BPF_DIR");
	_cleanup_free_ char *path = NULL;
	struct blob b = {0};
	FILE *f;
	long n;

	assert_non_null(dir);
	assert_true(asprintf(&path, "%s/%s.bpf.o", dir, name) > 0);
	f = fopen(path, "re");
	if (!f)
		fail_msg("cannot open %s", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	b.len = (size_t)n;
	b.data = malloc(b.len);
	assert_non_null(b.data);
	assert_int_equal(fread(b.data, 1, b.len, f), b.len);
	fclose(f);
	return b;
}

static struct elf_calls *calls_of(const struct blob *b)
{
	struct elf_calls *calls = NULL;
	char *error = NULL;
	int r;

	r = inspect_elf_calls(b->data, b->len, &calls, &error);
	if (r < 0)
		fail_msg("inspect_elf_calls: %d (%s)", r, error ? error : "no message");
	assert_null(error);
	assert_non_null(calls);
	return calls;
}

static const struct elf_entry *entry(const struct elf_calls *c, const char *name)
{
	for (size_t i = 0; i < c->n_entries; i++)
		if (strcmp(c->entries[i].name, name) == 0)
			return &c->entries[i];
	fail_msg("no entry %s", name);
	return NULL;
}

static bool has_helper(const struct elf_entry *e, int id)
{
	for (size_t i = 0; i < e->n_helpers; i++)
		if (e->helpers[i] == id)
			return true;
	return false;
}

static bool has_kfunc(const struct elf_entry *e, const char *name)
{
	for (size_t i = 0; i < e->n_kfuncs; i++)
		if (strcmp(e->kfuncs[i], name) == 0)
			return true;
	return false;
}

static void assert_sorted_unique(const struct elf_entry *e)
{
	for (size_t i = 1; i < e->n_helpers; i++)
		assert_true(e->helpers[i - 1] < e->helpers[i]);
	for (size_t i = 1; i < e->n_kfuncs; i++)
		assert_true(strcmp(e->kfuncs[i - 1], e->kfuncs[i]) < 0);
}

/* The program's own instruction count, as libbpf sees it before relocation. */
static size_t own_insns(const struct blob *b, const char *prog_name)
{
	struct bpf_object *obj = bpf_object__open_mem(b->data, b->len, NULL);
	struct bpf_program *prog;
	size_t n;

	assert_non_null(obj);
	prog = bpf_object__find_program_by_name(obj, prog_name);
	assert_non_null(prog);
	n = bpf_program__insn_cnt(prog);
	bpf_object__close(obj);
	return n;
}

/* Independent of policy/decide.c, so this test only links what it tests. */
static void desc_done(struct object_desc *d)
{
	for (size_t i = 0; i < d->n_programs; i++) {
		free(d->programs[i].name);
		free(d->programs[i].helpers);
		for (size_t j = 0; j < d->programs[i].n_kfuncs; j++)
			free(d->programs[i].kfuncs[j]);
		free(d->programs[i].kfuncs);
		for (size_t j = 0; j < d->programs[i].n_ksyms; j++)
			free(d->programs[i].ksyms[j]);
		free(d->programs[i].ksyms);
	}
	free(d->programs);
	for (size_t i = 0; i < d->n_maps; i++)
		free(d->maps[i].name);
	free(d->maps);
	*d = (struct object_desc){0};
}

static const struct object_program *desc_program(const struct object_desc *d, const char *name)
{
	for (size_t i = 0; i < d->n_programs; i++)
		if (strcmp(d->programs[i].name, name) == 0)
			return &d->programs[i];
	fail_msg("no program %s", name);
	return NULL;
}

static const struct object_map *desc_map(const struct object_desc *d, const char *name)
{
	for (size_t i = 0; i < d->n_maps; i++)
		if (strcmp(d->maps[i].name, name) == 0)
			return &d->maps[i];
	fail_msg("no map %s", name);
	return NULL;
}

/* ---- call graphs of the test objects ---- */

static void test_counter(void **state)
{
	struct blob b = load_object("counter");
	struct elf_calls *c = calls_of(&b);
	const struct elf_entry *e;

	assert_int_equal(c->n_entries, 1);
	e = entry(c, "count_packets");
	assert_string_equal(e->section, "socket");
	assert_int_equal(e->n_helpers, 2);
	assert_int_equal(e->helpers[0], BPF_FUNC_map_lookup_elem);
	assert_int_equal(e->helpers[1], BPF_FUNC_map_update_elem);
	assert_int_equal(e->n_kfuncs, 0);
	assert_int_equal(e->insn_cnt, own_insns(&b, "count_packets"));

	elf_calls_free(c);
	blob_done(&b);
}

static void test_subprog_kernel(void **state)
{
	struct blob b = load_object("subprog_kernel");
	struct elf_calls *c = calls_of(&b);
	const struct elf_entry *e;

	/* The .text subprogram is not an entry of its own. */
	assert_int_equal(c->n_entries, 1);
	e = entry(c, "uses_subprog");
	assert_true(has_helper(e, BPF_FUNC_probe_read_kernel));
	assert_int_equal(e->n_helpers, 1);
	assert_true(e->insn_cnt > own_insns(&b, "uses_subprog"));

	elf_calls_free(c);
	blob_done(&b);
}

static void test_callback(void **state)
{
	struct blob b = load_object("callback");
	struct elf_calls *c = calls_of(&b);
	const struct elf_entry *e;

	assert_int_equal(c->n_entries, 1);
	e = entry(c, "loop_prog");
	assert_int_equal(e->n_helpers, 3);
	assert_true(has_helper(e, BPF_FUNC_loop));
	assert_true(has_helper(e, BPF_FUNC_get_prandom_u32));
	assert_true(has_helper(e, BPF_FUNC_ktime_get_ns));
	assert_sorted_unique(e);
	assert_true(e->insn_cnt > own_insns(&b, "loop_prog"));

	elf_calls_free(c);
	blob_done(&b);
}

static void test_multi(void **state)
{
	struct blob b = load_object("multi");
	struct elf_calls *c = calls_of(&b);
	const struct elf_entry *a, *bb, *cc;

	assert_int_equal(c->n_entries, 3);
	a = entry(c, "multi_a");
	bb = entry(c, "multi_b");
	cc = entry(c, "multi_c");
	assert_string_equal(a->section, "socket");
	assert_string_equal(bb->section, "socket");
	assert_string_equal(cc->section, "raw_tracepoint/sys_enter");

	/* multi_a -> middle -> deep -> get_prandom_u32, two levels into .text */
	assert_int_equal(a->n_helpers, 1);
	assert_true(has_helper(a, BPF_FUNC_get_prandom_u32));
	assert_true(a->insn_cnt > own_insns(&b, "multi_a"));

	assert_int_equal(bb->n_helpers, 1);
	assert_true(has_helper(bb, BPF_FUNC_ktime_get_ns));
	assert_false(has_helper(bb, BPF_FUNC_get_prandom_u32));
	assert_int_equal(bb->insn_cnt, own_insns(&b, "multi_b"));

	assert_int_equal(cc->n_helpers, 0);
	assert_int_equal(cc->insn_cnt, own_insns(&b, "multi_c"));

	elf_calls_free(c);
	blob_done(&b);
}

static void test_kfunc(void **state)
{
	struct blob b = load_object("kfunc");
	struct elf_calls *c = calls_of(&b);
	const struct elf_entry *e;

	assert_int_equal(c->n_entries, 1);
	e = entry(c, "kfunc_prog");
	assert_int_equal(e->n_kfuncs, 2);
	assert_true(has_kfunc(e, "bpf_rcu_read_lock"));
	assert_true(has_kfunc(e, "bpf_rcu_read_unlock"));
	assert_sorted_unique(e);
	/* A kfunc call is not a helper call. */
	assert_int_equal(e->n_helpers, 0);

	elf_calls_free(c);
	blob_done(&b);
}

static void test_simple_objects(void **state)
{
	static const struct {
		const char *object, *program, *section;
	} cases[] = {
		{"rawtp", "rawtp_count", "raw_tracepoint/sys_enter"},
		{"kprobe", "kprobe_count", "kprobe/do_nanosleep"},
		{"pinned", "pinned_prog", "socket"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct blob b = load_object(cases[i].object);
		struct elf_calls *c = calls_of(&b);
		const struct elf_entry *e;

		assert_int_equal(c->n_entries, 1);
		e = entry(c, cases[i].program);
		assert_string_equal(e->section, cases[i].section);
		assert_int_equal(e->n_helpers, 1);
		assert_int_equal(e->helpers[0], BPF_FUNC_map_lookup_elem);
		elf_calls_free(c);
		blob_done(&b);
	}
}

/* ---- libbpf objects ---- */

static int describe(const struct blob *b, const char *pin_root, struct object_desc *d)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = pin_root);
	struct bpf_object *obj;
	struct elf_calls *c = calls_of(b);
	char *error = NULL;
	int r;

	obj = bpf_object__open_mem(b->data, b->len, &opts);
	assert_non_null(obj);
	{
		struct object_handles h = {};

		r = inspect_object(obj, c, b->len, d, &h, &error);
		if (r == 0)
			for (size_t i = 0; i < d->n_maps; i++)
				assert_string_equal(bpf_map__name(h.maps[i]), d->maps[i].name);
		object_handles_done(&h);
	}
	if (r < 0)
		fail_msg("inspect_object: %d (%s)", r, error ? error : "no message");
	assert_null(error);
	bpf_object__close(obj);
	elf_calls_free(c);
	return r;
}

static void test_object_configurable(void **state)
{
	struct blob b = load_object("configurable");
	struct object_desc d = {0};
	const struct object_program *p;
	const struct object_map *m;

	assert_int_equal(describe(&b, "/nonexistent", &d), 0);
	assert_int_equal(d.object_bytes, b.len);
	assert_int_equal(d.n_programs, 2);

	p = desc_program(&d, "cfg_prog");
	assert_int_equal(p->prog_type, BPF_PROG_TYPE_SOCKET_FILTER);
	assert_true(p->load);
	assert_int_equal(p->n_helpers, 1);
	assert_int_equal(p->helpers[0], BPF_FUNC_map_update_elem);
	assert_true(p->insn_cnt > 0);

	/* A section libbpf doesn't know: no type until the client sets one. */
	p = desc_program(&d, "custom_prog");
	assert_int_equal(p->prog_type, BPF_PROG_TYPE_UNSPEC);
	assert_true(p->load);
	assert_int_equal(p->n_helpers, 0);

	m = desc_map(&d, "sized_later");
	assert_int_equal(m->map_type, BPF_MAP_TYPE_ARRAY);
	assert_int_equal(m->max_entries, 0);
	assert_int_equal(m->key_size, 4);
	assert_int_equal(m->value_size, 8);
	assert_false(m->pinned);
	/* .rodata, .data and .bss become maps as well, named after the object. */
	assert_int_equal(d.n_maps, 4);

	desc_done(&d);
	blob_done(&b);
}

static void test_object_autoload_and_type(void **state)
{
	struct blob b = load_object("configurable");
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = "/nonexistent");
	struct elf_calls *c = calls_of(&b);
	struct object_desc d = {0};
	struct object_handles h = {};
	struct bpf_object *obj;
	char *error = NULL;

	/* What a client configures between open and inspection must show. */
	obj = bpf_object__open_mem(b.data, b.len, &opts);
	assert_non_null(obj);
	assert_int_equal(
		bpf_program__set_autoload(bpf_object__find_program_by_name(obj, "cfg_prog"), false),
		0);
	assert_int_equal(bpf_program__set_type(bpf_object__find_program_by_name(obj, "custom_prog"),
					       BPF_PROG_TYPE_SOCKET_FILTER),
			 0);
	assert_int_equal(
		bpf_map__set_max_entries(bpf_object__find_map_by_name(obj, "sized_later"), 3), 0);
	assert_int_equal(inspect_object(obj, c, b.len, &d, &h, &error), 0);
	object_handles_done(&h);
	assert_false(desc_program(&d, "cfg_prog")->load);
	assert_int_equal(desc_program(&d, "custom_prog")->prog_type, BPF_PROG_TYPE_SOCKET_FILTER);
	assert_int_equal(desc_map(&d, "sized_later")->max_entries, 3);

	desc_done(&d);
	bpf_object__close(obj);
	elf_calls_free(c);
	blob_done(&b);
}

static void test_object_pinned(void **state)
{
	struct blob b = load_object("pinned");
	struct object_desc d = {0};
	const struct object_map *m;

	assert_int_equal(describe(&b, "/nonexistent", &d), 0);
	m = desc_map(&d, "shared_pin");
	assert_true(m->pinned);
	assert_int_equal(m->max_entries, 1);
	desc_done(&d);
	blob_done(&b);

	b = load_object("counter");
	assert_int_equal(describe(&b, "/nonexistent", &d), 0);
	assert_int_equal(d.n_maps, 4);
	for (size_t i = 0; i < d.n_maps; i++)
		assert_false(d.maps[i].pinned);
	assert_int_equal(desc_map(&d, "events_wo")->map_type, BPF_MAP_TYPE_HASH);
	assert_int_equal(desc_map(&d, "events_wo")->max_entries, 16);
	assert_int_equal(desc_map(&d, "counts")->max_entries, 4);
	desc_done(&d);
	blob_done(&b);
}

static void test_object_kfunc(void **state)
{
	struct blob b = load_object("kfunc");
	struct object_desc d = {0};
	const struct object_program *p;

	assert_int_equal(describe(&b, NULL, &d), 0);
	p = desc_program(&d, "kfunc_prog");
	assert_int_equal(p->prog_type, BPF_PROG_TYPE_TRACING);
	assert_int_equal(p->attach_type, BPF_TRACE_RAW_TP);
	assert_int_equal(p->n_kfuncs, 2);
	assert_string_equal(p->kfuncs[0], "bpf_rcu_read_lock");
	assert_string_equal(p->kfuncs[1], "bpf_rcu_read_unlock");
	desc_done(&d);
	blob_done(&b);
}

/* A program libbpf knows but the call graph lacks is an error, and nothing is written. */
static void test_object_missing_program(void **state)
{
	struct blob multi = load_object("multi"), counter = load_object("counter");
	struct elf_calls *c = calls_of(&counter);
	struct object_desc d = {.n_programs = 12345};
	struct object_handles h = {};
	struct bpf_object *obj;
	char *error = NULL;

	obj = bpf_object__open_mem(multi.data, multi.len, NULL);
	assert_non_null(obj);
	assert_int_equal(inspect_object(obj, c, multi.len, &d, &h, &error), -EBADMSG);
	assert_null(h.maps);
	assert_non_null(error);
	assert_non_null(strstr(error, "multi_"));
	assert_int_equal(d.n_programs, 12345);
	free(error);

	bpf_object__close(obj);
	elf_calls_free(c);
	blob_done(&multi);
	blob_done(&counter);
}

/* ---- final instructions ---- */

static void test_insns_summary(void **state)
{
	const struct bpf_insn insns[] = {
		{.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_ktime_get_ns},
		/* ld_imm64 whose second half looks like a helper call: data, not a call */
		{.code = BPF_LD | BPF_IMM | BPF_DW, .dst_reg = 1, .imm = 1},
		{.code = 0, .imm = BPF_FUNC_probe_read_kernel},
		{.code = BPF_JMP | BPF_CALL, .src_reg = BPF_PSEUDO_KFUNC_CALL, .imm = 1234},
		{.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem},
		{.code = BPF_JMP | BPF_CALL, .src_reg = BPF_PSEUDO_CALL, .imm = 2},
		{.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_ktime_get_ns},
		{.code = BPF_JMP | BPF_CALL, .src_reg = BPF_PSEUDO_KFUNC_CALL, .imm = 99},
		{.code = BPF_LD | BPF_IMM | BPF_DW,
		 .dst_reg = 1,
		 .src_reg = BPF_PSEUDO_BTF_ID,
		 .imm = 7},
		{.code = 0},
		{.code = BPF_LD | BPF_IMM | BPF_DW, .dst_reg = 1, .src_reg = BPF_PSEUDO_MAP_FD},
		{.code = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	struct insns_summary s = {};
	char *error = NULL;

	assert_int_equal(inspect_insns_summary(insns, ARRAY_SIZE(insns), &s, &error), 0);
	assert_null(error);
	assert_int_equal(s.n_helpers, 2);
	assert_int_equal(s.helpers[0], BPF_FUNC_map_lookup_elem);
	assert_int_equal(s.helpers[1], BPF_FUNC_ktime_get_ns);
	assert_int_equal(s.n_kfunc_calls, 2);
	assert_int_equal(s.n_kernel_refs, 1);
	assert_int_equal(s.n_map_refs, 1);
	insns_summary_done(&s);

	/* A trailing first half alone is malformed, and not read past. */
	assert_int_equal(inspect_insns_summary(insns, 2, &s, &error), -EBADMSG);
	assert_non_null(strstr(error, "second half"));
	free(error);
	error = NULL;

	assert_int_equal(inspect_insns_summary(NULL, 0, &s, &error), 0);
	assert_int_equal(s.n_helpers, 0);
	assert_int_equal(s.n_kfunc_calls, 0);
	insns_summary_done(&s);
}

/* Every encoding that could be read as a call, and every unusual field, is refused. */
static void test_insns_allow_list(void **state)
{
	static const struct bpf_insn refused[][2] = {
		{{.code = BPF_JMP32 | BPF_CALL, .imm = BPF_FUNC_probe_read_kernel}},
		{{.code = BPF_JMP | BPF_CALL | BPF_X, .imm = BPF_FUNC_probe_read_kernel}},
		{{.code = BPF_JMP32 | BPF_CALL | BPF_X}},
		{{.code = BPF_JMP32 | BPF_EXIT}},
		{{.code = BPF_JMP | BPF_JA | BPF_X}},
		{{.code = BPF_JMP | BPF_CALL, .src_reg = 7}},
		{{.code = BPF_JMP | BPF_CALL, .dst_reg = 1, .imm = BPF_FUNC_ktime_get_ns}},
		{{.code = BPF_JMP | BPF_CALL, .off = 1, .imm = BPF_FUNC_ktime_get_ns}},
		{{.code = BPF_LD | BPF_IMM | BPF_DW, .src_reg = 7}, {.code = 0}},
		{{.code = BPF_LD | BPF_IMM | BPF_DW, .off = 1}, {.code = 0}},
		{{.code = BPF_LD | BPF_IMM | BPF_DW}, {.code = 0, .src_reg = 1}},
		{{.code = BPF_LD | BPF_IMM | BPF_W}},
		{{.code = BPF_LDX | 0x20 /* BPF_PROBE_MEM, the kernel's own */ | BPF_DW}},
		{{.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 11}},
		{{.code = 0xff}},
	};

	for (size_t i = 0; i < ARRAY_SIZE(refused); i++) {
		struct insn_decoded d;
		char *error = NULL;

		assert_int_equal(insn_decode(refused[i], 2, 0, &d, &error), -EBADMSG);
		assert_non_null(error);
		free(error);
	}
}

/* ---- hostile input ---- */

/* Parse; it may fail but must say why, and must never crash or leak. */
static int parse_any(const void *data, size_t len)
{
	struct elf_calls *c = NULL;
	char *error = NULL;
	int r;

	r = inspect_elf_calls(data, len, &c, &error);
	if (r < 0) {
		assert_null(c);
		if (r != -ENOMEM)
			assert_non_null(error);
		free(error);
	} else {
		assert_int_equal(r, 0);
		assert_non_null(c);
		assert_null(error);
		elf_calls_free(c);
	}
	return r;
}

static int parse_expect_error(const struct blob *b, int err, const char *needle)
{
	struct elf_calls *c = NULL;
	char *error = NULL;
	int r;

	r = inspect_elf_calls(b->data, b->len, &c, &error);
	if (r != err || !error || !strstr(error, needle))
		fail_msg("expected %d with \"%s\", got %d (%s)", err, needle, r,
			 error ? error : "no message");
	assert_null(c);
	free(error);
	return r;
}

static void test_empty_and_random(void **state)
{
	uint8_t buf[4096];
	uint32_t seed = 12345;

	assert_int_equal(parse_any(NULL, 0), -EINVAL);
	assert_int_equal(parse_any(buf, 0), -EINVAL);
	for (int round = 0; round < 200; round++) {
		size_t len = 1 + (size_t)round * 20;

		for (size_t i = 0; i < len; i++) {
			seed = seed * 1103515245 + 12345;
			buf[i] = (uint8_t)(seed >> 16);
		}
		/* Half of the rounds with a valid-looking ELF identification. */
		if (round % 2 && len >= 20) {
			memcpy(buf, ELFMAG, SELFMAG);
			buf[EI_CLASS] = ELFCLASS64;
			buf[EI_DATA] = ELFDATA2LSB;
			buf[EI_VERSION] = EV_CURRENT;
			buf[18] = EM_BPF;
			buf[19] = 0;
		}
		assert_true(parse_any(buf, len) < 0);
	}
}

static void test_wrong_machine(void **state)
{
	struct blob b = load_object("counter");
	Elf64_Half *machine = (Elf64_Half *)(b.data + offsetof(Elf64_Ehdr, e_machine));

	*machine = EM_X86_64;
	parse_expect_error(&b, -EINVAL, "not a BPF object");
	blob_done(&b);
}

static void test_truncated(void **state)
{
	static const char *const objects[] = {"counter", "multi", "callback", "kfunc"};

	for (size_t i = 0; i < ARRAY_SIZE(objects); i++) {
		struct blob b = load_object(objects[i]);

		assert_true(parse_any(b.data, b.len / 2) < 0);
		blob_done(&b);
	}

	/* Every prefix of a small object. */
	struct blob b = load_object("kfunc");
	for (size_t len = 0; len < b.len; len++)
		parse_any(b.data, len);
	blob_done(&b);
}

static void test_byte_flips(void **state)
{
	static const uint8_t patterns[] = {0xff, 0x80, 0x01};
	struct blob b = load_object("multi");
	uint8_t *copy = malloc(b.len);
	size_t ok = 0, failed = 0;

	assert_non_null(copy);
	for (size_t p = 0; p < ARRAY_SIZE(patterns); p++)
		for (size_t off = 0; off < b.len; off++) {
			memcpy(copy, b.data, b.len);
			copy[off] ^= patterns[p];
			if (parse_any(copy, b.len) == 0)
				ok++;
			else
				failed++;
		}
	/* Most bytes are DWARF, BTF or padding and don't matter; some surely do. */
	assert_true(ok > 0);
	assert_true(failed > 0);
	free(copy);
	blob_done(&b);
}

/* Section header of name in b, in place (the tests may trust their own objects). */
static Elf64_Shdr *shdr(const struct blob *b, const char *name)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)b->data;
	Elf64_Shdr *sh = (Elf64_Shdr *)(b->data + eh->e_shoff);
	const char *names = (const char *)b->data + sh[eh->e_shstrndx].sh_offset;

	for (size_t i = 0; i < eh->e_shnum; i++)
		if (strcmp(names + sh[i].sh_name, name) == 0)
			return &sh[i];
	fail_msg("no section %s", name);
	return NULL;
}

static size_t shdr_index(const struct blob *b, const char *name)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)b->data;

	return (size_t)(shdr(b, name) - (Elf64_Shdr *)(b->data + eh->e_shoff));
}

static size_t sym_index(const struct blob *b, const char *name)
{
	const Elf64_Shdr *symtab = shdr(b, ".symtab");
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)b->data;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(b->data + eh->e_shoff);
	const Elf64_Sym *syms = (const Elf64_Sym *)(b->data + symtab->sh_offset);
	const char *names = (const char *)b->data + sh[symtab->sh_link].sh_offset;

	for (size_t i = 0; i < symtab->sh_size / sizeof(*syms); i++)
		if (strcmp(names + syms[i].st_name, name) == 0)
			return i;
	fail_msg("no symbol %s", name);
	return 0;
}

static Elf64_Rel *rel_at(const struct blob *b, const char *rel_sec, size_t idx)
{
	const Elf64_Shdr *sh = shdr(b, rel_sec);

	assert_true((idx + 1) * sizeof(Elf64_Rel) <= sh->sh_size);
	return (Elf64_Rel *)(b->data + sh->sh_offset + idx * sizeof(Elf64_Rel));
}

static struct bpf_insn *insn_at(const struct blob *b, const char *sec, size_t idx)
{
	const Elf64_Shdr *sh = shdr(b, sec);

	assert_true((idx + 1) * sizeof(struct bpf_insn) <= sh->sh_size);
	return (struct bpf_insn *)(b->data + sh->sh_offset + idx * sizeof(struct bpf_insn));
}

/*
 * multi.bpf.o as compiled: socket holds multi_a (a call into .text through
 * the section symbol, relocation 0 of .relsocket) and multi_b; .text holds
 * deep, then middle, which calls deep through relocation 0 of .rel.text.
 */
static void test_crafted_relocations(void **state)
{
	struct blob b;
	Elf64_Rel *rel;
	struct bpf_insn *insn;

	b = load_object("multi");
	rel_at(&b, ".relsocket", 0)->r_offset = 1u << 20;
	parse_expect_error(&b, -EBADMSG,
			   "relocation 0 in .relsocket points outside section socket");
	blob_done(&b);

	b = load_object("multi");
	rel_at(&b, ".relsocket", 0)->r_offset = 3;
	parse_expect_error(&b, -EBADMSG, "points outside section socket");
	blob_done(&b);

	b = load_object("multi");
	rel = rel_at(&b, ".relsocket", 0);
	rel->r_info = ELF64_R_INFO(100000, ELF64_R_TYPE(rel->r_info));
	parse_expect_error(&b, -EBADMSG, "does not exist");
	blob_done(&b);

	/* multi_a's call aimed one instruction into a function. */
	b = load_object("multi");
	rel = rel_at(&b, ".relsocket", 0);
	insn = insn_at(&b, "socket", rel->r_offset / sizeof(*insn));
	assert_int_equal(insn->code, BPF_JMP | BPF_CALL);
	insn->imm += 1;
	parse_expect_error(&b, -EBADMSG, "does not start a function");
	blob_done(&b);

	/* A relocation on an instruction that neither calls nor loads. */
	b = load_object("multi");
	rel_at(&b, ".rel.text", 0)->r_offset = 0;
	parse_expect_error(&b, -EBADMSG, "neither a call nor");
	blob_done(&b);

	/* Two relocations on one instruction: .rel.text retargeted at socket, same entry. */
	b = load_object("multi");
	*rel_at(&b, ".rel.text", 0) = *rel_at(&b, ".relsocket", 0);
	shdr(&b, ".rel.text")->sh_info = (Elf64_Word)shdr_index(&b, "socket");
	parse_expect_error(&b, -EBADMSG, "more than one relocation");
	blob_done(&b);

	/* A call relocated against something outside .text (here: a map). */
	b = load_object("counter");
	rel = rel_at(&b, ".relsocket", 0);
	insn = insn_at(&b, "socket", rel->r_offset / sizeof(*insn));
	assert_int_equal(insn->code, BPF_LD | BPF_IMM | BPF_DW);
	insn->code = BPF_JMP | BPF_CALL;
	insn->src_reg = BPF_PSEUDO_CALL;
	insn->dst_reg = 0;
	parse_expect_error(&b, -EBADMSG,
			   "call against config_map, but the object has no code in .text");
	blob_done(&b);

	/* A relocated map load written as a map reference already: only plain loads. */
	b = load_object("counter");
	rel = rel_at(&b, ".relsocket", 0);
	insn = insn_at(&b, "socket", rel->r_offset / sizeof(*insn));
	assert_int_equal(insn->code, BPF_LD | BPF_IMM | BPF_DW);
	insn->src_reg = BPF_PSEUDO_MAP_FD;
	parse_expect_error(&b, -EBADMSG, "a relocated 64-bit load must be a plain one");
	blob_done(&b);

	/* A relocation on a 64-bit load's second half, which is data. */
	b = load_object("counter");
	rel = rel_at(&b, ".relsocket", 0);
	rel->r_offset += sizeof(*insn);
	parse_expect_error(&b, -EBADMSG, "which is neither a call nor a 64-bit load");
	blob_done(&b);

	/* A call relocated against a program in another section. */
	b = load_object("multi");
	rel = rel_at(&b, ".relsocket", 0);
	rel->r_info = ELF64_R_INFO(sym_index(&b, "multi_c"), ELF64_R_TYPE(rel->r_info));
	parse_expect_error(&b, -EBADMSG,
			   "call against multi_c in section raw_tracepoint/sys_enter, not .text");
	blob_done(&b);

	/* An unrelocated kfunc call has no name to judge. */
	b = load_object("multi");
	insn = insn_at(&b, "socket", 4); /* multi_b: call bpf_ktime_get_ns */
	assert_int_equal(insn->code, BPF_JMP | BPF_CALL);
	insn->src_reg = BPF_PSEUDO_KFUNC_CALL;
	parse_expect_error(&b, -EBADMSG,
			   "kfunc call at instruction 4 of section socket has no relocation");
	blob_done(&b);

	/*
	 * Relocation sections libbpf ignores by name are ignored here too: named
	 * .rel.BTF.ext, .relsocket no longer relocates multi_a's call, which then
	 * reads as pc-relative and lands inside middle.
	 */
	b = load_object("multi");
	shdr(&b, ".relsocket")->sh_name = shdr(&b, ".rel.BTF.ext")->sh_name;
	parse_expect_error(&b, -EBADMSG, "does not start a function");
	blob_done(&b);
}

/* middle calling itself instead of deep: the walk must end, and deep becomes unreachable. */
static void test_cycle(void **state)
{
	struct blob b = load_object("multi");
	Elf64_Rel *rel = rel_at(&b, ".rel.text", 0);
	struct bpf_insn *call = insn_at(&b, ".text", rel->r_offset / sizeof(struct bpf_insn));
	struct elf_calls *c;
	const struct elf_entry *a;

	/* The relocation is against deep (instruction 0); middle starts at the call. */
	assert_int_equal(call->code, BPF_JMP | BPF_CALL);
	assert_int_equal(call->imm, -1);
	call->imm = (int32_t)(rel->r_offset / sizeof(struct bpf_insn)) - 1;
	c = calls_of(&b);
	a = entry(c, "multi_a");
	assert_int_equal(a->n_helpers, 0);
	assert_true(a->insn_cnt > own_insns(&b, "multi_a"));
	elf_calls_free(c);
	blob_done(&b);
}

/* A same-section call without relocation is pc-relative, as libbpf reads it. */
static void test_unrelocated_call(void **state)
{
	struct blob b = load_object("multi");
	size_t at = rel_at(&b, ".rel.text", 0)->r_offset / sizeof(struct bpf_insn);
	struct elf_calls *c;

	insn_at(&b, ".text", at)->imm = -(int32_t)at - 1; /* middle -> deep at 0 */
	shdr(&b, ".rel.text")->sh_size = 0;
	c = calls_of(&b);
	assert_true(has_helper(entry(c, "multi_a"), BPF_FUNC_get_prandom_u32));
	elf_calls_free(c);
	blob_done(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counter),
		cmocka_unit_test(test_subprog_kernel),
		cmocka_unit_test(test_callback),
		cmocka_unit_test(test_multi),
		cmocka_unit_test(test_kfunc),
		cmocka_unit_test(test_simple_objects),
		cmocka_unit_test(test_object_configurable),
		cmocka_unit_test(test_object_autoload_and_type),
		cmocka_unit_test(test_object_pinned),
		cmocka_unit_test(test_object_kfunc),
		cmocka_unit_test(test_object_missing_program),
		cmocka_unit_test(test_insns_summary),
		cmocka_unit_test(test_insns_allow_list),
		cmocka_unit_test(test_empty_and_random),
		cmocka_unit_test(test_wrong_machine),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_byte_flips),
		cmocka_unit_test(test_crafted_relocations),
		cmocka_unit_test(test_cycle),
		cmocka_unit_test(test_unrelocated_call),
	};

	/* libbpf warns on stderr about the objects it is shown; the tests check the results. */
	libbpf_set_print(NULL);
	elf_version(EV_CURRENT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
