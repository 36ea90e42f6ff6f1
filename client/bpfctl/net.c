/* SPDX-License-Identifier: MIT */
/*
 * bpfctl net: systemd's IPAddressAllow=/IPAddressDeny=/IPAccounting=,
 * RestrictNetworkInterfaces= and SocketBindAllow=/SocketBindDeny= for a command run in a new
 * sub-cgroup of the caller's own (delegated) cgroup, or for a cgroup the caller owns, through
 * the vetted network objects (objects/net/net_enforce.h); net show and net list are
 * net_show.c's.
 */
#include <errno.h>
#include <ftw.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpfctl.h"
#include "common/cgroupfs.h"
#include "common/macro.h"
#include "net_show.h"
#include "objects/net/net_enforce.h"

enum {
	OPT_ALLOW = 0x200,
	OPT_DENY,
	OPT_ACCOUNTING,
	OPT_IFACES,
	OPT_BIND_ALLOW,
	OPT_BIND_DENY,
	OPT_CGROUP,
	OPT_UNIT,
};

struct net_cli {
	struct net_settings s;
	bool accounting;
	const char *cgroup;
	const char *unit; /* net show --unit */
};

static void net_cli_done(struct net_cli *n)
{
	net_settings_done(&n->s);
}

/* An error of net_enforce (errno k, message error): refusals 1, the rest 2. */
static int net_fail(int k, char *error, const char *what)
{
	fprintf(stderr, "bpfctl: %s: %s\n", what, error ?: strerror(-k));
	free(error);
	return k == -EPERM || k == -EACCES || k == -EDQUOT ? EXIT_DENIED : EXIT_ERROR;
}

/*
 * Whether the caller owns cgroup dir as a delegated one (the directory and its cgroup.procs
 * are the caller's): said here clearly, before anything is made. The broker checks it again.
 */
static int check_owned(const char *dir)
{
	char procs[PATH_MAX + 16];
	struct stat st, sp;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	if (stat(dir, &st) < 0 || stat(procs, &sp) < 0) {
		fprintf(stderr, "bpfctl: %s is not a cgroup: %m\n", dir);
		return -ENOENT;
	}
	if (st.st_uid != getuid() || sp.st_uid != getuid()) {
		fprintf(stderr,
			"bpfctl: you do not own cgroup %s (it is uid %u's): use one delegated to "
			"you, such as a user service's or a scope of systemd-run --user --scope -p "
			"Delegate=yes\n",
			dir, (unsigned)st.st_uid);
		return -EPERM;
	}
	return 0;
}

static pid_t child = -1;

/* SIGTERM and SIGHUP go on to CMD; bpfctl cleans up once CMD has exited. */
static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

/*
 * Kill what CMD left running in the sub-cgroup (cgroup.kill), wait until it is empty, and
 * remove it: 0, or -errno when it is still there, and then the objects must stay (no process
 * may run on unfiltered once they go).
 */
/* Each directory on the way back up (FTW_DP): CMD's own child cgroups, then dir itself. */
static int rmdir_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)f;
	if (flag == FTW_DP)
		(void)rmdir(path);
	return 0;
}

static int remove_cgroup(const char *dir)
{
	(void)cgroupfs_write(dir, "cgroup.kill", "1");
	for (int i = 0; i < 500; i++) {
		struct timespec ts = {0, 10 * 1000 * 1000};

		/* Children CMD made (empty once killed) would keep dir busy: deepest first. */
		(void)nftw(dir, rmdir_entry, 16, FTW_DEPTH | FTW_PHYS);
		if (access(dir, F_OK) < 0 && errno == ENOENT)
			return 0;
		nanosleep(&ts, NULL);
	}
	errno = EBUSY;
	fprintf(stderr, "bpfctl: cannot remove cgroup %s: %m\n", dir);
	return -EBUSY;
}

/* Exec CMD once the parent has applied (a byte on go), else exit quietly. */
static _Noreturn void run_child(int go, char **cmd)
{
	char c;

	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	signal(SIGPIPE, SIG_DFL); /* ignored survives exec: CMD gets the default back */
	signal(SIGTERM, SIG_DFL); /* the parent's forwarding is not ours */
	signal(SIGHUP, SIG_DFL);
	if (read(go, &c, 1) != 1)
		_exit(EXIT_ERROR);
	execvp(cmd[0], cmd);
	fprintf(stderr, "bpfctl: cannot run %s: %m\n", cmd[0]);
	_exit(errno == ENOENT ? 127 : 126);
}

