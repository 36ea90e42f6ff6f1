/* SPDX-License-Identifier: MIT */
/*
 * systemd's network settings enforced on a cgroup through the broker, as the
 * user: the vetted system objects ("ip-firewall", "restrict-ifaces",
 * "socket-bind"; policy/POLICY.md, "Vetted objects") loaded by name as named
 * objects of the caller, their maps filled from the settings (net_apply.h),
 * their programs attached to the cgroup pinned and protected (proto/NAMED.md,
 * "Protected links"), so that they stay until removed and the cgroup's own
 * processes cannot remove them. Used by `bpfctl net` and bpfbroker-user-net.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libbpfbroker.h"
#include "objects/net/net_settings.h"

/* A tag names one application's objects: 1..NET_ENFORCE_TAG_MAX of [A-Za-z0-9_-]. */
#define NET_ENFORCE_TAG_MAX 40

/* The kinds of a tag's objects, one per system object (IP, interfaces, binds). */
enum { NET_ENFORCE_IP, NET_ENFORCE_IFACES, NET_ENFORCE_BIND, NET_ENFORCE_KINDS };
/* Each kind's name, the suffix of its object's name "net-TAG-KIND": "ip", "ifaces", "bind". */
extern const char *const net_enforce_kinds[NET_ENFORCE_KINDS];
/* The object name of tag's kind, "net-TAG-KIND", into ret. */
#define NET_ENFORCE_NAME_MAX 80
void net_enforce_object_name(const char *tag, size_t kind, char ret[NET_ENFORCE_NAME_MAX]);

/*
 * Apply s to the cgroup v2 directory cgroup_path (one the caller owns, from
 * outside it: a protected link is refused to its own processes), as the named
 * objects "net-TAG-ip", "net-TAG-ifaces" and "net-TAG-bind", only those the
 * settings need (net_settings_want_*()). All or nothing: on failure, what this
 * call loaded is unloaded again. Objects of tag already there count as
 * applied (idempotent per tag). 0 (also when s needs nothing), or -errno with
 * *error (malloc'd) saying why.
 */
int net_enforce_apply(struct bpfbroker *b, const char *tag, const struct net_settings *s,
		      const char *cgroup_path, char **error);

/* Unload what net_enforce_apply() made for tag; nothing there is 0. 0 or -errno with *error. */
int net_enforce_remove(struct bpfbroker *b, const char *tag, char **error);

/* IPAccounting=: what the ip object of tag let through, per direction. */
struct net_enforce_acct {
	uint64_t in_bytes, in_packets, out_bytes, out_packets;
};

/* The counters of tag's ip object: 0, -ENOENT (none), or -errno with *error. */
int net_enforce_accounting(struct bpfbroker *b, const char *tag, struct net_enforce_acct *ret,
			   char **error);

/* Whether tag is 1..NET_ENFORCE_TAG_MAX of [A-Za-z0-9_-]. */
bool net_enforce_tag_is_valid(const char *tag);

/* The tag of a cgroup: "cg" and its cgroup id (its directory's inode number). 0 or -errno. */
int net_enforce_cgroup_tag(const char *cgroup_path, char ret[NET_ENFORCE_TAG_MAX + 1]);
