/* SPDX-License-Identifier: MIT */
/*
 * Attach targets "raw_tracepoint" and "tracepoint": a program linked to a tracepoint the policy
 * names.
 */
#include "named_call.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "daemon/shared/caps.h"
#include "denial.h"
#include "common/parse.h"

/* tracefs' id of a tracepoint: where tracefs is mounted, in its two usual places. */
static int tracepoint_id(const char *category_name, uint64_t *ret)
{
	static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	char cat[128], path[PATH_MAX], buf[32];
	const char *colon = strchr(category_name, ':');

	if (!colon || (size_t)(colon - category_name) >= sizeof(cat))
		return -EINVAL;
	memcpy(cat, category_name, (size_t)(colon - category_name));
	cat[colon - category_name] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(roots); i++) {
		ssize_t n;
		int fd;

		snprintf(path, sizeof(path), "%s/events/%s/%s/id", roots[i], cat, colon + 1);
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		safe_close(fd);
		if (n <= 0)
			return -EIO;
		buf[n] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		/* The kernel writes a number; anything else is no id to open. */
		return parse_u64(buf, UINT64_MAX, ret) < 0 ? -EIO : 0;
	}
	return -ENOENT;
}

static int perf_tracepoint_open(uint64_t id)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.config = id,
		.sample_period = 1,
		.wakeup_events = 1,
	};
	long fd = syscall(__NR_perf_event_open, &attr, -1 /* any task */, 0 /* cpu */, -1,
			  PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? negative_errno() : (int)fd;
}

int attach_raw_tracepoint(struct call *c, struct reply *r, const struct attach_req *a,
			  json_object *prog, int prog_fd, int *ret_link_fd)
{
	static const cap_value_t caps[] = {CAP_BPF, CAP_PERFMON};
	int type = (int)meta_int(prog, "prog_type"), k;

	if (type != BPF_PROG_TYPE_RAW_TRACEPOINT && type != BPF_PROG_TYPE_RAW_TRACEPOINT_WRITABLE)
		return reply_error(r, PROTO_ERR_INVALID, EINVAL,
				   "program \"%s\" is not a raw_tracepoint program", a->program);
	if (!a->name)
		return reply_error(r, PROTO_ERR_INVALID, EINVAL,
				   "a raw_tracepoint target needs \"name\"");
	/* A name no policy could grant (policy_grant_attach_raw_tracepoint()): no key to name. */
	if (!policy_raw_tracepoint_name_is_valid(a->name, false))
		return reply_error(r, PROTO_ERR_INVALID, EINVAL,
				   "\"%.64s\" is not a raw tracepoint name (1 to 128 of "
				   "[A-Za-z0-9_])",
				   a->name);
	if (!policy_grant_attach_raw_tracepoint(c->grant, a->name)) {
		char key[PROTO_MAX_NAME + 32];

		snprintf(key, sizeof(key), "attach.raw_tracepoints: %s", a->name);
		return denial_reply(
			r, PROTO_ERR_DENIED, EPERM, "program", a->program, key,
			"your policy does not allow attaching to raw tracepoint \"%.64s\"",
			a->name);
	}
	k = caps_set_effective(caps, ARRAY_SIZE(caps));
	if (k < 0)
		return k;
	k = bpf_raw_tracepoint_open(a->name, prog_fd);
	if (k < 0)
		k = negative_errno();
	caps_clear_effective();
	if (k < 0)
		return reply_error(r, PROTO_ERR_LOAD, -k,
				   "the kernel refused to attach \"%s\" to raw tracepoint %s: %s",
				   a->program, a->name, strerror(-k));
	*ret_link_fd = k;
	return 0;
}

int attach_tracepoint(struct call *c, struct reply *r, const struct attach_req *a,
		      json_object *prog, int prog_fd, int *ret_link_fd)
{
	static const cap_value_t caps[] = {CAP_BPF, CAP_PERFMON};
	int type = (int)meta_int(prog, "prog_type"), pfd, k;
	uint64_t id = 0;

	if (type != BPF_PROG_TYPE_TRACEPOINT)
		return reply_error(r, PROTO_ERR_INVALID, EINVAL,
				   "program \"%s\" is not a tracepoint program", a->program);
	if (!a->name)
		return reply_error(r, PROTO_ERR_INVALID, EINVAL,
				   "a tracepoint target needs \"name\": \"CATEGORY:NAME\"");
	if (!policy_tracepoint_name_is_valid(a->name, false))
		return reply_error(r, PROTO_ERR_INVALID, EINVAL,
				   "\"%.64s\" is not a tracepoint name (\"CATEGORY:NAME\", 1 to "
				   "128 of [A-Za-z0-9_] and the colon)",
				   a->name);
	if (!policy_grant_attach_tracepoint(c->grant, a->name)) {
		char key[PROTO_MAX_NAME + 32];

		snprintf(key, sizeof(key), "attach.tracepoints: %s", a->name);
		return denial_reply(r, PROTO_ERR_DENIED, EPERM, "program", a->program, key,
				    "your policy does not allow attaching to tracepoint \"%.64s\"",
				    a->name);
	}
	k = tracepoint_id(a->name, &id);
	if (k < 0)
		return reply_error(r, PROTO_ERR_NOT_FOUND, -k,
				   "no tracepoint %s (is tracefs mounted at /sys/kernel/tracing?)",
				   a->name);
	k = caps_set_effective(caps, ARRAY_SIZE(caps));
	if (k < 0)
		return k;
	pfd = perf_tracepoint_open(id);
	k = pfd;
	if (pfd >= 0) {
		/* The link holds the perf event: our fd can go once it exists. */
		k = bpf_link_create(prog_fd, pfd, BPF_PERF_EVENT, NULL);
		if (k < 0)
			k = negative_errno();
		safe_close(pfd);
	}
	caps_clear_effective();
	if (k < 0)
		return reply_error(r, PROTO_ERR_LOAD, -k,
				   "the kernel refused to attach \"%s\" to tracepoint %s: %s",
				   a->program, a->name, strerror(-k));
	*ret_link_fd = k;
	return 0;
}
