/* SPDX-License-Identifier: MIT */
/* Method "test_run": BPF_PROG_TEST_RUN on the owner's program. */
#include "named_call.h"
#include "common/hex.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/shared/caps.h"
#include "denial.h"

/* The kernel's internal "not supported" (524), which BPF_PROG_TEST_RUN leaks to users. */
#ifndef ENOTSUPP
#define ENOTSUPP 524
#endif

/* Room for programs that grow the packet (bpf_xdp_adjust_tail and the like). */
#define TEST_RUN_DATA_OUT_SLACK 4096u

int named_test_run(struct call *c, struct reply *r)
{
	static const cap_value_t caps[] = {CAP_BPF, CAP_PERFMON, CAP_NET_ADMIN};
	_cleanup_(object_done) struct object o = {};
	const struct proto_test_run_params *p = c->req;
	_cleanup_free_ uint8_t *out = NULL;
	_cleanup_close_ int prog_fd = -EBADF;
	const uint8_t *data = p->data_in.data, *ctx = p->ctx_in.data;
	size_t n_data = p->data_in.size, n_ctx = p->ctx_in.size, n_out = 0;
	const char *ref = p->object, *program = p->program;
	json_object *prog, *result;
	int64_t repeat =
		p->repeat; /* 0: the kernel's default, once; raw_tracepoint refuses any other */
	int k, type;

	k = object_open(c, r, ref, VISIBLE_OWNER, &o);
	/* A run may write the object's maps, and so change what its links enforce. */
	if (k == 0)
		k = protect_check(c, r, &o, "test_run", 0, 0);
	if (k != 0)
		return k;
	k = object_program(&o, r, program, &prog);
	if (k != 0)
		return k;
	/*
	 * A vetted object's grant is for its programs on real events: no manifest grants test
	 * runs, in which the caller's input would drive their writes to maps the caller may
	 * only read (an IP firewall's accounting, say). By what the object was loaded as, not
	 * by the grant now: once the vetted grant lapses (a package upgrade changes the digest)
	 * the owner's own grant applies, and may grant the type.
	 */
	if (meta_string(o.meta, "vetted") || (c->grant && c->grant->vetted))
		return denial_reply(r, PROTO_ERR_DENIED, EPERM, "program", program, NULL,
				    "program \"%s\" is of vetted object \"%s\", whose programs run "
				    "on real events only, never in test runs",
				    program, ref);
	type = (int)meta_int(prog, "prog_type");
	if (!policy_grant_test_run(c->grant, type)) {
		const char *tname = policy_prog_type_to_string(type);
		char key[64];

		/* test_run_types grants test runs and nothing more; program_types would too. */
		snprintf(key, sizeof(key), "test_run_types: %s", tname ?: "");
		return denial_reply(
			r, PROTO_ERR_DENIED, EPERM, "program", program, tname ? key : NULL,
			"program \"%s\" has type %s, which your policy no longer allows", program,
			tname ?: "unknown");
	}
	prog_fd = pin_open(&o, prog);
	if (prog_fd < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, -prog_fd,
				   "cannot open program \"%s\": %s", program, strerror(-prog_fd));
	n_out = n_data ? n_data + TEST_RUN_DATA_OUT_SLACK : 0;
	out = malloc(n_out ? n_out : 1);
	if (!out)
		return -ENOMEM;
	{
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = n_data ? data : NULL,
			    .data_size_in = (uint32_t)n_data, .data_out = n_out ? out : NULL,
			    .data_size_out = (uint32_t)n_out, .ctx_in = n_ctx ? ctx : NULL,
			    .ctx_size_in = (uint32_t)n_ctx, .repeat = (int)repeat);

		k = caps_set_effective(caps, ARRAY_SIZE(caps));
		if (k < 0)
			return k;
		k = bpf_prog_test_run_opts(prog_fd, &opts);
		if (k < 0)
			k = negative_errno();
		caps_clear_effective();
		if (k < 0)
			return reply_error(r, PROTO_ERR_LOAD, -k,
					   "the kernel refused to test-run \"%s\": %s%s", program,
					   strerror(-k),
					   k == -ENOTSUPP || k == -EOPNOTSUPP
						   ? " (this program type has no test runs)"
						   : "");
		n_out = opts.data_size_out < n_out ? opts.data_size_out : n_out;
		result = json_object_new_object();
		if (!result || json_add(result, "retval", json_object_new_int64(opts.retval)) < 0 ||
		    json_add(result, "duration_ns", json_object_new_int64(opts.duration)) < 0 ||
		    proto_json_add_hex(result, "data_out", out, n_out) < 0) {
			json_object_put(result);
			return -ENOMEM;
		}
	}
	return reply_result(r, result);
}
