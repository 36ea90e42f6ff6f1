/* SPDX-License-Identifier: MIT */
/* A named object's program test-run on the caller's input (BPF_PROG_TEST_RUN through the broker).
 */
#include "libbpfbroker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/hex.h"
#include "common/macro.h"
#include "libbpfbroker-internal.h"
#include "reply.h"

int bpfbroker_test_run(struct bpfbroker *b, const struct bpfbroker_test_run_opts *theirs,
		       struct bpfbroker_test_run_result **ret, struct bpfbroker_error **err)
{
	struct bpfbroker_test_run_opts o;
	struct bpfbroker_test_run_result *r;
	struct proto_test_run_params p;
	struct proto_msg m = {};
	json_object *result;
	const char *hex;
	uint8_t *out = NULL;
	size_t out_size = 0;
	int k;

	if (!theirs)
		return -EINVAL;
	k = opts_copy(&o, sizeof(o), theirs, theirs->sz, sizeof(size_t));
	if (k < 0)
		return k;
	if (!o.object || !o.program || (o.data_in_size && !o.data_in) ||
	    (o.ctx_in_size && !o.ctx_in) || o.repeat > BPFBROKER_TEST_RUN_MAX_REPEAT)
		return -EINVAL;
	if (o.data_in_size > BPFBROKER_TEST_RUN_MAX_DATA ||
	    o.ctx_in_size > BPFBROKER_TEST_RUN_MAX_CTX)
		return -E2BIG;
	/* Borrowed; data_in is sent even when empty (as ""), ctx_in only when given. */
	p = (struct proto_test_run_params){
		.object = (char *)o.object,
		.program = (char *)o.program,
		.data_in = {.data = (uint8_t *)(o.data_in_size ? o.data_in : ""),
			    .size = o.data_in_size},
		.ctx_in = {.data = o.ctx_in_size ? (uint8_t *)o.ctx_in : NULL,
			   .size = o.ctx_in_size},
		.repeat = o.repeat};
	k = bpfbroker_request(b, PROTO_METHOD_TEST_RUN, &p, NULL, 0, &m, &result, err);
	if (k < 0)
		return k;
	hex = get_str(result, "data_out") ?: "";
	if (*hex && hex_decode(hex, strlen(hex), &out, &out_size) < 0) {
		proto_msg_done(&m);
		return -EPROTO;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		free(out);
		proto_msg_done(&m);
		return -ENOMEM;
	}
	r->retval = get_int(result, "retval", 0);
	r->duration_ns = (uint64_t)get_int(result, "duration_ns", 0);
	r->data_out = out;
	r->data_out_size = out_size;
	proto_msg_done(&m);
	*ret = r;
	return 0;
}

void bpfbroker_test_run_result_free(struct bpfbroker_test_run_result *r)
{
	if (!r)
		return;
	free(r->data_out);
	free(r);
}
