/* SPDX-License-Identifier: MIT */
/*
 * libbpfbroker: load BPF objects through bpfbrokerd and get back fds with the
 * access the broker's policy grants you.
 *
 * Objects loaded with a name (bpfbroker_load_opts.name) stay loaded after the
 * connection closes. Their owner can list, show, unload, attach, detach and
 * test-run them, get fresh fds for them later (bpfbroker_fds), and share maps
 * with other users and groups (see proto/NAMED.md). An object is referred to
 * as "NAME" (your own) or "OWNER/NAME" (OWNER a user name or uid).
 *
 *	struct bpfbroker *b;
 *	struct bpfbroker_result *res;
 *	struct bpfbroker_error *err = NULL;
 *	int k;
 *
 *	if (bpfbroker_connect(NULL, &b) < 0) ...
 *	k = bpfbroker_load_file(b, "prog.bpf.o", NULL, &res, &err);
 *	if (k < 0)
 *		fprintf(stderr, "%s\n", err ? err->message : strerror(-k));
 *	int fd = bpfbroker_result_take_map_fd(res, "counts");
 *
 *	struct bpfbroker_load_opts o = {.sz = sizeof(o), .name = "counter"};
 *	bpfbroker_load_file(b, "prog.bpf.o", &o, &res, &err);  // stays loaded
 *	bpfbroker_fds(b, "alice/counter", &res, &err);         // later, or by others
 *
 * All functions return 0 (or a documented non-negative value) or a negative
 * errno; output parameters are written only on success, except *err, which
 * is written exactly when the broker answered with an error (then the return
 * value is its errno, negated).
 *
 * ABI (client/ABI.md has the whole policy). The structs come in two kinds,
 * so that a new field never changes the size of anything one side indexes:
 *  - The library's (bpfbroker_result, _program, _map, _error, _map_info,
 *    _test_run_result): allocated by the library and handed out by pointer,
 *    one at a time (bpfbroker_result_program_at(), never an array). Fields
 *    are only ever appended. Don't allocate, copy or take sizeof of them.
 *  - The caller's: opts structs start with sz (= sizeof) and may grow, as
 *    libbpf's; the elements of the opts' arrays (bpfbroker_global, ...,
 *    marked "Frozen") are indexed by the library with its own sizeof, so
 *    they never change: a new per-element attribute comes as a new array
 *    next to theirs in the opts, as libbpf's kprobe_multi opts did cookies.
 * Arrays of pointers (reasons, helpers) and of numbers are safe to hand out.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bpfbroker;

enum bpfbroker_access {
	BPFBROKER_ACCESS_NONE = 0,
	BPFBROKER_ACCESS_RO = 1,
	BPFBROKER_ACCESS_WO = 2,
	BPFBROKER_ACCESS_RW = 3,
	/* Ring buffers only: an fd to consume the records with (bpfbroker_ringbuf_new). */
	BPFBROKER_ACCESS_CONSUME = 4,
};

/* One program of a result (bpfbroker_result_program_at()); fields are only appended. */
struct bpfbroker_program {
	const char *name;
	const char *type; /* libbpf name, e.g. "socket_filter" */
	const char *attach_type; /* or NULL */
	bool loaded;
	uint32_t id; /* kernel id, 0 if not loaded */
	const char *tag; /* hex, or NULL */
	uint32_t insns;
	int fd; /* -1 unless the policy grants the fd (and with it the right to attach) */
	const char *verdict; /* "allowed" or the reason it is denied */
	const char *const *helpers; /* NULL-terminated names */
	const char *const *kfuncs; /* NULL-terminated names */
};

