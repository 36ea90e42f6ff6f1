/* SPDX-License-Identifier: MIT */
/*
 * Calls kfuncs. In the object file a kfunc call is a BPF_PSEUDO_CALL with a
 * relocation against an undefined symbol; libbpf turns it into
 * BPF_PSEUDO_KFUNC_CALL with the kernel BTF id. Only opened, never loaded.
 */
#include "bpf_test.h"

extern void bpf_rcu_read_lock(void) __ksym;
extern void bpf_rcu_read_unlock(void) __ksym;

SEC("tp_btf/sys_enter")
int kfunc_prog(void *ctx)
{
	bpf_rcu_read_lock();
	bpf_rcu_read_unlock();
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
