/* SPDX-License-Identifier: MIT */
#include "rate.h"

#include <errno.h>
#include <stdlib.h>

#include "common/macro.h"

#define MINUTE_USEC (60ull * 1000000)

struct rate_entry {
	uid_t uid;
	uint64_t minute; /* now / MINUTE_USEC of cur */
	uint64_t cur, prev; /* requests in that minute, and in the one before */
};

struct rate_limiter {
	struct rate_entry *v;
	size_t n, cap;
};

struct rate_limiter *rate_limiter_new(void)
{
	return calloc(1, sizeof(struct rate_limiter));
}

struct rate_limiter *rate_limiter_free(struct rate_limiter *r)
{
	if (r) {
		free(r->v);
		free(r);
	}
	return NULL;
}

/* Entries idle for two minutes count nothing any more: reuse their slots. */
static struct rate_entry *rate_find(struct rate_limiter *r, uid_t uid, uint64_t minute)
{
	struct rate_entry *stale = NULL;

	for (size_t i = 0; i < r->n; i++) {
		if (r->v[i].uid == uid)
			return &r->v[i];
		if (!stale && r->v[i].minute + 2 <= minute)
			stale = &r->v[i];
	}
	if (stale) {
		*stale = (struct rate_entry){.uid = uid, .minute = minute};
		return stale;
	}
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct rate_entry *v = reallocarray(r->v, cap, sizeof(*v));

		if (!v)
			return NULL;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n] = (struct rate_entry){.uid = uid, .minute = minute};
	return &r->v[r->n++];
}

int rate_take(struct rate_limiter *r, uid_t uid, uint64_t max, uint64_t now_usec,
	      uint64_t *ret_count)
{
	uint64_t minute = now_usec / MINUTE_USEC, into = now_usec % MINUTE_USEC, estimate;
	struct rate_entry *e = rate_find(r, uid, minute);

	if (!e)
		return -ENOMEM;
	if (e->minute != minute) {
		e->prev = e->minute + 1 == minute ? e->cur : 0;
		e->cur = 0;
		e->minute = minute;
	}
	/* The part of the previous minute still inside the last 60 s, rounded up. */
	estimate = e->cur + (e->prev * (MINUTE_USEC - into) + MINUTE_USEC - 1) / MINUTE_USEC;
	if (estimate >= max) {
		*ret_count = estimate;
		return -EDQUOT;
	}
	e->cur++;
	*ret_count = estimate + 1;
	return 0;
}
