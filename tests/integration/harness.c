/* SPDX-License-Identifier: MIT */
#include "harness.h"

#include "common/macro.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/magic.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct harness H = {.daemon = -1};

const char *harness_object(const char *name)
{
	static char path[4][512];
	static int slot;
	char *p = path[slot++ % 4];

	snprintf(p, 512, "%s/%s.bpf.o", H.bpf_dir, name);
	return p;
}

int harness_write_policy(const char *name, const char *json)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", H.policy_dir, name);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	/* The daemon reads only policy files nobody but root can write, whatever our umask. */
	fchmod(fileno(f), 0644);
	fputs(json, f);
	return fclose(f) == 0 ? 0 : -errno;
}

int harness_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -errno;
	fchmod(fileno(f), 0644);
	fputs(text, f);
	return fclose(f) == 0 ? 0 : -errno;
}

static bool daemon_accepts(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	bool ok;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", H.socket);
	ok = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/*
 * The leak checks compare kernel object ids machine-wide, so two integration
 * test processes (two build trees, or a CI clone next to a working tree) must
 * not overlap: each holds this lock for its whole life. The fd is not
 * inherited across exec, and the lock goes when the process exits.
 */
static int harness_lock_machine(void)
{
	int fd = open("/run/bpfbroker-integration.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return 0; /* fd stays open on purpose: it holds the lock */
}

int harness_init(void)
{
	static bool locked;

	const char *bpf = getenv("BPFBROKER_TEST_BPF_DIR");
	const char *build = getenv("BPFBROKER_BUILD_DIR");

	if (!bpf || !build) {
		fprintf(stderr, "BPFBROKER_TEST_BPF_DIR and BPFBROKER_BUILD_DIR must be set (meson "
				"test does)\n");
		return -EINVAL;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "integration tests must run as root\n");
		return -EPERM;
	}
	if (!locked) {
		int r = harness_lock_machine();

		if (r < 0) {
			fprintf(stderr, "cannot take the integration test lock: %s\n",
				strerror(-r));
			return r;
		}
		locked = true;
	}
	snprintf(H.bpf_dir, sizeof(H.bpf_dir), "%s", bpf);
	snprintf(H.build_dir, sizeof(H.build_dir), "%s", build);
	if (!H.dir[0]) {
		snprintf(H.dir, sizeof(H.dir), "/tmp/bpfbroker-test-XXXXXX");
		if (!mkdtemp(H.dir))
			return -errno;
		/* Clients run as other uids and must reach the socket. */
		chmod(H.dir, 0755);
		snprintf(H.socket, sizeof(H.socket), "%s/broker.sock", H.dir);
		snprintf(H.policy_dir, sizeof(H.policy_dir), "%s/policy.d", H.dir);
		snprintf(H.pin_root, sizeof(H.pin_root), "/sys/fs/bpf/bpfbroker-test-%d",
			 (int)getpid());
		snprintf(H.state_dir, sizeof(H.state_dir), "%s/state", H.dir);
		if (mkdir(H.policy_dir, 0755) < 0)
			return -errno;
	}
	return 0;
}

/*
 * Exec the daemon with the harness's directories and extra_arg (more options,
 * separated by spaces). prefix: a command line to run it under (NULL-terminated,
 * or NULL), such as systemd-socket-activate's; socket: the --socket to give.
 */
static void daemon_exec(const char *const *prefix, const char *socket, const char *extra_arg)
{
	char exe[512], worker[512], *argv[48];
	char *extra = extra_arg ? strdup(extra_arg) : NULL, *save = NULL;
	int n = 0;

	snprintf(exe, sizeof(exe), "%s/daemon/bpfbrokerd", H.build_dir);
	/* The build's worker, not an installed one. */
	snprintf(worker, sizeof(worker), "%s/daemon/bpfbroker-worker", H.build_dir);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (H.daemon_log) {
		int fd = open(H.daemon_log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

		if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
			_exit(126);
	}
	for (; prefix && *prefix && n < 16; prefix++)
		argv[n++] = (char *)*prefix;
	argv[n++] = exe;
	for (const char *const *a =
		     (const char *const[]){"--socket", socket, "--policy-dir", H.policy_dir,
					   "--pin-root", H.pin_root, "--state-dir", H.state_dir,
					   "--workers", "2", "--worker-exe", worker, NULL};
	     *a; a++)
		argv[n++] = (char *)*a;
	for (char *t = extra ? strtok_r(extra, " ", &save) : NULL; t && n < 47;
	     t = strtok_r(NULL, " ", &save))
		argv[n++] = t;
	argv[n] = NULL;
	execv(argv[0], argv);
	_exit(127);
}

/* Wait until ready() says so, or the process we started exits. */
static int daemon_wait(bool (*ready)(void), const char *what)
{
	for (int i = 0; i < 500; i++) {
		int status;

		if (ready())
			return 0;
		if (waitpid(H.daemon, &status, WNOHANG) == H.daemon) {
			H.daemon = -1;
			fprintf(stderr, "%s exited at startup (status %d)\n", what, status);
			return -ECHILD;
		}
		usleep(10000);
	}
	return -ETIMEDOUT;
}

/* The daemon's sd_notify() socket (harness_start()'s), for harness_reload(); -EBADF: none. */
static int notify_fd = -EBADF;

static int notify_open(char *path, size_t size)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd;

	if ((size_t)snprintf(path, size, "%s/notify.sock", H.dir) >= size ||
	    strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	if (notify_fd >= 0)
		return 0;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	strcpy(a.sun_path, path);
	(void)unlink(path);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int k = -errno;

		close(fd);
		return k;
	}
	notify_fd = fd;
	return 0;
}

/*
 * Throw away what the daemons said so far. Only harness_reload() reads the socket, and
 * sd_notify() blocks on a full one (net.unix.max_dgram_qlen datagrams: 10 in a fresh network
 * namespace): drained before each daemon starts and is stopped, a test's direct SIGHUPs and
 * its daemons' READY=1 and STOPPING=1 never pile up.
 */
static void notify_drain(void)
{
	char msg[512];

	while (notify_fd >= 0 && recv(notify_fd, msg, sizeof(msg), 0) >= 0)
		;
}

int harness_start(const char *extra_arg)
{
	char notify[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
	int k = notify_open(notify, sizeof(notify));

	if (k < 0)
		return k;
	notify_drain();
	H.daemon = fork();
	if (H.daemon < 0)
		return -errno;
	if (H.daemon == 0) {
		/* Its READY=1 after a reload's RELOADING=1 is how harness_reload() knows. */
		if (setenv("NOTIFY_SOCKET", notify, 1) < 0)
			_exit(126);
		daemon_exec(NULL, H.socket, extra_arg);
	}
	return daemon_wait(daemon_accepts, "bpfbrokerd");
}

int harness_reload(void)
{
	char msg[512];
	bool reloading = false;
	ssize_t n;

	if (notify_fd < 0 || H.daemon <= 0)
		return -ENOTCONN;
	/* What it said before (READY=1 at startup, earlier reloads) is not this reload. */
	notify_drain();
	if (kill(H.daemon, SIGHUP) < 0)
		return -errno;
	/* RELOADING=1, then READY=1 once the new policy (or the old, if the new one was
	 * refused) is in force and the idle workers replaced: later requests see it. */
	for (int i = 0; i < 1000; i++) {
		struct pollfd p = {.fd = notify_fd, .events = POLLIN};

		if (poll(&p, 1, 20) < 0 && errno != EINTR)
			return -errno;
		while ((n = recv(notify_fd, msg, sizeof(msg) - 1, 0)) >= 0) {
			msg[n] = '\0';
			if (strstr(msg, "RELOADING=1"))
				reloading = true;
			else if (reloading && strstr(msg, "READY=1"))
				return 0;
		}
		if (waitpid(H.daemon, NULL, WNOHANG) == H.daemon) {
			H.daemon = -1;
			return -ECHILD;
		}
	}
	fprintf(stderr, "the daemon did not finish its policy reload in 20 s\n");
	return -ETIMEDOUT;
}

static bool socket_exists(void)
{
	struct stat st;

	return stat(H.socket, &st) == 0 && S_ISSOCK(st.st_mode);
}

int harness_start_activated(const char *activate, bool seqpacket, const char *notify_socket,
			    const char *unused_socket, const char *extra_arg)
{
	char notify_env[300];
	const char *prefix[8] = {activate, "-l", H.socket};
	int n = 3, k;

	if (seqpacket)
		prefix[n++] = "--seqpacket";
	if (notify_socket) {
		snprintf(notify_env, sizeof(notify_env), "NOTIFY_SOCKET=%s", notify_socket);
		prefix[n++] = "-E";
		prefix[n++] = notify_env;
	}
	prefix[n] = NULL;
	H.daemon = fork();
	if (H.daemon < 0)
		return -errno;
	/* The activator execs the daemon in its own place: H.daemon stays its pid. */
	if (H.daemon == 0)
		daemon_exec(prefix, unused_socket, extra_arg);
	/* Only wait for the socket: the first connection starts the daemon. */
	k = daemon_wait(socket_exists, activate);
	/* It makes the socket 0644: let everyone connect, as SocketMode=0666 does. */
	if (k >= 0 && chmod(H.socket, 0666) < 0)
		k = -errno;
	return k;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path) < 0 ? -1 : 0;
}

int harness_kill(int sig)
{
	int status = 0;

	if (H.daemon <= 0)
		return -ESRCH;
	notify_drain();
	kill(H.daemon, sig);
	if (waitpid(H.daemon, &status, 0) < 0)
		return -errno;
	H.daemon = -1;
	return status;
}

int harness_wait_death(void)
{
	for (int i = 0; i < 500; i++) {
		int status;

		if (waitpid(H.daemon, &status, WNOHANG) == H.daemon) {
			H.daemon = -1;
			return status;
		}
		usleep(10000);
	}
	return -ETIMEDOUT;
}

int harness_stop(void)
{
	int status = 0;

	if (H.daemon > 0) {
		notify_drain();
		kill(H.daemon, SIGTERM);
		/* A test that stopped it (SIGSTOP) and failed before it went on. */
		kill(H.daemon, SIGCONT);
		waitpid(H.daemon, &status, 0);
		H.daemon = -1;
	}
	if (H.pin_root[0])
		nftw(H.pin_root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	notify_fd = safe_close(notify_fd);
	if (H.dir[0])
		nftw(H.dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

/* Fork; the child runs child(arg) and exits with its result. The child's exit status, or
 * 128+signal. */
static int fork_wait(int (*child)(void *), void *arg)
{
	pid_t pid;
	int status;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		_exit(child(arg));
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct child_call {
	const struct user *u;
	const char *cgroup;
	int (*enter)(void); /* as root, before dropping privileges (or NULL) */
	int (*fn)(void *);
	void *arg;
};

static int drop_and_call(void *arg)
{
	const struct child_call *c = arg;
	const struct user *u = c->u;

	if (c->enter && c->enter() < 0)
		return 122;
	/* Order matters: groups and gid while still root, uid last; then re-check. */
	if (setgroups(u->n_groups, u->groups) < 0 || setresgid(u->gid, u->gid, u->gid) < 0 ||
	    setresuid(u->uid, u->uid, u->uid) < 0) {
		perror("dropping privileges");
		return 120;
	}
	if (geteuid() != u->uid || getegid() != u->gid || (u->uid != 0 && setuid(0) == 0)) {
		fprintf(stderr, "privilege drop did not hold\n");
		return 121;
	}
	if (H.client_setup && H.client_setup() < 0)
		return 123;
	return c->fn(c->arg);
}

/* ---- the seccomp filter: bpf() fails with EPERM, as before 6.5 with the sysctl set ---- */

#if defined(__x86_64__)
#define AUDIT_ARCH_NATIVE AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define AUDIT_ARCH_NATIVE AUDIT_ARCH_AARCH64
#else
#error "harness: add this architecture's AUDIT_ARCH"
#endif

int harness_deny_bpf(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		/* Another ABI (x32, compat) has other numbers: not what clients here use. */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_NATIVE, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_bpf, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = ARRAY_SIZE(filter), .filter = filter};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) {
		perror("installing the seccomp filter");
		return -1;
	}
	/* It holds: even a harmless bpf() call is EPERM now. */
	if (bpf_map_get_next_key(-1, NULL, NULL) == 0 || errno != EPERM) {
		fprintf(stderr, "bpf() is not refused with EPERM under the filter: %m\n");
		return -1;
	}
	return 0;
}

int harness_clear_client_setup(void **state)
{
	H.client_setup = NULL;
	return 0;
}

int harness_as_user(const struct user *u, int (*fn)(void *), void *arg)
{
	struct child_call c = {.u = u, .fn = fn, .arg = arg};

	return fork_wait(drop_and_call, &c);
}

pid_t harness_spawn_as(const struct user *u, int (*fn)(void *), void *arg)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();

	if (pid == 0)
		_exit(harness_as_user(u, fn, arg));
	return pid;
}

int harness_reap(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int harness_connect(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", H.socket);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int harness_tracefs_ready(void)
{
	if (access("/sys/kernel/tracing/events", F_OK) == 0 ||
	    access("/sys/kernel/debug/tracing/events", F_OK) == 0)
		return 0;
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL) < 0)
		return -errno;
	return 0;
}

/* A new network namespace with lo up. */
static int netns_enter_new(void)
{
	struct ifreq ifr = {.ifr_flags = IFF_UP};
	int s;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (unshare(CLONE_NEWNET) < 0 || (s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0) {
		perror("new network namespace");
		return -1;
	}
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0) {
		perror("bringing lo up");
		close(s);
		return -1;
	}
	close(s);
	return 0;
}

int harness_in_new_netns_as(const struct user *u, int (*fn)(void *), void *arg)
{
	struct child_call c = {.u = u, .enter = netns_enter_new, .fn = fn, .arg = arg};

	return fork_wait(drop_and_call, &c);
}

static int exec_argv(void *arg)
{
	char **argv = arg;

	execv(argv[0], argv);
	return 127;
}

int harness_exec_as(const struct user *u, char *const *argv)
{
	return harness_as_user(u, exec_argv, (void *)argv);
}

int harness_bpfctl(const struct user *u, char *out, size_t size, const char *const *args)
{
	char exe[512], *argv[32];
	int p[2], k, n = 0, saved = dup(STDOUT_FILENO);
	ssize_t got;
	size_t len = 0;

	snprintf(exe, sizeof(exe), "%s/client/bpfctl", H.build_dir);
	argv[n++] = exe;
	argv[n++] = "--socket";
	argv[n++] = H.socket;
	for (; *args && n < 31; args++)
		argv[n++] = (char *)*args;
	argv[n] = NULL;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	fflush(stdout);
	dup2(p[1], STDOUT_FILENO);
	k = harness_as_user(u, exec_argv, argv);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(p[1]);
	while (len + 1 < size && (got = read(p[0], out + len, size - 1 - len)) > 0)
		len += (size_t)got;
	out[len] = '\0';
	close(p[0]);
	return k;
}

int harness_bpfctl_va(const struct user *u, char *out, size_t size, va_list ap)
{
	const char *args[28];
	size_t n = 0;

	while (n < 27 && (args[n] = va_arg(ap, const char *)))
		n++;
	args[n] = NULL;
	return harness_bpfctl(u, out, size, args);
}

char harness_out[16384];

int harness_ctl(const struct user *u, ...)
{
	va_list ap;
	int k;

	va_start(ap, u);
	k = harness_bpfctl_va(u, harness_out, sizeof(harness_out), ap);
	va_end(ap);
	return k;
}

static __u32 first_prog_id, first_map_id, first_link_id;

static __u32 highest_id(int (*next)(__u32, __u32 *))
{
	__u32 id = 0, high = 0;

	while (next(id, &id) == 0)
		high = id;
	return high;
}

void harness_mark_kernel_objects(void)
{
	first_prog_id = highest_id(bpf_prog_get_next_id);
	first_map_id = highest_id(bpf_map_get_next_id);
	first_link_id = highest_id(bpf_link_get_next_id);
}

static bool newer_than(__u32 first, int (*next)(__u32, __u32 *), const char *what, bool report)
{
	__u32 id = first;

	if (next(id, &id) != 0)
		return false;
	if (report)
		fprintf(stderr, "%s id %u outlived the tests\n", what, id);
	return true;
}

static bool kernel_objects_left(bool report)
{
	/* || short-circuits on purpose: report the first kind found. */
	return newer_than(first_prog_id, bpf_prog_get_next_id, "program", report) ||
	       newer_than(first_map_id, bpf_map_get_next_id, "map", report) ||
	       newer_than(first_link_id, bpf_link_get_next_id, "link", report);
}

int harness_check_no_kernel_objects_left(void)
{
	/* The kernel frees unreferenced maps and links from a workqueue: give it a moment. */
	for (int i = 0; i < 100 && kernel_objects_left(false); i++)
		usleep(20000);
	if (kernel_objects_left(true))
		return -1;
	if (access(H.pin_root, F_OK) == 0) {
		fprintf(stderr, "%s outlived the tests\n", H.pin_root);
		return -1;
	}
	return 0;
}

int harness_cgroup_root(char *buf, size_t size)
{
	static const char *const candidates[] = {"/sys/fs/cgroup/unified", "/sys/fs/cgroup"};
	struct statfs sfs;

	for (size_t i = 0; i < 2; i++)
		if (statfs(candidates[i], &sfs) == 0 &&
		    (unsigned long)sfs.f_type == CGROUP2_SUPER_MAGIC) {
			snprintf(buf, size, "%s", candidates[i]);
			return 0;
		}
	return -ENOENT;
}

int harness_chown_cgroup(const char *dir, uid_t uid)
{
	static const char *const files[] = {"", "/cgroup.procs", "/cgroup.threads",
					    "/cgroup.subtree_control"};
	char path[PATH_MAX];

	for (size_t i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s%s", dir, files[i]);
		if (chown(path, uid, uid) < 0)
			return -errno;
	}
	return 0;
}

static int join_and_call(void *arg)
{
	const struct child_call *c = arg;
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.procs", c->cgroup);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "0", 1) != 1) {
		perror("joining the cgroup");
		return 120;
	}
	close(fd);
	return c->fn(c->arg);
}

int harness_in_cgroup(const char *dir, int (*fn)(void *), void *arg)
{
	struct child_call c = {.cgroup = dir, .fn = fn, .arg = arg};

	return fork_wait(join_and_call, &c);
}

struct in_cgroup_as {
	const struct user *u;
	int (*fn)(void *);
	void *arg;
};

static int call_as_user(void *arg)
{
	const struct in_cgroup_as *a = arg;

	return harness_as_user(a->u, a->fn, a->arg);
}

int harness_in_cgroup_as(const char *dir, const struct user *u, int (*fn)(void *), void *arg)
{
	struct in_cgroup_as a = {u, fn, arg};

	return harness_in_cgroup(dir, call_as_user, &a);
}

/* Every cgroup harness_cgroup_make() created, in creation order. */
static char made_cgroups[32][PATH_MAX];
static size_t n_made_cgroups;

int harness_cgroup_make(const char *rel, uid_t owner, char *ret, size_t size)
{
	char path[PATH_MAX];
	size_t len;
	int k = harness_cgroup_root(path, sizeof(path));

	if (k < 0)
		return k;
	len = strlen(path);
	for (const char *p = rel; *p;) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);

		len += (size_t)snprintf(path + len, sizeof(path) - len, "/%.*s", (int)n, p);
		if (mkdir(path, 0755) == 0) {
			if (n_made_cgroups == sizeof(made_cgroups) / sizeof(made_cgroups[0]))
				return -E2BIG;
			snprintf(made_cgroups[n_made_cgroups++], PATH_MAX, "%s", path);
		} else if (errno != EEXIST) {
			return -errno;
		}
		p += n + (slash != NULL);
	}
	if (owner != 0) {
		k = harness_chown_cgroup(path, owner);
		if (k < 0)
			return k;
	}
	if (ret)
		snprintf(ret, size, "%s", path);
	return 0;
}

