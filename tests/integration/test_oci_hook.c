/* SPDX-License-Identifier: MIT */
/*
 * bpfbroker-oci-hook with real runtimes: rootless crun and runc, run by an
 * unprivileged uid with a delegated cgroup, start a busybox container whose
 * config allows /dev/null and denies every other device. With the hook the
 * container opens /dev/null and is refused a bind-mounted /dev/fuse (EPERM);
 * without it, the same container opens /dev/fuse. After the container is
 * deleted nothing is left (program, link, pin, metadata, cgroup). A broker
 * refusal stops the container from starting, or, annotated warn, lets it
 * start with a warning. The container's root (its user's uid, with
 * CAP_SYS_ADMIN in its user namespace) tries to leave the cgroup its rules
 * confine (test_escape_*): the hook refuses every config that would let it.
 *
 * The runtimes run as on this machine they can: in a private mount namespace
 * where root has mounted cgroup2 on /sys/fs/cgroup (crun refuses the hybrid
 * layout), crun with --cgroup-manager=disabled, in the caller's cgroup (the
 * hook gives the container a child cgroup). /dev/fuse is a node the test
 * makes (mode 0666) and binds over /dev/fuse in that namespace only: every
 * device anyone may open on the host is in the runtimes' default rules.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "harness.h"

#define UID_CTR 60501 /* the policy grants device programs and cgroup attach */
#define UID_DENIED 60502 /* no rule */
#define RUNC_EXE "/usr/sbin/runc"
#define CRUN_EXE "/usr/bin/crun"
#define PODMAN_EXE "/usr/bin/podman"
#define RUN_TIMEOUT_SEC 60

static char cg_rel[2][128], cg_dir[2][PATH_MAX], fuse_node[160], hook_exe[512];

/* HOOK_NO_STOP: no poststop hook, as for a container whose runtime died before it. */
enum hooks { NO_HOOK, HOOK, HOOK_WARN, HOOK_NO_STOP };

struct run {
	const char *runtime; /* CRUN_EXE or RUNC_EXE */
	uid_t uid;
	int cg; /* 0: UID_CTR's cgroup, 1: UID_DENIED's */
	enum hooks hooks;
	const char *id; /* the container's id, or NULL for "ctr" */
	const char *script; /* run as /attack.sh instead of the open test, or NULL */
	const char *namespaces; /* more "namespaces" entries, or NULL */
	const char *mounts; /* more "mounts" entries, or NULL */
	char out[8192]; /* the runtime's and the container's stdout and stderr */
};

static const char *find_runtime(const char *exe)
{
	return access(exe, X_OK) == 0 ? exe : NULL;
}

/*
 * An attacking container's root holds every capability its user namespace
 * gives that matters here, and sees the host's /usr and libraries (util-linux,
 * bpfctl), read-only.
 */
#define ATTACK_CAPS "[\"CAP_SYS_ADMIN\", \"CAP_MKNOD\", \"CAP_SYS_CHROOT\", \"CAP_DAC_OVERRIDE\"]"
static const char attack_caps[] =
	", \"capabilities\": {\"bounding\": " ATTACK_CAPS ", \"effective\": " ATTACK_CAPS
	", \"permitted\": " ATTACK_CAPS "}";
static const char attack_mounts[] =
	", {\"destination\": \"/usr\", \"type\": \"bind\", \"source\": \"/usr\","
	" \"options\": [\"rbind\", \"ro\"]}"
	", {\"destination\": \"/lib\", \"type\": \"bind\", \"source\": \"/lib\","
	" \"options\": [\"rbind\", \"ro\"]}"
	", {\"destination\": \"/lib64\", \"type\": \"bind\", \"source\": \"/lib64\","
	" \"options\": [\"rbind\", \"ro\"]}";

