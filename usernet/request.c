/* SPDX-License-Identifier: MIT */
/* apply-self's request to the watcher over the watcher's socket: both ends (request.h). */
#include "usernet/request.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/macro.h"

/* How long apply-self waits for the watcher (a broker load and attach take far less). */
#define APPLY_SELF_TIMEOUT_SEC 90

#define SOCKET_NAME "bpfbroker-user-net.sock"
/* "apply " and 32 hex digits fit; so does any answer we send (messages are cut to it). */
#define PACKET_MAX 1024
/* How long the listener rests after running out of fds or memory (it would spin). */
#define RETRY_USEC (100 * UINT64_C(1000))

int usernet_request_socket_path(char **ret)
{
	const char *runtime = getenv("XDG_RUNTIME_DIR");
	char *p;

	if (!runtime || runtime[0] != '/')
		return -ENXIO;
	if (asprintf(&p, "%s/" SOCKET_NAME, runtime) < 0)
		return -ENOMEM;
	*ret = p;
	return 0;
}

static int socket_address(struct sockaddr_un *ret, socklen_t *ret_len)
{
	_cleanup_free_ char *path = NULL;
	int k;

	k = usernet_request_socket_path(&path);
	if (k < 0)
		return k;
	if (strlen(path) >= sizeof(ret->sun_path))
		return -ENAMETOOLONG;
	*ret = (struct sockaddr_un){.sun_family = AF_UNIX};
	strcpy(ret->sun_path, path);
	*ret_len = offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1;
	return 0;
}

struct server {
	usernet_request_handler_t handler;
	void *userdata;
	uint64_t deadline_usec;
	sd_event_source *listener; /* not a reference; NULL once it has gone */
	sd_event_source *retry; /* floating, not a reference; NULL once it has gone */
	unsigned n_conns;
	unsigned n_refs; /* the listener's and one for each connection */
};

/* One accepted connection: its io source and its deadline, both floating (the event owns them). */
struct conn {
	struct server *srv;
	sd_event_source *io, *timer;
	unsigned n_refs; /* one for each source (their destroy callbacks drop it) */
};

static void server_unref(struct server *srv)
{
	if (--srv->n_refs == 0)
		free(srv);
}

static void conn_unref(struct conn *c)
{
	struct server *srv = c->srv;

	if (--c->n_refs > 0)
		return;
	free(c);
	/* A slot (and an fd) is free: take the connections waiting in the backlog again. */
	srv->n_conns--;
	if (srv->listener)
		(void)sd_event_source_set_enabled(srv->listener, SD_EVENT_ON);
	server_unref(srv);
}

static void conn_io_destroyed(void *userdata)
{
	struct conn *c = userdata;

	c->io = NULL;
	conn_unref(c);
}

static void conn_timer_destroyed(void *userdata)
{
	struct conn *c = userdata;

	c->timer = NULL;
	conn_unref(c);
}

/* Drop both sources (which closes the connection); c is gone after. */
static void conn_close(struct conn *c)
{
	c->n_refs++;
	sd_event_source_disable_unref(c->io);
	sd_event_source_disable_unref(c->timer);
	conn_unref(c);
}

/* Send "ERRNO MESSAGE"; a peer that has gone is its business. */
static void answer(int fd, int k, const char *message)
{
	char buf[PACKET_MAX];
	int n = snprintf(buf, sizeof(buf), "%d %s", -k, message ? message : "");

	if (n >= (int)sizeof(buf))
		n = sizeof(buf) - 1;
	(void)send(fd, buf, n, MSG_NOSIGNAL);
}

static int on_request(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct conn *c = userdata;
	struct server *srv = c->srv;
	_cleanup_free_ char *message = NULL;
	char buf[PACKET_MAX];
	struct ucred cred;
	socklen_t len = sizeof(cred);
	const char *id;
	ssize_t n;
	int k;

	n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0)
		goto done;
	buf[n] = '\0';
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.pid <= 0) {
		answer(fd, -EIO, "cannot tell who asks");
		goto done;
	}
	/* The runtime directory is ours alone; this holds if it were not. */
	if (cred.uid != geteuid()) {
		answer(fd, -EPERM, "only the watcher's own user may ask it");
		goto done;
	}
	if (strncmp(buf, "apply ", 6) != 0) {
		answer(fd, -EINVAL, "unknown request");
		goto done;
	}
	id = buf + 6;
	k = srv->handler(cred.pid, id, &message, srv->userdata);
	answer(fd, k, message);
