/* SPDX-License-Identifier: MIT */
/*
 * bpfctl attach and detach: a program of a named object to a cgroup,
 * tracepoint, interface or uprobe (pinned, or held by a command), and back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfctl.h"
#include "common/macro.h"
#include "common/parse.h"
#include "number.h"

/*
 * uprobe BINARY:SYMBOL[+OFF] or BINARY:OFFSET --pid PID: we open the binary
 * and a pidfd ourselves; the broker opens no path for us.
 */
static int uprobe_target(struct cli *c, char *where, struct bpfbroker_attach_opts *o,
			 int *ret_binary_fd, int *ret_pidfd)
{
	char *colon = strrchr(where, ':'), *loc, *plus;
	uint64_t pid = 0;
	long fd;

	if (!colon || colon == where || !colon[1]) {
		fprintf(stderr, "bpfctl: a uprobe is given as BINARY:SYMBOL[+OFFSET] or "
				"BINARY:OFFSET\n");
		return -EINVAL;
	}
	if (!c->pid || bpfctl_parse_u64_hex(c->pid, INT32_MAX, &pid) < 0 || pid == 0) {
		fprintf(stderr, "bpfctl: a uprobe needs --pid PID, the process to probe\n");
		return -EINVAL;
	}
	*colon = '\0';
	loc = colon + 1;
	if (*loc >= '0' && *loc <= '9') {
		if (bpfctl_parse_u64_hex(loc, INT64_MAX, &o->uprobe_offset) < 0) {
			fprintf(stderr, "bpfctl: bad file offset \"%s\"\n", loc);
			return -EINVAL;
		}
	} else {
		plus = strchr(loc, '+');
		if (plus) {
			*plus = '\0';
			if (bpfctl_parse_u64_hex(plus + 1, INT64_MAX, &o->uprobe_offset) < 0) {
				fprintf(stderr, "bpfctl: bad offset \"%s\"\n", plus + 1);
				return -EINVAL;
			}
		}
		o->name = loc;
	}
	if (c->semaphore) {
		if (*c->semaphore >= '0' && *c->semaphore <= '9') {
			if (bpfctl_parse_u64_hex(c->semaphore, INT64_MAX, &o->semaphore_offset) <
				    0 ||
			    o->semaphore_offset == 0) {
				fprintf(stderr, "bpfctl: bad semaphore offset \"%s\"\n",
					c->semaphore);
				return -EINVAL;
			}
		} else {
			o->semaphore = c->semaphore;
		}
	}
	o->retprobe = c->retprobe;
	*ret_binary_fd = open(where, O_RDONLY | O_CLOEXEC);
	if (*ret_binary_fd < 0) {
		fprintf(stderr, "bpfctl: cannot open %s: %m\n", where);
		return -EIO;
	}
	fd = syscall(SYS_pidfd_open, (pid_t)pid, 0);
	if (fd < 0) {
		fprintf(stderr, "bpfctl: cannot open process %llu: %m\n", (unsigned long long)pid);
		*ret_binary_fd = safe_close(*ret_binary_fd);
		return -ESRCH;
	}
	*ret_pidfd = (int)fd;
	o->binary_fd = *ret_binary_fd;
	o->pidfd = *ret_pidfd;
	return 0;
}

