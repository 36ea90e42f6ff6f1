/* SPDX-License-Identifier: MIT */
/*
 * The load job from request to reply: parse, read, open and inspect, decide, load with the
 * verifier's time bounded, record, hand out, commit.
 */
#include "load.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "common/macro.h"
#include "daemon/shared/caps.h"
#include "proto/method.h"
#include "denial.h"
#include "inspect.h"
#include "insns.h"
#include "job.h"
#include "libbpflog.h"
#include "policy/verdict.h"
#include "proto/proto.h"
#include "reply.h"
#include "setup.h"

static void job_done(struct job *j)
{
	if (j->have_verdict)
		policy_verdict_done(&j->verdict);
	object_desc_done(&j->desc);
	object_handles_done(&j->handles);
	elf_calls_free(j->calls);
	bpf_object__close(j->obj);
	policy_grant_free(j->grant);
	proto_load_request_done(&j->req);
	proto_insns_request_done(&j->insns);
	safe_close(j->raw_prog_fd);
	object_release(j->object, j->object_size, j->object_mapped);
	identity_done(&j->ident);
	safe_close(j->lock);
	if (j->have_ledger)
		ledger_done(&j->ledger);
	free(j->pin_created);
	free(j->verifier_log);
	setup_done(&j->setup);
	free(j->prog_info);
	free(j->map_info);
}

static int job_parse(struct job *j, struct jobmsg *job, json_object *params, size_t n_fds,
		     struct reply *r)
{
	_cleanup_free_ char *error = NULL;
	int k;

	identity_from_job(job, &j->ident);
	j->id = j->ident.id;
	j->raw = job->method == PROTO_METHOD_LOAD_INSNS;
	if (!j->raw) {
		k = proto_load_request_decode(params, n_fds, &j->req, &error);
		if (k < 0)
			return reply_error(r, PROTO_ERR_INVALID, -k, "%s",
					   error ? error : "invalid request");
		return 0;
	}
	k = proto_insns_request_decode(params, n_fds, &j->insns, &error);
	if (k < 0)
		return reply_error(r, PROTO_ERR_INVALID, -k, "%s",
				   error ? error : "invalid request");
	/* What the rest of the load reads from a request: the fd, the name, check_only. */
	j->req.object_fd = j->insns.insns_fd;
	j->req.name = TAKE_PTR(j->insns.name);
	j->req.check_only = j->insns.check_only;
	if (!j->insns.prog_name && !(j->insns.prog_name = strdup(PROTO_DEFAULT_PROG_NAME)))
		return -ENOMEM;
	return 0;
}

int job_map_index(const struct job *j, const char *name)
{
	for (size_t i = 0; i < j->desc.n_maps; i++)
		if (strcmp(j->desc.maps[i].name, name) == 0)
			return (int)i;
	return -ENOENT;
}

/* Whether some grant in "maps" could give want for map i, whose type may cap it. */
bool job_access_possible(const struct job *j, size_t i, enum map_access want)
{
	enum map_access most = policy_map_access_for_type(MAP_ACCESS_RW | MAP_ACCESS_CONSUME,
							  j->desc.maps[i].map_type);

	return (want & most) == want;
}

/* The loaded fd of desc.programs[i], or < 0 (none). */
int job_prog_fd(const struct job *j, size_t i)
{
	if (j->raw)
		return i == 0 ? j->raw_prog_fd : -EBADF;
	return bpf_program__fd(j->handles.programs[i]);
}

/* The created fd of desc.maps[i], or < 0 (not created: no loaded program needs it). */
int job_map_fd(const struct job *j, size_t i)
{
	return j->raw ? -EBADF : bpf_map__fd(j->handles.maps[i]);
}

static volatile sig_atomic_t verifier_deadline_passed;

static void on_verifier_deadline(int sig)
{
	verifier_deadline_passed = 1;
}

/*
 * Bound the verifier's time: the kernel's verifier stops with EAGAIN when a
 * signal is pending. libbpf retries EAGAIN a few times, so after the
 * deadline the timer keeps firing (every 10 ms) until the load gives up.
 * The handler does nothing but note it; SA_RESTART is off on purpose.
 */
