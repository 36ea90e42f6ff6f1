/* SPDX-License-Identifier: MIT */
/*
 * Methods on named objects, run only inside a worker (one connection's): list, show,
 * unload, fds, attach, detach, test_run, map_insert, map (proto/NAMED.md). Every decision is
 * made again from the current policy on each call: access to maps, whether
 * program fds are handed out, who may see an object.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "load.h"
#include "policy/policy.h"

/* Like load_handle(), for a named-object method's job (fds taken). */
int named_handle(const struct policy *policy, const struct load_config *cfg, struct jobmsg *job,
		 json_object *params, int *fds, size_t n_fds, json_object **ret_body, int **ret_fds,
		 size_t *ret_n_fds);
