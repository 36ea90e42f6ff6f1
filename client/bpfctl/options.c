/* SPDX-License-Identifier: MIT */
/*
 * bpfctl's command line: the usage text, the option table shared by every
 * command, the options that fill the load request's arrays, and REF/NAME.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bpf.h>

#include "bpfctl.h"
#include "common/hex.h"
#include "common/parse.h"
#include "number.h"

void usage(FILE *f)
{
	fprintf(f,
		"Usage: bpfctl [OPTIONS] COMMAND ...\n\n"
		"Commands:\n"
		"  check OBJ.o               would the broker load OBJ for me? Verdicts per "
		"program\n"
		"                            and map, every reason with its policy key; exit\n"
		"                            status 0 if allowed, 1 if denied\n"
		"  run OBJ.o [OPTIONS] [--] CMD [ARG...]  load OBJ and exec CMD with the returned "
		"fds\n"
		"                            from fd 3 on (LISTEN_FDS, LISTEN_PID, "
		"LISTEN_FDNAMES=map/NAME:prog/NAME);\n"
		"                            CMD starts at -- or at the first argument after OBJ\n"
		"                            that is not an option\n"
		"  check|load|run --system NAME ...  the same with the system object NAME\n"
		"                            (installed by root, granted by the policy's\n"
		"                            \"objects\") instead of OBJ.o\n"
		"  policy                    show my effective policy\n"
		"  doctor                    what on this machine weakens the broker's guarantees\n"
		"                            (exit 1 if anything does)\n\n"
		"Named objects (they stay loaded; REF is NAME or OWNER/NAME):\n"
		"  load OBJ.o --name NAME [--share MAP:user:USER:MODE]... "
		"[--share MAP:group:GROUP:MODE]...\n"
		"                            load OBJ and keep it as NAME, granting maps to "
		"others\n"
		"                            (MODE ro, wo or rw; ring buffers are not shared)\n"
		"  load-insns FILE --type TYPE --name NAME [--attach-type TYPE] [--license L]\n"
		"      [--prog-name P]       load one program of raw struct bpf_insn (as "
		"container\n"
		"                            runtimes make device programs) and keep it as NAME;\n"
		"                            its program is NAME/P (P defaults to prog)\n"
		"  check-insns FILE --type TYPE [...]  would the broker load it? (exit 0 yes, 1 "
		"no)\n"
		"  list [--all | --user USER] [--shared]  my objects (or everyone's, a user's, "
		"or\n"
		"                            those shared with me)\n"
		"  show REF                  one object: programs, maps, links, shares\n"
		"  unload REF                detach, unpin and unload an object\n"
		"  run --name REF [--] CMD [ARG...]  exec CMD with the object's fds, as run "
		"does\n"
		"  attach REF/PROG cgroup PATH [--attach-type TYPE] [--pin [--protect]]\n"
		"      [-- CMD [ARG...]]\n"
		"  attach REF/PROG raw_tracepoint NAME --pin\n"
		"  attach REF/PROG tracepoint CATEGORY:NAME --pin\n"
		"  attach REF/PROG xdp IFNAME [--pin] [-- CMD [ARG...]]\n"
		"  attach REF/PROG tc IFNAME ingress|egress [--pin] [-- CMD [ARG...]]\n"
		"      (interfaces of your network namespace: attach.interfaces where it is\n"
		"      your own, attach.host_interfaces elsewhere)\n"
		"  attach REF/PROG uprobe BINARY:SYMBOL[+OFF] --pid PID [--retprobe] "
		"[--semaphore SYM] --pin\n"
		"      (BINARY:OFFSET: a file offset; PID: a process of yours, with "
		"no_new_privs;\n"
		"      --semaphore only in a binary you own)\n"
		"                            attach a program; with --pin the link stays until\n"
		"                            detach/unload, else CMD runs holding it as fd 3\n"
		"                            (LISTEN_FDNAMES=link/PROG) and it ends with CMD\n"
		"  detach REF/PROG [LINK_ID]  detach one link, or every pinned link of PROG\n"
		"  test-run REF/PROG [--data-in FILE] [--ctx-in FILE] [--repeat N]\n"
		"                            run PROG once (or N times) on the data given\n"
		"                            (at most %u and %u bytes)\n"
		"  map dump REF/MAP          every entry of a map\n"
		"  map lookup REF/MAP KEY    one entry\n"
		"  map update REF/MAP KEY VALUE [--noexist | --exist]  set an entry (per-CPU "
		"maps:\n"
		"                            VALUE for every CPU, or one for all)\n"
		"  map delete REF/MAP KEY    delete an entry\n"
		"                            KEY and VALUE are hex bytes (\"01 00 00 00\", "
		"\"0x01000000\");\n"
		"                            where the kernel refuses bpf() to you, the broker "
		"does\n"
		"                            the operations (--proxy: always)\n"
		"  ringbuf REF/MAP [--count N]  print a ring buffer's records in hex as they\n"
		"                            come (consuming them), until interrupted or N\n"
		"                            records\n\n"
		"Network sandboxing (systemd's settings; the system objects ip-firewall,\n"
		"restrict-ifaces and socket-bind, granted by the policy's \"objects\"):\n"
		"  net [--allow PREFIX]... [--deny PREFIX]... [--accounting] -- CMD [ARG...]\n"
		"                            run CMD in a new sub-cgroup of my own (delegated)\n"
		"                            cgroup with IPAddressAllow=/IPAddressDeny=\n"
		"                            (PREFIX: any, localhost, link-local, multicast,\n"
		"                            ADDRESS[/LENGTH], IPv4 or IPv6); --accounting prints\n"
		"                            what passed, to stderr, when CMD exits; exit status\n"
		"                            CMD's; what CMD leaves running is killed\n"
		"      [--restrict-ifaces [~]IFNAME...]  RestrictNetworkInterfaces= (~: deny "
		"list)\n"
		"      [--bind-allow RULE]... [--bind-deny RULE]...  "
		"SocketBindAllow=/SocketBindDeny=\n"
		"                            (RULE: [ipv4|ipv6:][tcp|udp:]PORT[-PORT]|any)\n"
		"  net [OPTIONS] --cgroup PATH  apply them to a cgroup I own, from outside it, "
		"and\n"
		"                            leave them (its processes cannot remove them)\n"
		"  net show [--cgroup PATH | --unit UNIT | TAG]  the objects and IP accounting of "
		"a\n"
		"                            cgroup (default: my own), a running --user unit (its\n"
		"                            invocation's, asked of my service manager) or a tag\n"
		"                            (exit 3: no such unit running, or no objects)\n"
		"  net list                  every tag of mine: its unit, objects, IP accounting\n"
		"  net remove [--cgroup PATH | TAG]  remove what net --cgroup applied\n\n"
		"Options:\n"
		"  --socket PATH             broker socket (default $%s or %s)\n"
		"  -j, --json                JSON output\n"
		"  --global NAME=HEX         set a global variable in .rodata/.data/.bss before "
		"load\n"
		"  --map-size NAME=N         set a map's max_entries before load\n"
		"  --map-key-size NAME=N, --map-value-size NAME=N  set a map's key or value size\n"
		"                            before load (a stack-trace map's depth; 0 for a\n"
		"                            ring buffer declared with a value type)\n"
		"  --inner-map OUTER=TYPE:KEY:VALUE:ENTRIES[:FLAGS]  the inner map of a map of\n"
		"                            maps declared without one (the broker creates it;\n"
		"                            FLAGS: BPF_F_* map flags, decimal or 0x hex)\n"
		"  --attach-target PROG=NAME  a tracing or lsm program's BTF attach target\n"
		"                            (e.g. a tp_btf program's tracepoint)\n"
		"  --freeze MAP              freeze MAP once loaded: no fd writes it from user\n"
		"                            space (repeatable); an ro grant of a frozen\n"
		"                            mmapable array can then be mapped\n"
		"  --program NAME[:TYPE[:ATTACH_TYPE]]  load only the programs named "
		"(repeatable),\n"
		"                            optionally setting their type and expected attach "
		"type\n"
		"  --object-name NAME        libbpf object name\n"
		"  --libbpf-log              on a failed load, also print libbpf's whole log\n"
		"  --name NAME               load: keep the object as NAME; run: use the named "
		"object\n"
		"  --share MAP:user:USER:MODE, --share MAP:group:GROUP:MODE\n"
		"                            load: grant MAP to a user or group (repeatable)\n"
		"  --all, --user USER        list: everyone's objects, or USER's (root or admin)\n"
		"  --shared                  list: objects others share with me\n"
		"  --attach-type TYPE        attach: cgroup attach type; load-insns: the\n"
		"                            program's expected attach type (libbpf's name,\n"
		"                            the kernel's, or a number)\n"
		"  --type TYPE               load-insns: program type (libbpf name)\n"
		"  --license LICENSE         load-insns: the program's license (default GPL)\n"
		"  --prog-name NAME          load-insns: the program's name (default prog)\n"
		"  --pin                     attach: pin the link under the object\n"
		"  --protect                 attach cgroup (with --pin): processes in the\n"
		"                            cgroup may not detach, unload or change it\n"
		"  --pid PID                 attach uprobe: the process to probe\n"
		"  --retprobe                attach uprobe: on return from the function\n"
		"  --semaphore SYM|OFFSET    attach uprobe: a USDT semaphore to count up\n"
		"  --data-in FILE, --ctx-in FILE, --repeat N  test-run input\n"
		"  --proxy                   map: have the broker do the operations even where "
		"you\n"
		"                            may use bpf() (also BPFBROKER_MAP_PROXY=1)\n"
		"  --noexist, --exist        map update: only add a new key, or only change an\n"
		"                            existing one (BPF_NOEXIST, BPF_EXIST)\n"
		"  -h, --help                show this help\n"
		"Exit status: 0 success, 1 denied by policy (or, for map, refused by the kernel "
		"or\n"
		"no such key), 2 other errors, 3 (net show) no such unit running or no objects.\n",
		BPFBROKER_TEST_RUN_MAX_DATA, BPFBROKER_TEST_RUN_MAX_CTX, PROTO_SOCKET_ENV,
		PROTO_DEFAULT_SOCKET);
}

static int parse_option(struct cli *c, int opt, char *arg)
{
	char *eq;

	switch (opt) {
	case 'G': {
		struct bpfbroker_global *g = &c->globals[c->opts.n_globals];
		uint8_t *value;
		size_t size;

		if (c->opts.n_globals >= PROTO_MAX_CONFIG_ITEMS || !(eq = strchr(arg, '=')))
			goto bad;
		*eq = '\0';
		if (!eq[1] || hex_decode(eq + 1, strlen(eq + 1), &value, &size) < 0)
			goto bad;
		*g = (struct bpfbroker_global){.name = arg, .value = value, .size = size};
		c->opts.n_globals++;
		return 0;
	}
	case 'M': {
		const char *name;
		uint64_t v;

		if (c->opts.n_map_sizes >= PROTO_MAX_CONFIG_ITEMS ||
		    bpfctl_parse_assignment(arg, UINT32_MAX, &name, &v) < 0 || v == 0)
			goto bad;
		c->sizes[c->opts.n_map_sizes++] =
			(struct bpfbroker_map_size){.name = name, .max_entries = (uint32_t)v};
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
	case OPT_SHARE: {
		/* MAP:user:USER:MODE or MAP:group:GROUP:MODE */
		struct bpfbroker_share *sh = &c->shares[c->opts.n_shares];
		char *kind, *who, *mode;

		if (c->opts.n_shares >= PROTO_MAX_SHARES || !(kind = strchr(arg, ':')) ||
		    !(mode = strrchr(arg, ':')) || mode == kind)
			goto bad_share;
		*kind++ = '\0';
		*mode++ = '\0';
		who = strchr(kind, ':');
		if (!who || !*arg || !who[1])
			goto bad_share;
		*who++ = '\0';
		*sh = (struct bpfbroker_share){.map = arg};
		if (strcmp(kind, "user") == 0)
			sh->user = who;
		else if (strcmp(kind, "group") == 0)
			sh->group = who;
		else
			goto bad_share;
		/* consume too, for the broker to say why a ring buffer is not shared */
		sh->access = strcmp(mode, "ro") == 0	    ? BPFBROKER_ACCESS_RO
			     : strcmp(mode, "wo") == 0	    ? BPFBROKER_ACCESS_WO
			     : strcmp(mode, "rw") == 0	    ? BPFBROKER_ACCESS_RW
			     : strcmp(mode, "consume") == 0 ? BPFBROKER_ACCESS_CONSUME
							    : BPFBROKER_ACCESS_NONE;
		if (sh->access == BPFBROKER_ACCESS_NONE)
			goto bad_share;
		c->opts.n_shares++;
		return 0;
	bad_share:
		if (c->opts.n_shares >= PROTO_MAX_SHARES)
			fprintf(stderr, "bpfctl: at most %d --share options\n", PROTO_MAX_SHARES);
		else
			fprintf(stderr,
				"bpfctl: --share takes MAP:user:USER:MODE or MAP:group:GROUP:MODE "
				"with MODE ro, wo or rw\n");
		return -EINVAL;
	}
	case OPT_REPEAT: {
		uint64_t v;

		if (parse_u64(arg, BPFBROKER_TEST_RUN_MAX_REPEAT, &v) < 0 || v == 0) {
			fprintf(stderr, "bpfctl: --repeat takes a number from 1 to %u\n",
				BPFBROKER_TEST_RUN_MAX_REPEAT);
			return -EINVAL;
		}
		c->repeat = (uint32_t)v;
		return 0;
	}
	case OPT_FREEZE:
		if (c->opts.n_freeze >= PROTO_MAX_CONFIG_ITEMS || !*arg)
			goto bad;
		c->freeze[c->opts.n_freeze++] = arg;
		return 0;
	case OPT_COUNT: {
		uint64_t v;

		if (parse_u64(arg, UINT64_MAX, &v) < 0 || v == 0)
			goto bad;
		c->count = v;
		return 0;
	}
	}
