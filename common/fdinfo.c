/* SPDX-License-Identifier: MIT */
/* One number from /proc/self/fdinfo/FD, read with one open and one read (no stdio). */
#include "fdinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"

/*
 * A BPF map's fdinfo is about 200 bytes, a program's or link's under 400.
 * Read whole into the stack: this runs for every map of every load (the
 * ledger's memlock), where stdio's FILE, its buffer and its fstat cost more
 * than the read. Longer text (fdinfo of other kinds of fds, which the kernel
 * may grow) is read in further chunks; a line is never longer than the buffer
 * can keep whole with the one before it cut away.
 */
#define FDINFO_CHUNK 2048

static int value_of(const char *line, size_t key_len, uint64_t *ret)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(line + key_len + 1, &end, 0);
	if (errno || end == line + key_len + 1 || (*end != '\n' && *end != '\0'))
		return -EINVAL;
	*ret = v;
	return 0;
}

int fdinfo_get_u64(int fd, const char *key, uint64_t *ret)
{
	_cleanup_close_ int f = -EBADF;
	char path[64], buf[FDINFO_CHUNK + 1];
	size_t key_len = strlen(key), have = 0;

	if (fd < 0)
		return -EBADF;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return negative_errno();
	for (;;) {
		ssize_t n = read(f, buf + have, FDINFO_CHUNK - have);
		char *line = buf, *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return negative_errno();
		have += (size_t)n;
		buf[have] = '\0';
		/* Whole lines; at the end of the file, the last one even without its newline. */
		while ((nl = strchr(line, '\n')) || (n == 0 && *line)) {
			if (nl)
				*nl = '\0';
			if (strncmp(line, key, key_len) == 0 && line[key_len] == ':')
				return value_of(line, key_len, ret);
			if (!nl)
				break;
			line = nl + 1;
		}
		if (n == 0)
			return -ENODATA;
		have -= (size_t)(line - buf);
		if (have == FDINFO_CHUNK)
			return -EINVAL; /* a line longer than any the kernel writes */
		memmove(buf, line, have);
	}
}
