/* SPDX-License-Identifier: MIT */
/*
 * A worker's life, from the spawner's fork to its exit: set itself up (its
 * fds, capabilities checked, the system call filter), then the job loop: take
 * a job from the event loop, answer it, write its audit record, and, if the
 * pool may give it more, put the process back as it was before the first job
 * (hygiene.h) and say it is ready (WORKER_READY). All jobs a worker serves
 * are one connection's (so one user's): the pool binds it to the connection
 * of its first job.
 */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "load.h"
#include "policy/policy.h"
#include "sandbox.h"

/* Resident memory a worker may grow by past what it was before its first job. */
#define SERVE_MAX_RSS_GROWTH (64ull * 1024 * 1024)

/* What every worker works with: set up once by the spawner (worker/main.c). */
struct worker_config {
	const struct policy *policy;
	struct load_config load;
	const struct sandbox *sandbox; /* the system call filter each worker installs */
	unsigned max_jobs; /* then exit; 1: a single-use worker */
	uint64_t max_rss_growth; /* resident memory past what it was before the first job */
};

/* In a freshly forked worker: sock is its end of the socket to the event loop. */
_Noreturn void serve_main(const struct worker_config *c, int sock, pid_t parent);
