/* SPDX-License-Identifier: MIT */
/*
 * Where a uprobe goes: symbols of an ELF executable or shared object, read
 * from an fd the client opened, turned into the file offsets the kernel
 * takes (perf_event_attr config2 and the USDT semaphore's ref_ctr_offset).
 * Pure: no policy, no kernel; the file is hostile input.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Largest symbol table read (.symtab or .dynsym); a bigger one is -EFBIG. */
#define ELFSYM_MAX_SYMTAB_BYTES (64u * 1024 * 1024)

enum elfsym_kind {
	ELFSYM_CODE, /* a probe location: in the file bytes of an executable segment */
	ELFSYM_DATA, /* a USDT semaphore: in the file bytes of a writable segment */
};

/*
 * The file offset of symbol + add, or with symbol NULL check that add is a
 * file offset of the right kind, in the ELF file fd (read with pread, never
 * mapped: the client may change it meanwhile). For a symbol the file offset
 * is its value (an address: absolute in executables, relative in PIE and
 * shared objects) minus its segment's p_vaddr plus the segment's p_offset.
 * .symtab is searched first, then .dynsym. With add, it must lie inside the
 * symbol's size (when the symbol has one).
 *
 * Errors: -ENOEXEC not an ELF executable or shared object, -ENOENT no such
 * defined symbol, -ENOTUNIQ several symbols of that name at different
 * addresses and none the only global one, -ERANGE outside the symbol or
 * outside every segment of the kind, -EFBIG symbol table too large, -EIO
 * read errors.
 */
int elfsym_resolve(int fd, const char *symbol, uint64_t add, enum elfsym_kind kind,
		   uint64_t *ret_offset);

/*
 * Is file offset the place of a USDT probe (a "stapsdt" note in a
 * .note.stapsdt section, as <sys/sdt.h> writes them) that has a semaphore,
 * in the ELF file fd? The kernel keeps one semaphore per file and place and
 * refuses probes there with another one, or none: a probe without the
 * semaphore would make every USDT user's probe there fail. 1 yes, 0 no, or
 * the errors of elfsym_resolve(); -EFBIG also for a note section over
 * ELFSYM_MAX_SYMTAB_BYTES. A file without section headers has no such notes
 * as far as this can tell.
 */
int elfsym_usdt_semaphore_at(int fd, uint64_t offset);
