/* SPDX-License-Identifier: MIT */
/*
 * A directory for unit tests that build trees of owners and modes (they
 * chown, so they run as root; as anyone else they are skipped): a 0755
 * directory under /tmp, made by the group setup and removed by its teardown.
 */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmptree[64];

/* The group setup: tmptree is /tmp/PREFIX-XXXXXX, mode 0755 (nothing when not root). */
static inline int tmptree_setup(const char *prefix)
{
	if (geteuid() != 0)
		return 0;
	snprintf(tmptree, sizeof(tmptree), "/tmp/%s-XXXXXX", prefix);
	if (!mkdtemp(tmptree) || chmod(tmptree, 0755) < 0)
		return -1;
	return 0;
}

static inline int tmptree_teardown(void **state)
{
	char cmd[128];

	if (!tmptree[0])
		return 0;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmptree);
	return system(cmd) == 0 ? 0 : -1;
}

/* At the start of each test: skipped unless root. */
#define TMPTREE_NEED_ROOT()                                                                        \
	do {                                                                                       \
		if (geteuid() != 0)                                                                \
			skip();                                                                    \
	} while (0)
