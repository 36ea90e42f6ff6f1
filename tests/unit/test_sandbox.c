/* SPDX-License-Identifier: MIT */
/*
 * The workers' seccomp filter (daemon/worker/sandbox.c), installed in a child
 * as a worker installs it: what a worker never does fails with EPERM, what it
 * does (between two jobs too) works, and libbpf 1.1.2 sees no modules' BTF.
 */
#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <linux/capability.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <signal.h>
#include <stdbool.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemon/worker/sandbox.h"

/* Run fn in a child under a filter of kind (flags: SANDBOX_*); its exit status. */
static int under(enum sandbox_kind kind, unsigned flags, int (*fn)(void))
{
	int status = 0;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct sandbox s;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    sandbox_build(kind, flags, getppid(), &s) < 0 || sandbox_apply(&s) < 0)
			_exit(100);
		_exit(fn());
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* Under the workers' filter. */
static int under_filter(unsigned flags, int (*fn)(void))
{
	return under(SANDBOX_WORKER, flags, fn);
}

/* Did the call just made fail with EPERM, the filter's answer? */
static bool refused(long r)
{
	return r < 0 && errno == EPERM;
}

/* 0 if every call a worker has no business making failed with EPERM. */
static int forbidden_child(void)
{
	char *const argv[] = {(char *)"true", NULL};
	struct rlimit r;
	int sv[2], fd;

	/* Paths that do not exist: without the filter each fails otherwise, and harms nothing. */
	execve("/nonexistent/bpfbroker", argv, (char *const[]){NULL});
	if (errno != EPERM)
		return 1;
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0 || errno != EPERM)
		return 2;
	if (mount("none", "/nonexistent/bpfbroker", "tmpfs", 0, NULL) == 0 || errno != EPERM)
		return 3;
	if (unshare(CLONE_NEWUSER) == 0 || errno != EPERM)
		return 4;
	if (fork() >= 0 || errno != EPERM) /* clone, as glibc makes it */
		return 5;
	/* A worker talks to the event loop over what it was given, never makes a pair. */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0 || errno != EPERM)
		return 6;
	/* Another process's namespace but a network one, another's limits, a pidfd: refused. */
	fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNS) == 0 || errno != EPERM)
		return 7;
	close(fd);
	if (prlimit(getppid(), RLIMIT_NOFILE, NULL, &r) == 0 || errno != EPERM)
		return 8;
	if (syscall(SYS_pidfd_open, getppid(), 0) >= 0 || errno != EPERM)
		return 9;
	return 0;
}

static void test_forbidden(void **state)
{
	assert_int_equal(under_filter(0, forbidden_child), 0);
	/* The same calls with the filter only logging: the test sees the difference. */
	assert_int_not_equal(under_filter(SANDBOX_LOG_ONLY, forbidden_child), 0);
	/* A test's leave to leave the network namespace leaves the rest refused. */
	assert_int_equal(under_filter(SANDBOX_UNSHARE_NET, forbidden_child), 0);
}

/* 0 if the fcntl() commands libbpf, libelf, glibc and the worker make work. */
static int fcntl_child(void)
{
	int fd = memfd_create("test", MFD_CLOEXEC | MFD_ALLOW_SEALING), dup;

	if (fd < 0 || fcntl(fd, F_GETFD) != FD_CLOEXEC || fcntl(fd, F_SETFD, 0) < 0 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return 4;
	if (fcntl(fd, F_GETFL) < 0 || fcntl(fd, F_SETFL, O_NONBLOCK) < 0 ||
	    !(fcntl(fd, F_GETFL) & O_NONBLOCK))
		return 5;
	dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (dup < 3)
		return 6;
	close(dup);
	dup = fcntl(fd, F_DUPFD, 3);
	if (dup < 3)
		return 7;
	close(dup);
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_GROW) < 0 || fcntl(fd, F_GET_SEALS) != F_SEAL_GROW)
		return 8;
	close(fd);
	return 0;
}

/* 0 if what a worker does still works. */
static int allowed_child(void)
{
	char buf[16];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || read(fd, buf, sizeof(buf)) <= 0)
		return 1;
	close(fd);
	if (getpid() <= 0 || write(STDERR_FILENO, "", 0) < 0)
		return 2;
	/* The one kind of socket a worker makes, for an interface's index. */
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 3;
	close(fd);
	return fcntl_child();
}

