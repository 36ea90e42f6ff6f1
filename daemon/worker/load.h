/* SPDX-License-Identifier: MIT */
/*
 * The load job, run only inside a worker process (one connection's): read the
 * client's object, configure it, inspect it, decide with the policy, load it
 * with only the capabilities its program types need, and open the fds to hand
 * back with exactly the granted access.
 */
#pragma once

#include <json-c/json.h>
#include <stddef.h>

#include "daemon/shared/jobmsg.h"
#include "policy/policy.h"
#include "store.h"

struct load_config {
	struct store_config store; /* pins and metadata (see store.h) */
	uint64_t verifier_timeout_usec; /* per load; 0: only the job's timeout bounds it */
	gid_t admin_gid; /* members may list and unload everyone's objects */
	bool have_admin_gid;
	/* System objects (policy/vetted.h) only here; NULL: /etc/bpfbroker/objects, then the
	 * package's. */
	const char *objects_dir;
};

/* Write the audit record of the last load_handle(), after its reply went out. */
void load_audit_flush(void);

/*
 * Handle one load or load_insns job (its identity taken out of job), with
 * its params parsed and its fds (taken). Always produces a reply body
 * ({"result": ...} or {"error": ...}) and the fds it refers to; returns 0,
 * or -ENOMEM when not even an error reply could be built.
 */
int load_handle(const struct policy *policy, const struct load_config *cfg, struct jobmsg *job,
		json_object *params, int *fds, size_t n_fds, json_object **ret_body, int **ret_fds,
		size_t *ret_n_fds);
