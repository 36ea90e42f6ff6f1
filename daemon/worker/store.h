/* SPDX-License-Identifier: MIT */
/*
 * The store of named objects: what the broker keeps loaded for its users.
 *
 *   <pin_root>/<uid>/<NAME>/p<i>, m<i>   pins of program i and map i
 *   <pin_root>/<uid>/<NAME>/l<ID>        a pinned link (attachment) with kernel id ID
 *   <pin_root>/<uid>/-pinned/<MAP>       maps the object pins by name (LIBBPF_PIN_BY_NAME)
 *   <state_dir>/<uid>/<NAME>.json        metadata: the commit record of a named object
 *   <state_dir>/<uid>/lock               flock(2) serialising one user's changes
 *   <state_dir>/<uid>/ledger             the user's live kernel objects, for quotas (ledger.h)
 *
 * Every directory is root's, mode 0700: users reach pins only through the
 * broker. bpffs refuses '.' in names, which is why pins have no extension and
 * object names can't collide with "-pinned" (names never start with '-').
 *
 * Crash safety rests on one ordering. A load pins first and writes the
 * metadata last (write to a temporary file, fsync, rename): an object exists
 * exactly when its metadata does. An unload removes the metadata first, then
 * detaches and unpins. A pin directory without metadata is therefore always
 * debris of an interrupted load or unload, and store_sweep_user() removes it
 * (at startup for everyone, before each named load of that user, and right
 * after a worker died in the middle of a change of theirs, worker.h).
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct store_config {
	const char *pin_root; /* bpffs directory the broker owns */
	const char *state_dir; /* metadata directory the broker owns */
	const char *fault; /* testing: crash the daemon at this point (see store_fault()) */
	pid_t daemon_pid; /* whom store_fault() kills: workers are the daemon's grandchildren */
};

/* Take the user's lock (creating the user's state directory). Returns the fd holding it. */
int store_lock_user(const struct store_config *c, uid_t uid);

int store_object_dir(const struct store_config *c, uid_t uid, const char *name, char *buf,
		     size_t size);
/* The user's by-name pin directory, created if missing (with the user's directory). */
int store_pinned_dir(const struct store_config *c, uid_t uid, char *buf, size_t size);
/* Create <pin_root>/<uid>/<NAME>/ (EEXIST if it exists). */
int store_object_dir_create(const struct store_config *c, uid_t uid, const char *name);

/* Metadata: -ENOENT when the object doesn't exist. */
int store_meta_read(const struct store_config *c, uid_t uid, const char *name, json_object **ret);
int store_meta_write(const struct store_config *c, uid_t uid, const char *name, json_object *meta);
int store_meta_remove(const struct store_config *c, uid_t uid, const char *name);

/* Names of a user's objects, sorted. */
int store_list_names(const struct store_config *c, uid_t uid, char ***ret, size_t *ret_n);
/* Users who have a state directory, sorted. */
int store_list_owners(const struct store_config *c, uid_t **ret, size_t *ret_n);
/* Whether a sorted listing of names holds name (binary search). */
bool store_names_have(char *const *names, size_t n, const char *name);
void store_names_free(char **names, size_t n);

/* How many named objects a user has (metadata files); the kernel objects are the ledger's. */
int store_count_objects(const struct store_config *c, uid_t uid, uint64_t *ret);

/*
 * Kernel ids of the programs pinned in an object directory, and the links of
 * those programs (wherever they are held). Needs CAP_SYS_ADMIN effective for
 * the link walk (BPF_LINK_GET_FD_BY_ID).
 */
int store_object_prog_ids(const char *dir, uint32_t **ret, size_t *ret_n);

/*
 * Detach every link of the object's programs, remove every pin and the
 * directory. Works on half-made directories too. Raises what it needs.
 */
int store_object_remove_pins(const struct store_config *c, uid_t uid, const char *name);

/*
 * Remove the user's pin directories that have no metadata, with an audit
 * record (event "sweep") for each. Needs the user's lock.
 */
int store_sweep_user(const struct store_config *c, uid_t uid);
/* The same, and the names of the user's objects as store_list_names() gives them. */
int store_sweep_user_list(const struct store_config *c, uid_t uid, char ***ret, size_t *ret_n);
/* At startup: sweep every user, drop leftover temporary metadata. */
int store_recover(const struct store_config *c);

/*
 * Fault injection for the tests: when the daemon was started with
 * --fault-inject=POINT and point is POINT, kill the daemon and this worker on
 * the spot, as a crash would; with stall:POINT, stop this worker there until
 * the event loop kills it at its time limit; with delay:POINT, pause there
 * for half a second.
 */
void store_fault(const struct store_config *c, const char *point);
