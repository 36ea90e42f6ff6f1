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
	HELPER_CLASS_KFUNC,   /* any kfunc call (BPF_PSEUDO_KFUNC_CALL) */
	HELPER_CLASS_UNKNOWN, /* a helper id this table does not know */
	/* the implementer adds further classes here, documented in policy/HELPERS.md */
	_HELPER_CLASS_MAX,
	_HELPER_CLASS_INVALID = -EINVAL,
};

typedef uint64_t helper_class_mask_t;
#define HELPER_CLASS_BIT(c) ((helper_class_mask_t)1 << (c))

/* Class of a helper id (the value of BPF_FUNC_xxx). HELPER_CLASS_UNKNOWN for ids not in the table. */
enum helper_class helper_classify(int helper_id);

/* "bpf_probe_read_kernel" for BPF_FUNC_probe_read_kernel, NULL if unknown. */
const char *helper_name(int helper_id);

/* Policy-file name of a class ("read_kernel_memory"); NULL if out of range. */
const char *helper_class_to_string(enum helper_class c);

/* Class by policy-file name, or -EINVAL. */
enum helper_class helper_class_from_string(const char *s);

/* Highest helper id the table knows. */
int helper_max_id(void);
