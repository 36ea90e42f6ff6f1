/* SPDX-License-Identifier: MIT */
/* The error a broker's reply holds, for the caller (struct bpfbroker_error). */
#include "libbpfbroker.h"

#include <errno.h>
#include <stdlib.h>

#include "common/macro.h"
#include "libbpfbroker-internal.h"
#include "reply.h"

struct error_priv {
	struct bpfbroker_error pub;
	json_object *reply;
	const char **reasons;
	const char **reason_keys;
};

int error_from_reply(json_object *reply, struct bpfbroker_error **err)
{
	json_object *e;
	struct error_priv *p;
	int code;

	if (!json_object_object_get_ex(reply, "error", &e))
		return 0;
	code = (int)get_int(e, "errno", EIO);
	if (code <= 0 || code > 4095)
		code = EIO;
	if (!err) {
		json_object_put(reply);
		return -code;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		json_object_put(reply);
		return -ENOMEM;
	}
	p->reply = reply;
	p->pub.code = get_str(e, "code") ?: "unknown";
	p->pub.err = code;
	p->pub.message = get_str(e, "message") ?: "the broker reported an error";
	p->pub.verifier_log = get_str(e, "verifier_log");
	p->pub.libbpf_log = get_str(e, "libbpf_log");
	p->reasons = string_array(e, "reasons");
	p->pub.reasons = p->reasons;
	p->reason_keys = reason_keys(e);
	p->pub.reason_keys = p->reason_keys;
	/* Out of memory: no error rather than one without the reasons or their keys. */
	if (!reasons_complete(e, p->reasons, p->reason_keys)) {
		bpfbroker_error_free(&p->pub);
		return -ENOMEM;
	}
	*err = &p->pub;
	return -code;
}

void bpfbroker_error_free(struct bpfbroker_error *e)
{
	struct error_priv *p = (struct error_priv *)e;

	if (!p)
		return;
	json_object_put(p->reply);
	free(p->reasons);
	free(p->reason_keys);
	free(p);
}