/* One map of a result (bpfbroker_result_map_at()); fields are only appended. */
struct bpfbroker_map {
	const char *name;
	const char *type;
	uint32_t id;
	uint32_t key_size, value_size, max_entries;
	bool pinned;
	/*
	 * What the broker grants you. For your own maps fd carries it. For
	 * other users' maps (bpfbroker_fds of OWNER/NAME) fd is read-only or
	 * absent: fd_access says which. What access allows beyond it goes
	 * through the broker (bpfbroker_map_open() handles do that for you).
	 */
	enum bpfbroker_access access;
	int fd; /* -1: none */
	const char *verdict;
	/* Type ids in bpfbroker_result.btf_fd's BTF (bpfbroker_fds only); 0: none. */
	uint32_t btf_key_type_id, btf_value_type_id;
	uint32_t map_flags; /* BPF_F_MMAPABLE (1 << 10) and friends */
	bool frozen; /* mmapable arrays: no fd writes it from user space (load_opts.freeze) */
	enum bpfbroker_access fd_access; /* what fd carries; NONE: fd is -1 */
};

struct bpfbroker_result {
	bool allowed; /* check: whether the broker would load it; load: always true */
	size_t n_programs; /* bpfbroker_result_program_at(r, 0 .. n_programs - 1) */
	size_t n_maps; /* bpfbroker_result_map_at(r, 0 .. n_maps - 1) */
	const char *const *reasons; /* NULL-terminated denial reasons (check) */
	const char *json; /* the broker's reply, as JSON text */
	const char *name; /* named objects: the object's name; else NULL */
	/*
	 * The object's BTF (bpfbroker_fds only, when the broker sends it), for
	 * reading type information with BPF_OBJ_GET_INFO_BY_FD; -1 if none.
	 * Owned by the result and closed by bpfbroker_result_free().
	 */
	int btf_fd;
	/* Parallel to reasons: each one's policy key, "" where none (see bpfbroker_error). */
	const char *const *reason_keys;
};

struct bpfbroker_error {
	const char *code; /* e.g. "policy-denied", "load-failed" (see PROTOCOL.md) */
	int err; /* positive errno */
	const char *message; /* one sentence */
	const char *verifier_log; /* or NULL */
	const char *const *reasons; /* NULL-terminated, or NULL */
	/* libbpf's whole log (warnings and notes), if libbpf_log was asked for, or NULL */
	const char *libbpf_log;
	/*
	 * Parallel to reasons (NULL exactly when reasons is): the policy key
	 * that would have to change for each, as policy/POLICY.md spells it:
	 * a limit ("max_map_entries"), a boolean ("pinning"), "maps" for map
	 * access, or a list and the entry it lacks ("helper_classes:
	 * read_kernel_memory", "program_types: kprobe"); "" where no policy
	 * can allow it. Each reason's text names its key too.
	 */
	const char *const *reason_keys;
};

/* Frozen (an element of load_opts' array; see ABI above). */
struct bpfbroker_global {
	const char *name;
	const void *value;
	size_t size;
};

/* Frozen (an element of load_opts' array; see ABI above). */
struct bpfbroker_map_size {
	const char *name;
	uint32_t max_entries;
};

/* Frozen (an element of load_opts' array; see ABI above). */
struct bpfbroker_program_select {
	const char *name;
	const char *type; /* or NULL to keep what the section says */
	/*
	 * Or NULL. libbpf's name, this kernel's name of an attach type newer
	 * than libbpf 1.1.2 (e.g. "cgroup_unix_sendmsg") or its number ("50").
	 */
	const char *attach_type;
};

/*
 * A map's key and value size, set before load as bpf_map__set_key_size() and
 * bpf_map__set_value_size() would (a stack-trace map's depth, a perf event
 * array declared with its records' type). 0 keeps the object's size;
 * BPFBROKER_SIZE_ZERO sets it to 0 (a ring buffer declared with a value type,
 * which the kernel wants without one). Decided on as configured.
 */
#define BPFBROKER_SIZE_ZERO UINT32_MAX
/* Frozen (an element of load_opts' array; see ABI above). */
struct bpfbroker_map_def {
	const char *name;
	uint32_t key_size;
	uint32_t value_size;
};

