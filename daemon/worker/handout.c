/* SPDX-License-Identifier: MIT */
#include "handout.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon/shared/caps.h"
#include "common/bpffs.h"
#include "common/fdinfo.h"
#include "common/macro.h"

static bool allow_writable;
static int guard_result = 1; /* 1: not checked yet */
static pid_t guard_pid; /* who checked: workers are forked from the daemon, which checks too */
static char guard_msg[4096];

void handout_allow_writable_bpffs(bool allow)
{
	allow_writable = allow;
}

int handout_check_bpffs(char *msg, size_t size)
{
	struct bpffs_mount m;
	int k;

	if (allow_writable)
		return 0;
	if (guard_result == 1 || guard_pid != getpid()) {
		char buf[16] = "";
		FILE *f;

		guard_pid = getpid();
		/*
		 * The verifier doesn't look at an fd's mode when a program refers to
		 * the map: anyone who may load programs unprivileged writes an ro map
		 * from their own socket filter. Only with unprivileged BPF off do fd
		 * modes mean anything.
		 */
		f = fopen("/proc/sys/kernel/unprivileged_bpf_disabled", "re");
		if (f) {
			if (!fgets(buf, sizeof(buf), f))
				buf[0] = '\0';
			fclose(f);
		}
		/* Unreadable (a sandbox hiding /proc/sys, say) is not "off": fail closed. */
		if (buf[0] != '1' && buf[0] != '2') {
			guard_result = -EACCES;
			snprintf(guard_msg, sizeof(guard_msg),
				 "cannot read kernel.unprivileged_bpf_disabled, so the broker "
				 "cannot tell whether users may load programs that write maps "
				 "they hold read-only: it hands out no read-only, write-only or "
				 "consume map fds");
			if (buf[0] != '0')
				goto out;
		}
		if (buf[0] == '0') {
			guard_result = -EACCES;
			snprintf(
				guard_msg, sizeof(guard_msg),
				"kernel.unprivileged_bpf_disabled is 0: any user may load a socket "
				"filter that writes a map it holds a read-only fd of, so the "
				"broker hands out no read-only, write-only or consume map fds "
				"until it is set (sysctl kernel.unprivileged_bpf_disabled=2) or "
				"the administrator starts bpfbrokerd with --allow-writable-bpffs");
			goto out;
		}
		k = bpffs_find_writable(&m);
		if (k == 0) {
			guard_result = 0;
		} else if (k > 0) {
			char what[1200], fix[700];

			guard_result = -EACCES;
			bpffs_describe(&m, what, sizeof(what), fix, sizeof(fix));
			snprintf(guard_msg, sizeof(guard_msg),
				 "%s; a read-only map fd pinned where users other than root can "
				 "write comes back read-write, so the broker hands out no "
				 "read-only, write-only or consume map fds until %s, or the "
				 "administrator starts bpfbrokerd with --allow-writable-bpffs",
				 what, fix);
		} else {
			guard_result = -EACCES;
			snprintf(guard_msg, sizeof(guard_msg),
				 "cannot check the bpffs mounts (%s), so the broker hands out no "
				 "read-only, write-only or consume map fds",
				 strerror(-k));
		}
	}
out:
	if (guard_result < 0 && msg && size > 0)
		snprintf(msg, size, "%s", guard_msg);
	return guard_result;
}

void handout_forget(void)
{
	guard_result = 1;
}

static bool in_batch;

int handout_batch_begin(void)
{
	static const cap_value_t sys_admin[] = {CAP_SYS_ADMIN};
	int k = caps_set_effective(sys_admin, 1);

	in_batch = k >= 0;
	return k;
}

void handout_batch_end(void)
{
	if (in_batch)
		caps_clear_effective();
	in_batch = false;
}

static bool map_is_frozen(int fd)
{
	uint64_t v = 0;

	return fdinfo_get_u64(fd, "frozen", &v) == 0 && v != 0;
}

