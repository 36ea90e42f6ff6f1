/* SPDX-License-Identifier: MIT */
#include "identity.h"

#include <errno.h>
#include <grp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "common/parse.h"
#include "proto/proto.h"

void identity_done(struct identity *i)
{
	free(i->groups);
	peer_unit_done(&i->unit);
	free(i->peer_cgroup);
	*i = (struct identity){};
}

int identity_from_job(json_object *job, struct identity *ret)
{
	json_object *identity, *groups, *cgroup;
	int64_t uid = -1, gid = -1;
	struct identity i = {};
	size_t n;
	int r;

	if (!json_object_object_get_ex(job, "identity", &identity) ||
	    proto_get_int(identity, "uid", true, 0, UINT32_MAX - 1, &uid, NULL) < 0 ||
	    proto_get_int(identity, "gid", true, 0, UINT32_MAX - 1, &gid, NULL) < 0 ||
	    !json_object_object_get_ex(identity, "groups", &groups) ||
	    !json_object_is_type(groups, json_type_array))
		return -EINVAL;
	n = json_object_array_length(groups);
	i.groups = calloc(n + 1, sizeof(gid_t));
	if (!i.groups)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++)
		i.groups[k] = (gid_t)json_object_get_int64(json_object_array_get_idx(groups, k));
	i.id = (struct policy_identity){
		.uid = (uid_t)uid, .gid = (gid_t)gid, .groups = i.groups, .n_groups = n};
	{
		int64_t pid = 0;

		if (proto_get_int(identity, "pid", false, 0, INT32_MAX, &pid, NULL) >= 0)
			i.pid = (pid_t)pid;
	}
	r = peer_unit_from_json(identity, &i.unit);
	if (r >= 0 && json_object_object_get_ex(identity, "peer_cgroup", &cgroup)) {
		/* Anything but a string leaves it unknown, which confines the most. */
		if (json_object_is_type(cgroup, json_type_string)) {
			i.peer_cgroup = strdup(json_object_get_string(cgroup));
			if (!i.peer_cgroup)
				r = -ENOMEM;
		}
	}
	if (r < 0) {
		identity_done(&i);
		return r;
	}
	peer_unit_to_policy_identity(&i.unit, &i.id);
	*ret = i;
	return 0;
}

int identity_of_uid(uid_t uid, struct identity *ret)
{
	_cleanup_free_ char *name = NULL;
	struct identity i = {};
	gid_t gid;
	int n = 64, r;

	r = uid_to_user(uid, &name, &gid);
	if (r == -ENOENT) {
		/* A uid without a user (a container's mapped id): no groups. */
		i.groups = calloc(1, sizeof(gid_t));
		if (!i.groups)
			return -ENOMEM;
		i.id = (struct policy_identity){.uid = uid, .gid = (gid_t)-1, .groups = i.groups};
		*ret = i;
		return 0;
	}
	if (r < 0)
		return r;
	for (;;) {
		gid_t *g = calloc((size_t)n + 1, sizeof(gid_t));
		int want = n;

		if (!g)
			return -ENOMEM;
		if (getgrouplist(name, gid, g, &want) >= 0) {
			i.groups = g;
			i.id = (struct policy_identity){
				.uid = uid, .gid = gid, .groups = g, .n_groups = (size_t)want};
			*ret = i;
			return 0;
		}
		free(g);
		if (want <= n || want > 65536)
			return -E2BIG;
		n = want;
	}
}

bool identity_in_group(const struct policy_identity *id, gid_t gid)
{
	if (id->gid == gid)
		return true;
	for (size_t i = 0; i < id->n_groups; i++)
		if (id->groups[i] == gid)
			return true;
	return false;
}

int identity_parse_user(const char *s, uid_t *ret)
{
	return parse_uid(s, ret);
}

int identity_parse_group(const char *s, gid_t *ret)
{
	return parse_gid(s, ret);
}
