/* SPDX-License-Identifier: MIT */
/*
 * The load's object taken, and its grant when it is a vetted object (policy/vetted.h): a system
 * object read from root's objects directories and checked against its manifest's digest, or a
 * client's object whose digest the policy grants.
 */
#include "job.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/macro.h"
#include "common/sha256.h"
#include "denial.h"
#include "policy/trust.h"
#include "proto/proto.h"
#include "reply.h"
#include "vetted.h"

/*
 * The manifest of system object name, answered when it is missing, untrusted or broken: 0
 * with *ret and *ret_dir, > 0 answered, -ENOMEM.
 */
static int manifest_find(struct job *j, const char *name, struct reply *r,
			 struct policy_vetted **ret, const char **ret_dir)
{
	_cleanup_free_ char *error = NULL;
	int k = vetted_manifest_find(j->cfg, name, ret, ret_dir, &error);

	if (k == -ENOENT)
		return reply_error(r, PROTO_ERR_NOT_FOUND, ENOENT,
				   "no system object \"%s\" is installed", name);
	if (k == -EACCES)
		return reply_error(r, PROTO_ERR_OBJECT, EACCES,
				   "system object \"%s\" is not trusted: %s", name,
				   error ? error : strerror(-k));
	if (k == -ENOMEM)
		return k;
	if (k < 0)
		return reply_error(r, PROTO_ERR_OBJECT, -k,
				   "the manifest of system object \"%s\" is broken: %s", name,
				   error ? error : strerror(-k));
	return 0;
}

/* Make the job's grant the one of vetted object v, described by source. */
static int job_use_vetted(struct job *j, const struct policy_vetted *v, const char *source)
{
	struct policy_grant *e;
	int k = policy_grant_vetted(j->grant, v, source, &e);

	if (k < 0)
		return k;
	policy_grant_free(j->grant);
	j->grant = e;
	return 0;
}

static int job_digest(struct job *j, char digest[static POLICY_DIGEST_SIZE])
{
	char hex[SHA256_HEX_SIZE];
	int k = sha256_hex(j->object, j->object_size, hex);

	if (k < 0)
		return k;
	snprintf(digest, POLICY_DIGEST_SIZE, "%s%s", POLICY_DIGEST_PREFIX, hex);
	return 0;
}

/* The object's size against the grant it ended up with (a vetted object's own limit). */
static int job_check_vetted_size(struct job *j, struct reply *r)
{
	uint64_t limit = j->grant->limits.max_object_bytes;

	if (j->object_size <= limit)
		return 0;
	return denial_reply(r, PROTO_ERR_DENIED, EFBIG, "object", NULL, "max_object_bytes",
			    "object is %zu bytes, over the limit of %llu bytes its grant has",
			    j->object_size, (unsigned long long)limit);
}

/*
 * A system object: granted by name ("objects"), its manifest and object file root's, the
 * object's digest the manifest's. Read by the worker itself: the client sends no fd.
 */
static int job_read_system_object(struct job *j, struct reply *r)
{
	_cleanup_(vetted_freep) struct policy_vetted *v = NULL;
	_cleanup_free_ char *error = NULL;
	_cleanup_close_ int fd = -EBADF;
	const char *name = j->req.system_object, *dir = NULL;
	char file[POLICY_MAX_OBJECT_NAME + 8], key[POLICY_MAX_OBJECT_NAME + 16], source[PATH_MAX];
	char digest[POLICY_DIGEST_SIZE];
	int k;

	/* The name is one path component: the request's decoder checked it. */
	snprintf(key, sizeof(key), "objects: %s", name);
	/* Before anything is looked up: who is not granted it learns nothing of it. */
	if (!policy_grant_object(j->grant, name))
		return denial_reply(r, PROTO_ERR_DENIED, EPERM, "object", NULL, key,
				    "system object \"%s\" is not granted to you", name);
	k = manifest_find(j, name, r, &v, &dir);
	if (k != 0)
		return k;
	snprintf(source, sizeof(source), "system object %s (%s/%s.json)", name, dir, name);
	k = job_use_vetted(j, v, source);
	if (k < 0)
		return k;
	snprintf(file, sizeof(file), "%s.bpf.o", name);
	fd = trust_open_file(dir, file, &error);
	if (fd == -ENOMEM)
		return fd;
	if (fd < 0)
		return reply_error(r, PROTO_ERR_OBJECT, fd == -ENOENT ? ENOENT : EACCES,
				   "system object \"%s\" is not trusted: %s/%s", name, dir,
				   error ? error : strerror(-fd));
	k = job_read_object(j, fd, r);
	if (k != 0)
		return k;
	k = job_digest(j, digest);
	if (k < 0)
		return k;
	if (strcmp(digest, v->digest) != 0)
		return reply_error(r, PROTO_ERR_OBJECT, EBADMSG,
				   "system object \"%s\": %s/%s has digest %s, its manifest says "
				   "%s: the file is not the one that was vetted",
				   name, dir, file, digest, v->digest);
	snprintf(j->vetted, sizeof(j->vetted), "system:%s", name);
	memcpy(j->vetted_digest, digest, sizeof(digest));
	return 0;
}

/*
 * A client's object whose digest the policy grants ("digests"): its grants are the entry's,
 * inline or a system object's manifest by name. Any other object keeps the ordinary grant.
 */
static int job_vet_digest(struct job *j, uint64_t ordinary_limit, struct reply *r)
{
	_cleanup_(vetted_freep) struct policy_vetted *m = NULL;
	const struct policy_vetted *v;
	char digest[POLICY_DIGEST_SIZE], source[PATH_MAX];
	const char *dir = NULL;
	int k;

	/* The read's bound ends here: from now on the grant's own limit, or the ordinary. */
	j->grant->limits.max_object_bytes = ordinary_limit;
	k = job_digest(j, digest);
	if (k < 0)
		return k;
	v = policy_grant_digest(j->grant, digest);
	if (!v)
		return job_check_vetted_size(j, r);
	if (v->manifest) {
		k = manifest_find(j, v->manifest, r, &m, &dir);
		if (k != 0)
			return k;
		snprintf(source, sizeof(source), "digest %s, with the grants of system object %s",
			 digest, v->manifest);
		v = m;
	} else {
		snprintf(source, sizeof(source), "digest %s", digest);
	}
	k = job_use_vetted(j, v, source);
	if (k < 0)
		return k;
	snprintf(j->vetted, sizeof(j->vetted), "%s", digest);
	memcpy(j->vetted_digest, digest, sizeof(digest));
	return job_check_vetted_size(j, r);
}

int job_take_object(struct job *j, const int *fds, struct reply *r)
{
	uint64_t ordinary, bound;
	int k;

	if (j->req.system_object)
		return job_read_system_object(j, r);
	if (j->raw || j->grant->n_digests == 0)
		return job_read_object(j, fds[j->req.object_fd], r);
	/*
	 * Only the digest says whether a granted one applies, and with it which size limit:
	 * read up to the largest limit any of the user's grants has (not the hard ceiling, or
	 * one digest grant would let each request make the worker copy 64 MiB), then hold the
	 * object to the grant it gets.
	 */
	ordinary = j->grant->limits.max_object_bytes;
	k = vetted_max_object_bytes(j->cfg, j->grant, &bound);
	if (k < 0)
		return k;
	j->grant->limits.max_object_bytes = bound;
	k = job_read_object(j, fds[j->req.object_fd], r);
	if (k != 0) {
		j->grant->limits.max_object_bytes = ordinary;
		return k;
	}
	return job_vet_digest(j, ordinary, r);
}
