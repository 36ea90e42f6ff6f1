/* SPDX-License-Identifier: MIT */
/*
 * libbpf's log read for a failure's cause (daemon/worker/libbpflog.c), on lines
 * libbpf 1.1.2 really prints, and modules' BTF (daemon/worker/modbtf.c): the
 * worker's filter that hides it from libbpf, and the look-up that names
 * the module a message needs.
 */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemon/worker/libbpflog.h"
#include "daemon/worker/modbtf.h"

/* ---- the line classifier ---- */

static void test_classify(void **state)
{
	static const struct {
		const char *line;
		enum libbpflog_kind kind;
	} cases[] = {
		{"failed to load object 'causes_map'", LIBBPFLOG_NOISE},
		{"prog 'read_missing_field': failed to load: -22", LIBBPFLOG_NOISE},
		{"prog 'trace_missing': failed to prepare load attributes: -3", LIBBPFLOG_NOISE},
		{"failed to perform CO-RE relocations: -1", LIBBPFLOG_NOISE},
		{"prog 'p': relo #0: failed to relocate: -1", LIBBPFLOG_NOISE},
		{"BTF is mandatory, can't proceed.", LIBBPFLOG_NOISE},
		{"prog 'p': -- BEGIN PROG LOAD LOG --", LIBBPFLOG_NOISE},
		{"-- END PROG LOAD LOG --", LIBBPFLOG_NOISE},
		{"elf: skipping unrecognized data section(7) .rodata.str1.1", LIBBPFLOG_NOISE},
		{"Error in bpf_create_map_xattr(causes_bad):Invalid argument(-22). Retrying "
		 "without "
		 "BTF.",
		 LIBBPFLOG_SOFT},
		{"Error loading .BTF into kernel: -22. BTF is optional, ignoring.", LIBBPFLOG_SOFT},
		{"prog 'p': failed to bind map '.rodata': Operation not permitted", LIBBPFLOG_SOFT},
		{"prog 'reject_me': BPF program load failed: Permission denied", LIBBPFLOG_PROG},
		{"map 'causes_bad': failed to create: Invalid argument(-22)", LIBBPFLOG_KERNEL},
		{"map 'outer': failed to create inner map: -22", LIBBPFLOG_KERNEL},
		{"map 'jmp': failed to initialize slot [0] to prog 'p' fd=5: -1", LIBBPFLOG_KERNEL},
		{"Error setting initial map(obj.data) contents: Operation not permitted",
		 LIBBPFLOG_KERNEL},
		{"extern (var ksym) 'causes_no_such_var': not found in kernel BTF",
		 LIBBPFLOG_LIBBPF},
		{"extern (func ksym) 'causes_no_such_kfunc': not found in kernel or module BTFs",
		 LIBBPFLOG_LIBBPF},
		{"prog 'trace_missing': failed to find kernel BTF type ID of "
		 "'causes_no_such_func': "
		 "-3",
		 LIBBPFLOG_LIBBPF},
		{"elf: legacy map definitions in 'maps' section are not supported by libbpf v1.0+",
		 LIBBPFLOG_LIBBPF},
		{"failed to iterate BTF objects: -1", LIBBPFLOG_LIBBPF},
		{"prog 'p': relo #3: target candidate search failed for [5] struct nope: -1",
		 LIBBPFLOG_LIBBPF},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (libbpflog_classify(cases[i].line) != cases[i].kind)
			fail_msg("\"%s\": %d, expected %d", cases[i].line,
				 libbpflog_classify(cases[i].line), cases[i].kind);
	}
	assert_true(libbpflog_soft_is_kernel("Error in bpf_create_map_xattr(m):Invalid "
					     "argument(-22). Retrying without BTF."));
	assert_false(libbpflog_soft_is_kernel("Detection of kernel BTF support failed: -1"));
}

/* ---- the cause of whole logs, as libbpf 1.1.2 printed them here ---- */

