/* SPDX-License-Identifier: MIT */
#include "uprobe.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/error.h"
#include "daemon/shared/caps.h"
#include "common/macro.h"
#include "denial.h"
#include "elfsym.h"
#include "daemon/shared/procfs.h"
#include "proto/proto.h"

#define UPROBE_PMU_DIR "/sys/bus/event_source/devices/uprobe"

/* ---- the request ---- */

/* An fd of the request by its index in the params (decoded, so within PROTO_MAX_REQUEST_FDS). */
static int fd_param(const char *key, int64_t i, const int *fds, size_t n_fds, int *ret,
		    char **error)
{
	if (i < 0 || (size_t)i >= n_fds)
		return error_setf(error, -EBADF,
				  "\"%s\" is fd %" PRId64 ", but the request carries %zu fds", key,
				  i, n_fds);
	*ret = fds[i];
	return 0;
}

int uprobe_request_from(const struct proto_link_target *t, const int *fds, size_t n_fds,
			struct uprobe_request *ret, char **error)
{
	struct uprobe_request q = {.binary_fd = -EBADF, .pidfd = -EBADF, .status_fd = -EBADF};
	int k;

	k = fd_param("fd", t->fd, fds, n_fds, &q.binary_fd, error);
	if (k == 0)
		k = fd_param("pidfd", t->pidfd, fds, n_fds, &q.pidfd, error);
	if (k < 0)
		return k;
	/* The rest the decoder checked (proto/named.c): a place given, symbols bounded. */
	q.symbol = t->name;
	q.offset = t->offset < 0 ? 0 : (uint64_t)t->offset;
	q.retprobe = t->retprobe;
	q.semaphore = t->semaphore;
	q.semaphore_offset = (uint64_t)t->semaphore_offset;
	*ret = q;
	return 0;
}

/* ---- the process ---- */

/* A small /proc file (fdinfo) into buf, NUL-terminated. */
static int read_small(const char *path, char *buf, size_t size)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

int uprobe_pidfd_pid(int pidfd, pid_t *ret)
{
	char path[64], buf[512];
	const char *v;
	ssize_t n;
	long pid;
	char *end;
	int k;

	/* Only a pidfd's fdinfo says "Pid:"; the link name says it is one (also with pidfs). */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", pidfd);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if (strcmp(buf, "anon_inode:[pidfd]") != 0)
		return -ENOTTY;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	k = read_small(path, buf, sizeof(buf));
	if (k < 0)
		return k;
	v = procfs_status_field(buf, "Pid");
	if (!v)
		return -ENOTTY;
	errno = 0;
	pid = strtol(v, &end, 10);
	if (errno || end == v || (*end != '\n' && *end != '\0'))
		return -EIO;
	/* -1: the process is gone (reaped); 0: not in our /proc's pid namespace. */
	if (pid < 0)
		return -ESRCH;
	if (pid == 0)
		return -EXDEV;
	*ret = (pid_t)pid;
	return 0;
}

/* A pidfd turns readable when its process exits (no CAP_KILL needed, unlike a signal). */
static bool pidfd_exited(int pidfd)
{
	struct pollfd pfd = {.fd = pidfd, .events = POLLIN};

	return poll(&pfd, 1, 0) != 0;
}

int uprobe_status_open(json_object *params, const int *fds, size_t n_fds)
{
	json_object *t, *v;
	char path[64];
	pid_t pid = 0, again = 0;
	int64_t i;
	int fd, k;

	if (!params || !json_object_object_get_ex(params, "target", &t) ||
	    !json_object_object_get_ex(t, "type", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), "uprobe") != 0)
		return -ENOTTY;
	/* The worker decodes and reports bad requests; here only what is needed, checked. */
	if (!json_object_object_get_ex(t, "pidfd", &v) || !json_object_is_type(v, json_type_int))
		return -EINVAL;
	i = json_object_get_int64(v);
	if (i < 0 || (uint64_t)i >= n_fds)
		return -EBADF;
	k = uprobe_pidfd_pid(fds[i], &pid);
	if (k < 0)
		return k;
	/*
	 * Readable by anyone, with no capability: the unit hides no process
	 * from us (no ProtectProc=invisible, which only CAP_SYS_PTRACE sees
	 * through, and no process of the broker holds that). The file opened
	 * stays bound to that process (reads fail with ESRCH once it is gone),
	 * whatever later gets its pid.
	 */
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : negative_errno();
	/* Still this pid afterwards: it was not reused in between, the file is the pidfd's. */
	k = uprobe_pidfd_pid(fds[i], &again);
	if (k < 0 || again != pid) {
		safe_close(fd);
		return k < 0 ? k : -ESRCH;
	}
	return fd;
}

