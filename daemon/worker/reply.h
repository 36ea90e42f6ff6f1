/* SPDX-License-Identifier: MIT */
/*
 * A worker's reply under construction: a JSON body ({"result": ...} or
 * {"error": ...}) and the fds it refers to by index.
 *
 * Every function that may answer the client returns, as dbus-broker's do
 * (daemon/README.md, "Errors"):
 *   0    done: go on;
 *   > 0  answered: r holds the error reply, and this is its enum proto_error;
 *   < 0  failed (-errno): nothing answered; reply_finish() makes it the
 *        "internal" error, in that one place.
 * So a caller passes on anything but 0: `if (k != 0) return k;`. Never
 * `if (k < 0)` after a call that may answer: it would go on after a refusal.
 *
 * An error replaces whatever was built so far and closes its fds, and it
 * sticks: a result or an fd offered after it is refused (and put or closed),
 * so that a path that wrongly goes on after a refusal can't hand anything
 * out.
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
	enum proto_error error; /* 0: none yet; set, it stays */
};

void reply_done(struct reply *r);

/*
 * Make r the error code with errno err and a formatted message. Returns
 * code (> 0: "answered"; an unknown code becomes PROTO_ERR_INTERNAL), or
 * -ENOMEM, with r an error still (reply_finish() makes it "internal").
 */
_printf_(4, 5) int reply_error(struct reply *r, enum proto_error code, int err, const char *fmt,
			       ...);
/* The "error" object of an error reply, to add details (verifier_log, reasons). */
json_object *reply_error_obj(struct reply *r);
/*
 * Add val (taken, put on failure; NULL counts as -ENOMEM) as key of the error
 * object of r, an error reply. 0 or -ENOMEM (-EINVAL: r is no error reply).
 */
int reply_error_add(struct reply *r, const char *key, json_object *val);
/* The error r holds (0: none), and its message (or NULL), for the audit trail. */
enum proto_error reply_error_code(const struct reply *r);
const char *reply_error_message(struct reply *r);
/*
 * Make r a result reply (result taken): 0, or -ENOMEM. If r holds an error,
 * result is put and that error's code returned: the refusal stands.
 */
int reply_result(struct reply *r, json_object *result);
/*
 * Add fd (taken) and say its index in *ret_index: 0, or -ETOOMANYREFS. If r
 * holds an error, fd is closed and that error's code returned.
 */
int reply_add_fd(struct reply *r, int fd, int *ret_index);
/* Add a CLOEXEC duplicate of fd (fd itself stays with the caller), as reply_add_fd(). */
int reply_add_fd_dup(struct reply *r, int fd, int *ret_index);
/*
 * Hold r to the fds method m hands out (its reply_fds in proto/method.h): a
 * reply with more becomes an "internal" error, its fds closed, for the
 * client's library would refuse it anyway. 0, or that error's code (> 0), or -ENOMEM.
 */
int reply_limit_fds(struct reply *r, const struct proto_method *m);

/*
 * What a handler's return k and r say together, settled: a failure
 * (k < 0) made the "internal" error reply (replacing what r held), and so
 * is a reply that says nothing (k > 0 with no error recorded, k == 0 with
 * nothing built). Returns 0 (r is a result), the error r holds (> 0), or
 * -ENOMEM when not even the "internal" error could be built. Done early
 * so that the request's audit record can say what the client gets.
 */
int reply_fail(struct reply *r, int k);
/*
 * Hand the finished reply (settled by reply_fail() with k) to the caller:
 * body and a malloc'ed copy of the fds. 0, or -ENOMEM when not even the
 * "internal" error could be built.
 */
int reply_finish(struct reply *r, int k, json_object **ret_body, int **ret_fds, size_t *ret_n_fds);
