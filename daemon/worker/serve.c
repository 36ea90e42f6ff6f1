/* SPDX-License-Identifier: MIT */
/*
 * One worker, forked by the spawner: take one job from the event loop, run
 * it (a load, a named-object method, or the pool's sweep), answer and exit.
 */
#include "serve.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "common/macro.h"
#include "daemon/shared/caps.h"
#include "daemon/shared/log.h"
#include "daemon/shared/spawn.h"
#include "named.h"
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
static json_object *worker_sweep(const struct worker_config *c, json_object *job)
{
	json_object *v, *body;
	int64_t uid = -1;
	int lock, k;

	if (json_object_object_get_ex(job, "uid", &v))
		uid = json_object_get_int64(v);
	if (uid < 0 || uid >= (int64_t)(uid_t)-1)
		return NULL;
	lock = store_lock_user(&c->load.store, (uid_t)uid);
	k = lock < 0 ? lock : store_sweep_user(&c->load.store, (uid_t)uid);
	safe_close(lock);
	if (k < 0)
		log_warning("cannot sweep the store of uid %u: %s", (unsigned)uid, strerror(-k));
	/* Nobody reads it: the event loop only needs the worker to end with an answer. */
	body = json_object_new_object();
	if (body)
		json_object_object_add(body, "result", json_object_new_object());
	return body;
}

_Noreturn void serve_main(const struct worker_config *c, int sock, pid_t parent)
{
	struct proto_msg msg = {};
	json_object *body = NULL;
	_cleanup_free_ int *fds = NULL;
	size_t n_fds = 0;
	int64_t id = 0;
	struct pollfd pfd = {.fd = SPAWN_WORKER_FD, .events = POLLIN};
	sigset_t none;
	int k;

	/*
	 * The event loop blocks signals for its signalfds; a worker wants the
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
	/* Keep stdio (logging) and our socket; nothing else of the broker's, no client's fd. */
	if (sock != SPAWN_WORKER_FD && dup2(sock, SPAWN_WORKER_FD) < 0)
		_exit(EXIT_FAILURE);
	if (close_range(SPAWN_WORKER_FD + 1, ~0U, 0) < 0)
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

	do
		k = poll(&pfd, 1, -1);
	while (k < 0 && errno == EINTR);
	k = proto_recv(SPAWN_WORKER_FD, WORKER_MAX_JOB_BYTES, PROTO_MAX_REQUEST_FDS, &msg, NULL);
	if (k <= 0)
		_exit(k == 0 ? EXIT_SUCCESS : EXIT_FAILURE); /* retired by the pool, or broken */

	{
		json_object *m = NULL;
		const char *method = json_object_object_get_ex(msg.json, "method", &m)
					     ? json_object_get_string(m)
					     : "load";

		if (json_object_object_get_ex(msg.json, "id", &m))
			id = json_object_get_int64(m);
		/*
		 * Testing only (--fault-inject=worker-stall): a test run that never
		 * ends, so the event loop's kill at --timeout is exercised for real.
		 */
		if (c->load.store.fault && strcmp(c->load.store.fault, "worker-stall") == 0 &&
		    strcmp(method, "test_run") == 0)
			for (;;)
				pause();

		if (strcmp(method, "sweep") == 0)
			k = (body = worker_sweep(c, msg.json)) ? 0 : -EINVAL;
		else if (named_is_method(method))
			k = named_handle(c->policy, &c->load, msg.json, msg.fds, msg.n_fds, &body,
					 &fds, &n_fds);
		else
			k = load_handle(c->policy, &c->load, msg.json, msg.fds, msg.n_fds, &body,
					&fds, &n_fds);
	}
	msg.n_fds = 0; /* the handler took (and closed) them */
	if (k < 0 || proto_reply_stamp(body, id) < 0)
		_exit(EXIT_FAILURE);
	/* Stamped with the client's request id: the event loop relays it as it is. */
	k = proto_send(SPAWN_WORKER_FD, body, fds, n_fds, PROTO_MAX_REPLY_BYTES);
	if (k == -EMSGSIZE) {
		json_object *e =
			proto_error_new(id, PROTO_E_TOO_LARGE, EMSGSIZE,
					"the reply would exceed the protocol's size limit");

		k = e ? proto_send(SPAWN_WORKER_FD, e, NULL, 0, PROTO_MAX_REPLY_BYTES) : -ENOMEM;
	}
	load_audit_flush();
	_exit(k < 0 ? EXIT_FAILURE : EXIT_SUCCESS);
}
