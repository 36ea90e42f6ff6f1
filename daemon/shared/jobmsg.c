/* SPDX-License-Identifier: MIT */
/*
 * The typed job between the event loop and a worker (jobmsg.h): its one
 * encoder and its one strict decoder, and the identity as clients see it.
 */
#include "jobmsg.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/macro.h"
#include "proto/method.h"

/* Sent as they are in memory: no padding, so no byte goes out uninitialized. */
_Static_assert(sizeof(struct jobmsg_header) == 32, "jobmsg_header has padding");
_Static_assert(sizeof(struct jobmsg_ident_header) == 28, "jobmsg_ident_header has padding");

void jobmsg_identity_done(struct jobmsg_identity *i)
{
	free(i->groups);
	free(i->peer_cgroup);
	peer_unit_done(&i->unit);
	*i = (struct jobmsg_identity){};
}

void jobmsg_done(struct jobmsg *j)
{
	jobmsg_identity_done(&j->ident);
	*j = (struct jobmsg){};
}

static bool method_valid(unsigned method)
{
	if (method == JOBMSG_SWEEP)
		return true;
	return method < PROTO_METHOD_COUNT && proto_methods[method].in_worker;
}

/*
 * The identity's k-th string in the part's order (cgroup, unit, user_unit,
 * peer_cgroup, slices, user_slices).
 */
static const char *unit_string(const struct jobmsg_identity *i, size_t k)
{
	const struct peer_unit *u = &i->unit;
	const char *fixed[] = {u->cgroup, u->unit, u->user_unit, i->peer_cgroup};

	for (size_t f = 0; f < ARRAY_SIZE(fixed); f++)
		if (fixed[f] && k-- == 0)
			return fixed[f];
	if (k < u->n_slices)
		return u->slices[k];
	k -= u->n_slices;
	return k < u->n_user_slices ? u->user_slices[k] : NULL;
}

int jobmsg_identity_encode(const struct jobmsg_identity *i, char **ret, size_t *ret_len)
{
	const struct peer_unit *u = &i->unit;
	struct jobmsg_ident_header h = {
		.uid = i->uid,
		.gid = i->gid,
		.pid = i->pid,
		.n_groups = (uint32_t)i->n_groups,
		.unit_present = (u->cgroup ? JOBMSG_UNIT_CGROUP : 0) |
				(u->unit ? JOBMSG_UNIT_UNIT : 0) |
				(u->user_unit ? JOBMSG_UNIT_USER_UNIT : 0) |
				(i->peer_cgroup ? JOBMSG_UNIT_PEER_CGROUP : 0),
		.n_slices = (uint16_t)u->n_slices,
		.n_user_slices = (uint16_t)u->n_user_slices,
	};
	const char *str;
	size_t unit_len = 0, len;
	char *buf, *p;

	if (i->n_groups > JOBMSG_MAX_GROUPS || u->n_slices > UINT16_MAX ||
	    u->n_user_slices > UINT16_MAX)
		return -E2BIG;
	for (size_t k = 0; (str = unit_string(i, k)); k++) {
		/* An empty string would not decode: the decoder takes none. */
		if (!str[0])
			return -EINVAL;
		unit_len += strlen(str) + 1;
	}
	if (unit_len > UINT32_MAX / 2)
		return -E2BIG;
	h.unit_len = (uint32_t)unit_len;
	len = sizeof(h) + i->n_groups * sizeof(uint32_t) + unit_len;
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, &h, sizeof(h));
	p = buf + sizeof(h);
	for (size_t k = 0; k < i->n_groups; k++) {
		uint32_t g = i->groups[k];

		memcpy(p, &g, sizeof(g));
		p += sizeof(g);
	}
	for (size_t k = 0; (str = unit_string(i, k)); k++) {
		size_t l = strlen(str) + 1;

		memcpy(p, str, l);
		p += l;
	}
	*ret = buf;
	*ret_len = len;
	return 0;
}

