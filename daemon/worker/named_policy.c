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
	_cleanup_json_ json_object *result = json_object_new_object();
	struct jobmsg_identity ident = {.uid = c->ident.id.uid,
					.gid = c->ident.id.gid,
					.pid = c->ident.pid,
					.groups = c->ident.groups,
					.n_groups = c->ident.id.n_groups,
					.unit = c->ident.unit};
	json_object *usage;
	uint64_t named = 0;

	if (!result)
		return -ENOMEM;
	/* The identity as the event loop took it at accept, units included. */
	if (json_add(result, "identity", jobmsg_identity_to_json(&ident)) < 0)
		return -ENOMEM;
	if (json_add(result, "policy", policy_grant_to_json(c->grant)) < 0)
		return -ENOMEM;
	/* What counts against the quotas now, as the kernel has it (ledger.h). */
	if (store_count_objects(&c->cfg->store, c->ident.id.uid, &named) >= 0 &&
	    ledger_open(&c->cfg->store, c->ident.id.uid, true, &ledger) >= 0) {
		ledger_usage(&ledger, &lu);
		ledger_done(&ledger);
		{
			const struct {
				const char *key;
				uint64_t value;
			} u[] = {
				{"named_objects", named},    {"loaded_programs", lu.programs},
				{"maps", lu.maps},	     {"map_memory_bytes", lu.map_bytes},
				{"btf_bytes", lu.btf_bytes}, {"kernel_threads", lu.kernel_threads},
			};

			usage = json_object_new_object();
			if (json_add(result, "usage", usage) < 0)
				return -ENOMEM;
			for (size_t i = 0; i < ARRAY_SIZE(u); i++)
				if (json_add(usage, u[i].key,
					     json_object_new_int64((int64_t)u[i].value)) < 0)
					return -ENOMEM;
		}
	}
	return reply_result(r, TAKE_PTR(result));
}
