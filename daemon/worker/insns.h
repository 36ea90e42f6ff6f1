/* SPDX-License-Identifier: MIT */
/*
 * Raw instruction loads (method "load_insns"), run only in workers: a blob
 * of struct bpf_insn, as container runtimes generate cgroup device programs,
 * checked and described as an object with one program and no maps, so the
 * same policy_decide() as for ELF objects decides on it; then loaded with
 * BPF_PROG_LOAD.
 *
 * What a raw load may hold is what the instruction allow-list (insncheck.h)
 * lets any program hold, decided as for an object: helper calls (by class),
 * kfunc calls into vmlinux (class kfunc), references to vmlinux's variables
 * and functions (BPF_PSEUDO_BTF_ID: class read_kernel_memory), calls and
 * callback references to subprograms inside the blob, plain 64-bit
 * constants. It may not reference maps (BPF_PSEUDO_MAP_FD/IDX/VALUE/
 * IDX_VALUE), nor kernel modules' kfuncs and variables: their immediates
 * are fds (of the worker's table) or indexes into an fd array the broker
 * never passes, and device programs need no maps. Everything in the blob
 * counts, reachable or not: the kernel loads it all.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

/*
 * Before reading: is a blob of size bytes possibly a program within
 * max_insns? -EBADMSG (empty, not a multiple of 8) or -E2BIG, with *error
 * naming prog_name; 0 if so.
 */
int insns_check_size(uint64_t size, uint64_t max_insns, const char *prog_name, char **error);

/*
 * Describe the blob as one program of type (libbpf names; attach_type may
 * be NULL) called prog_name. resolve_kfuncs: name kfunc calls from the
 * kernel's BTF (else "btf_id:N"). Errors, with *error: -EINVAL unknown type
 * names, -EBADMSG malformed instructions, -EPERM what raw loads may not hold.
 */
int insns_describe(const void *insns, size_t size, const char *prog_name, const char *type,
		   const char *attach_type, bool resolve_kfuncs, struct object_desc *ret,
		   char **error);

/* BPF_PROG_LOAD of the described program (the caller raised the capabilities). fd or -errno. */
int insns_load(const void *insns, size_t size, const struct object_program *p, const char *license,
	       char *log, size_t log_size);
