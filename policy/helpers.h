/* SPDX-License-Identifier: MIT */
/*
 * Helper privilege classes: every BPF helper id of the UAPI __BPF_FUNC_MAPPER
 * is put into exactly one class. Policies grant classes, never single helpers.
 * Pure table lookups: no allocation, no I/O.
 */
#pragma once

#include <stdbool.h>
#include <errno.h>
#include <stdint.h>

enum helper_class {
	HELPER_CLASS_BASE, /* map lookup/update/delete, time, random, tail calls, loops, ... */
	HELPER_CLASS_READ_KERNEL_MEMORY,
	HELPER_CLASS_READ_USER_MEMORY,
	HELPER_CLASS_WRITE_USER_MEMORY,
	HELPER_CLASS_WRITE_GLOBAL_LOGS,
	HELPER_CLASS_SIGNAL,
	HELPER_CLASS_OVERRIDE_RETURN,
	HELPER_CLASS_KFUNC, /* any kfunc call (BPF_PSEUDO_KFUNC_CALL) */
	HELPER_CLASS_UNKNOWN, /* a helper id this table does not know */
	/* Further classes, documented in policy/HELPERS.md. */
	HELPER_CLASS_CURRENT_TASK, /* pid/tgid, uid/gid, comm, cgroup ids, CPU of the current task
				    */
	HELPER_CLASS_NET_READ, /* read packets, socket identity, routes, socket lookups */
	HELPER_CLASS_NET_MODIFY, /* rewrite packets, checksums, headers, skb metadata */
	HELPER_CLASS_REDIRECT, /* steer packets, messages or connections elsewhere */
	HELPER_CLASS_PERF_EVENT, /* perf event output and counters */
	HELPER_CLASS_SYSCTL, /* read and rewrite sysctl accesses */
	HELPER_CLASS_SOCKET_OPTIONS, /* set/getsockopt, sock_ops, TCP header options, syncookies */
	HELPER_CLASS_SECURITY, /* IMA hashes, exec (bprm) options */
	HELPER_CLASS_SYSCALL, /* bpf(2), close(2), BTF lookups (BPF_PROG_TYPE_SYSCALL) */
	HELPER_CLASS_INJECT_INPUT, /* report key presses and pointer motion (lirc programs) */
	/*
	 * Grant-only classes (no helper is in them, like kfunc): the classes
	 * whose helpers act on the task the program runs in, for programs
	 * where that task can be anyone's (see helper_class_acts_on_task()).
	 */
	HELPER_CLASS_READ_USER_MEMORY_ANY_TASK,
	HELPER_CLASS_WRITE_USER_MEMORY_ANY_TASK,
	HELPER_CLASS_SIGNAL_ANY_TASK,
	_HELPER_CLASS_MAX,
	_HELPER_CLASS_INVALID = -EINVAL,
};

typedef uint64_t helper_class_mask_t;
#define HELPER_CLASS_BIT(c) ((helper_class_mask_t)1 << (c))

/* Class of a helper id (the value of BPF_FUNC_xxx). HELPER_CLASS_UNKNOWN for ids not in the table.
 */
enum helper_class helper_classify(int helper_id);

/* "bpf_probe_read_kernel" for BPF_FUNC_probe_read_kernel, NULL if unknown. */
const char *helper_name(int helper_id);
/* helper_name(), or "helper N" for an id this libbpf has no name for (in buf). */
const char *helper_display_name(int helper_id, char buf[static 32]);

/* Policy-file name of a class ("read_kernel_memory"); NULL if out of range. */
const char *helper_class_to_string(enum helper_class c);

/* Class by policy-file name, or -EINVAL. */
enum helper_class helper_class_from_string(const char *s);

/*
 * Classes whose helpers read, write or signal *the task the program runs in*
 * (probe_read_user, probe_write_user, send_signal, ...): what they reach
 * depends on whose task that is, so a policy's grant of them covers only
 * programs that run in the caller's own processes, and the matching
 * *_any_task class (returned here, or _HELPER_CLASS_INVALID for classes that
 * mean the same in every program) covers the rest. See policy/HELPERS.md.
 */
enum helper_class helper_class_any_task(enum helper_class c);

/* Highest helper id the table knows. */
int helper_max_id(void);

/*
 * True when the table classifies helper_id explicitly; false for ids out of
 * range, for 0 (BPF_FUNC_unspec) and for any id the table has no entry for.
 * Lets the tests catch a helper the UAPI header has but the table forgot.
 */
bool helper_is_known(int helper_id);