static int net_run(struct cli *c, struct net_cli *n, char **cmd)
{
	char own[PATH_MAX], sub[PATH_MAX + 32], tag[NET_ENFORCE_TAG_MAX + 1], pid[32],
		*error = NULL;
	struct net_enforce_acct acct;
	struct sigaction fw = {.sa_handler = forward};
	int go[2], status, k, r;
	bool applied = false;

	k = cgroupfs_pid_dir(0, own, sizeof(own));
	if (k < 0)
		return die_errno(k, "cannot read your cgroup from /proc/self/cgroup");
	if (check_owned(own) < 0)
		return EXIT_DENIED;
	/*
	 * As system() does: ^C and ^\ are CMD's; bpfctl waits for it and cleans up.
	 * Before the cgroup exists, so no ^C leaves it behind; SIGPIPE ignored, so
	 * a child gone before its go byte leaves bpfctl alive to remove what it applied.
	 */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	snprintf(sub, sizeof(sub), "%s/bpfctl-net-%d", own, (int)getpid());
	if (mkdir(sub, 0755) < 0) {
		fprintf(stderr, "bpfctl: cannot make cgroup %s: %m\n", sub);
		return EXIT_ERROR;
	}
	k = net_enforce_cgroup_tag(sub, tag);
	if (k < 0 || pipe2(go, O_CLOEXEC) < 0) {
		rmdir(sub);
		return die_errno(k < 0 ? k : -errno, "cannot prepare the command");
	}
	sigaction(SIGTERM, &fw, NULL);
	sigaction(SIGHUP, &fw, NULL);
	fflush(NULL);
	child = fork();
	if (child == 0) {
		close(go[1]);
		run_child(go[0], cmd);
	}
	close(go[0]);
	if (child < 0) {
		close(go[1]);
		rmdir(sub);
		return die_errno(-errno, "fork");
	}
	/* CMD goes in, bpfctl stays outside (a protected link is refused from inside). */
	snprintf(pid, sizeof(pid), "%d", (int)child);
	k = cgroupfs_write(sub, "cgroup.procs", pid);
	if (k < 0)
		error = strdup("cannot move the command into its cgroup");
	else
		k = net_enforce_apply(c->b, tag, &n->s, sub, &error);
	applied = k == 0;
	if (k == 0 && write(go[1], "x", 1) != 1) {
		k = -errno;
		error = strdup("the command went away before it could run");
	}
	close(go[1]); /* without the byte, the child exits */
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return die_errno(-errno, "waitpid");
	child = -1;
	r = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (k < 0) {
		/* What was applied goes too, once nothing can run in the cgroup any more. */
		if (remove_cgroup(sub) == 0 && applied)
			(void)net_enforce_remove(c->b, tag, NULL);
		return net_fail(k, error, "cannot apply the network settings");
	}
	/* A new connection: the first may have idled out while CMD ran. */
	bpfbroker_close(c->b);
	c->b = NULL;
	k = bpfbroker_connect(c->socket_path, &c->b);
	if (k < 0) {
		fprintf(stderr,
			"bpfctl: cannot connect to the broker to remove net-%s-*: %s; remove them "
			"with bpfctl unload\n",
			tag, strerror(-k));
		(void)remove_cgroup(sub);
		return r;
	}
	if (n->accounting) {
		k = net_enforce_accounting(c->b, tag, &acct, &error);
		if (k == 0)
			net_print_acct(stderr, c->json, tag, &acct);
		else
			(void)net_fail(k, TAKE_PTR(error), "cannot read the accounting");
	}
	if (remove_cgroup(sub) < 0) {
		fprintf(stderr,
			"bpfctl: left net-%s-* in place over %s, which still has processes; remove "
			"them with bpfctl net remove %s once it is empty\n",
			tag, sub, tag);
		return r;
	}
	k = net_enforce_remove(c->b, tag, &error);
	if (k < 0)
		(void)net_fail(k, error, "cannot remove the network settings");
	return r;
}

