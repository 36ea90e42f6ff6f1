/* SPDX-License-Identifier: MIT */
/*
 * A worker's job loop: take a job from the event loop, answer it, write its
 * audit record, and, if the pool may give it more, put the process back as it
 * was before the first job (hygiene.h) and say it is ready. All jobs a worker
 * serves are one connection's (so one user's): the pool binds it to the
 * connection of its first job.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "load.h"

/* The packet a worker sends once it is ready for its connection's next job. */
#define SERVE_READY 'R'

struct serve_config {
	int sock; /* to the event loop */
	size_t max_job_bytes; /* the largest job packet taken */
	const struct policy *const *policy;
	const struct load_config *load;
	unsigned max_jobs; /* then exit; 1: a single-use worker, as before */
	uint64_t max_rss_growth; /* resident memory past what it was before the first job */
};

_Noreturn void serve_jobs(const struct serve_config *cfg);
