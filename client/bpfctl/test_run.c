/* SPDX-License-Identifier: MIT */
/*
 * bpfctl test-run: run a program of a named object once (or --repeat times)
 * on input read from files, and print what it returned.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfctl.h"
#include "common/hex.h"
#include "common/macro.h"

/* Read all of path, at most max bytes. */
static int read_bounded(const char *path, size_t max, uint8_t **ret, size_t *ret_size)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	_cleanup_free_ uint8_t *buf = NULL;
	size_t size = 0;

	if (fd < 0)
		return negative_errno();
	buf = malloc(max + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read(fd, buf + size, max + 1 - size);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return negative_errno();
		if (n == 0)
			break;
		size += (size_t)n;
		if (size > max)
			return -EFBIG;
	}
	*ret = TAKE_PTR(buf);
	*ret_size = size;
	return 0;
}

static int read_input(const char *option, const char *path, size_t max, uint8_t **ret,
		      size_t *ret_size)
{
	int k = read_bounded(path, max, ret, ret_size);

	if (k == -EFBIG)
		fprintf(stderr, "bpfctl: %s %s: larger than %zu bytes, the most a test run takes\n",
			option, path, max);
	else if (k < 0)
		fprintf(stderr, "bpfctl: %s %s: %s\n", option, path, strerror(-k));
	return k;
}

int cmd_test_run(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	struct bpfbroker_test_run_opts o = {.sz = sizeof(o), .repeat = c->repeat};
	struct bpfbroker_test_run_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	_cleanup_free_ uint8_t *data = NULL, *ctx = NULL;
	_cleanup_free_ char *hex = NULL;
	char *ref, *prog;
	int k;

	if (split_ref(argv[0], "PROG", &ref, &prog) < 0)
		return EXIT_ERROR;
	o.object = ref;
	o.program = prog;
	if (c->data_in && read_input("--data-in", c->data_in, BPFBROKER_TEST_RUN_MAX_DATA, &data,
				     &o.data_in_size) < 0)
		return EXIT_ERROR;
	if (c->ctx_in &&
	    read_input("--ctx-in", c->ctx_in, BPFBROKER_TEST_RUN_MAX_CTX, &ctx, &o.ctx_in_size) < 0)
		return EXIT_ERROR;
	o.data_in = data;
	o.ctx_in = ctx;
	k = bpfbroker_test_run(b, &o, &r, &e);
	if (k < 0)
		return report_error(c, k, e, prog);
	hex = hex_encode(r->data_out, r->data_out_size);
	if (!hex) {
		bpfbroker_test_run_result_free(r);
		return die_errno(-ENOMEM, "test-run");
	}
	if (c->json)
		printf("{\"retval\":%" PRId64 ",\"duration_ns\":%" PRIu64 ",\"data_out\":\"%s\"}\n",
		       r->retval, r->duration_ns, hex);
	else
		printf("retval %" PRId64 "\nduration %" PRIu64 " ns\ndata_out %s\n", r->retval,
		       r->duration_ns, *hex ? hex : "(empty)");
	bpfbroker_test_run_result_free(r);
	return EXIT_SUCCESS;
}