static void expect_cause(const char *log, enum libbpflog_kind kind, bool kernel, const char *line,
			 const char *name)
{
	struct libbpflog_cause c = {};

	assert_true(libbpflog_cause(log, strlen(log), &c));
	assert_int_equal(c.kind, kind);
	assert_int_equal(c.kernel, kernel);
	assert_string_equal(c.line, line);
	assert_string_equal(c.name, name);
}

static void test_cause(void **state)
{
	struct libbpflog_cause c = {};

	/* Retried without BTF, then refused again: the final refusal. */
	expect_cause("libbpf: Error in bpf_create_map_xattr(causes_bad):Invalid argument(-22). "
		     "Retrying without BTF.\n"
		     "libbpf: map 'causes_bad': failed to create: Invalid argument(-22)\n"
		     "libbpf: failed to load object 'causes_map'\n",
		     LIBBPFLOG_KERNEL, true,
		     "map 'causes_bad': failed to create: Invalid argument(-22)", "causes_bad");
	expect_cause(
		"libbpf: extern (func ksym) 'causes_no_such_kfunc': not found in kernel or "
		"module BTFs\n"
		"libbpf: failed to load object 'causes_kfunc'\n",
		LIBBPFLOG_LIBBPF, false,
		"extern (func ksym) 'causes_no_such_kfunc': not found in kernel or module BTFs",
		"causes_no_such_kfunc");
	expect_cause("libbpf: prog 'trace_missing': failed to find kernel BTF type ID of "
		     "'causes_no_such_func': -3\n"
		     "libbpf: prog 'trace_missing': failed to prepare load attributes: -3\n"
		     "libbpf: prog 'trace_missing': failed to load: -3\n"
		     "libbpf: failed to load object 'causes_fentry'\n",
		     LIBBPFLOG_LIBBPF, false,
		     "prog 'trace_missing': failed to find kernel BTF type ID of "
		     "'causes_no_such_func': -3",
		     "trace_missing");
	expect_cause("libbpf: prog 'reject_me': BPF program load failed: Permission denied\n"
		     "libbpf: prog 'reject_me': failed to load: -13\n"
		     "libbpf: failed to load object 'reject'\n",
		     LIBBPFLOG_PROG, true,
		     "prog 'reject_me': BPF program load failed: Permission denied", "reject_me");
	/* The first error, not what it led to (libbpf 1.1.2 without the worker's filter). */
	expect_cause("libbpf: failed to iterate BTF objects: -1\n"
		     "libbpf: prog 'p': relo #0: target candidate search failed for [2] struct "
		     "nope: -1\n"
		     "libbpf: failed to perform CO-RE relocations: -1\n"
		     "libbpf: failed to load object 'obj'\n",
		     LIBBPFLOG_LIBBPF, false, "failed to iterate BTF objects: -1", "");
	/* Only a soft warning and wrappers: the warning is the cause. */
	expect_cause("libbpf: BTF loading error: -22\n"
		     "libbpf: -- BEGIN BTF LOAD LOG ---\n"
		     "[3] STRUCT x size=4 vlen=1 Invalid member\n"
		     "-- END BTF LOAD LOG --\n"
		     "libbpf: Error loading .BTF into kernel: -22. BTF is mandatory\n"
		     "libbpf: BTF is mandatory, can't proceed.\n"
		     "libbpf: failed to load object 'obj'\n",
		     LIBBPFLOG_KERNEL, true,
		     "Error loading .BTF into kernel: -22. BTF is mandatory", "");
	/* Nothing but wrappers, or nothing: no cause. */
	assert_false(libbpflog_cause("libbpf: failed to load object 'x'\n", 34, &c));
	assert_false(libbpflog_cause("", 0, &c));
	/* A line of the kernel's inside a log libbpf printed is not libbpf's. */
	assert_false(libbpflog_cause("map 'x': failed to create: y\n", 29, &c));
}

