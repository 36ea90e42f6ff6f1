/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: ELF executables and shared objects as a client passes
 * them for a uprobe (daemon/worker/elfsym.c), through an fd as the worker reads
 * them: a function by symbol, with and without an offset into it, a file
 * offset, a semaphore by symbol and by offset, and USDT sites (.note.stapsdt).
 *
 * Seeds (corpus/fuzz_elfsym/): small PIE, shared and stripped shared builds
 * of
 *   volatile unsigned short semaphore __attribute__((section(".probes"))) = 1;
 *   int work(int x) { return x + semaphore; }
 *   void _start(void) { for (;;) work(1); }
 * with gcc -Os -nostdlib (-fPIE -pie | -shared -fPIC) -Wl,--build-id=none
 * -Wl,-z,noseparate-code -Wl,-z,max-page-size=64 -Wl,-z,norelro, so that the
 * data segment's addresses are not its file offsets.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon/worker/elfsym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("elf", MFD_CLOEXEC);
	uint64_t off = 0;

	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	(void)elfsym_resolve(fd, "work", 0, ELFSYM_CODE, &off);
	(void)elfsym_resolve(fd, "work", 4, ELFSYM_CODE, &off);
	(void)elfsym_resolve(fd, NULL, size / 2, ELFSYM_CODE, &off);
	(void)elfsym_resolve(fd, "semaphore", 0, ELFSYM_DATA, &off);
	(void)elfsym_resolve(fd, NULL, off, ELFSYM_DATA, &off);
	(void)elfsym_usdt_semaphore_at(fd, off);
	(void)elfsym_usdt_semaphore_at(fd, size / 2);
	close(fd);
	return 0;
}
