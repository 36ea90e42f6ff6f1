/* SPDX-License-Identifier: MIT */
/*
 * Corpus: a program in a section newer than libbpf 1.1.2 knows that calls
 * the kfunc that rewrites a unix socket address (sun_path).
 */
#include "bpf_test.h"

struct bpf_sock_addr_kern {
	void *sk;
} __attribute__((preserve_access_index));
extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;
extern int bpf_sock_addr_set_sun_path(struct bpf_sock_addr_kern *sa_kern, const __u8 *sun_path,
				      __u32 sun_path__sz) __ksym;

SEC("cgroup/sendmsg_unix")
int unix_rewrite(struct bpf_sock_addr *ctx)
{
	__u8 path[12] = "corpus.sock";
	struct bpf_sock_addr_kern *sa = bpf_cast_to_kern_ctx(ctx);

	bpf_sock_addr_set_sun_path(sa, path, sizeof(path) - 1);
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
