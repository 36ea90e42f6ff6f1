/* SPDX-License-Identifier: MIT */
/*
 * The spawner's and the workers' seccomp filters: allow-lists of the system
 * calls each makes, built once in the spawner with libseccomp, installed in
 * the spawner after its setup and in each worker after fork.
 */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/nsfs.h>
#include <linux/sockios.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/macro.h"
#include "daemon/shared/spawn.h"

/*
 * What workers were seen to make, running the whole integration suite (and
 * its sanitizer build) with the filter logging instead of refusing
 * (--fault-inject=seccomp-log: the kernel logs "type=1326 ... syscall=N"),
 * and with their arguments traced (raw_syscalls:sys_enter, filtered on the
 * workers' comm): memory and files (reading objects, /sys/kernel/btf, /proc,
 * the store under the state directory and bpffs), the event loop's socket,
 * bpf() and perf_event_open() for loads and attaches, setns() into the
 * caller's network namespace, capabilities, the verifier's timer, and
 * exiting. Not: fork, exec, ptrace, mount, module, keyring, reboot,
 * time-setting or namespace-making calls, nor connect(), nor what sends a
 * signal to a process of one's choosing (timer_create(), mq_notify(),
 * inotify, fanotify). Calls whose arguments decide what they reach are below
 * the list, with those.
 */
/* Grouped by purpose, several to a line. */
/* clang-format off */
static const char *const allowed[] = {
	/* memory */
	"brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "mincore", "msync",
	/* files and directories */
	"read", "write", "readv", "writev", "pread64", "pwrite64", "lseek",
	"open", "openat", "openat2", "stat", "lstat", "fstat", "newfstatat",
	"statx", "statfs", "fstatfs", "access", "faccessat", "faccessat2", "readlink",
	"readlinkat", "getdents64", "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat",
	"rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat",
	"fsync", "fdatasync", "flock", "ftruncate", "fchmod", "fchmodat", "fchown",
	"fchownat", "umask", "getcwd", "fchdir", "chdir", "dup",
	"memfd_create", "fadvise64", "sendfile", "copy_file_range",
	/* sockets it holds: the event loop's, journald's (no connect(): below) */
	"recvmsg", "recvfrom", "getsockopt", "setsockopt", "getsockname", "getpeername",
	"shutdown",
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
	"setitimer", "getitimer", "alarm", "exit", "exit_group", "restart_syscall",
	/* the thread runtime glibc sets up, and capabilities (shared/caps.c) */
	"set_robust_list", "get_robust_list", "rseq", "set_tid_address", "arch_prctl",
	"prctl", "capget", "capset",
	/*
	 * perf events (attach, uprobes): on any pid, for a uprobe's process; a
	 * SIGTRAP to another (perf_event_attr.sigtrap) is the kernel's to
	 * refuse, which it does for the broker's processes, none dumpable.
	 */
	"perf_event_open",
};

/* What the spawner makes besides: forking workers and handing them to the event loop. */
static const char *const spawner_allowed[] = {
	"wait4", "waitid", "pidfd_open", "close_range", "dup2", "dup3", "close",
};

/*
 * bpf() commands workers make (libbpf's loads, the store, hand-outs, named
 * objects' attach, detach, test runs and map methods): not the walks of
 * other programs and maps, BPF_ENABLE_STATS, BPF_ITER_CREATE, ...
 */
static const unsigned bpf_commands[] = {
	BPF_MAP_CREATE, BPF_MAP_LOOKUP_ELEM, BPF_MAP_UPDATE_ELEM, BPF_MAP_DELETE_ELEM,
	BPF_MAP_GET_NEXT_KEY, BPF_PROG_LOAD, BPF_OBJ_PIN, BPF_OBJ_GET, BPF_PROG_TEST_RUN,
	BPF_PROG_GET_FD_BY_ID, BPF_MAP_GET_FD_BY_ID, BPF_OBJ_GET_INFO_BY_FD,
	BPF_RAW_TRACEPOINT_OPEN, BPF_BTF_LOAD, BPF_BTF_GET_FD_BY_ID,
	BPF_MAP_LOOKUP_AND_DELETE_ELEM, BPF_MAP_FREEZE, BPF_LINK_CREATE,
	BPF_LINK_GET_FD_BY_ID, BPF_LINK_GET_NEXT_ID, BPF_LINK_DETACH, BPF_PROG_BIND_MAP,
};

