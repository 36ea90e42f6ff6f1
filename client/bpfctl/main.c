/* SPDX-License-Identifier: MIT */
/*
 * bpfctl: the command line for bpfbrokerd.
 *
 *   bpfctl check OBJ.o            would the broker load this for me? (exit 0 yes, 1 no)
 *   bpfctl run OBJ.o [OPTIONS] [--] CMD...  load, then exec CMD with the fds (LISTEN_FDS)
 *   bpfctl policy                 my effective policy
 *
 * Named objects (proto/NAMED.md), which stay loaded after bpfctl exits:
 *   bpfctl load OBJ.o --name NAME [--share MAP:user|group:WHO:MODE]...
 *   bpfctl load-insns FILE --type TYPE --name NAME  one program of raw instructions
 *   bpfctl list | show REF | unload REF
 *   bpfctl run --name REF [--] CMD...  exec CMD with the object's fds
 *   bpfctl attach REF/PROG TYPE TARGET [--pin | -- CMD...]
 *   bpfctl attach REF/PROG uprobe BINARY:SYMBOL[+OFF] --pid PID [--retprobe] --pin
 *   bpfctl detach REF/PROG [LINK_ID]
 *   bpfctl test-run REF/PROG [--data-in FILE] [--ctx-in FILE] [--repeat N]
 *   bpfctl map dump|lookup|update|delete REF/MAP [KEY [VALUE]]  on the fd, or proxied
 *                                 by the broker where the kernel refuses bpf() (--proxy)
 *   bpfctl ringbuf REF/MAP [--count N]  print a ring buffer's records as they come
 *   bpfctl net [--allow PREFIX]... [--deny PREFIX]... [--accounting] -- CMD [ARG...]
 *                                 CMD in a sub-cgroup with systemd's network settings
 *   bpfctl net show --unit UNIT | net list  a --user unit's, or every tag's, accounting
 *
 * This file: the command table, where options end and arguments begin, and main().
 */
#include <stdlib.h>
#include <string.h>

#include "bpfctl.h"
#include "common/macro.h"
#include "doctor.h"

/*
 * A command, and how many arguments it takes (after options): from min_args
 * to max_args, said in the error as "NAME takes ARGS". Without args, the
 * command checks them itself (they depend on options or on one another).
 */
static const struct command {
	const char *name;
	int (*run)(struct cli *c, struct bpfbroker *b, int argc, char **argv);
	int min_args, max_args;
	const char *args;
} commands[] = {
	{"check", cmd_check}, /* one object file, or none with --system */
	{"run", cmd_run},
	{"policy", cmd_policy, 0, 0, "no arguments"},
	{"load", cmd_load},
	{"list", cmd_list, 0, 0, "no arguments, only --all, --user and --shared"},
	{"show", cmd_show, 1, 1, "one object (NAME or OWNER/NAME)"},
	{"unload", cmd_unload, 1, 1, "one object (NAME or OWNER/NAME)"},
	{"attach", cmd_attach},
	{"detach", cmd_detach, 1, 2, "REF/PROG and optionally a link id"},
	{"test-run", cmd_test_run, 1, 1, "REF/PROG"},
	{"map", cmd_map},
	{"ringbuf", cmd_ringbuf, 1, 1, "REF/MAP"},
	{"doctor", NULL, 0, 0, "no arguments"},
	{"load-insns", cmd_load_insns},
	{"check-insns", cmd_check_insns},
	{"net", cmd_net}, /* its own options and connection (net.c) */
};

int main(int argc, char **argv)
{
	static struct cli c;
	const struct command *cmd = NULL;
	char **args;
	int n_args, n_head, k;

	c.opts.sz = sizeof(c.opts);
	c.opts.globals = c.globals;
	c.opts.map_sizes = c.sizes;
	c.opts.programs = c.programs;
	c.opts.shares = c.shares;
	c.opts.freeze = c.freeze;

	k = parse_options(&c, argc, argv, true);
	if (k < 0)
		return EXIT_ERROR;
	if (k >= argc) {
		usage(stderr);
		return EXIT_ERROR;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (strcmp(argv[k], commands[i].name) == 0)
			cmd = &commands[i];
	if (!cmd) {
		fprintf(stderr, "bpfctl: unknown command \"%s\"\n", argv[k]);
		usage(stderr);
		return EXIT_ERROR;
	}
	if (cmd->run == cmd_net)
		return cmd_net(&c, NULL, argc - k, argv + k);
	args = argv + k;
	n_args = argc - k;
	if (cmd->run == cmd_run) {
		/*
		 * run [OPTIONS] OBJ [OPTIONS] [--] CMD...: options before OBJ, and
		 * between OBJ and CMD, where CMD starts at "--" or at the first
		 * argument that is not an option (a command named "-x" needs "--").
		 * An unknown option is refused here, before anything loads.
		 */
		k = parse_options(&c, n_args, args, true);
		if (k < 0)
			return EXIT_ERROR;
		args += k;
		n_args -= k;
		if (!c.opts.name && !c.system && n_args >= 1) {
			char *obj = args[0];

			/* Parse what follows OBJ, which stands in for argv[0] ("run" in messages).
			 */
			args[0] = (char *)"run";
			k = parse_options(&c, n_args, args, true);
			args[0] = obj;
			if (k < 0)
				return EXIT_ERROR;
			if (c.opts.name) {
				fprintf(stderr,
					"bpfctl: run takes an object file or --name REF, not "
					"both\n");
				return EXIT_ERROR;
			}
			/* OBJ goes right before CMD. */
			args[k - 1] = args[0];
			args += k - 1;
			n_args -= k - 1;
		}
	} else {
		/*
		 * Options anywhere up to "--". What follows it is attach's command,
		 * and for the other commands more arguments.
		 */
		for (n_head = 1; n_head < n_args && strcmp(args[n_head], "--") != 0; n_head++)
			;
		if (n_head < n_args) {
			c.dashdash = true;
			c.cmd = args + n_head + 1;
			c.n_cmd = n_args - n_head - 1;
		}
		k = parse_options(&c, n_head, args, false);
		if (k < 0)
			return EXIT_ERROR;
		if (c.dashdash && cmd->run != cmd_attach) {
			memmove(args + n_head, args + n_head + 1, (size_t)c.n_cmd * sizeof(char *));
			n_head += c.n_cmd;
			c.n_cmd = 0;
		}
		args += k;
		n_args = n_head - k;
	}

	if (cmd->args && (n_args < cmd->min_args || n_args > cmd->max_args)) {
		fprintf(stderr, "bpfctl: %s takes %s\n", cmd->name, cmd->args);
		return EXIT_ERROR;
	}
	if (!cmd->run) {
		/* doctor: reports whether the broker is reachable, so it runs without it too. */
		if (bpfbroker_connect(c.socket_path, &c.b) < 0)
			c.b = NULL;
		k = doctor_run(c.b, c.json);
		bpfbroker_close(c.b);
		return k;
	}
	k = bpfbroker_connect(c.socket_path, &c.b);
	if (k < 0) {
		fprintf(stderr, "bpfctl: cannot connect to the broker at %s: %s\n",
			c.socket_path ?: getenv(PROTO_SOCKET_ENV) ?: PROTO_DEFAULT_SOCKET,
			strerror(-k));
		return EXIT_ERROR;
	}
	k = cmd->run(&c, c.b, n_args, args);
	bpfbroker_close(c.b);
	return k;
}