/*
 * 0 if a worker can't have the kernel signal another process for it (fd a
 * socket of its own): an fd's owner (SIGIO, SIGURG, lease breaks, directory
 * changes) set to the daemon or a group, a timer's or a message queue's
 * notification, inotify or fanotify.
 */
static int signal_by_kernel_child(int fd)
{
	struct sigevent sev = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGKILL};
	int dir = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC), timer;

	if (dir < 0)
		return 99;
	if (!refused(fcntl(fd, F_SETOWN, getppid())) || !refused(fcntl(fd, F_SETOWN, -getppid())) ||
	    !refused(fcntl(fd, F_SETOWN_EX, &(struct f_owner_ex){F_OWNER_PID, getppid()})))
		return 20;
	if (!refused(fcntl(fd, F_SETSIG, SIGKILL)) || !refused(fcntl(fd, F_SETLEASE, F_RDLCK)) ||
	    !refused(fcntl(dir, F_NOTIFY, DN_CREATE)))
		return 21;
	/* O_ASYNC refused, with other flags or alone; the flags without it still set. */
	if (!refused(fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK)) ||
	    !refused(fcntl(fd, F_SETFL, O_ASYNC)) || (fcntl(fd, F_GETFL) & O_ASYNC) ||
	    fcntl(fd, F_SETFL, O_NONBLOCK) < 0)
		return 22;
	sev._sigev_un._tid = getppid(); /* sigev_notify_thread_id, which glibc 2.36 does not name */
	if (!refused(syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, &timer)) ||
	    !refused(syscall(SYS_mq_notify, -1, &sev)))
		return 23;
	if (!refused(inotify_init1(IN_CLOEXEC)) || !refused(syscall(SYS_fanotify_init, 0, 0)))
		return 24;
	close(dir);
	return 0;
}

/*
 * 0 if what code an object took over would try next fails with EPERM: reach
 * a root service over a local socket (D-Bus, varlink), signal the daemon or
 * another root process, a terminal's ioctl, a walk of every program in the
 * system, a datagram readdressed, the event loop's fd replaced.
 */
static int escape_child(void)
{
	static const struct sockaddr_un sa = {.sun_family = AF_UNIX,
					      .sun_path = "/nonexistent/bpfbroker"};
	union bpf_attr attr = {};
	char c = 0;
	int fd, sv[2], k;

	/* fd 3 stands for the event loop's socket, as in a worker; ours come after it. */
	if (fcntl(3, F_GETFD) < 0 && open("/dev/null", O_RDONLY | O_CLOEXEC) != 3)
		return 99;
	if (!refused(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)))
		return 1;
	if (!refused(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)))
		return 2;
	if (!refused(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) ||
	    !refused(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0)))
		return 3;
	/* The one kind it may make, for an interface's index: connected nowhere. */
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || !refused(connect(fd, (const struct sockaddr *)&sa, sizeof(sa))))
		return 4;
	if (!refused(sendto(fd, "x", 1, MSG_NOSIGNAL, (const struct sockaddr *)&sa, sizeof(sa))))
		return 5;
	if (!refused(sendmsg(fd,
			     &(struct msghdr){.msg_name = (void *)&sa, .msg_namelen = sizeof(sa)},
			     MSG_NOSIGNAL)))
		return 6;
	/* Signals to the parent (the daemon, the spawner): refused; to itself: allowed. */
	if (!refused(kill(getppid(), 0)) || !refused(kill(-1, 0)) || !refused(kill(0, 0)))
		return 7;
	if (!refused(syscall(SYS_tgkill, getppid(), getppid(), 0)) ||
	    !refused(syscall(SYS_tkill, getppid(), 0)))
		return 8;
	if (kill(getpid(), 0) < 0 || syscall(SYS_tgkill, getpid(), getpid(), 0) < 0)
		return 9;
	if (!refused(syscall(SYS_pidfd_send_signal, 0, 0, NULL, 0)))
		return 10;
	/* ioctl: a terminal's input, a socket's queue; an interface's index still works. */
	if (!refused(ioctl(STDERR_FILENO, TIOCSTI, &c)) || !refused(ioctl(fd, FIONREAD, &c)))
		return 11;
	if (ioctl(fd, SIOCGIFINDEX, &(struct ifreq){.ifr_name = "lo"}) < 0 && errno == EPERM)
		return 12;
	/* bpf(): a walk of every program and map, statistics for all; a bad fd still reaches it. */
	if (!refused(syscall(__NR_bpf, BPF_PROG_GET_NEXT_ID, &attr, sizeof(attr))) ||
	    !refused(syscall(__NR_bpf, BPF_MAP_GET_NEXT_ID, &attr, sizeof(attr))) ||
	    !refused(syscall(__NR_bpf, BPF_ENABLE_STATS, &attr, sizeof(attr))) ||
	    !refused(syscall(__NR_bpf, BPF_ITER_CREATE, &attr, sizeof(attr))))
		return 13;
	attr.info.bpf_fd = (uint32_t)-1;
	if (syscall(__NR_bpf, BPF_OBJ_GET_INFO_BY_FD, &attr, sizeof(attr)) == 0 || errno == EPERM)
		return 14;
	/* fd 3 stays the event loop's socket, the one sendmsg() may use. */
	if (!refused(close(3)) || !refused(dup2(fd, 3)) || !refused(dup3(fd, 3, O_CLOEXEC)) ||
	    !refused(syscall(SYS_close_range, 3, ~0U, 0)))
		return 15;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) == 0 || errno != EPERM)
		return 16;
	k = signal_by_kernel_child(fd);
	close(fd);
	return k;
}

