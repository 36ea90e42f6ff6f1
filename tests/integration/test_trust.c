/* SPDX-License-Identifier: MIT */
/*
 * What the broker trusts, attacked by real unprivileged uids against the real
 * daemon and kernel:
 * - its configuration: only root's policy files and directories count (a
 *   symlink to a user's file, a 0666 file, a group-writable directory are
 *   refused on reload, and the old policy stays);
 * - the bpffs guard: every directory any non-root principal can reach is
 *   walked, with group access counted, without a depth cut-off, failing closed
 *   over its bound or where it cannot read;
 * - its logs: client-chosen text (a program name from the ELF, request
 *   parameters, libbpf's messages) can never start a line, a record or a
 *   journal field, on stderr or in the journal.
 * The test runs in a mount namespace of its own: its bpffs and /run stay its own.
 */
#include <bpf/bpf.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "client/libbpfbroker.h"
#include "common/bpffs.h"
#include "harness.h"

#ifndef BPFFS_WALK_MAX_ENTRIES
#define BPFFS_WALK_MAX_ENTRIES 8192 /* what the fixed guard walks at most */
#endif

#define UID_USER 4401 /* writes its own policy file; loads and attaches */
#define UID_MEMBER 4402 /* in group GID_PIN: pins where that group may write */
#define UID_ROOTGRP 4403 /* in group root (0): so may a non-root be */
#define GID_PIN 4410

static const gid_t pin_groups[] = {GID_PIN};
static const gid_t root_groups[] = {0};
static const struct user user = {UID_USER, UID_USER};
static const struct user member = {UID_MEMBER, UID_MEMBER, pin_groups, 1};
static const struct user rootgrp = {UID_ROOTGRP, UID_ROOTGRP, root_groups, 1};

/* What a forged record would look like: a newline, then a line of the daemon's own form. */
#define FORGED "\n<6>audit: event=unload decision=allow uid=0 pid=1 object=0/victim"

static char daemon_log[400], cg_user[PATH_MAX], bpffs[400];

#define ctl harness_ctl
#define out harness_out

static int write_text(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	size_t len = strlen(text);

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len) {
		close(fd);
		return -EIO;
	}
	close(fd);
	return 0;
}

static char *read_text(const char *path, off_t from)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return strdup("");
	fseeko(f, from, SEEK_SET);
	for (;;) {
		char *grown = realloc(buf, len + 4097);
		size_t k;

		assert_non_null(grown);
		buf = grown;
		k = fread(buf + len, 1, 4096, f);
		len += k;
		if (k == 0)
			break;
	}
	buf[len] = '\0';
	fclose(f);
	return buf;
}

static off_t log_size(void)
{
	struct stat st;

	return stat(daemon_log, &st) == 0 ? st.st_size : 0;
}

/* ==== class 9: the daemon trusts only root's configuration ==== */

/*
 * SIGHUP the daemon and wait for its verdict on the new policy; what it logged
 * meanwhile (malloc'd), which says "policy reloaded" or "policy reload failed".
 */
static char *reload(void)
{
	off_t from = log_size();

	kill(H.daemon, SIGHUP);
	for (int i = 0; i < 500; i++) {
		char *text = read_text(daemon_log, from);

		if (strstr(text, "policy reload"))
			return text;
		free(text);
		usleep(10000);
	}
	fail_msg("the daemon did not reload");
	return NULL;
}

/* As the user: what bpfctl -j policy says the user is granted. */
static const char *user_policy(void)
{
	assert_int_equal(ctl(&user, "-j", "policy", NULL), 0);
	return out;
}

static void assert_no_grant(const char *what)
{
	const char *p = user_policy();

	if (strstr(p, "read_kernel_memory") || strstr(p, "kfunc") || strstr(p, "\"unknown\""))
		fail_msg("%s: the user granted itself kernel memory: %s", what, p);
	/* The policy in force before the reload still is. */
	if (!strstr(p, "socket_filter"))
		fail_msg("%s: the old policy is gone: %s", what, p);
}

static void assert_log_names(const char *log, const char *a, const char *b)
{
	if (!strstr(log, "policy reload failed") || !strstr(log, a) || !strstr(log, b))
		fail_msg("the reload log does not say \"%s\" and \"%s\":\n%s", a, b, log);
}

