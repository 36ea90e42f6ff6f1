/* SPDX-License-Identifier: MIT */
/*
 * TEMPORARY: net_enforce.h answered with -ENOSYS until i21-netjoin's objects/net/net_enforce.c
 * is merged (then this file goes).
 */
#include <errno.h>
#include <string.h>

#include "objects/net/net_enforce.h"

int net_enforce_apply(struct bpfbroker *b, const char *tag, const struct net_settings *s,
		      const char *cgroup_path, char **error)
{
	*error = strdup("net_enforce.c is not merged yet");
	return -ENOSYS;
}

int net_enforce_remove(struct bpfbroker *b, const char *tag, char **error)
{
	return 0;
}
