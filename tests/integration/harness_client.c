/* SPDX-License-Identifier: MIT */
#include "harness_client.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

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

bool harness_denial_has_key(const struct bpfbroker_error *e, const char *key)
{
	char with_key[300];
	size_t n = 0;

	if (!e || (strcmp(e->code, "policy-denied") != 0 && strcmp(e->code, "quota") != 0)) {
		fprintf(stderr, "not a refusal: %s\n", e ? e->code : "no error");
		return false;
	}
	if (!e->reasons || !e->reasons[0] || !e->reason_keys) {
		fprintf(stderr, "refusal without reasons or keys: %s\n", e->message);
		return false;
	}
	for (; e->reasons[n]; n++)
		if (!e->reason_keys[n]) {
			fprintf(stderr, "reason %zu has no key: %s\n", n, e->reasons[n]);
			return false;
		}
	if (e->reason_keys[n] || strcmp(e->reasons[0], e->message) != 0) {
		fprintf(stderr, "reasons and keys not parallel, or the message not the first: %s\n",
			e->message);
		return false;
	}
	if (!key) {
		/* Any key, but a key: "" must be asked for. */
		if (!*e->reason_keys[0]) {
			fprintf(stderr, "no key, expected one: %s\n", e->message);
			return false;
		}
		key = e->reason_keys[0];
	}
	snprintf(with_key, sizeof(with_key), " (policy key %s)", key);
	if (strcmp(e->reason_keys[0], key) != 0 || (*key && !strstr(e->message, with_key)) ||
	    (!*key && strstr(e->message, "(policy key "))) {
		fprintf(stderr, "key \"%s\", expected \"%s\": %s\n", e->reason_keys[0], key,
			e->message);
		return false;
	}
	return true;
}
