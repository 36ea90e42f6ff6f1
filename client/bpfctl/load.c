/* SPDX-License-Identifier: MIT */
/*
 * bpfctl check, load, load-insns, check-insns and run: send an object (or
 * raw instructions) to the broker, and run a command holding the fds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfctl.h"
#include "common/macro.h"

/* OBJ.o from the command line, or the system object --system names (argv then has no OBJ). */
static int load_object(struct cli *c, struct bpfbroker *b, char **argv, struct bpfbroker_result **r,
		       struct bpfbroker_error **e)
{
	if (c->system)
		return bpfbroker_load_system(b, c->system, &c->opts, r, e);
	return bpfbroker_load_file(b, argv[0], &c->opts, r, e);
}

/* Whether argc is what the command wants besides OBJ.o (or --system): want, or want + 1. */
static bool object_args_ok(const struct cli *c, int argc, int want)
{
	return c->system ? argc == want : argc == want + 1;
}

int cmd_check(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	int k;

	if (!object_args_ok(c, argc, 0)) {
		fprintf(stderr, "bpfctl: check takes one object file or --system NAME\n");
		return EXIT_ERROR;
	}
	c->opts.check_only = true;
	k = load_object(c, b, argv, &r, &e);
	if (k < 0)
		return report_error(c, k, e, c->system ?: argv[0]);
	if (c->json)
		printf("%s\n", r->json);
	else
		print_check(r);
	k = r->allowed ? EXIT_SUCCESS : EXIT_DENIED;
	bpfbroker_result_free(r);
	return k;
}

int cmd_load(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	int k;

	if (!object_args_ok(c, argc, 0) || !c->opts.name) {
		fprintf(stderr,
			"bpfctl: load takes one object file (or --system NAME) and --name NAME\n");
		return EXIT_ERROR;
	}
	k = load_object(c, b, argv, &r, &e);
	if (k < 0)
		return report_error(c, k, e, c->system ?: argv[0]);
	print_loaded(c, r);
	bpfbroker_result_free(r);
	return EXIT_SUCCESS;
}