static int verifier_timer_arm(uint64_t usec)
{
	struct sigaction sa = {.sa_handler = on_verifier_deadline};
	struct itimerval it = {
		.it_value = {.tv_sec = (time_t)(usec / 1000000),
			     .tv_usec = (suseconds_t)(usec % 1000000)},
		.it_interval = {.tv_usec = 10000},
	};

	/* A worker serves several loads of its connection: no earlier deadline counts. */
	verifier_deadline_passed = 0;
	if (usec == 0)
		return 0;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) < 0 || setitimer(ITIMER_REAL, &it, NULL) < 0)
		return negative_errno();
	return 0;
}

static void verifier_timer_disarm(void)
{
	struct itimerval off = {};

	setitimer(ITIMER_REAL, &off, NULL);
}

static int job_load(struct job *j, struct reply *r)
{
	int k;

	k = job_raise_caps(j);
	if (k < 0)
		return reply_error(r, PROTO_ERR_INTERNAL, -k, "cannot raise capabilities: %s",
				   strerror(-k));
	k = verifier_timer_arm(j->cfg->verifier_timeout_usec);
	if (k >= 0 && j->raw) {
		k = insns_load(j->object, j->object_size, &j->desc.programs[0], j->insns.license,
			       j->verifier_log, PROTO_MAX_VERIFIER_LOG);
		if (k >= 0)
			j->raw_prog_fd = k;
	} else if (k >= 0) {
		k = bpf_object__load(j->obj);
	}
	verifier_timer_disarm();
	caps_clear_effective();
	if (k < 0 && verifier_deadline_passed)
		return reply_error(
			r, PROTO_ERR_TIMEOUT, ETIME,
			"the verifier ran over the broker's limit of %.3g s for one load "
			"and was stopped",
			(double)j->cfg->verifier_timeout_usec / 1e6);
	if (k < 0)
		return job_load_failed(j, r, k);
	/* Raw instructions went to the kernel as inspected: nothing was relocated. */
	return j->raw ? 0 : job_post_load_check(j, r);
}

static int job_open_and_inspect(struct job *j, struct reply *r)
{
	_cleanup_free_ char *error = NULL;
	int k;

	k = job_open(j, r);
	if (k == 0)
		k = job_configure(j, r);
	if (k != 0)
		return k;
	k = inspect_object(j->obj, j->calls, j->object_size, &j->desc, &j->handles, &error);
	if (k < 0)
		return reply_error(r, PROTO_ERR_OBJECT, -k, "cannot inspect the object: %s",
				   error ? error : strerror(-k));
	setup_describe(&j->req, &j->desc);
	return 0;
}

/* load_insns: the blob is one program, described for the same decision as an object's. */
static int job_describe_insns(struct job *j, struct reply *r)
{
	_cleanup_free_ char *error = NULL;
	int k = insns_describe(j->object, j->object_size, j->insns.prog_name, j->insns.type,
			       j->insns.attach_type, true, &j->desc, &error);

	if (k == -ENOMEM)
		return k;
	if (k == -EPERM) /* maps and modules' symbols: no policy lets raw instructions use them */
		return denial_reply(r, PROTO_ERR_DENIED, EPERM, "program", j->insns.prog_name, NULL,
				    "%s", error ? error : strerror(-k));
	if (k < 0)
		return reply_error(r, k == -EINVAL ? PROTO_ERR_INVALID : PROTO_ERR_OBJECT, -k, "%s",
				   error ? error : strerror(-k));
	return 0;
}