bad:
	fprintf(stderr, "bpfctl: invalid option value \"%s\"\n", arg);
	return -EINVAL;
}

bool cli_common_option(struct cli *c, int opt, const char *arg)
{
	switch (opt) {
	case 'S':
		c->socket_path = arg;
		return true;
	case 'j':
		c->json = true;
		return true;
	case 'h':
		usage(stdout);
		exit(EXIT_SUCCESS);
	default:
		return false;
	}
}

/* Parse options; stop_at_positional keeps everything after the first positional untouched. */
int parse_options(struct cli *c, int argc, char **argv, bool stop_at_positional)
{
	static const struct option longopts[] = {
		{"global", required_argument, NULL, 'G'},
		{"map-size", required_argument, NULL, 'M'},
		{"program", required_argument, NULL, 'P'},
		{"object-name", required_argument, NULL, 'N'},
		{"name", required_argument, NULL, OPT_NAME},
		{"system", required_argument, NULL, OPT_SYSTEM},
		{"share", required_argument, NULL, OPT_SHARE},
		{"all", no_argument, NULL, OPT_ALL},
		{"user", required_argument, NULL, OPT_USER},
		{"shared", no_argument, NULL, OPT_SHARED},
		{"attach-type", required_argument, NULL, OPT_ATTACH_TYPE},
		{"pin", no_argument, NULL, OPT_PIN},
		{"protect", no_argument, NULL, OPT_PROTECT},
		{"data-in", required_argument, NULL, OPT_DATA_IN},
		{"ctx-in", required_argument, NULL, OPT_CTX_IN},
		{"repeat", required_argument, NULL, OPT_REPEAT},
		{"type", required_argument, NULL, OPT_TYPE},
		{"license", required_argument, NULL, OPT_LICENSE},
		{"prog-name", required_argument, NULL, OPT_PROG_NAME},
		{"proxy", no_argument, NULL, OPT_PROXY},
		{"exist", no_argument, NULL, OPT_EXIST},
		{"noexist", no_argument, NULL, OPT_NOEXIST},
		{"freeze", required_argument, NULL, OPT_FREEZE},
		{"count", required_argument, NULL, OPT_COUNT},
		{"pid", required_argument, NULL, OPT_PID},
		{"retprobe", no_argument, NULL, OPT_RETPROBE},
		{"semaphore", required_argument, NULL, OPT_SEMAPHORE},
		{"libbpf-log", no_argument, NULL, OPT_LIBBPF_LOG},
		BPFCTL_SETUP_LONGOPTS,
		BPFCTL_COMMON_LONGOPTS,
		{},
	};
	int opt;

	optind = 0; /* glibc: full re-initialization */
	while ((opt = getopt_long(argc, argv, stop_at_positional ? "+jh" : "jh", longopts, NULL)) >=
	       0) {
		if (cli_common_option(c, opt, optarg))
			continue;
		switch (opt) {
		case 'N':
			c->opts.object_name = optarg;
			break;
		case OPT_NAME:
			c->opts.name = optarg;
			break;
		case OPT_SYSTEM:
			c->system = optarg;
			break;
		case OPT_ALL:
			c->list.all = true;
			break;
		case OPT_USER:
			c->list.user = optarg;
			break;
		case OPT_SHARED:
			c->list.shared = true;
			break;
		case OPT_ATTACH_TYPE:
			c->attach_type = optarg;
			break;
		case OPT_PIN:
			c->pin = true;
			break;
		case OPT_PROTECT:
			c->protect = true;
			break;
		case OPT_DATA_IN:
			c->data_in = optarg;
			break;
		case OPT_CTX_IN:
			c->ctx_in = optarg;
			break;
		case OPT_TYPE:
			c->prog_type = optarg;
			break;
		case OPT_LICENSE:
			c->license = optarg;
			break;
		case OPT_PROG_NAME:
			c->prog_name = optarg;
			break;
		case OPT_PROXY:
			c->map_proxy = true;
			break;
		case OPT_EXIST:
		case OPT_NOEXIST:
			if (c->update_flags) {
				fprintf(stderr,
					"bpfctl: --exist and --noexist exclude each other\n");
				return -EINVAL;
			}
			c->update_flags = opt == OPT_EXIST ? BPF_EXIST : BPF_NOEXIST;
			break;
		case OPT_PID:
			c->pid = optarg;
			break;
		case OPT_RETPROBE:
			c->retprobe = true;
			break;
		case OPT_SEMAPHORE:
			c->semaphore = optarg;
			break;
		case OPT_LIBBPF_LOG:
			c->opts.libbpf_log = true;
			break;
		case 'G':
		case 'M':
		case 'P':
		case OPT_SHARE:
		case OPT_REPEAT:
		case OPT_FREEZE:
		case OPT_COUNT:
			if (parse_option(c, opt, optarg) < 0)
				return -EINVAL;
			break;
		default:
			if (bpfctl_setup_is_option(opt)) {
				if (bpfctl_setup_option(&c->setup, &c->opts, opt, optarg) < 0)
					return -EINVAL;
				break;
			}
			usage(stderr);
			return -EINVAL;
		}
	}
	return optind;
}

/* Split "REF/NAME" at the last '/' (REF may itself be OWNER/NAME). */
int split_ref(char *arg, const char *what, char **ret_ref, char **ret_name)
{
	char *slash = strrchr(arg, '/');

	if (!slash || slash == arg || !slash[1]) {
		fprintf(stderr,
			"bpfctl: expected REF/%s (REF being NAME or OWNER/NAME), not \"%s\"\n",
			what, arg);
		return -EINVAL;
	}
	*slash = '\0';
	*ret_ref = arg;
	*ret_name = slash + 1;
	return 0;
}