/* A bundle in H.dir owned by uid: busybox rootfs and config.json for the run. */
static int write_bundle(const struct run *r, const char *bundle)
{
	char path[PATH_MAX], hooks[4096] = "", annotations[128] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/rootfs", bundle);
	if ((mkdir(bundle, 0755) < 0 && errno != EEXIST) ||
	    (mkdir(path, 0755) < 0 && errno != EEXIST))
		return -1;
	/* The mount points the container's mounts need: the rootfs is read-only. */
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/rootfs/%s", bundle,
			 (const char *[]){"bin", "proc", "dev"}[i]);
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return -1;
	}
	/* Mount points of the attacks' mounts (bpfctl and its libraries, a cgroup tree). */
	for (size_t i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "%s/rootfs/%s", bundle,
			 (const char *[]){"lib", "lib64", "cg", "run", "usr"}[i]);
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return -1;
	}
	snprintf(path, sizeof(path), "mkdir -p %s/rootfs%s", bundle, H.build_dir);
	if (system(path) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/rootfs/attack.sh", bundle);
	f = fopen(path, "we");
	if (!f || fputs(r->script ? r->script : "", f) < 0 || fclose(f) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/rootfs/bin/busybox", bundle);
	if (access(path, X_OK) != 0 && harness_copy_file("/bin/busybox", path, 0, 0755) < 0)
		return -1;
	if (r->hooks != NO_HOOK) {
		/* As README's "Rootless containers" tells to write it. */
		snprintf(
			hooks, sizeof(hooks),
			"\"hooks\": {"
			" \"createRuntime\": [{\"path\": \"%s\", \"env\": "
			"[\"BPFBROKER_SOCKET=%s\"]}],"
			" \"poststop\": [{\"path\": \"%s\", \"env\": [\"BPFBROKER_SOCKET=%s\"]}]},",
			hook_exe, H.socket, r->hooks == HOOK_NO_STOP ? "/bin/true" : hook_exe,
			H.socket);
	}
	/* crun shows a hook's messages only where this annotation sends them. */
	snprintf(annotations, sizeof(annotations),
		 "\"annotations\": {\"run.oci.hooks.stderr\": \"/dev/stderr\"%s},",
		 r->hooks == HOOK_WARN ? ", \"io.bpfbroker.devices\": \"warn\"" : "");
	snprintf(path, sizeof(path), "%s/config.json", bundle);
	f = fopen(path, "we");
	if (!f)
		return -1;
	fprintf(f,
		"{\"ociVersion\": \"1.0.0\", %s %s"
		" \"process\": {\"terminal\": false, \"user\": {\"uid\": 0, \"gid\": 0},"
		"  \"args\": [\"/bin/busybox\", \"sh\", \"-c\", \"%s(: </dev/null) && echo "
		"null-opened; (: </dev/fuse) && echo fuse-opened; true\"],"
		"  \"env\": [\"PATH=/bin\"], \"cwd\": \"/\", \"noNewPrivileges\": true%s},"
		" \"root\": {\"path\": \"rootfs\", \"readonly\": true},"
		" \"hostname\": \"ctr\","
		" \"mounts\": [{\"destination\": \"/proc\", \"type\": \"proc\", \"source\": "
		"\"proc\"},"
		"  {\"destination\": \"/dev\", \"type\": \"tmpfs\", \"source\": \"tmpfs\","
		"   \"options\": [\"nosuid\", \"mode=755\", \"size=1024k\"]},"
		"  {\"destination\": \"/dev/fuse\", \"type\": \"bind\", \"source\": \"/dev/fuse\","
		"   \"options\": [\"bind\"]}%s%s],"
		" \"linux\": {"
		"  \"uidMappings\": [{\"containerID\": 0, \"hostID\": %u, \"size\": 1}],"
		"  \"gidMappings\": [{\"containerID\": 0, \"hostID\": %u, \"size\": 1}],"
		"  \"resources\": {\"devices\": [{\"allow\": false, \"access\": \"rwm\"},"
		"   {\"allow\": true, \"type\": \"c\", \"major\": 1, \"minor\": 3, \"access\": "
		"\"rwm\"}]},"
		"  \"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"ipc\"}, {\"type\": \"uts\"},"
		"   {\"type\": \"user\"}, {\"type\": \"mount\"}%s]}}\n",
		hooks, annotations, r->script ? "/bin/busybox sh /attack.sh; " : "",
		r->script ? attack_caps : "", r->script ? attack_mounts : "",
		r->mounts ? r->mounts : "", (unsigned)r->uid, (unsigned)r->uid,
		r->namespaces ? r->namespaces : "");
	if (fclose(f) != 0)
		return -1;
	return 0;
}

/*
 * Rootless podman (as the user, in the namespace runtime_child() made): import
 * the busybox rootfs as an image, then run it without cgroups of its own (this
 * host's hybrid layout) and /dev/fuse bound as a volume (--device would add a
 * rule allowing it), hooks from H.dir/hooks.d when asked for.
 */
static int podman_child(const struct run *r, const char *home)
{
	char hooks_dir[300], tar[300], cmd[2048], env_home[320], env_run[320], run_dir[300];
	char *envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", env_home, env_run, NULL};
	char *argv[] = {"/bin/sh", "-c", cmd, NULL};

	snprintf(hooks_dir, sizeof(hooks_dir), "%s/hooks.d", H.dir);
	snprintf(tar, sizeof(tar), "%s/busybox.tar", H.dir);
	snprintf(run_dir, sizeof(run_dir), "%s/run", home);
	snprintf(env_home, sizeof(env_home), "HOME=%s", home);
	snprintf(env_run, sizeof(env_run), "XDG_RUNTIME_DIR=%s", run_dir);
	if (mkdir(run_dir, 0700) < 0 && errno != EEXIST)
		return 104;
	snprintf(cmd, sizeof(cmd),
		 "podman --cgroup-manager=cgroupfs image exists localhost/bb || "
		 "podman --cgroup-manager=cgroupfs import %s localhost/bb >/dev/null || exit 50; "
		 "exec podman --cgroup-manager=cgroupfs %s%s run --rm --cgroups=disabled "
		 "--annotation run.oci.hooks.stderr=/dev/stderr "
		 "--network=none -v /dev/fuse:/dev/fuse localhost/bb /bin/busybox sh -c "
		 "'(: </dev/null) && echo null-opened; (: </dev/fuse) && echo fuse-opened; true'",
		 tar, r->hooks != NO_HOOK ? "--hooks-dir " : "",
		 r->hooks != NO_HOOK ? hooks_dir : "");
	execve(argv[0], argv, envp);
	return 103;
}

/*
 * In a child: as root, a private mount namespace with cgroup2 on /sys/fs/cgroup
 * and the test's /dev/fuse, into the user's delegated cgroup; then as the user,
 * exec the runtime's "run" (which deletes the container when it ends).
 */
static int runtime_child(const struct run *r, const char *bundle, const char *state, int out_fd)
{
	char procs[PATH_MAX], pid[16];
	char *argv[12];
	char *envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
	int fd, n = 0;

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("cgroup2", "/sys/fs/cgroup", "cgroup2", 0, NULL) < 0 ||
	    mount(fuse_node, "/dev/fuse", NULL, MS_BIND, NULL) < 0) {
		perror("the runtime's mount namespace");
		return 100;
	}
	snprintf(procs, sizeof(procs), "/sys/fs/cgroup/%s/cgroup.procs", cg_rel[r->cg]);
	fd = open(procs, O_WRONLY | O_CLOEXEC);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (fd < 0 || write(fd, pid, strlen(pid)) < 0) {
		perror(procs);
		return 101;
	}
	close(fd);
	if (dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0 || setgroups(0, NULL) < 0 ||
	    setresgid(r->uid, r->uid, r->uid) < 0 || setresuid(r->uid, r->uid, r->uid) < 0)
		return 102;
	if (strcmp(r->runtime, PODMAN_EXE) == 0)
		return podman_child(r, state);
	argv[n++] = (char *)r->runtime;
	if (strcmp(r->runtime, CRUN_EXE) == 0)
		argv[n++] = "--cgroup-manager=disabled";
	argv[n++] = "--root";
	argv[n++] = (char *)state;
	argv[n++] = "run";
	argv[n++] = "--bundle";
	argv[n++] = (char *)bundle;
	argv[n++] = (char *)(r->id ? r->id : "ctr");
	argv[n] = NULL;
	execve(r->runtime, argv, envp);
	return 103;
}

