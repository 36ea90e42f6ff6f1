/* SPDX-License-Identifier: MIT */
/*
 * Vetted objects in the worker: manifests found in root's objects directories, the read bound
 * of a user with digest grants, grants now.
 */
#include "vetted.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/macro.h"
#include "daemon/shared/procfs.h"
#include "policy/trust.h"

/* The administrator's before the package's (BPFBROKER_OBJECTS_DIR, meson's datadir). */
static const char *const default_dirs[] = {"/etc/bpfbroker/objects", BPFBROKER_OBJECTS_DIR};

void vetted_freep(struct policy_vetted **v)
{
	policy_vetted_free(*v);
}

int vetted_manifest_find(const struct load_config *cfg, const char *name,
			 struct policy_vetted **ret, const char **ret_dir, char **error)
{
	const char *const *dirs = cfg->objects_dir ? &cfg->objects_dir : default_dirs;
	size_t n_dirs = cfg->objects_dir ? 1 : ARRAY_SIZE(default_dirs);
	char file[POLICY_MAX_OBJECT_NAME + 8];

	if (!parse_object_name_is_valid(name))
		return -EINVAL;
	snprintf(file, sizeof(file), "%s.json", name);
	for (size_t i = 0; i < n_dirs; i++) {
		_cleanup_free_ char *why = NULL, *text = NULL;
		_cleanup_close_ int fd = trust_open_file(dirs[i], file, &why);
		int k;

		if (fd == -ENOENT)
			continue;
		if (fd == -ENOMEM)
			return fd;
		if (fd < 0)
			return error_setf(error, -EACCES, "%s/%s", dirs[i],
					  why ? why : strerror(-fd));
		/* Manifests are at most POLICY_MAX_MANIFEST_BYTES: the parser says so if not. */
		k = procfs_read(fd, &text);
		if (k == -ENOMEM)
			return k;
		if (k < 0)
			return error_setf(error, -EBADMSG, "%s/%s: %s", dirs[i], file,
					  strerror(-k));
		k = policy_manifest_parse(file, text, ret, &why);
		if (k == -ENOMEM)
			return k;
		if (k < 0)
			return error_setf(error, -EBADMSG, "%s/%s", dirs[i],
					  why ? why : strerror(-k));
		*ret_dir = dirs[i];
		return 0;
	}
	return -ENOENT;
}

/* Entry v of g's digests decides for its digest (the first that names it). */
static bool digest_decides(const struct policy_grant *g, const struct policy_vetted *v)
{
	return policy_grant_digest(g, v->digest) == v;
}

/* Entry i of g's digests grants nothing, or nothing an earlier one did not already count. */
static bool digest_counted(const struct policy_grant *g, size_t i)
{
	const struct policy_vetted *v = g->digests[i];

	if (!digest_decides(g, v))
		return true;
	for (size_t k = 0; v->manifest && k < i; k++) {
		const struct policy_vetted *e = g->digests[k];

		if (e->manifest && strcmp(e->manifest, v->manifest) == 0 && digest_decides(g, e))
			return true;
	}
	return false;
}

int vetted_max_object_bytes(const struct load_config *cfg, const struct policy_grant *g,
			    uint64_t *ret)
{
	uint64_t bound = g->limits.max_object_bytes;

	for (size_t i = 0; i < g->n_digests && bound < POLICY_HARD_MAX_OBJECT_BYTES; i++) {
		_cleanup_(vetted_freep) struct policy_vetted *m = NULL;
		const struct policy_vetted *v = g->digests[i];
		const char *dir;

		if (digest_counted(g, i))
			continue;
		if (v->manifest) {
			int k = vetted_manifest_find(cfg, v->manifest, &m, &dir, NULL);

			if (k == -ENOMEM)
				return k;
			if (k < 0)
				continue;
			v = m;
		}
		if (policy_vetted_max_object_bytes(v) > bound)
			bound = policy_vetted_max_object_bytes(v);
	}
	*ret = bound < POLICY_HARD_MAX_OBJECT_BYTES ? bound : POLICY_HARD_MAX_OBJECT_BYTES;
	return 0;
}

int vetted_grant_now(const struct load_config *cfg, const struct policy_grant *g,
		     const char *vetted, const char *digest, struct policy_grant **ret)
{
	_cleanup_(vetted_freep) struct policy_vetted *m = NULL;
	const struct policy_vetted *v = NULL;
	const char *dir, *name = NULL;
	char source[PATH_MAX];

	*ret = NULL;
	if (!vetted || !digest)
		return 0;
	if (strncmp(vetted, "system:", 7) == 0) {
		name = vetted + 7;
		if (!policy_grant_object(g, name))
			return 0;
	} else {
		v = policy_grant_digest(g, vetted);
		if (!v || strcmp(vetted, digest) != 0)
			return 0;
		name = v->manifest;
	}
	if (name) {
		int k = vetted_manifest_find(cfg, name, &m, &dir, NULL);

		if (k == -ENOMEM)
			return k;
		/* Gone, untrusted or broken: what it granted is not known now. */
		if (k < 0)
			return 0;
		/* A system object stays vetted only as the build its manifest names. */
		if (!v && strcmp(m->digest, digest) != 0)
			return 0;
		v = m;
	}
	snprintf(source, sizeof(source), "vetted object %s", vetted);
	return policy_grant_vetted(g, v, source, ret);
}
