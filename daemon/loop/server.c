/* SPDX-License-Identifier: MIT */
/*
 * The event loop's server: listening sockets, connections accepted within
 * the limits (in total, per uid), and shutting down.
 */
#include "conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/macro.h"
#include "daemon/shared/log.h"
#include "rate.h"

struct listener {
	struct server *server;
	int fd;
	sd_event_source *io;
	struct listener *next;
};

static unsigned server_conns_of_uid(const struct server *s, uid_t uid)
{
	unsigned n = 0;

	for (const struct conn *c = s->conns; c; c = c->next)
		n += c->cred.uid == uid;
	return n;
}

static int on_accept(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct listener *l = userdata;
	struct server *s = l->server;
	struct conn *c;
	int cfd;

	cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (cfd < 0) {
		if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
			log_warning("accept failed: %m");
		return 0;
	}
	if (conn_new(s, cfd, &c) < 0)
		return 0;
	if (s->n_conns > s->cfg.max_connections ||
	    server_conns_of_uid(s, c->cred.uid) > s->cfg.max_connections_per_uid) {
		char buf[128];

		snprintf(buf, sizeof(buf),
			 "too many connections (at most %u in total, %u per user)",
			 s->cfg.max_connections, s->cfg.max_connections_per_uid);
		conn_send_error(c, 0, PROTO_ERR_BUSY, EUSERS, buf);
		conn_free(c);
		return 0;
	}
	if (conn_start(c) < 0) {
		conn_free(c);
		return 0;
	}
	log_debug("connection from uid %u gid %u pid %d", (unsigned)c->cred.uid,
		  (unsigned)c->cred.gid, (int)c->cred.pid);
	return 0;
}

int server_listen_fd(struct server *s, int fd)
{
	struct listener *l = calloc(1, sizeof(*l));
	int k;

	if (!l)
		return -ENOMEM;
	l->server = s;
	l->fd = fd;
	k = sd_event_add_io(s->event, &l->io, fd, EPOLLIN, on_accept, l);
	if (k < 0) {
		free(l);
		return k;
	}
	l->next = s->listeners;
	s->listeners = l;
	return 0;
}

int server_listen_path(struct server *s, const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	_cleanup_free_ char *dir = strdup(path);
	_cleanup_close_ int fd = -EBADF;
	struct stat st;
	char *slash;
	int k;

	if (!dir)
		return -ENOMEM;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return negative_errno();
	}
	/* A stale socket from an earlier run would make bind fail; never remove anything else. */
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return -EEXIST;
		if (unlink(path) < 0)
			return negative_errno();
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return negative_errno();
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return negative_errno();
	/* Anyone may connect: the policy, not the socket's mode, decides what they get. */
	if (chmod(path, 0666) < 0 || listen(fd, SOMAXCONN) < 0)
		return negative_errno();
	k = server_listen_fd(s, fd);
	if (k < 0)
		return k;
	TAKE_FD(fd);
	return 0;
}

int server_new(sd_event *event, struct worker_pool *pool, const struct server_config *cfg,
	       struct server **ret)
{
	struct server *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->rate = rate_limiter_new();
	if (!s->rate) {
		free(s);
		return -ENOMEM;
	}
	s->event = sd_event_ref(event);
	s->pool = pool;
	s->cfg = *cfg;
	*ret = s;
	return 0;
}

static void server_close_listeners(struct server *s)
{
	while (s->listeners) {
		struct listener *l = s->listeners;

		s->listeners = l->next;
		sd_event_source_disable_unref(l->io);
		safe_close(l->fd);
		free(l);
	}
}

void server_drain(struct server *s)
{
	struct conn *next;

	s->draining = true;
	server_close_listeners(s);
	/* Busy ones only watch for a hang-up (conn_set_busy()); on_job_done() closes them. */
	for (struct conn *c = s->conns; c; c = next) {
		next = c->next;
		if (!c->job)
			conn_free(c);
	}
}

struct server *server_free(struct server *s)
{
	if (!s)
		return NULL;
	while (s->conns)
		conn_free(s->conns);
	s->rate = rate_limiter_free(s->rate);
	server_close_listeners(s);
	sd_event_unref(s->event);
	free(s);
	return NULL;
}

unsigned server_n_connections(const struct server *s)
{
	return s->n_conns;
}
