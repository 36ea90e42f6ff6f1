/* SPDX-License-Identifier: MIT */
/*
 * net_enforce.h: systemd's network settings on a cgroup through the broker, as the named
 * objects "net-TAG-ip|ifaces|bind" loaded from the vetted system objects, filled, and
 * attached pinned and protected; removed by unloading them; accounting read back.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common/error.h"
#include "common/json.h"
#include "common/macro.h"
#include "objects/net/net_apply.h"
#include "objects/net/net_enforce.h"
#include "objects/net/net_seal.h"

/* One of the three objects: the system object, the suffix of its named object's name, and
 * its programs (what an existing object of the name must have, all attached, to count). */
struct net_kind {
	const char *system_object;
	const char *programs[2];
	bool (*want)(const struct net_settings *s);
	int (*fill)(const struct net_settings *s, const struct bpfbroker_result *r, char **error);
};

/* The fd the load result holds for map name, or -EBADF (the fill then fails with EBADF). */
static int result_map_fd(const struct bpfbroker_result *r, const char *name)
{
	const struct bpfbroker_map *m = bpfbroker_result_map(r, name);

	return m ? m->fd : -EBADF;
}

static int fill_ip(const struct net_settings *s, const struct bpfbroker_result *r, char **error)
{
	struct net_ip_map_fds fds = {
		.ipv4_allow = result_map_fd(r, NET_MAP_IPV4_ALLOW),
		.ipv4_deny = result_map_fd(r, NET_MAP_IPV4_DENY),
		.ipv6_allow = result_map_fd(r, NET_MAP_IPV6_ALLOW),
		.ipv6_deny = result_map_fd(r, NET_MAP_IPV6_DENY),
	};

	/* IPAccounting= alone needs nothing filled: ip_acct always counts. */
	int k = net_ip_fill(s, &fds, error);

	return k < 0 ? k : net_ip_seal(s, &fds, error);
}

static int fill_ifaces(const struct net_settings *s, const struct bpfbroker_result *r, char **error)
{
	size_t unknown = 0;
	int k = net_ifaces_fill(s, result_map_fd(r, NET_MAP_IFACES),
				result_map_fd(r, NET_MAP_IFACES_MODE), &unknown, error);

	if (k == 0)
		k = net_ifaces_seal(s, result_map_fd(r, NET_MAP_IFACES),
				    result_map_fd(r, NET_MAP_IFACES_MODE), error);
	/* systemd leaves such a name out with a warning; so do we, the warning said here. */
	if (k == 0 && unknown > 0)
		fprintf(stderr,
			"warning: %zu interface name(s) of RestrictNetworkInterfaces= name "
			"no interface now; left out\n",
			unknown);
	return k;
}

static int fill_bind(const struct net_settings *s, const struct bpfbroker_result *r, char **error)
{
	int allow = result_map_fd(r, NET_MAP_BIND_ALLOW),
	    deny = result_map_fd(r, NET_MAP_BIND_DENY);
	int k = net_bind_fill(s, allow, deny, error);

	return k < 0 ? k : net_bind_seal(s, allow, deny, error);
}

const char *const net_enforce_kinds[NET_ENFORCE_KINDS] = {
	[NET_ENFORCE_IP] = "ip",
	[NET_ENFORCE_IFACES] = "ifaces",
	[NET_ENFORCE_BIND] = "bind",
};

static const struct net_kind kinds[NET_ENFORCE_KINDS] = {
	[NET_ENFORCE_IP] = {"ip-firewall",
			    {"ip_ingress", "ip_egress"},
			    net_settings_want_ip,
			    fill_ip},
	[NET_ENFORCE_IFACES] = {"restrict-ifaces",
				{"ifaces_ingress", "ifaces_egress"},
				net_settings_want_ifaces,
				fill_ifaces},
	[NET_ENFORCE_BIND] = {"socket-bind", {"bind4", "bind6"}, net_settings_want_bind, fill_bind},
};

bool net_enforce_tag_is_valid(const char *tag)
{
	size_t n = tag ? strlen(tag) : 0;

	if (n == 0 || n > NET_ENFORCE_TAG_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-",
			    tag[i]))
			return false;
	return true;
}

