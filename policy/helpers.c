// SPDX-License-Identifier: MIT
/*
 * Helper privilege classes. See policy/HELPERS.md for what each class means
 * and why the doubtful helpers sit where they do.
 *
 * Both tables are indexed by BPF_FUNC_xxx from the UAPI header, so a renamed or
 * removed helper breaks the build instead of silently shifting the table, and a
 * helper listed twice trips -Woverride-init (an error with -Dwerror=true).
 * A helper the header gains later has no entry and classifies as unknown,
 * which policies deny; tests/unit/test_helpers.c fails until it is classified.
 */
#include <linux/bpf.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"

/* helper_class_mask_t must have a bit for every class. */
_Static_assert(_HELPER_CLASS_MAX <= 64, "helper classes do not fit helper_class_mask_t");

/* The mapper itself puts the comma after each FN(name). */
#define HELPER_NAME_ENTRY(name) [BPF_FUNC_##name] = "bpf_" #name
static const char *const helper_names[__BPF_FUNC_MAX_ID] = {__BPF_FUNC_MAPPER(HELPER_NAME_ENTRY)};
#undef HELPER_NAME_ENTRY

static const char *const class_names[_HELPER_CLASS_MAX] = {
	[HELPER_CLASS_BASE] = "base",
	[HELPER_CLASS_READ_KERNEL_MEMORY] = "read_kernel_memory",
	[HELPER_CLASS_READ_USER_MEMORY] = "read_user_memory",
	[HELPER_CLASS_WRITE_USER_MEMORY] = "write_user_memory",
	[HELPER_CLASS_WRITE_GLOBAL_LOGS] = "write_global_logs",
	[HELPER_CLASS_SIGNAL] = "signal",
	[HELPER_CLASS_OVERRIDE_RETURN] = "override_return",
	[HELPER_CLASS_KFUNC] = "kfunc",
	[HELPER_CLASS_UNKNOWN] = "unknown",
	[HELPER_CLASS_CURRENT_TASK] = "current_task",
	[HELPER_CLASS_NET_READ] = "net_read",
	[HELPER_CLASS_NET_MODIFY] = "net_modify",
	[HELPER_CLASS_REDIRECT] = "redirect",
	[HELPER_CLASS_PERF_EVENT] = "perf_event",
	[HELPER_CLASS_SYSCTL] = "sysctl",
	[HELPER_CLASS_SOCKET_OPTIONS] = "socket_options",
	[HELPER_CLASS_SECURITY] = "security",
	[HELPER_CLASS_SYSCALL] = "syscall",
	[HELPER_CLASS_INJECT_INPUT] = "inject_input",
	[HELPER_CLASS_READ_USER_MEMORY_ANY_TASK] = "read_user_memory_any_task",
	[HELPER_CLASS_WRITE_USER_MEMORY_ANY_TASK] = "write_user_memory_any_task",
	[HELPER_CLASS_SIGNAL_ANY_TASK] = "signal_any_task",
};

enum helper_class helper_class_any_task(enum helper_class c)
{
	switch (c) {
	case HELPER_CLASS_READ_USER_MEMORY:
		return HELPER_CLASS_READ_USER_MEMORY_ANY_TASK;
	case HELPER_CLASS_WRITE_USER_MEMORY:
		return HELPER_CLASS_WRITE_USER_MEMORY_ANY_TASK;
	case HELPER_CLASS_SIGNAL:
		return HELPER_CLASS_SIGNAL_ANY_TASK;
	default:
		return _HELPER_CLASS_INVALID;
	}
}

/*
 * HELPER_CLASS_BASE is 0, so a bare enum array could not tell "classified as
 * base" from "forgotten": the explicit flag makes a missing entry unknown.
 */
struct helper_entry {
	unsigned char cls;
	bool set;
};

#define C(name, class) [BPF_FUNC_##name] = {.cls = HELPER_CLASS_##class, .set = true}