static void test_verifier_reason(void **state)
{
	static const char core[] =
		"0: R1=ctx() R10=fp0\n"
		"; return ((struct __sk_buff___causes *)skb)->causes_nope; @ causes_core.bpf.c:17\n"
		"0: <invalid CO-RE relocation>\n"
		"failed to resolve CO-RE relocation <byte_off> [19] struct "
		"__sk_buff___causes.causes_nope (0:0 @ offset 0)\n"
		"processed 1 insns (limit 1000000) max_states_per_insn 0 total_states 0 "
		"peak_states 0 mark_read 0\n";
	static const char cut[] = "0: (b7) r0 = 0\nR0 !read_ok\n";
	char buf[256];

	assert_true(libbpflog_verifier_reason(core, sizeof(core), buf, sizeof(buf)));
	assert_string_equal(buf, "failed to resolve CO-RE relocation <byte_off> [19] struct "
				 "__sk_buff___causes.causes_nope (0:0 @ offset 0)");
	/* No summary (cut short): the last line. */
	assert_true(libbpflog_verifier_reason(cut, sizeof(cut), buf, sizeof(buf)));
	assert_string_equal(buf, "R0 !read_ok");
	assert_false(libbpflog_verifier_reason("", 0, buf, sizeof(buf)));
	assert_false(libbpflog_verifier_reason("\n\n", 2, buf, sizeof(buf)));
}

/* ---- what is kept, and the sentence ---- */

static void print(enum libbpf_print_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	libbpflog_print(level, fmt, ap);
	va_end(ap);
}

static void test_kept_and_bounded(void **state)
{
	const char *text;
	size_t len;

	libbpflog_reset();
	print(LIBBPF_DEBUG, "libbpf: %s\n", "a debug line");
	print(LIBBPF_INFO, "libbpf: elf: skipping section(%d) %s\n", 3, ".comment");
	print(LIBBPF_WARN, "libbpf: map '%s': failed to create: %s(%d)\n", "m", "Invalid", -22);
	text = libbpflog_text(&len);
	assert_string_equal(text, "libbpf: elf: skipping section(3) .comment\n"
				  "libbpf: map 'm': failed to create: Invalid(-22)\n");
	assert_int_equal(len, strlen(text));
	/* Past the limit: cut, with a note at the end, and nothing more taken. */
	for (int i = 0; i < 4000; i++)
		print(LIBBPF_WARN, "libbpf: line %d of many, many lines\n", i);
	text = libbpflog_text(&len);
	assert_true(len <= LIBBPFLOG_MAX);
	assert_int_equal(len, strlen(text));
	assert_non_null(strstr(text, "log cut here"));
	assert_null(strstr(text, "line 3999 "));
	libbpflog_reset();
	assert_string_equal(libbpflog_text(&len), "");
}

static void expect_failure(const char *vlog, int err, const char *prog, const char *message)
{
	char buf[1024];

	libbpflog_failure(vlog, strlen(vlog), err, prog, buf, sizeof(buf));
	assert_string_equal(buf, message);
}

