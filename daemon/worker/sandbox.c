/* SPDX-License-Identifier: MIT */
/*
 * The worker's seccomp filter: an allow-list of the system calls a worker
 * makes, built once in the spawner with libseccomp, installed in each worker.
 */
#include "sandbox.h"

#include <errno.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/macro.h"

/*
 * What workers were seen to make, running the whole integration suite (and
 * its sanitizer build) with the filter logging instead of refusing
 * (--fault-inject=seccomp-log: the kernel logs "type=1326 ... syscall=N"):
 * memory and files (reading objects, /sys/kernel/btf, /proc, the store under
 * the state directory and bpffs), sockets (the event loop's, journald's,
 * an interface's index), bpf() and perf_event_open() for loads and
 * attaches, setns() into the caller's network namespace, capabilities,
 * the verifier's timer, and exiting. Not: fork, exec, ptrace, mount,
 * module, keyring, reboot, time-setting or namespace-making calls.
 */
/* Grouped by purpose, several to a line. */
/* clang-format off */
static const char *const allowed[] = {
	/* memory */
	"brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "mincore", "msync",
	/* files and directories */
	"read", "write", "readv", "writev", "pread64", "pwrite64", "lseek", "close",
	"close_range", "open", "openat", "openat2", "stat", "lstat", "fstat", "newfstatat",
	"statx", "statfs", "fstatfs", "access", "faccessat", "faccessat2", "readlink",
	"readlinkat", "getdents64", "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat",
	"rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat",
	"fsync", "fdatasync", "flock", "ftruncate", "fchmod", "fchmodat", "fchown",
	"fchownat", "umask", "getcwd", "fchdir", "chdir", "dup", "dup2", "dup3", "fcntl",
	"ioctl", "memfd_create", "fadvise64", "sendfile", "copy_file_range",
	/* sockets: the event loop's, journald's, and one for an interface's index */
	"socket", "connect", "sendmsg", "recvmsg", "sendto", "recvfrom", "getsockopt",
	"setsockopt", "getsockname", "getpeername", "shutdown",
	/* waiting */
	"poll", "ppoll", "select", "pselect6", "epoll_create1", "epoll_ctl", "epoll_wait",
	"epoll_pwait", "futex", "nanosleep", "clock_nanosleep", "sched_yield", "pause",
	/* time, identity, limits */
	"clock_gettime", "clock_getres", "gettimeofday", "time", "getpid", "getppid",
	"gettid", "getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid",
	"getgroups", "uname", "sysinfo", "getrlimit", "setrlimit",
	"getrandom", "sched_getaffinity", "getpriority", "getrusage",
	/* signals, the verifier's timer (load.c), and ending */
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigtimedwait", "sigaltstack",
	"setitimer", "getitimer", "alarm", "kill", "tgkill", "tkill", "exit", "exit_group",
	"restart_syscall",
	/* the thread runtime glibc sets up, and capabilities (shared/caps.c) */
	"set_robust_list", "get_robust_list", "rseq", "set_tid_address", "arch_prctl",
	"prctl", "capget", "capset",
	/* BPF and perf events (attach, uprobes) */
	"perf_event_open",
};
/* clang-format on */

static int add_rules(scmp_filter_ctx ctx, unsigned flags)
{
	int k;

	for (size_t i = 0; i < ARRAY_SIZE(allowed); i++) {
		int nr = seccomp_syscall_resolve_name(allowed[i]);

		/* A name this architecture does not have (open on arm64, say): nothing to allow. */
		if (nr == __NR_SCMP_ERROR)
			continue;
		k = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
		if (k < 0)
			return k;
	}
	/*
	 * bpf(), except BPF_BTF_GET_NEXT_ID: libbpf 1.1.2 then sees no modules'
	 * BTF instead of failing on EPERM (modbtf.h); its walk ends on ENOENT.
	 */
	k = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(bpf), 1,
			     SCMP_A0_32(SCMP_CMP_NE, BPF_BTF_GET_NEXT_ID));
	if (k >= 0)
		k = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOENT), SCMP_SYS(bpf), 1,
				     SCMP_A0_32(SCMP_CMP_EQ, BPF_BTF_GET_NEXT_ID));
	/*
	 * With arguments checked, for a worker some object took over: setns()
	 * only into a network namespace (the caller's, for an interface attach:
	 * attach_interface.c), not another process's mount or user namespace;
	 * prlimit64() only on itself (glibc's getrlimit/setrlimit pass pid 0),
	 * not on the daemon or other root processes. No pidfd_open() or
	 * pidfd_send_signal(): only the spawner, which runs without this
	 * filter, opens pidfds.
	 */
	if (k >= 0)
		k = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(setns), 1,
				     SCMP_A1_32(SCMP_CMP_EQ, CLONE_NEWNET));
	if (k >= 0)
		k = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 1,
				     SCMP_A0_32(SCMP_CMP_EQ, 0));
	/* Testing: the job leak the reuse checks must catch (worker/serve.c, fault_leak()). */
	if (k >= 0 && (flags & SANDBOX_UNSHARE_NET))
		k = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(unshare), 1,
				     SCMP_A0_32(SCMP_CMP_EQ, CLONE_NEWNET));
	return k;
}

int sandbox_build(unsigned flags, struct sandbox *ret)
{
	_cleanup_close_ int fd = -EBADF;
	scmp_filter_ctx ctx;
	struct stat st;
	void *buf = NULL;
	int k;

	/*
	 * Anything else fails with EPERM rather than killing the worker: the
	 * call is refused either way, and a worker that lives answers the
	 * client with the step that failed and writes its audit record, where a
	 * killed one would look like a crash.
	 */
	ctx = seccomp_init(flags & SANDBOX_LOG_ONLY ? SCMP_ACT_LOG : SCMP_ACT_ERRNO(EPERM));
	if (!ctx)
		return -ENOMEM;
	/* Other ABIs (x32, 32-bit) have other numbers: refused by the default above. */
	k = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0); /* workers set no_new_privs */
	if (k >= 0)
		k = add_rules(ctx, flags);
	/* Compiled once here; each worker loads the program with one prctl(). */
	if (k >= 0) {
		fd = memfd_create("bpfbroker-seccomp", MFD_CLOEXEC);
		k = fd < 0 ? negative_errno() : seccomp_export_bpf(ctx, fd);
	}
	seccomp_release(ctx);
	if (k < 0)
		return k;
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) != 0 ||
	    st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS)
		return -EINVAL;
	buf = malloc((size_t)st.st_size);
	if (!buf)
		return -ENOMEM;
	if (pread(fd, buf, (size_t)st.st_size, 0) != st.st_size) {
		free(buf);
		return -EIO;
	}
	*ret = (struct sandbox){.filter = buf,
				.len = (unsigned short)(st.st_size / sizeof(struct sock_filter))};
	return 0;
}

int sandbox_apply(const struct sandbox *s)
{
	struct sock_fprog prog = {.len = s->len, .filter = s->filter};

	/*
	 * prctl(), not seccomp(2): bpfbrokerd.service's SystemCallFilter
	 * (@system-service) allows prctl but not seccomp. Needs no_new_privs,
	 * which every broker process has.
	 */
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
		return negative_errno();
	return 0;
}

void sandbox_done(struct sandbox *s)
{
	free(s->filter);
	*s = (struct sandbox){};
}
