/* SPDX-License-Identifier: MIT */
/*
 * The setup real loaders do between open and load that goes beyond sizes
 * and globals (see proto/PROTOCOL.md, "map_defs", "inner_maps",
 * "attach_targets"): a map's key and value size, the inner map of a map of
 * maps declared without a template, a program's BTF attach target.
 *
 * The order matters: setup_configure() applies the request to the opened
 * object before inspection, so what the policy decides on is the configured
 * map; setup_describe() adds the requested inner maps to that description;
 * only once the policy and the quotas allowed the load does
 * setup_create_inner_maps() make the inner maps, and setup_close_inner_maps()
 * closes them once libbpf has created the outer maps from them (the kernel
 * keeps only a copy of the inner map's shape, not the map).
 */
#pragma once

#include <stddef.h>

#include "policy/policy.h"
#include "proto/proto.h"
#include "reply.h"

struct bpf_object;

struct setup {
	int *inner_fds; /* per request inner_maps entry: -EBADF until created */
	size_t n_inner_fds;
};

/*
 * Apply map_defs, inner_maps (checked only: nothing is created) and
 * attach_targets to obj: 0, > 0 with an error answered in r, or -ENOMEM.
 * Program types and attach types must have been set already (a BTF target
 * is looked up for the program's attach type).
 */
int setup_configure(struct setup *s, struct bpf_object *obj, const struct proto_load_request *req,
		    struct reply *r);
/* The requested inner maps in the description of their outer maps (after inspect_object()). */
void setup_describe(const struct proto_load_request *req, struct object_desc *desc);
/* Create the inner maps (as allowed already) and give them to libbpf: 0, or > 0 answered. */
int setup_create_inner_maps(struct setup *s, struct bpf_object *obj,
			    const struct proto_load_request *req, struct reply *r);
/* Once loaded (or not): nothing keeps the inner maps but these fds. */
void setup_close_inner_maps(struct setup *s);
void setup_done(struct setup *s);
