/* SPDX-License-Identifier: MIT */
/* The network objects' filled maps frozen, then read back against the settings (net_seal.h). */
#include "objects/net/net_seal.h"

#include <errno.h>
#include <stdlib.h>
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

static int read_error(const char *map, char **error)
{
	return error_setf(error, -errno, "cannot read map %s back: %m", map);
}

/* The map's max_entries: a bound on its keys (a loop over them never runs longer). */
static int map_max_entries(int fd, const char *map, __u32 *ret, char **error)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
		return read_error(map, error);
	*ret = info.max_entries;
	return 0;
}

union trie_key {
	struct net_ipv4_key k4;
	struct net_ipv6_key k6;
};

/* Prefix p as the key of its family's trie. */
static void prefix_key(const struct net_prefix *p, union trie_key *key)
{
	*key = (union trie_key){};
	if (p->family == AF_INET)
		net_prefix_to_ipv4_key(p, &key->k4);
	else
		net_prefix_to_ipv6_key(p, &key->k6);
}

/*
 * Whether key (size bytes) is one of want's n. By its bytes: a lookup in an LPM trie is a
 * longest-prefix match, and would find a key that merely covers it.
 */
static bool key_listed(const union trie_key *want, size_t n, const union trie_key *key, size_t size)
{
	for (size_t i = 0; i < n; i++)
		if (memcmp(&want[i], key, size) == 0)
			return true;
	return false;
}

/*
 * Whether the trie of family holds exactly list's prefixes of that family (duplicates one
 * key), each matching: every key iterated is one of them, and there are as many as they are.
 */
static int trie_check(int fd, int family, const struct net_prefix *list, size_t n, const char *map,
		      char **error)
{
	_cleanup_free_ union trie_key *want = calloc(n ?: 1, sizeof(*want));
	union trie_key key = {}, next = {}, k;
	size_t size = family == AF_INET ? sizeof(key.k4) : sizeof(key.k6), n_want = 0, found = 0;
	__u32 max = 0;
	__u8 v;
	int r;

	if (!want)
		return error_setf(error, -ENOMEM, "cannot check map %s: out of memory", map);
	for (size_t i = 0; i < n; i++)
		if (list[i].family == family) {
			prefix_key(&list[i], &k);
			if (!key_listed(want, n_want, &k, size))
				want[n_want++] = k;
		}
	r = map_max_entries(fd, map, &max, error);
	if (r < 0)
		return r;
	while (bpf_map_get_next_key(fd, found == 0 ? NULL : &key, &next) == 0) {
		if (found++ == max)
			return error_setf(error, -EOVERFLOW,
					  "cannot read map %s back: more keys than its %u entries",
					  map, max);
		memcpy(&key, &next, size);
		if (!key_listed(want, n_want, &key, size))
			return written_by_another(map, error);
		/* The key itself is in the trie: its own value is the longest match. */
		if (bpf_map_lookup_elem(fd, &key, &v) < 0)
			return read_error(map, error);
		if (v != NET_IP_MATCH)
			return written_by_another(map, error);
	}
	if (errno != ENOENT)
		return read_error(map, error);
	return found == n_want ? 0 : written_by_another(map, error);
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
	_cleanup_free_ __u32 *want = calloc(s->n_ifaces ?: 1, sizeof(*want));
	__u32 zero = 0, mode = 0,
	      mode_want = s->ifaces_allow_list ? NET_IFACES_ALLOW_LIST : NET_IFACES_DENY_LIST;
	__u32 key = 0, next, index, max = 0;
	size_t found = 0, n_want = 0;
	__u8 v;
	int k;

	if (!want)
		return error_setf(error, -ENOMEM, "cannot check map %s: out of memory",
				  NET_MAP_IFACES);
	k = freeze(ifaces_fd, NET_MAP_IFACES, error);
	if (k == 0)
		k = freeze(mode_fd, NET_MAP_IFACES_MODE, error);
	if (k == 0)
		k = map_max_entries(ifaces_fd, NET_MAP_IFACES, &max, error);
	if (k < 0)
		return k;
	if (bpf_map_lookup_elem(mode_fd, &zero, &mode) < 0)
		return read_error(NET_MAP_IFACES_MODE, error);
	if (mode != mode_want)
		return written_by_another(NET_MAP_IFACES_MODE, error);
	/* An interface's names (altnames) are one index: each counted once. */
	for (size_t i = 0; i < s->n_ifaces; i++) {
		bool dup = false;

		if (net_ifname_to_index(s->ifaces[i], &index) < 0)
			continue; /* left out by the fill too (or gone since: then not looked up) */
		for (size_t j = 0; j < n_want && !dup; j++)
			dup = want[j] == index;
		if (!dup)
			want[n_want++] = index;
	}
	/* Exactly those: every key one of them, and as many keys as there are of them. */
	while (bpf_map_get_next_key(ifaces_fd, found == 0 ? NULL : &key, &next) == 0) {
		bool listed = false;

		if (found++ == max)
			return error_setf(error, -EOVERFLOW,
					  "cannot read map %s back: more keys than its %u entries",
					  NET_MAP_IFACES, max);
		key = next;
		for (size_t j = 0; j < n_want && !listed; j++)
			listed = want[j] == key;
		if (!listed)
			return written_by_another(NET_MAP_IFACES, error);
		if (bpf_map_lookup_elem(ifaces_fd, &key, &v) < 0)
			return read_error(NET_MAP_IFACES, error);
		if (v != NET_IFACE_LISTED)
			return written_by_another(NET_MAP_IFACES, error);
	}
	if (errno != ENOENT)
		return read_error(NET_MAP_IFACES, error);
	return found == n_want ? 0 : written_by_another(NET_MAP_IFACES, error);
}

static int rules_check(const struct net_bind_rule *rules, size_t n, int fd, const char *map,
		       char **error)
{
	int k = freeze(fd, map, error);

	for (__u32 i = 0; k == 0 && i < NET_BIND_RULES_MAX; i++) {
		struct net_bind_rule want = i < n ? rules[i] : (struct net_bind_rule){}, got;

		if (bpf_map_lookup_elem(fd, &i, &got) < 0)
			return read_error(map, error);
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