int jobmsg_encode(unsigned method, uint32_t flags, int64_t id, const char *ident, size_t ident_len,
		  const char *params, size_t params_len, char **ret, size_t *ret_len)
{
	struct jobmsg_header h = {.magic = JOBMSG_MAGIC,
				  .version = JOBMSG_VERSION,
				  .method = (uint16_t)method,
				  .flags = flags,
				  .ident_len = (uint32_t)ident_len,
				  .id = id,
				  .params_len = (uint32_t)params_len};
	size_t len;
	char *buf;

	if (!method_valid(method) || (flags & ~(uint32_t)_JOBMSG_F_ALL))
		return -EINVAL;
	if (ident_len > UINT32_MAX / 2 || params_len > UINT32_MAX / 2)
		return -E2BIG;
	len = sizeof(h) + ident_len + params_len + 1;
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), ident, ident_len);
	if (params_len > 0)
		memcpy(buf + sizeof(h) + ident_len, params, params_len);
	buf[len - 1] = '\0';
	*ret = buf;
	*ret_len = len;
	return 0;
}

/* The next non-empty NUL-terminated string of [*p, end), or NULL. */
static const char *next_string(const char **p, const char *end)
{
	const char *s = *p, *nul;

	if (s >= end)
		return NULL;
	nul = memchr(s, '\0', (size_t)(end - s));
	if (!nul || nul == s)
		return NULL;
	*p = nul + 1;
	return s;
}

static int strv_decode(const char **p, const char *end, size_t n, char ***ret, size_t *ret_n)
{
	for (size_t k = 0; k < n; k++) {
		const char *s = next_string(p, end);
		int r;

		if (!s)
			return -EBADMSG;
		r = peer_unit_strv_push(ret, ret_n, s);
		if (r < 0)
			return r;
	}
	return 0;
}

static int string_decode(const char **p, const char *end, bool present, char **ret)
{
	const char *s;

	if (!present)
		return 0;
	s = next_string(p, end);
	if (!s)
		return -EBADMSG;
	*ret = strdup(s);
	return *ret ? 0 : -ENOMEM;
}

static int unit_decode(const struct jobmsg_ident_header *h, const char *p, const char *end,
		       struct jobmsg_identity *i)
{
	struct peer_unit *u = &i->unit;
	int r;

	if (h->unit_present & ~(unsigned)_JOBMSG_UNIT_ALL)
		return -EBADMSG;
	r = string_decode(&p, end, h->unit_present & JOBMSG_UNIT_CGROUP, &u->cgroup);
	if (r == 0)
		r = string_decode(&p, end, h->unit_present & JOBMSG_UNIT_UNIT, &u->unit);
	if (r == 0)
		r = string_decode(&p, end, h->unit_present & JOBMSG_UNIT_USER_UNIT, &u->user_unit);
	if (r == 0)
		r = string_decode(&p, end, h->unit_present & JOBMSG_UNIT_PEER_CGROUP,
				  &i->peer_cgroup);
	if (r == 0)
		r = strv_decode(&p, end, h->n_slices, &u->slices, &u->n_slices);
	if (r == 0)
		r = strv_decode(&p, end, h->n_user_slices, &u->user_slices, &u->n_user_slices);
	/* All of the part, and nothing after. */
	if (r == 0 && p != end)
		r = -EBADMSG;
	return r;
}

