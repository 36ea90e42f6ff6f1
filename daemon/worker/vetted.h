/* SPDX-License-Identifier: MIT */
/*
 * Vetted objects in the worker (policy/vetted.h): system objects' manifests found in root's
 * objects directories, the most a load may read before its digest is known, and the grant a
 * vetted named object still has at a later request.
 */
#pragma once

#include "load.h"
#include "policy/vetted.h"

/*
 * The manifest of system object name, from the first objects directory that has NAME.json
 * (the administrator's /etc/bpfbroker/objects, then the package's; cfg->objects_dir alone
 * when set). 0 with *ret and *ret_dir (the directory); -ENOENT: none installed; -EACCES: a
 * file or directory on its way that someone other than root could write (*error says which);
 * -EBADMSG: unreadable or broken (*error); -ENOMEM.
 */
int vetted_manifest_find(const struct load_config *cfg, const char *name,
			 struct policy_vetted **ret, const char **ret_dir, char **error);
void vetted_freep(struct policy_vetted **v);
/*
 * The most bytes any grant of g could accept an object of: g's own max_object_bytes and that
 * of each "digests" entry that decides for its digest (the first), a named manifest's as
 * installed now (one missing, untrusted or broken grants nothing, so adds nothing), at most
 * the hard ceiling. 0 and *ret, or -ENOMEM.
 */
int vetted_max_object_bytes(const struct load_config *cfg, const struct policy_grant *g,
			    uint64_t *ret);
/*
 * The grant a named object recorded as vetted ("vetted": "system:NAME" or "sha256:...", and
 * its "digest") has now, for its owner whose ordinary grant is g: *ret the vetted grant while
 * the policy still grants it and (for a system object) the installed manifest still names
 * that digest; else *ret NULL, and the ordinary grant applies. 0 or -ENOMEM.
 */
int vetted_grant_now(const struct load_config *cfg, const struct policy_grant *g,
		     const char *vetted, const char *digest, struct policy_grant **ret);
