/* SPDX-License-Identifier: MIT */
/*
 * Issue 18, items 1 and 3: objects load through the broker as they load with
 * libbpf as root, and every failure names its cause.
 *
 *  - libbpf 1.1.2 walks kernel modules' BTF (BPF_BTF_GET_NEXT_ID, which
 *    needs CAP_SYS_ADMIN) when vmlinux has no match: a CO-RE probe for a
 *    type no kernel has, a ksym or an attach target no kernel has. The
 *    worker loads with less, and must still end as root's load does.
 *  - A failure's message is the cause libbpf printed (which map, which
 *    extern, which program the verifier refused), not "failed to load
 *    object", says "the kernel refused" only for the kernel's refusals, and
 *    the audit record says the same; libbpf's whole log comes on request.
 *
 * Each case runs as a real unprivileged uid, and is compared with a direct
 * libbpf load of the same object as root in the test process.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "client/libbpfbroker.h"
#include "harness.h"
#include "harness_client.h"

#define UID_ALL 4601 /* socket filters and tracing, base, read_kernel_memory, kfunc, maps rw */

static const struct user all = {UID_ALL, UID_ALL};
static char daemon_log[400];

/* ---- the same object loaded directly with libbpf, as root ---- */

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

/* 0 or libbpf's negative errno, for a load of object as root. */
static int root_load(const char *object)
{
	libbpf_print_fn_t old = libbpf_set_print(quiet);
	struct bpf_object *obj = bpf_object__open_file(harness_object(object), NULL);
	int k = obj ? bpf_object__load(obj) : -errno;

	bpf_object__close(obj);
	libbpf_set_print(old);
	return k;
}

/* ---- through the broker, as the unprivileged uid ---- */

struct expect {
	const char *object;
	int err; /* 0: loads */
	const char *needles[3]; /* in the message */
	bool libbpf_log; /* ask for libbpf's log */
	const char *log_needle; /* in the libbpf log, if asked for */
	const char *code; /* NULL: "load-failed" */
};

static int client_load(void *arg)
{
	const struct expect *x = arg;
	struct bpfbroker_load_opts opts = {.sz = sizeof(opts), .libbpf_log = x->libbpf_log};
	struct bpfbroker_result *res;
	struct bpfbroker_error *err;
	int k = harness_load(x->object, &opts, &res, &err);

	if (x->err == 0) {
		CHECK(k == 0, "%s: refused: %s", x->object, err ? err->message : strerror(-k));
		bpfbroker_result_free(res);
		return 0;
	}
	CHECK(k == -x->err && err, "%s: %d (%s), expected -%d", x->object, k,
	      err ? err->message : "no error reply", x->err);
	CHECK(strcmp(err->code, x->code ?: "load-failed") == 0, "%s: code %s", x->object,
	      err->code);
	CHECK(!strstr(err->message, "failed to load object"), "%s: says only \"%s\"", x->object,
	      err->message);
	for (size_t i = 0; i < 3 && x->needles[i]; i++)
		CHECK(strstr(err->message, x->needles[i]), "%s: message \"%s\" lacks \"%s\"",
		      x->object, err->message, x->needles[i]);
	if (x->libbpf_log) {
		CHECK(err->libbpf_log && strstr(err->libbpf_log, x->log_needle),
		      "%s: libbpf log lacks \"%s\": %s", x->object, x->log_needle,
		      err->libbpf_log ?: "(none)");
		CHECK(!strstr(err->libbpf_log, "0xffff"), "%s: kernel address in the log: %s",
		      x->object, err->libbpf_log);
	} else {
		CHECK(!err->libbpf_log, "%s: libbpf log not asked for, given: %s", x->object,
		      err->libbpf_log);
	}
	bpfbroker_error_free(err);
	return 0;
}

static void run(const struct expect *x)
{
	assert_int_equal(root_load(x->object), -x->err);
	assert_int_equal(harness_as_user(&all, client_load, (void *)x), 0);
}

/* Does the daemon's log hold an audit record of uid's with every word? (It may come late.) */
static bool audited(const char *a, const char *b)
{
	char uid[32], line[4096];

	snprintf(uid, sizeof(uid), " uid=%u ", UID_ALL);
	for (int tries = 0; tries < 50; tries++) {
		FILE *f = fopen(daemon_log, "re");
		bool found = false;

		while (f && !found && fgets(line, sizeof(line), f))
			found = strstr(line, "audit: event=load ") && strstr(line, uid) &&
				strstr(line, a) && strstr(line, b);
		if (f)
			fclose(f);
		if (found)
			return true;
		usleep(20000);
	}
	return false;
}

/* ---- item 1: libbpf's walk of modules' BTF ---- */

/* bpf_core_type_exists(struct causes_nope): no kernel has it; the answer is used. */
static void test_core_probe_for_missing_type(void **state)
{
	run(&(struct expect){"causes_probe", 0});
}

/* A weak __ksym no kernel has: resolved to 0, checked, loads. */
static void test_weak_ksym_missing(void **state)
{
	run(&(struct expect){"causes_weak", 0});
}

