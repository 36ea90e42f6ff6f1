/* SPDX-License-Identifier: MIT */
/* The network objects' filled maps frozen, then read back against the settings (net_seal.h). */
#include "objects/net/net_seal.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "common/error.h"
#include "common/macro.h"

static int freeze(int fd, const char *map, char **error)
{
	/* EBUSY: a write through some fd is under way; the read back finds what it wrote. */
	for (int i = 0; bpf_map_freeze(fd) < 0; i++) {
		if (errno != EBUSY || i == 100)
			return error_setf(error, -errno, "cannot freeze map %s: %m", map);
		usleep(1000);
	}
	return 0;
}

static int written_by_another(const char *map, char **error)
{
	return error_setf(error, -EEXIST,
			  "map %s holds what the settings do not: written by another holder of "
			  "its fd before it was frozen (a process of the cgroup?)",
			  map);
}

/* Prefix i of list as the key of family's trie, in key (4 + 4 or 4 + 16 bytes). */
static void prefix_key(const struct net_prefix *p, void *key)
{
	if (p->family == AF_INET)
		net_prefix_to_ipv4_key(p, key);
	else
		net_prefix_to_ipv6_key(p, key);
}

/* Whether the trie of family holds exactly list's prefixes of that family, each matching. */
static int trie_check(int fd, int family, const struct net_prefix *list, size_t n, const char *map,
		      char **error)
{
	union {
		struct net_ipv4_key k4;
		struct net_ipv6_key k6;
	} key, next, want;
	size_t size = family == AF_INET ? sizeof(key.k4) : sizeof(key.k6), found = 0, ours = 0;
	bool first = true;
	__u8 v;

	for (size_t i = 0; i < n; i++)
		if (list[i].family == family) {
			prefix_key(&list[i], &want);
			if (bpf_map_lookup_elem(fd, &want, &v) < 0 || v != NET_IP_MATCH)
				return written_by_another(map, error);
			ours++;
		}
	while (bpf_map_get_next_key(fd, first ? NULL : &key, &next) == 0) {
		bool listed = false;

		first = false;
		memcpy(&key, &next, size);
		for (size_t i = 0; i < n && !listed; i++) {
			if (list[i].family != family)
				continue;
			prefix_key(&list[i], &want);
			listed = memcmp(&want, &key, size) == 0;
		}
		if (!listed)
			return written_by_another(map, error);
		found++;
	}
	if (errno != ENOENT)
		return error_setf(error, -errno, "cannot read map %s: %m", map);
	/* Duplicates in the list are one key: found is at most ours, each found is ours. */
	return found <= ours ? 0 : written_by_another(map, error);
}

int net_ip_seal(const struct net_settings *s, const struct net_ip_map_fds *fds, char **error)
{
	const struct {
		int fd, family;
		const struct net_prefix *list;
		size_t n;
		const char *map;
	} tries[] = {
		{fds->ipv4_allow, AF_INET, s->ip_allow, s->n_ip_allow, NET_MAP_IPV4_ALLOW},
		{fds->ipv4_deny, AF_INET, s->ip_deny, s->n_ip_deny, NET_MAP_IPV4_DENY},
		{fds->ipv6_allow, AF_INET6, s->ip_allow, s->n_ip_allow, NET_MAP_IPV6_ALLOW},
		{fds->ipv6_deny, AF_INET6, s->ip_deny, s->n_ip_deny, NET_MAP_IPV6_DENY},
	};
	int k = 0;

	for (size_t i = 0; k == 0 && i < ARRAY_SIZE(tries); i++)
		k = freeze(tries[i].fd, tries[i].map, error);
	for (size_t i = 0; k == 0 && i < ARRAY_SIZE(tries); i++)
		k = trie_check(tries[i].fd, tries[i].family, tries[i].list, tries[i].n,
			       tries[i].map, error);
	return k;
}

int net_ifaces_seal(const struct net_settings *s, int ifaces_fd, int mode_fd, char **error)
{
	__u32 zero = 0, mode = 0,
	      want = s->ifaces_allow_list ? NET_IFACES_ALLOW_LIST : NET_IFACES_DENY_LIST;
	__u32 key = 0, next, index;
	size_t found = 0, ours = 0;
	bool first = true;
	__u8 v;
	int k = freeze(ifaces_fd, NET_MAP_IFACES, error);

	if (k == 0)
		k = freeze(mode_fd, NET_MAP_IFACES_MODE, error);
	if (k < 0)
		return k;
	if (bpf_map_lookup_elem(mode_fd, &zero, &mode) < 0 || mode != want)
		return written_by_another(NET_MAP_IFACES_MODE, error);
	for (size_t i = 0; i < s->n_ifaces; i++) {
		if (net_ifname_to_index(s->ifaces[i], &index) < 0)
			continue; /* left out by the fill too (or gone since: then not looked up) */
		if (bpf_map_lookup_elem(ifaces_fd, &index, &v) < 0 || v != NET_IFACE_LISTED)
			return written_by_another(NET_MAP_IFACES, error);
		ours++;
	}
	while (bpf_map_get_next_key(ifaces_fd, first ? NULL : &key, &next) == 0) {
		first = false;
		key = next;
		found++;
	}
	if (errno != ENOENT)
		return error_setf(error, -errno, "cannot read map %s: %m", NET_MAP_IFACES);
	/* Every one of ours is there; anything more is not ours (names of one interface are
	 * one key, so found may be fewer). */
	return found <= ours ? 0 : written_by_another(NET_MAP_IFACES, error);
}

static int rules_check(const struct net_bind_rule *rules, size_t n, int fd, const char *map,
		       char **error)
{
	int k = freeze(fd, map, error);

	for (__u32 i = 0; k == 0 && i < NET_BIND_RULES_MAX; i++) {
		struct net_bind_rule want = i < n ? rules[i] : (struct net_bind_rule){}, got;

		if (bpf_map_lookup_elem(fd, &i, &got) < 0)
			return error_setf(error, -errno, "cannot read map %s: %m", map);
		if (memcmp(&want, &got, sizeof(got)) != 0)
			return written_by_another(map, error);
	}
	return k;
}

int net_bind_seal(const struct net_settings *s, int allow_fd, int deny_fd, char **error)
{
	int k = rules_check(s->bind_allow, s->n_bind_allow, allow_fd, NET_MAP_BIND_ALLOW, error);

	if (k < 0)
		return k;
	return rules_check(s->bind_deny, s->n_bind_deny, deny_fd, NET_MAP_BIND_DENY, error);
}
