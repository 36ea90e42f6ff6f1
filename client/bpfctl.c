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
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "common/macro.h"
#include "bpfctl_setup.h"
#include "doctor.h"
#include "libbpfbroker.h"
#include "proto/proto.h"

#define EXIT_DENIED 1
#define EXIT_ERROR 2
#define SD_LISTEN_FDS_START 3

/* Long options without a short form. */
enum {
	OPT_NAME = 0x100,
	OPT_SHARE,
	OPT_ALL,
	OPT_USER,
	OPT_SHARED,
	OPT_ATTACH_TYPE,
	OPT_PIN,
	OPT_DATA_IN,
	OPT_CTX_IN,
	OPT_REPEAT,
	OPT_TYPE,
	OPT_LICENSE,
	OPT_PROG_NAME,
	OPT_PROXY,
	OPT_EXIST,
	OPT_NOEXIST,
	OPT_FREEZE,
	OPT_COUNT,
	OPT_PID,
	OPT_RETPROBE,
	OPT_SEMAPHORE,
	OPT_LIBBPF_LOG,
};

struct cli {
	const char *socket_path;
	bool json;
	struct bpfbroker *b; /* NULL once closed (before exec) */
	struct bpfbroker_load_opts opts;
	struct bpfbroker_global globals[PROTO_MAX_CONFIG_ITEMS];
	struct bpfbroker_map_size sizes[PROTO_MAX_CONFIG_ITEMS];
	struct bpfbroker_program_select programs[PROTO_MAX_CONFIG_ITEMS];
	struct bpfbroker_share shares[PROTO_MAX_SHARES];
	const char *freeze[PROTO_MAX_CONFIG_ITEMS];
	struct bpfctl_setup setup; /* --map-key-size and the like (bpfctl_setup.h) */
	struct bpfbroker_list_opts list;
	const char *attach_type, *data_in, *ctx_in;
	const char *prog_type, *license, *prog_name; /* load-insns, check-insns */
	const char *pid, *semaphore; /* attach uprobe */
	bool retprobe;
	bool pin;
	bool map_proxy; /* map: through the broker even where bpf() works */
	uint64_t update_flags; /* map update: BPF_ANY, BPF_NOEXIST or BPF_EXIST */
	uint32_t repeat;
	uint64_t count; /* ringbuf: stop after this many records (0: never) */
	/* What followed "--" (attach: the command to run holding the link). */
	bool dashdash;
	char **cmd;
	int n_cmd;
};

static void usage(FILE *f)
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
		"  attach REF/PROG cgroup PATH [--attach-type TYPE] [--pin] [-- CMD [ARG...]]\n"
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
		"no such key), 2 other errors.\n",
		BPFBROKER_TEST_RUN_MAX_DATA, BPFBROKER_TEST_RUN_MAX_CTX, PROTO_SOCKET_ENV,
		PROTO_DEFAULT_SOCKET);
}

static int die_errno(int err, const char *what)
{
	fprintf(stderr, "bpfctl: %s: %s\n", what, strerror(-err));
	return EXIT_ERROR;
}

/*
 * Every reason, one a line, with its policy key. The broker's reasons name
 * their key already; one that doesn't (an older broker's) gets it added.
 * skip: a reason printed already (the error's message), or NULL.
 */
static void print_reasons(FILE *f, const char *prefix, const char *const *reasons,
			  const char *const *keys, const char *skip)
{
	for (size_t i = 0; reasons && reasons[i]; i++) {
		const char *key = keys && keys[i] ? keys[i] : "";

		if (skip && strcmp(reasons[i], skip) == 0)
			continue;
		fprintf(f, "%s%s", prefix, reasons[i]);
		if (*key && !strstr(reasons[i], key))
			fprintf(f, " (policy key %s)", key);
		fputc('\n', f);
	}
}

static int report_error(struct cli *c, int k, struct bpfbroker_error *e, const char *what)
{
	if (!e)
		return die_errno(k, what);
	if (c->json) {
		printf("{\"error\":{\"code\":\"%s\",\"errno\":%d}}\n", e->code, e->err);
	}
	fprintf(stderr, "bpfctl: %s\n", e->message);
	print_reasons(stderr, "bpfctl: ", e->reasons, e->reason_keys, e->message);
	if (e->verifier_log)
		fprintf(stderr, "--- verifier log ---\n%s\n--- end of verifier log ---\n",
			e->verifier_log);
	if (e->libbpf_log)
		fprintf(stderr, "--- libbpf log ---\n%s--- end of libbpf log ---\n", e->libbpf_log);
	/* Refusals (policy or quota) are 1, like a denied check; other failures 2. */
	k = strcmp(e->code, PROTO_E_DENIED) == 0 || strcmp(e->code, PROTO_E_QUOTA) == 0
		    ? EXIT_DENIED
		    : EXIT_ERROR;
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
		unsigned long v;

		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || *end || end == arg || v == 0 || v > BPFBROKER_TEST_RUN_MAX_REPEAT) {
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
		unsigned long long v;

		errno = 0;
		v = strtoull(arg, &end, 10);
		if (errno || *end || end == arg || v == 0)
			goto bad;
		c->count = v;
		return 0;
	}
	}
