/* SPDX-License-Identifier: MIT */
/* Messages on the socket: one JSON text per datagram with its fds (SCM_RIGHTS), sent and received
 * whole. */
#include "proto.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "common/error.h"
#include "common/macro.h"

/* Close and free a message's fds that were not taken out. */
static void fds_release(int **fds, size_t *n)
{
	if (*fds)
		close_many(*fds, *n);
	free(*fds);
	*fds = NULL;
	*n = 0;
}

void proto_msg_done(struct proto_msg *m)
{
	if (!m)
		return;
	fds_release(&m->fds, &m->n_fds);
	json_object_put(m->json);
	m->json = NULL;
}

int proto_msg_take_fd(struct proto_msg *m, size_t idx)
{
	if (idx >= m->n_fds || m->fds[idx] < 0)
		return -EBADF;
	return TAKE_FD(m->fds[idx]);
}

void proto_raw_done(struct proto_raw *m)
{
	if (!m)
		return;
	fds_release(&m->fds, &m->n_fds);
	free(m->buf);
	m->buf = NULL;
	m->len = 0;
}

int proto_send_raw(int sock, const char *buf, size_t len, const int *fds, size_t n_fds)
{
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	char control[CMSG_SPACE(sizeof(int) * PROTO_MAX_REPLY_FDS)];
	ssize_t n;

	if (n_fds > PROTO_MAX_REPLY_FDS)
		return -ETOOMANYREFS;
	if (n_fds > 0) {
		struct cmsghdr *cmsg;

		memset(control, 0, CMSG_SPACE(sizeof(int) * n_fds));
		mh.msg_control = control;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		cmsg = CMSG_FIRSTHDR(&mh);
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		cmsg->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(cmsg), fds, sizeof(int) * n_fds);
	}

	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return negative_errno();
	if ((size_t)n != len)
		return -EIO; /* SOCK_SEQPACKET sends whole packets; anything else is a bug */
	return 0;
}

int proto_send(int sock, json_object *msg, const int *fds, size_t n_fds, size_t max_bytes)
{
	size_t len;
	const char *text = json_object_to_json_string_length(msg, PROTO_JSON_FLAGS, &len);

	if (!text)
		return -ENOMEM;
	if (len > max_bytes)
		return -EMSGSIZE;
	return proto_send_raw(sock, text, len, fds, n_fds);
}

/* Collect the fds of every SCM_RIGHTS header, so none leaks whatever else is wrong. */
static int collect_fds(struct msghdr *mh, int **ret, size_t *ret_n)
{
	size_t n = 0;
	int *fds = NULL;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		size_t k;
		int *grown;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		grown = realloc(fds, (n + k) * sizeof(int) + 1);
		if (!grown) {
			/* Still close what we can't keep. */
			int tmp;

			for (size_t i = 0; i < k; i++) {
				memcpy(&tmp, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				safe_close(tmp);
			}
			continue;
		}
		fds = grown;
		memcpy(fds + n, CMSG_DATA(c), k * sizeof(int));
		n += k;
	}
	*ret = fds;
	*ret_n = n;
	return 0;
}

int proto_recv_raw(int sock, size_t max_bytes, size_t max_fds, struct proto_raw *ret, char **error)
{
	/* Room for one fd more than allowed, so surplus fds show up without MSG_CTRUNC. */
	size_t control_len = CMSG_SPACE(sizeof(int) * (max_fds + 1));
	_cleanup_free_ void *control = calloc(1, control_len);
	struct iovec iov = {};
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control,
		.msg_controllen = control_len,
	};
	struct proto_raw m = {};
	ssize_t n;
	int r;

	if (!control)
		return -ENOMEM;
	/*
	 * The packet's real length first (MSG_PEEK | MSG_TRUNC, nothing copied,
	 * no fds taken), so the buffer fits it: allocating the maximum (1 MiB for
	 * replies) would cost an mmap, page faults and an munmap per message.
	 * One byte more than allowed still shows an oversized packet as MSG_TRUNC.
	 */
	do
		n = recv(sock, NULL, 0, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : negative_errno();
	iov.iov_len = (size_t)n > max_bytes ? max_bytes + 1 : (size_t)n + 1;
	m.buf = malloc(iov.iov_len);
	if (!m.buf)
		return -ENOMEM;
	iov.iov_base = m.buf;

	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_TRUNC | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		r = errno == EWOULDBLOCK ? -EAGAIN : negative_errno();
		goto fail;
	}

	collect_fds(&mh, &m.fds, &m.n_fds);

	if (n == 0 && m.n_fds == 0 && !(mh.msg_flags & MSG_CTRUNC)) {
		proto_raw_done(&m);
		return 0;
	}
	if (mh.msg_flags & MSG_CTRUNC) {
		r = error_setf(error, -ETOOMANYREFS,
			       "control message truncated: more than %zu fds, or not SCM_RIGHTS",
			       max_fds);
		goto fail;
	}
	if (m.n_fds > max_fds) {
		r = error_setf(error, -ETOOMANYREFS, "message carries %zu fds, at most %zu allowed",
			       m.n_fds, max_fds);
		goto fail;
	}
	if ((mh.msg_flags & MSG_TRUNC) || (size_t)n > max_bytes) {
		r = error_setf(error, -EMSGSIZE,
			       "message of %zd bytes exceeds the limit of %zu bytes", n, max_bytes);
		goto fail;
	}
	m.len = (size_t)n;
	*ret = m;
	return 1;
fail:
	proto_raw_done(&m);
	return r;
}

int proto_recv(int sock, size_t max_bytes, size_t max_fds, struct proto_msg *ret, char **error)
{
	struct proto_raw raw = {};
	json_object *json = NULL;
	int r = proto_recv_raw(sock, max_bytes, max_fds, &raw, error);

	if (r <= 0)
		return r;
	r = proto_parse(raw.buf, raw.len, &json, error);
	if (r < 0) {
		proto_raw_done(&raw);
		return r;
	}
	free(raw.buf);
	*ret = (struct proto_msg){.json = json, .fds = raw.fds, .n_fds = raw.n_fds};
	return 1;
}