/* Run the container to its end; the runtime's exit status, its output in r->out. */
static int run_container(struct run *r)
{
	char bundle[256], state[256], out[256];
	int fd, status;
	ssize_t n;
	pid_t pid;

	snprintf(bundle, sizeof(bundle), "%s/bundle", H.dir);
	snprintf(state, sizeof(state), "%s/runtime-%u", H.dir, (unsigned)r->uid);
	snprintf(out, sizeof(out), "%s/runtime.out", H.dir);
	if (write_bundle(r, bundle) < 0 || (mkdir(state, 0700) < 0 && errno != EEXIST) ||
	    chown(state, r->uid, r->uid) < 0)
		return -1;
	/* The user's: crun's hooks reopen it as /dev/stderr. */
	fd = open(out, O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0 || fchown(fd, r->uid, r->uid) < 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(runtime_child(r, bundle, state, fd));
	/* A runtime that hangs fails the test, not the suite's time limit. */
	for (int i = 0; pid > 0 && waitpid(pid, &status, WNOHANG) == 0; i++) {
		if (i == RUN_TIMEOUT_SEC * 10) {
			fprintf(stderr, "%s hangs: killed\n", r->runtime);
			kill(pid, SIGKILL);
		}
		usleep(100 * 1000);
	}
	if (pid < 0) {
		close(fd);
		return -1;
	}
	n = pread(fd, r->out, sizeof(r->out) - 1, 0);
	close(fd);
	r->out[n > 0 ? n : 0] = '\0';
	fprintf(stderr, "--- %s as %u, hooks %d: status %d\n%s---\n", r->runtime, (unsigned)r->uid,
		r->hooks, status, r->out);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Entries of dir other than those named in keep (NULL-terminated); -1 if it cannot be read. */
static int count_entries(const char *dir, const char *const *keep)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return errno == ENOENT ? 0 : -1;
	while ((e = readdir(d))) {
		bool kept = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;

		for (size_t i = 0; keep && keep[i]; i++)
			kept |= strcmp(e->d_name, keep[i]) == 0;
		if (!kept)
			fprintf(stderr, "left behind: %s/%s\n", dir, e->d_name);
		n += !kept;
	}
	closedir(d);
	return n;
}

/* Nothing left of the user's containers: objects, pins, metadata, child cgroups. */
static void assert_nothing_left(uid_t uid, int cg)
{
	static const char *const state_files[] = {"lock", "loads", "ledger", NULL};
	static const char *const pin_files[] = {"-pinned", NULL};
	const struct user u = {uid, uid};
	char path[PATH_MAX];
	DIR *d;
	struct dirent *e;

	assert_int_equal(harness_ctl(&u, "-j", "list", NULL), 0);
	assert_null(strstr(harness_out, "\"name\""));
	snprintf(path, sizeof(path), "%s/%u", H.pin_root, (unsigned)uid);
	assert_int_equal(count_entries(path, pin_files), 0);
	snprintf(path, sizeof(path), "%s/%u", H.state_dir, (unsigned)uid);
	assert_int_equal(count_entries(path, state_files), 0);
	/* No cgroup below the user's own (the hook's child cgroup is gone). */
	d = opendir(cg_dir[cg]);
	assert_non_null(d);
	while ((e = readdir(d))) {
		struct stat s;

		snprintf(path, sizeof(path), "%s/%s", cg_dir[cg], e->d_name);
		if (e->d_name[0] != '.' && stat(path, &s) == 0 && S_ISDIR(s.st_mode))
			fail_msg("cgroup %s left behind", path);
	}
	closedir(d);
}

static void run_ok(const char *runtime)
{
	struct run without = {.runtime = runtime, .uid = UID_CTR, .hooks = NO_HOOK};
	struct run with = {.runtime = runtime, .uid = UID_CTR, .hooks = HOOK};

	/* Without the hook the rootless runtime enforces nothing: the container opens /dev/fuse. */
	assert_int_equal(run_container(&without), 0);
	assert_non_null(strstr(without.out, "null-opened"));
	assert_non_null(strstr(without.out, "fuse-opened"));
	/* With it, the same container: /dev/null opens, /dev/fuse is refused with EPERM. */
	assert_int_equal(run_container(&with), 0);
	assert_non_null(strstr(with.out, "null-opened"));
	assert_null(strstr(with.out, "fuse-opened"));
	assert_non_null(strstr(with.out, "Operation not permitted"));
	assert_nothing_left(UID_CTR, 0);
}

static void test_crun(void **state)
{
	if (!find_runtime(CRUN_EXE))
		skip();
	run_ok(CRUN_EXE);
}

static void test_runc(void **state)
{
	if (!find_runtime(RUNC_EXE))
		skip();
	run_ok(RUNC_EXE);
}

/*
 * Make uid's oci-* objects look loaded age seconds ago: the broker's metadata,
 * whose loaded_at the hooks read (bpfctl list), rewritten as the broker writes
 * it (a new file renamed over the old). Root's shortcut for a minute's wait.
 */
static int age_objects(uid_t uid, time_t age)
{
	char dir[PATH_MAX], path[PATH_MAX + 256], tmp[PATH_MAX + 264];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%u", H.state_dir, (unsigned)uid);
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		json_object *meta;
		const char *text;
		bool ok;
		int fd;

		if (strncmp(e->d_name, "oci-", 4) != 0 || len < 5 ||
		    strcmp(e->d_name + len - 5, ".json") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		snprintf(tmp, sizeof(tmp), "%s.aged", path);
		meta = json_object_from_file(path);
		if (!meta || json_object_object_add(meta, "loaded_at",
						    json_object_new_int64(time(NULL) - age)) < 0) {
			json_object_put(meta);
			n = -EIO;
			break;
		}
		text = json_object_to_json_string_ext(meta, JSON_C_TO_STRING_PLAIN);
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
		ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);
		if (fd >= 0 && close(fd) < 0)
			ok = false;
		ok = ok && rename(tmp, path) == 0;
		json_object_put(meta);
		if (!ok) {
			unlink(tmp);
			n = -EIO;
			break;
		}
		n++;
	}
	closedir(d);
	return n;
}