static int cgroup_remove_left(const char *dir);

/*
 * What runs of the test that were killed left: BASE-PID for a PID no longer running,
 * removed as harness_cgroups_remove() removes a busy one. A running PID may be another
 * run's, left alone.
 */
static void cgroup_sweep_dead(const char *base)
{
	char root[PATH_MAX], dir[PATH_MAX + 256];
	size_t len = strlen(base);
	struct dirent *de;
	DIR *d;

	if (harness_cgroup_root(root, sizeof(root)) < 0 || !(d = opendir(root)))
		return;
	while ((de = readdir(d))) {
		const char *p = de->d_name + len + 1;
		char *end;
		long pid;
		int k;

		if (de->d_type != DT_DIR || strncmp(de->d_name, base, len) != 0 ||
		    de->d_name[len] != '-' || *p < '1' || *p > '9')
			continue;
		errno = 0;
		pid = strtol(p, &end, 10);
		if (*end || errno || pid <= 0 || pid > INT_MAX || pid == getpid() ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", root, de->d_name);
		fprintf(stderr, "removing %s, left by a run that is gone\n", dir);
		k = cgroup_remove_left(dir);
		if (k < 0)
			fprintf(stderr, "cannot remove %s: %s\n", dir, strerror(-k));
	}
	closedir(d);
}

int harness_cgroup_make_own(const char *base, const char *rel, uid_t owner, char *ret, size_t size)
{
	static char swept[64][64];
	static size_t n_swept;
	char path[PATH_MAX];
	bool done = false;

	for (size_t i = 0; i < n_swept && !done; i++)
		done = strcmp(swept[i], base) == 0;
	if (!done && strlen(base) < sizeof(swept[0])) {
		cgroup_sweep_dead(base);
		if (n_swept < ARRAY_SIZE(swept))
			snprintf(swept[n_swept++], sizeof(swept[0]), "%s", base);
	}
	if ((size_t)snprintf(path, sizeof(path), "%s-%d%s%s", base, (int)getpid(),
			     rel && rel[0] ? "/" : "", rel ? rel : "") >= sizeof(path))
		return -ENAMETOOLONG;
	return harness_cgroup_make(path, owner, ret, size);
}

static int rmdir_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		(void)rmdir(path);
	return 0;
}