static bool caller_in_group(const struct policy_identity *caller, gid_t gid)
{
	if (gid == caller->gid)
		return true;
	for (size_t i = 0; i < caller->n_groups; i++)
		if (caller->groups[i] == gid)
			return true;
	return false;
}

int uprobe_process_refusal(const struct procfs_status *p, uid_t owner,
			   const struct policy_identity *caller, char *buf, size_t size)
{
	static const char *const which[] = {"real", "effective", "saved", "file system"};

	if (p->state == 'Z' || p->state == 'X') {
		snprintf(buf, size, "process %d has exited", (int)p->pid);
		return -ESRCH;
	}
	if (p->pid == 1) {
		snprintf(buf, size, "process 1 is init, which the broker never probes");
		return -EPERM;
	}
	/*
	 * ptrace_may_access()'s rule, in full: every uid is the caller's. The
	 * message names no other user's ids: /proc may hide their processes.
	 */
	for (size_t i = 0; i < 4; i++)
		if (p->uids[i] != caller->uid) {
			snprintf(buf, size,
				 "process %d is not yours: its %s uid is not yours (%u); the "
				 "broker attaches uprobes only to processes running as you",
				 (int)p->pid, which[i], (unsigned)caller->uid);
			return -EPERM;
		}
	/*
	 * ptrace wants the caller's own gid; groups the caller is in anyway give
	 * it nothing new (a process started with sg(1) is still theirs).
	 */
	for (size_t i = 0; i < 4; i++)
		if (!caller_in_group(caller, p->gids[i])) {
			snprintf(buf, size,
				 "process %d runs with a %s gid that is not one of your groups",
				 (int)p->pid, which[i]);
			return -EPERM;
		}
	/*
	 * Capabilities the caller may not have (ambient ones from a service
	 * manager, or a container's root in its user namespace): ptrace would
	 * want the caller to hold them too, which the broker cannot tell.
	 */
	if (p->cap_prm || p->cap_eff || p->cap_amb) {
		snprintf(buf, size,
			 "process %d holds capabilities (CapPrm %016" PRIx64 "); the broker "
			 "attaches uprobes only to processes without any",
			 (int)p->pid, p->cap_prm | p->cap_eff | p->cap_amb);
		return -EPERM;
	}
	/*
	 * A perf event's uprobe keeps firing in its process across exec, into
	 * setuid programs too (the kernel stops perf events at such an exec, but
	 * not the BPF program of a uprobe event). With no_new_privs an exec
	 * never gains privileges, and no_new_privs can never be unset.
	 */
	if (!p->no_new_privs) {
		snprintf(buf, size,
			 "process %d may still gain privileges by executing a setuid or "
			 "file-capability program, and a uprobe stays with its process across "
			 "exec: start it with no_new_privs (setpriv --no-new-privs, or "
			 "NoNewPrivileges=yes)",
			 (int)p->pid);
		return -EPERM;
	}
	/* The kernel makes a process's /proc files root's while it is not dumpable. */
	if (owner != caller->uid || caller->uid == 0) {
		snprintf(buf, size,
			 "process %d is not dumpable (it made itself so with "
			 "prctl(PR_SET_DUMPABLE), as ssh-agent does, or it changed its "
			 "credentials): like ptrace, the broker does not look into it",
			 (int)p->pid);
		return -EPERM;
	}
	return 0;
}

