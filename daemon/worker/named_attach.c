/* SPDX-License-Identifier: MIT */
/*
 * Method "attach": the request checked, dispatched to its kind of target (attach_*.c, uprobe.c),
 * bounded by max_attachments, pinned or handed out.
 */
#include "named_call.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/shared/caps.h"
#include "daemon/shared/log.h"
#include "denial.h"
#include "store.h"

/* The typed params as the targets take them; a uprobe's fd indexes resolved. */
static int attach_parse(struct call *c, struct reply *r, struct attach_req *a)
{
	const struct proto_attach_params *p = c->req;
	const struct proto_link_target *t = &p->target;
	_cleanup_free_ char *error = NULL;
	int k;

	a->program = p->program;
	a->pin = p->pin;
	a->type = t->type;
	if (strcmp(a->type, "uprobe") == 0) {
		/* Its fds: the binary and a pidfd (uprobe.h). */
		k = uprobe_request_from(t, c->fds, c->n_fds, &a->uprobe, &error);
		if (k < 0)
			return reply_error(r, k == -EBADF ? PROTO_ERR_FDS : PROTO_ERR_INVALID, -k,
					   "%s", error ?: "bad uprobe target");
		/* The process's /proc/PID/status, held by the call (closed with it). */
		k = uprobe_status_open(c->params, c->fds, c->n_fds);
		c->target_status = k >= 0 ? k : -EBADF;
		c->target_status_error = k >= 0 ? 0 : -k;
		a->uprobe.status_fd = c->target_status;
		a->uprobe.status_error = c->target_status_error;
		a->name = a->uprobe.symbol;
		a->fd_index = -1;
		return 0;
	}
	a->name = t->name;
	a->attach_type = t->attach_type;
	a->fd_index = t->fd;
	return 0;
}

static int attach_uprobe(struct call *c, struct reply *r, const struct attach_req *a,
			 json_object *prog, int prog_fd, int *ret_link_fd)
{
	if ((int)meta_int(prog, "prog_type") != BPF_PROG_TYPE_KPROBE)
		return reply_error(r, PROTO_ERR_INVALID, EINVAL,
				   "program \"%s\" is not a kprobe-type program (SEC(\"uprobe\"))",
				   a->program);
	if (!policy_grant_attach_uprobes(c->grant))
		return denial_reply(r, PROTO_ERR_DENIED, EPERM, "program", a->program,
				    "attach.uprobes",
				    "your policy does not allow attaching uprobes");
	return uprobe_attach(&a->uprobe, &c->ident.id, prog_fd, a->program, r, c->target_desc,
			     sizeof(c->target_desc), ret_link_fd);
}

static int link_id_of(int fd, uint32_t *ret)
{
	static const cap_value_t bpf_cap[] = {CAP_BPF};
	struct bpf_link_info info = {};
	uint32_t len = sizeof(info);
	int k;

	/* Before Linux 6.5, with kernel.unprivileged_bpf_disabled set, every bpf() command
	 * needs CAP_BPF effective, BPF_OBJ_GET_INFO_BY_FD too (as in pin_open()). */
	k = caps_set_effective(bpf_cap, 1);
	if (k < 0)
		return k;
	k = bpf_obj_get_info_by_fd(fd, &info, &len) < 0 ? negative_errno() : 0;
	caps_clear_effective();
	if (k < 0)
		return k;
	*ret = info.id;
	return 0;
}

/*
 * With "program_id": the program must be the one of that id. Under the owner's lock, so that
 * a name unloaded and loaded again since the caller's load (by another process of its uid)
 * is refused rather than its programs attached as the caller's. The id is the metadata's,
 * which pin_open() has just checked against the program pinned, with no bpf() call here
 * (one that would need CAP_BPF before Linux 6.5).
 */
static int attach_check_program_id(struct reply *r, const struct object *o, const char *program,
				   json_object *prog, int64_t want)
{
	int64_t id = meta_int(prog, "id");

	if (want == 0 || id == want)
		return 0;
	return reply_error(r, PROTO_ERR_EXISTS, EEXIST,
			   "program \"%s\" of \"%s\" is program id %lld, not %lld: the object of "
			   "that name is not the one you loaded (unloaded and loaded again since?)",
			   program, o->name, (long long)id, (long long)want);
}

