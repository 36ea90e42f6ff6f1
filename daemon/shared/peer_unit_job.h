/* SPDX-License-Identifier: MIT */
/*
 * The caller's unit as it travels in the job (shared/jobmsg.h) from the event
 * loop (which reads it, loop/peer_unit.h says what counts) to the worker: the
 * struct, and its fields as clients see them.
 */
#pragma once

#include <json-c/json.h>
#include <stddef.h>
#include <sys/types.h>

#include "policy/policy.h"

struct peer_unit {
	char *cgroup; /* the cgroup v2 path as read, for display; NULL if unknown */
	char *unit; /* the trusted system unit, or NULL */
	char *user_unit; /* the unit in the caller's own user manager, or NULL */
	char **slices; /* trusted system slices, outermost first */
	size_t n_slices;
	char **user_slices; /* slices in the caller's own user manager, outermost first */
	size_t n_user_slices;
};

void peer_unit_done(struct peer_unit *u);

/* Free the n strings of v, and v. */
void peer_unit_strv_free(char **v, size_t n);
/* Append a copy of s to the vector v of *n strings. 0 or -ENOMEM. */
int peer_unit_strv_push(char ***v, size_t *n, const char *s);

/* Add the known fields to an identity object: cgroup, unit, user_unit, slices, user_slices. */
int peer_unit_to_json(const struct peer_unit *u, json_object *identity);
/* Point id's unit fields into u (which must outlive id). */
void peer_unit_to_policy_identity(const struct peer_unit *u, struct policy_identity *id);