/* A strong __ksym no kernel has: libbpf 1.1.2 refuses with EINVAL, naming the symbol. */
static void test_strong_ksym_missing(void **state)
{
	run(&(struct expect){"causes_ksym",
			     EINVAL,
			     {"libbpf could not", "causes_no_such_var", "not found in kernel"}});
	assert_true(audited("reason=", "causes_no_such_var"));
}

static void test_strong_kfunc_missing(void **state)
{
	run(&(struct expect){"causes_kfunc",
			     EINVAL,
			     {"libbpf could not", "causes_no_such_kfunc", "not found in kernel"}});
}

/* An attach target no kernel has (as a module's, not loaded): ESRCH, as for root. */
static void test_attach_target_missing(void **state)
{
	run(&(struct expect){"causes_fentry",
			     ESRCH,
			     {"libbpf could not", "causes_no_such_func"},
			     true,
			     "failed to find kernel BTF type ID of 'causes_no_such_func'"});
}

/* ---- item 3: the cause, named ---- */

/* The kernel refuses the map (an array's key is 4 bytes); libbpf retried without BTF first. */
static void test_map_the_kernel_refuses(void **state)
{
	run(&(struct expect){"causes_map",
			     EINVAL,
			     {"the kernel refused", "map 'causes_bad': failed to create"}});
	assert_true(audited("reason=", "map 'causes_bad': failed to create"));
}

/* A CO-RE field access that finds no field: the verifier refuses, the relocation named. */
static void test_core_relocation_that_fails(void **state)
{
	run(&(struct expect){"causes_core",
			     EINVAL,
			     {"the kernel's verifier refused program 'read_missing_field'",
			      "failed to resolve CO-RE relocation",
			      "__sk_buff___causes.causes_nope"}});
}

/* A verifier rejection: its line, and the log as before; the libbpf log on request. */
static void test_verifier_rejection(void **state)
{
	run(&(struct expect){"reject",
			     EACCES,
			     {"the kernel's verifier refused program 'reject_me'",
			      "invalid mem access 'map_value_or_null'"},
			     true,
			     "prog 'reject_me': BPF program load failed"});
	run(&(struct expect){
		"reject", EACCES, {"the kernel's verifier refused program 'reject_me'"}});
}

/* An object libbpf will not open: libbpf's own refusal, its line, its log on request. */
static void test_object_libbpf_refuses_to_open(void **state)
{
	run(&(struct expect){
		"causes_legacy",
		EOPNOTSUPP,
		{"libbpf could not open the object", "legacy map definitions in 'maps' section"},
		true,
		"legacy map definitions",
		"bad-object"});
}

/* What bpfctl (as the uid) writes to stderr for a load of object, with extra first. */
static int bpfctl_stderr(const char *extra, const char *object, char *buf, size_t size)
{
	char path[512];
	int fd, saved, k;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/bpfctl.stderr", H.dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	dup2(fd, STDERR_FILENO);
	k = extra ? harness_ctl(&all, extra, "load", "--name", "causes", harness_object(object),
				NULL)
		  : harness_ctl(&all, "load", "--name", "causes", harness_object(object), NULL);
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = pread(fd, buf, size - 1, 0);
	close(fd);
	unlink(path);
	buf[n > 0 ? n : 0] = '\0';
	return k;
}

/* bpfctl --libbpf-log prints the log after the error; without it, only the error. */
static void test_bpfctl_libbpf_log(void **state)
{
	static char out[16384];

	assert_int_equal(bpfctl_stderr("--libbpf-log", "causes_map", out, sizeof(out)), 2);
	assert_non_null(
		strstr(out, "bpfctl: the kernel refused: map 'causes_bad': failed to create"));
	assert_non_null(strstr(out, "--- libbpf log ---\nlibbpf: Error in bpf_create_map_xattr"));
	assert_int_equal(bpfctl_stderr(NULL, "causes_map", out, sizeof(out)), 2);
	assert_non_null(strstr(out, "map 'causes_bad'"));
	assert_null(strstr(out, "libbpf log"));
}

static int setup(void **state)
{
	char policy[1024];

	if (harness_init() < 0)
		return -1;
	snprintf(policy, sizeof(policy),
		 "{\"rules\": [{\"match\": {\"uids\": [\"%d\"]}, \"allow\": {"
		 "\"program_types\": [\"socket_filter\", \"tracing\"], "
		 "\"helper_classes\": [\"base\", \"read_kernel_memory\", \"kfunc\"], "
		 "\"maps\": [{\"name\": \"*\", \"access\": \"rw\"}]}}]}",
		 UID_ALL);
	snprintf(daemon_log, sizeof(daemon_log), "%s/daemon.log", H.dir);
	H.daemon_log = daemon_log;
	return harness_start_with_policy(policy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_core_probe_for_missing_type),
		cmocka_unit_test(test_weak_ksym_missing),
		cmocka_unit_test(test_strong_ksym_missing),
		cmocka_unit_test(test_strong_kfunc_missing),
		cmocka_unit_test(test_attach_target_missing),
		cmocka_unit_test(test_map_the_kernel_refuses),
		cmocka_unit_test(test_core_relocation_that_fails),
		cmocka_unit_test(test_verifier_rejection),
		cmocka_unit_test(test_object_libbpf_refuses_to_open),
		cmocka_unit_test(test_bpfctl_libbpf_log),
	};

	return cmocka_run_group_tests(tests, setup, harness_group_teardown);
}