/* Whether any of tag's objects is loaded already (then net_enforce_apply() keeps it as is). */
static bool tag_loaded(struct bpfbroker *b, const char *tag)
{
	for (size_t i = 0; i < NET_ENFORCE_KINDS; i++) {
		struct bpfbroker_error *e = NULL;
		char name[NET_ENFORCE_NAME_MAX], *text = NULL;
		int k;

		net_enforce_object_name(tag, i, name);
		k = bpfbroker_show(b, name, &text, &e);
		free(text);
		bpfbroker_error_free(e);
		if (k == 0)
			return true;
	}
	return false;
}

static int net_apply_cgroup(struct cli *c, struct net_cli *n)
{
	char tag[NET_ENFORCE_TAG_MAX + 1], *error = NULL;
	bool before;
	int k;

	if (check_owned(n->cgroup) < 0)
		return EXIT_DENIED;
	k = net_enforce_cgroup_tag(n->cgroup, tag);
	if (k < 0)
		return die_errno(k, n->cgroup);
	before = tag_loaded(c->b, tag);
	k = net_enforce_apply(c->b, tag, &n->s, n->cgroup, &error);
	if (k < 0)
		return net_fail(k, error, "cannot apply the network settings");
	/* Applied before: those settings stay, whatever this call named. Say so. */
	if (before)
		fprintf(stderr,
			"bpfctl: %s had net-%s-* already: they stay as they were applied; to "
			"change them, bpfctl net remove --cgroup %s first\n",
			n->cgroup, tag, n->cgroup);
	printf("applied to %s as net-%s-*; remove with: bpfctl net remove --cgroup %s\n", n->cgroup,
	       tag, n->cgroup);
	return 0;
}

/* net show|remove [--cgroup PATH | TAG]: the tag meant (default: the caller's own cgroup). */
static int net_tag(struct net_cli *n, int argc, char **argv, char tag[NET_ENFORCE_TAG_MAX + 1])
{
	char own[PATH_MAX];
	int k;

	if (argc > 1 || (argc == 1 && n->cgroup)) {
		fprintf(stderr, "bpfctl: net show and net remove take --cgroup PATH or a TAG\n");
		return -EINVAL;
	}
	if (argc == 1) {
		if (!net_enforce_tag_is_valid(argv[0])) {
			fprintf(stderr, "bpfctl: invalid tag \"%s\"\n", argv[0]);
			return -EINVAL;
		}
		snprintf(tag, NET_ENFORCE_TAG_MAX + 1, "%s", argv[0]);
		return 0;
	}
	k = n->cgroup ? 0 : cgroupfs_pid_dir(0, own, sizeof(own));
	if (k == 0)
		k = net_enforce_cgroup_tag(n->cgroup ?: own, tag);
	if (k < 0)
		fprintf(stderr, "bpfctl: cannot find the cgroup's tag: %s\n", strerror(-k));
	return k;
}

