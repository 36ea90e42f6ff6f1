/* SPDX-License-Identifier: MIT */
/*
 * Corpus: kernel configuration read at load time, as tools adapt to the
 * kernel they run on: libbpf fills .kconfig from /proc/config.gz (or
 * /boot/config-*) and the running kernel's version.
 */
#include "bpf_test.h"

extern unsigned int LINUX_KERNEL_VERSION __kconfig;
extern int CONFIG_HZ __kconfig;
extern _Bool CONFIG_CORPUS_NO_SUCH_OPTION __kconfig __weak;

__u64 seen;

SEC("socket")
int kconfig_values(struct __sk_buff *skb)
{
	seen = LINUX_KERNEL_VERSION + CONFIG_HZ + CONFIG_CORPUS_NO_SUCH_OPTION;
	bpf_printk("kernel %u", LINUX_KERNEL_VERSION);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