/*
 * A container that ended without its poststop hook leaves its object and child
 * cgroup; the next container's hook removes them once they are a minute old
 * (the hook's LEFTOVER_AGE_SEC, by the object's loaded_at).
 */
static void test_leftovers(void **state)
{
	struct run lost = {
		.runtime = CRUN_EXE, .uid = UID_CTR, .hooks = HOOK_NO_STOP, .id = "lost"};
	struct run next = {.runtime = CRUN_EXE, .uid = UID_CTR, .hooks = HOOK, .id = "next"};
	const struct user u = {UID_CTR, UID_CTR};

	if (!find_runtime(CRUN_EXE))
		skip();
	assert_int_equal(run_container(&lost), 0);
	assert_int_equal(harness_ctl(&u, "-j", "list", NULL), 0);
	assert_non_null(strstr(harness_out, "\"oci-"));
	/* Younger than a minute: it may be a container being started now, so it stays. */
	assert_int_equal(run_container(&next), 0);
	assert_int_equal(harness_ctl(&u, "-j", "list", NULL), 0);
	assert_non_null(strstr(harness_out, "\"oci-"));
	/* As if a minute and more had passed: exactly the lost container's object. */
	assert_int_equal(age_objects(UID_CTR, 61), 1);
	assert_int_equal(run_container(&next), 0);
	assert_null(strstr(next.out, "fuse-opened"));
	assert_nothing_left(UID_CTR, 0);
}