static int parse_net_options(struct cli *c, struct net_cli *n, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"allow", required_argument, NULL, OPT_ALLOW},
		{"deny", required_argument, NULL, OPT_DENY},
		{"accounting", no_argument, NULL, OPT_ACCOUNTING},
		{"restrict-ifaces", required_argument, NULL, OPT_IFACES},
		{"bind-allow", required_argument, NULL, OPT_BIND_ALLOW},
		{"bind-deny", required_argument, NULL, OPT_BIND_DENY},
		{"cgroup", required_argument, NULL, OPT_CGROUP},
		{"unit", required_argument, NULL, OPT_UNIT},
		BPFCTL_COMMON_LONGOPTS,
		{},
	};
	static const char *const settings[] = {
		[OPT_ALLOW - OPT_ALLOW] = "IPAddressAllow",
		[OPT_DENY - OPT_ALLOW] = "IPAddressDeny",
		[OPT_ACCOUNTING - OPT_ALLOW] = "IPAccounting",
		[OPT_IFACES - OPT_ALLOW] = "RestrictNetworkInterfaces",
		[OPT_BIND_ALLOW - OPT_ALLOW] = "SocketBindAllow",
		[OPT_BIND_DENY - OPT_ALLOW] = "SocketBindDeny",
	};
	char *error = NULL;
	int opt;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "+jh", longopts, NULL)) >= 0) {
		if (cli_common_option(c, opt, optarg))
			continue;
		switch (opt) {
		case OPT_CGROUP:
			n->cgroup = optarg;
			break;
		case OPT_UNIT:
			n->unit = optarg;
			break;
		case OPT_ALLOW:
		case OPT_DENY:
		case OPT_ACCOUNTING:
		case OPT_IFACES:
		case OPT_BIND_ALLOW:
		case OPT_BIND_DENY:
			if (opt == OPT_ACCOUNTING)
				n->accounting = true;
			/* An empty value would reset the setting, as in a unit file: refused. */
			if ((optarg && !*optarg) ||
			    net_settings_set(&n->s, settings[opt - OPT_ALLOW], optarg ?: "yes",
					     &error) < 0) {
				fprintf(stderr, "bpfctl: --%s %s: %s\n",
					longopts[opt - OPT_ALLOW].name, optarg ?: "",
					error ?: "an empty value");
				free(error);
				return -EINVAL;
			}
			break;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	return optind;
}

/* net show, remove and list: their arguments checked, 0 or -EINVAL (said). */
static int check_sub(const char *sub, const struct net_cli *n, int n_args)
{
	bool list = strcmp(sub, "list") == 0;

	if (net_settings_want_ip(&n->s) || net_settings_want_ifaces(&n->s) ||
	    net_settings_want_bind(&n->s) || (list && (n->cgroup || n->unit || n_args > 0))) {
		fprintf(stderr, "bpfctl: net %s takes %s\n", sub,
			list			   ? "no arguments"
			: strcmp(sub, "show") == 0 ? "only --cgroup PATH, --unit UNIT or a TAG"
						   : "only --cgroup PATH or a TAG");
		return -EINVAL;
	}
	if (n->unit && (list || strcmp(sub, "show") != 0 || n->cgroup || n_args > 0)) {
		fprintf(stderr, "bpfctl: --unit UNIT is net show's, alone (no --cgroup, no TAG)\n");
		return -EINVAL;
	}
	return 0;
}

int cmd_net(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	static const char *const subs[] = {"show", "remove", "list"};
	_cleanup_(net_cli_done) struct net_cli n = {};
	const char *sub = NULL;
	char tag[NET_ENFORCE_TAG_MAX + 1], *error = NULL;
	int k, args;

	(void)b;
	for (size_t i = 0; argc > 1 && i < ARRAY_SIZE(subs); i++)
		if (strcmp(argv[1], subs[i]) == 0)
			sub = subs[i];
	if (sub) {
		argc--;
		argv++;
	}
	args = parse_net_options(c, &n, argc, argv);
	if (args < 0)
		return EXIT_ERROR;
	if (sub && check_sub(sub, &n, argc - args) < 0)
		return EXIT_ERROR;
	if (sub && strcmp(sub, "list") != 0 && !n.unit &&
	    net_tag(&n, argc - args, argv + args, tag) < 0)
		return EXIT_ERROR;
	if (!sub) {
		bool dashdash = args > 0 && args <= argc && strcmp(argv[args - 1], "--") == 0;

		if (n.unit || (n.cgroup ? args != argc : !dashdash || args == argc)) {
			fprintf(stderr, "bpfctl: net takes -- CMD [ARG...], or --cgroup PATH "
					"(bpfctl --help)\n");
			return EXIT_ERROR;
		}
	}
	k = bpfbroker_connect(c->socket_path, &c->b);
	if (k < 0)
		return die_errno(k, "cannot connect to the broker");
	if (sub && strcmp(sub, "remove") == 0) {
		k = net_enforce_remove(c->b, tag, &error);
		k = k < 0 ? net_fail(k, error, "cannot remove") : 0;
	} else if (sub && strcmp(sub, "list") == 0) {
		k = net_list(c);
	} else if (sub) {
		k = n.unit ? net_show_unit(c, n.unit) : net_show_tag(c, tag);
	} else if (n.cgroup) {
		k = net_apply_cgroup(c, &n);
	} else {
		k = net_run(c, &n, argv + args);
	}
	bpfbroker_close(c->b);
	c->b = NULL;
	return k;
}
