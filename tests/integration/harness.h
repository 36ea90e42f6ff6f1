/* SPDX-License-Identifier: MIT */
/*
 * Integration harness: a real bpfbrokerd as a root process with a test
 * policy, and clients that run as real unprivileged uids in forked children.
 */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

struct harness {
	char dir[64]; /* temp dir: policy.d/, socket */
	char socket[100];
	char policy_dir[300];
	char pin_root[300]; /* on bpffs, removed at the end */
	char state_dir[300]; /* the daemon's metadata of named objects */
	const char *daemon_log; /* if set, harness_start() sends the daemon's stderr there */
	char bpf_dir[256]; /* built test objects */
	char build_dir[256];
	pid_t daemon;
	/* If set, every client (harness_as_user() and what runs on it) calls this after
	 * dropping privileges, e.g. to install a seccomp filter; < 0 fails the client. */
	int (*client_setup)(void);
};

extern struct harness H;

/* Create the temp dir and policy dir; check we are root and know where the build is. */
int harness_init(void);
/* Write policy.d/NAME with the given JSON text, mode 0644 (the daemon reads only root's files). */
int harness_write_policy(const char *name, const char *json);
/* Write text to path (created or truncated), mode 0644: a file only root can write. */
int harness_write_file(const char *path, const char *text);
/* Start the daemon on H.socket, with extra options (space-separated, or NULL); waits until it
 * accepts connections. */
int harness_start(const char *extra_arg);
/*
 * Start the daemon the way a socket unit does: activate (the path of
 * systemd-socket-activate) listens on H.socket (SOCK_SEQPACKET if seqpacket,
 * else SOCK_STREAM), mode 0666, and execs the daemon on the first connection
 * with the socket passed as fd 3 (LISTEN_FDS); the daemon gets
 * --socket unused_socket, which it must ignore. notify_socket (or NULL)
 * becomes its NOTIFY_SOCKET. Returns once the socket exists; H.daemon is the
 * activator's pid, which becomes the daemon's.
 */
int harness_start_activated(const char *activate, bool seqpacket, const char *notify_socket,
			    const char *unused_socket, const char *extra_arg);
/*
 * SIGHUP the daemon (harness_start()'s) and wait until it has reloaded its policy: it
 * tells its NOTIFY_SOCKET READY=1 again. A policy it refused leaves the old one in
 * force, and returns 0 too. -ETIMEDOUT, or -ECHILD if it died.
 */
int harness_reload(void);
/* Stop the daemon with sig and reap it, keeping its pins and state (restart tests). */
int harness_kill(int sig);
/* Reap a daemon that is expected to die by itself (fault injection); -ETIMEDOUT if it lives. */
int harness_wait_death(void);
/* SIGTERM the daemon, wait, and remove everything the tests created. */
int harness_stop(void);
/* Path of a built test object. */
const char *harness_object(const char *name);

/*
 * A client_setup: a seccomp filter under which every bpf() call fails with
 * EPERM, as for a caller without CAP_BPF on kernels before 6.5 with
 * kernel.unprivileged_bpf_disabled set. < 0 if it could not be installed.
 */
int harness_deny_bpf(void);
/*
 * A cmocka teardown for tests that set H.client_setup: even when one fails
 * half-way, later tests' clients run without it.
 */
int harness_clear_client_setup(void **state);

struct user {
	uid_t uid;
	gid_t gid;
	const gid_t *groups;
	size_t n_groups;
};

/* Run fn(arg) in a child as user; returns the child's exit status (0 = pass), or 128+signal. */
int harness_as_user(const struct user *u, int (*fn)(void *), void *arg);
/* The same in a new network namespace (lo up), made as root before dropping to u. */
int harness_in_new_netns_as(const struct user *u, int (*fn)(void *), void *arg);

/* fn(arg) as u in a child that runs on; its pid, for harness_reap() (-1: fork failed). */
pid_t harness_spawn_as(const struct user *u, int (*fn)(void *), void *arg);
/* Wait for a child of harness_spawn_as(): its status as harness_as_user() gives it. */
int harness_reap(pid_t pid);
/* A SOCK_SEQPACKET connection to H.socket, for requests written by hand; -1 on failure. */
int harness_connect(void);

