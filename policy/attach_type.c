/* SPDX-License-Identifier: MIT */
#include "attach_type.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * The kernel's names, read once from its BTF. The daemon reads them at start
 * (attach_type_init()), so that its workers, forked from it, have them:
 * parsing vmlinux's BTF costs each single-use worker milliseconds. Other
 * processes (tests, tools) read them on first use. A process that can't
 * read the BTF names only what libbpf knows.
 */
static char *kernel_names[ATTACH_TYPE_MAX];
static bool kernel_names_read;

static void kernel_names_load(void)
{
	struct btf *btf;
	int n;

	if (kernel_names_read)
		return;
	kernel_names_read = true;
	btf = btf__load_vmlinux_btf();
	if (!btf)
		return;
	n = (int)btf__type_cnt(btf);
	for (int id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, (uint32_t)id);
		const struct btf_enum *e;
		const char *name = btf__name_by_offset(btf, t->name_off);

		if (!btf_is_enum(t) || !name || strcmp(name, "bpf_attach_type") != 0)
			continue;
		e = btf_enum(t);
		for (unsigned i = 0; i < btf_vlen(t); i++, e++) {
			const char *v = btf__name_by_offset(btf, e->name_off);
			char *lower;

			/* __MAX_BPF_ATTACH_TYPE and anything not BPF_* is no attach type. */
			if (!v || strncmp(v, "BPF_", 4) != 0 || e->val < 0 ||
			    e->val >= ATTACH_TYPE_MAX || kernel_names[e->val])
				continue;
			lower = strdup(v + 4);
			if (!lower)
				break;
			for (char *c = lower; *c; c++)
				*c = (char)tolower((unsigned char)*c);
			kernel_names[e->val] = lower;
		}
		break;
	}
	btf__free(btf);
}

void attach_type_init(void)
{
	kernel_names_load();
}

const char *attach_type_to_string(int t)
{
	const char *s;

	if (t < 0 || t >= ATTACH_TYPE_MAX)
		return NULL;
	s = libbpf_bpf_attach_type_str((enum bpf_attach_type)t);
	if (s)
		return s;
	kernel_names_load();
	return kernel_names[t];
}

/* "0" to "63", no sign, no leading zero: -EINVAL for anything else. */
static int parse_number(const char *s)
{
	int v = 0;

	if (!s[0] || (s[0] == '0' && s[1]) || strlen(s) > 2)
		return -EINVAL;
	for (const char *c = s; *c; c++) {
		if (*c < '0' || *c > '9')
			return -EINVAL;
		v = v * 10 + (*c - '0');
	}
	return v < ATTACH_TYPE_MAX ? v : -EINVAL;
}

int attach_type_from_string(const char *s)
{
	int t;

	if (!s)
		return -EINVAL;
	t = parse_number(s);
	if (t >= 0)
		return attach_type_to_string(t) ? t : -EINVAL;
	for (t = 0; t < ATTACH_TYPE_MAX; t++) {
		const char *n = attach_type_to_string(t);

		if (n && strcmp(n, s) == 0)
			return t;
	}
	/* The kernel's name of a value libbpf names otherwise (trace_raw_tp for libbpf's
	 * raw_tp...). */
	kernel_names_load();
	for (t = 0; t < ATTACH_TYPE_MAX; t++)
		if (kernel_names[t] && strcmp(kernel_names[t], s) == 0)
			return t;
	return -EINVAL;
}

bool attach_type_is_cgroup(int t)
{
	switch (t) {
	case BPF_CGROUP_INET_INGRESS:
	case BPF_CGROUP_INET_EGRESS:
	case BPF_CGROUP_INET_SOCK_CREATE:
	case BPF_CGROUP_SOCK_OPS:
	case BPF_CGROUP_DEVICE:
	case BPF_CGROUP_INET4_BIND:
	case BPF_CGROUP_INET6_BIND:
	case BPF_CGROUP_INET4_CONNECT:
	case BPF_CGROUP_INET6_CONNECT:
	case BPF_CGROUP_INET4_POST_BIND:
	case BPF_CGROUP_INET6_POST_BIND:
	case BPF_CGROUP_UDP4_SENDMSG:
	case BPF_CGROUP_UDP6_SENDMSG:
	case BPF_CGROUP_SYSCTL:
	case BPF_CGROUP_UDP4_RECVMSG:
	case BPF_CGROUP_UDP6_RECVMSG:
	case BPF_CGROUP_GETSOCKOPT:
	case BPF_CGROUP_SETSOCKOPT:
	case BPF_CGROUP_INET_SOCK_RELEASE:
	case BPF_CGROUP_INET4_GETPEERNAME:
	case BPF_CGROUP_INET6_GETPEERNAME:
	case BPF_CGROUP_INET4_GETSOCKNAME:
	case BPF_CGROUP_INET6_GETSOCKNAME:
		return true;
	default: {
		/* Newer than libbpf: this kernel's cgroup_unix_* hooks (49-53 on 6.18) and such. */
		const char *n = attach_type_to_string(t);

		return n && strncmp(n, "cgroup_", 7) == 0;
	}
	}
}
