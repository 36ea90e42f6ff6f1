/* SPDX-License-Identifier: MIT */
/* The OCI state (stdin) and config.json of a container, read for bpfbroker-oci-hook with json-c. */
#include "spec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "common/macro.h"

#define MAX_JSON_BYTES (1u << 20)

static int read_json(int fd, const char *what, json_object **ret, char *errbuf, size_t errsize)
{
	_cleanup_free_ char *buf = malloc(MAX_JSON_BYTES + 1);
	size_t n = 0;
	json_object *o;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r = read(fd, buf + n, MAX_JSON_BYTES + 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(errbuf, errsize, "cannot read %s: %m", what);
			return -errno;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > MAX_JSON_BYTES) {
			snprintf(errbuf, errsize, "%s is larger than %u bytes", what,
				 MAX_JSON_BYTES);
			return -EFBIG;
		}
	}
	buf[n] = '\0';
	o = json_tokener_parse(buf);
	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		snprintf(errbuf, errsize, "%s is not a JSON object", what);
		return -EINVAL;
	}
	*ret = o;
	return 0;
}

/* A member of type t, or NULL when absent or null; -EINVAL (in *k) when of another type. */
static json_object *member(json_object *o, const char *key, json_type t, int *k)
{
	json_object *v = NULL;

	if (!o || !json_object_object_get_ex(o, key, &v) || !v)
		return NULL;
	if (!json_object_is_type(v, t)) {
		*k = -EINVAL;
		return NULL;
	}
	return v;
}

static const char *string_member(json_object *o, const char *key, int *k)
{
	json_object *v = member(o, key, json_type_string, k);

	return v ? json_object_get_string(v) : NULL;
}

int hook_state_read(int fd, struct hook_state *ret, char *errbuf, size_t errsize)
{
	struct hook_state s = {0};
	json_object *pid;
	int k = read_json(fd, "the container state on standard input", &s.root, errbuf, errsize);

	if (k < 0)
		return k;
	s.id = string_member(s.root, "id", &k);
	s.status = string_member(s.root, "status", &k);
	s.bundle = string_member(s.root, "bundle", &k);
	s.annotations = member(s.root, "annotations", json_type_object, &k);
	pid = member(s.root, "pid", json_type_int, &k);
	if (pid) {
		int64_t p = json_object_get_int64(pid);

		if (p < 0 || p > INT32_MAX)
			k = -EINVAL;
		s.pid = (pid_t)p;
	}
	if (k < 0 || !s.id || !*s.id || !s.status || !s.bundle) {
		snprintf(errbuf, errsize,
			 "the state on standard input is not an OCI state (id, status, bundle)");
		json_object_put(s.root);
		return -EINVAL;
	}
	*ret = s;
	return 0;
}

void hook_state_done(struct hook_state *s)
{
	json_object_put(s->root);
	*s = (struct hook_state){0};
}

static int parse_rule(json_object *o, struct oci_device_rule *r)
{
	json_object *v;
	int k = 0;

	if (!json_object_is_type(o, json_type_object))
		return -EINVAL;
	v = member(o, "allow", json_type_boolean, &k);
	if (!v)
		return -EINVAL; /* required by the runtime spec */
	r->allow = json_object_get_boolean(v);
	r->type = string_member(o, "type", &k);
	r->access = string_member(o, "access", &k);
	v = member(o, "major", json_type_int, &k);
	r->has_major = v != NULL;
	r->major = v ? json_object_get_int64(v) : -1;
	v = member(o, "minor", json_type_int, &k);
	r->has_minor = v != NULL;
	r->minor = v ? json_object_get_int64(v) : -1;
	/* -1 (or absent) is the wildcard; other negatives mean nothing to runc: refused. */
	if (k == 0 &&
	    (r->major < -1 || r->minor < -1 || r->major > UINT32_MAX || r->minor > UINT32_MAX))
		k = -EINVAL;
	return k;
}

int hook_spec_read(const char *bundle, struct hook_spec *ret, char *errbuf, size_t errsize)
{
	struct hook_spec s = {0};
	_cleanup_close_ int dir = open(bundle, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int fd = -EBADF;
	json_object *linux_, *res, *devs, *nodes;
	size_t n_rules, n_nodes;
	int k = 0;

	if (dir < 0 || (fd = openat(dir, "config.json", O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(errbuf, errsize, "cannot open %s/config.json: %m", bundle);
		return -errno;
	}
	k = read_json(fd, "config.json", &s.root, errbuf, errsize);
	if (k < 0)
		return k;
	s.annotations = member(s.root, "annotations", json_type_object, &k);
	linux_ = member(s.root, "linux", json_type_object, &k);
	res = member(linux_, "resources", json_type_object, &k);
	devs = member(res, "devices", json_type_array, &k);
	nodes = member(linux_, "devices", json_type_array, &k);
	s.mounts = member(s.root, "mounts", json_type_array, &k);
	s.namespaces = member(linux_, "namespaces", json_type_array, &k);
	s.process = member(s.root, "process", json_type_object, &k);
	n_rules = devs ? json_object_array_length(devs) : 0;
	n_nodes = nodes ? json_object_array_length(nodes) : 0;
	if (k < 0) {
		snprintf(errbuf, errsize,
			 "config.json: linux.resources.devices (or mounts, or namespaces) is "
			 "malformed");
		goto fail;
	}
	if (n_rules > OCI_DEVICES_MAX_RULES || n_nodes > OCI_DEVICES_MAX_RULES) {
		snprintf(errbuf, errsize, "config.json: more than %d device rules or devices",
			 OCI_DEVICES_MAX_RULES);
		k = -E2BIG;
		goto fail;
	}
	s.rules = calloc(n_rules + 1, sizeof(*s.rules));
	s.device_paths = calloc(n_nodes + 1, sizeof(*s.device_paths));
	if (!s.rules || !s.device_paths) {
		k = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < n_rules; i++)
		if (parse_rule(json_object_array_get_idx(devs, i), &s.rules[i]) < 0) {
			snprintf(errbuf, errsize,
				 "config.json: linux.resources.devices[%zu] is malformed", i);
			k = -EINVAL;
			goto fail;
		}
	for (size_t i = 0; i < n_nodes; i++) {
		json_object *d = json_object_array_get_idx(nodes, i);

		s.device_paths[i] = json_object_is_type(d, json_type_object)
					    ? string_member(d, "path", &k)
					    : NULL;
	}
	s.n_rules = n_rules;
	s.n_device_paths = n_nodes;
	*ret = s;
	return 0;
fail:
	hook_spec_done(&s);
	return k;
}

void hook_spec_done(struct hook_spec *s)
{
	free(s->rules);
	free(s->device_paths);
	json_object_put(s->root);
	*s = (struct hook_spec){0};
}

const char *hook_annotation(const struct hook_state *st, const struct hook_spec *sp,
			    const char *key)
{
	int k = 0;
	const char *v = st ? string_member(st->annotations, key, &k) : NULL;

	return v ? v : sp ? string_member(sp->annotations, key, &k) : NULL;
}
