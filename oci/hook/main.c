/* SPDX-License-Identifier: MIT */
/*
 * bpfbroker-oci-hook: run by a container runtime (runc, crun, podman, CRI-O)
 * as an OCI hook, as the user who runs the container, with no privilege of its
 * own. At "creating"/"created" (createRuntime or prestart) it builds the
 * container's linux.resources.devices into a cgroup_device program, with the
 * runtime's semantics, and has the broker load it as a named object and attach
 * it, pinned and protected, to the container's cgroup before the container's
 * command runs. At "stopped" (poststop) it unloads it. Both remove what
 * containers that no longer exist left behind.
 *
 * Run by root of the host's user namespace it does nothing: such a runtime
 * loads the device program itself.
 *
 * Annotations: io.bpfbroker.devices=warn (a failure is a warning, the container
 * starts without the rules; default: enforce, the hook fails and the container
 * does not start); io.bpfbroker.runtime=runc|crun|both (whose semantics; default:
 * the runtime that runs the hook, by its name, else both). Environment:
 * BPFBROKER_SOCKET, the broker's socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/cgroupfs.h"
#include "common/macro.h"
#include "common/sha256.h"
#include "confine.h"
#include "libbpfbroker.h"
#include "oci/devices.h"
#include "spec.h"

#define NAME_PREFIX "oci-"
/* Objects younger than this may belong to a container another hook is starting now. */
#define LEFTOVER_AGE_SEC 60

struct hook {
	struct hook_state st;
	struct hook_spec sp;
	char name[64]; /* NAME_PREFIX and 40 hex digits of the SHA-256 of bundle and id */
	char own_cgroup[PATH_MAX];
	char err[1024];
};

/* The broker's error or errno as err's text; returns k. */
static int fail(struct hook *h, int k, struct bpfbroker_error *e, const char *what)
{
	snprintf(h->err, sizeof(h->err), "%s: %s", what, e ? e->message : strerror(-k));
	bpfbroker_error_free(e);
	return k;
}

/*
 * The container's object: named after its bundle and its id together, since
 * two runtimes (runc's and crun's roots, podman's) may each run a container
 * "ctr" at once, and one's hook must never take the other's rules for its
 * own leftover. The bundle's path ends at its NUL, so no pair of strings
 * hashes alike.
 */
static int object_name(const char *bundle, const char *id, char *name, size_t size)
{
	_cleanup_free_ char *key = NULL;
	char hex[SHA256_HEX_SIZE];
	size_t lb = strlen(bundle), li = strlen(id);
	int k = sha256_init();

	key = malloc(lb + 1 + li);
	if (!key)
		return -ENOMEM;
	memcpy(key, bundle, lb + 1);
	memcpy(key + lb + 1, id, li);
	if (k == 0)
		k = sha256_hex(key, lb + 1 + li, hex);
	if (k == 0)
		snprintf(name, size, NAME_PREFIX "%.40s", hex);
	return k;
}

/* The runtime that runs us, by its name: its semantics is what the container expects. */
static enum oci_runtime detect_runtime(const struct hook *h)
{
	const char *a = hook_annotation(&h->st, &h->sp, "io.bpfbroker.runtime");
	enum oci_runtime rt = OCI_RUNTIME_BOTH;
	char path[64], comm[32] = "";
	FILE *f;

	if (a && oci_runtime_from_name(a, &rt) == 0)
		return rt;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)getppid());
	f = fopen(path, "re");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	if (oci_runtime_from_name(comm, &rt) < 0 || rt == OCI_RUNTIME_BOTH)
		rt = OCI_RUNTIME_BOTH;
	return rt;
}

/* Move process pid into cgroup (a directory). */
static int move_to(pid_t pid, const char *cgroup)
{
	char p[16];

	snprintf(p, sizeof(p), "%d", (int)pid);
	return cgroupfs_write(cgroup, "cgroup.procs", p);
}

