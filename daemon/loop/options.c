/* SPDX-License-Identifier: MIT */
/* bpfbrokerd's command line: its options, their defaults and limits, and --help. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/parse.h"
#include "daemon.h"
#include "daemon/shared/log.h"
#include "proto/proto.h"

#define DEFAULT_POLICY_DIR "/etc/bpfbroker/policy.d"
#define DEFAULT_PIN_ROOT "/sys/fs/bpf/bpfbroker"
#define DEFAULT_STATE_DIR "/run/bpfbroker/state"

static void help(void)
{
	printf("Usage: bpfbrokerd [OPTIONS]\n\n"
	       "Load BPF objects for unprivileged clients under a per-user policy.\n\n"
	       "  --socket PATH              listen here (default %s), unless systemd\n"
	       "                             passes a socket\n"
	       "  --policy-dir DIR           policy drop-in directory (default %s)\n"
	       "  --pin-root DIR             bpffs directory for per-user pins (default %s)\n"
	       "  --state-dir DIR            metadata of named objects (default %s)\n"
	       "  --admin-group GROUP        members may list, show and unload everyone's\n"
	       "                             objects; they get fds only for what is shared\n"
	       "                             with them\n"
	       "  --workers N                loads handled at once (default: number of CPUs)\n"
	       "  --timeout SEC              limit for one request, the worker is killed after "
	       "(default 60)\n"
	       "  --verifier-timeout SEC     limit for the verifier in one load, stopped "
	       "after (default 10)\n"
	       "  --idle-timeout SEC         drop connections idle this long (default 120)\n"
	       "  --max-jobs-per-uid N       workers one user may hold at once (default:\n"
	       "                             workers - 1, at least 1)\n"
	       "  --jobs-per-worker N        requests of one connection a worker serves\n"
	       "                             before it exits (default 64; 1: a fresh worker\n"
	       "                             for every request)\n"
	       "  --allow-writable-bpffs     hand out read-only and write-only map fds even\n"
	       "                             while a bpffs is writable by non-root (unsafe)\n"
	       "  --max-connections N        connections in total (default 1024)\n"
	       "  --max-connections-per-uid N  connections per client uid (default 64)\n"
	       "  --worker-exe PATH          the worker executable (default %s)\n"
	       "  --objects-dir DIR          system objects only from here (default\n"
	       "                             /etc/bpfbroker/objects, then %s)\n"
	       "  --check-config             parse the policy, report problems, and exit\n"
	       "  -v, --verbose              log debug messages\n"
	       "  -h, --help                 show this help\n",
	       PROTO_DEFAULT_SOCKET, DEFAULT_POLICY_DIR, DEFAULT_PIN_ROOT, DEFAULT_STATE_DIR,
	       BPFBROKER_WORKER_EXE, BPFBROKER_OBJECTS_DIR);
}

static int parse_unsigned(const char *s, unsigned min, unsigned max, unsigned *ret)
{
	uint64_t v;

	if (parse_u64(s, max, &v) < 0 || v < min)
		return -EINVAL;
	*ret = (unsigned)v;
	return 0;
}

int parse_options(int argc, char **argv, struct options *o)
{
	enum {
		OPT_SOCKET = 256,
		OPT_POLICY_DIR,
		OPT_PIN_ROOT,
		OPT_WORKERS,
		OPT_TIMEOUT,
		OPT_MAXCONN,
		OPT_MAXCONN_UID,
		OPT_CHECK,
		OPT_STATE_DIR,
		OPT_ADMIN_GROUP,
		OPT_FAULT,
		OPT_VERIFIER_TIMEOUT,
		OPT_IDLE_TIMEOUT,
		OPT_JOBS_PER_UID,
		OPT_ALLOW_WRITABLE_BPFFS,
		OPT_JOBS_PER_WORKER,
		OPT_WORKER_EXE,
		OPT_OBJECTS_DIR,
	};
	static const struct option longopts[] = {
		{"socket", required_argument, NULL, OPT_SOCKET},
		{"policy-dir", required_argument, NULL, OPT_POLICY_DIR},
		{"pin-root", required_argument, NULL, OPT_PIN_ROOT},
		{"workers", required_argument, NULL, OPT_WORKERS},
		{"timeout", required_argument, NULL, OPT_TIMEOUT},
		{"max-connections", required_argument, NULL, OPT_MAXCONN},
		{"max-connections-per-uid", required_argument, NULL, OPT_MAXCONN_UID},
		{"check-config", no_argument, NULL, OPT_CHECK},
		{"state-dir", required_argument, NULL, OPT_STATE_DIR},
		{"admin-group", required_argument, NULL, OPT_ADMIN_GROUP},
		/* Testing only: crash (store_fault()) or stall (worker-stall) at a named point. */
		{"fault-inject", required_argument, NULL, OPT_FAULT},
		{"verifier-timeout", required_argument, NULL, OPT_VERIFIER_TIMEOUT},
		{"idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT},
		{"max-jobs-per-uid", required_argument, NULL, OPT_JOBS_PER_UID},
		{"allow-writable-bpffs", no_argument, NULL, OPT_ALLOW_WRITABLE_BPFFS},
		{"jobs-per-worker", required_argument, NULL, OPT_JOBS_PER_WORKER},
		/* For running from a build tree (tests, tools/quickstart.sh). */
		{"worker-exe", required_argument, NULL, OPT_WORKER_EXE},
		{"objects-dir", required_argument, NULL, OPT_OBJECTS_DIR},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int c;

	*o = (struct options){
		.socket_path = PROTO_DEFAULT_SOCKET,
		.policy_dir = DEFAULT_POLICY_DIR,
		.pin_root = DEFAULT_PIN_ROOT,
		.state_dir = DEFAULT_STATE_DIR,
		.worker_exe = BPFBROKER_WORKER_EXE,
		.workers = ncpu > 0 ? (unsigned)ncpu : 1,
		.timeout_sec = 60,
		.verifier_timeout_sec = 10,
		.idle_timeout_sec = 120,
		.max_connections = 1024,
		.max_connections_per_uid = 64,
		.jobs_per_worker = 64,
	};
	while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) >= 0) {
		int k = 0;

		switch (c) {
		case OPT_SOCKET:
			o->socket_path = optarg;
			break;
		case OPT_POLICY_DIR:
			o->policy_dir = optarg;
			break;
		case OPT_PIN_ROOT:
			o->pin_root = optarg;
			break;
		case OPT_WORKERS:
			k = parse_unsigned(optarg, 1, 256, &o->workers);
			break;
		case OPT_TIMEOUT:
			k = parse_unsigned(optarg, 1, 3600, &o->timeout_sec);
			break;
		case OPT_MAXCONN:
			k = parse_unsigned(optarg, 1, 65536, &o->max_connections);
			break;
		case OPT_MAXCONN_UID:
			k = parse_unsigned(optarg, 1, 65536, &o->max_connections_per_uid);
			break;
		case OPT_CHECK:
			o->check_config = true;
			break;
		case OPT_STATE_DIR:
			o->state_dir = optarg;
			break;
		case OPT_ADMIN_GROUP:
			o->admin_group = optarg;
			break;
		case OPT_FAULT:
			o->fault_inject = optarg;
			break;
		case OPT_VERIFIER_TIMEOUT: {
			char *end;

			errno = 0;
			o->verifier_timeout_sec = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->verifier_timeout_sec >= 0.001) ||
			    o->verifier_timeout_sec > 3600)
				k = -EINVAL;
			break;
		}
		case OPT_IDLE_TIMEOUT:
			k = parse_unsigned(optarg, 1, 86400, &o->idle_timeout_sec);
			break;
		case OPT_JOBS_PER_UID:
			k = parse_unsigned(optarg, 1, 256, &o->max_jobs_per_uid);
			break;
		case OPT_ALLOW_WRITABLE_BPFFS:
			o->allow_writable_bpffs = true;
			break;
		case OPT_JOBS_PER_WORKER:
			k = parse_unsigned(optarg, 1, 4096, &o->jobs_per_worker);
			break;
		case OPT_WORKER_EXE:
			o->worker_exe = optarg;
			break;
		case OPT_OBJECTS_DIR:
			o->objects_dir = optarg;
			break;
		case 'v':
			log_max_level = LOG_DEBUG;
			break;
		case 'h':
			help();
			exit(EXIT_SUCCESS);
		default:
			return -EINVAL;
		}
		if (k < 0) {
			fprintf(stderr, "bpfbrokerd: invalid value \"%s\" for --%s\n", optarg,
				longopts[c - OPT_SOCKET].name);
			return -EINVAL;
		}
	}
	/* Leave one worker free of any one user, so one can't starve the rest. */
	if (o->max_jobs_per_uid == 0)
		o->max_jobs_per_uid = o->workers > 1 ? o->workers - 1 : 1;
	if ((uint64_t)(o->verifier_timeout_sec * 1e6) >= (uint64_t)o->timeout_sec * 1000000)
		fprintf(stderr, "bpfbrokerd: --verifier-timeout should be below --timeout, or the "
				"worker is killed first and the client learns less\n");
	if (optind < argc) {
		fprintf(stderr, "bpfbrokerd: unexpected argument \"%s\"\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}
