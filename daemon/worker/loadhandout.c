/* SPDX-License-Identifier: MIT */
/*
 * The fds a load hands out: programs' where granted, maps' with exactly the granted access, maps
 * frozen on request.
 */
#include "job.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fdinfo.h"
#include "common/json.h"
#include "denial.h"
#include "handout.h"
#include "proto/proto.h"
#include "reply.h"

/* As the ledger said it when it read the info itself (job_record()). */
static int info_error(struct reply *r, int err)
{
	return reply_error(r, PROTO_ERR_INTERNAL, err, "cannot count your kernel objects: %s",
			   strerror(err));
}

/*
 * What the kernel says of each program loaded and map made, read once: the
 * ledger, the hand-out and a named object's metadata all take it from here.
 */
int job_read_info(struct job *j, struct reply *r)
{
	j->prog_info = calloc(j->desc.n_programs ?: 1, sizeof(*j->prog_info));
	j->map_info = calloc(j->desc.n_maps ?: 1, sizeof(*j->map_info));
	if (!j->prog_info || !j->map_info)
		return -ENOMEM;
	for (size_t i = 0; i < j->desc.n_programs; i++) {
		int fd = j->desc.programs[i].load ? job_prog_fd(j, i) : -EBADF;
		uint32_t len = sizeof(j->prog_info[i]);

		if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &j->prog_info[i], &len) < 0)
			return info_error(r, errno);
	}
	for (size_t i = 0; i < j->desc.n_maps; i++) {
		int fd = job_map_fd(j, i);
		uint32_t len = sizeof(j->map_info[i]);

		if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &j->map_info[i], &len) < 0)
			return info_error(r, errno);
	}
	return 0;
}

/*
 * Freeze the maps the client named: from now on no fd writes them from user
 * space, the broker's included (the programs still do). That is what lets
 * an ro grant of an mmapable array come as an fd that can be mapped
 * (handout_map_fd()).
 */
int job_freeze_maps(struct job *j, struct reply *r)
{
	for (size_t i = 0; i < j->req.n_freeze; i++) {
		int m = job_map_index(j, j->req.freeze[i]);
		int fd = m >= 0 ? bpf_map__fd(j->handles.maps[m]) : -EBADF;
		uint64_t frozen = 0;
		int err;

		if (fd < 0)
			return reply_error(r, PROTO_ERR_INVALID, ENOENT,
					   "freeze: map \"%s\" was not created", j->req.freeze[i]);
		if (bpf_map_freeze(fd) == 0)
			continue;
		err = errno;
		/*
		 * Already frozen (libbpf freezes .rodata, a pin reused may have
		 * been): the kernel says EPERM, as a frozen map's fds write nothing.
		 */
		if ((err == EPERM || err == EBUSY) && fdinfo_get_u64(fd, "frozen", &frozen) == 0 &&
		    frozen)
			continue;
		return reply_error(r, PROTO_ERR_LOAD, err, "cannot freeze map \"%s\": %s",
				   j->req.freeze[i], strerror(err));
	}
	return 0;
}

static int job_hand_out_maps(struct job *j, struct reply *r, json_object *maps)
{
	for (size_t i = 0; i < j->desc.n_maps; i++) {
		json_object *o = json_object_array_get_idx(maps, i);
		int map_fd = job_map_fd(j, i);
		struct handout_map h = {};
		int fd, idx = -1, k;

		if (map_fd < 0)
			continue; /* not created: no loaded program needs it */
		if (j->verdict.map_access[i] == MAP_ACCESS_NONE) {
			k = json_add(o, "id", json_object_new_int64(j->map_info[i].id));
			if (k < 0)
				return k;
			continue;
		}
		fd = handout_map_fd_info(map_fd, &j->map_info[i], j->verdict.map_access[i], &h);
		k = fd < 0 ? fd : reply_add_fd(r, fd, &idx);
		if (k < 0)
			return reply_error(
				r, PROTO_ERR_INTERNAL, -k,
				"cannot open map \"%s\" with %s access: %s", j->desc.maps[i].name,
				map_access_to_string(j->verdict.map_access[i]), strerror(-k));
		if (k > 0)
			return k;
		if (json_add(o, "id", json_object_new_int64(h.id)) < 0 ||
		    json_add(o, "map_flags", json_object_new_int64(h.map_flags)) < 0 ||
		    json_add(o, "frozen", json_object_new_boolean(h.frozen)) < 0 ||
		    json_add(o, "fd", json_object_new_int(idx)) < 0)
			return -ENOMEM;
	}
	return 0;
}

int job_hand_out(struct job *j, struct reply *r, json_object *progs, json_object *maps)
{
	int k;

	for (size_t i = 0; i < j->desc.n_maps; i++) {
		char msg[2048];

		/* ro, wo and consume fds mean something only while the guard holds. */
		if (j->verdict.map_access[i] != MAP_ACCESS_NONE &&
		    j->verdict.map_access[i] != MAP_ACCESS_RW) {
			if (handout_check_bpffs(msg, sizeof(msg)) < 0)
				return denial_reply(r, PROTO_ERR_DENIED, EACCES, "map",
						    j->desc.maps[i].name, NULL, "%s", msg);
			break;
		}
	}
	for (size_t i = 0; i < j->desc.n_programs; i++) {
		json_object *o = json_object_array_get_idx(progs, i);
		char tag[2 * BPF_TAG_SIZE + 1];
		int fd;

		if (!j->desc.programs[i].load)
			continue;
		fd = job_prog_fd(j, i);
		if (fd < 0)
			return reply_error(r, PROTO_ERR_INTERNAL, EIO,
					   "cannot query program \"%s\"", j->desc.programs[i].name);
		handout_prog_tag(&j->prog_info[i], tag);
		if (json_add(o, "id", json_object_new_int64(j->prog_info[i].id)) < 0 ||
		    json_add(o, "tag", json_object_new_string(tag)) < 0)
			return -ENOMEM;
		if (j->verdict.prog_fd[i]) {
			int idx = -1;

			k = reply_add_fd_dup(r, fd, &idx);
			if (k < 0)
				return reply_error(r, PROTO_ERR_INTERNAL, -k,
						   "cannot pass program \"%s\"",
						   j->desc.programs[i].name);
			if (k > 0)
				return k;
			k = json_add(o, "fd", json_object_new_int(idx));
			if (k < 0)
				return k;
		}
	}
	/* Every map's fd in one go with CAP_SYS_ADMIN raised once (handout.h). */
	handout_batch_begin();
	k = job_hand_out_maps(j, r, maps);
	handout_batch_end();
	return k;
}
