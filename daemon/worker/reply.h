/* SPDX-License-Identifier: MIT */
/*
 * A worker's reply under construction: a JSON body ({"result": ...} or
 * {"error": ...}) and the fds it refers to by index. An error replaces
 * whatever was built so far and closes its fds, so a failed request never
 * hands out half of what it opened.
 */
#pragma once

#include <json-c/json.h>
#include <stddef.h>

#include "common/macro.h"
#include "proto/method.h"
#include "proto/proto.h"

struct reply {
	json_object *body;
	int fds[PROTO_MAX_REPLY_FDS];
	size_t n_fds;
};

void reply_done(struct reply *r);

/*
 * Make r an error reply with code, errno err and a formatted message. Returns
 * 0 (so handlers can `return reply_error(...)` to mean "answered"), or
 * -ENOMEM.
 */
_printf_(4, 5) int reply_error(struct reply *r, const char *code, int err, const char *fmt, ...);
/* The "error" object of an error reply, to add details (verifier_log, reasons). */
json_object *reply_error_obj(struct reply *r);
/*
 * Add val (taken, put on failure; NULL counts as -ENOMEM) as key of the error
 * object of r, an error reply. 0 or -ENOMEM.
 */
int reply_error_add(struct reply *r, const char *key, json_object *val);
/* The error reply's code and message, or NULL (for the audit trail). */
const char *reply_error_code(struct reply *r);
const char *reply_error_message(struct reply *r);
/* Make r a result reply (result taken). 0 or -ENOMEM. */
int reply_result(struct reply *r, json_object *result);
/* Add fd (taken, closed on failure) and return its index, or -ETOOMANYREFS. */
int reply_add_fd(struct reply *r, int fd);
/* Add a CLOEXEC duplicate of fd (fd itself stays with the caller). */
int reply_add_fd_dup(struct reply *r, int fd);
/*
 * Hold r to the fds method m hands out (its reply_fds in proto/method.h): a
 * reply with more becomes an "internal" error, its fds closed, for the
 * client's library would refuse it anyway. 0, or -ENOMEM.
 */
int reply_limit_fds(struct reply *r, const struct proto_method *m);

/*
 * Hand the finished reply to the caller: body and a malloc'ed copy of the
 * fds. When handling failed with k < 0 and no reply was made, an "internal"
 * error is made first. 0, or -ENOMEM when not even that could be built.
 */
int reply_finish(struct reply *r, int k, json_object **ret_body, int **ret_fds, size_t *ret_n_fds);
/*
 * A handler's failure k < 0 as the "internal" error reply reply_finish()
 * would make, made now so that the request's audit record can say it: 0,
 * or -ENOMEM. k >= 0 is returned as it is.
 */
int reply_fail(struct reply *r, int k);