static const char evil_policy[] =
	"{\"rules\": [{\"match\": {\"uids\": [\"4401\"]}, \"allow\": {"
	"\"program_types\": [\"kprobe\", \"socket_filter\"],"
	"\"helper_classes\": [\"base\", \"read_kernel_memory\", \"kfunc\", \"unknown\"]}}]}";

struct write_arg {
	const char *path;
	const char *text;
};

/* As the user: write (create or rewrite) a file. */
static int user_writes(void *arg)
{
	const struct write_arg *w = arg;
	int fd = open(w->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t len = strlen(w->text);

	CHECK(fd >= 0, "open %s: %m", w->path);
	CHECK(write(fd, w->text, len) == (ssize_t)len, "write %s: %m", w->path);
	close(fd);
	return 0;
}

/* bpfbrokerd --check-config on the test's policy directory: its exit status, output in out. */
static int check_config(void)
{
	char cmd[1024];
	size_t len = 0;
	FILE *p;
	int status;

	snprintf(cmd, sizeof(cmd), "%s/daemon/bpfbrokerd --check-config --policy-dir %s 2>&1",
		 H.build_dir, H.policy_dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	len = fread(out, 1, sizeof(out) - 1, p);
	out[len] = '\0';
	status = pclose(p);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* Whatever a failed test left: the base policy alone, in force. */
static void policy_reset(void)
{
	char path[400], *log;

	snprintf(path, sizeof(path), "%s/60-x.json", H.policy_dir);
	if (unlink(path) < 0)
		assert_int_equal(errno, ENOENT);
	assert_int_equal(chown(H.policy_dir, 0, 0), 0);
	assert_int_equal(chmod(H.policy_dir, 0755), 0);
	assert_int_equal(chmod(H.dir, 0755), 0);
	log = reload();
	if (!strstr(log, "policy reloaded"))
		fail_msg("the base policy was refused:\n%s", log);
	free(log);
}

static void test_policy_symlink_to_users_file(void **state)
{
	char home[300], evil[400], link[400], rootfile[400];
	struct write_arg w = {evil, evil_policy};
	char *log;

	policy_reset();
	assert_no_grant("before");
	/* The user's own directory and file: its content is the user's to choose. */
	snprintf(home, sizeof(home), "%s/home", H.dir);
	assert_int_equal(mkdir(home, 0755), 0);
	snprintf(home, sizeof(home), "%s/home/user", H.dir);
	assert_int_equal(mkdir(home, 0755), 0);
	assert_int_equal(chown(home, UID_USER, UID_USER), 0);
	snprintf(evil, sizeof(evil), "%s/evil.json", home);
	assert_int_equal(harness_as_user(&user, user_writes, &w), 0);

	/* A careless admin links it into policy.d and reloads. */
	snprintf(link, sizeof(link), "%s/60-x.json", H.policy_dir);
	assert_int_equal(symlink(evil, link), 0);
	log = reload();
	assert_no_grant("a symlink to the user's file");
	assert_log_names(log, "60-x.json", "owned by uid 4401, not root");
	free(log);
	/* --check-config says the same, and fails. */
	assert_int_not_equal(check_config(), 0);
	if (!strstr(out, "60-x.json") || !strstr(out, "owned by uid 4401, not root"))
		fail_msg("--check-config: %s", out);

	/*
	 * A file of root's in the user's directory: the user can rename another
	 * of root's files over it (or its own, in a moment the admin looks away).
	 */
	snprintf(rootfile, sizeof(rootfile), "%s/root.json", home);
	assert_int_equal(write_text(rootfile, "{\"rules\": []}", 0644), 0);
	assert_int_equal(unlink(link), 0);
	assert_int_equal(symlink(rootfile, link), 0);
	log = reload();
	assert_no_grant("a symlink into the user's directory");
	assert_log_names(log, "60-x.json", home);
	free(log);

	/* A relative link through the user's directory (".."), resolved the same way. */
	assert_int_equal(unlink(link), 0);
	assert_int_equal(symlink("../home/user/../user/evil.json", link), 0);
	log = reload();
	assert_no_grant("a relative symlink");
	assert_log_names(log, "60-x.json", "not root");
	free(log);

	/* Root's file in root's directory, linked: accepted. */
	assert_int_equal(unlink(link), 0);
	snprintf(rootfile, sizeof(rootfile), "%s/shared.json", H.dir);
	assert_int_equal(write_text(rootfile, "{\"rules\": []}", 0644), 0);
	assert_int_equal(symlink(rootfile, link), 0);
	log = reload();
	if (!strstr(log, "policy reloaded"))
		fail_msg("root's linked file was refused:\n%s", log);
	free(log);
	assert_int_equal(check_config(), 0);
	assert_int_equal(unlink(link), 0);
	assert_int_equal(unlink(rootfile), 0);
	free(reload());
}

static void test_policy_world_writable_file(void **state)
{
	char path[400];
	struct write_arg w = {path, evil_policy};
	char *log;

	policy_reset();
	/* Root's file, mode 0666: the user rewrites it. */
	snprintf(path, sizeof(path), "%s/60-x.json", H.policy_dir);
	assert_int_equal(write_text(path, "{\"rules\": []}", 0644), 0);
	assert_int_equal(chmod(path, 0666), 0);
	assert_int_equal(harness_as_user(&user, user_writes, &w), 0);
	log = reload();
	assert_no_grant("a 0666 policy file");
	assert_log_names(log, "60-x.json", "writable by group and others (mode 0666)");
	free(log);
	assert_int_not_equal(check_config(), 0);

	/* Group-writable is the same: a group is not root, gid 0 included. */
	assert_int_equal(chmod(path, 0664), 0);
	log = reload();
	assert_no_grant("a 0664 policy file");
	assert_log_names(log, "60-x.json", "writable by group (mode 0664)");
	free(log);
	assert_int_equal(unlink(path), 0);
	free(reload());
}

static void test_policy_group_writable_dir(void **state)
{
	char path[400];
	struct write_arg w = {path, evil_policy};
	char *log;

	policy_reset();
	/* The policy directory writable by the user's group: the user adds a file. */
	assert_int_equal(chown(H.policy_dir, 0, GID_PIN), 0);
	assert_int_equal(chmod(H.policy_dir, 0775), 0);
	snprintf(path, sizeof(path), "%s/60-x.json", H.policy_dir);
	assert_int_equal(harness_as_user(&member, user_writes, &w), 0);
	/* Root's now: only the directory is wrong. */
	assert_int_equal(chown(path, 0, 0), 0);
	log = reload();
	assert_no_grant("a group-writable policy directory");
	assert_log_names(log, H.policy_dir, "writable by group (mode 0775)");
	free(log);

	/* Above the policy directory counts too. */
	assert_int_equal(chmod(H.policy_dir, 0755), 0);
	assert_int_equal(chown(H.policy_dir, 0, 0), 0);
	assert_int_equal(chmod(H.dir, 0777), 0);
	log = reload();
	assert_no_grant("a world-writable directory above the policy");
	assert_log_names(log, H.dir, "writable by group and others (mode 0777)");
	free(log);
	assert_int_equal(chmod(H.dir, 0755), 0);
	assert_int_equal(unlink(path), 0);
	log = reload();
	if (!strstr(log, "policy reloaded"))
		fail_msg("the repaired policy was refused:\n%s", log);
	free(log);
}

/* ==== class 10: the writable-bpffs guard walks everything ==== */

struct pin_try {
	const char *dir; /* where the client pins */
	const char *refusal; /* what the broker's refusal must say */
};

/*
 * As a user: load the counter object, whose config_map the policy grants
 * read-only. The broker must refuse (0). If it hands the ro fd out, show the
 * hole: pin it into dir, reopen the pin read-write, write (1).
 */
static int client_pin_hole(void *arg)
{
	const struct pin_try *t = arg;
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	const struct bpfbroker_map *m;
	struct bpfbroker *b;
	char pin[PATH_MAX];
	uint32_t key = 0;
	uint64_t v = 7;
	int k, fd;

	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	k = bpfbroker_load_file(b, harness_object("counter"), NULL, &res, &err);
	bpfbroker_close(b);
	if (k < 0) {
		CHECK(err && strstr(err->message, t->refusal), "refused, but not as expected: %s",
		      err ? err->message : strerror(-k));
		bpfbroker_error_free(err);
		return 0;
	}
	m = bpfbroker_result_map(res, "config_map");
	CHECK(m && m->fd >= 0 && m->access == BPFBROKER_ACCESS_RO, "config_map not ro");
	fprintf(stderr, "the broker handed out an ro fd while %s exists\n", t->dir);
	snprintf(pin, sizeof(pin), "%s/stolen", t->dir);
	if (bpf_obj_pin(m->fd, pin) == 0) {
		fd = bpf_obj_get(pin);
		if (fd >= 0 && bpf_map_update_elem(fd, &key, &v, BPF_ANY) == 0)
			fprintf(stderr, "... pinned it at %s, reopened it O_RDWR and wrote it\n",
				pin);
		if (fd >= 0)
			close(fd);
		unlink(pin);
	} else {
		fprintf(stderr, "... but could not pin it at %s: %m\n", pin);
	}
	bpfbroker_result_free(res);
	return 1;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	/* The kernel's preloaded iterators (maps.debug, progs.debug) stay. */
	if (ftw->level == 0 || (ftw->level == 1 && strstr(path + ftw->base, ".debug")))
		return 0;
	return remove(path);
}

/* Empty the test's bpffs (pins and directories), keeping its root; a test starts so. */
static void bpffs_clear(void)
{
	assert_int_equal(nftw(bpffs, remove_entry, 64, FTW_DEPTH | FTW_PHYS), 0);
}

static void mkdir_as(const char *rel, mode_t mode, uid_t uid, gid_t gid, char *ret, size_t size)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", bpffs, rel);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(chown(path, uid, gid), 0);
	assert_int_equal(chmod(path, mode), 0);
	if (ret)
		snprintf(ret, size, "%s", path);
}

static void expect_refused(const struct user *u, const char *dir, const char *refusal)
{
	struct pin_try t = {dir, refusal};

	assert_int_equal(harness_as_user(u, client_pin_hole, &t), 0);
}

static void test_bpffs_group_access(void **state)
{
	char g[PATH_MAX], w[PATH_MAX];

	bpffs_clear();
	/* Traversable and writable by the group only: "others" see nothing. */
	mkdir_as("g", 0750, 0, GID_PIN, g, sizeof(g));
	mkdir_as("g/w", 0770, 0, GID_PIN, w, sizeof(w));
	expect_refused(&member, w, w);
	/* bpfctl doctor, as the member, says the same. */
	assert_int_equal(ctl(&member, "doctor", NULL), 1);
	if (!strstr(out, w))
		fail_msg("doctor does not name %s: %s", w, out);
	bpffs_clear();

	/* Group root is no different: it may have members who are not root. */
	mkdir_as("r", 0770, 0, 0, w, sizeof(w));
	expect_refused(&rootgrp, w, w);
	bpffs_clear();

	/* A directory of a user's is writable by that user, whatever its mode (chmod). */
	mkdir_as("u", 0555, UID_MEMBER, UID_MEMBER, w, sizeof(w));
	expect_refused(&member, w, w);
	bpffs_clear();
	/* Nothing left that others can write: ro fds are handed out again. */
	mkdir_as("fine", 0755, 0, 0, NULL, 0);
	mkdir_as("fine/closed", 0700, 0, 0, NULL, 0);
	mkdir_as("fine/closed/open", 0777, 0, 0, NULL, 0); /* unreachable: behind 0700 */
	assert_int_equal(ctl(&member, "run", harness_object("counter"), "--", "/bin/true", NULL),
			 0);
	bpffs_clear();
}

static void test_bpffs_deep(void **state)
{
	char w[PATH_MAX];

	bpffs_clear();
	mkdir_as("a", 0755, 0, 0, NULL, 0);
	mkdir_as("a/b", 0755, 0, 0, NULL, 0);
	mkdir_as("a/b/c", 0755, 0, 0, NULL, 0);
	mkdir_as("a/b/c/d", 0755, 0, 0, NULL, 0);
	mkdir_as("a/b/c/d/e", 0755, 0, 0, NULL, 0);
	mkdir_as("a/b/c/d/e/f", 0777, 0, 0, w, sizeof(w));
	expect_refused(&member, w, w);
	bpffs_clear();
}

static void test_bpffs_unreadable(void **state)
{
	char w[PATH_MAX];

	bpffs_clear();
	/* Others may pass through x but the broker (root without CAP_DAC_*) cannot list it. */
	mkdir_as("x", 0311, 0, 0, NULL, 0);
	mkdir_as("x/w", 0777, 0, 0, w, sizeof(w));
	expect_refused(&member, w, "cannot be read");
	bpffs_clear();
}

static void test_bpffs_over_budget(void **state)
{
	char many[PATH_MAX], hidden[PATH_MAX], path[PATH_MAX + 16];

	bpffs_clear();
	mkdir_as("many", 0755, 0, 0, many, sizeof(many));
	/* bpffs lists the newest first: this one comes after all the others. */
	mkdir_as("many/hidden", 0777, 0, 0, hidden, sizeof(hidden));
	for (int i = 0; i < BPFFS_WALK_MAX_ENTRIES + 1; i++) {
		snprintf(path, sizeof(path), "%s/%d", many, i);
		/* Closed to others: counted, not descended into. */
		assert_int_equal(mkdir(path, 0700), 0);
	}
	expect_refused(&member, hidden, "more than");
	/* Over the bound is unsafe in itself, with nothing writable at all. */
	assert_int_equal(rmdir(hidden), 0);
	expect_refused(&member, hidden, "more than");
	bpffs_clear();
}

/* ==== class 11: logs cannot be forged ==== */

/*
 * The object at path, in memory, with symbol from renamed to to: a new string
 * table appended at the end (section data may be anywhere in the file), the
 * symbol's name pointing into it. Section names, if they share the table,
 * keep their offsets.
 */
static void *object_rename_symbol(const char *path, const char *from, const char *to,
				  size_t *ret_size)
{
	FILE *f = fopen(path, "re");
	size_t size, add = strlen(to) + 1;
	uint8_t *buf;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh, *symtab = NULL, *strtab;
	bool renamed = false;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	size = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(size * 2 + add);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, size, f), size);
	fclose(f);
	eh = (Elf64_Ehdr *)buf;
	sh = (Elf64_Shdr *)(buf + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == SHT_SYMTAB)
			symtab = &sh[i];
	assert_non_null(symtab);
	strtab = &sh[symtab->sh_link];
	for (size_t o = 0; o + sizeof(Elf64_Sym) <= symtab->sh_size; o += sizeof(Elf64_Sym)) {
		Elf64_Sym *s = (Elf64_Sym *)(buf + symtab->sh_offset + o);

		if (strcmp((char *)buf + strtab->sh_offset + s->st_name, from) == 0) {
			s->st_name = (Elf64_Word)strtab->sh_size;
			renamed = true;
		}
	}
	assert_true(renamed);
	memcpy(buf + size, buf + strtab->sh_offset, strtab->sh_size);
	memcpy(buf + size + strtab->sh_size, to, add);
	strtab->sh_offset = size;
	strtab->sh_size += add;
	*ret_size = size + strtab->sh_size;
	return buf;
}