/* Check the process behind status_fd, which must be pid. 0 fine, else as reply_error(). */
static int process_check(const struct uprobe_request *req, pid_t pid,
			 const struct policy_identity *caller, struct reply *r)
{
	_cleanup_free_ char *text = NULL;
	struct procfs_status p;
	struct stat st;
	char why[512];
	int k;

	k = procfs_read(req->status_fd, &text);
	if (k == -ESRCH)
		return reply_error(r, PROTO_ERR_NOT_FOUND, ESRCH,
				   "process %d has exited (the pidfd is stale)", (int)pid);
	if (k < 0 || fstat(req->status_fd, &st) < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, k < 0 ? -k : errno,
				   "cannot read the status of process %d: %s", (int)pid,
				   strerror(k < 0 ? -k : errno));
	if (procfs_status_parse(text, &p) < 0 || p.pid != pid)
		return reply_error(r, PROTO_ERR_INTERNAL, EIO,
				   "cannot make sense of the status of process %d", (int)pid);
	k = uprobe_process_refusal(&p, st.st_uid, caller, why, sizeof(why));
	if (k == -ESRCH)
		return reply_error(r, PROTO_ERR_NOT_FOUND, ESRCH, "%s (the pidfd is stale)", why);
	/* Whose process it is, not the policy, decides: no key. */
	if (k < 0)
		return denial_reply(r, PROTO_ERR_DENIED, EPERM, "object", NULL, NULL, "%s", why);
	return 0;
}

/* The pid behind the client's pidfd, with an error reply for what it may be instead. */
static int target_pid(const struct uprobe_request *req, pid_t *ret, struct reply *r)
{
	int k = uprobe_pidfd_pid(req->pidfd, ret);

	if (k == -ENOTTY)
		return reply_error(r, PROTO_ERR_INVALID, EINVAL,
				   "the \"pidfd\" fd is not a pidfd (open one with pidfd_open())");
	if (k == -ESRCH || (k == 0 && pidfd_exited(req->pidfd)))
		return reply_error(r, PROTO_ERR_NOT_FOUND, ESRCH,
				   "the process of the pidfd has exited (the pidfd is stale)");
	if (k == -EXDEV)
		return denial_reply(
			r, PROTO_ERR_DENIED, EXDEV, "object", NULL, NULL,
			"the process of the pidfd is not in the broker's pid namespace");
	if (k < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, -k, "cannot read the pidfd: %s",
				   strerror(-k));
	return 0;
}

/* ---- the probe ---- */

