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
