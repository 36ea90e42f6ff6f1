/* SPDX-License-Identifier: MIT */
/* Method "detach": a program's links detached and unpinned. */
#include "named_call.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon/shared/caps.h"
#include "daemon/shared/log.h"

int named_detach(struct call *c, struct reply *r)
{
	static const cap_value_t caps[] = {CAP_BPF, CAP_SYS_ADMIN};
	_cleanup_(object_done) struct object o = {};
	_cleanup_free_ struct link_entry *le = NULL;
	_cleanup_json_ json_object *detached = json_object_new_array();
	json_object *prog, *result;
	const struct proto_detach_params *p = c->req;
	const char *ref = p->object, *program = p->program;
	int64_t link = p->link;
	size_t n = 0;
	int k;

	if (!detached)
		return -ENOMEM;
	k = object_open(c, r, ref, VISIBLE_OWNER, &o);
	if (k == 0)
		k = call_lock(c, r, o.owner);
	if (k != 0)
		return k;
	prog = meta_find(o.meta, "programs", program);
	if (!prog)
		return reply_error(r, PROTO_ERR_NOT_FOUND, ENOENT,
				   "object \"%s\" has no program \"%s\"", o.name, program);
	k = protect_check(c, r, &o, "detach", meta_int(prog, "id"), link);
	if (k != 0)
		return k;
	k = object_links(&o, &le, &n);
	if (k < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, -k, "cannot list links: %s",
				   strerror(-k));
	k = caps_set_effective(caps, ARRAY_SIZE(caps));
	if (k < 0)
		return k;
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX + 16];
		int fd;

		if ((int64_t)le[i].prog_id != meta_int(prog, "id"))
			continue;
		/* Without a link id: what the broker pinned; with one: that link, pinned or not. */
		if (link ? (int64_t)le[i].id != link : !le[i].pinned)
			continue;
		fd = bpf_link_get_fd_by_id(le[i].id);
		if (fd >= 0) {
			/* Some link types can't detach; unpinning then ends them once unheld. */
			if (bpf_link_detach(fd) < 0 && errno != EOPNOTSUPP && errno != EINVAL)
				log_warning("cannot detach link %u: %m", le[i].id);
			safe_close(fd);
		}
		snprintf(path, sizeof(path), "%s/l%u", o.dir, le[i].id);
		if (le[i].pinned && unlink(path) < 0)
			log_warning("cannot unpin %s: %m", path);
		json_object_array_add(detached, json_object_new_int64(le[i].id));
	}
	caps_clear_effective();
	k = protect_forget(c, &o, detached);
	if (k < 0)
		log_warning("cannot drop the protection records of %s's detached links: %s", o.name,
			    strerror(-k));
	if (link && json_object_array_length(detached) == 0)
		return reply_error(r, PROTO_ERR_NOT_FOUND, ENOENT,
				   "program \"%s\" has no link %lld", program, (long long)link);
	result = json_object_new_object();
	if (json_add(result, "detached", TAKE_PTR(detached)) < 0) {
		json_object_put(result);
		return -ENOMEM;
	}
	return reply_result(r, result);
}