/*
 * Every line of the daemon's log is one of its own: "<N>" first, and no audit
 * record for uid 0 (no client here is root). The forged text may appear, but
 * only inside a line, escaped.
 */
static void assert_log_unforged(const char *what)
{
	char *text = read_text(daemon_log, 0), *save = NULL;
	size_t n = 0;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *uid;

		n++;
		if (line[0] != '<' || line[1] < '0' || line[1] > '7' || line[2] != '>')
			fail_msg("%s: a line the daemon did not start: \"%s\"", what, line);
		/* Only the daemon's own records (policy reloads) are uid 0's. */
		if (strncmp(line + 3, "audit:", 6) == 0 && (uid = strstr(line, " uid=")) &&
		    strncmp(uid, " uid=0 ", 7) == 0 &&
		    strncmp(line + 3, "audit: event=policy-reload ", 27) != 0)
			fail_msg("%s: a forged audit record: \"%s\"", what, line);
	}
	assert_true(n > 0);
	free(text);
}

struct forge_arg {
	bool expect_escaped; /* the escaped name must be in the log */
};

/*
 * As the user: every way client text reaches the daemon's log. The load
 * of a program named FORGED may be refused (names with control characters
 * are not loaded); whatever is written must not be forged.
 */
static int client_forge(void *arg)
{
	struct bpfbroker_load_opts lo = {.sz = sizeof(lo), .name = "lf"};
	struct bpfbroker_attach_opts ao = {
		.sz = sizeof(ao),
		.object = "lf",
		.program = "forged_program_" FORGED,
		.target_type = "cgroup",
		.pin = true,
	};
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	struct bpfbroker *b;
	uint32_t link_id = 0;
	void *obj;
	size_t size;
	int k, cg = open(cg_user, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	CHECK(cg >= 0, "open %s: %m", cg_user);
	ao.cgroup_fd = cg;
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");

	/* A program whose ELF symbol is "forged_program_" FORGED: loaded, attached (and logged). */
	obj = object_rename_symbol(harness_object("egress"), "count_egress",
				   "forged_program_" FORGED, &size);
	k = bpfbroker_load_mem(b, obj, size, &lo, &res, &err);
	free(obj);
	fprintf(stderr, "load of a program named \"forged_program_\\n<6>audit: ...\": %s\n",
		k == 0 ? "loaded"
		: err  ? err->message
		       : strerror(-k));
	bpfbroker_result_free(res);
	bpfbroker_error_free(err);
	err = NULL;
	if (k == 0) {
		k = bpfbroker_attach(b, &ao, &link_id, NULL, &err);
		fprintf(stderr, "attach: %s\n", k == 0 ? "attached" : err->message);
		bpfbroker_error_free(err);
		err = NULL;
		/* A program of that name that does not exist: in the reason and the object. */
		ao.program = "nope" FORGED;
		k = bpfbroker_attach(b, &ao, &link_id, NULL, &err);
		CHECK(k < 0, "attach of a missing program");
		bpfbroker_error_free(err);
		err = NULL;
		CHECK(bpfbroker_unload(b, "lf", &err) == 0, "unload");
	}

	/* A request parameter (the object's name) that reaches the audit record. */
	ao.object = "nothing" FORGED;
	ao.program = "p" FORGED;
	k = bpfbroker_attach(b, &ao, &link_id, NULL, &err);
	CHECK(k < 0, "attach of a missing object");
	bpfbroker_error_free(err);
	err = NULL;

	/* libbpf's messages name the program: a verifier refusal's reason. */
	obj = object_rename_symbol(harness_object("reject"), "reject_me", "rejected_progra" FORGED,
				   &size);
	k = bpfbroker_load_mem(b, obj, size, NULL, &res, &err);
	free(obj);
	CHECK(k < 0, "the reject object loaded");
	fprintf(stderr,
		"load of a rejected program named \"rejected_progra\\n<6>audit: ...\": %s\n",
		err ? err->message : strerror(-k));
	bpfbroker_error_free(err);
	bpfbroker_close(b);
	close(cg);
	return 0;
}

static void test_log_unforgeable(void **state)
{
	off_t from = log_size();
	char *text;

	assert_int_equal(harness_as_user(&user, client_forge, NULL), 0);
	assert_log_unforged("stderr");
	/* What the client chose is there, escaped, not lost. */
	text = read_text(daemon_log, from);
	if (!strstr(text, "\\x0a<6>audit: event=unload decision=allow uid=0"))
		fail_msg("the escaped text is not in the log:\n%s", text);
	/* Shown, for whoever reads the test's output. */
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save))
		if (strstr(l, "_progra"))
			fprintf(stderr, "daemon: %s\n", l);
	free(text);
}

