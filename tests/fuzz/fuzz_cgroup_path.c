/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: /proc/PID/cgroup text as the event loop reads it for the caller's unit
 * identity (common/cgroupfs.c, daemon/shared/procfs.c): the unified hierarchy's "0::/PATH" line
 * found and the path split into the components that name slices and units. Seeds
 * (corpus/fuzz_cgroup_path/): unified and hybrid hierarchies, a user manager's unit, an escaped
 * name, and a path with "..".
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cgroupfs.h"
#include "daemon/shared/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *comp[PROCFS_CGROUP_MAX_DEPTH];
	char *text = malloc(size + 1), *path = NULL;
	size_t n = 0;

	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	if (cgroupfs_parse(text, &path) == 0) {
		size_t len = strlen(path);

		/* What the line held after "0::", starting with its '/', with no "." or "..". */
		if (path[0] != '/' || len + 3 >= CGROUPFS_LINE_MAX || strchr(path, '\n') ||
		    strstr(path, "//") || strstr(path, "/./") || strstr(path, "/../") ||
		    (len > 1 && path[len - 1] == '/') || !cgroupfs_path_is_valid(path))
			abort();
		if (procfs_cgroup_split(path, comp, &n) == 0) {
			if (n > PROCFS_CGROUP_MAX_DEPTH)
				abort();
			for (size_t i = 0; i < n; i++)
				if (!comp[i][0] || strchr(comp[i], '/') ||
				    strcmp(comp[i], ".") == 0 || strcmp(comp[i], "..") == 0 ||
				    comp[i] < path || comp[i] >= path + len)
					abort();
		}
		free(path);
	}
	free(text);
	return 0;
}