bad:
	fprintf(stderr, "bpfctl: invalid option value \"%s\"\n", arg);
	return -EINVAL;
}

/* A ring buffer's max_entries is its size in bytes. */
static bool map_type_sized_in_bytes(const char *type)
{
	return strcmp(type, "ringbuf") == 0 || strcmp(type, "user_ringbuf") == 0;
}

static void print_check(const struct bpfbroker_result *r)
{
	printf("%s\n", r->allowed ? "allowed" : "denied");
	for (size_t i = 0; i < r->n_programs; i++) {
		const struct bpfbroker_program *p = &r->programs[i];

		/*
		 * Programs left out by --program are neither decided on nor
		 * loaded; nor are libbpf's opt-in SEC("?...") ones unless named.
		 */
		printf("program %s (%s, %u insns): %s\n", p->name, p->type, p->insns,
		       !bpfbroker_result_program_selected(r, p->name) ? "not selected"
		       : !bpfbroker_result_program_autoload(r, p->name)
			       ? "not loaded (autoload off)"
		       : strcmp(p->verdict, "allowed") == 0 ? "allowed"
							    : "denied");
		printf("  helpers:");
		for (const char *const *h = p->helpers; h && *h; h++)
			printf(" %s", *h);
		for (const char *const *h = p->kfuncs; h && *h; h++)
			printf(" kfunc:%s", *h);
		printf("\n");
	}
	for (size_t i = 0; i < r->n_maps; i++) {
		const struct bpfbroker_map *m = &r->maps[i];

		printf("map %s (%s, %u %s): access %s; %s\n", m->name, m->type, m->max_entries,
		       map_type_sized_in_bytes(m->type) ? "bytes" : "entries",
		       bpfbroker_access_to_string(m->access),
		       strcmp(m->verdict, "allowed") == 0 ? "allowed" : "denied");
	}
	/* Every reason, each with the policy key that would have to change. */
	if (r->reasons && r->reasons[0]) {
		printf("reasons:\n");
		print_reasons(stdout, "  ", r->reasons, r->reason_keys, NULL);
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

/* Close the broker connection and exec argv with fds at 3, 4, ... (systemd's LISTEN_FDS). */
static int exec_holding(struct cli *c, int *fds, size_t n, const char *names, char **argv)
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
	return exec_holding(c, fds, n, names, argv);
}

static int cmd_run(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	int k;

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
	if (argc < 2) {
		fprintf(stderr, "bpfctl: run takes an object file and a command\n");
		return EXIT_ERROR;
	}
	k = bpfbroker_load_file(b, argv[0], &c->opts, &r, &e);
	if (k < 0)
		return report_error(c, k, e, argv[0]);
	return run_with_result(c, r, argv + 1);
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

/* ---- named objects ---- */

/* Split "REF/NAME" at the last '/' (REF may itself be OWNER/NAME). */
static int split_ref(char *arg, const char *what, char **ret_ref, char **ret_name)
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

static void print_json_value(json_object *o)
{
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
								 JSON_C_TO_STRING_SPACED));
}

/* A field as text (numbers too), or dflt. */
static const char *field(json_object *o, const char *key, const char *dflt)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return dflt;
	return json_object_get_string(v);
}

static bool field_bool(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

static json_object *field_array(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_array))
		return NULL;
	return v;
}

/* OWNER/NAME loaded DATE, then one line per program, map, link and share. */
static void print_object(json_object *o)
{
	json_object *a, *v;
	char date[64] = "?";
	struct tm tm;
	time_t t;

	if (json_object_object_get_ex(o, "loaded_at", &v) &&
	    json_object_is_type(v, json_type_int)) {
		t = (time_t)json_object_get_int64(v);
		if (localtime_r(&t, &tm))
			strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S %z", &tm);
	}
	printf("%s/%s loaded %s\n", field(o, "owner_name", NULL) ?: field(o, "owner", "?"),
	       field(o, "name", "?"), date);
	a = field_array(o, "programs");
	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		json_object *p = json_object_array_get_idx(a, i);

		printf("  program %-24s %-20s id %s%s\n", field(p, "name", "?"),
		       field(p, "type", "?"), field(p, "id", "-"),
		       field_bool(p, "test_run_only") ? "  test-run only" : "");
	}
	a = field_array(o, "maps");
	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		json_object *m = json_object_array_get_idx(a, i);

		printf("  map     %-24s %-20s %s\n", field(m, "name", "?"), field(m, "type", "?"),
		       field(m, "access", "none"));
	}
	a = field_array(o, "links");
	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		json_object *l = json_object_array_get_idx(a, i);

		printf("  link    %-6s %-17s %-20s %s%s\n", field(l, "id", "?"),
		       field(l, "program", "?"), field(l, "type", "?"), field(l, "target", "?"),
		       field_bool(l, "pinned") ? " (pinned)" : "");
	}
	a = field_array(o, "shares");
	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		json_object *sh = json_object_array_get_idx(a, i);
		bool user = field(sh, "user", NULL) != NULL;

		printf("  share   %-24s %s %s %s\n", field(sh, "map", "?"), user ? "user" : "group",
		       user ? field(sh, "user", "?") : field(sh, "group", "?"),
		       field(sh, "access", "?"));
	}
}