/*
 * ioctl() requests workers make: an interface's index (attach_interface.c),
 * and the owner of the caller's network namespace (netns.c). Not a
 * terminal's (TIOCSTI), a block device's, a perf event's, ...
 */
static const unsigned ioctl_requests[] = {
	SIOCGIFINDEX, NS_GET_USERNS, NS_GET_PARENT, NS_GET_OWNER_UID,
};

/*
 * fcntl() commands workers make: libbpf 1.1.2 F_DUPFD_CLOEXEC (its fds kept
 * above 2), libelf F_GETFD (elf_begin()'s check of its fd), glibc and ours
 * F_GETFL (fdopendir(), handout.c, named_map.c), F_DUPFD_CLOEXEC (reply.c),
 * F_GET_SEALS (loadobject.c); F_SETFL below, without O_ASYNC. Not F_SETOWN,
 * F_SETOWN_EX, F_SETSIG, F_SETLEASE or F_NOTIFY: an fd's owner is who the
 * kernel signals (SIGIO, SIGURG, a lease break, a directory's change), with
 * the credentials of whoever set it, root's here, so any process.
 */
static const unsigned fcntl_commands[] = {
	F_DUPFD, F_DUPFD_CLOEXEC, F_GETFD, F_SETFD, F_GETFL, F_ADD_SEALS, F_GET_SEALS,
};
/* clang-format on */

/*
 * Stands for the pid of the process that installs the filter, patched in by
 * sandbox_apply(): never a pid (above PID_MAX_LIMIT, 2^22), so a rule left
 * unpatched refuses, it does not allow.
 */
#define SELF_PID 0x7e5e1f00u

static int allow_names(scmp_filter_ctx ctx, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int nr = seccomp_syscall_resolve_name(names[i]);
		int k;

		/* A name this architecture does not have (open on arm64, say): nothing to allow. */
		if (nr == __NR_SCMP_ERROR)
			continue;
		k = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
		if (k < 0)
			return k;
	}
	return 0;
}

static int allow_arg(scmp_filter_ctx ctx, int nr, struct scmp_arg_cmp cmp)
{
	return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1, cmp);
}

/* bpf() commands and ioctl() requests of their lists; BPF_BTF_GET_NEXT_ID ends at once. */
static int add_commands(scmp_filter_ctx ctx)
{
	int k = 0;

	for (size_t i = 0; i < ARRAY_SIZE(bpf_commands) && k >= 0; i++)
		k = allow_arg(ctx, SCMP_SYS(bpf), SCMP_A0_32(SCMP_CMP_EQ, bpf_commands[i]));
	/*
	 * libbpf 1.1.2 then sees no modules' BTF instead of failing on EPERM
	 * (modbtf.h); its walk ends on ENOENT.
	 */
	if (k >= 0)
		k = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOENT), SCMP_SYS(bpf), 1,
				     SCMP_A0_32(SCMP_CMP_EQ, BPF_BTF_GET_NEXT_ID));
	/* The kernel reads the request as 32 bits: so does the comparison. */
	for (size_t i = 0; i < ARRAY_SIZE(ioctl_requests) && k >= 0; i++)
		k = allow_arg(ctx, SCMP_SYS(ioctl), SCMP_A1_32(SCMP_CMP_EQ, ioctl_requests[i]));
	/* The command and F_SETFL's flags are ints to the kernel too. */
	for (size_t i = 0; i < ARRAY_SIZE(fcntl_commands) && k >= 0; i++)
		k = allow_arg(ctx, SCMP_SYS(fcntl), SCMP_A1_32(SCMP_CMP_EQ, fcntl_commands[i]));
	/* O_ASYNC: SIGIO to the fd's owner, which the process could not set; refused all the same.
	 */
	if (k >= 0)
		k = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(fcntl), 2,
				     SCMP_A1_32(SCMP_CMP_EQ, F_SETFL),
				     SCMP_A2_32(SCMP_CMP_MASKED_EQ, O_ASYNC, 0));
	return k;
}