/*
 * The container's root tries to leave the cgroup its rules are attached to:
 * it mounts cgroup2 (directly, else in a cgroup namespace of its own) on
 * /dev/cg, and writes its pid into cgroup.procs of every cgroup above its own
 * that it can reach there and under /cg (a cgroup tree the config mounts). Then
 * it opens /dev/fuse: "fuse-opened" is an escape.
 */
static const char escape_script[] =
	"B=/bin/busybox\n"
	"p=$($B sed -n 's/^0:://p' /proc/self/cgroup)\n"
	"echo \"cgroup $p\"\n"
	"$B mkdir -p /dev/cg\n"
	"if $B mount -t cgroup2 none /dev/cg; then echo cgroup2-mounted;\n"
	"elif /usr/bin/unshare -C $B mount -t cgroup2 none /dev/cg; then\n"
	"  echo cgroup2-mounted-own-ns; fi\n"
	"for d in /dev/cg /cg; do q=$p; while [ \"$q\" != / ]; do q=$($B dirname \"$q\");\n"
	"  for f in \"$d$q/cgroup.procs\" \"$d/cgroup.procs\"; do\n"
	"    [ -e \"$f\" ] && echo $$ >\"$f\" && echo \"wrote $f\"; done; done; done\n"
	"echo \"now $($B sed -n 's/^0:://p' /proc/self/cgroup)\"\n"
	"(: </dev/fuse) && echo fuse-opened-after-escape\n";

