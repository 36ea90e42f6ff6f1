/* SPDX-License-Identifier: MIT */
/* The OCI state a runtime gives a hook on stdin, and the bundle's config.json, as the hook needs
 * them. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <sys/types.h>

#include "oci/devices.h"

struct hook_state {
	json_object *root; /* owns the strings below */
	const char *id, *status, *bundle;
	pid_t pid; /* 0 if absent (stopped) */
	json_object *annotations; /* or NULL */
};

struct hook_spec {
	json_object *root; /* owns the strings below */
	struct oci_device_rule *rules;
	size_t n_rules;
	const char **device_paths;
	size_t n_device_paths;
	json_object *annotations; /* or NULL */
	json_object *mounts; /* the config's "mounts", an array, or NULL */
	json_object *namespaces; /* its linux.namespaces, an array, or NULL */
	json_object *process; /* its process, an object, or NULL */
};

/* Parse the state from fd (at most 1 MiB); -EINVAL with a sentence in errbuf. */
int hook_state_read(int fd, struct hook_state *ret, char *errbuf, size_t errsize);
void hook_state_done(struct hook_state *s);

/* Parse BUNDLE/config.json's linux.resources.devices, linux.devices and annotations. */
int hook_spec_read(const char *bundle, struct hook_spec *ret, char *errbuf, size_t errsize);
void hook_spec_done(struct hook_spec *s);

/* An annotation of the state, else of the config; NULL if neither has it. */
const char *hook_annotation(const struct hook_state *st, const struct hook_spec *sp,
			    const char *key);
