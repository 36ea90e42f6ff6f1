/* SPDX-License-Identifier: MIT */
/* Method "policy": the caller's effective grant and what counts against its quotas. */
#include "named_call.h"

#include <errno.h>
#include <fcntl.h>

#include "ledger.h"
#include "store.h"

int named_policy(struct call *c, struct reply *r)
{
	struct ledger ledger = {};
	struct ledger_usage lu = {};
	json_object *result, *usage, *identity;
	uint64_t named = 0;

	result = json_object_new_object();
	if (!result)
		return -ENOMEM;
	/* The identity as the event loop took it at accept, units included. */
	if (json_object_object_get_ex(c->job, "identity", &identity))
		json_object_object_add(result, "identity", json_object_get(identity));
	json_object_object_add(result, "policy", policy_grant_to_json(c->grant));
	/* What counts against the quotas now, as the kernel has it (ledger.h). */
	if (store_count_objects(&c->cfg->store, c->ident.id.uid, &named) >= 0 &&
	    ledger_open(&c->cfg->store, c->ident.id.uid, true, &ledger) >= 0) {
		ledger_usage(&ledger, &lu);
		ledger_done(&ledger);
		usage = json_object_new_object();
		json_object_object_add(usage, "named_objects",
				       json_object_new_int64((int64_t)named));
		json_object_object_add(usage, "loaded_programs",
				       json_object_new_int64((int64_t)lu.programs));
		json_object_object_add(usage, "maps", json_object_new_int64((int64_t)lu.maps));
		json_object_object_add(usage, "map_memory_bytes",
				       json_object_new_int64((int64_t)lu.map_bytes));
		json_object_object_add(usage, "btf_bytes",
				       json_object_new_int64((int64_t)lu.btf_bytes));
		json_object_object_add(usage, "kernel_threads",
				       json_object_new_int64((int64_t)lu.kernel_threads));
		json_object_object_add(result, "usage", usage);
	}
	return reply_result(r, result);
}