static int read_sysfs(const char *path, char *buf, size_t size)
{
	int k = read_small(path, buf, size);

	if (k < 0)
		return k;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* The uprobe PMU's type, and where retprobe and ref_ctr_offset go in config. */
static int uprobe_pmu(uint32_t *ret_type, unsigned *ret_retprobe_bit, unsigned *ret_ref_ctr_shift)
{
	char buf[64];
	unsigned long v;
	int k;

	k = read_sysfs(UPROBE_PMU_DIR "/type", buf, sizeof(buf));
	if (k < 0)
		return k;
	v = strtoul(buf, NULL, 10);
	if (v == 0 || v > UINT32_MAX)
		return -EIO;
	*ret_type = (uint32_t)v;
	/* "config:0" and "config:32-63" on every kernel so far; read as the kernel says. */
	k = read_sysfs(UPROBE_PMU_DIR "/format/retprobe", buf, sizeof(buf));
	if (k < 0 || sscanf(buf, "config:%u", ret_retprobe_bit) != 1 || *ret_retprobe_bit > 63)
		return k < 0 ? k : -EIO;
	k = read_sysfs(UPROBE_PMU_DIR "/format/ref_ctr_offset", buf, sizeof(buf));
	if (k < 0 || sscanf(buf, "config:%u", ret_ref_ctr_shift) != 1 || *ret_ref_ctr_shift > 32)
		return k < 0 ? k : -EIO;
	return 0;
}

static int location_error(struct reply *r, int k, const char *what, const char *symbol,
			  uint64_t offset)
{
	switch (k) {
	case -ENOEXEC:
		return reply_error(r, PROTO_ERR_INVALID, ENOEXEC,
				   "the binary is not an ELF executable or shared object");
	case -ENOENT:
		return reply_error(r, PROTO_ERR_NOT_FOUND, ENOENT,
				   "the binary has no %s symbol \"%s\"", what, symbol);
	case -ENOTUNIQ:
		return reply_error(r, PROTO_ERR_INVALID, ENOTUNIQ,
				   "the binary has several symbols \"%s\" at different addresses: "
				   "give a file offset instead",
				   symbol);
	case -ERANGE:
		return symbol ? reply_error(r, PROTO_ERR_INVALID, ERANGE,
					    "%s+%" PRIu64 " is outside %s \"%s\" or its segment",
					    symbol, offset, what, symbol)
			      : reply_error(r, PROTO_ERR_INVALID, ERANGE,
					    "file offset %" PRIu64 " is not in a%s segment of the "
					    "binary",
					    offset,
					    strcmp(what, "function") == 0 ? "n executable"
									  : " writable");
	case -EFBIG:
		return reply_error(r, PROTO_ERR_TOO_LARGE, EFBIG,
				   "the binary's symbol table is larger than %u bytes",
				   ELFSYM_MAX_SYMTAB_BYTES);
	default:
		return reply_error(r, PROTO_ERR_INTERNAL, -k, "cannot read the binary: %s",
				   strerror(-k));
	}
}

/*
 * The kernel keeps one uprobe per file (inode) and place, for every process
 * and user, with one USDT semaphore (or none), and refuses a probe there
 * with another semaphore (EINVAL) while one is registered: a made-up
 * semaphore in a shared library, or a probe without the semaphore at a real
 * USDT site, would make every other user's (and root's) probe there fail.
 * So where the binary is not the caller's (the file's owner, whatever name
 * or link it is reached by), no semaphore, and no probe at a USDT site that
 * has one.
 */
static int check_semaphore_place(const struct uprobe_request *req, const struct stat *st,
				 const struct policy_identity *caller, uint64_t offset,
				 uint64_t ref_ctr, struct reply *r)
{
	int k;

	if (st->st_uid == caller->uid)
		return 0;
	/* The binary's owner, not the policy, decides these two: no key. */
	if (ref_ctr)
		return denial_reply(
			r, PROTO_ERR_DENIED, EPERM, "object", NULL, NULL,
			"a USDT semaphore only in a binary you own: this one belongs "
			"to uid %u, and the kernel keeps one semaphore per file and "
			"place, so yours would make every other user's probe there fail",
			(unsigned)st->st_uid);
	k = elfsym_usdt_semaphore_at(req->binary_fd, offset);
	if (k < 0)
		return reply_error(r, k == -EFBIG ? PROTO_ERR_TOO_LARGE : PROTO_ERR_INVALID, -k,
				   "cannot read the binary's USDT notes (.note.stapsdt): %s",
				   strerror(-k));
	if (k > 0)
		return denial_reply(r, PROTO_ERR_DENIED, EPERM, "object", NULL, NULL,
				    "file offset 0x%" PRIx64 " is a USDT probe site with a "
				    "semaphore, in a binary you do not own (it belongs to uid %u): "
				    "a probe there without its semaphore would make the kernel "
				    "refuse the USDT users' probes",
				    offset, (unsigned)st->st_uid);
	return 0;
}

/* Where the probe and its semaphore go, as file offsets of the binary. */
static int probe_locate(const struct uprobe_request *req, const struct policy_identity *caller,
			uint64_t *ret_offset, uint64_t *ret_ref_ctr, struct reply *r)
{
	uint64_t offset, ref_ctr = req->semaphore_offset;
	struct stat st;
	int k;

	if (fstat(req->binary_fd, &st) < 0 || !S_ISREG(st.st_mode))
		return reply_error(r, PROTO_ERR_INVALID, EINVAL,
				   "the binary's fd (\"fd\") is not a regular file");
	k = elfsym_resolve(req->binary_fd, req->symbol, req->offset, ELFSYM_CODE, &offset);
	if (k < 0)
		return location_error(r, k, "function", req->symbol, req->offset);
	if (req->semaphore || ref_ctr) {
		k = elfsym_resolve(req->binary_fd, req->semaphore, ref_ctr, ELFSYM_DATA, &ref_ctr);
		if (k < 0)
			return location_error(r, k, "semaphore", req->semaphore, ref_ctr);
		/* Two bytes, aligned (the kernel refuses others). */
		if (ref_ctr > UINT32_MAX || ref_ctr % 2)
			return reply_error(r, PROTO_ERR_INVALID, EINVAL,
					   "the semaphore's file offset %" PRIu64
					   " is not a 2-byte aligned 32-bit offset",
					   ref_ctr);
	}
	k = check_semaphore_place(req, &st, caller, offset, ref_ctr, r);
	if (k != 0)
		return k;
	*ret_offset = offset;
	*ret_ref_ctr = ref_ctr;
	return 0;
}

/* Our /proc must be our pid namespace's: fdinfo pids are its, perf_event_open() takes ours. */
static bool proc_is_ours(void)
{
	char buf[32];
	ssize_t n = readlink("/proc/self", buf, sizeof(buf) - 1);

	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strtol(buf, NULL, 10) == (long)getpid();
}

static int perf_uprobe_open(int binary_fd, pid_t pid, uint64_t offset, uint64_t ref_ctr,
			    bool retprobe)
{
	/*
	 * Linux 6.16 (and stable kernels since July 2025) ask CAP_SYS_ADMIN for
	 * the uprobe PMU, not only CAP_PERFMON: a probe placed in the middle of
	 * an instruction corrupts the processes it is installed in, and a
	 * system-wide probe is installed in every process mapping the file.
	 * Ours is bound to one process, the caller's own: the kernel installs it
	 * nowhere else (uprobe_perf_filter()), so that is all it can corrupt.
	 */
	static const cap_value_t caps[] = {CAP_PERFMON, CAP_SYS_ADMIN};
	unsigned retprobe_bit = 0, ref_ctr_shift = 0;
	struct perf_event_attr attr = {.size = sizeof(attr)};
	char path[64];
	long fd;
	int k;

	k = uprobe_pmu(&attr.type, &retprobe_bit, &ref_ctr_shift);
	if (k < 0)
		return k;
	/*
	 * The kernel resolves a path: our own fd's magic link leads to exactly
	 * the client's file (whatever mount namespace it is in, and without
	 * search permission on its directories), never to a name the client
	 * could swap.
	 */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", binary_fd);
	attr.config1 = (uint64_t)(uintptr_t)path;
	attr.config2 = offset;
	attr.config = (retprobe ? 1ull << retprobe_bit : 0) | ref_ctr << ref_ctr_shift;
	k = caps_set_effective(caps, ARRAY_SIZE(caps));
	if (k < 0)
		return k;
	/* Bound to the process (cpu -1: wherever it runs); the uprobe filters by its mm. */
	fd = syscall(__NR_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	k = fd < 0 ? -errno : (int)fd;
	caps_clear_effective();
	return k;
}

int uprobe_attach(const struct uprobe_request *req, const struct policy_identity *caller,
		  int prog_fd, const char *prog_name, struct reply *r, char *desc, size_t desc_size,
		  int *ret_link_fd)
{
	static const cap_value_t caps[] = {CAP_BPF, CAP_PERFMON};
	_cleanup_close_ int pfd = -EBADF;
	uint64_t offset = 0, ref_ctr = 0;
	pid_t pid = 0, again = 0;
	struct stat st = {};
	int k;

	k = probe_locate(req, caller, &offset, &ref_ctr, r);
	if (k != 0)
		return k;
	if (!proc_is_ours())
		return reply_error(r, PROTO_ERR_INTERNAL, EXDEV,
				   "the broker's /proc is not of its own pid namespace");
	k = target_pid(req, &pid, r);
	if (k != 0)
		return k;
	if (req->status_fd < 0)
		return req->status_error == ESRCH
			       ? reply_error(r, PROTO_ERR_NOT_FOUND, ESRCH,
					     "process %d has exited (the pidfd is stale)", (int)pid)
			       : reply_error(
					 r, PROTO_ERR_INTERNAL, req->status_error,
					 "the broker could not open the status of process %d: %s",
					 (int)pid, strerror(req->status_error));
	k = process_check(req, pid, caller, r);
	if (k != 0)
		return k;
	(void)fstat(req->binary_fd, &st);
	snprintf(desc, desc_size, "u%sprobe pid %d inode %u:%u:%llu+0x%llx%s",
		 req->retprobe ? "ret" : "", (int)pid, major(st.st_dev), minor(st.st_dev),
		 (unsigned long long)st.st_ino, (unsigned long long)offset,
		 ref_ctr ? " with semaphore" : "");
	pfd = perf_uprobe_open(req->binary_fd, pid, offset, ref_ctr, req->retprobe);
	if (pfd < 0)
		return reply_error(r, pfd == -ESRCH ? PROTO_ERR_NOT_FOUND : PROTO_ERR_LOAD, -pfd,
				   "the kernel refused the uprobe for process %d: %s%s", (int)pid,
				   strerror(-pfd),
				   /* The kernel's one semaphore per (file, offset), logged as
				      "ref_ctr_offset mismatch"; a detached probe lingers a
				      moment while the kernel frees it. */
				   pfd == -EINVAL
					   ? " (a probe at the same place with another USDT "
					     "semaphore, or none, may exist or be going "
					     "away: the kernel allows one semaphore per place)"
					   : "");
	/*
	 * The event was opened by pid; the pidfd still naming that pid now
	 * proves it was the client's process then (a pid is not reused while its
	 * process is unreaped). Check the process again too: it is the same one.
	 */
	k = uprobe_pidfd_pid(req->pidfd, &again);
	if (k < 0 || again != pid || pidfd_exited(req->pidfd))
		return reply_error(r, PROTO_ERR_NOT_FOUND, ESRCH,
				   "process %d exited while the uprobe was made (the pidfd is "
				   "stale)",
				   (int)pid);
	k = process_check(req, pid, caller, r);
	if (k != 0)
		return k;
	k = caps_set_effective(caps, ARRAY_SIZE(caps));
	if (k < 0)
		return k;
	/* The link holds the perf event: our fd can go once it exists. */
	k = bpf_link_create(prog_fd, pfd, BPF_PERF_EVENT, NULL);
	if (k < 0)
		k = negative_errno();
	caps_clear_effective();
	if (k < 0)
		return reply_error(r, PROTO_ERR_LOAD, -k,
				   "the kernel refused to attach \"%s\" to %s: %s", prog_name, desc,
				   strerror(-k));
	*ret_link_fd = k;
	return 0;
}

/*
 * struct bpf_link_info with its perf_event member (Linux 6.6), which these
 * headers lack: the common head, then perf_event's type and, for uprobes,
 * the file and offset. The kernel fills as much as it has.
 */
struct link_info_perf_event {
	uint32_t type, id, prog_id, pad;
	uint32_t perf_event_type, pad2;
	uint64_t file_name; /* a buffer */
	uint32_t name_len;
	uint32_t offset;
	uint64_t cookie;
	uint64_t ref_ctr_offset;
};

#define PERF_EVENT_UPROBE 1 /* enum bpf_perf_event_type */
#define PERF_EVENT_URETPROBE 2

void uprobe_link_describe(int link_fd, char *buf, size_t size)
{
	struct link_info_perf_event info = {};
	uint32_t len = sizeof(info);

	buf[0] = '\0';
	if (bpf_obj_get_info_by_fd(link_fd, &info, &len) < 0 ||
	    (info.perf_event_type != PERF_EVENT_UPROBE &&
	     info.perf_event_type != PERF_EVENT_URETPROBE))
		return;
	/* The kernel keeps the path as it was given: ours is /proc/self/fd/N of a worker long gone.
	 */
	snprintf(buf, size, "u%sprobe at file offset 0x%x",
		 info.perf_event_type == PERF_EVENT_URETPROBE ? "ret" : "", info.offset);
}
