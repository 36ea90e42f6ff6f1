/* SPDX-License-Identifier: MIT */
/*
 * How much of a client's object the worker reads for a user with digest grants, as real
 * unprivileged uids against the real daemon: up to the largest max_object_bytes of the user's
 * own grant and the digests' (inline or a manifest's), never the hard ceiling; an object
 * larger than all of them refused as without the grants, unread or read no further than the
 * bound; a granted object over the ordinary limit still loads.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "client/libbpfbroker.h"
#include "common/macro.h"
#include "common/sha256.h"
#include "harness.h"
#include "harness_client.h"

#define UID_DIGESTS 4521 /* socket filters ordinarily (1 MiB), and two digests granted */
#define UID_PLAIN 4522 /* the same ordinary grant, no digests */
#define UID_INLINE 4523 /* the same, and only the inline digest grant */

/* The inline digest grant's limit, and the manifest's: the larger is the read bound. */
#define INLINE_LIMIT (2u << 20)
#define MANIFEST_LIMIT (3u << 20)
#define ORDINARY_LIMIT (1u << 20)

static const struct user digests = {UID_DIGESTS, UID_DIGESTS};
static const struct user plain = {UID_PLAIN, UID_PLAIN};
static const struct user inline_only = {UID_INLINE, UID_INLINE};

/* The egress object padded to 2.5 MiB (granted by digest); zeros: 4 MiB, and 2.5 MiB. */
static char padded[300], huge[300], unmatched[300];

/* A file of size bytes: from's (if set), then zeros; root's, 0644; its digest if asked. */
static int make_file(const char *path, const char *from, size_t size, char digest[80])
{
	_cleanup_close_ int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	char *buf = calloc(1, size), hex[SHA256_HEX_SIZE];
	int k = 0;

	if (fd < 0 || !buf) {
		free(buf);
		return -1;
	}
	if (from) {
		_cleanup_close_ int in = open(from, O_RDONLY | O_CLOEXEC);

		if (in < 0 || read(in, buf, size) <= 0)
			k = -1;
	}
	if (k == 0 && (write(fd, buf, size) != (ssize_t)size || fchmod(fd, 0644) < 0))
		k = -1;
	if (k == 0 && digest) {
		k = sha256_hex(buf, size, hex);
		snprintf(digest, 80, "sha256:%s", hex);
	}
	free(buf);
	return k;
}

/* Load the object fd; the refusal (code, EFBIG, key max_object_bytes) and its message. */
static int load_refused(int fd, const char *message)
{
	struct bpfbroker_load_opts o = {.sz = sizeof(o)};
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	struct bpfbroker *b;
	int k;

	CHECK(fd >= 0, "object fd: %m");
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	k = bpfbroker_load_fd(b, fd, &o, &r, &e);
	bpfbroker_close(b);
	close(fd);
	CHECK(k < 0 && e && strcmp(e->code, "policy-denied") == 0 && e->err == EFBIG &&
		      harness_denial_has_key(e, "max_object_bytes"),
	      "expected policy-denied, EFBIG, max_object_bytes: %d %s %d: %s", k, e ? e->code : "",
	      e ? e->err : 0, e ? e->message : "");
	CHECK(strstr(e->message, message), "expected \"%s\" in: %s", message, e->message);
	fprintf(stderr, "refused as expected: %s\n", e->message);
	bpfbroker_error_free(e);
	return 0;
}

static int load_path_refused(void *arg)
{
	const char *const *a = arg;

	return load_refused(open(a[0], O_RDONLY | O_CLOEXEC), a[1]);
}

/* As the client library sends an object: a memfd sealed, which the worker maps. */
static int load_sealed_refused(void *arg)
{
	const char *message = arg;
	int fd = memfd_create("huge", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	CHECK(fd >= 0 && ftruncate(fd, 4 << 20) == 0 &&
		      fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW) == 0,
	      "sealed memfd: %m");
	return load_refused(fd, message);
}