/*
 * The inner map of a map of maps the object declares without an inner
 * template (no __array(values, ...)), as bpf_map__set_inner_map_fd() would
 * give it: the broker creates it, for the load only, under the policy as any
 * map (its type granted, its entries and memory within the limits). Frozen
 * (an element of load_opts' array; see ABI above).
 */
struct bpfbroker_inner_map {
	const char *outer; /* the map of maps */
	const char *type; /* libbpf map type name, e.g. "array" */
	uint32_t key_size, value_size, max_entries;
	/* BPF_F_* flags to create it with, e.g. BPF_F_NO_PREALLOC for an "lpm_trie"; 0: none */
	uint32_t map_flags;
};

/*
 * A program's BTF attach target in the kernel, as
 * bpf_program__set_attach_target(prog, 0, target) would set it: tracing
 * (fentry, fexit, tp_btf, ...) and lsm programs only; 1-128 of [A-Za-z0-9_.].
 * Frozen (an element of load_opts' array; see ABI above).
 */
struct bpfbroker_attach_target {
	const char *program;
	const char *target;
};

/*
 * Grant one map of a named object to a user or a group (exactly one of
 * them). Frozen (an element of load_opts' array; see ABI above).
 */
struct bpfbroker_share {
	const char *map;
	const char *user; /* user name or decimal uid, or NULL */
	const char *group; /* group name or decimal gid, or NULL */
	enum bpfbroker_access access; /* at most the owner's own access; not NONE */
};

struct bpfbroker_load_opts {
	/* sizeof(struct bpfbroker_load_opts), for compatibility: fields beyond sz count as 0 */
	size_t sz;
	const char *object_name;
	bool check_only; /* ask for the verdict, load nothing */
	const struct bpfbroker_global *globals;
	size_t n_globals;
	const struct bpfbroker_map_size *map_sizes;
	size_t n_map_sizes;
	const struct bpfbroker_program_select *programs; /* if given, only these load */
	size_t n_programs;
	/* Keep the object loaded under this name (1-64 of [A-Za-z0-9_-], not starting with '-'). */
	const char *name;
	const struct bpfbroker_share *shares; /* needs name */
	size_t n_shares;
	/*
	 * Maps to freeze once loaded (BPF_MAP_FREEZE): from then on no fd writes
	 * them from user space, yours included; the programs still do. A frozen
	 * BPF_F_MMAPABLE array granted ro comes as an fd bpfbroker_map_mmap() can
	 * map (the kernel maps no fd opened read-only).
	 */
	const char *const *freeze;
	size_t n_freeze;
	/* Setup real loaders do between open and load (see the structs above). */
	const struct bpfbroker_map_def *map_defs;
	size_t n_map_defs;
	const struct bpfbroker_inner_map *inner_maps;
	size_t n_inner_maps;
	const struct bpfbroker_attach_target *attach_targets;
	size_t n_attach_targets;
	/* On failure, return libbpf's whole log in bpfbroker_error.libbpf_log. */
	bool libbpf_log;
};

/*
 * One program from raw instructions (bpfbroker_load_insns), as container
 * runtimes generate cgroup device programs. Decided by the same policy as
 * objects; the instructions may not reference maps (see proto/PROTOCOL.md).
 */
struct bpfbroker_insns_opts {
	size_t sz; /* sizeof(struct bpfbroker_insns_opts) */
	const char *prog_type; /* required: libbpf name, e.g. "cgroup_device" */
	/*
	 * Expected attach type, or NULL: libbpf's name (e.g. "cgroup_device"), this
	 * kernel's name of one libbpf does not know (e.g. "cgroup_unix_sendmsg"), or
	 * its decimal number ("50"), as in bpfbroker_program_select.
	 */
	const char *attach_type;
	const char *license; /* required, e.g. "GPL" (GPL-only helpers need a GPL-compatible one) */
	const char *prog_name; /* 1-15 of [A-Za-z0-9_.], or NULL for "prog" */
	/* Keep the program loaded under this name, for brokered attach (see name in load_opts). */
	const char *name;
	bool check_only; /* ask for the verdict, load nothing */
};