/* How many links the user's named objects have, against max_attachments. */
static int user_attachments(struct call *c, uid_t uid, uint64_t *ret)
{
	char **names = NULL;
	size_t n = 0;
	uint64_t total = 0;
	int k = store_list_names(&c->cfg->store, uid, &names, &n);

	if (k == -ENOENT)
		k = 0;
	for (size_t i = 0; k >= 0 && i < n; i++) {
		_cleanup_(object_done) struct object o = {};
		_cleanup_free_ struct link_entry *le = NULL;
		size_t n_links = 0;

		if (object_load(c, uid, names[i], &o) < 0)
			continue;
		k = object_links(&o, &le, &n_links);
		total += n_links;
	}
	store_names_free(names, n);
	if (k < 0)
		return k;
	*ret = total;
	return 0;
}

/* Attachments are bounded in number (per minute, with loads, by the event loop). */
static int attach_check_quotas(struct call *c, struct reply *r)
{
	const struct policy_limits *l = &c->grant->limits;
	uint64_t n = 0;
	int k = user_attachments(c, c->ident.id.uid, &n);

	if (k < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, -k, "cannot count your attachments: %s",
				   strerror(-k));
	/* n counts the link just made. */
	if (n > l->max_attachments) {
		char note[128];
		const char *key = policy_limit_key("max_attachments", n, note, sizeof(note));

		return denial_reply(r, PROTO_ERR_QUOTA, EDQUOT, "object", NULL, key,
				    "this attach would exceed your quota max_attachments: you have "
				    "%llu, your limit is %llu%s",
				    (unsigned long long)(n - 1),
				    (unsigned long long)l->max_attachments, note);
	}
	return 0;
}

