// SPDX-License-Identifier: MIT
/* Unit tests for policy/helpers.c: the helper id -> privilege class table. */
#include <linux/bpf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "policy/helpers.h"

struct uapi_helper {
	int id;
	const char *name;
};

/*
 * Expanded from the UAPI header independently of helpers.c, so the coverage
 * test checks the table against the header rather than against itself.
 * The mapper itself puts the comma after each FN(name).
 */
#define UAPI_HELPER(name)                                                                          \
	{                                                                                          \
		BPF_FUNC_##name, "bpf_" #name                                                      \
	}
static const struct uapi_helper uapi_helpers[] = {__BPF_FUNC_MAPPER(UAPI_HELPER)};
#undef UAPI_HELPER

#define N_UAPI_HELPERS (sizeof(uapi_helpers) / sizeof(uapi_helpers[0]))

/* Every helper of the header, except unspec, has an explicit, real class. */
static void test_every_uapi_helper_is_classified(void **state)
{
	int missing = 0;

	assert_int_equal(N_UAPI_HELPERS, __BPF_FUNC_MAX_ID);
	assert_int_equal(helper_max_id(), __BPF_FUNC_MAX_ID - 1);

	for (size_t i = 0; i < N_UAPI_HELPERS; i++) {
		const struct uapi_helper *h = &uapi_helpers[i];
		enum helper_class c;

		if (h->id == BPF_FUNC_unspec)
			continue;
		/* Report every gap at once, so a new header is fixed in one pass. */
		if (!helper_is_known(h->id)) {
			print_error("helper %s (id %d) has no class in policy/helpers.c\n", h->name,
				    h->id);
			missing++;
			continue;
		}
		c = helper_classify(h->id);
		/* unknown and kfunc are not classes a helper can be put in. */
		assert_int_not_equal(c, HELPER_CLASS_UNKNOWN);
		assert_int_not_equal(c, HELPER_CLASS_KFUNC);
		assert_true(c >= 0 && c < _HELPER_CLASS_MAX);
		assert_non_null(helper_name(h->id));
		assert_string_equal(helper_name(h->id), h->name);
	}
	assert_int_equal(missing, 0);
}

static void test_unspec_is_unknown(void **state)
{
	assert_false(helper_is_known(BPF_FUNC_unspec));
	assert_int_equal(helper_classify(BPF_FUNC_unspec), HELPER_CLASS_UNKNOWN);
}

static void test_specific_classes(void **state)
{
	assert_int_equal(helper_classify(BPF_FUNC_probe_read_kernel),
			 HELPER_CLASS_READ_KERNEL_MEMORY);
	assert_int_equal(helper_classify(BPF_FUNC_trace_printk), HELPER_CLASS_WRITE_GLOBAL_LOGS);
	assert_int_equal(helper_classify(BPF_FUNC_map_lookup_elem), HELPER_CLASS_BASE);
	assert_int_equal(helper_classify(BPF_FUNC_probe_write_user),
			 HELPER_CLASS_WRITE_USER_MEMORY);
	assert_int_equal(helper_classify(BPF_FUNC_send_signal), HELPER_CLASS_SIGNAL);
	assert_int_equal(helper_classify(BPF_FUNC_override_return), HELPER_CLASS_OVERRIDE_RETURN);

	/* A few a reviewer would check: kernel pointers and addresses are kernel reads. */
	assert_int_equal(helper_classify(BPF_FUNC_probe_read), HELPER_CLASS_READ_KERNEL_MEMORY);
	assert_int_equal(helper_classify(BPF_FUNC_get_current_task),
			 HELPER_CLASS_READ_KERNEL_MEMORY);
	assert_int_equal(helper_classify(BPF_FUNC_kallsyms_lookup_name),
			 HELPER_CLASS_READ_KERNEL_MEMORY);
	assert_int_equal(helper_classify(BPF_FUNC_snprintf), HELPER_CLASS_READ_KERNEL_MEMORY);
	assert_int_equal(helper_classify(BPF_FUNC_probe_read_user), HELPER_CLASS_READ_USER_MEMORY);
	assert_int_equal(helper_classify(BPF_FUNC_copy_from_user_task),
			 HELPER_CLASS_READ_USER_MEMORY);
	assert_int_equal(helper_classify(BPF_FUNC_trace_vprintk), HELPER_CLASS_WRITE_GLOBAL_LOGS);
	assert_int_equal(helper_classify(BPF_FUNC_send_signal_thread), HELPER_CLASS_SIGNAL);
	assert_int_equal(helper_classify(BPF_FUNC_loop), HELPER_CLASS_BASE);
	assert_int_equal(helper_classify(BPF_FUNC_get_current_pid_tgid), HELPER_CLASS_CURRENT_TASK);
	assert_int_equal(helper_classify(BPF_FUNC_redirect_map), HELPER_CLASS_REDIRECT);
	assert_int_equal(helper_classify(BPF_FUNC_sys_bpf), HELPER_CLASS_SYSCALL);

	assert_int_equal(helper_classify(100000), HELPER_CLASS_UNKNOWN);
	assert_int_equal(helper_classify(-1), HELPER_CLASS_UNKNOWN);
	assert_int_equal(helper_classify(__BPF_FUNC_MAX_ID), HELPER_CLASS_UNKNOWN);
	assert_false(helper_is_known(100000));
	assert_false(helper_is_known(-1));
}