struct bpfbroker_list_opts {
	size_t sz; /* sizeof(struct bpfbroker_list_opts) */
	bool all; /* every user's objects (root or the broker's admin group) */
	const char *user; /* this user's objects (name or uid; root or admin group) */
	bool shared; /* objects of others that are shared with me (not with user) */
};

struct bpfbroker_attach_opts {
	size_t sz; /* sizeof(struct bpfbroker_attach_opts) */
	const char *object; /* NAME: only the owner may attach */
	const char *program;
	/* "cgroup", "raw_tracepoint", "tracepoint", "xdp", "tc" or "uprobe" */
	const char *target_type;
	int cgroup_fd; /* cgroup: the cgroup v2 directory, opened O_RDONLY|O_DIRECTORY */
	/*
	 * cgroup: the cgroup attach type (libbpf's name, e.g. "cgroup_inet_egress", this
	 * kernel's name of a newer one, e.g. "cgroup_unix_sendmsg", or its decimal
	 * number; the policy must grant it), or NULL for the program's own; tc: "ingress" (also
	 * NULL) or "egress"; others: NULL.
	 */
	const char *attach_type;
	/*
	 * tracepoint: "CATEGORY:NAME"; raw_tracepoint: "NAME"; xdp, tc: the interface
	 * name, in the caller's network namespace; uprobe: the function's symbol, or
	 * NULL for a probe at file offset uprobe_offset; cgroup: NULL.
	 */
	const char *name;
	/*
	 * Keep the link until detach/unload. Required for tracepoint,
	 * raw_tracepoint and uprobe (the kernel cannot detach those links from a
	 * held fd); cgroup, xdp and tc links may instead be held as *ret_link_fd.
	 */
	bool pin;
	/*
	 * uprobe: the ELF executable or shared object to probe, opened by you
	 * (O_RDONLY|O_CLOEXEC), and a pidfd (pidfd_open()) of the process: one of
	 * yours, running as you with no_new_privs, no capabilities and dumpable.
	 * The probe fires only in that process (and follows it across exec).
	 */
	int binary_fd;
	int pidfd;
	uint64_t uprobe_offset; /* bytes into the function, or the file offset without name */
	bool retprobe; /* fire on return from the function instead of on entry */
	/* USDT: the semaphore the kernel counts up while attached, by symbol or file offset */
	const char *semaphore;
	uint64_t semaphore_offset; /* 0: none */
	/*
	 * cgroup, with pin: the link confines the target cgroup's processes, so
	 * none of them (connecting from that cgroup or one below it, a
	 * container's own processes running as your uid included) may detach
	 * it, unload its object or change it; you still may from outside.
	 * Since 1.1 (a 1.0 library refuses it: -EINVAL).
	 */
	bool protect;
	/*
	 * Not 0: attach only if the program is the one of this kernel id (the load
	 * result's program id, at most UINT32_MAX), checked under the object's
	 * lock: the name may have been unloaded and loaded again by another
	 * process of your uid since your load (-EEXIST, code "exists", if so).
	 * Since 1.2 (a 1.1 library refuses it: -EINVAL). 64 bits wide so that it
	 * lies past 1.1's struct (whose tail padding it would otherwise take).
	 */
	uint64_t program_id;
};

#define BPFBROKER_TEST_RUN_MAX_DATA (16u * 1024)
#define BPFBROKER_TEST_RUN_MAX_CTX (4u * 1024)
#define BPFBROKER_TEST_RUN_MAX_REPEAT 1000000u

struct bpfbroker_test_run_opts {
	size_t sz; /* sizeof(struct bpfbroker_test_run_opts) */
	const char *object;
	const char *program;
	const void *data_in; /* up to BPFBROKER_TEST_RUN_MAX_DATA bytes */
	size_t data_in_size;
	const void *ctx_in; /* up to BPFBROKER_TEST_RUN_MAX_CTX bytes, or NULL */
	size_t ctx_in_size;
	uint32_t repeat; /* 0: the broker's default (1) */
};

