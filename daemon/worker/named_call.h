/* SPDX-License-Identifier: MIT */
/*
 * What the files of the named-object methods share (named*.c, attach_*.c): the request, the
 * object, its links and the lookups between them.
 */
#pragma once

#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <bpf/bpf.h>

#include "common/json.h"
#include "common/macro.h"
#include "identity.h"
#include "load.h"
#include "policy/policy.h"
#include "proto/method.h"
#include "proto/proto.h"
#include "reply.h"
#include "uprobe.h"

/* tcx (Linux 6.6), newer than these headers. */
#define ATTACH_TCX_INGRESS 46
#define ATTACH_TCX_EGRESS 47
#define LINK_TYPE_TCX 11

/* One request: who asks, under which policy, with what. */
struct call {
	const struct policy *policy;
	const struct load_config *cfg;
	struct identity ident;
	struct policy_grant *grant; /* the caller's */
	json_object *job; /* the whole job, as the event loop sent it */
	json_object *params; /* as the client sent them: only the audit trail reads these */
	void *req; /* the params typed by the method table (proto/method.h) */
	const struct proto_method *req_method; /* which, once req is decoded */
	int *fds; /* the client's */
	size_t n_fds;
	/* The caller's network namespace, from the event loop (attach only), or -EBADF. */
	int netns;
	/* A uprobe target's /proc/PID/status (uprobe_status_open()), or -EBADF and why not. */
	int target_status;
	int target_status_error;
	char target_desc[160]; /* what an attach attached to, where params don't say it all */
	int lock;
	/* For list and show: the kernel's links, walked once per request, not per object. */
	struct link_entry *links;
	size_t n_links;
	bool have_links;
	/* And the last owner's name: one user database lookup per owner, not per object. */
	uid_t owner_name_uid;
	char owner_name[64];
};

/* A named object as the request sees it. */
struct object {
	uid_t owner;
	char name[PROTO_MAX_OBJECT_NAME + 1];
	json_object *meta;
	char dir[PATH_MAX];
	bool is_owner;
	/* The owner's current grant, for what they share (NULL for the owner's own calls). */
	struct policy_grant *owner_grant;
};

enum visibility {
	VISIBLE_OWNER, /* only the owner */
	VISIBLE_OWNER_OR_ADMIN,
	VISIBLE_SHARED, /* the owner, and those it is shared with (admins see, but get no maps) */
};

struct link_entry {
	uint32_t id, prog_id;
	struct bpf_link_info info;
	char tp_name[128];
	char uprobe[64]; /* a perf event link's uprobe, as uprobe_link_describe() says */
	bool pinned;
};

/*
 * What the caller may know of the object's types, and its maps' type ids
 * in that: for the owner the object's BTF as loaded (the bytes only if
 * want_bytes), for anyone else a BTF of only the key and value types of the
 * maps they have access to (btffilter.h): nothing of the other maps, the
 * programs, globals, source lines or file names the object's BTF holds.
 */
struct btf_view {
	void *data; /* NULL: none (or, for the owner, not asked for) */
	size_t size;
	uint32_t *ids; /* per map of the metadata: key and value type id; 0: none */
	size_t n_maps;
};

struct attach_req {
	const char *program;
	const char *type; /* target type */
	const char *name; /* tracepoint names */
	const char *attach_type;
	int64_t fd_index;
	bool pin;
	struct uprobe_request uprobe; /* type "uprobe" */
};

/* named_object.c */
void object_done(struct object *o);
void call_done(struct call *c);
bool call_is_admin(const struct call *c);
const char *meta_string(json_object *o, const char *key);
int64_t meta_int(json_object *o, const char *key);
json_object *meta_array(json_object *o, const char *key);
json_object *meta_find(json_object *meta, const char *key, const char *name);
int object_load(struct call *c, uid_t owner, const char *name, struct object *ret);
int object_open(struct call *c, struct reply *r, const char *ref, enum visibility want,
		struct object *ret);
int call_lock(struct call *c, struct reply *r, uid_t owner);
int pin_open(const struct object *o, json_object *entry);