static void test_failure_sentence(void **state)
{
	libbpflog_reset();
	print(LIBBPF_WARN,
	      "libbpf: prog 'reject_me': BPF program load failed: Permission denied\n");
	print(LIBBPF_WARN, "libbpf: failed to load object 'reject'\n");
	expect_failure("7: (79) r0 = *(u64 *)(r0 +0)\nR0 invalid mem access 'map_value_or_null'\n"
		       "processed 7 insns (limit 1000000)\n",
		       -EACCES, NULL,
		       "the kernel's verifier refused program 'reject_me': R0 invalid mem access "
		       "'map_value_or_null'");
	expect_failure("", -EINVAL, NULL,
		       "the kernel refused program 'reject_me': Invalid argument");

	libbpflog_reset();
	print(LIBBPF_WARN, "libbpf: map 'm': failed to create: Invalid argument(-22)\n");
	expect_failure("", -EINVAL, NULL,
		       "the kernel refused: map 'm': failed to create: Invalid argument(-22)");

	libbpflog_reset();
	print(LIBBPF_WARN, "libbpf: extern (var ksym) 'causes_no_such_var': not found in kernel "
			   "BTF\n");
	expect_failure("", -EINVAL, NULL,
		       "libbpf could not load the object: extern (var ksym) 'causes_no_such_var': "
		       "not found in kernel BTF");

	/* Raw instructions: no libbpf, the one program. */
	libbpflog_reset();
	expect_failure("0: (b7) r0 = 0\nlast insn is not an exit or jmp\nprocessed 0 insns\n",
		       -EINVAL, "prog",
		       "the kernel's verifier refused program 'prog': last insn is not an exit or "
		       "jmp");
	expect_failure("", -E2BIG, NULL,
		       "libbpf could not load the object: Argument list too long");
}

/* ---- modules' BTF ---- */

static int write_raw_bytes(const char *path, const void *data, uint32_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ssize_t n = fd >= 0 && data ? write(fd, data, size) : -1;

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)size ? 0 : -1;
}

static int write_raw(const struct btf *btf, const char *path)
{
	uint32_t size;
	const void *data = btf__raw_data(btf, &size);

	return write_raw_bytes(path, data, size);
}

static void test_module_named(void **state)
{
	char dir[] = "/tmp/test_libbpflog.XXXXXX", path[128], module[64] = "";
	struct btf *base, *mod;
	int int_id;

	assert_non_null(mkdtemp(dir));
	base = btf__new_empty();
	assert_non_null(base);
	int_id = btf__add_int(base, "int", 4, BTF_INT_SIGNED);
	assert_true(int_id > 0);
	assert_int_equal(btf__add_struct(base, "vmlinux_type", 4), int_id + 1);
	assert_int_equal(btf__add_field(base, "x", int_id, 0, 0), 0);
	snprintf(path, sizeof(path), "%s/vmlinux", dir);
	assert_int_equal(write_raw(base, path), 0);
	mod = btf__new_empty_split(base);
	assert_non_null(mod);
	assert_true(btf__add_func_proto(mod, int_id) > 0);
	assert_true(btf__add_func(mod, "causes_mod_kfunc", BTF_FUNC_GLOBAL,
				  btf__type_cnt(mod) - 1) > 0);
	snprintf(path, sizeof(path), "%s/causes_mod", dir);
	assert_int_equal(write_raw(mod, path), 0);

	assert_int_equal(modbtf_find_in(dir, "causes_mod_kfunc", module, sizeof(module)), 0);
	assert_string_equal(module, "causes_mod");
	/* vmlinux's own types are not a module's. */
	assert_int_equal(modbtf_find_in(dir, "vmlinux_type", module, sizeof(module)), -ENOENT);
	assert_int_equal(modbtf_find_in(dir, "nowhere", module, sizeof(module)), -ENOENT);
	assert_true(modbtf_find_in("/nonexistent", "x", module, sizeof(module)) < 0);

	unlink(path);
	/* No module's BTF: nothing to find, and vmlinux's (here not BTF at all) is never read. */
	snprintf(path, sizeof(path), "%s/vmlinux", dir);
	assert_int_equal(write_raw_bytes(path, "not BTF", 7), 0);
	assert_int_equal(modbtf_find_in(dir, "causes_mod_kfunc", module, sizeof(module)), -ENOENT);
	unlink(path);
	rmdir(dir);
	btf__free(mod);
	btf__free(base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify),	 cmocka_unit_test(test_cause),
		cmocka_unit_test(test_verifier_reason),	 cmocka_unit_test(test_kept_and_bounded),
		cmocka_unit_test(test_failure_sentence), cmocka_unit_test(test_module_named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