static json_object *parse_reply_json(const char *text)
{
	json_object *o = json_tokener_parse(text);

	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		fprintf(stderr, "bpfctl: the broker's reply is not a JSON object\n");
		return NULL;
	}
	return o;
}

static void print_loaded(struct cli *c, struct bpfbroker_result *r)
{
	if (c->json) {
		printf("%s\n", r->json);
	} else {
		printf("loaded %s\n", r->name ?: c->opts.name);
		for (size_t i = 0; i < r->n_programs; i++) {
			const struct bpfbroker_program *p = &r->programs[i];

			if (p->loaded)
				printf("  program %-24s %-20s id %u\n", p->name, p->type, p->id);
		}
		for (size_t i = 0; i < r->n_maps; i++) {
			const struct bpfbroker_map *m = &r->maps[i];

			printf("  map     %-24s %-20s %s\n", m->name, m->type,
			       bpfbroker_access_to_string(m->access));
		}
	}
}

static int cmd_load(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	int k;

	if (argc != 1 || !c->opts.name) {
		fprintf(stderr, "bpfctl: load takes one object file and --name NAME\n");
		return EXIT_ERROR;
	}
	k = bpfbroker_load_file(b, argv[0], &c->opts, &r, &e);
	if (k < 0)
		return report_error(c, k, e, argv[0]);
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

static int cmd_load_insns(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	return insns_command(c, b, argc, argv, false);
}

static int cmd_check_insns(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	return insns_command(c, b, argc, argv, true);
}

static int cmd_list(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	struct bpfbroker_error *e = NULL;
	_cleanup_free_ char *text = NULL;
	json_object *o, *objects;
	size_t n;
	int k;

	if (argc != 0) {
		fprintf(stderr,
			"bpfctl: list takes no arguments, only --all, --user and --shared\n");
		return EXIT_ERROR;
	}
	if (c->list.all && c->list.user) {
		fprintf(stderr, "bpfctl: list takes --all or --user, not both\n");
		return EXIT_ERROR;
	}
	c->list.sz = sizeof(c->list);
	k = bpfbroker_list(b, &c->list, &text, &e);
	if (k < 0)
		return report_error(c, k, e, "list");
	if (c->json) {
		printf("%s\n", text);
		return EXIT_SUCCESS;
	}
	o = parse_reply_json(text);
	if (!o)
		return EXIT_ERROR;
	objects = field_array(o, "objects");
	n = objects ? json_object_array_length(objects) : 0;
	if (n == 0)
		printf("no named objects\n");
	for (size_t i = 0; i < n; i++)
		print_object(json_object_array_get_idx(objects, i));
	json_object_put(o);
	return EXIT_SUCCESS;
}

static int cmd_show(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	struct bpfbroker_error *e = NULL;
	_cleanup_free_ char *text = NULL;
	json_object *o, *object;
	int k;

	if (argc != 1) {
		fprintf(stderr, "bpfctl: show takes one object (NAME or OWNER/NAME)\n");
		return EXIT_ERROR;
	}
	k = bpfbroker_show(b, argv[0], &text, &e);
	if (k < 0)
		return report_error(c, k, e, argv[0]);
	if (c->json) {
		printf("%s\n", text);
		return EXIT_SUCCESS;
	}
	o = parse_reply_json(text);
	if (!o)
		return EXIT_ERROR;
	if (json_object_object_get_ex(o, "object", &object))
		print_object(object);
	json_object_put(o);
	return EXIT_SUCCESS;
}

static int cmd_unload(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	struct bpfbroker_error *e = NULL;
	int k;

	if (argc != 1) {
		fprintf(stderr, "bpfctl: unload takes one object (NAME or OWNER/NAME)\n");
		return EXIT_ERROR;
	}
	k = bpfbroker_unload(b, argv[0], &e);
	if (k < 0)
		return report_error(c, k, e, argv[0]);
	if (c->json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "unloaded", json_object_new_string(argv[0]));
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	} else {
		printf("unloaded %s\n", argv[0]);
	}
	return EXIT_SUCCESS;
}

