/* SPDX-License-Identifier: MIT */
/* The spawner: forks workers on the event loop's request, from its own lean image. */
#pragma once

#include <sys/types.h>

#include "serve.h"

/*
 * First thing after exec: signals as the spawner and its workers want them,
 * die with the daemon (parent), a name for ps. -ESRCH if parent is gone.
 */
int spawner_prepare(pid_t parent);
/*
 * Serve the event loop on SPAWN_SOCKET_FD until it closes it, then wait for
 * the last worker and exit. Capabilities already reduced (caps_spawner_init());
 * own: the spawner's system call filter, installed first (sandbox.h).
 */
_Noreturn void spawner_run(const struct worker_config *cfg, const struct sandbox *own);
