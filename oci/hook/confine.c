/* SPDX-License-Identifier: MIT */
/*
 * Whether a rootless container could move itself out of the cgroup its device
 * rules are attached to, refused before the hook calls it enforced.
 *
 * The container's root is its user's uid, and its cgroup's parent is the
 * user's (a delegated subtree): whatever cgroup.procs above its own it can
 * open, it can write, and the kernel checks no cgroup namespace boundary on a
 * hierarchy mounted without nsdelegate (and with one, only the namespace's
 * root). Verified in test_oci_hook.c: a cgroup namespace the runtime made
 * before the hook moved the container into its own cgroup is rooted above it,
 * so the container mounts cgroup2 and writes its pid at the root; a config
 * mount of the host's cgroup tree gives the same. Without either, cgroup2 can
 * be mounted only in a cgroup namespace the container makes itself, which is
 * rooted at the cgroup it is in.
 */
#include "confine.h"

#include <errno.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "common/macro.h"

/* A JSON value's text, "" for null (a hostile config may have nulls anywhere). */
static const char *text(json_object *o)
{
	const char *t = json_object_get_string(o);

	return t ? t : "";
}

/*
 * Has the container a cgroup namespace of its own (*joined: one named by path,
 * rooted wherever its maker was)? The config says what the runtime makes;
 * /proc/PID/ns/cgroup confirms where we may read it (crun's container is not
 * dumpable before it execs, so there we may not).
 */
static void own_ns(pid_t pid, json_object *namespaces, bool *own, bool *joined)
{
	char path[64];
	struct stat a, b;

	*own = *joined = false;
	for (size_t i = 0; i < json_object_array_length(namespaces); i++) {
		json_object *n = json_object_array_get_idx(namespaces, i), *v;

		if (!json_object_object_get_ex(n, "type", &v) || strcmp(text(v), "cgroup") != 0)
			continue;
		*own = true;
		*joined |= json_object_object_get_ex(n, "path", &v) && v;
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/cgroup", (int)pid);
	if (stat(path, &a) == 0 && stat("/proc/self/ns/cgroup", &b) == 0)
		*own |= a.st_dev != b.st_dev || a.st_ino != b.st_ino;
}

static bool has_option(json_object *m, const char *opt)
{
	json_object *opts = NULL;

	if (!json_object_object_get_ex(m, "options", &opts) ||
	    !json_object_is_type(opts, json_type_array))
		return false;
	for (size_t i = 0; i < json_object_array_length(opts); i++)
		if (strcmp(text(json_object_array_get_idx(opts, i)), opt) == 0)
			return true;
	return false;
}

/* Is a cgroup2 file system mounted at dir or, for an rbind, anywhere below it? */
static bool cgroup2_at_or_below(const char *dir, bool recursive)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL, *real = realpath(dir, NULL);
	struct statfs fs;
	size_t cap = 0, n;

	/* A source that does not resolve here: the runtime cannot bind it either. */
	if (!real)
		return false;
	if (statfs(real, &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC)
		return true;
	if (!recursive)
		return false;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return true; /* unknown counts as reachable */
	n = strcmp(real, "/") == 0 ? 0 : strlen(real);
	while (getline(&line, &cap, f) > 0) {
		char *sep = strstr(line, " - "), mnt[4096];

		if (!sep || strncmp(sep + 3, "cgroup2 ", 8) != 0 ||
		    sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		/* mountinfo escapes blanks as \040: a path with them only fails to match. */
		if (strncmp(mnt, real, n) == 0 && (mnt[n] == '/' || mnt[n] == '\0'))
			return true;
	}
	return false;
}

/*
 * May the container's root mount (cgroup2, or a remount read-write)? Only with
 * CAP_SYS_ADMIN in its bounding set; no "capabilities" at all is the runtime's
 * choice, so counts as may.
 */
static bool may_mount(json_object *process)
{
	json_object *caps = NULL, *bounding = NULL;

	if (!json_object_object_get_ex(process, "capabilities", &caps) || !caps ||
	    !json_object_object_get_ex(caps, "bounding", &bounding) ||
	    !json_object_is_type(bounding, json_type_array))
		return true;
	for (size_t i = 0; i < json_object_array_length(bounding); i++)
		if (strcmp(text(json_object_array_get_idx(bounding, i)), "CAP_SYS_ADMIN") == 0)
			return true;
	return false;
}

int hook_confine_check(pid_t pid, bool moved, const struct hook_spec *sp, char *errbuf,
		       size_t errsize)
{
	json_object *mounts = sp->mounts;
	bool own, joined, same, admin = may_mount(sp->process);

	own_ns(pid, sp->namespaces, &own, &joined);
	same = !own;
	/*
	 * Made before the hook moved it to a cgroup of its own: rooted at the
	 * runtime's. (A runtime that puts the container in a cgroup of its own
	 * makes the namespace there, after the move: runc and crun do.)
	 */
	if (own && (moved || joined) && admin) {
		snprintf(errbuf, errsize,
			 "the container has a cgroup namespace rooted above the cgroup its rules "
			 "confine (the runtime made it in its own cgroup, before the hook gave the "
			 "container one, or the config joins one by path): it could mount cgroup2 "
			 "and move out of its rules; run it without a cgroup namespace, or with a "
			 "cgroup manager");
		return -EPERM;
	}
	for (size_t i = 0; i < json_object_array_length(mounts); i++) {
		json_object *m = json_object_array_get_idx(mounts, i), *v;
		const char *type = "", *source = "", *dest = "?";
		/*
		 * Read-only and no CAP_SYS_ADMIN to remount: cgroup.procs cannot be
		 * written there. "ro" on an rbind covers only its top mount ("rro" all).
		 */
		bool ro = !admin && (has_option(m, "rro") ||
				     (has_option(m, "ro") && !has_option(m, "rbind")));

		if (json_object_object_get_ex(m, "type", &v))
			type = text(v);
		if (json_object_object_get_ex(m, "source", &v))
			source = text(v);
		if (json_object_object_get_ex(m, "destination", &v))
			dest = text(v);
		if (ro)
			continue;
		/*
		 * In the host's cgroup namespace a runtime binds the host's tree (crun
		 * does); in one rooted above the container's cgroup, it mounts that root.
		 */
		if ((same || moved || joined) &&
		    (strcmp(type, "cgroup") == 0 || strcmp(type, "cgroup2") == 0)) {
			snprintf(
				errbuf, errsize,
				"the config mounts a cgroup tree on %s, writable, without a cgroup "
				"namespace rooted at the container's cgroup: the container could "
				"move "
				"out of its rules there",
				dest);
			return -EPERM;
		}
		if ((strcmp(type, "bind") == 0 || has_option(m, "bind") ||
		     has_option(m, "rbind")) &&
		    cgroup2_at_or_below(source, has_option(m, "rbind"))) {
			snprintf(errbuf, errsize,
				 "the config binds %s (a cgroup tree, or one below it) on %s, "
				 "writable: the container could move out of its rules there",
				 source, dest);
			return -EPERM;
		}
	}
	return 0;
}
