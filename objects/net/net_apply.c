/* SPDX-License-Identifier: MIT */
/* Parsed network settings written into the network objects' maps; accounting read back. */
#include "objects/net/net_apply.h"

#include <errno.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "common/error.h"
#include "common/macro.h"

static int update(int fd, const void *key, const void *value, const char *map, char **error)
{
	if (bpf_map_update_elem(fd, key, value, BPF_ANY) < 0)
		return error_setf(error, -errno, "cannot fill map %s: %m", map);
	return 0;
}

static int prefixes_fill(const struct net_prefix *list, size_t n, int fd4, int fd6,
			 const char *map4, const char *map6, char **error)
{
	const __u8 match = NET_IP_MATCH;

	for (size_t i = 0; i < n; i++) {
		struct net_ipv4_key k4;
		struct net_ipv6_key k6;
		int k;

		if (list[i].family == AF_INET) {
			net_prefix_to_ipv4_key(&list[i], &k4);
			k = update(fd4, &k4, &match, map4, error);
		} else {
			net_prefix_to_ipv6_key(&list[i], &k6);
			k = update(fd6, &k6, &match, map6, error);
		}
		if (k < 0)
			return k;
	}
	return 0;
}

int net_ip_fill(const struct net_settings *s, const struct net_ip_map_fds *fds, char **error)
{
	int k = prefixes_fill(s->ip_allow, s->n_ip_allow, fds->ipv4_allow, fds->ipv6_allow,
			      NET_MAP_IPV4_ALLOW, NET_MAP_IPV6_ALLOW, error);

	if (k < 0)
		return k;
	return prefixes_fill(s->ip_deny, s->n_ip_deny, fds->ipv4_deny, fds->ipv6_deny,
			     NET_MAP_IPV4_DENY, NET_MAP_IPV6_DENY, error);
}

int net_ip_acct_read(int acct_fd, struct net_ip_acct *ret_ingress, struct net_ip_acct *ret_egress)
{
	struct net_ip_acct in, out;
	__u32 key = NET_IP_INGRESS;

	if (bpf_map_lookup_elem(acct_fd, &key, &in) < 0)
		return -errno;
	key = NET_IP_EGRESS;
	if (bpf_map_lookup_elem(acct_fd, &key, &out) < 0)
		return -errno;
	*ret_ingress = in;
	*ret_egress = out;
	return 0;
}

/* RTM_GETLINK by IFLA_ALT_IFNAME: the only way to a name longer than IFNAMSIZ allows. */
static int altname_to_index(const char *name, uint32_t *ret)
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
		char attrs[RTA_SPACE(NET_IFNAME_MAX)];
	} req = {
		.nh = {.nlmsg_type = RTM_GETLINK, .nlmsg_flags = NLM_F_REQUEST},
		.ifi = {.ifi_family = AF_UNSPEC},
	};
	union {
		struct nlmsghdr nh;
		char buf[8192];
	} reply;
	struct rtattr *rta = (struct rtattr *)req.attrs;
	size_t len = strlen(name) + 1;
	_cleanup_close_ int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	ssize_t n;

	if (fd < 0)
		return -errno;
	rta->rta_type = IFLA_ALT_IFNAME;
	rta->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(rta), name, len);
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ifi)) + RTA_SPACE(len);
	if (send(fd, &req, req.nh.nlmsg_len, 0) < 0)
		return -errno;
	n = recv(fd, &reply, sizeof(reply), 0);
	if (n < 0)
		return -errno;
	if ((size_t)n < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
		return -EIO;
	if (reply.nh.nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(&reply.nh);

		return e->error < 0 ? e->error : -EIO;
	}
	if (reply.nh.nlmsg_type != RTM_NEWLINK)
		return -EIO;
	*ret = (uint32_t)((const struct ifinfomsg *)NLMSG_DATA(&reply.nh))->ifi_index;
	return 0;
}

int net_ifname_to_index(const char *name, uint32_t *ret)
{
	unsigned index;
	int k;

	if (!net_ifname_is_valid(name))
		return -EINVAL;
	/* Short names, alternative ones too, are found by the kernel's name lookup. */
	if (strlen(name) < IFNAMSIZ) {
		index = if_nametoindex(name);
		if (index == 0)
			return errno == ENXIO || errno == ENODEV ? -ENODEV : -errno;
		*ret = index;
		return 0;
	}
	k = altname_to_index(name, ret);
	return k == -ENOENT ? -ENODEV : k;
}

int net_ifaces_fill(const struct net_settings *s, int ifaces_fd, int mode_fd, size_t *ret_unknown,
		    char **error)
{
	const __u8 listed = NET_IFACE_LISTED;
	__u32 zero = 0, mode = s->ifaces_allow_list ? NET_IFACES_ALLOW_LIST : NET_IFACES_DENY_LIST;
	size_t unknown = 0;
	int k;

	for (size_t i = 0; i < s->n_ifaces; i++) {
		uint32_t index;

		k = net_ifname_to_index(s->ifaces[i], &index);
		if (k == -ENODEV) {
			unknown++;
			continue;
		}
		if (k < 0)
			return error_setf(error, k, "cannot look up interface %s: %s", s->ifaces[i],
					  strerror(-k));
		k = update(ifaces_fd, &index, &listed, NET_MAP_IFACES, error);
		if (k < 0)
			return k;
	}
	/* The mode last: an allow list's programs refuse everything until it is filled. */
	k = update(mode_fd, &zero, &mode, NET_MAP_IFACES_MODE, error);
	if (k < 0)
		return k;
	if (ret_unknown)
		*ret_unknown = unknown;
	return 0;
}

static int rules_fill(const struct net_bind_rule *rules, size_t n, int fd, const char *map,
		      char **error)
{
	if (n > NET_BIND_RULES_MAX)
		return error_setf(error, -E2BIG, "too many rules for %s", map);
	for (__u32 i = 0; i < NET_BIND_RULES_MAX; i++) {
		struct net_bind_rule r = i < n ? rules[i] : (struct net_bind_rule){};
		int k = update(fd, &i, &r, map, error);

		if (k < 0)
			return k;
	}
	return 0;
}

int net_bind_fill(const struct net_settings *s, int allow_fd, int deny_fd, char **error)
{
	int k = rules_fill(s->bind_allow, s->n_bind_allow, allow_fd, NET_MAP_BIND_ALLOW, error);

	if (k < 0)
		return k;
	return rules_fill(s->bind_deny, s->n_bind_deny, deny_fd, NET_MAP_BIND_DENY, error);
}