static void test_escape(void **state)
{
	assert_int_equal(under_filter(0, escape_child), 0);
	/* The same calls with the filter only logging: the test sees the difference. */
	assert_int_not_equal(under_filter(SANDBOX_LOG_ONLY, escape_child), 0);
}

/* 0 if the spawner's filter refuses what forking workers never takes. */
static int spawner_forbidden_child(void)
{
	char *const argv[] = {(char *)"true", NULL};
	static const struct sockaddr_un sa = {.sun_family = AF_UNIX,
					      .sun_path = "/nonexistent/bpfbroker"};
	int sv[2], status;
	pid_t pid;

	execve("/nonexistent/bpfbroker", argv, (char *const[]){NULL});
	if (errno != EPERM)
		return 1;
	if (!refused(ptrace(PTRACE_TRACEME, 0, NULL, NULL)) ||
	    !refused(mount("none", "/nonexistent/bpfbroker", "tmpfs", 0, NULL)) ||
	    !refused(unshare(CLONE_NEWUSER)))
		return 2;
	/* A fork with new namespaces, or a thread: not how workers are made. */
	if (!refused(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0)) ||
	    !refused(syscall(SYS_clone, CLONE_VM | CLONE_THREAD | CLONE_SIGHAND, NULL, NULL, NULL,
			     0)))
		return 3;
	if (!refused(socket(AF_UNIX, SOCK_STREAM, 0)) || !refused(socket(AF_INET, SOCK_DGRAM, 0)) ||
	    !refused(ioctl(STDERR_FILENO, TIOCSTI, "x")))
		return 4;
	/* A signal to one process by its pid only: not to all, a group, or its own (the daemon's).
	 */
	if (!refused(kill(-1, 0)) || !refused(kill(0, 0)) || !refused(kill(-getppid(), 0)) ||
	    !refused(kill(1 << 22, 0)) || kill(getppid(), 0) < 0 || kill(1, 0) < 0 ||
	    kill(getpid(), 0) < 0)
		return 8;

	/* What it does: a pair for a worker, the worker, its pidfd, its end. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return 5;
	if (!refused(connect(sv[0], (const struct sockaddr *)&sa, sizeof(sa))))
		return 6;
	/* Nor by an fd's owner: the spawner's filter holds those back as the workers' does. */
	if (!refused(fcntl(sv[0], F_SETOWN, getppid())) ||
	    !refused(fcntl(sv[0], F_SETSIG, SIGKILL)) || !refused(fcntl(sv[0], F_SETFL, O_ASYNC)))
		return 9;
	pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid < 0 || syscall(SYS_pidfd_open, pid, 0) < 0 || waitpid(pid, &status, 0) != pid)
		return 7;
	return 0;
}

static int allowed_child(void);
static int between_jobs_child(void);