/* Run r (the escape script, with the hook); it must not open /dev/fuse. */
static void no_escape(struct run *r, bool refused)
{
	int status;

	if (!find_runtime(r->runtime))
		skip();
	r->uid = UID_CTR;
	r->hooks = HOOK;
	r->script = escape_script;
	status = run_container(r);
	assert_null(strstr(r->out, "fuse-opened"));
	/* Refused by the hook (it could leave), or ran confined. */
	if (refused) {
		assert_int_not_equal(status, 0);
		assert_non_null(strstr(r->out, "bpfbroker-oci-hook: container ctr"));
		assert_non_null(strstr(r->out, "move out of its rules"));
		assert_null(strstr(r->out, "null-opened"));
	} else {
		assert_int_equal(status, 0);
		assert_non_null(strstr(r->out, "null-opened"));
	}
	assert_nothing_left(UID_CTR, 0);
}

/* No cgroup namespace: cgroup2 mounts only in one of its own, rooted at its cgroup. */
static void test_escape_no_cgroupns(void **state)
{
	no_escape(&(struct run){.runtime = CRUN_EXE}, false);
}

/* A cgroup namespace, made by the runtime before the hook moved it to its own cgroup. */
static void test_escape_cgroupns(void **state)
{
	no_escape(&(struct run){.runtime = CRUN_EXE, .namespaces = ", {\"type\": \"cgroup\"}"},
		  true);
}

static void test_escape_cgroupns_runc(void **state)
{
	no_escape(&(struct run){.runtime = RUNC_EXE, .namespaces = ", {\"type\": \"cgroup\"}"},
		  true);
}

/* The config mounts a cgroup tree, without a cgroup namespace (the runtime binds the host's). */
static void test_escape_cgroup_mount(void **state)
{
	no_escape(&(struct run){.runtime = CRUN_EXE,
				.mounts = ", {\"destination\": \"/cg\", \"type\": \"cgroup\","
					  " \"source\": \"cgroup\", \"options\": [\"rw\"]}"},
		  true);
}

static void test_escape_cgroup_bind(void **state)
{
	no_escape(
		&(struct run){.runtime = CRUN_EXE,
			      .mounts =
				      ", {\"destination\": \"/cg\", \"type\": \"bind\","
				      " \"source\": \"/sys/fs/cgroup\", \"options\": [\"rbind\"]}"},
		true);
}

/* Rootless podman 4.3 with crun, the hook from a hooks.d file as podman reads it. */
static void test_podman(void **state)
{
	if (!find_runtime(PODMAN_EXE) || !find_runtime(CRUN_EXE))
		skip();
	run_ok(PODMAN_EXE);
}

/* podman leaves its rootless pause process in the caller's cgroup: the test's to end. */
static int end_pause_process(void **state)
{
	char procs[PATH_MAX + 16], buf[32];
	FILE *f;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg_dir[0]);
	f = fopen(procs, "re");
	if (!f)
		return -1;
	while (fgets(buf, sizeof(buf), f))
		kill((pid_t)atoi(buf), SIGKILL);
	fclose(f);
	return 0;
}

