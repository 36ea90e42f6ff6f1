/* SPDX-License-Identifier: MIT */
/* The caller's identity in a worker: taken from the job, or looked up for a uid (shares). */
#include "identity.h"

#include <errno.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "common/parse.h"

void identity_done(struct identity *i)
{
	free(i->groups);
	peer_unit_done(&i->unit);
	free(i->peer_cgroup);
	*i = (struct identity){};
}

void identity_from_job(struct jobmsg *job, struct identity *ret)
{
	struct jobmsg_identity *ji = &job->ident;
	struct identity i = {.groups = TAKE_PTR(ji->groups),
			     .pid = ji->pid,
			     .unit = ji->unit,
			     .peer_cgroup = TAKE_PTR(ji->peer_cgroup)};

	ji->unit = (struct peer_unit){};
	i.id = (struct policy_identity){
		.uid = ji->uid, .gid = ji->gid, .groups = i.groups, .n_groups = ji->n_groups};
	ji->n_groups = 0;
	peer_unit_to_policy_identity(&i.unit, &i.id);
	*ret = i;
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