/*
 * A container in the hook's own cgroup (crun --cgroup-manager=disabled keeps it in
 * the caller's): give it a child cgroup of its own, so the rules confine it and
 * not the runtime, and the stop hook, outside it, may remove them.
 */
static int own_child_cgroup(struct hook *h, char *cgroup, size_t size)
{
	int k;

	if ((size_t)snprintf(cgroup, size, "%s/%s", h->own_cgroup, h->name) >= size)
		return fail(h, -ENAMETOOLONG, NULL, "the container's cgroup");
	if (mkdir(cgroup, 0755) < 0 && errno != EEXIST)
		return fail(h, -errno, NULL, "cannot make a cgroup for the container");
	k = move_to(h->st.pid, cgroup);
	if (k < 0) {
		(void)rmdir(cgroup);
		return fail(h, k, NULL, "cannot move the container into its cgroup");
	}
	return 0;
}

static int load(struct hook *h, struct bpfbroker *b, const struct bpf_insn *insns, size_t n)
{
	struct bpfbroker_insns_opts o = {
		.sz = sizeof(o),
		.prog_type = "cgroup_device",
		.attach_type = "cgroup_device",
		.license = "GPL",
		.prog_name = "devices",
		.name = h->name,
	};
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *e = NULL;
	int k = bpfbroker_load_insns(b, insns, n, &o, &res, &e);

	/* Left from an earlier run of this container (prestart and createRuntime both). */
	if (k < 0 && e && strcmp(e->code, "exists") == 0) {
		bpfbroker_error_free(e);
		e = NULL;
		k = bpfbroker_unload(b, h->name, &e);
		if (k == 0)
			k = bpfbroker_load_insns(b, insns, n, &o, &res, &e);
	}
	if (k < 0)
		return fail(h, k, e, "the broker refused the device rules");
	bpfbroker_result_free(res);
	return 0;
}

static int attach(struct hook *h, struct bpfbroker *b, const char *cgroup)
{
	struct bpfbroker_attach_opts o = {
		.sz = sizeof(o),
		.object = h->name,
		.program = "devices",
		.target_type = "cgroup",
		.attach_type = "cgroup_device",
		.pin = true,
		/* The container's processes may not detach or unload it through the broker. */
		.protect = true,
	};
	struct bpfbroker_error *e = NULL;
	int k;

	o.cgroup_fd = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (o.cgroup_fd < 0)
		return fail(h, -errno, NULL, "cannot open the container's cgroup");
	k = bpfbroker_attach(b, &o, NULL, NULL, &e);
	close(o.cgroup_fd);
	if (k < 0)
		return fail(h, k, e, "the broker refused to attach the device rules");
	return 0;
}

static void sweep(struct bpfbroker *b, const struct hook *h);

static int enforce(struct hook *h)
{
	_cleanup_free_ struct bpf_insn *insns = NULL;
	char cgroup[PATH_MAX], detail[512] = "";
	struct bpfbroker *b = NULL;
	bool made = false;
	size_t n;
	int k;

	k = hook_spec_read(h->st.bundle, &h->sp, h->err, sizeof(h->err));
	if (k < 0)
		return k;
	k = oci_devices_program(&(struct oci_device_config){.rules = h->sp.rules,
							    .n_rules = h->sp.n_rules,
							    .device_paths = h->sp.device_paths,
							    .n_device_paths = h->sp.n_device_paths},
				detect_runtime(h), &insns, &n, detail, sizeof(detail));
	if (k < 0) {
		snprintf(h->err, sizeof(h->err), "the device rules: %s", detail);
		return k;
	}
	if (h->st.pid <= 0)
		return fail(h, -ESRCH, NULL, "the state has no pid");
	k = cgroupfs_pid_dir(h->st.pid, cgroup, sizeof(cgroup));
	if (k < 0)
		return fail(h, k, NULL, "cannot find the container's cgroup v2");
	if (strcmp(cgroup, h->own_cgroup) == 0) {
		k = own_child_cgroup(h, cgroup, sizeof(cgroup));
		if (k < 0)
			return k;
		made = true;
	}
	/* Rules the container could walk out of are not enforced: say so, start nothing. */
	k = hook_confine_check(h->st.pid, made, &h->sp, h->err, sizeof(h->err));
	if (k == 0) {
		k = bpfbroker_connect(NULL, &b);
		if (k < 0)
			fail(h, k, NULL, "cannot connect to the broker");
		else
			k = load(h, b, insns, n);
	}
	if (k == 0) {
		k = attach(h, b, cgroup);
		if (k < 0)
			(void)bpfbroker_unload(b, h->name, NULL);
	}
	if (k == 0)
		sweep(b, h);
	/* Leave nothing: the container goes back where the runtime put it. */
	if (k < 0 && made && move_to(h->st.pid, h->own_cgroup) == 0)
		(void)rmdir(cgroup);
	bpfbroker_close(b);
	return k;
}

