/* SPDX-License-Identifier: MIT */
#include "harness_client.h"

#include <stddef.h>

#include "harness.h"

int harness_load(const char *object, const struct bpfbroker_load_opts *opts,
		 struct bpfbroker_result **res, struct bpfbroker_error **err)
{
	struct bpfbroker *b;
	int k;

	*res = NULL;
	*err = NULL;
	k = bpfbroker_connect(H.socket, &b);
	if (k < 0)
		return k;
	k = bpfbroker_load_file(b, harness_object(object), opts, res, err);
	bpfbroker_close(b);
	return k;
}

int harness_fds(const char *ref, struct bpfbroker_result **res, struct bpfbroker_error **err)
{
	struct bpfbroker *b;
	int k;

	*res = NULL;
	*err = NULL;
	k = bpfbroker_connect(H.socket, &b);
	if (k < 0)
		return k;
	k = bpfbroker_fds(b, ref, res, err);
	bpfbroker_close(b);
	return k;
}

int harness_unload(const char *ref)
{
	struct bpfbroker_error *err = NULL;
	struct bpfbroker *b;
	int k = bpfbroker_connect(H.socket, &b);

	if (k < 0)
		return k;
	k = bpfbroker_unload(b, ref, &err);
	bpfbroker_error_free(err);
	bpfbroker_close(b);
	return k;
}