static void test_class_string_round_trip(void **state)
{
	for (int c = 0; c < _HELPER_CLASS_MAX; c++) {
		const char *s = helper_class_to_string((enum helper_class)c);

		assert_non_null(s);
		assert_int_equal(helper_class_from_string(s), c);
	}
}

static void test_class_strings(void **state)
{
	/* Policy files spell these names; they must never change. */
	static const struct {
		enum helper_class c;
		const char *s;
	} fixed[] = {
		{HELPER_CLASS_BASE, "base"},
		{HELPER_CLASS_READ_KERNEL_MEMORY, "read_kernel_memory"},
		{HELPER_CLASS_READ_USER_MEMORY, "read_user_memory"},
		{HELPER_CLASS_WRITE_USER_MEMORY, "write_user_memory"},
		{HELPER_CLASS_WRITE_GLOBAL_LOGS, "write_global_logs"},
		{HELPER_CLASS_SIGNAL, "signal"},
		{HELPER_CLASS_OVERRIDE_RETURN, "override_return"},
		{HELPER_CLASS_KFUNC, "kfunc"},
		{HELPER_CLASS_UNKNOWN, "unknown"},
	};

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		assert_string_equal(helper_class_to_string(fixed[i].c), fixed[i].s);
		assert_int_equal(helper_class_from_string(fixed[i].s), fixed[i].c);
	}

	assert_null(helper_class_to_string(_HELPER_CLASS_MAX));
	assert_null(helper_class_to_string(_HELPER_CLASS_INVALID));
	assert_int_equal(helper_class_from_string("no_such_class"), -EINVAL);
	assert_int_equal(helper_class_from_string(""), -EINVAL);
	assert_int_equal(helper_class_from_string("Base"), -EINVAL);
	assert_int_equal(helper_class_from_string(NULL), -EINVAL);
}

static void test_names(void **state)
{
	assert_string_equal(helper_name(BPF_FUNC_probe_read_kernel), "bpf_probe_read_kernel");
	assert_string_equal(helper_name(BPF_FUNC_map_lookup_elem), "bpf_map_lookup_elem");
	assert_null(helper_name(-1));
	assert_null(helper_name(100000));
	assert_null(helper_name(__BPF_FUNC_MAX_ID));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_uapi_helper_is_classified),
		cmocka_unit_test(test_unspec_is_unknown),
		cmocka_unit_test(test_specific_classes),
		cmocka_unit_test(test_class_string_round_trip),
		cmocka_unit_test(test_class_strings),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
