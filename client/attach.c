/* SPDX-License-Identifier: MIT */
/* Programs of named objects attached to their targets, and links detached. */
#include "libbpfbroker.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/macro.h"
#include "libbpfbroker-internal.h"
#include "reply.h"

/*
 * The target, borrowing o's strings; its fds are sent in this order: cgroup:
 * the directory; uprobe: binary, pidfd.
 */
static struct proto_link_target attach_target(const struct bpfbroker_attach_opts *o, bool cgroup,
					      bool uprobe)
{
	struct proto_link_target t = {.type = (char *)o->target_type,
				      .fd = cgroup || uprobe ? 0 : -1,
				      .attach_type = (char *)o->attach_type,
				      .name = (char *)o->name,
				      .pidfd = -1,
				      .offset = -1};

	if (uprobe) {
		t.pidfd = 1;
		/* A probe at a file offset (no name) sends it even when it is 0. */
		if (!o->name || o->uprobe_offset)
			t.offset = (int64_t)o->uprobe_offset;
		t.retprobe = o->retprobe;
		t.semaphore = (char *)o->semaphore;
		t.semaphore_offset = (int64_t)o->semaphore_offset;
	}
	return t;
}

/*
 * program_id (1.2) lies past 1.1's struct, whose size ended in padding after protect: a 1.1
 * library refuses it (a caller's bytes beyond its struct must be zero), and a 1.1 caller's sz
 * never covers it (ABI.md).
 */
_Static_assert(offsetof(struct bpfbroker_attach_opts, program_id) >=
		       (offsetof(struct bpfbroker_attach_opts, protect) + sizeof(bool) +
			_Alignof(struct bpfbroker_attach_opts) - 1) /
			       _Alignof(struct bpfbroker_attach_opts) *
			       _Alignof(struct bpfbroker_attach_opts),
	       "program_id must lie past 1.1's struct bpfbroker_attach_opts");

int bpfbroker_attach(struct bpfbroker *b, const struct bpfbroker_attach_opts *theirs,
		     uint32_t *ret_link_id, int *ret_link_fd, struct bpfbroker_error **err)
{
	struct bpfbroker_attach_opts o;
	struct proto_attach_params p;
	struct proto_msg m = {};
	json_object *result, *link;
	bool cgroup, uprobe;
	int fds[2];
	size_t n_fds = 0;
	int64_t id, idx;
	int k, fd = -1;

	if (!theirs)
		return -EINVAL;
	k = opts_copy(&o, sizeof(o), theirs, theirs->sz, sizeof(size_t));
	if (k < 0)
		return k;
	if (!o.object || !o.program || !o.target_type || o.program_id > UINT32_MAX)
		return -EINVAL;
	cgroup = strcmp(o.target_type, "cgroup") == 0;
	uprobe = strcmp(o.target_type, "uprobe") == 0;
	if (cgroup) {
		if (o.cgroup_fd < 0)
			return -EBADF;
		fds[n_fds++] = o.cgroup_fd;
	} else if (uprobe) {
		if (o.binary_fd < 0 || o.pidfd < 0 || o.uprobe_offset > INT64_MAX ||
		    o.semaphore_offset > INT64_MAX)
			return o.binary_fd < 0 || o.pidfd < 0 ? -EBADF : -EINVAL;
		fds[n_fds++] = o.binary_fd;
		fds[n_fds++] = o.pidfd;
	}
	p = (struct proto_attach_params){.program = (char *)o.program,
					 .pin = o.pin,
					 .protect = o.protect,
					 .target = attach_target(&o, cgroup, uprobe),
					 .object = (char *)o.object,
					 .program_id = (int64_t)o.program_id};
	k = bpfbroker_request(b, PROTO_METHOD_ATTACH, &p, n_fds ? fds : NULL, n_fds, &m, &result,
			      err);
	if (k < 0)
		return k;
	if (!json_object_object_get_ex(result, "link", &link) ||
	    (id = get_int(link, "id", -1)) < 0 || id > UINT32_MAX) {
		proto_msg_done(&m);
		return -EPROTO;
	}
	/* The link fd's index: "fd" in "link", or next to it. */
	idx = get_int(link, "fd", get_int(result, "fd", -1));
	if (!get_bool(link, "pinned")) {
		if (idx < 0 || (size_t)idx >= m.n_fds) {
			proto_msg_done(&m);
			return -EPROTO;
		}
		if (ret_link_fd)
			fd = proto_msg_take_fd(&m, (size_t)idx);
	}
	proto_msg_done(&m);
	if (ret_link_id)
		*ret_link_id = (uint32_t)id;
	if (ret_link_fd)
		*ret_link_fd = fd;
	return 0;
}

int bpfbroker_detach(struct bpfbroker *b, const char *object, const char *program, uint32_t link_id,
		     uint32_t **ret_ids, size_t *ret_n, struct bpfbroker_error **err)
{
	struct proto_detach_params p = {
		.object = (char *)object, .program = (char *)program, .link = link_id};
	struct proto_msg m = {};
	json_object *result, *a;
	uint32_t *ids;
	size_t n;
	int k;

	if (!object || !program)
		return -EINVAL;
	k = bpfbroker_request(b, PROTO_METHOD_DETACH, &p, NULL, 0, &m, &result, err);
	if (k < 0)
		return k;
	if (!json_object_object_get_ex(result, "detached", &a) ||
	    !json_object_is_type(a, json_type_array)) {
		proto_msg_done(&m);
		return -EPROTO;
	}
	n = json_object_array_length(a);
	ids = calloc(n + 1, sizeof(*ids));
	if (!ids) {
		proto_msg_done(&m);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		json_object *v = json_object_array_get_idx(a, i);
		int64_t x = json_object_get_int64(v);

		if (!json_object_is_type(v, json_type_int) || x <= 0 || x > UINT32_MAX) {
			free(ids);
			proto_msg_done(&m);
			return -EPROTO;
		}
		ids[i] = (uint32_t)x;
	}
	proto_msg_done(&m);
	if (ret_n)
		*ret_n = n;
	if (ret_ids)
		*ret_ids = ids;
	else
		free(ids);
	return 0;
}