static const struct helper_entry helper_table[__BPF_FUNC_MAX_ID] = {
	/* BPF_FUNC_unspec (0) is not a helper: no entry, so it is unknown. */

	/* Maps, time, randomness, control flow, locks, timers, ring buffers, dynptrs. */
	C(map_lookup_elem, BASE),
	C(map_update_elem, BASE),
	C(map_delete_elem, BASE),
	C(map_push_elem, BASE),
	C(map_pop_elem, BASE),
	C(map_peek_elem, BASE),
	C(map_lookup_percpu_elem, BASE),
	C(for_each_map_elem, BASE),
	C(ktime_get_ns, BASE),
	C(ktime_get_boot_ns, BASE),
	C(ktime_get_coarse_ns, BASE),
	C(ktime_get_tai_ns, BASE),
	C(jiffies64, BASE),
	C(get_prandom_u32, BASE),
	C(tail_call, BASE),
	C(loop, BASE),
	C(strncmp, BASE),
	C(strtol, BASE),
	C(strtoul, BASE),
	C(spin_lock, BASE),
	C(spin_unlock, BASE),
	C(timer_init, BASE),
	C(timer_set_callback, BASE),
	C(timer_start, BASE),
	C(timer_cancel, BASE),
	C(ringbuf_output, BASE),
	C(ringbuf_reserve, BASE),
	C(ringbuf_submit, BASE),
	C(ringbuf_discard, BASE),
	C(ringbuf_query, BASE),
	C(ringbuf_reserve_dynptr, BASE),
	C(ringbuf_submit_dynptr, BASE),
	C(ringbuf_discard_dynptr, BASE),
	C(user_ringbuf_drain, BASE),
	C(dynptr_from_mem, BASE),
	C(dynptr_read, BASE),
	C(dynptr_write, BASE),
	C(dynptr_data, BASE),
	/* Local storage is a map keyed by an object the program already holds. */
	C(get_local_storage, BASE),
	C(sk_storage_get, BASE),
	C(sk_storage_delete, BASE),
	C(inode_storage_get, BASE),
	C(inode_storage_delete, BASE),
	C(task_storage_get, BASE),
	C(task_storage_delete, BASE),
	/* The cookie is a value the attacher chose. */
	C(get_attach_cookie, BASE),
	/* Writes only program-owned bytes to the reader of its own iterator. */
	C(seq_write, BASE),
	/*
	 * Only in cgroup hooks, which can already fail the syscall and rewrite
	 * ctx->retval: these merely pick the errno.
	 */
	C(get_retval, BASE),
	C(set_retval, BASE),

	/* Arbitrary kernel memory, kernel pointers or kernel addresses. */
	/* The legacy probe_read(_str) read kernel or user memory, whichever the address is. */
	C(probe_read, READ_KERNEL_MEMORY),
	C(probe_read_str, READ_KERNEL_MEMORY),
	C(probe_read_kernel, READ_KERNEL_MEMORY),
	C(probe_read_kernel_str, READ_KERNEL_MEMORY),
	/* Returns a task_struct address; _btf also lets the program dereference it. */
	C(get_current_task, READ_KERNEL_MEMORY),
	C(get_current_task_btf, READ_KERNEL_MEMORY),
	C(task_pt_regs, READ_KERNEL_MEMORY),
	C(per_cpu_ptr, READ_KERNEL_MEMORY),
	C(this_cpu_ptr, READ_KERNEL_MEMORY),
	C(find_vma, READ_KERNEL_MEMORY),
	C(d_path, READ_KERNEL_MEMORY),
	C(snprintf_btf, READ_KERNEL_MEMORY),
	C(seq_printf_btf, READ_KERNEL_MEMORY),
	/*
	 * The format helpers share bpf_bprintf_prepare(): %s/%pks copy strings
	 * from arbitrary kernel addresses and %px prints raw pointers, and the
	 * result goes back to the program (snprintf) or to the user reading the
	 * iterator (seq_printf).
	 */
	C(snprintf, READ_KERNEL_MEMORY),
	C(seq_printf, READ_KERNEL_MEMORY),
	C(kallsyms_lookup_name, READ_KERNEL_MEMORY),
	/* Arguments and return values of kernel functions are often kernel pointers. */
	C(get_func_arg, READ_KERNEL_MEMORY),
	C(get_func_ret, READ_KERNEL_MEMORY),
	/* Harmless alone, but only useful with get_func_arg: kept with its family. */
	C(get_func_arg_cnt, READ_KERNEL_MEMORY),
	/* Address of the traced kernel function: defeats KASLR. */
	C(get_func_ip, READ_KERNEL_MEMORY),
	/*
	 * Kernel stack traces and branch records are lists of kernel text
	 * addresses (get_stackid puts them in a map the user reads).
	 */
	C(get_stack, READ_KERNEL_MEMORY),
	C(get_stackid, READ_KERNEL_MEMORY),
	C(get_task_stack, READ_KERNEL_MEMORY),
	C(read_branch_records, READ_KERNEL_MEMORY),
	C(get_branch_snapshot, READ_KERNEL_MEMORY),
	/*
	 * These return BTF pointers into kernel socket/file objects that the
	 * program may then load from; the kernel itself gates the skc_to_*
	 * casts behind CAP_PERFMON for that reason.
	 */
	C(skc_to_tcp6_sock, READ_KERNEL_MEMORY),
	C(skc_to_tcp_sock, READ_KERNEL_MEMORY),
	C(skc_to_tcp_timewait_sock, READ_KERNEL_MEMORY),
	C(skc_to_tcp_request_sock, READ_KERNEL_MEMORY),
	C(skc_to_udp6_sock, READ_KERNEL_MEMORY),
	C(skc_to_unix_sock, READ_KERNEL_MEMORY),
	C(skc_to_mptcp_sock, READ_KERNEL_MEMORY),
	C(sock_from_file, READ_KERNEL_MEMORY),
	/* Hands out referenced kernel object pointers stored in maps. */
	C(kptr_xchg, READ_KERNEL_MEMORY),

	/* User memory of the current (or a given) task. */
	C(probe_read_user, READ_USER_MEMORY),
	C(probe_read_user_str, READ_USER_MEMORY),
	C(copy_from_user, READ_USER_MEMORY),
	C(copy_from_user_task, READ_USER_MEMORY),

	C(probe_write_user, WRITE_USER_MEMORY),

	/*
	 * The global trace pipe. Note these accept the same %s/%pks formats as
	 * snprintf, so they also read kernel memory, into a log only root reads.
	 */
	C(trace_printk, WRITE_GLOBAL_LOGS),
	C(trace_vprintk, WRITE_GLOBAL_LOGS),

	C(send_signal, SIGNAL),
	C(send_signal_thread, SIGNAL),

	C(override_return, OVERRIDE_RETURN),

	/* Identity and placement of the task the program runs in. */
	C(get_current_pid_tgid, CURRENT_TASK),
	C(get_current_uid_gid, CURRENT_TASK),
	C(get_current_comm, CURRENT_TASK),
	C(get_current_cgroup_id, CURRENT_TASK),
	C(get_current_ancestor_cgroup_id, CURRENT_TASK),
	C(current_task_under_cgroup, CURRENT_TASK),
	C(get_ns_current_pid_tgid, CURRENT_TASK),
	C(get_smp_processor_id, CURRENT_TASK),
	C(get_numa_node_id, CURRENT_TASK),

	/* Reading packets, socket identity and routing state; nothing is changed. */
	C(skb_load_bytes, NET_READ),
	C(skb_load_bytes_relative, NET_READ),
	C(xdp_load_bytes, NET_READ),
	C(xdp_get_buff_len, NET_READ),
	/* Linearises the skb so direct packet reads work; packet contents stay the same. */
	C(skb_pull_data, NET_READ),
	C(msg_pull_data, NET_READ),
	C(skb_get_tunnel_key, NET_READ),
	C(skb_get_tunnel_opt, NET_READ),
	C(skb_get_xfrm_state, NET_READ),
	C(get_hash_recalc, NET_READ),
	C(get_route_realm, NET_READ),
	C(get_cgroup_classid, NET_READ),
	C(skb_cgroup_classid, NET_READ),
	C(skb_under_cgroup, NET_READ),
	C(skb_cgroup_id, NET_READ),
	C(skb_ancestor_cgroup_id, NET_READ),
	C(sk_cgroup_id, NET_READ),
	C(sk_ancestor_cgroup_id, NET_READ),
	C(get_socket_cookie, NET_READ),
	C(get_socket_uid, NET_READ),
	C(get_netns_cookie, NET_READ),
	C(fib_lookup, NET_READ),
	C(check_mtu, NET_READ),
	C(sk_lookup_tcp, NET_READ),
	C(sk_lookup_udp, NET_READ),
	C(skc_lookup_tcp, NET_READ),
	C(sk_release, NET_READ),
	/* Unlike skc_to_*, these give verifier-restricted views (bpf_sock, bpf_tcp_sock). */
	C(sk_fullsock, NET_READ),
	C(tcp_sock, NET_READ),
	C(get_listener_sock, NET_READ),

	/* Rewriting packets, their headers, checksums and skb metadata. */
	C(skb_store_bytes, NET_MODIFY),
	C(xdp_store_bytes, NET_MODIFY),
	C(l3_csum_replace, NET_MODIFY),
	C(l4_csum_replace, NET_MODIFY),
	C(csum_diff, NET_MODIFY),
	C(csum_update, NET_MODIFY),
	C(csum_level, NET_MODIFY),
	C(skb_vlan_push, NET_MODIFY),
	C(skb_vlan_pop, NET_MODIFY),
	C(skb_set_tunnel_key, NET_MODIFY),
	C(skb_set_tunnel_opt, NET_MODIFY),
	C(skb_change_proto, NET_MODIFY),
	C(skb_change_type, NET_MODIFY),
	C(skb_change_tail, NET_MODIFY),
	C(skb_change_head, NET_MODIFY),
	C(skb_adjust_room, NET_MODIFY),
	C(skb_ecn_set_ce, NET_MODIFY),
	C(skb_set_tstamp, NET_MODIFY),
	C(set_hash, NET_MODIFY),
	C(set_hash_invalid, NET_MODIFY),
	C(xdp_adjust_head, NET_MODIFY),
	C(xdp_adjust_meta, NET_MODIFY),
	C(xdp_adjust_tail, NET_MODIFY),
	C(lwt_push_encap, NET_MODIFY),
	C(lwt_seg6_store_bytes, NET_MODIFY),
	C(lwt_seg6_adjust_srh, NET_MODIFY),
	C(msg_apply_bytes, NET_MODIFY),
	C(msg_cork_bytes, NET_MODIFY),
	C(msg_push_data, NET_MODIFY),
	C(msg_pop_data, NET_MODIFY),

	/* Sending traffic or connections somewhere other than the kernel would. */
	C(redirect, REDIRECT),
	C(redirect_map, REDIRECT),
	C(clone_redirect, REDIRECT),
	C(redirect_neigh, REDIRECT),
	C(redirect_peer, REDIRECT),
	C(sk_redirect_map, REDIRECT),
	C(sk_redirect_hash, REDIRECT),
	C(msg_redirect_map, REDIRECT),
	C(msg_redirect_hash, REDIRECT),
	C(sk_assign, REDIRECT),
	C(sk_select_reuseport, REDIRECT),
	/* Putting a socket in a sockmap/sockhash is what makes it a redirect target. */
	C(sock_map_update, REDIRECT),
	C(sock_hash_update, REDIRECT),
	/* End.X/End.T/End.B6 actions choose the next hop or routing table. */
	C(lwt_seg6_action, REDIRECT),

	/* Perf ring buffers and hardware/software counters. */
	C(perf_event_output, PERF_EVENT),
	C(skb_output, PERF_EVENT),
	C(xdp_output, PERF_EVENT),
	C(perf_event_read, PERF_EVENT),
	C(perf_event_read_value, PERF_EVENT),
	C(perf_prog_read_value, PERF_EVENT),

	C(sysctl_get_name, SYSCTL),
	C(sysctl_get_current_value, SYSCTL),
	C(sysctl_get_new_value, SYSCTL),
	C(sysctl_set_new_value, SYSCTL),

	/* Acting on the socket itself: options, TCP behaviour, syncookies. */
	C(setsockopt, SOCKET_OPTIONS),
	C(getsockopt, SOCKET_OPTIONS),
	C(sock_ops_cb_flags_set, SOCKET_OPTIONS),
	C(bind, SOCKET_OPTIONS),
	C(tcp_send_ack, SOCKET_OPTIONS),
	C(load_hdr_opt, SOCKET_OPTIONS),
	C(store_hdr_opt, SOCKET_OPTIONS),
	C(reserve_hdr_opt, SOCKET_OPTIONS),
	/* Syncookie generators are an oracle for the kernel's syncookie secret. */
	C(tcp_check_syncookie, SOCKET_OPTIONS),
	C(tcp_gen_syncookie, SOCKET_OPTIONS),
	C(tcp_raw_gen_syncookie_ipv4, SOCKET_OPTIONS),
	C(tcp_raw_gen_syncookie_ipv6, SOCKET_OPTIONS),
	C(tcp_raw_check_syncookie_ipv4, SOCKET_OPTIONS),
	C(tcp_raw_check_syncookie_ipv6, SOCKET_OPTIONS),

	C(ima_inode_hash, SECURITY),
	C(ima_file_hash, SECURITY),
	C(bprm_opts_set, SECURITY),

	/* BPF_PROG_TYPE_SYSCALL loaders: bpf(2) and close(2) as the caller. */
	C(sys_bpf, SYSCALL),
	C(sys_close, SYSCALL),
	C(btf_find_by_name_kind, SYSCALL),

	/* lirc programs can type keys and move the pointer for the whole system. */
	C(rc_repeat, INJECT_INPUT),
	C(rc_keydown, INJECT_INPUT),
	C(rc_pointer_rel, INJECT_INPUT),
};