/*
 * A test that failed half-way may leave processes in dir, or cgroups below it that
 * the code under test made: kill the processes (cgroup.kill, the whole subtree), then
 * remove the cgroups, deepest first, while the killed processes leave (a few seconds).
 */
static int cgroup_remove_left(const char *dir)
{
	char kill_path[PATH_MAX + 16];
	int fd;

	snprintf(kill_path, sizeof(kill_path), "%s/cgroup.kill", dir);
	fd = open(kill_path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		(void)!write(fd, "1", 1);
		close(fd);
	}
	for (int i = 0; i < 250; i++) {
		nftw(dir, rmdir_entry, 16, FTW_DEPTH | FTW_PHYS);
		if (access(dir, F_OK) < 0)
			return 0;
		nanosleep(&(struct timespec){.tv_nsec = 20 * 1000 * 1000}, NULL);
	}
	return rmdir(dir) < 0 ? -errno : 0;
}

int harness_cgroups_remove(void)
{
	int k = 0;

	/* The processes the tests put there have normally exited and were reaped. */
	while (n_made_cgroups > 0) {
		const char *dir = made_cgroups[--n_made_cgroups];
		int r;

		if (rmdir(dir) == 0 || errno == ENOENT)
			continue;
		r = cgroup_remove_left(dir);
		if (r < 0) {
			fprintf(stderr, "cannot remove %s: %s\n", dir, strerror(-r));
			k = r;
		}
	}
	return k;
}