struct bpfbroker_test_run_result {
	int64_t retval;
	uint64_t duration_ns; /* average per run */
	void *data_out; /* or NULL */
	size_t data_out_size;
};

/* Connect to path, or $BPFBROKER_SOCKET, or /run/bpfbroker/bpfbroker.sock. */
int bpfbroker_connect(const char *path, struct bpfbroker **ret);
void bpfbroker_close(struct bpfbroker *b);

/* Load (or check) an object from a file, from memory (sent as a sealed memfd), or from an fd. */
int bpfbroker_load_file(struct bpfbroker *b, const char *path,
			const struct bpfbroker_load_opts *opts, struct bpfbroker_result **ret,
			struct bpfbroker_error **err);
int bpfbroker_load_mem(struct bpfbroker *b, const void *buf, size_t size,
		       const struct bpfbroker_load_opts *opts, struct bpfbroker_result **ret,
		       struct bpfbroker_error **err);
int bpfbroker_load_fd(struct bpfbroker *b, int fd, const struct bpfbroker_load_opts *opts,
		      struct bpfbroker_result **ret, struct bpfbroker_error **err);
/*
 * Load (or check) the system object name, an object root installed for the broker
 * (/etc/bpfbroker/objects or the package's; see bpfbroker-policy(5), "Vetted objects"): the
 * broker reads it itself, checks it against its manifest's digest and decides with the grants
 * the manifest declares, if the policy grants you name ("objects"). opts as for any load
 * (opts->object_name names libbpf's object; default the system object's name). Since 1.1.
 */
int bpfbroker_load_system(struct bpfbroker *b, const char *name,
			  const struct bpfbroker_load_opts *opts, struct bpfbroker_result **ret,
			  struct bpfbroker_error **err);

/*
 * Load (or check) one program from insn_cnt raw struct bpf_insn (8 bytes
 * each; sent as a sealed memfd), or from an fd holding them (a regular file
 * or memfd). The result has one program and no maps; its fd only where the
 * policy hands out fds of that type.
 */
int bpfbroker_load_insns(struct bpfbroker *b, const void *insns, size_t insn_cnt,
			 const struct bpfbroker_insns_opts *opts, struct bpfbroker_result **ret,
			 struct bpfbroker_error **err);
int bpfbroker_load_insns_fd(struct bpfbroker *b, int fd, const struct bpfbroker_insns_opts *opts,
			    struct bpfbroker_result **ret, struct bpfbroker_error **err);

/* The caller's effective policy as JSON text (free() it). */
int bpfbroker_policy(struct bpfbroker *b, char **ret_json, struct bpfbroker_error **err);

/*
 * Named objects (proto/NAMED.md). "object" is "NAME" or "OWNER/NAME".
 * JSON texts are the reply's "result" object; free() them.
 */

/*
 * {"objects": [...]}: my objects, or per opts (NULL: my own), every page in
 * one text. The text is compact, the objects as the broker wrote them; what
 * the JSON says is the contract, not its whitespace (parse it).
 */
int bpfbroker_list(struct bpfbroker *b, const struct bpfbroker_list_opts *opts, char **ret_json,
		   struct bpfbroker_error **err);
/*
 * {"object": {...}}; "not-found" if there is none or I may not see it. Owners
 * and admins see everything; those a map is shared with see only the shared
 * maps (no programs, links, other maps or shares). The same holds for list.
 */
int bpfbroker_show(struct bpfbroker *b, const char *object, char **ret_json,
		   struct bpfbroker_error **err);
/* Detach every link, unpin everything. */
int bpfbroker_unload(struct bpfbroker *b, const char *object, struct bpfbroker_error **err);
/*
 * Put a map into a named object's map of maps at key. The kernel would take
 * any map fd there and let the object's programs write it, so the broker
 * hands out maps of maps read-only and inserts only a map_fd that allows
 * writing (a read-write fd); anything else is policy-denied.
 */