/* rmdir a cgroup of ours; its last process may still be leaving it, so retry a little. */
static void remove_cgroup(const char *dir)
{
	for (int i = 0; i < 100 && rmdir(dir) < 0 && errno == EBUSY; i++)
		nanosleep(&(struct timespec){.tv_nsec = 20 * 1000 * 1000}, NULL);
}

static int unload(struct hook *h, struct bpfbroker *b, const char *name)
{
	struct bpfbroker_error *e = NULL;
	int k = bpfbroker_unload(b, name, &e);

	if (k < 0 && e && strcmp(e->code, "not-found") == 0)
		k = 0;
	if (k < 0)
		return fail(h, k, e, "cannot unload the device rules");
	bpfbroker_error_free(e);
	return 0;
}

/*
 * Is the container of object o gone? Its child cgroup (if we made one) is empty,
 * or none of its links is on a cgroup that still exists (the kernel reports a
 * removed cgroup's links with cgroup id 0).
 */
static bool gone(const struct hook *h, json_object *o, const char *name, char *child, size_t size)
{
	json_object *links = NULL, *t;
	char events[PATH_MAX + 16], buf[256] = "";
	struct stat s;
	FILE *f;

	if ((size_t)snprintf(child, size, "%s/%s", h->own_cgroup, name) < size &&
	    stat(child, &s) == 0) {
		if ((size_t)snprintf(events, sizeof(events), "%s/cgroup.events", child) >=
		    sizeof(events))
			return false;
		f = fopen(events, "re");
		if (f) {
			buf[fread(buf, 1, sizeof(buf) - 1, f)] = '\0';
			fclose(f);
		}
		return strstr(buf, "populated 0") != NULL;
	}
	child[0] = '\0';
	json_object_object_get_ex(o, "links", &links);
	for (size_t i = 0; i < json_object_array_length(links); i++)
		if (json_object_object_get_ex(json_object_array_get_idx(links, i), "target", &t) &&
		    strncmp(json_object_get_string(t), "cgroup id ", 10) == 0 &&
		    strcmp(json_object_get_string(t), "cgroup id 0") != 0)
			return false;
	return true;
}

/* Remove the objects (and cgroups) of containers that ended without their stop hook. */
static void sweep(struct bpfbroker *b, const struct hook *h)
{
	_cleanup_free_ char *text = NULL;
	json_object *root, *objs = NULL, *v;
	time_t now = time(NULL);
	char child[PATH_MAX];

	if (bpfbroker_list(b, NULL, &text, NULL) < 0 || !(root = json_tokener_parse(text)))
		return;
	json_object_object_get_ex(root, "objects", &objs);
	for (size_t i = 0; i < json_object_array_length(objs); i++) {
		json_object *o = json_object_array_get_idx(objs, i);
		const char *name;

		if (!json_object_object_get_ex(o, "name", &v))
			continue;
		name = json_object_get_string(v);
		if (strncmp(name, NAME_PREFIX, strlen(NAME_PREFIX)) != 0 ||
		    strcmp(name, h->name) == 0 || !json_object_object_get_ex(o, "loaded_at", &v) ||
		    json_object_get_int64(v) > now - LEFTOVER_AGE_SEC ||
		    !gone(h, o, name, child, sizeof(child)))
			continue;
		if (child[0])
			remove_cgroup(child);
		(void)bpfbroker_unload(b, name, NULL);
	}
	json_object_put(root);
}