/* The events of an inotify fd that watches for reads of one file: how many there were. */
static int reads_seen(int ifd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int n = 0;
	ssize_t len;

	while ((len = read(ifd, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + len;
		     p += sizeof(struct inotify_event) + ((struct inotify_event *)p)->len)
			n++;
	return n;
}

/*
 * 4 MiB, larger than every grant of either user: the same refusal for both, and for the
 * user with digests the file is not read at all (its size says it is too large).
 */
static void test_larger_than_every_grant(void **state)
{
	const char *plain_args[] = {huge, "over your limit of 1048576 bytes"};
	const char *digest_args[] = {huge, "over your limit of 3145728 bytes"};
	_cleanup_close_ int ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	assert_true(ifd >= 0);
	assert_true(inotify_add_watch(ifd, huge, IN_ACCESS) >= 0);
	assert_int_equal(harness_as_user(&plain, load_path_refused, plain_args), 0);
	assert_int_equal(harness_as_user(&digests, load_path_refused, digest_args), 0);
	assert_int_equal(reads_seen(ifd), 0);
	assert_int_equal(harness_as_user(&digests, load_sealed_refused,
					 (void *)"object is 4194304 bytes, over your limit of "
						 "3145728 bytes"),
			 0);
}

/*
 * A file whose size says nothing (procfs: 0) and that holds more than the bound: the worker
 * reads one byte past the bound and stops, as the size it names shows.
 */
static void test_read_stops_at_bound(void **state)
{
	const char *plain_args[] = {"/proc/kallsyms", "object is 1048577 bytes"};
	const char *digest_args[] = {"/proc/kallsyms", "object is 3145729 bytes"};
	const char *inline_args[] = {"/proc/kallsyms", "object is 2097153 bytes"};
	_cleanup_close_ int fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	char buf[65536];
	size_t total = 0;
	struct stat st;
	ssize_t n;

	/* Readable by every user where the kernel does not hide it. */
	if (fd < 0 || stat("/proc/kallsyms", &st) < 0 || !(st.st_mode & S_IROTH)) {
		/* A skip counts as a pass: say so where nobody can miss it. */
		fprintf(stderr,
			"SKIPPED, NOT TESTED: /proc/kallsyms is not readable by users here (%s): "
			"the refusal of a path past the manifest limit went unobserved\n",
			fd < 0 ? strerror(errno) : "mode lacks S_IROTH");
		skip();
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += (size_t)n;
	if (total <= MANIFEST_LIMIT + 1) {
		fprintf(stderr,
			"SKIPPED, NOT TESTED: /proc/kallsyms is only %zu bytes: nothing to "
			"observe\n",
			total);
		skip();
	}
	assert_int_equal(harness_as_user(&plain, load_path_refused, plain_args), 0);
	assert_int_equal(harness_as_user(&digests, load_path_refused, digest_args), 0);
	assert_int_equal(harness_as_user(&inline_only, load_path_refused, inline_args), 0);
}

/* Under the bound, over the ordinary limit, no digest granted: the ordinary limit holds. */
static void test_unmatched_over_ordinary(void **state)
{
	const char *args[] = {unmatched, "over the limit of 1048576 bytes its grant has"};

	assert_int_equal(harness_as_user(&digests, load_path_refused, args), 0);
}

/* A granted object over the ordinary limit, under its manifest's: it loads, with its grants. */
static int load_padded(void *arg)
{
	struct bpfbroker_load_opts o = {.sz = sizeof(o)};
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	struct bpfbroker *b;
	int k;

	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	k = bpfbroker_load_file(b, padded, &o, &r, &e);
	bpfbroker_close(b);
	CHECK(k == 0 && r->allowed, "padded granted object: %d %s", k, e ? e->message : "");
	bpfbroker_result_free(r);
	return 0;
}

static void test_granted_over_ordinary(void **state)
{
	assert_int_equal(harness_as_user(&digests, load_padded, NULL), 0);
}

static int start(void)
{
	char objects_dir[300], path[400], policy[4096], manifest[1024], arg[400];
	char padded_digest[80], egress_digest[80];
	struct stat st;

	if (harness_init() < 0 || sha256_init() < 0)
		return -1;
	snprintf(objects_dir, sizeof(objects_dir), "%s/objects", H.dir);
	snprintf(padded, sizeof(padded), "%s/padded.bpf.o", H.dir);
	snprintf(huge, sizeof(huge), "%s/huge.bpf.o", H.dir);
	snprintf(unmatched, sizeof(unmatched), "%s/unmatched.bpf.o", H.dir);
	if (mkdir(objects_dir, 0755) < 0 ||
	    make_file(padded, harness_object("egress"), (5u << 20) / 2, padded_digest) < 0 ||
	    make_file(huge, NULL, 4u << 20, NULL) < 0 ||
	    make_file(unmatched, NULL, (5u << 20) / 2, NULL) < 0)
		return -1;
	/* The egress object's own bytes, granted inline with a 2 MiB limit. */
	snprintf(path, sizeof(path), "%s/egress.bpf.o", H.dir);
	if (stat(harness_object("egress"), &st) < 0 ||
	    make_file(path, harness_object("egress"), (size_t)st.st_size, egress_digest) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/big.json", objects_dir);
	snprintf(manifest, sizeof(manifest),
		 "{\"digest\": \"%s\", \"program_types\": [\"cgroup_skb\"],"
		 " \"helper_classes\": [\"base\"], \"limits\": {\"max_object_bytes\": %u}}",
		 padded_digest, MANIFEST_LIMIT);
	if (harness_write_file(path, manifest) < 0)
		return -1;
	snprintf(policy, sizeof(policy),
		 "{\"rules\": ["
		 " {\"match\": {\"uids\": [\"%d\", \"%d\", \"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		 "[\"base\"], \"maps\": [{\"name\": \"*\", \"access\": \"rw\"}]}},"
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"digests\": {\"%s\": \"big\"}}},"
		 " {\"match\": {\"uids\": [\"%d\", \"%d\"]},"
		 "  \"allow\": {\"digests\": {\"%s\": {\"program_types\": [\"cgroup_skb\"],"
		 "   \"helper_classes\": [\"base\"], \"limits\": {\"max_object_bytes\": %u}}}}}"
		 "]}",
		 UID_DIGESTS, UID_PLAIN, UID_INLINE, UID_DIGESTS, padded_digest, UID_DIGESTS,
		 UID_INLINE, egress_digest, INLINE_LIMIT);
	if (harness_write_policy("50-test.json", policy) < 0)
		return -1;
	harness_mark_kernel_objects();
	snprintf(arg, sizeof(arg), "--objects-dir=%s", objects_dir);
	return harness_start(arg);
}

static int setup(void **state)
{
	return start() < 0 ? harness_setup_failed() : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_larger_than_every_grant),
		cmocka_unit_test(test_read_stops_at_bound),
		cmocka_unit_test(test_unmatched_over_ordinary),
		cmocka_unit_test(test_granted_over_ordinary),
	};

	_Static_assert(ORDINARY_LIMIT < INLINE_LIMIT && INLINE_LIMIT < MANIFEST_LIMIT,
		       "the manifest's limit is the bound");
	return cmocka_run_group_tests(tests, setup, harness_group_teardown);
}
