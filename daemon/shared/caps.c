/* SPDX-License-Identifier: MIT */
#include "caps.h"

#include <errno.h>
#include <linux/bpf.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/macro.h"
#include "procfs.h"

/*
 * What a worker may ever need, and why:
 *  CAP_BPF       - program and map creation, BTF load;
 *  CAP_PERFMON   - tracing program types and helpers that read memory;
 *  CAP_NET_ADMIN - networking program types and socket/device map types;
 *  CAP_SYS_ADMIN - BPF_MAP_GET_FD_BY_ID, the only way to open a map with
 *                  BPF_F_RDONLY/BPF_F_WRONLY, and BPF_OBJ_GET_INFO details;
 *                  the uprobe PMU's perf events (Linux 6.16, uprobe.c).
 */
DEFINE_TRIVIAL_CLEANUP_FUNC(cap_t, cap_free);

static const cap_value_t worker_caps[] = {CAP_BPF, CAP_PERFMON, CAP_NET_ADMIN, CAP_SYS_ADMIN};

/*
 * The event loop keeps what its workers need (it passes them on to the
 * spawner it execs, caps_exec_prepare()) and nothing of its own: it raises
 * only CAP_NET_ADMIN, for SO_SNDBUFFORCE and a caller's network namespace
 * (SIOCGSKNS on the connection). No CAP_SYS_PTRACE anywhere: nothing in
 * the broker opens another process's /proc/PID/ns or memory. The socket,
 * pins and state are root's own files, so no CAP_DAC_OVERRIDE; signals go to
 * our own workers, so no CAP_KILL.
 */
static const cap_value_t daemon_caps[] = {CAP_BPF, CAP_PERFMON, CAP_NET_ADMIN, CAP_SYS_ADMIN};

static bool in_list(cap_value_t c, const cap_value_t *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == c)
			return true;
	return false;
}

static uint64_t caps_mask(const cap_value_t *list, size_t n)
{
	uint64_t m = 0;

	for (size_t i = 0; i < n; i++)
		m |= 1ull << list[i];
	return m;
}

uint64_t caps_daemon_mask(void)
{
	return caps_mask(daemon_caps, ARRAY_SIZE(daemon_caps));
}

uint64_t caps_worker_mask(void)
{
	return caps_mask(worker_caps, ARRAY_SIZE(worker_caps));
}

/* Our own /proc/self/status, as the kernel has it now. */
static int self_status(char **ret)
{
	_cleanup_close_ int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return negative_errno();
	return procfs_read(fd, ret);
}

int caps_verify(uint64_t permitted)
{
	static const char *const keys[] = {"CapPrm", "CapEff", "CapInh", "CapAmb", "NoNewPrivs"};
	const uint64_t want[] = {permitted, 0, 0, 0, 1};
	_cleanup_free_ char *text = NULL;
	int k = self_status(&text);

	/* Read back what the kernel says, not what we asked for (as bubblewrap does). */
	if (k < 0)
		return k;
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		uint64_t v;

		k = procfs_status_u64(text, keys[i], i == 4 ? 10 : 16, &v);
		if (k < 0)
			return k;
		if (v != want[i])
			return -EPERM;
	}
	return 0;
}

#define SECURE_BITS_EXPECTED                                                                       \
	(SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |                           \
	 SECBIT_NO_SETUID_FIXUP_LOCKED)

int caps_daemon_init(void)
{
	_cleanup_(cap_freep) cap_t c = cap_init();
	int last = (int)cap_max_bits() - 1;
	_cleanup_free_ char *status = NULL;
	uint64_t bnd = 0;
	int k;

	if (!c)
		return -ENOMEM;
	/*
	 * Bounding set first: dropping from it needs CAP_SETPCAP, which goes next.
	 * The kernel wants CAP_SETPCAP even to drop what is already gone, so only
	 * what is still there is dropped: under systemd (bpfbrokerd.service) the
	 * bounding set and securebits come preset and we never hold CAP_SETPCAP.
	 */
	for (int cap = 0; cap <= last; cap++)
		if (!in_list(cap, daemon_caps, ARRAY_SIZE(daemon_caps)) &&
		    prctl(PR_CAPBSET_READ, cap, 0, 0, 0) > 0 &&
		    prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return negative_errno();
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return negative_errno();
	/* uid 0 must not regain anything through exec or setuid. */
	k = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
	if (k < 0)
		return negative_errno();
	if ((k & SECURE_BITS_EXPECTED) != SECURE_BITS_EXPECTED &&
	    prctl(PR_SET_SECUREBITS, SECURE_BITS_EXPECTED, 0, 0, 0) < 0)
		return negative_errno();
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return negative_errno();
	if (cap_set_flag(c, CAP_PERMITTED, ARRAY_SIZE(daemon_caps), daemon_caps, CAP_SET) < 0)
		return negative_errno();
	if (cap_set_proc(c) < 0)
		return negative_errno();
	k = caps_verify(caps_daemon_mask());
	if (k < 0)
		return k;
	k = self_status(&status);
	if (k >= 0)
		k = procfs_status_u64(status, "CapBnd", 16, &bnd);
	if (k < 0)
		return k;
	if (bnd != caps_daemon_mask())
		return -EPERM;
	/* And the securebits, as the kernel has them now. */
	k = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
	if (k < 0)
		return negative_errno();
	return (k & SECURE_BITS_EXPECTED) == SECURE_BITS_EXPECTED ? 0 : -EPERM;
}

int caps_exec_prepare(void)
{
	_cleanup_(cap_freep) cap_t c = cap_init(); /* all clear */

	if (!c)
		return -ENOMEM;
	/*
	 * With SECBIT_NOROOT locked, exec gives uid 0 nothing of its own: the
	 * new image's permitted set is its ambient set. Ambient capabilities
	 * must be permitted and inheritable; the rest of ours go first.
	 */
	if (cap_set_flag(c, CAP_PERMITTED, ARRAY_SIZE(worker_caps), worker_caps, CAP_SET) < 0 ||
	    cap_set_flag(c, CAP_INHERITABLE, ARRAY_SIZE(worker_caps), worker_caps, CAP_SET) < 0)
		return negative_errno();
	if (cap_set_proc(c) < 0)
		return negative_errno();
	for (size_t i = 0; i < ARRAY_SIZE(worker_caps); i++)
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, worker_caps[i], 0, 0) < 0)
			return negative_errno();
	return 0;
}