/* named_access.c */
int meta_map_type(json_object *meta, const char *map);
bool meta_map_is_map_of_maps(json_object *meta, const char *map);
enum map_access share_access_for_type(unsigned granted, int type);
enum map_access object_map_access(const struct call *c, const struct object *o, const char *map);
enum map_access object_map_fd_access(const struct object *o, const char *map, enum map_access a);
bool object_visible_as_shared(const struct call *c, const struct object *o);

/* named_links.c */
int links_walk(struct link_entry **ret, size_t *ret_n);
int object_links_of(const struct object *o, const struct link_entry *all, size_t n_all,
		    struct link_entry **ret, size_t *ret_n);
int object_links(const struct object *o, struct link_entry **ret, size_t *ret_n);
json_object *link_json(const struct object *o, const struct link_entry *e);

/* named_list.c */
int named_list(struct call *c, struct reply *r);
int named_show(struct call *c, struct reply *r);

/* named_unload.c */
int named_unload(struct call *c, struct reply *r);

/* named_btf.c */
void btf_view_done(struct btf_view *v);
int object_btf_view(const struct call *c, const struct object *o, bool want_bytes,
		    struct btf_view *ret);
int btf_view_fd(struct call *c, const struct object *o, const struct btf_view *v);

/* named_fds.c */
int named_fds(struct call *c, struct reply *r);

/*
 * The attach targets: 0 with the new link's fd in *ret_link_fd, > 0 with
 * the refusal in r, or -errno (reply.h).
 */
/* attach_cgroup.c */
int attach_cgroup(struct call *c, struct reply *r, const struct attach_req *a, json_object *prog,
		  int prog_fd, int *ret_link_fd);

/* attach_tracepoint.c */
int attach_raw_tracepoint(struct call *c, struct reply *r, const struct attach_req *a,
			  json_object *prog, int prog_fd, int *ret_link_fd);
int attach_tracepoint(struct call *c, struct reply *r, const struct attach_req *a,
		      json_object *prog, int prog_fd, int *ret_link_fd);

/* attach_interface.c */
int attach_interface(struct call *c, struct reply *r, const struct attach_req *a, json_object *prog,
		     int prog_fd, bool tc, int *ret_link_fd);

/* named_attach.c */
int named_attach(struct call *c, struct reply *r);

/* named_detach.c */
int named_detach(struct call *c, struct reply *r);

/* named_testrun.c */
int named_test_run(struct call *c, struct reply *r);

/* named_map.c */
int named_map_insert(struct call *c, struct reply *r);
int named_map(struct call *c, struct reply *r);

/* named_policy.c */
int named_policy(struct call *c, struct reply *r);

/* named_protect.c */
bool object_link_is_protected(const struct object *o, uint32_t link_id);
/*
 * Record the new cgroup link (link_fd, made on cgroup_fd) as protected in the
 * object's metadata, re-read under the owner's lock. 0, > 0 refused, -errno.
 */
int protect_record(struct call *c, struct reply *r, const struct object *o, int link_fd,
		   int cgroup_fd);
/* Drop the records of the links whose ids the array holds (they were detached). */
int protect_forget(struct call *c, const struct object *o, json_object *link_ids);
/*
 * Does one of the object's protected links (of program prog_id, and only link
 * link_id; 0: any) confine the caller (its cgroup is the link's or below it,
 * or unknown)? 1 with the link and its cgroup id, 0 no (always for root and
 * the admin group), -errno.
 */
int protect_confines(struct call *c, const struct object *o, int64_t prog_id, int64_t link_id,
		     uint32_t *ret_link, uint64_t *ret_cgroup_id);
/*
 * May the caller do what (a method's name, for the message) to the object's
 * links (those of program prog_id, and only link link_id; 0: any)? 0 yes;
 * > 0 the refusal in r when one of them is protected and confines the
 * caller's cgroup (or the caller's cgroup is unknown); -errno.
 */
int protect_check(struct call *c, struct reply *r, const struct object *o, const char *what,
		  int64_t prog_id, int64_t link_id);
