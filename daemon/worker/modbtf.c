/* SPDX-License-Identifier: MIT */
#include "modbtf.h"

#include <bpf/btf.h>
#include <dirent.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/macro.h"

#if defined(__x86_64__)
#define MODBTF_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define MODBTF_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "modbtf: add this architecture's AUDIT_ARCH"
#endif

/* bpf()'s cmd is an int: the low 32 bits of the first argument, wherever the ABI keeps them. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define MODBTF_ARG0_LOW offsetof(struct seccomp_data, args[0])
#else
#define MODBTF_ARG0_LOW (offsetof(struct seccomp_data, args[0]) + 4)
#endif

/*
 * Written by hand, not with libseccomp: one rule, seven instructions, and no
 * new library in a root daemon for it. Another ABI (x32, compat) has other
 * syscall numbers and is let through: libbpf here only ever makes native
 * calls, and the filter takes nothing away that a load needs (it is no
 * security boundary, only what libbpf sees).
 */
int modbtf_hide(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MODBTF_AUDIT_ARCH, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_bpf, 0, 2),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, MODBTF_ARG0_LOW),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, BPF_BTF_GET_NEXT_ID, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		/* libbpf's load_module_btfs() ends its walk on ENOENT, without error. */
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOENT & SECCOMP_RET_DATA)),
	};
	struct sock_fprog prog = {.len = ARRAY_SIZE(filter), .filter = filter};

	/*
	 * prctl(), not seccomp(2): bpfbrokerd.service's SystemCallFilter
	 * (@system-service) allows prctl but not seccomp.
	 */
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
		return negative_errno();
	return 0;
}

static bool btf_has_name(const struct btf *btf, const char *name)
{
	/* Types of a split BTF are numbered after vmlinux's: only the module's own. */
	for (uint32_t id = btf__type_cnt(btf__base_btf(btf)); id < btf__type_cnt(btf); id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *n = t ? btf__name_by_offset(btf, t->name_off) : NULL;

		if (n && strcmp(n, name) == 0)
			return true;
	}
	return false;
}

static bool is_module(const struct dirent *e)
{
	return e->d_name[0] != '.' && strcmp(e->d_name, "vmlinux") != 0;
}

int modbtf_find_in(const char *dir, const char *name, char *module, size_t size)
{
	struct btf *vmlinux = NULL;
	DIR *d;
	char path[512];
	struct dirent *e;
	int k = -ENOENT;

	d = opendir(dir);
	if (!d)
		return negative_errno();
	/*
	 * vmlinux's BTF (5 MB, 8 ms to parse) only once there is a module to
	 * read with it: a client's failing loads can ask this at will.
	 */
	while (k == -ENOENT && (e = readdir(d))) {
		struct btf *mod;

		if (!is_module(e))
			continue;
		if (!vmlinux) {
			snprintf(path, sizeof(path), "%s/vmlinux", dir);
			vmlinux = btf__parse_raw(path);
			if (!vmlinux) {
				k = negative_errno();
				break;
			}
		}
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		mod = btf__parse_split(path, vmlinux);
		if (mod && btf_has_name(mod, name)) {
			snprintf(module, size, "%s", e->d_name);
			k = 0;
		}
		btf__free(mod);
	}
	closedir(d);
	btf__free(vmlinux);
	return k;
}

int modbtf_find(const char *name, char *module, size_t size)
{
	/* The last answer, for the process's life: a worker asks again for the same name. */
	static char last_name[128], last_module[64];
	static int last = 1;
	int k;

	if (last <= 0 && strcmp(name, last_name) == 0) {
		if (last == 0)
			snprintf(module, size, "%s", last_module);
		return last;
	}
	/*
	 * Into a buffer of its own: the cache changes only as a whole, so a name
	 * too long to keep (or a walk failing half-way) never pairs the kept
	 * name with another name's module.
	 */
	char found[sizeof(last_module)] = "";

	k = modbtf_find_in("/sys/kernel/btf", name, found, sizeof(found));
	if (k == 0)
		snprintf(module, size, "%s", found);
	if (strlen(name) < sizeof(last_name)) {
		snprintf(last_name, sizeof(last_name), "%s", name);
		snprintf(last_module, sizeof(last_module), "%s", found);
		last = k;
	} else {
		last = 1;
	}
	return k;
}
