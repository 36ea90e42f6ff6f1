/* SPDX-License-Identifier: MIT */
#include "modbtf.h"

#include <bpf/btf.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/macro.h"

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

int modbtf_find_in(const char *dir, const char *name, char *module, size_t size)
{
	struct btf *vmlinux;
	DIR *d;
	char path[512];
	struct dirent *e;
	int k = -ENOENT;

	snprintf(path, sizeof(path), "%s/vmlinux", dir);
	vmlinux = btf__parse_raw(path);
	if (!vmlinux)
		return negative_errno();
	d = opendir(dir);
	while (d && k == -ENOENT && (e = readdir(d))) {
		struct btf *mod;

		if (e->d_name[0] == '.' || strcmp(e->d_name, "vmlinux") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		mod = btf__parse_split(path, vmlinux);
		if (mod && btf_has_name(mod, name)) {
			snprintf(module, size, "%s", e->d_name);
			k = 0;
		}
		btf__free(mod);
	}
	if (d)
		closedir(d);
	btf__free(vmlinux);
	return k;
}

int modbtf_find(const char *name, char *module, size_t size)
{
	return modbtf_find_in("/sys/kernel/btf", name, module, size);
}
