/* SPDX-License-Identifier: MIT */
/*
 * A load against the user's quotas: checked under the user's lock before anything is made,
 * recorded in the ledger after.
 */
#include "job.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "common/macro.h"
#include "denial.h"
#include "proto/proto.h"
#include "reply.h"
#include "store.h"

/* Over a quota: look again this many times, this far apart (job_check_quotas()). */
#define LEDGER_SETTLE_TRIES 5
#define LEDGER_SETTLE_USEC 20000

static int quota_error(struct reply *r, const char *limit, uint64_t have, uint64_t adds,
		       uint64_t max)
{
	char note[128];
	const char *key = policy_limit_key(limit, u64_add_sat(have, adds), note, sizeof(note));

	return denial_reply(r, PROTO_ERR_QUOTA, EDQUOT, "object", NULL, key,
			    "this load would exceed your quota %s: you have %llu, the load adds "
			    "%llu, your limit is %llu%s",
			    limit, (unsigned long long)have, (unsigned long long)adds,
			    (unsigned long long)max, note);
}

/*
 * A named load: the user's debris swept, and the name free. One listing of
 * the user's objects says both whether the name is taken and how many there
 * are; the metadata is read only for a name listed (it may not parse).
 */
static int job_read_names(struct job *j, uint64_t *ret_named, struct reply *r)
{
	const struct store_config *c = &j->cfg->store;
	char **names = NULL;
	size_t n = 0;
	bool listed;
	int k = store_sweep_user_list(c, j->id.uid, &names, &n);

	if (k < 0) /* the sweep failed: the load goes on without it, as before */
		k = store_list_names(c, j->id.uid, &names, &n);
	if (k < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, -k, "cannot read your objects: %s",
				   strerror(-k));
	listed = store_names_have(names, n, j->req.name);
	store_names_free(names, n);
	if (listed) {
		json_object *meta = NULL;

		k = store_meta_read(c, j->id.uid, j->req.name, &meta);
		json_object_put(meta);
		if (k == 0)
			return reply_error(r, PROTO_ERR_EXISTS, EEXIST,
					   "you already have an object named \"%s\"; unload it "
					   "first or choose another name",
					   j->req.name);
		if (k != -ENOENT)
			return reply_error(r, PROTO_ERR_INTERNAL, -k,
					   "cannot read your objects: %s", strerror(-k));
		n--; /* gone meanwhile: not counted */
	}
	*ret_named = n;
	return 0;
}

/*
 * What stays in the kernel because of this load is checked against the
 * user's quotas over everything the broker made for them that still lives
 * (ledger.h): named or not, pinned or held only by a client's fd. Every load
 * takes the user's lock, so that two loads can't both pass the same check.
 * Maps are estimated here (full, one copy per CPU) so nothing over the
 * quota is ever created; job_record() counts what the kernel reports.
 */