int harness_setup_failed(void)
{
	harness_stop();
	harness_cgroups_remove();
	return -1;
}

int harness_group_teardown(void **state)
{
	return harness_finish();
}

int harness_start_with_policy(const char *json)
{
	if (harness_write_policy("50-test.json", json) < 0)
		return -1;
	harness_mark_kernel_objects();
	return harness_start(NULL) < 0 ? -1 : 0;
}

int harness_finish(void)
{
	int k = harness_stop();

	if (harness_cgroups_remove() < 0)
		k = -1;
	if (k < 0)
		return -1;
	return harness_check_no_kernel_objects_left();
}

const char *harness_find_group(gid_t *gid)
{
	static const char *candidates[] = {"audio", "users", "daemon", "bin", NULL};

	for (const char **c = candidates; *c; c++) {
		struct group *g = getgrnam(*c);

		if (g) {
			*gid = g->gr_gid;
			return *c;
		}
	}
	return NULL;
}

int harness_count_entries(const char *dir, const char *prefix, char *first, size_t size)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
			if (n++ == 0 && first)
				snprintf(first, size, "%s", e->d_name);
		}
	closedir(d);
	return n;
}

unsigned harness_count_fds(pid_t pid)
{
	char path[64];
	int n;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	n = harness_count_entries(path, "", NULL, 0);
	return n < 0 ? 0 : (unsigned)n;
}

unsigned long long harness_status_field(pid_t pid, const char *key, int base)
{
	char path[64], line[256];
	unsigned long long v = ~0ull;
	size_t len = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return v;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, len) == 0 && line[len] == ':')
			v = strtoull(line + len + 1, NULL, base);
	fclose(f);
	return v;
}

int harness_copy_file(const char *from, const char *to, uid_t owner, mode_t mode)
{
	char buf[65536];
	_cleanup_close_ int in = open(from, O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int out = -EBADF;
	ssize_t n;

	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
	if (out < 0)
		return -errno;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			return -EIO;
	if (n < 0)
		return -errno;
	/* Owner first: chown clears the setuid bit. */
	if (fchown(out, owner, owner) < 0 || fchmod(out, mode) < 0)
		return -errno;
	return close(TAKE_FD(out)) < 0 ? -errno : 0;
}
