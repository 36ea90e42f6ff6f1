/* SPDX-License-Identifier: MIT */
/*
 * A cgroup device program as a rootless container runtime would attach:
 * allow /dev/null (char 1:3), deny every other device.
 */
#include "bpf_test.h"

SEC("cgroup/dev")
int allow_null(struct bpf_cgroup_dev_ctx *ctx)
{
	__u32 type = ctx->access_type & 0xffff;

	return type == BPF_DEVCG_DEV_CHAR && ctx->major == 1 && ctx->minor == 3;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