int bpfbroker_map_insert(struct bpfbroker *b, const char *object, const char *map, const void *key,
			 size_t key_size, int map_fd, struct bpfbroker_error **err);
/*
 * Fresh fds for a named object, with the access the policy grants now (for
 * others: only the maps shared with them, no program fds). Like a load
 * result, plus name and (if sent) btf_fd and the maps' BTF type ids.
 */
int bpfbroker_fds(struct bpfbroker *b, const char *object, struct bpfbroker_result **ret,
		  struct bpfbroker_error **err);
/*
 * Attach a program of my named object. *ret_link_fd gets the link fd (close
 * it to detach) when not pinned, else -1. ret_link_id and ret_link_fd may be NULL
 * (an unpinned link whose fd is not taken ends at once).
 */
int bpfbroker_attach(struct bpfbroker *b, const struct bpfbroker_attach_opts *opts,
		     uint32_t *ret_link_id, int *ret_link_fd, struct bpfbroker_error **err);
/*
 * Detach and unpin link link_id of the program, or with link_id 0 every pinned
 * link of it. *ret_ids (free() it) gets the ids detached; both may be NULL.
 */
int bpfbroker_detach(struct bpfbroker *b, const char *object, const char *program, uint32_t link_id,
		     uint32_t **ret_ids, size_t *ret_n, struct bpfbroker_error **err);
/* BPF_PROG_TEST_RUN on a program of my named object (test_run-only types too). */
int bpfbroker_test_run(struct bpfbroker *b, const struct bpfbroker_test_run_opts *opts,
		       struct bpfbroker_test_run_result **ret, struct bpfbroker_error **err);
void bpfbroker_test_run_result_free(struct bpfbroker_test_run_result *r);

/*
 * Map access on an fd the broker gave you; the kernel enforces the fd's mode
 * (-EPERM for an update through a read-only fd). Values of per-CPU maps hold
 * one round_up(value_size, 8) slot per possible CPU. key NULL in
 * bpfbroker_map_next_key: the first key. -ENOENT: no such (or no next) key.
 */
int bpfbroker_map_lookup(int map_fd, const void *key, void *value);
int bpfbroker_map_update(int map_fd, const void *key, const void *value,
			 uint64_t flags /* BPF_ANY, BPF_NOEXIST, BPF_EXIST */);
int bpfbroker_map_delete(int map_fd, const void *key);
int bpfbroker_map_next_key(int map_fd, const void *key, void *next_key);

/*
 * Maps of named objects, by name, through a handle. Operations use the map fd
 * the broker hands out where the kernel lets you use it, and otherwise ask
 * the broker to do them for you ("proxied", method "map" in proto/NAMED.md):
 * before Linux 6.5 a non-zero kernel.unprivileged_bpf_disabled makes every
 * bpf() call of a process without CAP_BPF fail with EPERM, even a lookup on an
 * fd it holds, and seccomp profiles may deny bpf() too. Either way the access
 * the policy grants decides (ro: lookup, next key, dump; wo: update, delete),
 * and a refusal is -EPERM. Keys and values are as the kernel takes them:
 * key_size bytes, value_bytes bytes (per-CPU maps: round_up(value_size, 8)
 * for each of n_cpus possible CPUs). -ENOENT: no such key (lookup, delete),
 * or no next key. A handle uses the connection it was opened on, which must
 * stay open while the handle is used.
 */
enum bpfbroker_map_path {
	/*
	 * The first map opened on a connection tries bpf() once (a call that
	 * fails with EBADF where bpf() is allowed) and, if bpf() is refused
	 * (EPERM, EACCES, ENOSYS), uses the broker for every map of the
	 * connection. A map whose fd the broker withholds (the bpffs guard, see
	 * SECURITY.md) is also proxied.
	 */
	BPFBROKER_MAP_PATH_AUTO = 0,
	BPFBROKER_MAP_PATH_DIRECT, /* always the fd */
	BPFBROKER_MAP_PATH_PROXY, /* always the broker (for diagnosis, or to hold no fds) */
};

