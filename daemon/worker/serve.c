/* SPDX-License-Identifier: MIT */
/*
 * A worker, forked by the spawner: set itself up, then take its connection's
 * jobs from the event loop one at a time (a load, a named-object method, or
 * the pool's sweep), answer each, and put itself back in order between two.
 */
#include "serve.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include "common/json.h"
#include "common/macro.h"
#include "daemon/shared/audit.h"
#include "daemon/shared/caps.h"
#include "daemon/shared/jobmsg.h"
#include "daemon/shared/log.h"
#include "daemon/shared/spawn.h"
#include "hygiene.h"
#include "libbpflog.h"
#include "named.h"
#include "proto/method.h"
#include "proto/proto.h"
#include "sandbox.h"
#include "store.h"

/*
 * The pool's own request, after a worker died in the middle of a change:
 * remove what it left half-made in the user's store (a pin directory without
 * metadata, store.h), under the user's lock, with an audit record for each
 * removal (store_sweep_user()). Not a client method: only the event loop
 * sends it, and the server hands clients' requests only to the methods it
 * lists.
 */
static json_object *worker_sweep(const struct load_config *cfg, uid_t uid)
{
	_cleanup_json_ json_object *body = NULL;
	int lock, k;

	lock = store_lock_user(&cfg->store, uid);
	k = lock < 0 ? lock : store_sweep_user(&cfg->store, uid);
	safe_close(lock);
	if (k < 0)
		log_warning("cannot sweep the store of uid %u: %s", (unsigned)uid, strerror(-k));
	/* Nobody reads it: the event loop only needs the worker to end with an answer. */
	body = json_object_new_object();
	if (json_add(body, "result", json_object_new_object()) < 0)
		return NULL;
	return TAKE_PTR(body);
}

/*
 * Testing only (--fault-inject=job-leaks:WHAT): the job leaves WHAT behind, as
 * a bug or a hostile object might, so that tests see the next job of the
 * connection go to a fresh worker.
 */
static void fault_leak(const struct load_config *cfg)
{
	static const cap_value_t sys_admin[] = {CAP_SYS_ADMIN}, bpf[] = {CAP_BPF};
	const char *what = cfg->store.fault;
	struct rlimit r;

	if (!what || strncmp(what, "job-leaks:", 10) != 0)
		return;
	what += 10;
	log_error("fault injection: the job leaves %s behind", what);
	if (strcmp(what, "fd") == 0) {
		(void)!dup(STDIN_FILENO);
	} else if (strcmp(what, "fdswap") == 0) {
		/* As many fds as before, one of them another file: a count would not see it. */
		int fd = open("/", O_PATH | O_CLOEXEC);

		if (fd >= 0 && fd != STDIN_FILENO) {
			(void)dup2(fd, STDIN_FILENO);
			close(fd);
		}
	} else if (strcmp(what, "cap") == 0) {
		(void)caps_set_effective(bpf, 1);
	} else if (strcmp(what, "netns") == 0) {
		if (caps_set_effective(sys_admin, 1) == 0 && unshare(CLONE_NEWNET) < 0)
			log_error("cannot leave our network namespace: %m");
		caps_clear_effective();
	} else if (strcmp(what, "rlimit") == 0) {
		if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur > 64) {
			r.rlim_cur = 64;
			(void)setrlimit(RLIMIT_NOFILE, &r);
		}
	} else if (strcmp(what, "cwd") == 0) {
		(void)!chdir("/tmp");
	}
}

/*
 * The job's params, parsed as the event loop's were (one JSON object, depth
 * and NULs checked), for the method's decoder. A sweep has none.
 */
static int job_params_parse(const struct jobmsg *job, json_object **ret)
{
	if (job->method == JOBMSG_SWEEP) {
		*ret = NULL;
		return 0;
	}
	return proto_parse(job->params, job->params_len, ret, NULL);
}

/*
 * Testing only (--fault-inject=worker-escape): before each job, try what
 * code an object took over would try as root, and log each outcome, so
 * that a test sees every one refused (sandbox.c) and the worker still
 * answer: signal the daemon and the spawner, reach a local service (make a
 * stream or an inet socket, connect the kind it may make), a terminal's
 * input (TIOCSTI), every program in the system, journald's socket
 * readdressed, the event loop's fd 3 replaced, the daemon made an fd's
 * owner, for the kernel to signal (SIGKILL) on its I/O, a perf event on the
 * daemon or the spawner that would SIGTRAP it.
 */