done:
	conn_close(c);
	return 0;
}

/* A connection that has not sent its request in time: closed, its slot free for others. */
static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata)
{
	conn_close(userdata);
	return 0;
}

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct server *srv = userdata;

	if (srv->listener)
		(void)sd_event_source_set_enabled(srv->listener, SD_EVENT_ON);
	return 0;
}

static void retry_destroyed(void *userdata)
{
	struct server *srv = userdata;

	srv->retry = NULL;
	server_unref(srv);
}

/*
 * Out of fds or memory: the level-triggered listener would fire again at once, so it rests
 * until a connection closes or RETRY_USEC has passed; the peers wait in the backlog. The
 * timer exists from the start: setting it needs no fd.
 */
static void server_pause(struct server *srv)
{
	if (sd_event_source_set_time_relative(srv->retry, RETRY_USEC) >= 0 &&
	    sd_event_source_set_enabled(srv->retry, SD_EVENT_ONESHOT) >= 0)
		(void)sd_event_source_set_enabled(srv->listener, SD_EVENT_OFF);
}

static int on_connect(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct server *srv = userdata;
	sd_event *e = sd_event_source_get_event(s);
	_cleanup_close_ int conn = -EBADF;
	struct conn *c;
	int k;

	/*
	 * Full: the rest wait in the backlog until an answer or a deadline frees a slot (at
	 * most deadline_usec), so silent clients can neither use up our fds nor hold off the
	 * others for longer.
	 */
	if (srv->n_conns >= USERNET_REQUEST_CONNECTIONS_MAX) {
		(void)sd_event_source_set_enabled(s, SD_EVENT_OFF);
		return 0;
	}
	conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (conn < 0) {
		/* Gone already (the next one is taken at once), or out of fds or memory. */
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			server_pause(srv);
		return 0;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		server_pause(srv);
		return 0; /* the connection is closed: its peer sees no answer */
	}
	c->srv = srv;
	k = sd_event_add_io(e, &c->io, conn, EPOLLIN, on_request, c);
	if (k < 0) {
		free(c);
		server_pause(srv);
		return 0;
	}
	/* The source closes the connection when it goes (after the answer, or at exit). */
	(void)sd_event_source_set_io_fd_own(c->io, true);
	TAKE_FD(conn);
	c->n_refs = 1;
	srv->n_conns++;
	srv->n_refs++;
	(void)sd_event_source_set_destroy_callback(c->io, conn_io_destroyed);
	(void)sd_event_source_set_floating(c->io, true);
	sd_event_source_unref(c->io);
	k = sd_event_add_time_relative(e, &c->timer, CLOCK_MONOTONIC, srv->deadline_usec, 0,
				       on_deadline, c);
	if (k < 0) {
		/* Without a deadline it would not be closed: refuse it instead. */
		c->timer = NULL;
		conn_close(c);
		return 0;
	}
	c->n_refs++;
	(void)sd_event_source_set_destroy_callback(c->timer, conn_timer_destroyed);
	(void)sd_event_source_set_floating(c->timer, true);
	sd_event_source_unref(c->timer);
	return 0;
}

static void listener_destroyed(void *p)
{
	struct server *srv = p;

	srv->listener = NULL;
	server_unref(srv);
}