static void test_refused(void **state)
{
	struct run r = {.runtime = CRUN_EXE, .uid = UID_DENIED, .cg = 1, .hooks = HOOK};
	struct run warn = {.runtime = CRUN_EXE, .uid = UID_DENIED, .cg = 1, .hooks = HOOK_WARN};

	if (!find_runtime(CRUN_EXE))
		skip();
	assert_int_not_equal(run_container(&r), 0);
	assert_null(strstr(r.out, "null-opened"));
	assert_non_null(strstr(r.out, "bpfbroker-oci-hook: container ctr"));
	assert_non_null(strstr(r.out, "the broker refused the device rules"));
	/* Annotated warn: it starts, unprotected, and says so. */
	assert_int_equal(run_container(&warn), 0);
	assert_non_null(strstr(warn.out, "bpfbroker-oci-hook: warning: container ctr"));
	assert_non_null(strstr(warn.out, "WITHOUT its device rules"));
	assert_non_null(strstr(warn.out, "fuse-opened"));
	assert_nothing_left(UID_DENIED, 1);
}

/* hooks.d as installed (oci/bpfbroker-devices.json.in), with the test's hook and socket. */
static int write_hooks_d(void)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/hooks.d", H.dir);
	if (mkdir(path, 0755) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/hooks.d/bpfbroker-devices.json", H.dir);
	f = fopen(path, "we");
	if (!f)
		return -1;
	fprintf(f,
		"{\"version\": \"1.0.0\", \"hook\": {\"path\": \"%s\", \"env\": "
		"[\"BPFBROKER_SOCKET=%s\"]}, \"when\": {\"always\": true}, \"stages\": "
		"[\"createRuntime\", \"poststop\"]}\n",
		hook_exe, H.socket);
	return fclose(f) == 0 ? 0 : -1;
}

/* The busybox rootfs as a tar for podman import. */
static int tar_rootfs(void)
{
	char cmd[1024];
	struct run r = {.hooks = NO_HOOK, .uid = UID_CTR};

	snprintf(cmd, sizeof(cmd), "%s/bundle", H.dir);
	if (write_bundle(&r, cmd) < 0)
		return -1;
	snprintf(cmd, sizeof(cmd),
		 "tar -C %s/bundle/rootfs -cf %s/busybox.tar . && chmod 0644 %s/busybox.tar", H.dir,
		 H.dir, H.dir);
	return system(cmd) == 0 ? 0 : -1;
}

static int setup(void **state)
{
	static const char policy[] = "{\"rules\": [{\"match\": {\"uids\": [\"60501\"]},"
				     " \"allow\": {\"program_types\": [\"cgroup_device\"], "
				     "\"helper_classes\": [\"base\"],"
				     "  \"attach\": {\"cgroups\": [\"cgroup_device\"]}},"
				     " \"limits\": {\"max_insns_per_program\": 512}}]}";

	if (harness_init() < 0)
		return -1;
	snprintf(hook_exe, sizeof(hook_exe), "%s/oci/bpfbroker-oci-hook", H.build_dir);
	snprintf(fuse_node, sizeof(fuse_node), "%s/fuse", H.dir);
	if (mknod(fuse_node, S_IFCHR | 0666, makedev(10, 229)) < 0 || chmod(fuse_node, 0666) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		snprintf(cg_rel[i], sizeof(cg_rel[i]), "bpfbroker-test-oci-%d/u%d", (int)getpid(),
			 i ? UID_DENIED : UID_CTR);
		if (harness_cgroup_make(cg_rel[i], i ? UID_DENIED : UID_CTR, cg_dir[i],
					sizeof(cg_dir[i])) < 0)
			return -1;
	}
	if (write_hooks_d() < 0 || tar_rootfs() < 0)
		return -1;
	return harness_start_with_policy(policy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crun),
		cmocka_unit_test(test_runc),
		cmocka_unit_test_teardown(test_podman, end_pause_process),
		cmocka_unit_test(test_leftovers),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_escape_no_cgroupns),
		cmocka_unit_test(test_escape_cgroupns),
		cmocka_unit_test(test_escape_cgroupns_runc),
		cmocka_unit_test(test_escape_cgroup_mount),
		cmocka_unit_test(test_escape_cgroup_bind),
	};

	/* OCI_HOOK_TESTS=PATTERN runs only those (test_leftovers waits a minute). */
	if (getenv("OCI_HOOK_TESTS"))
		cmocka_set_test_filter(getenv("OCI_HOOK_TESTS"));
	return cmocka_run_group_tests(tests, setup, harness_group_teardown);
}
