/* SPDX-License-Identifier: MIT */
/*
 * Client requests the integration tests make through libbpfbroker, each on
 * a connection of its own, as the current (unprivileged) user.
 */
#pragma once

#include <stdbool.h>

#include "client/libbpfbroker.h"

/* Load the built test object object (harness_object()) with opts (or NULL). */
int harness_load(const char *object, const struct bpfbroker_load_opts *opts,
		 struct bpfbroker_result **res, struct bpfbroker_error **err);
/* Fresh fds of named object ref ("NAME" or "OWNER/NAME"). */
int harness_fds(const char *ref, struct bpfbroker_result **res, struct bpfbroker_error **err);
/* Unload named object ref; the error reply, if any, is dropped. */
int harness_unload(const char *ref);
/*
 * Whether e is a refusal (policy-denied or quota) that names its policy key
 * as proto/PROTOCOL.md's Denials promise: reasons and their keys, parallel,
 * the message being the first reason, and ending with "(policy key KEY)"
 * unless key is "" (no policy can allow it). If not, says why on stderr.
 * key NULL: any key but "" will do (pass "" where none is due).
 */
bool harness_denial_has_key(const struct bpfbroker_error *e, const char *key);