/* Run argv[0] with argv as u; returns its exit status, as harness_as_user(). */
int harness_exec_as(const struct user *u, char *const *argv);
/* Run bpfctl --socket H.socket ARGS as u; stdout into out; returns its exit status. */
int harness_bpfctl(const struct user *u, char *out, size_t size, const char *const *args);
/* The same with the arguments in ap, up to a NULL (at most 27). */
int harness_bpfctl_va(const struct user *u, char *out, size_t size, va_list ap);
/* The same with the arguments up to a NULL, stdout into harness_out. */
extern char harness_out[16384];
int harness_ctl(const struct user *u, ...);
/* Remember the newest kernel object ids, and later check none newer survive. */
void harness_mark_kernel_objects(void);
int harness_check_no_kernel_objects_left(void);
/* A field of /proc/PID/status ("CapEff", "NoNewPrivs") as a number in base; ~0 if absent. */
unsigned long long harness_status_field(pid_t pid, const char *key, int base);
/* How many entries of dir (not dot files) start with prefix; the first one's name into
 * first (if not NULL). -errno if dir cannot be read. */
int harness_count_entries(const char *dir, const char *prefix, char *first, size_t size);
/* How many fds a process has open (/proc/PID/fd). */
unsigned harness_count_fds(pid_t pid);
/* Where cgroup v2 is mounted: /sys/fs/cgroup/unified (hybrid) or /sys/fs/cgroup. */
int harness_cgroup_root(char *buf, size_t size);
/* Delegate cgroup dir to uid as systemd's Delegate=yes does: the directory and its
 * cgroup.procs, cgroup.threads and cgroup.subtree_control. */
int harness_chown_cgroup(const char *dir, uid_t uid);
/* Run fn(arg) in a child that root first moves into cgroup dir; its exit status. */
int harness_in_cgroup(const char *dir, int (*fn)(void *), void *arg);
/* The same, fn(arg) run as u (harness_as_user()) once the child is in dir. */
int harness_in_cgroup_as(const char *dir, const struct user *u, int (*fn)(void *), void *arg);
/*
 * mkdir <cgroup root>/REL and the components missing on the way, remembering what
 * it made for harness_cgroups_remove(); owner != 0: delegate the last to owner.
 * The full path in ret.
 */
int harness_cgroup_make(const char *rel, uid_t owner, char *ret, size_t size);
/*
 * The same for BASE-PID/REL (REL NULL or "": BASE-PID itself): a name of this run's
 * own, so that no other run of the test, nor what a killed one left, shares it.
 */
int harness_cgroup_make_own(const char *base, const char *rel, uid_t owner, char *ret, size_t size);
/*
 * rmdir every cgroup harness_cgroup_make() made, the deepest first; one still busy
 * (a test that failed half-way) has its processes killed and the cgroups below it
 * removed first.
 */
int harness_cgroups_remove(void);
/* harness_stop(), harness_cgroups_remove(), then the kernel object leak check. */
int harness_finish(void);
/*
 * A group setup that failed part-way: the daemon stopped, the directories and cgroups
 * removed, as the teardown would (which cmocka does not run then); returns -1.
 */
int harness_setup_failed(void);
/* harness_finish() as a cmocka group teardown. */
int harness_group_teardown(void **state);
/* A group setup's usual end: policy.d/50-test.json, the kernel objects marked, the daemon started.
 */
int harness_start_with_policy(const char *json);
/* tracefs, for tracepoint attach: mounted at /sys/kernel/tracing if it is nowhere. */
int harness_tracefs_ready(void);
/* An existing group to test group rules with (its name; its gid in *gid). */
const char *harness_find_group(gid_t *gid);
/* A new copy of file from at to, owned by owner (uid and gid), with mode (setuid bits too). */
int harness_copy_file(const char *from, const char *to, uid_t owner, mode_t mode);

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);   \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)