int named_attach(struct call *c, struct reply *r)
{
	_cleanup_(object_done) struct object o = {};
	_cleanup_close_ int prog_fd = -EBADF, link_fd = -EBADF;
	struct attach_req a = {};
	json_object *prog, *result, *link;
	const struct proto_attach_params *p = c->req;
	const char *ref = p->object;
	uint32_t link_id = 0;
	int k, type;

	k = attach_parse(c, r, &a);
	if (k == 0)
		k = object_open(c, r, ref, VISIBLE_OWNER, &o);
	if (k == 0)
		k = call_lock(c, r, o.owner);
	if (k == 0 && !a.pin &&
	    (strcmp(a.type, "tracepoint") == 0 || strcmp(a.type, "raw_tracepoint") == 0 ||
	     strcmp(a.type, "uprobe") == 0))
		/* The kernel can't detach these links: one held by a client would outlive unload.
		 */
		k = reply_error(r, PROTO_ERR_INVALID, EINVAL,
				"%s attachments are always pinned (the kernel cannot detach them "
				"from a link fd you hold): attach with pin",
				a.type);
	if (k == 0 && p->protect && (strcmp(a.type, "cgroup") != 0 || !a.pin))
		/* A link held as a client's fd ends when that fd closes: nothing to protect. */
		k = reply_error(r, PROTO_ERR_INVALID, EINVAL,
				"\"protect\" is for cgroup attachments with pin, not %s%s", a.type,
				a.pin ? "" : " without pin");
	if (k != 0)
		return k;
	k = object_program(&o, r, a.program, &prog);
	if (k != 0)
		return k;
	type = (int)meta_int(prog, "prog_type");
	if (!policy_grant_prog_type(c->grant, type)) {
		const char *tname = policy_prog_type_to_string(type);
		char key[64];

		snprintf(key, sizeof(key), "program_types: %s", tname ?: "");
		return denial_reply(
			r, PROTO_ERR_DENIED, EPERM, "program", a.program, tname ? key : NULL,
			"program \"%s\" has type %s, which your policy allows %s", a.program,
			tname ?: "unknown",
			policy_grant_test_run(c->grant, type) ? "for test runs only" : "no longer");
	}
	prog_fd = pin_open(&o, prog);
	if (prog_fd < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, -prog_fd,
				   "cannot open program \"%s\": %s", a.program, strerror(-prog_fd));
	k = attach_check_program_id(r, &o, a.program, prog, p->program_id);
	if (k != 0)
		return k;
	/*
	 * Checked before the link exists: the kernel enforces it from the moment
	 * it does. Never skipped: without the cgroup's fd there is nothing to
	 * check against, so nothing to attach.
	 */
	if (p->protect) {
		if (a.fd_index < 0 || (size_t)a.fd_index >= c->n_fds)
			return reply_error(r, PROTO_ERR_FDS, EBADF,
					   "\"protect\" needs the cgroup directory's fd (\"fd\": "
					   "index of an fd sent with the request)");
		k = protect_may_attach(c, r, &o, c->fds[a.fd_index]);
		if (k != 0)
			return k;
	}
	if (strcmp(a.type, "cgroup") == 0)
		k = attach_cgroup(c, r, &a, prog, prog_fd, &link_fd);
	else if (strcmp(a.type, "raw_tracepoint") == 0)
		k = attach_raw_tracepoint(c, r, &a, prog, prog_fd, &link_fd);
	else if (strcmp(a.type, "tracepoint") == 0)
		k = attach_tracepoint(c, r, &a, prog, prog_fd, &link_fd);
	else if (strcmp(a.type, "xdp") == 0 || strcmp(a.type, "tc") == 0)
		k = attach_interface(c, r, &a, prog, prog_fd, strcmp(a.type, "tc") == 0, &link_fd);
	else if (strcmp(a.type, "uprobe") == 0)
		k = attach_uprobe(c, r, &a, prog, prog_fd, &link_fd);
	else
		return reply_error(
			r, PROTO_ERR_INVALID, EINVAL,
			"unknown target type \"%.32s\" (expected cgroup, raw_tracepoint, "
			"tracepoint, xdp, tc or uprobe)",
			a.type);
	if (k != 0)
		return k;
	/*
	 * Quotas are checked with the new link in place, so every target's own
	 * checks (and their clearer errors) come first; over quota, closing our
	 * only reference ends the link again.
	 */
	k = attach_check_quotas(c, r);
	if (k != 0)
		return k;
	k = link_id_of(link_fd, &link_id);
	if (k < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, -k, "cannot query the new link: %s",
				   strerror(-k));
	/*
	 * Recorded before the pin: until the pin exists, our fd is the link's only
	 * reference, so a crash leaves a record of a link that is gone (which
	 * protects nothing), never a pinned link without its protection.
	 */
	if (p->protect) {
		k = protect_record(c, r, &o, link_fd, c->fds[a.fd_index]);
		if (k != 0)
			return k;
	}
	if (a.pin) {
		char path[PATH_MAX + 16];

		snprintf(path, sizeof(path), "%s/l%u", o.dir, link_id);
		if (bpf_obj_pin(link_fd, path) < 0)
			return reply_error(r, PROTO_ERR_INTERNAL, errno, "cannot pin the link: %m");
	}
	result = json_object_new_object();
	link = json_object_new_object();
	if (json_add(result, "link", link) < 0 ||
	    json_add(link, "id", json_object_new_int64(link_id)) < 0 ||
	    json_add(link, "pinned", json_object_new_boolean(a.pin)) < 0 ||
	    (p->protect && json_add(link, "protected", json_object_new_boolean(true)) < 0)) {
		json_object_put(result);
		return -ENOMEM;
	}
	/* link is result's from here on: after a refusal (k > 0) both are gone. */
	k = reply_result(r, result);
	if (k != 0)
		return k;
	if (!a.pin) {
		int idx = -1;

		k = reply_add_fd(r, TAKE_FD(link_fd), &idx);
		if (k < 0)
			return reply_error(r, PROTO_ERR_INTERNAL, -k, "cannot pass the link");
		if (k > 0)
			return k;
		k = json_add(link, "fd", json_object_new_int(idx));
		if (k < 0)
			return k;
	}
	log_info("uid %u attached %s/%s (link %u%s%s%s%s)", (unsigned)c->ident.id.uid, o.name,
		 a.program, link_id, a.pin ? ", pinned" : "", p->protect ? ", protected" : "",
		 c->target_desc[0] ? ", " : "", c->target_desc);
	return 0;
}