static void fault_escape(const struct load_config *cfg)
{
	static const struct sockaddr_un bus = {.sun_family = AF_UNIX,
					       .sun_path = "/run/dbus/system_bus_socket"};
	/* A SIGTRAP to the process it watches, at an overflow that never comes. */
	struct perf_event_attr pa = {.size = sizeof(pa),
				     .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_TASK_CLOCK,
				     .sample_period = 1ull << 62,
				     .exclude_kernel = 1,
				     .exclude_hv = 1,
				     .remove_on_exec = 1,
				     .sigtrap = 1};
	union bpf_attr attr = {};
	char c = 0;
	struct {
		const char *what;
		long r;
	} tries[14];
	size_t n = 0;
	int fd;

	if (!cfg->store.fault || strcmp(cfg->store.fault, "worker-escape") != 0)
		return;
#define TRY(w, call) tries[n++] = (typeof(tries[0])){(w), (call) < 0 ? -errno : 0}
	TRY("kill(daemon)", kill(cfg->store.daemon_pid, 0));
	TRY("kill(spawner)", kill(getppid(), 0));
	TRY("socket(stream)", fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	safe_close(fd);
	TRY("socket(inet)", fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
	safe_close(fd);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	TRY("connect", connect(fd, (const struct sockaddr *)&bus, sizeof(bus)));
	safe_close(fd);
	TRY("ioctl(TIOCSTI)", ioctl(STDERR_FILENO, TIOCSTI, &c));
	TRY("bpf(PROG_GET_NEXT_ID)", syscall(__NR_bpf, BPF_PROG_GET_NEXT_ID, &attr, sizeof(attr)));
	TRY("sendmsg(journald, address)",
	    sendmsg(SPAWN_JOURNAL_FD,
		    &(struct msghdr){.msg_name = (void *)&bus, .msg_namelen = sizeof(bus)}, 0));
	TRY("dup2(2, 3)", dup2(STDERR_FILENO, SPAWN_WORKER_FD));
	/* On a socket of its own, so that nothing is signalled should one be allowed. */
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	TRY("fcntl(F_SETOWN, daemon)", fcntl(fd, F_SETOWN, cfg->store.daemon_pid));
	TRY("fcntl(F_SETSIG)", fcntl(fd, F_SETSIG, SIGKILL));
	TRY("fcntl(F_SETFL, O_ASYNC)", fcntl(fd, F_SETFL, O_ASYNC));
	safe_close(fd);
	/* The kernel's own refusal (EACCES): neither is dumpable (spawner.c, loop/main.c). */
	TRY("perf_event_open(daemon, sigtrap)",
	    fd = (int)syscall(__NR_perf_event_open, &pa, cfg->store.daemon_pid, -1, -1,
			      PERF_FLAG_FD_CLOEXEC));
	safe_close(fd);
	TRY("perf_event_open(spawner, sigtrap)",
	    fd = (int)syscall(__NR_perf_event_open, &pa, getppid(), -1, -1, PERF_FLAG_FD_CLOEXEC));
	safe_close(fd);
#undef TRY
	for (size_t i = 0; i < n; i++)
		log_error("fault injection: worker-escape: %s: %s", tries[i].what,
			  tries[i].r == -EPERM || tries[i].r == -EACCES ? "refused"
									: "NOT REFUSED");
}

/* One job: its reply sent (0), the socket closed by the pool (1), or broken (< 0). */
static int serve_one(const struct worker_config *cfg, int64_t *bound_uid)
{
	struct proto_raw msg = {};
	struct jobmsg job = {};
	json_object *body = NULL, *params = NULL;
	_cleanup_free_ int *fds = NULL;
	size_t n_fds = 0;
	int64_t id;
	struct pollfd pfd = {.fd = SPAWN_WORKER_FD, .events = POLLIN};
	int k;

	do
		k = poll(&pfd, 1, -1);
	while (k < 0 && errno == EINTR);
	k = proto_recv_raw(SPAWN_WORKER_FD, WORKER_MAX_JOB_BYTES, PROTO_MAX_REQUEST_FDS, &msg,
			   NULL);
	if (k <= 0)
		return k == 0 ? 1 : k; /* retired by the pool, or broken */
	/*
	 * The event loop wrote it, but it is decoded as strictly as anything:
	 * a job that does not decode ends this worker without an answer.
	 */
	k = jobmsg_decode(msg.buf, msg.len, &job);
	if (k == 0)
		k = job_params_parse(&job, &params);
	if (k < 0) {
		log_error("worker: malformed job from the broker: %s", strerror(-k));
		jobmsg_done(&job);
		proto_raw_done(&msg);
		return k;
	}

	/*
	 * The pool binds a worker to one connection, so to one uid; should it
	 * ever hand us someone else's job, refuse to serve it (the pool then
	 * sees this worker end without an answer).
	 */
	if (*bound_uid >= 0 && (int64_t)job.ident.uid != *bound_uid) {
		log_error("worker: a job of uid %u after one of uid %lld; refusing it",
			  (unsigned)job.ident.uid, (long long)*bound_uid);
		json_object_put(params);
		jobmsg_done(&job);
		proto_raw_done(&msg);
		return -EPERM;
	}
	*bound_uid = job.ident.uid;

	/*
	 * Testing only (--fault-inject=worker-stall): a test run that never
	 * ends, so the event loop's kill at --timeout is exercised for real.
	 */
	if (cfg->load.store.fault && strcmp(cfg->load.store.fault, "worker-stall") == 0 &&
	    job.method == PROTO_METHOD_TEST_RUN)
		for (;;)
			pause();

	fault_escape(&cfg->load);
	libbpflog_reset();
	if (job.method == JOBMSG_SWEEP)
		k = (body = worker_sweep(&cfg->load, job.ident.uid)) ? 0 : -ENOMEM;
	else if (job.method == PROTO_METHOD_LOAD || job.method == PROTO_METHOD_LOAD_INSNS)
		k = load_handle(cfg->policy, &cfg->load, &job, params, msg.fds, msg.n_fds, &body,
				&fds, &n_fds);
	else
		k = named_handle(cfg->policy, &cfg->load, &job, params, msg.fds, msg.n_fds, &body,
				 &fds, &n_fds);
	msg.n_fds = 0; /* the handler took (and closed) them */
	id = job.id;
	json_object_put(params);
	jobmsg_done(&job);
	proto_raw_done(&msg);
	if (k < 0 || proto_reply_stamp(body, id) < 0) {
		json_object_put(body);
		close_many(fds, n_fds);
		return k < 0 ? k : -ENOMEM;
	}
	/* Stamped with the client's request id: the event loop relays it as it is. */
	k = proto_send(SPAWN_WORKER_FD, body, fds, n_fds, PROTO_MAX_REPLY_BYTES);
	if (k == -EMSGSIZE) {
		json_object *e =
			proto_error_new(id, proto_error_code(PROTO_ERR_TOO_LARGE), EMSGSIZE,
					"the reply would exceed the protocol's size limit");

		k = e ? proto_send(SPAWN_WORKER_FD, e, NULL, 0, PROTO_MAX_REPLY_BYTES) : -ENOMEM;
		json_object_put(e);
	}
	json_object_put(body);
	close_many(fds, n_fds);
	load_audit_flush();
	return k < 0 ? k : 0;
}

/*
 * First thing in a worker the spawner just forked: signals, parent death, its
 * fds, its capabilities checked and its system call filter, before anything
 * of a client's is read. Exits if any of it fails.
 */
static void serve_setup(const struct worker_config *c, int sock, pid_t parent)
{
	sigset_t none;
	int k;

	/*
	 * The spawner blocks SIGCHLD for its signalfd; a worker wants the
	 * defaults, except the termination signals a service manager or terminal
	 * sends the whole group (SIG_IGN from the spawner): a request in the
	 * middle of a change finishes, and the daemon waits for it (SIGTERM).
	 */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	/* Die with the broker; check for the race where it already died before prctl. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(EXIT_FAILURE);
	/* So ps, top and perf tell the roles apart. */
	(void)prctl(PR_SET_NAME, "bpfbroker-work");
	/*
	 * Keep stdio (logging), our socket and the spawner's journald socket
	 * (audit.h); nothing else of the broker's, no client's fd.
	 */
	if (sock != SPAWN_WORKER_FD && dup2(sock, SPAWN_WORKER_FD) < 0)
		_exit(EXIT_FAILURE);
	if (close_range(audit_journal_connected() ? SPAWN_JOURNAL_FD + 1 : SPAWN_WORKER_FD + 1, ~0U,
			0) < 0)
		_exit(EXIT_FAILURE);
	/* The spawner reduced them for every worker; check we got exactly that. */
	k = caps_worker_check();
	if (k < 0) {
		log_error("worker: unexpected capabilities: %s", strerror(-k));
		_exit(EXIT_FAILURE);
	}
	/*
	 * From here on only what a worker does (sandbox.h), before anything of
	 * the client's is read. Without it the worker does not serve.
	 */
	k = sandbox_apply(c->sandbox);
	if (k < 0) {
		log_error("worker: cannot install the system call filter: %s", strerror(-k));
		_exit(EXIT_FAILURE);
	}
}

_Noreturn void serve_main(const struct worker_config *cfg, int sock, pid_t parent)
{
	struct hygiene_baseline base;
	int64_t bound_uid = -1;
	char why[160];
	int k;

	serve_setup(cfg, sock, parent);
	if (cfg->max_jobs > 1 && hygiene_baseline_take(&base, cfg->max_rss_growth) < 0) {
		log_error("worker: cannot take its starting state: %m");
		_exit(EXIT_FAILURE);
	}
	for (unsigned n = 1;; n++) {
		k = serve_one(cfg, &bound_uid);
		if (k != 0)
			_exit(k > 0 ? EXIT_SUCCESS : EXIT_FAILURE);
		if (n >= cfg->max_jobs)
			_exit(EXIT_SUCCESS);
		fault_leak(&cfg->load);
		k = hygiene_restore(&base, why, sizeof(why));
		if (k < 0) {
			/* The pool sees us go and starts the next job in a fresh worker. */
			log_warning("worker: not serving another job: %s", why);
			_exit(EXIT_SUCCESS);
		}
		if (send(SPAWN_WORKER_FD, (const char[]){WORKER_READY}, 1, MSG_NOSIGNAL) < 0)
			_exit(errno == EPIPE ? EXIT_SUCCESS : EXIT_FAILURE);
	}
}