int net_enforce_cgroup_tag(const char *cgroup_path, char ret[NET_ENFORCE_TAG_MAX + 1])
{
	struct stat st;

	if (stat(cgroup_path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	/* A cgroup's inode number is its id (what the broker records for a protected link). */
	snprintf(ret, NET_ENFORCE_TAG_MAX + 1, "cg%" PRIu64, (uint64_t)st.st_ino);
	return 0;
}

/* "net-TAG-SUFFIX" into ret (room for a named object's name). */
void net_enforce_object_name(const char *tag, size_t kind, char ret[NET_ENFORCE_NAME_MAX])
{
	snprintf(ret, NET_ENFORCE_NAME_MAX, "net-%s-%s", tag, net_enforce_kinds[kind]);
}

/* The broker's answer e (or errno k) as *error, prefixed by what was done; returns k. */
static int broker_error(char **error, int k, struct bpfbroker_error *e, const char *what,
			const char *name)
{
	if (!e)
		return error_setf(error, k, "%s %s: %s", what, name, strerror(-k));
	if (e->reasons && e->reasons[0] && strcmp(e->reasons[0], e->message) != 0)
		error_setf(error, k, "%s %s: %s (%s)", what, name, e->message, e->reasons[0]);
	else
		error_setf(error, k, "%s %s: %s", what, name, e->message);
	bpfbroker_error_free(e);
	return k;
}

/* Whether the programs (a JSON array of {"name": ...}) are exactly kind's. */
static bool kind_programs(const struct net_kind *kind, json_object *progs)
{
	size_t n = json_object_array_length(progs);

	if (n != ARRAY_SIZE(kind->programs))
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(kind->programs); i++) {
		bool found = false;

		for (size_t j = 0; j < n && !found; j++) {
			const char *p = json_object_get_string(json_object_object_get(
				json_object_array_get_idx(progs, j), "name"));

			found = p && strcmp(p, kind->programs[i]) == 0;
		}
		if (!found)
			return false;
	}
	return true;
}

/*
 * Whether the existing object name (text: what show answered for it) has kind's programs,
 * each attached to the cgroup of id cgroup_id: only then does it count as applied (one left loaded
 * but unattached by an interrupted apply must not pass for enforcement, nor one of the name the
 * cgroup's own processes made: with no program at all, every program of it is attached). 0 if so,
 * -EEXIST with *error if not.
 */
static int existing_applied(const struct net_kind *kind, const char *name, const char *text,
			    uint64_t cgroup_id, char **error)
{
	_cleanup_json_ json_object *o = NULL;
	json_object *obj, *progs, *links;
	char target[64];

	snprintf(target, sizeof(target), "cgroup id %" PRIu64, cgroup_id);
	o = json_tokener_parse(text);
	if (!o || !json_object_object_get_ex(o, "object", &obj) ||
	    !json_object_object_get_ex(obj, "programs", &progs) ||
	    !json_object_object_get_ex(obj, "links", &links))
		return error_setf(error, -EBADMSG, "showing %s: the broker's answer is malformed",
				  name);
	if (!json_object_is_type(progs, json_type_array) ||
	    !json_object_is_type(links, json_type_array) || !kind_programs(kind, progs))
		return error_setf(error, -EEXIST,
				  "%s exists but is not the system object %s (its programs are not "
				  "%s and %s): remove it first",
				  name, kind->system_object, kind->programs[0], kind->programs[1]);
	for (size_t i = 0; i < json_object_array_length(progs); i++) {
		const char *prog = json_object_get_string(
			json_object_object_get(json_object_array_get_idx(progs, i), "name"));
		bool found = false;

		for (size_t j = 0; j < json_object_array_length(links) && !found; j++) {
			json_object *l = json_object_array_get_idx(links, j);
			const char *p =
				json_object_get_string(json_object_object_get(l, "program"));
			const char *t = json_object_get_string(json_object_object_get(l, "target"));

			/*
			 * Pinned and protected, as only we attach from outside: an object of
			 * the tag the cgroup's own processes made (and attached unprotected,
			 * with empty maps) must not pass for the rules.
			 */
			found = p && prog && t && strcmp(p, prog) == 0 && strcmp(t, target) == 0 &&
				json_object_get_boolean(json_object_object_get(l, "pinned")) &&
				json_object_get_boolean(json_object_object_get(l, "protected"));
		}
		if (!found)
			return error_setf(error, -EEXIST,
					  "%s exists but its program %s is not attached to this "
					  "cgroup (id %" PRIu64
					  ") pinned and protected: remove it first",
					  name, prog ?: "?", cgroup_id);
	}
	return 0;
}

/* Load kind as name, fill it, attach its programs to cgroup_fd pinned and protected. */
static int apply_one(struct bpfbroker *b, const struct net_kind *kind, const char *name,
		     const struct net_settings *s, int cgroup_fd, char **error)
{
	struct bpfbroker_load_opts o = {.sz = sizeof(o), .name = name};
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	int k = bpfbroker_load_system(b, kind->system_object, &o, &r, &e);

	if (k < 0)
		return broker_error(error, k, e, "loading", kind->system_object);
	k = kind->fill(s, r, error);
	for (size_t i = 0; k == 0 && i < r->n_programs; i++) {
		const struct bpfbroker_program *p = bpfbroker_result_program_at(r, i);
		struct bpfbroker_attach_opts a = {
			.sz = sizeof(a),
			.object = name,
			.program = p->name,
			.target_type = "cgroup",
			.cgroup_fd = cgroup_fd,
			.pin = true,
			/* so that the cgroup's own processes (the user's uid too) cannot undo it */
			.protect = true,
			/*
			 * The program we loaded and whose maps we filled and sealed, not one
			 * of another object a process of the cgroup (our uid) loaded under
			 * the name after unloading ours: until our first protected link
			 * exists, it may. The broker checks it under the object's lock.
			 */
			.program_id = p->id,
		};

		k = bpfbroker_attach(b, &a, NULL, NULL, &e);
		if (k < 0)
			broker_error(error, k, e, "attaching", p->name);
	}
	bpfbroker_result_free(r);
	return k;
}

/* Unload name; not there is 0. */
static int unload(struct bpfbroker *b, const char *name, char **error)
{
	struct bpfbroker_error *e = NULL;
	int k = bpfbroker_unload(b, name, &e);

	if (k < 0 && e && strcmp(e->code, "not-found") == 0) {
		bpfbroker_error_free(e);
		return 0;
	}
	return k < 0 ? broker_error(error, k, e, "unloading", name) : 0;
}

int net_enforce_apply(struct bpfbroker *b, const char *tag, const struct net_settings *s,
		      const char *cgroup_path, char **error)
{
	_cleanup_close_ int cg = -EBADF;
	bool loaded[ARRAY_SIZE(kinds)] = {};
	struct stat st;
	char name[NET_ENFORCE_NAME_MAX];
	int k = 0;

	if (!net_enforce_tag_is_valid(tag))
		return error_setf(error, -EINVAL, "invalid tag \"%s\": 1 to %d of A-Z a-z 0-9 _ -",
				  tag ?: "", NET_ENFORCE_TAG_MAX);
	cg = open(cgroup_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg < 0 || fstat(cg, &st) < 0)
		return error_setf(error, -errno, "cannot open cgroup %s: %m", cgroup_path);
	for (size_t i = 0; k == 0 && i < ARRAY_SIZE(kinds); i++) {
		struct bpfbroker_error *e = NULL;
		char *text = NULL;

		if (!kinds[i].want(s))
			continue;
		net_enforce_object_name(tag, i, name);
		/* Already there: applied before (idempotent), if attached here. */
		k = bpfbroker_show(b, name, &text, &e);
		if (k == 0) {
			k = existing_applied(&kinds[i], name, text, (uint64_t)st.st_ino, error);
			free(text);
			continue;
		}
		if (!e || strcmp(e->code, "not-found") != 0) {
			k = broker_error(error, k, e, "showing", name);
			break;
		}
		bpfbroker_error_free(e);
		loaded[i] = true;
		k = apply_one(b, &kinds[i], name, s, cg, error);
	}
	if (k == 0)
		return 0;
	/* All or nothing: what this call loaded goes again (its links with it). */
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (loaded[i]) {
			net_enforce_object_name(tag, i, name);
			(void)unload(b, name, NULL);
		}
	return k;
}

int net_enforce_remove(struct bpfbroker *b, const char *tag, char **error)
{
	char name[NET_ENFORCE_NAME_MAX];
	int r = 0;

	if (!net_enforce_tag_is_valid(tag))
		return error_setf(error, -EINVAL, "invalid tag \"%s\"", tag ?: "");
	/* Every one, even after a failure: remove as much as can be removed. */
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		int k;

		net_enforce_object_name(tag, i, name);
		k = unload(b, name, r == 0 ? error : NULL);
		if (k < 0 && r == 0)
			r = k;
	}
	return r;
}