/* load-insns and check-insns: FILE holds raw struct bpf_insn, as a runtime generates them. */
static int insns_command(struct cli *c, struct bpfbroker *b, int argc, char **argv, bool check)
{
	struct bpfbroker_insns_opts o = {
		.sz = sizeof(o),
		.prog_type = c->prog_type,
		.attach_type = c->attach_type,
		.license = c->license ?: "GPL",
		.prog_name = c->prog_name,
		.name = c->opts.name,
		.check_only = check,
	};
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	_cleanup_close_ int fd = -1;
	int k;

	if (argc != 1 || !c->prog_type || (!check && !c->opts.name)) {
		fprintf(stderr, "bpfctl: %s takes one file of instructions and --type TYPE%s\n",
			check ? "check-insns" : "load-insns", check ? "" : " and --name NAME");
		return EXIT_ERROR;
	}
	/* The broker never opens a path: we send the file's fd. */
	fd = open(argv[0], O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return die_errno(negative_errno(), argv[0]);
	k = bpfbroker_load_insns_fd(b, fd, &o, &r, &e);
	if (k < 0)
		return report_error(c, k, e, argv[0]);
	if (check) {
		if (c->json)
			printf("%s\n", r->json);
		else
			print_check(r);
		k = r->allowed ? EXIT_SUCCESS : EXIT_DENIED;
	} else {
		print_loaded(c, r);
		k = EXIT_SUCCESS;
	}
	bpfbroker_result_free(r);
	return k;
}

int cmd_load_insns(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	return insns_command(c, b, argc, argv, false);
}

int cmd_check_insns(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	return insns_command(c, b, argc, argv, true);
}

/*
 * Place fds at 3, 4, ... for exec. First move them all above the target range,
 * so placing one never clobbers another that is still to be placed.
 */
static int place_fds(int *fds, size_t n)
{
	int high = SD_LISTEN_FDS_START + (int)n;

	for (size_t i = 0; i < n; i++) {
		int fd = fcntl(fds[i], F_DUPFD_CLOEXEC, high);

		if (fd < 0)
			return negative_errno();
		fds[i] = fd;
	}
	for (size_t i = 0; i < n; i++)
		if (dup2(fds[i], SD_LISTEN_FDS_START + (int)i) < 0)
			return negative_errno(); /* dup2's copy has no FD_CLOEXEC */
	return 0;
}

/* Close the broker connection and exec argv with fds at 3, 4, ... (systemd's LISTEN_FDS). */
int exec_holding(struct cli *c, int *fds, size_t n, const char *names, char **argv)
{
	char buf[32];
	int k;

	bpfbroker_close(c->b);
	c->b = NULL;
	k = place_fds(fds, n);
	if (k < 0)
		return die_errno(k, "cannot pass fds");
	snprintf(buf, sizeof(buf), "%zu", n);
	setenv("LISTEN_FDS", buf, 1);
	snprintf(buf, sizeof(buf), "%d", (int)getpid());
	setenv("LISTEN_PID", buf, 1);
	setenv("LISTEN_FDNAMES", names, 1);
	fflush(stdout);
	execvp(argv[0], argv);
	fprintf(stderr, "bpfctl: cannot execute %s: %m\n", argv[0]);
	return 127;
}

/* Exec argv with the map and program fds of r (not its BTF fd). */
static int run_with_result(struct cli *c, struct bpfbroker_result *r, char **argv)
{
	int fds[PROTO_MAX_REPLY_FDS];
	size_t n = 0, names_len = 1;
	_cleanup_free_ char *names = NULL;
	const struct bpfbroker_program *p;
	const struct bpfbroker_map *m;

	for (size_t i = 0; (m = bpfbroker_result_map_at(r, i)); i++)
		if (m->fd >= 0)
			names_len += strlen(m->name) + 5;
	for (size_t i = 0; (p = bpfbroker_result_program_at(r, i)); i++)
		if (p->fd >= 0)
			names_len += strlen(p->name) + 6;
	names = calloc(1, names_len);
	if (!names)
		return die_errno(-ENOMEM, "run");
	for (size_t i = 0; (m = bpfbroker_result_map_at(r, i)) && n < ARRAY_SIZE(fds); i++)
		if (m->fd >= 0) {
			fds[n++] = m->fd;
			strcat(strcat(names, n > 1 ? ":map/" : "map/"), m->name);
		}
	for (size_t i = 0; (p = bpfbroker_result_program_at(r, i)) && n < ARRAY_SIZE(fds); i++)
		if (p->fd >= 0) {
			fds[n++] = p->fd;
			strcat(strcat(names, n > 1 ? ":prog/" : "prog/"), p->name);
		}
	if (c->json)
		fprintf(stderr, "%s\n", r->json);
	return exec_holding(c, fds, n, names, argv);
}

int cmd_run(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	int k;

	if (c->opts.name && c->system) {
		fprintf(stderr, "bpfctl: run takes --system NAME or --name REF, not both\n");
		return EXIT_ERROR;
	}
	if (c->opts.name) {
		/* A named object: fresh fds for it, nothing is loaded. */
		if (argc < 1) {
			fprintf(stderr, "bpfctl: run --name takes a command\n");
			return EXIT_ERROR;
		}
		k = bpfbroker_fds(b, c->opts.name, &r, &e);
		if (k < 0)
			return report_error(c, k, e, c->opts.name);
		return run_with_result(c, r, argv);
	}
	if (argc < (c->system ? 1 : 2)) {
		fprintf(stderr,
			"bpfctl: run takes an object file (or --system NAME) and a command\n");
		return EXIT_ERROR;
	}
	k = load_object(c, b, argv, &r, &e);
	if (k < 0)
		return report_error(c, k, e, c->system ?: argv[0]);
	return run_with_result(c, r, c->system ? argv : argv + 1);
}
