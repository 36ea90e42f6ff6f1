/* SPDX-License-Identifier: MIT */
/* The load job's state, and the steps of the load pipeline (load.c) kept in files of their own. */
#pragma once

#include <bpf/libbpf.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "identity.h"
#include "inspect.h"
#include "ledger.h"
#include "load.h"
#include "policy/policy.h"
#include "policy/verdict.h"
#include "policy/vetted.h"
#include "proto/proto.h"
#include "reply.h"
#include "setup.h"

struct job {
	const struct policy *policy;
	const struct load_config *cfg;
	struct policy_identity id;
	struct identity ident;
	int lock; /* the user's store lock while a load counts against quotas */
	struct ledger ledger; /* what the broker made for the user, still alive (ledger.h) */
	bool have_ledger;
	bool *pin_created; /* per map: pinned by name by this load (no pin existed) */
	struct proto_load_request req;
	/* load_insns: raw instructions instead of an ELF object (insns.h); no obj then */
	bool raw;
	struct proto_insns_request insns;
	int raw_prog_fd;
	struct policy_grant *grant;
	uint8_t *object;
	size_t object_size;
	bool object_mapped; /* a mapping of the client's sealed memfd, not a copy */
	struct bpf_object *obj;
	struct elf_calls *calls;
	struct object_desc desc;
	struct object_handles handles; /* libbpf's program and map of each desc index */
	struct policy_verdict verdict;
	bool have_verdict;
	char pin_dir[PATH_MAX];
	char *verifier_log;
	/*
	 * Could the programs read kernel pointers anyway (loaded with
	 * CAP_PERFMON, or read_kernel_memory granted)? Otherwise kernel
	 * addresses are taken out of what goes back (kaddr.h).
	 */
	bool kernel_addresses_visible;
	struct setup setup; /* map_defs, inner_maps, attach_targets (setup.h) */
	/*
	 * What the kernel says of each program loaded and map made (by desc
	 * index; zero where none), read once after the load for the ledger,
	 * the hand-out and the metadata.
	 */
	struct bpf_prog_info *prog_info;
	struct bpf_map_info *map_info;
	/* A vetted object's load: "system:NAME" or its granted "sha256:..."; "" otherwise. */
	char vetted[80];
	char vetted_digest[POLICY_DIGEST_SIZE]; /* the object's, when vetted */
};

/* load.c: the job's own lookups. */
int job_map_index(const struct job *j, const char *name);
/* Whether some grant in "maps" could give want for map i, whose type may cap it. */
bool job_access_possible(const struct job *j, size_t i, enum map_access want);
/* The loaded fd of desc.programs[i], or < 0 (none). */
int job_prog_fd(const struct job *j, size_t i);
/* The created fd of desc.maps[i], or < 0 (not created: no loaded program needs it). */
int job_map_fd(const struct job *j, size_t i);

/*
 * The steps, in the order job_run() takes them. Each returns 0 to go on,
 * > 0 when it answered the client (reply_error()), or -errno (reply.h).
 */
/* loadobject.c */
void object_release(uint8_t *object, size_t size, bool mapped);
int job_read_object(struct job *j, int fd, struct reply *r);
/* loadvetted.c: the object from the client's fd or the system objects, and a vetted grant. */
int job_take_object(struct job *j, const int *fds, struct reply *r);
/* loadconfig.c */
int job_open(struct job *j, struct reply *r);
int job_configure(struct job *j, struct reply *r);
/* loaddescribe.c: the result, and its "programs" and "maps" arrays (extra references). */
json_object *describe(const struct job *j, json_object **ret_progs, json_object **ret_maps);
/* loadquota.c */
int job_check_quotas(struct job *j, struct reply *r);
int job_record(struct job *j, struct reply *r);
/* loadpins.c */
bool pinned_map_exists(const struct job *j, const char *name);
int job_prepare_pins(struct job *j, struct reply *r);
void job_unpin_new(struct job *j);
/* loadcaps.c: raised into the effective set for the kernel's load. */
int job_raise_caps(struct job *j);
/* verifierlog.c */
int job_add_libbpf_log(struct job *j, struct reply *r);
int job_load_failed(struct job *j, struct reply *r, int k);
/* loadcheck.c */
int job_post_load_check(struct job *j, struct reply *r);
/* loadhandout.c */
int job_read_info(struct job *j, struct reply *r);
int job_freeze_maps(struct job *j, struct reply *r);
int job_hand_out(struct job *j, struct reply *r, json_object *progs, json_object *maps);
/* loadcommit.c */
int job_check_shares(struct job *j, struct reply *r);
int job_commit_named(struct job *j, struct reply *r, json_object *result);
/* loadaudit.c: kept for load_audit_flush() (load.h). */
void job_audit(struct job *j, struct reply *r);
