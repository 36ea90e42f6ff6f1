/* SPDX-License-Identifier: MIT */
/* One worker's life: one job from the event loop, run, answered. */
#pragma once

#include <sys/types.h>

#include "load.h"
#include "policy/policy.h"
#include "sandbox.h"

/* What every worker works with: set up once by the spawner (worker/main.c). */
struct worker_config {
	const struct policy *policy;
	struct load_config load;
	const struct sandbox *sandbox; /* the system call filter each worker installs */
};

/* In a freshly forked worker: sock is its end of the socket to the event loop. */
_Noreturn void serve_main(const struct worker_config *c, int sock, pid_t parent);
