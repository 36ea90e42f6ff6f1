/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: /proc/PID/status text as the uprobe checks and the capability checks read it
 * (daemon/shared/procfs.c), through an fd as the worker reads it: the whole process record, and
 * single numeric lines in both bases. Seeds (corpus/fuzz_proc_status/): a process's status as Linux
 * 6.x writes it, a kernel thread's, and one with a line missing.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon/shared/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = {"CapPrm", "CapEff",	   "CapInh", "CapAmb",
					   "CapBnd", "NoNewPrivs", "Pid",    ""};
	struct procfs_status p;
	char *text = NULL;
	uint64_t v;
	int fd = memfd_create("status", MFD_CLOEXEC);

	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	if (procfs_read(fd, &text) < 0) {
		close(fd);
		return 0;
	}
	close(fd);
	/* The text read is the input up to its first NUL. */
	if (strlen(text) > size || memcmp(text, data, strlen(text)) != 0)
		abort();
	if (procfs_status_parse(text, &p) == 0 && p.pid <= 0)
		abort();
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		(void)procfs_status_u64(text, keys[i], 16, &v);
		(void)procfs_status_u64(text, keys[i], 10, &v);
	}
	free(text);
	return 0;
}
