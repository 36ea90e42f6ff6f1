/* SPDX-License-Identifier: MIT */
/* Whether a rootless container could move itself out of the cgroup its device rules confine. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "spec.h"

/*
 * 0 if the container (pid; moved: the hook gave it its cgroup) can reach no
 * writable cgroup.procs above the cgroup its rules are attached to, as far as
 * its cgroup namespace and the config's mounts, linux.namespaces and
 * capabilities tell; -EPERM with a sentence in errbuf if it could.
 */
int hook_confine_check(pid_t pid, bool moved, const struct hook_spec *sp, char *errbuf,
		       size_t errsize);
