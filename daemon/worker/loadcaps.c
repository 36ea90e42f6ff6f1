/* SPDX-License-Identifier: MIT */
/*
 * The capabilities a load raises: CAP_BPF, and CAP_NET_ADMIN or CAP_PERFMON only where the kernel
 * demands them.
 */
#include "job.h"

#include <bpf/bpf.h>

#include "daemon/shared/caps.h"

/* Program types by the capability the kernel demands to load them (kernel/bpf/syscall.c). */
static bool prog_type_needs_net_admin(int t)
{
	switch (t) {
	case BPF_PROG_TYPE_SCHED_CLS:
	case BPF_PROG_TYPE_SCHED_ACT:
	case BPF_PROG_TYPE_XDP:
	case BPF_PROG_TYPE_LWT_IN:
	case BPF_PROG_TYPE_LWT_OUT:
	case BPF_PROG_TYPE_LWT_XMIT:
	case BPF_PROG_TYPE_LWT_SEG6LOCAL:
	case BPF_PROG_TYPE_SK_SKB:
	case BPF_PROG_TYPE_SK_MSG:
	case BPF_PROG_TYPE_FLOW_DISSECTOR:
	case BPF_PROG_TYPE_CGROUP_DEVICE:
	case BPF_PROG_TYPE_CGROUP_SOCK:
	case BPF_PROG_TYPE_CGROUP_SOCK_ADDR:
	case BPF_PROG_TYPE_CGROUP_SOCKOPT:
	case BPF_PROG_TYPE_CGROUP_SYSCTL:
	case BPF_PROG_TYPE_SOCK_OPS:
	case BPF_PROG_TYPE_EXT:
	case 32: /* BPF_PROG_TYPE_NETFILTER, newer than these headers */
		return true;
	default:
		return false;
	}
}

static bool prog_type_needs_perfmon(int t)
{
	switch (t) {
	case BPF_PROG_TYPE_KPROBE:
	case BPF_PROG_TYPE_TRACEPOINT:
	case BPF_PROG_TYPE_PERF_EVENT:
	case BPF_PROG_TYPE_RAW_TRACEPOINT:
	case BPF_PROG_TYPE_RAW_TRACEPOINT_WRITABLE:
	case BPF_PROG_TYPE_TRACING:
	case BPF_PROG_TYPE_LSM:
	case BPF_PROG_TYPE_STRUCT_OPS:
	case BPF_PROG_TYPE_EXT:
		return true;
	default:
		return false;
	}
}

/* Helpers the verifier only offers to perfmon_capable() callers (bpf_base_func_proto). */
static bool helper_needs_perfmon(int id)
{
	switch (helper_classify(id)) {
	case HELPER_CLASS_READ_KERNEL_MEMORY:
	case HELPER_CLASS_READ_USER_MEMORY:
	case HELPER_CLASS_WRITE_USER_MEMORY:
	case HELPER_CLASS_WRITE_GLOBAL_LOGS:
		return true;
	default:
		return false;
	}
}

int job_raise_caps(struct job *j)
{
	bool net_admin = false, perfmon = j->grant->load_with_perfmon;
	cap_value_t caps[3];
	int n = 0;

	for (size_t i = 0; i < j->desc.n_programs; i++) {
		const struct object_program *p = &j->desc.programs[i];

		if (!p->load)
			continue;
		net_admin |= prog_type_needs_net_admin(p->prog_type);
		perfmon |= prog_type_needs_perfmon(p->prog_type);
		for (size_t h = 0; h < p->n_helpers; h++)
			perfmon |= helper_needs_perfmon(p->helpers[h]);
	}
	/* libbpf creates an inner map template from the object during the load, too. */
	for (size_t i = 0; i < j->desc.n_maps; i++)
		net_admin |= caps_map_type_needs_net_admin(j->desc.maps[i].map_type) ||
			     caps_map_type_needs_net_admin(j->desc.maps[i].inner_map_type);

	caps[n++] = CAP_BPF;
	if (net_admin)
		caps[n++] = CAP_NET_ADMIN;
	if (perfmon)
		caps[n++] = CAP_PERFMON;
	/* With CAP_PERFMON the verifier lets programs store kernel pointers (allow_ptr_leaks). */
	j->kernel_addresses_visible =
		perfmon ||
		(j->grant->helper_classes & HELPER_CLASS_BIT(HELPER_CLASS_READ_KERNEL_MEMORY));
	return caps_set_effective(caps, n);
}