/*
 * Sockets, for a worker some object took over: it connects nowhere (no
 * D-Bus, no varlink, no other root service sees a root peer), creates only
 * sockets that can send nothing until connected (SOCK_SEQPACKET, for an
 * interface's index: attach_interface.c), sends with no address (sendto) and
 * sendmsg()s only on fd 3, the event loop's connected socket. journald's
 * socket is connected by the spawner before its filter (audit.c): a
 * sendmsg() naming an address on it would reach any datagram socket.
 */
static int add_socket_rules(scmp_filter_ctx ctx)
{
	/* Both arguments in one rule: seccomp_rule_add() ANDs them. */
	int k = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 2,
				 SCMP_A0_32(SCMP_CMP_EQ, AF_UNIX),
				 SCMP_A1_32(SCMP_CMP_MASKED_EQ, 0xf, SOCK_SEQPACKET));

	if (k >= 0)
		k = allow_arg(ctx, SCMP_SYS(sendto), SCMP_A4_64(SCMP_CMP_EQ, 0));
	if (k >= 0)
		k = allow_arg(ctx, SCMP_SYS(sendmsg), SCMP_A0_32(SCMP_CMP_EQ, SPAWN_WORKER_FD));
	return k;
}

/*
 * A worker keeps fd 3 the event loop's socket: no close(), dup2() or dup3()
 * onto it, so the one fd sendmsg() may use stays a connected socket whose
 * peer is the event loop.
 */
static int add_fd_rules(scmp_filter_ctx ctx)
{
	int k = allow_arg(ctx, SCMP_SYS(close), SCMP_A0_32(SCMP_CMP_NE, SPAWN_WORKER_FD));

	if (k >= 0)
		k = allow_arg(ctx, SCMP_SYS(dup2), SCMP_A1_32(SCMP_CMP_NE, SPAWN_WORKER_FD));
	if (k >= 0)
		k = allow_arg(ctx, SCMP_SYS(dup3), SCMP_A1_32(SCMP_CMP_NE, SPAWN_WORKER_FD));
	if (k >= 0)
		k = allow_arg(ctx, SCMP_SYS(close_range), SCMP_A0_32(SCMP_CMP_GT, SPAWN_WORKER_FD));
	return k;
}

/*
 * Signals: a worker signals only itself (abort(), the store's simulated
 * crash), never the daemon, its spawner or another root process. The
 * spawner's filter cannot name its workers' pids, so it allows a signal to
 * one process by its pid, 1 to 2^22 - 1 (PID_MAX_LIMIT): not to every
 * process (kill(-1)), a process group (-pgrp), or its own group (0), which
 * is the daemon's (the event loop starts it with no setsid(): spawn.c);
 * each worker's own filter narrows that to itself.
 */
static int add_signal_rules(scmp_filter_ctx ctx, enum sandbox_kind kind, unsigned flags,
			    pid_t daemon)
{
	static const char *const names[] = {"kill", "tkill", "tgkill"};
	int k = 0;

	for (size_t i = 0; i < ARRAY_SIZE(names) && k >= 0; i++) {
		int nr = seccomp_syscall_resolve_name(names[i]);

		if (kind == SANDBOX_WORKER) {
			k = allow_arg(ctx, nr, SCMP_A0_32(SCMP_CMP_EQ, SELF_PID));
			continue;
		}
		/*
		 * One rule can't compare an argument twice (libseccomp): one per
		 * highest bit set, b = 0..21, is pid & ~(2^b - 1) == 2^b.
		 */
		for (unsigned b = 0; b < 22 && k >= 0; b++)
			k = allow_arg(ctx, nr, SCMP_A0_32(SCMP_CMP_MASKED_EQ, ~0u << b, 1u << b));
	}
	if (k >= 0 && kind == SANDBOX_WORKER && (flags & SANDBOX_KILL_DAEMON) && daemon > 0)
		k = allow_arg(ctx, SCMP_SYS(kill), SCMP_A0_32(SCMP_CMP_EQ, (uint32_t)daemon));
	return k;
}