int net_enforce_accounting(struct bpfbroker *b, const char *tag, struct net_enforce_acct *ret,
			   char **error)
{
	struct bpfbroker_map_handle *h = NULL;
	struct bpfbroker_error *e = NULL;
	struct net_ip_acct v[NET_IP_DIRECTIONS];
	char name[NET_ENFORCE_NAME_MAX];
	int k;

	if (!net_enforce_tag_is_valid(tag))
		return error_setf(error, -EINVAL, "invalid tag \"%s\"", tag ?: "");
	net_enforce_object_name(tag, NET_ENFORCE_IP, name);
	/* A map handle: the fd where bpf() works for us, the broker where it does not. */
	k = bpfbroker_map_open(b, name, NET_MAP_IP_ACCT, &h, &e);
	if (k < 0) {
		if (k == -ENOENT || (e && strcmp(e->code, "not-found") == 0)) {
			bpfbroker_error_free(e);
			return error_setf(error, -ENOENT, "%s: no such object", name);
		}
		return broker_error(error, k, e, "reading", name);
	}
	for (uint32_t dir = 0; k == 0 && dir < NET_IP_DIRECTIONS; dir++) {
		k = bpfbroker_map_lookup_elem(h, &dir, &v[dir], &e);
		if (k < 0)
			broker_error(error, k, e, "reading the accounting of", name);
	}
	bpfbroker_map_close(h);
	if (k < 0)
		return k;
	*ret = (struct net_enforce_acct){
		.in_bytes = v[NET_IP_INGRESS].bytes,
		.in_packets = v[NET_IP_INGRESS].packets,
		.out_bytes = v[NET_IP_EGRESS].bytes,
		.out_packets = v[NET_IP_EGRESS].packets,
	};
	return 0;
}
