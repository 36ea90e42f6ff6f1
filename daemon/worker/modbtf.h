/* SPDX-License-Identifier: MIT */
/*
 * Kernel modules' BTF, which libbpf 1.1.2 cannot walk in a worker.
 *
 * When vmlinux's BTF has no match (a CO-RE relocation without candidates,
 * a __ksym or kfunc extern, a BTF attach target), libbpf 1.1.2 lists every
 * BTF object with BPF_BTF_GET_NEXT_ID to find modules' BTF. That command
 * needs CAP_SYS_ADMIN, which a load never has, and libbpf 1.1.2 takes its
 * EPERM as fatal: a load root's would pass fails, and a missing target is
 * EPERM instead of ESRCH. libbpf 1.3 skips modules without CAP_SYS_ADMIN;
 * the workers' seccomp filter makes 1.1.2 do the same (sandbox.h; SECURITY.md,
 * "Modules' BTF").
 */
#pragma once

#include <stddef.h>

/*
 * The kernel module whose BTF (/sys/kernel/btf/MODULE, world-readable) has
 * a type named name, for messages: "which module the load needed". 0 and
 * *module written if one has it; -ENOENT if none does (or there are no
 * modules' BTF: then vmlinux's is not even read); another -errno if
 * vmlinux's BTF can't be read. modbtf_find() keeps its last answer for the
 * life of the process.
 */
int modbtf_find(const char *name, char *module, size_t size);
/* The same under another directory than /sys/kernel/btf (for tests). */
int modbtf_find_in(const char *dir, const char *name, char *module, size_t size);