/*
 * Before Linux 6.5, while kernel.unprivileged_bpf_disabled is set, every
 * bpf() command needs CAP_BPF effective, even on an fd the caller holds
 * (later kernels check only the commands that create or look up objects).
 * Workers then keep CAP_BPF effective for the whole request; they raise the
 * others as before.
 */
static bool keep_bpf_effective;

static bool bpf_needs_cap_for_every_command(void)
{
	union bpf_attr attr = {.info.bpf_fd = (uint32_t)-1};

	/* A command on a bad fd: EBADF where the kernel looks at the fd, EPERM where it never does.
	 */
	return syscall(SYS_bpf, BPF_OBJ_GET_INFO_BY_FD, &attr, sizeof(attr)) < 0 && errno == EPERM;
}

int caps_spawner_init(bool assume_old_kernel)
{
	_cleanup_(cap_freep) cap_t c = cap_init(); /* all clear */
	int k;

	if (!c)
		return -ENOMEM;
	/*
	 * Clearing the inheritable set below clears the ambient set the daemon
	 * passed through exec (caps_exec_prepare()); the effective set exec
	 * filled from it goes too.
	 *
	 * The bounding set stays the daemon's: shrinking it needs CAP_SETPCAP,
	 * which the daemon gave up first. Leaving the permitted set is enough:
	 * no_new_privs and the locked securebits mean nothing regains it.
	 */
	if (cap_set_flag(c, CAP_PERMITTED, ARRAY_SIZE(worker_caps), worker_caps, CAP_SET) < 0)
		return negative_errno();
	/* Keep the capabilities when nothing else changes; uid stays 0. */
	if (cap_set_proc(c) < 0)
		return negative_errno();
	k = caps_verify(caps_worker_mask());
	if (k < 0)
		return k;
	keep_bpf_effective = assume_old_kernel || bpf_needs_cap_for_every_command();
	return caps_clear_effective();
}

uint64_t caps_worker_effective_mask(void)
{
	return keep_bpf_effective ? 1ull << CAP_BPF : 0;
}

int caps_worker_check(void)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {};
	uint64_t permitted, effective, inheritable;

	/* Two syscalls, not a read of /proc/self/status: this runs for every request. */
	if (syscall(SYS_capget, &h, d) < 0)
		return negative_errno();
	permitted = (uint64_t)d[1].permitted << 32 | d[0].permitted;
	effective = (uint64_t)d[1].effective << 32 | d[0].effective;
	inheritable = (uint64_t)d[1].inheritable << 32 | d[0].inheritable;
	if (permitted != caps_worker_mask() || effective != caps_worker_effective_mask() ||
	    inheritable != 0)
		return -EPERM;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return -EPERM;
	return 0;
}

/*
 * One capget and one capset, not libcap's cap_get_proc() (which asks the
 * kernel's capability version with a capget of its own and allocates) and
 * cap_set_proc(): a load raises and drops capabilities twice.
 */
int caps_set_effective(const cap_value_t *caps, int n)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {};
	uint64_t effective = keep_bpf_effective ? 1ull << CAP_BPF : 0;

	for (int i = 0; i < n; i++) {
		if (caps[i] < 0 || caps[i] > CAP_LAST_CAP)
			return -EINVAL;
		effective |= 1ull << caps[i];
	}
	if (syscall(SYS_capget, &h, d) < 0)
		return negative_errno();
	/* The kernel refuses (EPERM) an effective capability that is not permitted, as libcap's
	 * did. */
	d[0].effective = (uint32_t)effective;
	d[1].effective = (uint32_t)(effective >> 32);
	if (syscall(SYS_capset, &h, d) < 0)
		return negative_errno();
	return 0;
}

int caps_sndbuf_force(const int *fds, size_t n_fds, int size)
{
	static const cap_value_t net_admin[] = {CAP_NET_ADMIN};
	int k = caps_set_effective(net_admin, 1);

	for (size_t i = 0; i < n_fds && k >= 0; i++)
		if (setsockopt(fds[i], SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) < 0)
			k = negative_errno();
	caps_clear_effective();
	return k;
}

int caps_clear_effective(void)
{
	return caps_set_effective(NULL, 0);
}

bool caps_is_effective(cap_value_t cap)
{
	_cleanup_(cap_freep) cap_t c = cap_get_proc();
	cap_flag_value_t v = CAP_CLEAR;

	if (!c || cap_get_flag(c, cap, CAP_EFFECTIVE, &v) < 0)
		return false;
	return v == CAP_SET;
}

bool caps_map_type_needs_net_admin(int map_type)
{
	switch (map_type) {
	case BPF_MAP_TYPE_SOCKMAP:
	case BPF_MAP_TYPE_SOCKHASH:
	case BPF_MAP_TYPE_DEVMAP:
	case BPF_MAP_TYPE_DEVMAP_HASH:
	case BPF_MAP_TYPE_XSKMAP:
	case BPF_MAP_TYPE_CPUMAP:
		return true;
	default:
		return false;
	}
}