int job_check_quotas(struct job *j, struct reply *r)
{
	const struct policy_limits *l = &j->grant->limits;
	uint64_t progs = 0, memory = 0, threads = 0, named = 0;
	unsigned cpus = ledger_possible_cpus();
	struct ledger_usage u = {};
	int k;

	j->lock = store_lock_user(&j->cfg->store, j->id.uid);
	if (j->lock < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, -j->lock, "cannot lock your state: %s",
				   strerror(-j->lock));
	if (j->req.name) {
		k = job_read_names(j, &named, r);
		if (k != 0)
			return k;
		if (named + 1 > l->max_named_objects)
			return quota_error(r, "max_named_objects", named, 1, l->max_named_objects);
	}
	for (size_t i = 0; i < j->desc.n_programs; i++)
		progs += j->desc.programs[i].load;
	for (size_t i = 0; i < j->desc.n_maps; i++) {
		const struct object_map *m = &j->desc.maps[i];

		/* Its inner map lives only while the load runs, but then it takes memory too. */
		memory = u64_add_sat(memory, policy_map_inner_memory_estimate(m, cpus));
		/* A by-name pin that exists is reused: it is counted already. */
		if (m->pinned && pinned_map_exists(j, m->name))
			continue;
		memory = u64_add_sat(memory, policy_map_memory_estimate(m, cpus));
		if (m->map_type == BPF_MAP_TYPE_CPUMAP)
			threads += m->max_entries;
	}
	/*
	 * The ledger as recorded counts dead objects too (never too little): if
	 * that fits, nothing needs looking up. Over a quota, look up every
	 * object, and a few times more: the kernel frees what a client closed
	 * after an RCU grace period and a workqueue, so a client that closes its
	 * objects and loads at once would find them counted still.
	 */
	k = ledger_open(&j->cfg->store, j->id.uid, false, &j->ledger);
	if (k < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, -k,
				   "cannot count your kernel objects: %s", strerror(-k));
	j->have_ledger = true;
	/* Read once: under the user's lock the file can't change, only what still lives. */
	for (int tries = 0;; tries++) {
		k = tries > 0 ? ledger_prune_now(&j->ledger) : 0;
		if (k < 0)
			return reply_error(r, PROTO_ERR_INTERNAL, -k,
					   "cannot count your kernel objects: %s", strerror(-k));
		ledger_usage(&j->ledger, &u);
		if ((u.programs + progs <= l->max_loaded_programs &&
		     u64_add_sat(u.map_bytes, memory) <= l->max_map_memory_bytes &&
		     u.kernel_threads + threads <= l->max_kernel_threads) ||
		    tries >= LEDGER_SETTLE_TRIES || u.programs + u.maps == 0)
			break;
		if (tries > 0)
			usleep(LEDGER_SETTLE_USEC);
	}
	if (u.programs + progs > l->max_loaded_programs)
		return quota_error(r, "max_loaded_programs", u.programs, progs,
				   l->max_loaded_programs);
	if (u64_add_sat(u.map_bytes, memory) > l->max_map_memory_bytes)
		return quota_error(r, "max_map_memory_bytes", u.map_bytes, memory,
				   l->max_map_memory_bytes);
	if (u.kernel_threads + threads > l->max_kernel_threads)
		return quota_error(r, "max_kernel_threads", u.kernel_threads, threads,
				   l->max_kernel_threads);
	if (j->req.name) {
		k = job_check_shares(j, r);
		if (k != 0)
			return k;
	}
	return 0;
}

/*
 * Record what the load made in the ledger, charged as the kernel reports it
 * (fdinfo memlock, where that is more than the estimate), and check the
 * quota again with those figures. Written before anything is handed out or
 * committed, so a worker that dies from here on leaves no object uncounted
 * (a dead object's entry is dropped when the ledger is next read).
 */
int job_record(struct job *j, struct reply *r)
{
	const struct policy_limits *l = &j->grant->limits;
	struct ledger_usage u = {};
	int k = 0;

	for (size_t i = 0; i < j->desc.n_programs && k >= 0; i++) {
		int fd = j->desc.programs[i].load ? job_prog_fd(j, i) : -EBADF;

		if (fd >= 0)
			k = ledger_add_prog_info(&j->ledger, &j->prog_info[i]);
	}
	for (size_t i = 0; i < j->desc.n_maps && k >= 0; i++) {
		int fd = job_map_fd(j, i);

		if (fd >= 0)
			k = ledger_add_map_info(&j->ledger, fd, &j->map_info[i]);
	}
	/* The object's BTF stays in the kernel as long as a program or map refers to it. */
	if (k >= 0 && !j->raw && bpf_object__btf_fd(j->obj) >= 0)
		k = ledger_add_btf(&j->ledger, bpf_object__btf_fd(j->obj));
	if (k < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, -k,
				   "cannot count your kernel objects: %s", strerror(-k));
	ledger_usage(&j->ledger, &u);
	if (u.map_bytes > l->max_map_memory_bytes) {
		char note[128];
		const char *key =
			policy_limit_key("max_map_memory_bytes", u.map_bytes, note, sizeof(note));

		return denial_reply(
			r, PROTO_ERR_QUOTA, EDQUOT, "object", NULL, key,
			"this load would exceed your quota max_map_memory_bytes: with "
			"its maps as the kernel made them you would have %llu, your limit "
			"is %llu%s",
			(unsigned long long)u.map_bytes,
			(unsigned long long)l->max_map_memory_bytes, note);
	}
	/* On any refusal from here on, job_run() removes the maps pinned by name for this load. */
	k = ledger_commit(&j->ledger);
	if (k < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, -k,
				   "cannot record your kernel objects: %s", strerror(-k));
	return 0;
}