/* In a child under the spawner's filter: a worker forked, under both filters, works. */
static int allowed_in_spawner_child(void)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		struct sandbox s;

		if (sandbox_build(SANDBOX_WORKER, 0, 0, &s) < 0 || sandbox_apply(&s) < 0)
			_exit(100);
		_exit(allowed_child() * 10 + between_jobs_child());
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 99;
	return WEXITSTATUS(status);
}

static void test_spawner(void **state)
{
	assert_int_equal(under(SANDBOX_SPAWNER, 0, spawner_forbidden_child), 0);
	assert_int_not_equal(under(SANDBOX_SPAWNER, SANDBOX_LOG_ONLY, spawner_forbidden_child), 0);
	/* A worker forked under it still does what a worker does, under both filters. */
	assert_int_equal(under(SANDBOX_SPAWNER, 0, allowed_in_spawner_child), 0);
}

static void test_allowed(void **state)
{
	assert_int_equal(under_filter(0, allowed_child), 0);
}

/*
 * 0 if what a worker does between two jobs of its connection works: the
 * checks and restores of worker/hygiene.c, and an attach's way back into its
 * own network namespace.
 */
static int between_jobs_child(void)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	struct itimerval off = {};
	struct sigaction sa;
	struct rlimit r;
	struct stat st;
	uid_t u[3];
	gid_t g[3];
	DIR *dir = opendir("/proc/self/fd");
	int fd;

	if (!dir || !readdir(dir))
		return 1;
	closedir(dir);
	if (stat("/proc/self/ns/net", &st) < 0 || stat(".", &st) < 0 || stat("/", &st) < 0)
		return 2;
	if (getrlimit(RLIMIT_NOFILE, &r) < 0 || syscall(SYS_capget, &h, d) < 0)
		return 3;
	if (sigaction(SIGALRM, NULL, &sa) < 0 || setitimer(ITIMER_REAL, &off, NULL) < 0)
		return 4;
	if (getresuid(&u[0], &u[1], &u[2]) < 0 || getresgid(&g[0], &g[1], &g[2]) < 0)
		return 5;
	umask(umask(022));
	fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 6;
	close(fd);
	if (geteuid() == 0) {
		fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (fd < 0 || setns(fd, CLONE_NEWNET) < 0)
			return 7;
		close(fd);
	}
	return 0;
}

static void test_between_jobs(void **state)
{
	assert_int_equal(under_filter(0, between_jobs_child), 0);
}

/* The testing mode job-leaks:netns needs: a new network namespace, and nothing else. */
static int unshare_net_child(void)
{
	if (geteuid() == 0 && unshare(CLONE_NEWNET) < 0)
		return 1;
	if (unshare(CLONE_NEWNS) == 0 || errno != EPERM)
		return 2;
	return 0;
}

static void test_unshare_net(void **state)
{
	assert_int_equal(under_filter(SANDBOX_UNSHARE_NET, unshare_net_child), 0);
	if (geteuid() == 0)
		assert_int_not_equal(under_filter(0, unshare_net_child), 0);
}

/* In a child: under the filter, listing BTF objects ends at once; nothing else changes. */
static int hidden_child(void)
{
	__u32 id = 0;

	if (bpf_btf_get_next_id(0, &id) == 0 || errno != ENOENT)
		return 11;
	/* Other commands reach the kernel: a bad fd is EBADF, not ENOENT. */
	if (bpf_map_get_next_key(-1, NULL, NULL) == 0 || errno == ENOENT)
		return 12;
	if (geteuid() == 0) {
		/* As root, links are listed as before (named_links.c); programs are not walked. */
		if (bpf_link_get_next_id(0, &id) < 0 && errno != ENOENT)
			return 13;
		if (bpf_prog_get_next_id(0, &id) == 0 || errno != EPERM)
			return 14;
	}
	return 0;
}

static void test_modules_hidden(void **state)
{
	__u32 id = 0;

	/* Without the filter root lists vmlinux's BTF at least: the filter is what changes it. */
	if (geteuid() == 0)
		assert_int_equal(bpf_btf_get_next_id(0, &id), 0);
	assert_int_equal(under_filter(0, hidden_child), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forbidden),      cmocka_unit_test(test_allowed),
		cmocka_unit_test(test_between_jobs),   cmocka_unit_test(test_unshare_net),
		cmocka_unit_test(test_modules_hidden), cmocka_unit_test(test_escape),
		cmocka_unit_test(test_spawner),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