/* A number as strtoull(base 0) reads it (0x... hex), whole. */
static int parse_u64(const char *s, uint64_t *ret)
{
	unsigned long long v;
	char *end;

	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > INT64_MAX)
		return -EINVAL;
	*ret = v;
	return 0;
}

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
	if (!c->pid || parse_u64(c->pid, &pid) < 0 || pid == 0 || pid > INT32_MAX) {
		fprintf(stderr, "bpfctl: a uprobe needs --pid PID, the process to probe\n");
		return -EINVAL;
	}
	*colon = '\0';
	loc = colon + 1;
	if (*loc >= '0' && *loc <= '9') {
		if (parse_u64(loc, &o->uprobe_offset) < 0) {
			fprintf(stderr, "bpfctl: bad file offset \"%s\"\n", loc);
			return -EINVAL;
		}
	} else {
		plus = strchr(loc, '+');
		if (plus) {
			*plus = '\0';
			if (parse_u64(plus + 1, &o->uprobe_offset) < 0) {
				fprintf(stderr, "bpfctl: bad offset \"%s\"\n", plus + 1);
				return -EINVAL;
			}
		}
		o->name = loc;
	}
	if (c->semaphore) {
		if (*c->semaphore >= '0' && *c->semaphore <= '9') {
			if (parse_u64(c->semaphore, &o->semaphore_offset) < 0 ||
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

static int cmd_attach(struct cli *c, struct bpfbroker *b, int argc, char **argv)
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

static int cmd_detach(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	struct bpfbroker_error *e = NULL;
	_cleanup_free_ uint32_t *ids = NULL;
	unsigned long link = 0;
	char *ref, *prog, *end;
	size_t n = 0;
	int k;

	if (argc < 1 || argc > 2) {
		fprintf(stderr, "bpfctl: detach takes REF/PROG and optionally a link id\n");
		return EXIT_ERROR;
	}
	if (argc == 2) {
		errno = 0;
		link = strtoul(argv[1], &end, 10);
		if (errno || *end || end == argv[1] || link == 0 || link > UINT32_MAX) {
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

/* Read all of path, at most max bytes. */
static int read_bounded(const char *path, size_t max, uint8_t **ret, size_t *ret_size)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	_cleanup_free_ uint8_t *buf = NULL;
	size_t size = 0;

	if (fd < 0)
		return negative_errno();
	buf = malloc(max + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read(fd, buf + size, max + 1 - size);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return negative_errno();
		if (n == 0)
			break;
		size += (size_t)n;
		if (size > max)
			return -EFBIG;
	}
	*ret = TAKE_PTR(buf);
	*ret_size = size;
	return 0;
}

static int read_input(const char *option, const char *path, size_t max, uint8_t **ret,
		      size_t *ret_size)
{
	int k = read_bounded(path, max, ret, ret_size);

	if (k == -EFBIG)
		fprintf(stderr, "bpfctl: %s %s: larger than %zu bytes, the most a test run takes\n",
			option, path, max);
	else if (k < 0)
		fprintf(stderr, "bpfctl: %s %s: %s\n", option, path, strerror(-k));
	return k;
}

static int cmd_test_run(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	struct bpfbroker_test_run_opts o = {.sz = sizeof(o), .repeat = c->repeat};
	struct bpfbroker_test_run_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	_cleanup_free_ uint8_t *data = NULL, *ctx = NULL;
	_cleanup_free_ char *hex = NULL;
	char *ref, *prog;
	int k;

	if (argc != 1) {
		fprintf(stderr, "bpfctl: test-run takes REF/PROG\n");
		return EXIT_ERROR;
	}
	if (split_ref(argv[0], "PROG", &ref, &prog) < 0)
		return EXIT_ERROR;
	o.object = ref;
	o.program = prog;
	if (c->data_in && read_input("--data-in", c->data_in, BPFBROKER_TEST_RUN_MAX_DATA, &data,
				     &o.data_in_size) < 0)
		return EXIT_ERROR;
	if (c->ctx_in &&
	    read_input("--ctx-in", c->ctx_in, BPFBROKER_TEST_RUN_MAX_CTX, &ctx, &o.ctx_in_size) < 0)
		return EXIT_ERROR;
	o.data_in = data;
	o.ctx_in = ctx;
	k = bpfbroker_test_run(b, &o, &r, &e);
	if (k < 0)
		return report_error(c, k, e, prog);
	hex = proto_hex_encode(r->data_out, r->data_out_size);
	if (!hex) {
		bpfbroker_test_run_result_free(r);
		return die_errno(-ENOMEM, "test-run");
	}
	if (c->json)
		printf("{\"retval\":%" PRId64 ",\"duration_ns\":%" PRIu64 ",\"data_out\":\"%s\"}\n",
		       r->retval, r->duration_ns, hex);
	else
		printf("retval %" PRId64 "\nduration %" PRIu64 " ns\ndata_out %s\n", r->retval,
		       r->duration_ns, *hex ? hex : "(empty)");
	bpfbroker_test_run_result_free(r);
	return EXIT_SUCCESS;
}

/* ---- map access ---- */

struct map_ctx {
	struct cli *c;
	const char *name;
	struct bpfbroker_map_handle *h;
	const struct bpfbroker_map_info *m;
	bool percpu;
	unsigned n_cpus; /* value slots: 1, or the possible CPUs for per-CPU maps */
	size_t slot; /* bytes per slot */
	struct btf *btf; /* or NULL: hex only */
	json_object *out; /* -j: the entries */
};

/* The object's BTF, from the broker (its fd, or its bytes when proxied). NULL if that fails. */
static struct btf *map_btf(struct map_ctx *x)
{
	_cleanup_free_ void *data = NULL;
	struct bpfbroker_error *e = NULL;
	struct btf *btf;
	size_t size = 0;

	if (!x->m->btf_key_type_id && !x->m->btf_value_type_id)
		return NULL;
	if (bpfbroker_map_btf(x->h, &data, &size, &e) < 0 || size > UINT32_MAX) {
		bpfbroker_error_free(e);
		return NULL;
	}
	btf = btf__new(data, (uint32_t)size);
	return libbpf_get_error(btf) ? NULL : btf;
}

static void vprintf_to(void *ctx, const char *fmt, va_list ap)
{
	vfprintf(ctx, fmt, ap);
}

/*
 * Make btf_dump's compact output easier to read: drop the type casts in front
 * of values ("(int)3" -> "3") and the trailing commas, and space the commas.
 */
static void tidy_btf(char *s)
{
	char *w = s, quote = 0;

	for (char *r = s; *r; r++) {
		if (quote) {
			*w++ = *r;
			if (*r == '\\' && r[1])
				*w++ = *++r;
			else if (*r == quote)
				quote = 0;
			continue;
		}
		if (*r == '\'' || *r == '"') {
			quote = *w++ = *r;
			continue;
		}
		if (*r == '(' && (w == s || strchr("=[{, ", w[-1]))) {
			size_t n =
				strspn(r + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					      "0123456789_ *[]");

			if (r[1 + n] == ')' && r[2 + n]) {
				r += 1 + n;
				continue;
			}
		}
		if (*r == ',' && (r[1] == '}' || r[1] == ']'))
			continue;
		*w++ = *r;
		if (*r == ',' && r[1] != ' ')
			*w++ = ' ';
	}
	*w = '\0';
}

/* Format data as type id, or NULL (then the caller shows hex). */
static char *format_btf(struct btf *btf, uint32_t id, const void *data, size_t size)
{
	LIBBPF_OPTS(btf_dump_type_data_opts, opts, .compact = true, .emit_zeroes = true);
	struct btf_dump *d;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int k;

	if (!btf || !id)
		return NULL;
	f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	d = btf_dump__new(btf, vprintf_to, f, NULL);
	k = d ? btf_dump__dump_type_data(d, id, data, size, &opts) : -EINVAL;
	btf_dump__free(d);
	if (fclose(f) != 0 || k < 0) {
		free(text);
		return NULL;
	}
	tidy_btf(text);
	return text;
}

/* "00 01 02" */
static char *format_hex(const uint8_t *buf, size_t size)
{
	char *s = malloc(size ? size * 3 : 1);

	if (!s)
		return NULL;
	s[0] = '\0';
	for (size_t i = 0; i < size; i++)
		sprintf(s + 3 * i, i + 1 < size ? "%02x " : "%02x", buf[i]);
	return s;
}

/* Hex bytes as typed by people: optional spaces, optional 0x in front of each group. */
static int parse_hex(const char *what, const char *arg, uint8_t *out, size_t want)
{
	size_t n = 0, digits = 0;
	bool start = true;
	int hi = 0;

	for (const char *p = arg; *p; p++) {
		int v;

		if (*p == ' ' || *p == '\t') {
			start = true;
			continue;
		}
		if (start && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
			p++;
			start = false;
			continue;
		}
		start = false;
		v = *p >= '0' && *p <= '9'   ? *p - '0'
		    : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
		    : *p >= 'A' && *p <= 'F' ? *p - 'A' + 10
					     : -1;
		if (v < 0) {
			fprintf(stderr, "bpfctl: %s \"%s\": not hex bytes\n", what, arg);
			return -EINVAL;
		}
		if (digits++ % 2 == 0) {
			hi = v;
			continue;
		}
		if (n < want)
			out[n] = (uint8_t)(hi << 4 | v);
		n++;
	}
	if (digits % 2) {
		fprintf(stderr, "bpfctl: %s \"%s\": odd number of hex digits\n", what, arg);
		return -EINVAL;
	}
	return (int)n;
}

static int parse_sized(const char *what, const char *arg, uint8_t *out, size_t want,
		       const char *map)
{
	int n = parse_hex(what, arg, out, want);

	if (n >= 0 && (size_t)n != want) {
		fprintf(stderr, "bpfctl: %s is %d bytes, but map %s takes %zu-byte %ss\n", what, n,
			map, want, what);
		return -EINVAL;
	}
	return n;
}

static json_object *json_hex(const uint8_t *buf, size_t size)
{
	_cleanup_free_ char *hex = proto_hex_encode(buf, size);

	return hex ? json_object_new_string(hex) : NULL;
}

/* One line (per CPU slot, for per-CPU maps) or one JSON object per entry. */
static int print_entry(struct map_ctx *x, const uint8_t *key, const uint8_t *value)
{
	_cleanup_free_ char *khex = format_hex(key, x->m->key_size);
	_cleanup_free_ char *kfmt = format_btf(x->btf, x->m->btf_key_type_id, key, x->m->key_size);
	json_object *o = NULL, *vals = NULL, *fvals = NULL, *fmt = NULL;

	if (!khex)
		return -ENOMEM;
	if (x->out) {
		o = json_object_new_object();
		if (!o)
			return -ENOMEM;
		json_object_array_add(x->out, o);
		json_object_object_add(o, "key", json_hex(key, x->m->key_size));
		if (x->percpu) {
			vals = json_object_new_array();
			json_object_object_add(o, "values", vals);
		}
		if (x->btf) {
			fmt = json_object_new_object();
			if (kfmt)
				json_object_object_add(fmt, "key", json_object_new_string(kfmt));
			if (x->percpu) {
				fvals = json_object_new_array();
				json_object_object_add(fmt, "values", fvals);
			}
		}
	} else if (x->percpu) {
		printf("key: %s\n", kfmt ?: khex);
	}
	for (unsigned cpu = 0; cpu < x->n_cpus; cpu++) {
		const uint8_t *v = value + cpu * x->slot;
		_cleanup_free_ char *vhex = format_hex(v, x->m->value_size);
		_cleanup_free_ char *vfmt =
			format_btf(x->btf, x->m->btf_value_type_id, v, x->m->value_size);

		if (!vhex)
			return -ENOMEM;
		if (o && x->percpu) {
			json_object_array_add(vals, json_hex(v, x->m->value_size));
			if (fvals)
				json_object_array_add(fvals, vfmt ? json_object_new_string(vfmt)
								  : json_object_new_null());
		} else if (o) {
			json_object_object_add(o, "value", json_hex(v, x->m->value_size));
			if (fmt && vfmt)
				json_object_object_add(fmt, "value", json_object_new_string(vfmt));
		} else if (x->percpu) {
			printf("  cpu %u: value: %s\n", cpu, vfmt ?: vhex);
		} else {
			printf("key: %s  value: %s\n", kfmt ?: khex, vfmt ?: vhex);
		}
	}
	if (fmt)
		json_object_object_add(o, "formatted", fmt); /* after the hex */
	return 0;
}

/* map's exit status for a broker's error: refusals and absences are 1, like a denied check. */
static int map_error_status(const struct bpfbroker_error *e)
{
	return strcmp(e->code, PROTO_E_DENIED) == 0 || strcmp(e->code, PROTO_E_LOAD) == 0 ||
			       strcmp(e->code, PROTO_E_NOT_FOUND) == 0
		       ? EXIT_DENIED
		       : EXIT_ERROR;
}

/* Report a failed map operation (e: the broker's answer, when proxied); the exit status. */
static int map_failed(struct map_ctx *x, const char *op, int k, struct bpfbroker_error *e)
{
	bool writes = strcmp(op, "update") == 0 || strcmp(op, "delete") == 0;

	if (e) {
		int status = map_error_status(e);

		report_error(x->c, k, e, x->name);
		return status;
	}
	if (k == -EPERM || k == -EACCES) {
		if (writes && x->m->access == BPFBROKER_ACCESS_RO)
			fprintf(stderr,
				"bpfctl: map %s is read-only for you (the broker granted ro): %s "
				"refused\n",
				x->name, op);
		else if (!writes && x->m->access == BPFBROKER_ACCESS_WO)
			fprintf(stderr,
				"bpfctl: map %s is write-only for you (the broker granted wo): %s "
				"refused\n",
				x->name, op);
		else
			fprintf(stderr, "bpfctl: map %s: %s refused by the kernel: %s\n", x->name,
				op, strerror(-k));
		return EXIT_DENIED;
	}
	/* Failures of our own or of the connection; anything else is the kernel's refusal. */
	if (k == -ENOMEM || k == -EPROTO || k == -ECONNRESET || k == -EPIPE || x->m->proxied) {
		fprintf(stderr, "bpfctl: map %s: %s failed: %s\n", x->name, op, strerror(-k));
		return EXIT_ERROR;
	}
	fprintf(stderr, "bpfctl: map %s: %s refused by the kernel: %s\n", x->name, op,
		strerror(-k));
	return EXIT_DENIED;
}

#define MAP_DUMP_PAGE 64u

static int map_dump(struct map_ctx *x, uint8_t *cursor)
{
	uint64_t n = 0, limit = (uint64_t)x->m->max_entries * 2 + 16;
	size_t ks = x->m->key_size, vs = x->m->value_bytes;
	_cleanup_free_ uint8_t *keys = calloc(MAP_DUMP_PAGE, ks),
			       *values = calloc(MAP_DUMP_PAGE, vs ?: 1);
	bool first = true, done = false;
	int k;

	if (!keys || !values)
		return die_errno(-ENOMEM, "dump");
	while (!done) {
		struct bpfbroker_error *e = NULL;
		uint32_t got = 0;

		k = bpfbroker_map_dump(x->h, first ? NULL : cursor, keys, values, MAP_DUMP_PAGE,
				       &got, cursor, &done, &e);
		if (k < 0)
			return map_failed(x, "dump", k, e);
		first = false;
		for (uint32_t i = 0; i < got; i++) {
			k = print_entry(x, keys + i * ks, values + i * vs);
			if (k < 0)
				return die_errno(k, "dump");
		}
		n += got;
		/* A map changed while it is dumped can show entries again, but not forever. */
		if (n > limit) {
			fprintf(stderr,
				"bpfctl: map %s: more entries than it can hold; is it being "
				"changed meanwhile? Stopping\n",
				x->name);
			return EXIT_ERROR;
		}
	}
	return EXIT_SUCCESS;
}

/* Opening the map failed: the same exit status whether bpfctl used the fd or the broker. */
static int map_open_failed(struct map_ctx *x, int k, struct bpfbroker_error *e, const char *ref)
{
	if (e) {
		int status = map_error_status(e);

		report_error(x->c, k, e, ref);
		return status;
	}
	if (k == -ENOENT || k == -EACCES) {
		fprintf(stderr, "bpfctl: map %s: %s\n", x->name,
			k == -EACCES
				? "the broker grants you no access to it"
				: "not in this object, or the broker grants you no access to it");
		return EXIT_DENIED;
	}
	return die_errno(k, x->name);
}

static int cmd_map(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	static const struct {
		const char *name;
		int n_args;
	} ops[] = {{"dump", 2}, {"lookup", 3}, {"update", 4}, {"delete", 3}};
	struct bpfbroker_error *e = NULL;
	struct map_ctx x = {.c = c, .n_cpus = 1};
	_cleanup_free_ uint8_t *key = NULL, *value = NULL;
	const char *op = NULL, *env = getenv("BPFBROKER_MAP_PROXY");
	char *ref;
	size_t vsize;
	int k, n;

	for (size_t i = 0; argc > 0 && i < ARRAY_SIZE(ops); i++)
		if (strcmp(argv[0], ops[i].name) == 0) {
			op = ops[i].name;
			if (argc != ops[i].n_args)
				op = NULL;
		}
	if (!op) {
		fprintf(stderr, "bpfctl: map takes dump REF/MAP, lookup REF/MAP KEY, update "
				"REF/MAP KEY VALUE or delete REF/MAP KEY\n");
		return EXIT_ERROR;
	}
	if (c->update_flags && strcmp(op, "update") != 0) {
		fprintf(stderr, "bpfctl: --exist and --noexist are for map update\n");
		return EXIT_ERROR;
	}
	if (split_ref(argv[1], "MAP", &ref, (char **)&x.name) < 0)
		return EXIT_ERROR;
	/* Diagnosis: what a kernel that refuses bpf() gets, on any kernel. */
	if (c->map_proxy || (env && strcmp(env, "1") == 0))
		(void)bpfbroker_set_map_path(b, BPFBROKER_MAP_PATH_PROXY);
	k = bpfbroker_map_open(b, ref, x.name, &x.h, &e);
	if (k < 0)
		return map_open_failed(&x, k, e, ref);
	x.m = bpfbroker_map_handle_info(x.h);
	if (x.m->key_size == 0) {
		fprintf(stderr, "bpfctl: map %s (%s) has no keys; bpfctl map cannot access it%s\n",
			x.name, x.m->type,
			strcmp(x.m->type, "ringbuf") == 0 ? " (read it with bpfctl ringbuf)" : "");
		bpfbroker_map_close(x.h);
		return EXIT_ERROR;
	}
	x.percpu = strstr(x.m->type, "percpu") != NULL;
	x.n_cpus = x.percpu ? x.m->n_cpus : 1;
	x.slot = x.m->value_bytes / (x.n_cpus ?: 1);
	vsize = x.m->value_bytes;
	key = calloc(1, x.m->key_size);
	value = calloc(1, vsize ?: 1);
	if (!key || !value) {
		bpfbroker_map_close(x.h);
		return die_errno(-ENOMEM, "map");
	}
	x.btf = map_btf(&x);
	if (c->json)
		x.out = json_object_new_array(); /* dump: every entry; lookup: one, printed alone */
	if (argc > 2 && parse_sized("key", argv[2], key, x.m->key_size, x.name) < 0) {
		k = EXIT_ERROR;
		goto out;
	}
	if (argc > 3) {
		/* Per-CPU maps: one value for every CPU, or all the slots. */
		n = parse_hex("value", argv[3], value, vsize);
		if (n >= 0 && x.percpu && (size_t)n == x.m->value_size) {
			for (unsigned cpu = 1; cpu < x.n_cpus; cpu++)
				memcpy(value + cpu * x.slot, value, x.m->value_size);
		} else if (n >= 0 && (size_t)n != vsize) {
			fprintf(stderr,
				"bpfctl: value is %d bytes, but map %s takes %u-byte values\n", n,
				x.name, x.m->value_size);
			n = -EINVAL;
		}
		if (n < 0) {
			k = EXIT_ERROR;
			goto out;
		}
	}
	e = NULL;
	if (strcmp(op, "dump") == 0) {
		k = map_dump(&x, key);
	} else if (strcmp(op, "lookup") == 0) {
		k = bpfbroker_map_lookup_elem(x.h, key, value, &e);
		if (k == -ENOENT && !e) {
			_cleanup_free_ char *hex = format_hex(key, x.m->key_size);

			fprintf(stderr, "bpfctl: map %s: no entry for key %s\n", x.name, hex ?: "");
			k = EXIT_DENIED;
		} else if (k < 0) {
			k = map_failed(&x, op, k, e);
		} else {
			k = print_entry(&x, key, value) < 0 ? die_errno(-ENOMEM, "lookup")
							    : EXIT_SUCCESS;
		}
	} else if (strcmp(op, "update") == 0) {
		k = bpfbroker_map_update_elem(x.h, key, value, c->update_flags, &e);
		k = k < 0 ? map_failed(&x, op, k, e) : EXIT_SUCCESS;
	} else {
		k = bpfbroker_map_delete_elem(x.h, key, &e);
		if (k == -ENOENT && !e) {
			fprintf(stderr, "bpfctl: map %s: no entry for that key\n", x.name);
			k = EXIT_DENIED;
		} else {
			k = k < 0 ? map_failed(&x, op, k, e) : EXIT_SUCCESS;
		}
	}
	if (x.out && k == EXIT_SUCCESS) {
		if (strcmp(op, "dump") == 0)
			print_json_value(x.out);
		else if (strcmp(op, "lookup") == 0)
			print_json_value(json_object_array_get_idx(x.out, 0));
		else
			printf("{\"%s\":true}\n",
			       strcmp(op, "update") == 0 ? "updated" : "deleted");
	}
out:
	json_object_put(x.out);
	btf__free(x.btf);
	bpfbroker_map_close(x.h);
	return k;
}

/* ---- ringbuf ---- */

struct ringbuf_print {
	bool json;
	uint64_t seen, count;
};

static int ringbuf_print_record(void *ctx, const void *data, size_t size)
{
	struct ringbuf_print *p = ctx;
	_cleanup_free_ char *hex = p->json ? proto_hex_encode(data, size) : format_hex(data, size);

	if (!hex)
		return -ENOMEM;
	if (p->json)
		printf("{\"size\":%zu,\"data\":\"%s\"}\n", size, hex);
	else
		printf("%s\n", hex);
	fflush(stdout);
	/* Stop right after the last record wanted: the rest stays for the next consumer. */
	return ++p->seen == p->count ? -ECANCELED : 0;
}

/*
 * Consume until SIGINT or SIGTERM (or --count records): both are blocked and
 * read from a signalfd polled with the ring, so none is lost between a check
 * and the wait.
 */
static int ringbuf_follow(struct bpfbroker_ringbuf *rb)
{
	_cleanup_close_ int sfd = -1;
	sigset_t mask;
	int k;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return negative_errno();
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0)
		return negative_errno();
	/* What is already there first, then whatever comes. */
	for (k = bpfbroker_ringbuf_consume(rb); k >= 0; k = bpfbroker_ringbuf_consume(rb)) {
		struct pollfd fds[] = {{.fd = bpfbroker_ringbuf_epoll_fd(rb), .events = POLLIN},
				       {.fd = sfd, .events = POLLIN}};

		if (poll(fds, 2, -1) < 0 && errno != EINTR)
			return negative_errno();
		if (fds[1].revents)
			return 0;
	}
	return k == -ECANCELED ? 0 : k;
}

/* Print a ring buffer's records as they come, until a signal or --count records. */
static int cmd_ringbuf(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	struct ringbuf_print p = {.json = c->json, .count = c->count};
	struct bpfbroker_ringbuf *rb = NULL;
	struct bpfbroker_result *r = NULL;
	struct bpfbroker_error *e = NULL;
	const struct bpfbroker_map *m;
	char *ref, *name;
	int k;

	if (argc != 1) {
		fprintf(stderr, "bpfctl: ringbuf takes REF/MAP\n");
		return EXIT_ERROR;
	}
	if (split_ref(argv[0], "MAP", &ref, &name) < 0)
		return EXIT_ERROR;
	k = bpfbroker_fds(b, ref, &r, &e);
	if (k < 0)
		return report_error(c, k, e, ref);
	m = bpfbroker_result_map(r, name);
	if (!m || m->access != BPFBROKER_ACCESS_CONSUME || m->fd < 0) {
		fprintf(stderr, "bpfctl: map %s: %s\n", name,
			!m ? "not in this object, or not yours (ring buffers are not shared)"
			: strcmp(m->type, "ringbuf") != 0 ? "not a ring buffer"
							  : "your policy does not grant consume");
		bpfbroker_result_free(r);
		return EXIT_DENIED;
	}
	k = bpfbroker_ringbuf_new(m->fd, m->max_entries, ringbuf_print_record, &p, &rb);
	bpfbroker_result_free(r);
	if (k < 0)
		return die_errno(k, "cannot map the ring buffer");
	k = ringbuf_follow(rb);
	bpfbroker_ringbuf_free(rb);
	return k < 0 ? die_errno(k, "ring buffer") : EXIT_SUCCESS;
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
		{"name", required_argument, NULL, OPT_NAME},
		{"share", required_argument, NULL, OPT_SHARE},
		{"all", no_argument, NULL, OPT_ALL},
		{"user", required_argument, NULL, OPT_USER},
		{"shared", no_argument, NULL, OPT_SHARED},
		{"attach-type", required_argument, NULL, OPT_ATTACH_TYPE},
		{"pin", no_argument, NULL, OPT_PIN},
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
		case OPT_NAME:
			c->opts.name = optarg;
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
		case 'h':
			usage(stdout);
			exit(EXIT_SUCCESS);
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

static const struct command {
	const char *name;
	int (*run)(struct cli *c, struct bpfbroker *b, int argc, char **argv);
} commands[] = {
	{"check", cmd_check},
	{"run", cmd_run},
	{"policy", cmd_policy},
	{"load", cmd_load},
	{"list", cmd_list},
	{"show", cmd_show},
	{"unload", cmd_unload},
	{"attach", cmd_attach},
	{"detach", cmd_detach},
	{"test-run", cmd_test_run},
	{"map", cmd_map},
	{"ringbuf", cmd_ringbuf},
	{"doctor", NULL},
	{"load-insns", cmd_load_insns},
	{"check-insns", cmd_check_insns},
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
		if (!c.opts.name && n_args >= 1) {
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

	if (!cmd->run) {
		/* doctor: reports whether the broker is reachable, so it runs without it too. */
		if (n_args != 0) {
			fprintf(stderr, "bpfctl: doctor takes no arguments\n");
			return EXIT_ERROR;
		}
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