static int stop(struct hook *h)
{
	struct bpfbroker *b = NULL;
	char child[PATH_MAX];
	int k;

	/*
	 * The cgroup we made for a container that ran in ours: its processes are
	 * gone by now, and it goes even when the broker can't be reached.
	 */
	if ((size_t)snprintf(child, sizeof(child), "%s/%s", h->own_cgroup, h->name) < sizeof(child))
		remove_cgroup(child);
	k = bpfbroker_connect(NULL, &b);
	if (k < 0)
		return fail(h, k, NULL, "cannot connect to the broker");
	k = unload(h, b, h->name);
	sweep(b, h);
	bpfbroker_close(b);
	return k;
}

/* Are we root of the host's user namespace (uid_map the identity of every uid)? */
static bool host_root(void)
{
	unsigned long inside = 1, outside = 1, count = 0;
	FILE *f;
	int n;

	if (geteuid() != 0)
		return false;
	f = fopen("/proc/self/uid_map", "re");
	if (!f)
		return false;
	n = fscanf(f, "%lu %lu %lu", &inside, &outside, &count);
	fclose(f);
	return n == 3 && inside == 0 && outside == 0 && count == 4294967295UL;
}

int main(int argc, char **argv)
{
	struct hook h = {0};
	const char *mode;
	bool warn;
	int k;

	if (argc > 1) {
		fprintf(stderr, "usage: bpfbroker-oci-hook < STATE (run by the runtime as an OCI "
				"hook; see the README, \"Rootless containers\")\n");
		return 2;
	}
	k = hook_state_read(STDIN_FILENO, &h.st, h.err, sizeof(h.err));
	if (k < 0) {
		fprintf(stderr, "bpfbroker-oci-hook: %s\n", h.err);
		return 1;
	}
	mode = hook_annotation(&h.st, NULL, "io.bpfbroker.devices");
	if (mode && strcmp(mode, "warn") != 0 && strcmp(mode, "enforce") != 0) {
		fprintf(stderr,
			"bpfbroker-oci-hook: container %s: annotation io.bpfbroker.devices is "
			"\"%s\", not \"enforce\" or \"warn\"\n",
			h.st.id, mode);
		hook_state_done(&h.st);
		return 1;
	}
	/* Root in the host's user namespace: the runtime loads the device program itself. */
	if (host_root()) {
		hook_state_done(&h.st);
		return 0;
	}
	k = object_name(h.st.bundle ?: "", h.st.id, h.name, sizeof(h.name));
	if (k == 0)
		k = cgroupfs_pid_dir(0, h.own_cgroup, sizeof(h.own_cgroup));
	if (k < 0)
		fail(&h, k, NULL, "cannot find the hook's own cgroup v2");
	else if (strcmp(h.st.status, "creating") == 0 || strcmp(h.st.status, "created") == 0)
		k = enforce(&h);
	else if (strcmp(h.st.status, "stopped") == 0)
		k = stop(&h);
	else
		k = fail(&h, -EINVAL, NULL, "unexpected status (use createRuntime and poststop)");
	/* The config's annotation counts too; read only now, for enforce. */
	mode = hook_annotation(&h.st, &h.sp, "io.bpfbroker.devices");
	warn = mode && strcmp(mode, "warn") == 0;
	if (k < 0)
		fprintf(stderr, "bpfbroker-oci-hook: %scontainer %s (status %s): %s%s\n",
			warn ? "warning: " : "", h.st.id, h.st.status, h.err,
			warn && strcmp(h.st.status, "stopped") != 0
				? "; it runs WITHOUT its device rules (io.bpfbroker.devices=warn)"
				: "");
	hook_spec_done(&h.sp);
	hook_state_done(&h.st);
	return k < 0 && !warn ? 1 : 0;
}
