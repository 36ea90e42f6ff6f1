/* SPDX-License-Identifier: MIT */
/* Attach target "cgroup": a program linked to a cgroup v2 directory the caller owns. */
#include "named_call.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "daemon/shared/caps.h"
#include "denial.h"
#include "policy/attach_type.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

static bool prog_type_attaches_to_cgroup(int t)
{
	switch (t) {
	case BPF_PROG_TYPE_CGROUP_SKB:
	case BPF_PROG_TYPE_CGROUP_SOCK:
	case BPF_PROG_TYPE_CGROUP_DEVICE:
	case BPF_PROG_TYPE_SOCK_OPS:
	case BPF_PROG_TYPE_CGROUP_SOCK_ADDR:
	case BPF_PROG_TYPE_CGROUP_SYSCTL:
	case BPF_PROG_TYPE_CGROUP_SOCKOPT:
		return true;
	default:
		return false;
	}
}

/*
 * The caller owns a cgroup when it may manage it as a delegated subtree: the
 * directory and the files that move processes and enable controllers are
 * theirs (what systemd and container runtimes chown on delegation). The fd
 * is the client's own, so it also proves they could open the directory.
 */
static int check_cgroup_owned(struct call *c, struct reply *r, int fd)
{
	static const char *const files[] = {"cgroup.procs", "cgroup.threads",
					    "cgroup.subtree_control"};
	uid_t uid = c->ident.id.uid;
	struct statfs sfs;
	struct stat st;

	if (fstatfs(fd, &sfs) < 0 || (unsigned long)sfs.f_type != CGROUP2_SUPER_MAGIC ||
	    fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode))
		return reply_error(r, PROTO_ERR_INVALID, EINVAL,
				   "the target fd is not a cgroup v2 directory");
	/* Ownership is the system's to delegate: no policy key grants others' cgroups. */
	if (st.st_uid != uid)
		return denial_reply(r, PROTO_ERR_DENIED, EPERM, "object", NULL, NULL,
				    "you do not own this cgroup (its directory belongs to uid %u); "
				    "the broker attaches only to cgroups delegated to you",
				    (unsigned)st.st_uid);
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		if (fstatat(fd, files[i], &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue;
			return reply_error(r, PROTO_ERR_INTERNAL, errno, "cannot check %s: %m",
					   files[i]);
		}
		if (st.st_uid != uid)
			return denial_reply(
				r, PROTO_ERR_DENIED, EPERM, "object", NULL, NULL,
				"you do not own this cgroup (its %s belongs to uid %u); "
				"the broker attaches only to cgroups delegated to you",
				files[i], (unsigned)st.st_uid);
	}
	return 0;
}

int attach_cgroup(struct call *c, struct reply *r, const struct attach_req *a, json_object *prog,
		  int prog_fd, int *ret_link_fd)
{
	static const cap_value_t caps[] = {CAP_BPF, CAP_NET_ADMIN};
	int type = (int)meta_int(prog, "prog_type"), at, fd, k;

	if (!prog_type_attaches_to_cgroup(type))
		return reply_error(r, PROTO_ERR_INVALID, EINVAL,
				   "program \"%s\" has type %s, which does not attach to cgroups",
				   a->program, policy_prog_type_to_string(type) ?: "unknown");
	if (a->fd_index < 0 || (size_t)a->fd_index >= c->n_fds)
		return reply_error(r, PROTO_ERR_FDS, EBADF,
				   "a cgroup target needs the cgroup directory's fd (\"fd\": index "
				   "of an fd sent with the request)");
	fd = c->fds[a->fd_index];
	k = check_cgroup_owned(c, r, fd);
	if (k != 0)
		return k;
	if (a->attach_type) {
		at = attach_type_from_string(a->attach_type);
		if (at < 0)
			return reply_error(r, PROTO_ERR_INVALID, EINVAL,
					   "unknown attach type \"%.64s\"", a->attach_type);
	} else {
		at = (int)meta_int(prog, "expected_attach_type");
	}
	/* No policy lists a type that is not a cgroup's in attach.cgroups: no key to name. */
	if (!attach_type_is_cgroup(at))
		return reply_error(r, PROTO_ERR_INVALID, EINVAL,
				   "attach type %s does not attach to cgroups",
				   attach_type_to_string(at) ?: "unknown");
	if (!policy_grant_attach_cgroup(c->grant, at)) {
		const char *name = attach_type_to_string(at);
		char key[96];

		/* A type without a name cannot be listed in attach.cgroups. */
		snprintf(key, sizeof(key), "attach.cgroups: %s", name ?: "");
		return denial_reply(r, PROTO_ERR_DENIED, EPERM, "program", a->program,
				    name ? key : NULL,
				    "your policy does not allow attaching to cgroups as %s",
				    name ?: "this type");
	}
	k = caps_set_effective(caps, ARRAY_SIZE(caps));
	if (k < 0)
		return k;
	k = bpf_link_create(prog_fd, fd, (enum bpf_attach_type)at, NULL);
	if (k < 0)
		k = negative_errno();
	caps_clear_effective();
	if (k < 0)
		return reply_error(r, PROTO_ERR_LOAD, -k,
				   "the kernel refused to attach \"%s\" as %s: %s", a->program,
				   attach_type_to_string(at) ?: "?", strerror(-k));
	*ret_link_fd = k;
	return 0;
}
