/* SPDX-License-Identifier: MIT */
/*
 * bpfctl: the command line for bpfbrokerd.
 *
 *   bpfctl check OBJ.o            would the broker load this for me? (exit 0 yes, 1 no)
 *   bpfctl run OBJ.o [--] CMD...  load, then exec CMD with the fds (systemd's LISTEN_FDS)
 *   bpfctl policy                 my effective policy
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/macro.h"
#include "libbpfbroker.h"
#include "proto/proto.h"

#define EXIT_DENIED 1
#define EXIT_ERROR 2
#define SD_LISTEN_FDS_START 3

struct cli {
	const char *socket_path;
	bool json;
	struct bpfbroker_load_opts opts;
	struct bpfbroker_global globals[PROTO_MAX_CONFIG_ITEMS];
	struct bpfbroker_map_size sizes[PROTO_MAX_CONFIG_ITEMS];
	struct bpfbroker_program_select programs[PROTO_MAX_CONFIG_ITEMS];
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: bpfctl [OPTIONS] COMMAND ...\n\n"
		"Commands:\n"
		"  check OBJ.o               would the broker load OBJ for me? Verdicts per "
		"program\n"
		"                            and map; exit status 0 if allowed, 1 if denied\n"
		"  run OBJ.o [--] CMD [ARG...]  load OBJ and exec CMD with the returned fds from "
		"fd 3\n"
		"                            on (LISTEN_FDS, LISTEN_PID, "
		"LISTEN_FDNAMES=map/NAME:prog/NAME)\n"
		"  policy                    show my effective policy\n\n"
		"Options:\n"
		"  --socket PATH             broker socket (default $%s or %s)\n"
		"  -j, --json                JSON output\n"
		"  --global NAME=HEX         set a global variable in .rodata/.data/.bss before "
		"load\n"
		"  --map-size NAME=N         set a map's max_entries before load\n"
		"  --program NAME[:TYPE[:ATTACH_TYPE]]  load only the programs named "
		"(repeatable),\n"
		"                            optionally setting their type and expected attach "
		"type\n"
		"  --object-name NAME        libbpf object name\n"
		"  -h, --help                show this help\n"
		"Exit status: 0 success, 1 denied by policy, 2 other errors.\n",
		PROTO_SOCKET_ENV, PROTO_DEFAULT_SOCKET);
}

static int die_errno(int err, const char *what)
{
	fprintf(stderr, "bpfctl: %s: %s\n", what, strerror(-err));
	return EXIT_ERROR;
}

static int report_error(struct cli *c, int k, struct bpfbroker_error *e, const char *what)
{
	if (!e)
		return die_errno(k, what);
	if (c->json) {
		printf("{\"error\":{\"code\":\"%s\",\"errno\":%d}}\n", e->code, e->err);
	}
	fprintf(stderr, "bpfctl: %s\n", e->message);
	for (const char *const *r = e->reasons; r && *r; r++)
		if (strcmp(*r, e->message) != 0)
			fprintf(stderr, "bpfctl: %s\n", *r);
	if (e->verifier_log)
		fprintf(stderr, "--- verifier log ---\n%s\n--- end of verifier log ---\n",
			e->verifier_log);
	k = strcmp(e->code, PROTO_E_DENIED) == 0 ? EXIT_DENIED : EXIT_ERROR;
	bpfbroker_error_free(e);
	return k;
}

static int parse_option(struct cli *c, int opt, const char *arg)
{
	char *eq, *end;

	switch (opt) {
	case 'G': {
		struct bpfbroker_global *g = &c->globals[c->opts.n_globals];
		uint8_t *value;
		size_t size;

		if (c->opts.n_globals >= PROTO_MAX_CONFIG_ITEMS || !(eq = strchr(arg, '=')))
			goto bad;
		*eq = '\0';
		if (proto_hex_decode(eq + 1, &value, &size) < 0)
			goto bad;
		*g = (struct bpfbroker_global){.name = arg, .value = value, .size = size};
		c->opts.n_globals++;
		return 0;
	}
	case 'M': {
		unsigned long v;

		if (c->opts.n_map_sizes >= PROTO_MAX_CONFIG_ITEMS || !(eq = strchr(arg, '=')))
			goto bad;
		*eq = '\0';
		errno = 0;
		v = strtoul(eq + 1, &end, 10);
		if (errno || *end || end == eq + 1 || v == 0 || v > UINT32_MAX)
			goto bad;
		c->sizes[c->opts.n_map_sizes++] =
			(struct bpfbroker_map_size){.name = arg, .max_entries = (uint32_t)v};
		return 0;
	}
	case 'P': {
		struct bpfbroker_program_select *p = &c->programs[c->opts.n_programs];
		char *type, *attach = NULL;

		if (c->opts.n_programs >= PROTO_MAX_CONFIG_ITEMS || !*arg)
			goto bad;
		*p = (struct bpfbroker_program_select){.name = arg};
		type = strchr(arg, ':');
		if (type) {
			*type++ = '\0';
			attach = strchr(type, ':');
			if (attach)
				*attach++ = '\0';
			p->type = *type ? type : NULL;
			p->attach_type = attach && *attach ? attach : NULL;
		}
		c->opts.n_programs++;
		return 0;
	}
	}
bad:
	fprintf(stderr, "bpfctl: invalid option value \"%s\"\n", arg);
	return -EINVAL;
}

static void print_check(const struct bpfbroker_result *r)
{
	printf("%s\n", r->allowed ? "allowed" : "denied");
	for (size_t i = 0; i < r->n_programs; i++) {
		const struct bpfbroker_program *p = &r->programs[i];

		printf("program %s (%s, %u insns)%s: %s\n", p->name, p->type, p->insns,
		       p->loaded || strcmp(p->verdict, "allowed") ? "" : "", p->verdict);
		printf("  helpers:");
		for (const char *const *h = p->helpers; h && *h; h++)
			printf(" %s", *h);
		for (const char *const *h = p->kfuncs; h && *h; h++)
			printf(" kfunc:%s", *h);
		printf("\n");
	}
	for (size_t i = 0; i < r->n_maps; i++) {
		const struct bpfbroker_map *m = &r->maps[i];

		printf("map %s (%s, %u entries): access %s; %s\n", m->name, m->type, m->max_entries,
		       bpfbroker_access_to_string(m->access), m->verdict);
	}
}

static int cmd_check(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	int k;

	if (argc != 1) {
		fprintf(stderr, "bpfctl: check takes one object file\n");
		return EXIT_ERROR;
	}
	c->opts.check_only = true;
	k = bpfbroker_load_file(b, argv[0], &c->opts, &r, &e);
	if (k < 0)
		return report_error(c, k, e, argv[0]);
	if (c->json)
		printf("%s\n", r->json);
	else
		print_check(r);
	k = r->allowed ? EXIT_SUCCESS : EXIT_DENIED;
	bpfbroker_result_free(r);
	return k;
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

static int cmd_run(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	int fds[PROTO_MAX_REPLY_FDS];
	size_t n = 0, names_len = 1;
	_cleanup_free_ char *names = NULL;
	char buf[32];
	int k;

	if (argc < 2) {
		fprintf(stderr, "bpfctl: run takes an object file and a command\n");
		return EXIT_ERROR;
	}
	k = bpfbroker_load_file(b, argv[0], &c->opts, &r, &e);
	if (k < 0)
		return report_error(c, k, e, argv[0]);
	for (size_t i = 0; i < r->n_maps; i++)
		if (r->maps[i].fd >= 0)
			names_len += strlen(r->maps[i].name) + 5;
	for (size_t i = 0; i < r->n_programs; i++)
		if (r->programs[i].fd >= 0)
			names_len += strlen(r->programs[i].name) + 6;
	names = calloc(1, names_len);
	if (!names)
		return die_errno(-ENOMEM, "run");
	for (size_t i = 0; i < r->n_maps && n < ARRAY_SIZE(fds); i++)
		if (r->maps[i].fd >= 0) {
			fds[n++] = r->maps[i].fd;
			strcat(strcat(names, n > 1 ? ":map/" : "map/"), r->maps[i].name);
		}
	for (size_t i = 0; i < r->n_programs && n < ARRAY_SIZE(fds); i++)
		if (r->programs[i].fd >= 0) {
			fds[n++] = r->programs[i].fd;
			strcat(strcat(names, n > 1 ? ":prog/" : "prog/"), r->programs[i].name);
		}
	if (c->json)
		fprintf(stderr, "%s\n", r->json);
	bpfbroker_close(b);
	k = place_fds(fds, n);
	if (k < 0)
		return die_errno(k, "cannot pass fds");
	snprintf(buf, sizeof(buf), "%zu", n);
	setenv("LISTEN_FDS", buf, 1);
	snprintf(buf, sizeof(buf), "%d", (int)getpid());
	setenv("LISTEN_PID", buf, 1);
	setenv("LISTEN_FDNAMES", names, 1);
	execvp(argv[1], argv + 1);
	fprintf(stderr, "bpfctl: cannot execute %s: %m\n", argv[1]);
	return 127;
}

static int cmd_policy(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	struct bpfbroker_error *e = NULL;
	_cleanup_free_ char *json = NULL;
	int k;

	if (argc != 0) {
		fprintf(stderr, "bpfctl: policy takes no arguments\n");
		return EXIT_ERROR;
	}
	k = bpfbroker_policy(b, &json, &e);
	if (k < 0)
		return report_error(c, k, e, "policy");
	printf("%s\n", json);
	return EXIT_SUCCESS;
}

/* Parse options; stop_at_positional keeps everything after the first positional untouched. */
static int parse_options(struct cli *c, int argc, char **argv, bool stop_at_positional)
{
	static const struct option longopts[] = {
		{"socket", required_argument, NULL, 'S'},
		{"json", no_argument, NULL, 'j'},
		{"global", required_argument, NULL, 'G'},
		{"map-size", required_argument, NULL, 'M'},
		{"program", required_argument, NULL, 'P'},
		{"object-name", required_argument, NULL, 'N'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	int opt;

	optind = 0; /* glibc: full re-initialization */
	while ((opt = getopt_long(argc, argv, stop_at_positional ? "+jh" : "jh", longopts, NULL)) >=
	       0) {
		switch (opt) {
		case 'S':
			c->socket_path = optarg;
			break;
		case 'j':
			c->json = true;
			break;
		case 'N':
			c->opts.object_name = optarg;
			break;
		case 'G':
		case 'M':
		case 'P':
			if (parse_option(c, opt, optarg) < 0)
				return -EINVAL;
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_SUCCESS);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	return optind;
}

int main(int argc, char **argv)
{
	static struct cli c;
	struct bpfbroker *b = NULL;
	const char *cmd;
	char **args;
	int n_args, k;

	c.opts.sz = sizeof(c.opts);
	c.opts.globals = c.globals;
	c.opts.map_sizes = c.sizes;
	c.opts.programs = c.programs;

	k = parse_options(&c, argc, argv, true);
	if (k < 0)
		return EXIT_ERROR;
	if (k >= argc) {
		usage(stderr);
		return EXIT_ERROR;
	}
	cmd = argv[k];
	if (strcmp(cmd, "check") != 0 && strcmp(cmd, "run") != 0 && strcmp(cmd, "policy") != 0) {
		fprintf(stderr, "bpfctl: unknown command \"%s\"\n", cmd);
		usage(stderr);
		return EXIT_ERROR;
	}
	/* Options may follow the command too; for run, only before OBJ (the rest is CMD's). */
	args = argv + k;
	n_args = argc - k;
	k = parse_options(&c, n_args, args, strcmp(cmd, "run") == 0);
	if (k < 0)
		return EXIT_ERROR;
	args += k;
	n_args -= k;
	if (strcmp(cmd, "run") == 0 && n_args >= 2 && strcmp(args[1], "--") == 0) {
		args[1] = args[0];
		args++;
		n_args--;
	}

	k = bpfbroker_connect(c.socket_path, &b);
	if (k < 0) {
		fprintf(stderr, "bpfctl: cannot connect to the broker at %s: %s\n",
			c.socket_path ?: getenv(PROTO_SOCKET_ENV) ?: PROTO_DEFAULT_SOCKET,
			strerror(-k));
		return EXIT_ERROR;
	}
	if (strcmp(cmd, "check") == 0)
		k = cmd_check(&c, b, n_args, args);
	else if (strcmp(cmd, "run") == 0)
		k = cmd_run(&c, b, n_args, args);
	else
		k = cmd_policy(&c, b, n_args, args);
	if (strcmp(cmd, "run") != 0)
		bpfbroker_close(b);
	return k;
}
