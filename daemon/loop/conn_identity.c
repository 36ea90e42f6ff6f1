/* SPDX-License-Identifier: MIT */
/*
 * Who is at the other end of a connection, taken once at accept from the
 * kernel (SO_PEERCRED, SO_PEERGROUPS, SO_PEERPIDFD; the unit from
 * /proc/PID/cgroup) and encoded once for every job; and the caller's network
 * namespace for an attach (SIOCGSKNS).
 */
#include "conn.h"

#include <errno.h>
#include <linux/sockios.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "common/macro.h"
#include "daemon/shared/caps.h"
#include "peer_unit.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5; newer than these headers */
#endif

struct policy_identity conn_identity(const struct conn *c)
{
	struct policy_identity id = {.uid = c->cred.uid,
				     .gid = c->cred.gid,
				     .groups = c->ident.groups,
				     .n_groups = c->ident.n_groups};

	peer_unit_to_policy_identity(&c->ident.unit, &id);
	return id;
}

/*
 * The caller's network namespace: that of its end of the connection, which
 * the kernel creates the accepted socket in (unix_stream_connect()). Bound to
 * the connection as SO_PEERCRED is, so no pid can have been reused, and no
 * /proc: SIOCGSKNS needs CAP_NET_ADMIN (which we hold for SO_SNDBUFFORCE),
 * not the CAP_SYS_PTRACE that /proc/PID/ns/net or PIDFD_GET_NET_NAMESPACE
 * would (ptrace access to another user's process).
 */
int conn_open_netns(struct conn *c)
{
	static const cap_value_t net_admin[] = {CAP_NET_ADMIN};
	int fd, k = caps_set_effective(net_admin, 1);

	if (k < 0)
		return k;
	fd = ioctl(c->fd, SIOCGSKNS);
	k = fd < 0 ? negative_errno() : fd;
	caps_clear_effective();
	return k;
}

int conn_read_identity(struct conn *c)
{
	socklen_t len = sizeof(c->cred);
	gid_t small[64];
	gid_t *groups = small;
	_cleanup_free_ gid_t *big = NULL;

	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len) < 0)
		return negative_errno();
	if (len != sizeof(c->cred) || c->cred.uid == (uid_t)-1)
		return -EPERM;

	len = sizeof(small);
	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERGROUPS, small, &len) < 0) {
		if (errno != ERANGE)
			return negative_errno();
		/* ERANGE says how many there are: bounded before anything is made for them. */
		if (len > SERVER_MAX_GROUPS * sizeof(gid_t)) {
			c->n_groups_over = len / sizeof(gid_t);
			len = 0;
		} else {
			big = malloc(len);
			if (!big)
				return -ENOMEM;
			if (getsockopt(c->fd, SOL_SOCKET, SO_PEERGROUPS, big, &len) < 0)
				return negative_errno();
			groups = big;
		}
	}
	c->ident.groups = malloc(len + sizeof(gid_t));
	if (!c->ident.groups)
		return -ENOMEM;
	memcpy(c->ident.groups, groups, len);
	c->ident.n_groups = len / sizeof(gid_t);

	/* A pidfd pins the peer process, for later checks that must not race pid reuse. */
	len = sizeof(c->pidfd);
	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERPIDFD, &c->pidfd, &len) < 0)
		c->pidfd = -EBADF;
	/*
	 * The systemd unit costs a dozen small reads: only when a rule can use
	 * it. Its cgroup, established the same way, is also who a protected
	 * link confines (NAMED.md); without units, that is one read of
	 * /proc/PID/cgroup. Unknown, it stays NULL: confined by every one.
	 */
	if (policy_uses_units(*c->server->cfg.policy)) {
		int k = peer_unit_read(c->fd, c->cred.pid, c->cred.uid, c->pidfd, &c->ident.unit);

		if (k < 0)
			return k;
		if (c->ident.unit.cgroup) {
			c->ident.peer_cgroup = strdup(c->ident.unit.cgroup);
			if (!c->ident.peer_cgroup)
				return -ENOMEM;
		}
	} else if (peer_cgroup_read(c->cred.pid, c->pidfd, &c->ident.peer_cgroup) < 0)
		c->ident.peer_cgroup = NULL;
	c->ident.uid = c->cred.uid;
	c->ident.gid = c->cred.gid;
	c->ident.pid = c->cred.pid;
	/* Encoded once: every job of the connection carries these bytes as they are. */
	return jobmsg_identity_encode(&c->ident, &c->ident_wire, &c->ident_wire_len);
}
