/* SPDX-License-Identifier: MIT */
/*
 * The fds a load hands out: programs' where granted, maps' with exactly the granted access, maps
 * frozen on request.
 */
#include "job.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "common/fdinfo.h"
#include "denial.h"
#include "handout.h"
#include "proto/proto.h"
#include "reply.h"

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
		int fd = m >= 0 ? bpf_map__fd(j->handles.maps[m]) : -1;
		uint64_t frozen = 0;
		int err;

		if (fd < 0)
			return reply_error(r, PROTO_E_INVALID, ENOENT,
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
		return reply_error(r, PROTO_E_LOAD, err, "cannot freeze map \"%s\": %s",
				   j->req.freeze[i], strerror(err));
	}
	return 1;
}

static int job_hand_out_maps(struct job *j, struct reply *r, json_object *maps)
{
	for (size_t i = 0; i < j->desc.n_maps; i++) {
		json_object *o = json_object_array_get_idx(maps, i);
		int map_fd = job_map_fd(j, i);
		struct handout_map h = {};
		int fd, idx;

		if (map_fd < 0)
			continue; /* not created: no loaded program needs it */
		if (j->verdict.map_access[i] == MAP_ACCESS_NONE) {
			struct bpf_map_info info = {};
			uint32_t len = sizeof(info);

			if (bpf_obj_get_info_by_fd(map_fd, &info, &len) == 0)
				json_object_object_add(o, "id", json_object_new_int64(info.id));
			continue;
		}
		fd = handout_map_fd(map_fd, j->verdict.map_access[i], &h);
		idx = fd < 0 ? fd : reply_add_fd(r, fd);
		if (idx < 0)
			return reply_error(
				r, PROTO_E_INTERNAL, -idx,
				"cannot open map \"%s\" with %s access: %s", j->desc.maps[i].name,
				map_access_to_string(j->verdict.map_access[i]), strerror(-idx));
		json_object_object_add(o, "id", json_object_new_int64(h.id));
		json_object_object_add(o, "map_flags", json_object_new_int64(h.map_flags));
		json_object_object_add(o, "frozen", json_object_new_boolean(h.frozen));
		json_object_object_add(o, "fd", json_object_new_int(idx));
	}
	return 1;
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
				return denial_reply(r, PROTO_E_DENIED, EACCES, "map",
						    j->desc.maps[i].name, NULL, "%s", msg);
			break;
		}
	}
	for (size_t i = 0; i < j->desc.n_programs; i++) {
		json_object *o = json_object_array_get_idx(progs, i);
		struct bpf_prog_info info = {};
		uint32_t len = sizeof(info);
		char tag[2 * BPF_TAG_SIZE + 1];
		int fd;

		if (!j->desc.programs[i].load)
			continue;
		fd = job_prog_fd(j, i);
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
			return reply_error(r, PROTO_E_INTERNAL, EIO, "cannot query program \"%s\"",
					   j->desc.programs[i].name);
		for (int b = 0; b < BPF_TAG_SIZE; b++)
			snprintf(tag + 2 * b, 3, "%02x", info.tag[b]);
		json_object_object_add(o, "id", json_object_new_int64(info.id));
		json_object_object_add(o, "tag", json_object_new_string(tag));
		if (j->verdict.prog_fd[i]) {
			int dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);
			int idx = dup < 0 ? -errno : reply_add_fd(r, dup);

			if (idx < 0)
				return reply_error(r, PROTO_E_INTERNAL, -idx,
						   "cannot pass program \"%s\"",
						   j->desc.programs[i].name);
			json_object_object_add(o, "fd", json_object_new_int(idx));
		}
	}
	/* Every map's fd in one go with CAP_SYS_ADMIN raised once (handout.h). */
	handout_batch_begin();
	k = job_hand_out_maps(j, r, maps);
	handout_batch_end();
	return k;
}