struct bpfbroker_map_info {
	const char *name;
	const char *type; /* libbpf name, e.g. "hash" */
	uint32_t key_size, value_size, max_entries;
	enum bpfbroker_access access; /* decided when the handle was opened */
	uint32_t n_cpus; /* per-CPU maps: the possible CPUs; else 1 */
	size_t value_bytes; /* a value as lookups and updates take it */
	bool proxied; /* operations go through the broker */
	int fd; /* direct: the map fd (the handle owns it); proxied: -1 */
	uint32_t btf_key_type_id, btf_value_type_id; /* 0: none */
	/*
	 * Direct, but updates and deletes go through the broker: another user's
	 * map shared with you rw or wo, whose fd the broker hands out read-only
	 * or not at all (a writable fd could freeze the owner's map). Last, as
	 * every field added to a struct the library hands out.
	 */
	bool writes_proxied;
};

struct bpfbroker_map_handle;

/* For maps opened from now on (default BPFBROKER_MAP_PATH_AUTO). -EINVAL for another value. */
int bpfbroker_set_map_path(struct bpfbroker *b, enum bpfbroker_map_path path);
/*
 * Map "map" of named object "object" ("NAME" or "OWNER/NAME"). Direct: the fd
 * from bpfbroker_fds(), -ENOENT if the object has no such map visible to you,
 * -EACCES if you have no access to it. Proxied: the broker's answer
 * (not-found, policy-denied) in *err.
 */
int bpfbroker_map_open(struct bpfbroker *b, const char *object, const char *map,
		       struct bpfbroker_map_handle **ret, struct bpfbroker_error **err);
void bpfbroker_map_close(struct bpfbroker_map_handle *h);
const struct bpfbroker_map_info *bpfbroker_map_handle_info(const struct bpfbroker_map_handle *h);
int bpfbroker_map_lookup_elem(struct bpfbroker_map_handle *h, const void *key, void *value,
			      struct bpfbroker_error **err);
/* flags BPF_ANY (0), BPF_NOEXIST (1), BPF_EXIST (2); others only on the direct path. */
int bpfbroker_map_update_elem(struct bpfbroker_map_handle *h, const void *key, const void *value,
			      uint64_t flags, struct bpfbroker_error **err);
int bpfbroker_map_delete_elem(struct bpfbroker_map_handle *h, const void *key,
			      struct bpfbroker_error **err);
/* key NULL: the first key. */
int bpfbroker_map_get_next_key(struct bpfbroker_map_handle *h, const void *key, void *next_key,
			       struct bpfbroker_error **err);
/*
 * One page of a dump: up to max entries after cursor (a key; NULL: from the
 * start), keys into keys (max * key_size bytes), values into values
 * (max * value_bytes). *ret_n gets the number of entries; *ret_done whether
 * the map has no more, else next_cursor (key_size bytes, may be cursor
 * itself) the cursor to continue with. A page may hold fewer than max
 * entries before the end (the broker bounds its replies). Like any dump by
 * next key, a map changed meanwhile may show an entry twice or miss one.
 */
int bpfbroker_map_dump(struct bpfbroker_map_handle *h, const void *cursor, void *keys, void *values,
		       uint32_t max, uint32_t *ret_n, void *next_cursor, bool *ret_done,
		       struct bpfbroker_error **err);
/*
 * The object's BTF as raw bytes (free() them), for btf__new() and the map's
 * btf_key_type_id/btf_value_type_id: read from the BTF fd, or sent by the
 * broker. -ENOENT if the object has none.
 */
int bpfbroker_map_btf(struct bpfbroker_map_handle *h, void **ret_data, size_t *ret_size,
		      struct bpfbroker_error **err);

