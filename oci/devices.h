/* SPDX-License-Identifier: MIT */
/*
 * OCI linux.resources.devices rules as a cgroup_device program of raw
 * instructions, with the semantics runc 1.1 or crun 1.8 give them (their
 * default rules included). Pure: no I/O, runs in the caller (the OCI hook,
 * examples/device-allow), never in the daemon.
 */
#pragma once

#include <linux/bpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Which runtime's reading of the rules the program implements. */
enum oci_runtime {
	/*
	 * Unknown runtime: a device is allowed only if runc and crun both
	 * allow it (the program runs crun's rules, then runc's), and the rules
	 * must be valid for runc.
	 */
	OCI_RUNTIME_BOTH = 0,
	OCI_RUNTIME_RUNC,
	OCI_RUNTIME_CRUN,
};

/* One entry of linux.resources.devices, as the JSON has it (absent fields marked). */
struct oci_device_rule {
	bool allow;
	const char *type; /* "a", "b", "c", or NULL when absent */
	bool has_major, has_minor;
	int64_t major, minor; /* -1 (or absent): any */
	const char *access; /* subset of "rwm", or NULL when absent */
};

struct oci_device_config {
	const struct oci_device_rule *rules;
	size_t n_rules;
	/*
	 * linux.devices[].path: runc drops its default rule for a device the
	 * config lists there by the same path (/dev/null, /dev/full, ...).
	 */
	const char *const *device_paths;
	size_t n_device_paths;
};

/*
 * Bounds the rules: 2048 of them, 8 instructions at most each, twice (both
 * runtimes), so that a jump over the crun part fits its 16-bit offset.
 */
#define OCI_DEVICES_MAX_RULES 2048

/*
 * The program for config under runtime: *ret (free() it) holds *ret_n
 * instructions for BPF_PROG_TYPE_CGROUP_DEVICE (license "GPL" will do).
 * -EINVAL for rules the runtime itself refuses (runc: a type other than
 * a, b, c, an empty access, a major or minor above 2^32 - 1, a deny that
 * would punch a hole into a wildcard allow), with a sentence in errbuf;
 * -E2BIG for more than OCI_DEVICES_MAX_RULES rules; -ENOMEM.
 */
int oci_devices_program(const struct oci_device_config *config, enum oci_runtime runtime,
			struct bpf_insn **ret, size_t *ret_n, char *errbuf, size_t errsize);

/* "runc", "crun" or "both" to enum oci_runtime; -EINVAL for another name. */
int oci_runtime_from_name(const char *name, enum oci_runtime *ret);
const char *oci_runtime_name(enum oci_runtime runtime);