/* ---- the journal: a datagram socket where journald's would be ---- */

struct journal_record {
	char *fields[32]; /* "KEY=value", values may hold any byte but NUL here */
	size_t n;
};

static const char *record_get(const struct journal_record *r, const char *key)
{
	size_t len = strlen(key);

	for (size_t i = 0; i < r->n; i++)
		if (strncmp(r->fields[i], key, len) == 0 && r->fields[i][len] == '=')
			return r->fields[i] + len + 1;
	return NULL;
}

/*
 * journald's native protocol: "KEY=value\n", or "KEY\n" + little-endian
 * 64-bit size + value + "\n" for values that hold a newline.
 */
static void record_parse(const uint8_t *p, size_t len, struct journal_record *r)
{
	size_t i = 0;

	while (i < len && r->n < 32) {
		const uint8_t *nl = memchr(p + i, '\n', len - i);
		const uint8_t *eq = memchr(p + i, '=', len - i);
		size_t klen;
		char *f;

		assert_non_null(nl);
		if (eq && eq < nl) {
			f = strndup((const char *)p + i, (size_t)(nl - p) - i);
			i = (size_t)(nl - p) + 1;
		} else {
			uint64_t vlen;

			klen = (size_t)(nl - p) - i;
			assert_true((size_t)(nl - p) + 9 <= len);
			memcpy(&vlen, nl + 1, 8);
			assert_true((size_t)(nl - p) + 9 + vlen + 1 <= len);
			f = malloc(klen + 1 + vlen + 1);
			assert_non_null(f);
			memcpy(f, p + i, klen);
			f[klen] = '=';
			memcpy(f + klen + 1, nl + 9, vlen);
			f[klen + 1 + vlen] = '\0';
			i = (size_t)(nl - p) + 9 + vlen + 1;
		}
		r->fields[r->n++] = f;
	}
}

