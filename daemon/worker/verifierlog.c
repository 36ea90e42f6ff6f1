/* SPDX-License-Identifier: MIT */
/*
 * A failed load's error: the verifier's log and libbpf's, kernel addresses scrubbed where due,
 * for the client.
 */
#include "job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "kaddr.h"
#include "libbpflog.h"
#include "proto/proto.h"
#include "reply.h"

/*
 * On request, libbpf's whole log goes with a failure's error (scrubbed as
 * the verifier's log is): libbpf's notes and warnings, not its debug lines.
 * Adds to the error r holds, answers nothing: 0 or -ENOMEM.
 */
int job_add_libbpf_log(struct job *j, struct reply *r)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	const char *log = libbpflog_text(&len);

	if (!j->req.libbpf_log || !reply_error_obj(r))
		return 0;
	text = j->kernel_addresses_visible ? strndup(log, len) : kaddr_scrub(log, len, &len);
	if (!text)
		return -ENOMEM;
	return reply_error_add(r, "libbpf_log",
			       json_object_new_string_len(text, (int)strlen(text)));
}

/*
 * What went wrong in the kernel (or libbpf; k, its errno), with kernel
 * addresses taken out where due: always answers, PROTO_ERR_LOAD (or -ENOMEM).
 */
int job_load_failed(struct job *j, struct reply *r, int k)
{
	size_t log_len = strnlen(j->verifier_log, PROTO_MAX_VERIFIER_LOG), len;
	_cleanup_free_ char *log = NULL, *text = NULL;
	char message[1024];
	int answered;

	/*
	 * libbpf retries a failed load with the verifier log on; a log longer
	 * than ours then fails with ENOSPC, hiding the first error. The log's
	 * tail (the kernel keeps the end) says what it was.
	 */
	if (k == -ENOSPC && log_len + 1 >= PROTO_MAX_VERIFIER_LOG)
		snprintf(message, sizeof(message),
			 "the verifier refused the object; its log overflowed the broker's %u "
			 "KiB, so the reason is in the last lines of the log",
			 PROTO_MAX_VERIFIER_LOG / 1024);
	else
		libbpflog_failure(j->verifier_log, log_len, k, j->raw ? j->insns.prog_name : NULL,
				  message, sizeof(message));
	if (j->kernel_addresses_visible) {
		text = strdup(message);
		log = strndup(j->verifier_log, log_len);
	} else {
		text = kaddr_scrub(message, strlen(message), NULL);
		log = kaddr_scrub(j->verifier_log, log_len, &log_len);
	}
	if (!text || !log)
		return -ENOMEM;
	answered = reply_error(r, PROTO_ERR_LOAD, -k, "%s", text);
	if (answered < 0)
		return answered;
	len = strlen(log);
	if (len > 0) {
		k = reply_error_add(r, "verifier_log", json_object_new_string_len(log, (int)len));
		if (k < 0)
			return k;
	}
	if (!j->raw) {
		k = job_add_libbpf_log(j, r);
		if (k < 0)
			return k;
	}
	return answered;
}
