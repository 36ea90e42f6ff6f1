/* SPDX-License-Identifier: MIT */
/* Method "unload": the object's metadata removed (the commit), then its links and pins. */
#include "named_call.h"

#include <errno.h>
#include <string.h>

#include "daemon/shared/log.h"
#include "store.h"

int named_unload(struct call *c, struct reply *r)
{
	_cleanup_(object_done) struct object o = {};
	json_object *result;
	const char *ref = ((const struct proto_object_params *)c->req)->object;
	int k;

	k = object_open(c, r, ref, VISIBLE_OWNER_OR_ADMIN, &o);
	if (k == 0)
		k = call_lock(c, r, o.owner);
	if (k == 0)
		k = protect_check(c, r, &o, "unload", 0, 0);
	if (k != 0)
		return k;
	/* Removing the metadata is the commit: from here on the object is gone (store.h). */
	k = store_meta_remove(&c->cfg->store, o.owner, o.name);
	if (k == -ENOENT)
		return reply_error(r, PROTO_ERR_NOT_FOUND, ENOENT,
				   "object \"%s\" was just unloaded", ref);
	if (k < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, -k, "cannot unload \"%s\": %s", ref,
				   strerror(-k));
	store_fault(&c->cfg->store, "unload-committed");
	k = store_object_remove_pins(&c->cfg->store, o.owner, o.name);
	if (k < 0)
		log_warning("unload of %u/%s: cannot remove every pin (%s); the next change "
			    "sweeps it",
			    (unsigned)o.owner, o.name, strerror(-k));
	log_info("uid %u unloaded %u/%s", (unsigned)c->ident.id.uid, (unsigned)o.owner, o.name);
	result = json_object_new_object();
	if (json_add(result, "name", json_object_new_string(o.name)) < 0 ||
	    json_add(result, "owner", json_object_new_int64(o.owner)) < 0) {
		json_object_put(result);
		return -ENOMEM;
	}
	return reply_result(r, result);
}