static int job_run(struct job *j, struct jobmsg *jobmsg, json_object *params, int *fds,
		   size_t n_fds, struct reply *r)
{
	json_object *progs = NULL, *maps = NULL, *result;
	int k;

	k = job_parse(j, jobmsg, params, n_fds, r);
	if (k != 0)
		return k;
	k = policy_resolve(j->policy, &j->id, &j->grant);
	if (k < 0)
		return k;
	if (!j->grant->matched)
		return denial_reply(r, PROTO_ERR_DENIED, EPERM, "object", NULL, "match",
				    "no policy rule matches uid %u; the broker allows you nothing",
				    (unsigned)j->id.uid);
	/* malloc, not calloc: pages the verifier never writes are never touched. */
	j->verifier_log = malloc(PROTO_MAX_VERIFIER_LOG);
	if (!j->verifier_log)
		return -ENOMEM;
	j->verifier_log[0] = '\0';
	k = job_take_object(j, fds, r);
	if (k != 0)
		return k;
	k = j->raw ? job_describe_insns(j, r) : job_open_and_inspect(j, r);
	if (k != 0)
		return k;
	k = policy_decide(j->grant, &j->desc, &j->verdict);
	if (k < 0)
		return k;
	j->have_verdict = true;

	result = describe(j, &progs, &maps);
	if (!result)
		return -ENOMEM;
	if (j->req.check_only || !j->verdict.allowed) {
		if (!j->verdict.allowed && !j->req.check_only) {
			json_object *reasons = NULL, *denials = NULL;
			int answered;

			/* The first reason as the message; all of them, with their keys, beside it.
			 */
			json_object_object_get_ex(result, "reasons", &reasons);
			json_object_object_get_ex(result, "denials", &denials);
			answered = reply_error(r, PROTO_ERR_DENIED, EPERM, "%s",
					       policy_verdict_first_reason(&j->verdict));
			if (answered < 0) {
				json_object_put(result);
				json_object_put(progs);
				json_object_put(maps);
				return answered;
			}
			/* Both or neither: reasons without their keys would mislead. */
			k = reply_error_add(r, "reasons", json_object_get(reasons));
			if (k >= 0)
				k = reply_error_add(r, "denials", json_object_get(denials));
			if (k >= 0)
				k = answered;
			json_object_put(result);
		} else {
			k = reply_result(r, result);
		}
		json_object_put(progs);
		json_object_put(maps);
		return k;
	}

	/* A test_run-only program is only of use as a named object the caller can test-run. */
	for (size_t i = 0; i < j->desc.n_programs && !j->req.name; i++) {
		const char *type = policy_prog_type_to_string(j->desc.programs[i].prog_type);
		char key[64];

		if (!j->desc.programs[i].load || !j->verdict.test_run_only[i])
			continue;
		json_object_put(progs);
		json_object_put(maps);
		json_object_put(result);
		/* Without a name it would need the type in program_types. */
		snprintf(key, sizeof(key), "program_types: %s", type ?: "");
		return denial_reply(r, PROTO_ERR_DENIED, EPERM, "program", j->desc.programs[i].name,
				    key,
				    "program \"%s\" has type %s, which your policy allows for test "
				    "runs only: load it with a name, then test-run it",
				    j->desc.programs[i].name, type);
	}
	k = job_check_quotas(j, r);
	if (k == 0)
		k = job_prepare_pins(j, r);
	if (k == 0)
		k = setup_create_inner_maps(&j->setup, j->obj, &j->req, r);
	if (k == 0)
		k = job_load(j, r);
	/* The outer maps keep only the inner maps' shape: not recorded, not kept. */
	setup_close_inner_maps(&j->setup);
	if (k == 0)
		k = job_read_info(j, r);
	if (k == 0)
		k = job_record(j, r);
	if (k == 0)
		k = job_freeze_maps(j, r);
	if (k == 0)
		k = job_hand_out(j, r, progs, maps);
	if (k == 0 && j->req.name)
		k = job_commit_named(j, r, result);
	json_object_put(progs);
	json_object_put(maps);
	/* Taken either way; refused if a step answered but said it went on (reply.h). */
	if (k == 0)
		k = reply_result(r, TAKE_PTR(result));
	if (k != 0) {
		/*
		 * Refused or failed once loaded (the post-load check, freezing,
		 * the hand-out, the commit): maps libbpf pinned by name for this
		 * load go again, or they would outlive a request that failed.
		 */
		job_unpin_new(j);
		json_object_put(result);
		return k;
	}
	return 0;
}

int load_handle(const struct policy *policy, const struct load_config *cfg, struct jobmsg *jobmsg,
		json_object *params, int *fds, size_t n_fds, json_object **ret_body, int **ret_fds,
		size_t *ret_n_fds)
{
	struct job j = {.policy = policy, .cfg = cfg, .lock = -EBADF, .raw_prog_fd = -EBADF};
	struct reply r = {};
	int k;

	libbpflog_reset();
	libbpf_set_print(libbpflog_print);
	k = job_run(&j, jobmsg, params, fds, n_fds, &r);
	if (k == 0)
		k = reply_limit_fds(
			&r, &proto_methods[j.raw ? PROTO_METHOD_LOAD_INSNS : PROTO_METHOD_LOAD]);
	/* A failure after the load started is on record too (with what it left undone). */
	k = reply_fail(&r, k);
	if (k >= 0)
		job_audit(&j, &r);
	job_done(&j);
	close_many(fds, n_fds);
	return reply_finish(&r, k, ret_body, ret_fds, ret_n_fds);
}