static int add_rules(scmp_filter_ctx ctx, enum sandbox_kind kind, unsigned flags, pid_t daemon)
{
	int k = allow_names(ctx, allowed, ARRAY_SIZE(allowed));

	if (k >= 0)
		k = add_commands(ctx);
	if (k >= 0)
		k = add_socket_rules(ctx);
	if (k >= 0)
		k = add_signal_rules(ctx, kind, flags, daemon);
	if (k >= 0 && kind == SANDBOX_WORKER)
		k = add_fd_rules(ctx);
	if (k >= 0 && kind == SANDBOX_SPAWNER)
		k = allow_names(ctx, spawner_allowed, ARRAY_SIZE(spawner_allowed));
	/* The spawner: fork() as glibc makes it, no new namespaces; a pair for each worker. */
	if (k >= 0 && kind == SANDBOX_SPAWNER)
		k = allow_arg(ctx, SCMP_SYS(clone),
			      SCMP_A0_64(SCMP_CMP_EQ,
					 CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD));
	if (k >= 0 && kind == SANDBOX_SPAWNER)
		k = allow_arg(ctx, SCMP_SYS(socketpair), SCMP_A0_32(SCMP_CMP_EQ, AF_UNIX));
	/* glibc tries clone3() first for threads; none here, but ENOSYS is its fallback cue. */
	if (k >= 0 && kind == SANDBOX_SPAWNER)
		k = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	/*
	 * With arguments checked, for a worker some object took over: setns()
	 * only into a network namespace (the caller's, for an interface attach:
	 * attach_interface.c), not another process's mount or user namespace;
	 * prlimit64() only on itself (glibc's getrlimit/setrlimit pass pid 0),
	 * not on the daemon or other root processes. No pidfd_open() or
	 * pidfd_send_signal() in a worker: only the spawner opens pidfds.
	 */
	if (k >= 0)
		k = allow_arg(ctx, SCMP_SYS(setns), SCMP_A1_32(SCMP_CMP_EQ, CLONE_NEWNET));
	if (k >= 0)
		k = allow_arg(ctx, SCMP_SYS(prlimit64), SCMP_A0_32(SCMP_CMP_EQ, 0));
	/* Testing: the job leak the reuse checks must catch (worker/serve.c, fault_leak()). */
	if (k >= 0 && (flags & SANDBOX_UNSHARE_NET))
		k = allow_arg(ctx, SCMP_SYS(unshare), SCMP_A0_32(SCMP_CMP_EQ, CLONE_NEWNET));
	return k;
}

int sandbox_build(enum sandbox_kind kind, unsigned flags, pid_t daemon, struct sandbox *ret)
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
	/*
	 * Only this architecture's calls: the others (x32, 32-bit, with their
	 * own numbers) meet libseccomp's bad-architecture action, which kills
	 * the process (SIGSYS), not the EPERM above.
	 */
	k = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0); /* workers set no_new_privs */
	if (k >= 0)
		k = add_rules(ctx, kind, flags, daemon);
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
	_cleanup_free_ struct sock_filter *f = NULL;
	struct sock_fprog prog = {.len = s->len};

	/*
	 * The filter is compiled once, before the workers' pids exist: a
	 * comparison with SELF_PID becomes one with ours, in our own copy.
	 */
	f = malloc(s->len * sizeof(*f));
	if (!f)
		return -ENOMEM;
	memcpy(f, s->filter, s->len * sizeof(*f));
	for (unsigned i = 0; i < s->len; i++)
		if (f[i].code == (BPF_JMP | BPF_JEQ | BPF_K) && f[i].k == SELF_PID)
			f[i].k = (uint32_t)getpid();
	prog.filter = f;
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
