/* SPDX-License-Identifier: MIT */
/*
 * Corpus: CO-RE probes that adapt to the running kernel, as tracing tools'
 * compatibility headers do: a field renamed between versions, a type, a
 * field and an enum value that do not exist, each guarding code. One
 * program reads a field that does not exist without a guard.
 */
#include "bpf_test.h"
#include <bpf/bpf_core_read.h>

/* task_struct's state became __state in 5.14. */
struct task_struct___o {
	volatile long state;
} __attribute__((preserve_access_index));

struct task_struct___x {
	unsigned int __state;
	int pid;
	int corpus_no_such_field;
} __attribute__((preserve_access_index));

/* A type no kernel has. */
struct corpus_no_such_type {
	int a;
} __attribute__((preserve_access_index));

enum bpf_func_id___x {
	BPF_FUNC_corpus_no_such_helper___x = 4242,
	BPF_FUNC_ktime_get_boot_ns___x = 125,
};

__u64 seen[4];

static __always_inline long task_state(void *task)
{
	struct task_struct___x *t = task;

	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___o *)task, state);
}

SEC("raw_tracepoint/sched_switch")
int fields(void *ctx)
{
	struct task_struct___x *t = (void *)bpf_get_current_task();

	seen[0] = task_state(t);
	if (bpf_core_field_exists(t->corpus_no_such_field))
		seen[1] = BPF_CORE_READ(t, corpus_no_such_field);
	if (bpf_core_enum_value_exists(enum bpf_func_id___x, BPF_FUNC_ktime_get_boot_ns___x))
		seen[2] = bpf_ktime_get_boot_ns();
	if (bpf_core_enum_value_exists(enum bpf_func_id___x, BPF_FUNC_corpus_no_such_helper___x))
		seen[2] = 0;
	return 0;
}

SEC("raw_tracepoint/sched_switch")
int no_type(void *ctx)
{
	if (bpf_core_type_exists(struct corpus_no_such_type))
		seen[3] = 1;
	return 0;
}

SEC("raw_tracepoint/sched_switch")
int unguarded(void *ctx)
{
	struct task_struct___x *t = (void *)bpf_get_current_task();

	seen[1] = BPF_CORE_READ(t, corpus_no_such_field);
	return 0;
}

SEC("raw_tracepoint/sched_switch")
int pid_read(void *ctx)
{
	struct task_struct___x *t = (void *)bpf_get_current_task();

	seen[0] = BPF_CORE_READ(t, pid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