/*
 * The access mode of the fd for access to info's map. A mapping of a file
 * opened without write access is never shared (mmap() clears VM_SHARED),
 * and the kernel maps BPF maps only shared, so an O_RDONLY map fd cannot be
 * mapped at all, not even read-only. A frozen map's fds write nothing from
 * user space whatever their mode (map_get_sys_perms() drops FMODE_CAN_WRITE,
 * bpf_map_mmap() refuses writable mappings, a read-only mapping loses
 * VM_MAYWRITE), so an mmapable array frozen at load is handed out for ro as
 * O_RDWR: that fd reads and maps read-only, and nothing more. (Inserting it
 * into a map of maps is the one thing O_RDWR would add; map_insert refuses
 * frozen maps.)
 */
static int handout_map_fd_flags(const struct bpf_map_info *info, enum map_access access,
				bool frozen)
{
	switch (access) {
	case MAP_ACCESS_RO:
		if (frozen && info->type == BPF_MAP_TYPE_ARRAY &&
		    (info->map_flags & BPF_F_MMAPABLE))
			return O_RDWR;
		return O_RDONLY;
	case MAP_ACCESS_WO:
		return O_WRONLY;
	case MAP_ACCESS_RW:
		return O_RDWR;
	case MAP_ACCESS_CONSUME:
		/* Mapping the consumer position writable needs it (see SECURITY.md). */
		return info->type == BPF_MAP_TYPE_RINGBUF ? O_RDWR : -EINVAL;
	default:
		return -EINVAL;
	}
}

int handout_map_fd(int map_fd, enum map_access access, struct handout_map *ret)
{
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info);

	if (bpf_obj_get_info_by_fd(map_fd, &info, &len) < 0)
		return negative_errno();
	return handout_map_fd_info(map_fd, &info, access, ret);
}

/* An fd for the map with exactly the granted access, checked after opening. */
int handout_map_fd_info(int map_fd, const struct bpf_map_info *map_info, enum map_access access,
			struct handout_map *ret)
{
	static const cap_value_t sys_admin[] = {CAP_SYS_ADMIN};
	const struct bpf_map_info info = *map_info;
	bool frozen;
	int fd, k, want;

	/* Defence in depth: callers check first, for a better message. */
	if (access != MAP_ACCESS_RW) {
		k = handout_check_bpffs(NULL, 0);
		if (k < 0)
			return k;
	}
	/*
	 * Being frozen changes the handout only for mmapable arrays; reading
	 * fdinfo (a /proc file) for every other map would cost each load.
	 */
	frozen = (info.map_flags & BPF_F_MMAPABLE) && map_is_frozen(map_fd);
	want = handout_map_fd_flags(&info, access, frozen);
	if (want < 0)
		return want;
	LIBBPF_OPTS(bpf_get_fd_by_id_opts, opts,
		    .open_flags = want == O_RDONLY   ? BPF_F_RDONLY
				  : want == O_WRONLY ? BPF_F_WRONLY
						     : 0);
	/* BPF_MAP_GET_FD_BY_ID is the kernel's only way to open a map with fewer rights. */
	if (!in_batch) {
		k = caps_set_effective(sys_admin, 1);
		if (k < 0)
			return k;
	}
	fd = bpf_map_get_fd_by_id_opts(info.id, &opts);
	k = fd < 0 ? negative_errno() : 0;
	if (!in_batch)
		caps_clear_effective();
	if (fd < 0)
		return k;
	/* The file's access mode is what the kernel checks on every map operation. */
	if ((fcntl(fd, F_GETFL) & O_ACCMODE) != want ||
	    (access == MAP_ACCESS_RO && want == O_RDWR && !map_is_frozen(fd))) {
		safe_close(fd);
		return -EACCES;
	}
	*ret = (struct handout_map){.id = info.id, .map_flags = info.map_flags, .frozen = frozen};
	return fd;
}

void handout_prog_tag(const struct bpf_prog_info *info, char ret_tag[17])
{
	for (int b = 0; b < BPF_TAG_SIZE; b++)
		snprintf(ret_tag + 2 * b, 3, "%02x", info->tag[b]);
}

int handout_prog_info(int prog_fd, uint32_t *ret_id, char ret_tag[17])
{
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info);

	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) < 0)
		return negative_errno();
	handout_prog_tag(&info, ret_tag);
	*ret_id = info.id;
	return 0;
}