static int identity_decode(const char *buf, size_t len, bool sweep, struct jobmsg_identity *ret)
{
	struct jobmsg_ident_header h;
	struct jobmsg_identity i = {};
	const char *p;
	int r;

	if (len < sizeof(h))
		return -EBADMSG;
	memcpy(&h, buf, sizeof(h));
	if (h.reserved != 0 || h.uid == (uint32_t)-1 || h.pid < 0 ||
	    h.n_groups > JOBMSG_MAX_GROUPS ||
	    len - sizeof(h) != (uint64_t)h.n_groups * sizeof(uint32_t) + h.unit_len)
		return -EBADMSG;
	/* A sweep names a user and nothing more; a request always has a caller with a gid. */
	if (sweep ? (h.gid != (uint32_t)-1 || h.pid != 0 || h.n_groups != 0 || h.unit_len != 0)
		  : h.gid == (uint32_t)-1)
		return -EBADMSG;
	i.uid = h.uid;
	i.gid = h.gid;
	i.pid = h.pid;
	i.groups = calloc((size_t)h.n_groups + 1, sizeof(gid_t));
	if (!i.groups)
		return -ENOMEM;
	p = buf + sizeof(h);
	for (size_t k = 0; k < h.n_groups; k++) {
		uint32_t g;

		memcpy(&g, p, sizeof(g));
		p += sizeof(g);
		i.groups[k] = g;
	}
	i.n_groups = h.n_groups;
	r = unit_decode(&h, p, buf + len, &i);
	if (r < 0) {
		jobmsg_identity_done(&i);
		return r;
	}
	*ret = i;
	return 0;
}

int jobmsg_decode(const void *buf, size_t len, struct jobmsg *ret)
{
	const char *b = buf, *params;
	struct jobmsg_header h;
	struct jobmsg j = {};
	bool sweep;
	int r;

	if (len < sizeof(h))
		return -EBADMSG;
	memcpy(&h, b, sizeof(h));
	if (h.magic != JOBMSG_MAGIC || h.version != JOBMSG_VERSION || h.reserved != 0 ||
	    !method_valid(h.method) || (h.flags & ~(uint32_t)_JOBMSG_F_ALL) ||
	    len - sizeof(h) != (uint64_t)h.ident_len + h.params_len + 1)
		return -EBADMSG;
	sweep = h.method == JOBMSG_SWEEP;
	/* Only an attach carries the caller's network namespace; a sweep nothing of a client. */
	if ((h.flags & JOBMSG_F_NETNS) && h.method != PROTO_METHOD_ATTACH)
		return -EBADMSG;
	if (sweep && (h.flags != 0 || h.params_len != 0 || h.id != 0))
		return -EBADMSG;
	params = b + sizeof(h) + h.ident_len;
	/* Text: NUL-terminated, no NUL inside; a request's params are never empty ("{}"). */
	if (params[h.params_len] != '\0' || memchr(params, '\0', h.params_len) ||
	    (!sweep && h.params_len == 0))
		return -EBADMSG;
	r = identity_decode(b + sizeof(h), h.ident_len, sweep, &j.ident);
	if (r < 0)
		return r;
	j.method = h.method;
	j.flags = h.flags;
	j.id = h.id;
	j.params = params;
	j.params_len = h.params_len;
	*ret = j;
	return 0;
}

json_object *jobmsg_identity_to_json(const struct jobmsg_identity *i)
{
	_cleanup_json_ json_object *o = json_object_new_object();
	json_object *g = json_object_new_array();
	int k;

	if (!o) {
		json_object_put(g);
		return NULL;
	}
	k = json_add(o, "uid", json_object_new_int64(i->uid));
	if (k >= 0)
		k = json_add(o, "gid", json_object_new_int64(i->gid));
	if (k >= 0)
		k = json_add(o, "pid", json_object_new_int64(i->pid));
	/* Taken, whatever happened before. */
	if (json_add(o, "groups", g) < 0)
		k = -ENOMEM;
	for (size_t n = 0; k >= 0 && n < i->n_groups; n++)
		k = json_append(g, json_object_new_int64(i->groups[n]));
	if (k >= 0)
		k = peer_unit_to_json(&i->unit, o);
	if (k >= 0 && i->peer_cgroup)
		k = json_add(o, "peer_cgroup", json_object_new_string(i->peer_cgroup));
	return k < 0 ? NULL : TAKE_PTR(o);
}