int cmd_attach(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	struct bpfbroker_attach_opts o = {.sz = sizeof(o), .cgroup_fd = -1};
	struct bpfbroker_error *e = NULL;
	_cleanup_close_ int cgroup_fd = -1, binary_fd = -1, pidfd = -1;
	_cleanup_free_ char *names = NULL;
	uint32_t id = 0;
	int k, link_fd = -1;
	char *ref, *prog;

	bool tc = argc >= 2 && strcmp(argv[1], "tc") == 0;

	if (argc != 3 + tc) {
		fprintf(stderr, "bpfctl: attach takes REF/PROG, a target type and a target%s%s\n",
			tc ? " and ingress or egress" : "",
			argc > 3 + tc && !c->dashdash ? " (put the command to run after --)" : "");
		return EXIT_ERROR;
	}
	if (split_ref(argv[0], "PROG", &ref, &prog) < 0)
		return EXIT_ERROR;
	o.object = ref;
	o.program = prog;
	o.target_type = argv[1];
	o.pin = c->pin;
	o.protect = c->protect;
	if ((c->pid || c->retprobe || c->semaphore) && strcmp(argv[1], "uprobe") != 0) {
		fprintf(stderr, "bpfctl: --pid, --retprobe and --semaphore are for uprobes\n");
		return EXIT_ERROR;
	}
	if (strcmp(argv[1], "uprobe") == 0) {
		if (c->attach_type) {
			fprintf(stderr, "bpfctl: --attach-type is only for cgroup targets\n");
			return EXIT_ERROR;
		}
		if (uprobe_target(c, argv[2], &o, &binary_fd, &pidfd) < 0)
			return EXIT_ERROR;
	} else if (strcmp(argv[1], "cgroup") == 0) {
		cgroup_fd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cgroup_fd < 0) {
			fprintf(stderr, "bpfctl: cannot open cgroup %s: %m\n", argv[2]);
			return EXIT_ERROR;
		}
		o.cgroup_fd = cgroup_fd;
		o.attach_type = c->attach_type;
	} else if (strcmp(argv[1], "raw_tracepoint") == 0 || strcmp(argv[1], "tracepoint") == 0) {
		if (c->attach_type) {
			fprintf(stderr, "bpfctl: --attach-type is only for cgroup targets\n");
			return EXIT_ERROR;
		}
		if (strcmp(argv[1], "tracepoint") == 0 && !strchr(argv[2], ':')) {
			fprintf(stderr, "bpfctl: a tracepoint is given as CATEGORY:NAME\n");
			return EXIT_ERROR;
		}
		o.name = argv[2];
	} else if (strcmp(argv[1], "xdp") == 0 || tc) {
		/* An interface of the caller's own network namespace; the broker enters it. */
		if (c->attach_type) {
			fprintf(stderr, "bpfctl: --attach-type is only for cgroup targets\n");
			return EXIT_ERROR;
		}
		o.name = argv[2];
		if (tc) {
			if (strcmp(argv[3], "ingress") != 0 && strcmp(argv[3], "egress") != 0) {
				fprintf(stderr,
					"bpfctl: tc attaches on ingress or egress, not "
					"\"%s\"\n",
					argv[3]);
				return EXIT_ERROR;
			}
			o.attach_type = argv[3];
		}
	} else {
		fprintf(stderr,
			"bpfctl: unknown target type \"%s\" (cgroup, raw_tracepoint, "
			"tracepoint, xdp, tc or uprobe)\n",
			argv[1]);
		return EXIT_ERROR;
	}
	if (!c->pin && c->n_cmd == 0) {
		fprintf(stderr, "bpfctl: the attachment would end when bpfctl exits: use --pin, or "
				"give a command to run holding it after --\n");
		return EXIT_ERROR;
	}
	if (c->pin && c->n_cmd > 0) {
		fprintf(stderr, "bpfctl: with --pin the link stays after bpfctl exits; there is no "
				"command to run holding it\n");
		return EXIT_ERROR;
	}
	k = bpfbroker_attach(b, &o, &id, &link_fd, &e);
	if (k < 0)
		return report_error(c, k, e, prog);
	cgroup_fd = safe_close(cgroup_fd);
	binary_fd = safe_close(binary_fd);
	pidfd = safe_close(pidfd);
	if (c->pin) {
		if (c->json)
			printf("{\"link\":{\"id\":%u,\"pinned\":true}}\n", id);
		else
			printf("attached %s: link %u (pinned)\n", prog, id);
		safe_close(link_fd);
		return EXIT_SUCCESS;
	}
	/* Our stdout is the command's: report on stderr. */
	if (c->json)
		fprintf(stderr, "{\"link\":{\"id\":%u,\"pinned\":false}}\n", id);
	else
		fprintf(stderr, "attached %s: link %u (held by %s as fd 3)\n", prog, id, c->cmd[0]);
	if (asprintf(&names, "link/%s", prog) < 0) {
		safe_close(link_fd);
		return die_errno(-ENOMEM, "attach");
	}
	k = exec_holding(c, &link_fd, 1, names, c->cmd);
	safe_close(link_fd);
	return k;
}

int cmd_detach(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	struct bpfbroker_error *e = NULL;
	_cleanup_free_ uint32_t *ids = NULL;
	uint64_t link = 0;
	char *ref, *prog;
	size_t n = 0;
	int k;

	if (argc < 1 || argc > 2) {
		fprintf(stderr, "bpfctl: detach takes REF/PROG and optionally a link id\n");
		return EXIT_ERROR;
	}
	if (argc == 2) {
		if (parse_u64(argv[1], UINT32_MAX, &link) < 0 || link == 0) {
			fprintf(stderr, "bpfctl: invalid link id \"%s\"\n", argv[1]);
			return EXIT_ERROR;
		}
	}
	if (split_ref(argv[0], "PROG", &ref, &prog) < 0)
		return EXIT_ERROR;
	k = bpfbroker_detach(b, ref, prog, (uint32_t)link, &ids, &n, &e);
	if (k < 0)
		return report_error(c, k, e, prog);
	if (c->json) {
		printf("{\"detached\":[");
		for (size_t i = 0; i < n; i++)
			printf("%s%u", i ? "," : "", ids[i]);
		printf("]}\n");
	} else if (n == 0) {
		printf("nothing detached: %s has no pinned links\n", prog);
	} else {
		for (size_t i = 0; i < n; i++)
			printf("detached %s: link %u\n", prog, ids[i]);
	}
	return EXIT_SUCCESS;
}