/*
 * Map a BPF_F_MMAPABLE array's values: element i at (char *)*ret_ptr + i *
 * round_up(value_size, 8), live (what the programs write shows at once, no
 * system call per read). rw: a shared writable mapping; ro: read-only, and
 * only if the map is frozen (bpfbroker_load_opts.freeze; else -EACCES: the
 * kernel maps no fd opened read-only). The length is what the kernel maps,
 * round_up(value_size, 8) * max_entries rounded up to the page size; unmap
 * with munmap(*ret_ptr, *ret_len). -EINVAL for other maps, -EACCES for wo or
 * none. The mapping outlives the fd and the result.
 */
int bpfbroker_map_mmap(const struct bpfbroker_map *map, void **ret_ptr, size_t *ret_len);

/*
 * Ring buffer consumer (BPF_MAP_TYPE_RINGBUF granted consume): mmap and
 * epoll on the fd, no bpf() system call. size is the map's max_entries (from
 * the broker's reply); the fd is duplicated, so the caller may close its own.
 * fn is called once per record the programs submitted (discarded ones are
 * skipped), with data valid only during the call; a negative return stops
 * consuming after that record and is returned by poll/consume.
 */
struct bpfbroker_ringbuf;
typedef int (*bpfbroker_ringbuf_fn)(void *ctx, const void *data, size_t size);

int bpfbroker_ringbuf_new(int map_fd, uint32_t size, bpfbroker_ringbuf_fn fn, void *ctx,
			  struct bpfbroker_ringbuf **ret);
/* Wait up to timeout_ms (-1: forever) for records, then consume: records consumed, or -errno. */
int bpfbroker_ringbuf_poll(struct bpfbroker_ringbuf *rb, int timeout_ms);
/* Consume what is there without waiting: records consumed, or -errno. */
int bpfbroker_ringbuf_consume(struct bpfbroker_ringbuf *rb);
/* An epoll fd that becomes readable when records wait, for the caller's own event loop. */
int bpfbroker_ringbuf_epoll_fd(const struct bpfbroker_ringbuf *rb);
void bpfbroker_ringbuf_free(struct bpfbroker_ringbuf *rb);

/* Closes every fd the result still owns. */
void bpfbroker_result_free(struct bpfbroker_result *r);
/* Take an fd out of the result (the result won't close it); -1 if there is none. */
int bpfbroker_result_take_map_fd(struct bpfbroker_result *r, const char *map_name);
int bpfbroker_result_take_prog_fd(struct bpfbroker_result *r, const char *prog_name);
/* By name; NULL if there is none. The result owns it. */
const struct bpfbroker_map *bpfbroker_result_map(const struct bpfbroker_result *r,
						 const char *name);
const struct bpfbroker_program *bpfbroker_result_program(const struct bpfbroker_result *r,
							 const char *name);
/* By position, in the broker's order: i < n_maps (n_programs), else NULL. */
const struct bpfbroker_map *bpfbroker_result_map_at(const struct bpfbroker_result *r, size_t i);
const struct bpfbroker_program *bpfbroker_result_program_at(const struct bpfbroker_result *r,
							    size_t i);
/*
 * Whether the program is among those the request selected
 * (bpfbroker_load_opts.programs; all when none were given); false for a
 * program left out, which is neither decided on nor loaded, or no such
 * program.
 */
bool bpfbroker_result_program_selected(const struct bpfbroker_result *r, const char *name);
/*
 * Whether the broker loads the program (a check: would load it): selected
 * and, as libbpf decides, to be loaded. False for a program left out, and
 * for libbpf's opt-in SEC("?...") programs when no programs were given.
 */
bool bpfbroker_result_program_autoload(const struct bpfbroker_result *r, const char *name);

void bpfbroker_error_free(struct bpfbroker_error *e);
const char *bpfbroker_access_to_string(enum bpfbroker_access a);

/* Low level: send a request and wait for the reply (JSON texts); for tools and tests. */
int bpfbroker_call_raw(struct bpfbroker *b, const char *request_json, const int *fds, size_t n_fds,
		       char **ret_reply_json, int **ret_fds, size_t *ret_n_fds);

#ifdef __cplusplus
}
#endif