#undef C

static bool helper_id_in_range(int helper_id)
{
	return helper_id >= 0 && helper_id < __BPF_FUNC_MAX_ID;
}

bool helper_is_known(int helper_id)
{
	return helper_id_in_range(helper_id) && helper_table[helper_id].set;
}

enum helper_class helper_classify(int helper_id)
{
	if (!helper_is_known(helper_id))
		return HELPER_CLASS_UNKNOWN;
	return (enum helper_class)helper_table[helper_id].cls;
}

/* Also names BPF_FUNC_unspec ("bpf_unspec"): useful in messages about a bad call. */
const char *helper_name(int helper_id)
{
	if (!helper_id_in_range(helper_id))
		return NULL;
	return helper_names[helper_id];
}

const char *helper_class_to_string(enum helper_class c)
{
	if ((int)c < 0 || c >= _HELPER_CLASS_MAX)
		return NULL;
	return class_names[c];
}

enum helper_class helper_class_from_string(const char *s)
{
	if (!s)
		return _HELPER_CLASS_INVALID;
	for (int c = 0; c < _HELPER_CLASS_MAX; c++)
		if (class_names[c] && strcmp(class_names[c], s) == 0)
			return (enum helper_class)c;
	return _HELPER_CLASS_INVALID;
}

int helper_max_id(void)
{
	return __BPF_FUNC_MAX_ID - 1;
}

const char *helper_display_name(int helper_id, char buf[static 32])
{
	const char *name = helper_name(helper_id);

	if (name)
		return name;
	snprintf(buf, 32, "helper %d", helper_id);
	return buf;
}