static void record_done(struct journal_record *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->fields[i]);
	r->n = 0;
}

/* The next datagram (or memfd passed with it, for large ones) within timeout_ms. */
static ssize_t journal_recv(int sock, uint8_t *buf, size_t size, int timeout_ms)
{
	struct pollfd pfd = {.fd = sock, .events = POLLIN};
	char control[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {.iov_base = buf, .iov_len = size};
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control,
		.msg_controllen = sizeof(control),
	};
	struct cmsghdr *c;
	ssize_t n;

	if (poll(&pfd, 1, timeout_ms) <= 0)
		return -1;
	n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	c = CMSG_FIRSTHDR(&mh);
	if (n >= 0 && c && c->cmsg_type == SCM_RIGHTS) {
		int fd;

		memcpy(&fd, CMSG_DATA(c), sizeof(fd));
		n = pread(fd, buf, size, 0);
		close(fd);
	}
	return n;
}

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

static void test_journal_unforgeable(void **state)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	static uint8_t buf[1 << 20];
	int sock, rcvbuf = 4 << 20;
	size_t n_records = 0, n_escaped = 0;
	char *bad_message = NULL, *bad_field = NULL;
	ssize_t n;

	/* Our /run is a tmpfs of this mount namespace (setup): journald's socket is ours. */
	assert_int_equal(mkdir("/run/systemd", 0755), 0);
	assert_int_equal(mkdir("/run/systemd/journal", 0755), 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/run/systemd/journal/socket");
	sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(sock >= 0);
	assert_int_equal(bind(sock, (struct sockaddr *)&sa, sizeof(sa)), 0);
	setsockopt(sock, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	/*
	 * The spawner connects its workers' journald socket when it starts
	 * (daemon/shared/audit.h): a journald that appears later is used from
	 * the next spawner on, as after this reload.
	 */
	free(reload());
	/* The reload's own record (uid 0) is not the client's. */
	while (journal_recv(sock, buf, sizeof(buf), 200) > 0)
		;

	assert_int_equal(harness_as_user(&user, client_forge, NULL), 0);
	while ((n = journal_recv(sock, buf, sizeof(buf), 500)) > 0) {
		struct journal_record r = {};
		const char *msg, *uid;

		record_parse(buf, (size_t)n, &r);
		msg = record_get(&r, "MESSAGE");
		uid = record_get(&r, "BPFBROKER_UID");
		if (!msg || !uid || !record_get(&r, "BPFBROKER_EVENT"))
			fail_msg("a record without MESSAGE, BPFBROKER_UID, BPFBROKER_EVENT");
		/* MESSAGE is what syslog and "journalctl -o cat" print as lines. */
		if (has_control(msg) && !bad_message)
			bad_message = strdup(msg);
		/* The record's own uid (its first), not what a value quotes. */
		if (strcmp(uid, "0") == 0 || strncmp(strstr(msg, " uid=") ?: "", " uid=0 ", 7) == 0)
			fail_msg("a forged record: MESSAGE=%s", msg);
		/* Every field is one field, read alike everywhere: no control characters. */
		for (size_t i = 0; i < r.n; i++) {
			if (has_control(r.fields[i]) && !bad_field)
				bad_field = strdup(r.fields[i]);
			if (strstr(r.fields[i], "\\x0a<6>audit: event=unload decision=allow uid=0"))
				n_escaped++;
		}
		n_records++;
		record_done(&r);
	}
	if (bad_message)
		fail_msg("MESSAGE holds a control character: \"%s\"", bad_message);
	if (bad_field)
		fail_msg("a field holds a control character: \"%s\"", bad_field);
	close(sock);
	unlink(sa.sun_path);
	/* The denials at least went to the journal, with the client's text in them, escaped. */
	assert_true(n_records >= 2);
	assert_true(n_escaped >= 1);
	/* Log lines (not audit records) still go to stderr: unforged there too. */
	assert_log_unforged("stderr, with a journal");
}

/* ---- setup ---- */

static int setup(void **state)
{
	char policy[2048], rel[128];

	if (harness_init() < 0)
		return -1;
	/*
	 * Our own mount namespace: the bpffs mounted here and the tmpfs on /run
	 * (no journal unless the test makes one) are seen by the daemon we start
	 * and by no one else.
	 */
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		fprintf(stderr, "cannot make a private mount namespace: %m\n");
		return -1;
	}
	if (mount("tmpfs", "/run", "tmpfs", 0, "mode=0755") < 0) {
		fprintf(stderr, "cannot mount a tmpfs on /run: %m\n");
		return -1;
	}
	snprintf(bpffs, sizeof(bpffs), "%s/bpffs", H.dir);
	if (mkdir(bpffs, 0755) < 0 || mount("bpf", bpffs, "bpf", 0, "mode=0755") < 0) {
		fprintf(stderr, "cannot mount a bpffs at %s: %m\n", bpffs);
		return -1;
	}
	snprintf(daemon_log, sizeof(daemon_log), "%s/daemon.log", H.dir);
	H.daemon_log = daemon_log;
	snprintf(policy, sizeof(policy),
		 "{\"rules\": ["
		 " {\"match\": {\"uids\": [\"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\", \"cgroup_skb\"],"
		 "   \"helper_classes\": [\"base\"], \"attach\": {\"cgroups\": true}}},"
		 " {\"match\": {\"uids\": [\"%d\", \"%d\"]},"
		 "  \"allow\": {\"program_types\": [\"socket_filter\"], \"helper_classes\": "
		 "[\"base\"], \"maps\": [{\"name\": \"config_map\", \"access\": \"ro\"},"
		 "   {\"name\": \"*\", \"access\": \"rw\"}]}}"
		 "]}",
		 UID_USER, UID_MEMBER, UID_ROOTGRP);
	if (harness_write_policy("50-base.json", policy) < 0)
		return -1;
	snprintf(rel, sizeof(rel), "bpfbroker-test-trust-%d/user", (int)getpid());
	if (harness_cgroup_make(rel, UID_USER, cg_user, sizeof(cg_user)) < 0) {
		fprintf(stderr, "cannot create the test cgroup: %m\n");
		return -1;
	}
	harness_mark_kernel_objects();
	return harness_start(NULL) < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	if (bpffs[0])
		umount2(bpffs, MNT_DETACH);
	return harness_finish();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_symlink_to_users_file),
		cmocka_unit_test(test_policy_world_writable_file),
		cmocka_unit_test(test_policy_group_writable_dir),
		cmocka_unit_test(test_bpffs_group_access),
		cmocka_unit_test(test_bpffs_deep),
		cmocka_unit_test(test_bpffs_unreadable),
		cmocka_unit_test(test_bpffs_over_budget),
		cmocka_unit_test(test_log_unforgeable),
		cmocka_unit_test(test_journal_unforgeable),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
