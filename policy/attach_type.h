/* SPDX-License-Identifier: MIT */
/*
 * Attach types by name, for requests and policies alike. libbpf 1.1.2 names
 * the attach types it knows; the running kernel may know more (e.g.
 * BPF_CGROUP_UNIX_SENDMSG, 50), which are named as the kernel's BTF names
 * them (enum bpf_attach_type, lowercased, without "bpf_"). libbpf's name wins
 * where libbpf knows the value, so names that worked keep working. A decimal
 * number is the same attach type as its name.
 */
#pragma once

#include <stdbool.h>

/* Attach types are bits of a 64-bit mask in the policy. */
#define ATTACH_TYPE_MAX 64

/*
 * Read this kernel's names now (else on first use), so that processes forked
 * later have them without reading its BTF (the daemon, before its workers).
 */
void attach_type_init(void);

/*
 * The attach type s names (libbpf name, kernel name, or decimal number of
 * an attach type libbpf or this kernel knows), or -EINVAL.
 */
int attach_type_from_string(const char *s);
/* libbpf's name of t, else this kernel's, else NULL (unknown here). */
const char *attach_type_to_string(int t);
/*
 * Whether t attaches to cgroups (what attach.cgroups may list): libbpf's cgroup
 * types, and this kernel's newer ones named "cgroup_*".
 */
bool attach_type_is_cgroup(int t);
