/* SPDX-License-Identifier: MIT */
/* A /proc text file read whole, from its start, within PROCFS_MAX_BYTES. */
#include "procfs.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "macro.h"

int procfs_read(int fd, char **ret)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, size = 4096;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	buf = malloc(size);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (len + 1 >= size) {
			char *nb;

			if (size >= PROCFS_MAX_BYTES)
				return -EFBIG;
			nb = realloc(buf, size * 2);
			if (!nb)
				return -ENOMEM;
			buf = nb;
			size *= 2;
		}
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*ret = TAKE_PTR(buf);
	return 0;
}
