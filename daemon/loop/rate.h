/* SPDX-License-Identifier: MIT */
/*
 * The per-user rate of loads and attaches (max_loads_per_minute), counted in
 * the event loop, across all of a user's connections, before a worker is
 * spent: a sliding window of one minute, estimated from this minute's count
 * and the last one's (weighted by how much of it still falls in the window).
 * In memory: a restart starts every user's window afresh.
 */
#pragma once

#include <stdint.h>
#include <sys/types.h>

struct rate_limiter;

struct rate_limiter *rate_limiter_new(void);
struct rate_limiter *rate_limiter_free(struct rate_limiter *r);

/*
 * Count one request of uid at now_usec (CLOCK_MONOTONIC) against max per
 * minute: 0, or -EDQUOT (not counted) with *ret_count the requests in the
 * last minute. -ENOMEM if a new user can't be tracked.
 */
int rate_take(struct rate_limiter *r, uid_t uid, uint64_t max, uint64_t now_usec,
	      uint64_t *ret_count);