int usernet_request_listen(sd_event *e, usernet_request_handler_t handler, void *userdata,
			   uint64_t deadline_usec, sd_event_source **ret)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ struct server *srv = NULL;
	struct sockaddr_un sa;
	sd_event_source *s;
	socklen_t sa_len;
	int k;

	k = socket_address(&sa, &sa_len);
	if (k < 0)
		return k;
	srv = malloc(sizeof(*srv));
	if (!srv)
		return -ENOMEM;
	*srv = (struct server){.handler = handler,
			       .userdata = userdata,
			       .deadline_usec = deadline_usec,
			       .n_refs = 1};
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* An earlier watcher's socket (it does not unlink at exit: it may be killed). */
	if (unlink(sa.sun_path) < 0 && errno != ENOENT)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sa_len) < 0 || listen(fd, SOMAXCONN) < 0)
		return -errno;
	k = sd_event_add_io(e, &s, fd, EPOLLIN, on_connect, srv);
	if (k < 0)
		return k;
	(void)sd_event_source_set_io_fd_own(s, true);
	(void)sd_event_source_set_destroy_callback(s, listener_destroyed);
	TAKE_FD(fd);
	srv->listener = s;
	k = sd_event_add_time_relative(e, &srv->retry, CLOCK_MONOTONIC, RETRY_USEC, 0, on_retry,
				       srv);
	if (k < 0) {
		srv->retry = NULL;
		sd_event_source_unref(s); /* frees srv */
		TAKE_PTR(srv);
		return k;
	}
	srv->n_refs++;
	(void)sd_event_source_set_enabled(srv->retry, SD_EVENT_OFF);
	(void)sd_event_source_set_destroy_callback(srv->retry, retry_destroyed);
	(void)sd_event_source_set_floating(srv->retry, true);
	sd_event_source_unref(srv->retry);
	TAKE_PTR(srv);
	*ret = s;
	return 0;
}

static uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000;
}

/* Bound fd's sends or receives (opt) by deadline (CLOCK_MONOTONIC); one passed: 1 µs, as 0
 * would be no bound at all. */
static int set_timeout(int fd, int opt, uint64_t deadline)
{
	uint64_t now = now_usec(), left = deadline > now ? deadline - now : 1;
	struct timeval tv = {.tv_sec = left / 1000000ULL, .tv_usec = left % 1000000ULL};

	return setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof(tv)) < 0 ? -errno : 0;
}

static int timed_out(void)
{
	fprintf(stderr, "bpfbroker-user-net.service did not answer in %d s\n",
		APPLY_SELF_TIMEOUT_SEC);
	return -ETIMEDOUT;
}

int usernet_request_apply(const char *invocation_id)
{
	_cleanup_close_ int fd = -EBADF;
	char buf[PACKET_MAX];
	struct sockaddr_un sa;
	socklen_t sa_len;
	const char *message;
	uint64_t deadline;
	ssize_t n;
	int k, err;

	k = socket_address(&sa, &sa_len);
	if (k < 0) {
		fprintf(stderr, "no $XDG_RUNTIME_DIR: cannot find bpfbroker-user-net.service\n");
		return k;
	}
	if (snprintf(buf, sizeof(buf), "apply %s", invocation_id) >= (int)sizeof(buf))
		return -EINVAL;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/*
	 * A bound of our own: a unit may start without a timeout (oneshot), and a hung
	 * watcher must fail it, not hold it forever. Set before connect(), which waits in the
	 * watcher's backlog (its connections are capped) for as long as SO_SNDTIMEO says;
	 * the answer gets what is left of it.
	 */
	deadline = now_usec() + APPLY_SELF_TIMEOUT_SEC * 1000000ULL;
	k = set_timeout(fd, SO_SNDTIMEO, deadline);
	if (k < 0)
		return k;
	if (connect(fd, (struct sockaddr *)&sa, sa_len) < 0) {
		k = -errno;
		if (k == -EAGAIN)
			return timed_out();
		fprintf(stderr,
			"cannot ask bpfbroker-user-net.service (%s: %s); it must run: systemctl "
			"--global enable bpfbroker-user-net.service (README)\n",
			sa.sun_path, strerror(-k));
		return k;
	}
	if (send(fd, buf, strlen(buf), MSG_NOSIGNAL) < 0)
		return errno == EAGAIN ? timed_out() : -errno;
	k = set_timeout(fd, SO_RCVTIMEO, deadline);
	if (k < 0)
		return k;
	do
		n = recv(fd, buf, sizeof(buf) - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return timed_out();
	if (n < 0)
		return -errno;
	if (n == 0) {
		fprintf(stderr, "bpfbroker-user-net.service went away without an answer\n");
		return -ECONNRESET;
	}
	buf[n] = '\0';
	message = strchr(buf, ' ');
	if (!message || sscanf(buf, "%d", &err) != 1 || err < 0 || err > 4095) {
		fprintf(stderr, "bpfbroker-user-net.service answered nonsense\n");
		return -EBADMSG;
	}
	if (message[1])
		fprintf(stderr, "%s\n", message + 1);
	return -err;
}
