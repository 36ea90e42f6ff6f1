/* SPDX-License-Identifier: MIT */
#include "fdinfo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

int fdinfo_get_u64(int fd, const char *key, uint64_t *ret)
{
	_cleanup_fclose_ FILE *f = NULL;
	char path[64], line[256];
	size_t key_len = strlen(key);

	if (fd < 0)
		return -EBADF;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return negative_errno();
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;
		char *end;

		if (strncmp(line, key, key_len) != 0 || line[key_len] != ':')
			continue;
		errno = 0;
		v = strtoull(line + key_len + 1, &end, 0);
		if (errno || end == line + key_len + 1 || (*end != '\n' && *end != '\0'))
			return -EINVAL;
		*ret = v;
		return 0;
	}
	return -ENODATA;
}
