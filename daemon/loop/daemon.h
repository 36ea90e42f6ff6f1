/* SPDX-License-Identifier: MIT */
/*
 * What bpfbrokerd's own files share (main.c, options.c, reload.c, shutdown.c,
 * prepare.c, worker_argv.c): its options, its state, and what each gives main().
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "policy/policy.h"
#include "server.h"
#include "worker.h"

struct options {
	const char *socket_path;
	const char *policy_dir;
	const char *pin_root;
	const char *state_dir;
	const char *admin_group;
	const char *fault_inject;
	const char *worker_exe;
	const char *objects_dir; /* system objects (policy/vetted.h); NULL: the defaults */
	unsigned workers;
	unsigned timeout_sec;
	double verifier_timeout_sec;
	unsigned idle_timeout_sec;
	unsigned max_jobs_per_uid;
	unsigned jobs_per_worker;
	bool allow_writable_bpffs;
	unsigned max_connections;
	unsigned max_connections_per_uid;
	bool check_config;
};

/*
 * The policy in force, which the server reads through a pointer to this
 * (reload.c replaces it on SIGHUP).
 */
extern const struct policy *current_policy;

struct daemon {
	struct options opt;
	gid_t admin_gid;
	struct policy *policy;
	int policy_fd; /* what policy was parsed from, for the spawner (policy_load()) */
	int worker_exe_fd; /* bpfbroker-worker, checked once (spawn_open_exe()) */
	char **worker_argv;
	struct worker_pool *pool;
	struct server *server;
	sd_event *event;
	bool stopping;
	sd_event_source *stop_deadline;
};

/* options.c: the command line into o, defaults filled in; -EINVAL after a message. */
int parse_options(int argc, char **argv, struct options *o);

/* reload.c */
/*
 * The policy in dir, and the files it was parsed from in a sealed memfd for
 * the spawner; or a negative errno and what is wrong in why.
 */
int policy_load(const char *dir, struct policy **ret, int *ret_fd, char *why, size_t why_size);
/* SIGHUP: reload the policy; a policy that fails to load leaves the previous one in force. */
int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata);

/* shutdown.c: SIGTERM and SIGINT: drain, then exit (a second signal: at once). */
int on_sigterm(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata);

/* prepare.c */
/* The pin root on bpffs, root's and 0700 (only warns: pinning by name then fails). */
void pin_root_prepare(const char *pin_root);
/* The state directory, root's and 0700: 0, or -errno after a message. */
int state_dir_prepare(const char *state_dir);

/* worker_argv.c */
/* bpfbroker-worker's arguments for d (NULL-terminated, argv_free()): 0, or -ENOMEM. */
int worker_argv_new(const struct daemon *d, char ***ret);
void argv_free(char **argv);
/* Run bpfbroker-worker --recover and wait for it (a failure is only logged). */
int store_recover_in_child(const struct daemon *d);
