/* SPDX-License-Identifier: MIT */
/*
 * Attach targets "xdp" and "tc": a program linked to an interface in the caller's network
 * namespace.
 */
#include "named_call.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "daemon/shared/caps.h"
#include "daemon/shared/log.h"
#include "denial.h"
#include "netns.h"

/*
 * Interfaces are the caller's: names resolve, and programs attach, in the
 * network namespace of the calling process, which the event loop opened for
 * us (a container's veth is not the host's).
 */
static int netns_enter_caller(struct call *c, struct reply *r, int *ret_saved)
{
	static const cap_value_t sys_admin[] = {CAP_SYS_ADMIN};
	int saved, k;

	if (c->netns < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, ENOSYS,
				   "the broker cannot tell your network namespace (it needs "
				   "SO_PEERPIDFD, Linux 6.5, and your process alive)");
	saved = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (saved < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, errno,
				   "cannot open our network namespace: %m");
	k = caps_set_effective(sys_admin, 1);
	if (k >= 0 && setns(c->netns, CLONE_NEWNET) < 0)
		k = negative_errno();
	caps_clear_effective();
	if (k < 0) {
		safe_close(saved);
		return reply_error(r, PROTO_ERR_INTERNAL, -k,
				   "cannot enter your network namespace: %s%s", strerror(-k),
				   k == -ESRCH ? " (your process is gone)" : "");
	}
	*ret_saved = saved;
	return 0;
}

static void netns_leave(int saved)
{
	static const cap_value_t sys_admin[] = {CAP_SYS_ADMIN};

	if (saved < 0)
		return;
	if (caps_set_effective(sys_admin, 1) < 0 || setns(saved, CLONE_NEWNET) < 0)
		log_warning("cannot return to our network namespace: %m");
	caps_clear_effective();
	safe_close(saved);
}

/*
 * if_nametoindex(), in the network namespace we are in, with the one kind of
 * socket the workers' filter lets them make (sandbox.c): a SOCK_SEQPACKET
 * one, which sends nothing unconnected, where glibc's would be a datagram
 * socket that can send anywhere. 0 if there is none.
 */
static unsigned interface_index(const char *name)
{
	_cleanup_close_ int fd = -EBADF;
	struct ifreq ifr = {};

	if (strlen(name) >= sizeof(ifr.ifr_name))
		return 0;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	memcpy(ifr.ifr_name, name, strlen(name));
	if (ioctl(fd, SIOCGIFINDEX, &ifr) < 0 || ifr.ifr_ifindex <= 0)
		return 0;
	return (unsigned)ifr.ifr_ifindex;
}
/*
 * An interface grant applies only in a network namespace of the caller's
 * own (netns.h): "veth*" for a container's uids means the container's
 * veths, not the host's, wherever those uids run. Elsewhere (the host's, one
 * root made, anyone else's) only host_interfaces grants interfaces.
 */
static int check_interface_grant(struct call *c, struct reply *r, const char *ifname)
{
	char key[64];
	int own;

	if (c->netns < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, ENOSYS,
				   "the broker cannot tell your network namespace (it needs "
				   "SO_PEERPIDFD, Linux 6.5, and your process alive)");
	own = netns_owned_by(c->netns, c->ident.id.uid);
	if (own < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, -own,
				   "cannot tell whose your network namespace is: %s",
				   strerror(-own));
	if (own ? policy_grant_attach_interface(c->grant, ifname)
		: policy_grant_attach_host_interface(c->grant, ifname))
		return 0;
	/* In a namespace not yours only host_interfaces grants, even what interfaces names. */
	snprintf(key, sizeof(key), "attach.%sinterfaces: %.16s", own ? "" : "host_", ifname);
	if (!own && policy_grant_attach_interface(c->grant, ifname))
		return denial_reply(
			r, PROTO_ERR_DENIED, EPERM, "object", NULL, key,
			"the network namespace you are in is not yours (no user namespace you own "
			"owns it: it is the host's, or one root or another user made): your policy "
			"grants interface \"%.16s\" only in network namespaces you own "
			"(\"interfaces\"); in others only \"host_interfaces\" grants interfaces, "
			"and it does not name this one",
			ifname);
	return denial_reply(r, PROTO_ERR_DENIED, EPERM, "object", NULL, key,
			    "your policy does not allow attaching to interface \"%.16s\" in %s "
			    "network namespace",
			    ifname, own ? "your own" : "a (host's or another's)");
}

int attach_interface(struct call *c, struct reply *r, const struct attach_req *a, json_object *prog,
		     int prog_fd, bool tc, int *ret_link_fd)
{
	static const cap_value_t caps[] = {CAP_BPF, CAP_NET_ADMIN};
	int type = (int)meta_int(prog, "prog_type"), at, saved = -EBADF, k;
	unsigned ifindex;

	if (type != (tc ? BPF_PROG_TYPE_SCHED_CLS : BPF_PROG_TYPE_XDP))
		return reply_error(r, PROTO_ERR_INVALID, EINVAL,
				   "program \"%s\" is not a%s program", a->program,
				   tc ? " tc (sched_cls)" : "n xdp");
	if (!a->name)
		return reply_error(r, PROTO_ERR_INVALID, EINVAL,
				   "an interface target needs \"name\": the interface");
	if (!policy_interface_name_is_valid(a->name, false))
		return reply_error(r, PROTO_ERR_INVALID, EINVAL,
				   "\"%.64s\" is not an interface name (1 to 15 characters, none "
				   "of '/', ':' or whitespace)",
				   a->name);
	k = check_interface_grant(c, r, a->name);
	if (k != 0)
		return k;
	if (tc) {
		if (!a->attach_type || strcmp(a->attach_type, "ingress") == 0)
			at = ATTACH_TCX_INGRESS;
		else if (strcmp(a->attach_type, "egress") == 0)
			at = ATTACH_TCX_EGRESS;
		else
			return reply_error(r, PROTO_ERR_INVALID, EINVAL,
					   "tc attaches on \"ingress\" or \"egress\"");
	} else {
		if (a->attach_type)
			return reply_error(r, PROTO_ERR_INVALID, EINVAL,
					   "xdp targets take no attach_type");
		at = BPF_XDP;
	}
	k = netns_enter_caller(c, r, &saved);
	if (k != 0)
		return k;
	ifindex = interface_index(a->name);
	if (ifindex == 0) {
		netns_leave(saved);
		return reply_error(r, PROTO_ERR_NOT_FOUND, ENODEV,
				   "there is no interface %s in your network namespace", a->name);
	}
	k = caps_set_effective(caps, ARRAY_SIZE(caps));
	if (k >= 0) {
		k = bpf_link_create(prog_fd, (int)ifindex, (enum bpf_attach_type)at, NULL);
		if (k < 0)
			k = negative_errno();
	}
	caps_clear_effective();
	netns_leave(saved);
	if (k < 0)
		return reply_error(r, PROTO_ERR_LOAD, -k,
				   "the kernel refused to attach \"%s\" to %s %s%s%s: %s",
				   a->program, tc ? "tc" : "xdp", a->name, tc ? " " : "",
				   tc ? (at == ATTACH_TCX_INGRESS ? "ingress" : "egress") : "",
				   strerror(-k));
	*ret_link_fd = k;
	return 0;
}
