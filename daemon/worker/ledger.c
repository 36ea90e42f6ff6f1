/* SPDX-License-Identifier: MIT */
#include "ledger.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/shared/caps.h"
#include "common/fdinfo.h"
#include "common/macro.h"
#include "policy/policy.h"

#define LEDGER_FILE "ledger"

_Static_assert(sizeof(struct ledger_entry) == 32, "ledger records are 32 bytes on disk");
/* More entries than any quota allows (programs and maps): a larger file is not ours. */
#define LEDGER_MAX_ENTRIES (4u * POLICY_HARD_MAX_LOADED_PROGRAMS)

static int ledger_append(struct ledger *l, const struct ledger_entry *e)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct ledger_entry *v;

		if (l->n >= LEDGER_MAX_ENTRIES)
			return -E2BIG;
		v = reallocarray(l->entries, cap, sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->entries = v;
		l->cap = cap;
	}
	l->entries[l->n++] = *e;
	return 0;
}

static uint64_t map_stamp(const struct bpf_map_info *info)
{
	return (uint64_t)info->type << 32 | info->max_entries;
}

static uint64_t map_threads(const struct bpf_map_info *info)
{
	/* Each cpumap entry with a queue runs its own kernel thread (cpu_map_kthread_run()). */
	return info->type == BPF_MAP_TYPE_CPUMAP ? info->max_entries : 0;
}

unsigned ledger_possible_cpus(void)
{
	int cpus = libbpf_num_possible_cpus();

	return cpus > 0 ? (unsigned)cpus : 1;
}

/* What the map costs: the kernel's figure, or what it can grow to where that is more. */
static uint64_t map_charge(int fd, const struct bpf_map_info *info)
{
	uint64_t memlock = 0;
	struct object_map m = {.map_type = (int)info->type,
			       .key_size = info->key_size,
			       .value_size = info->value_size,
			       .max_entries = info->max_entries,
			       .map_flags = info->map_flags};
	uint64_t shape = policy_map_memory_estimate(&m, ledger_possible_cpus());

	(void)fdinfo_get_u64(fd, "memlock", &memlock);
	return memlock > shape ? memlock : shape;
}

/*
 * BTF the kernel keeps for the user's objects: its raw copy and its index of
 * the types (16 bytes a type, a type as small as 12), each allocation
 * rounded up to a power of two: five times the raw size, and a page.
 */
static uint64_t btf_charge(const struct bpf_btf_info *info)
{
	return 5 * (uint64_t)info->btf_size + 4096;
}

/* Does the entry's object still live, and is it the one recorded (not a reused id)? */
static bool entry_alive(const struct ledger_entry *e)
{
	union {
		struct bpf_map_info map;
		struct bpf_prog_info prog;
		struct bpf_btf_info btf;
	} info = {};
	uint32_t len = sizeof(info);
	int fd = e->kind == 'm'	  ? bpf_map_get_fd_by_id(e->id)
		 : e->kind == 'p' ? bpf_prog_get_fd_by_id(e->id)
				  : bpf_btf_get_fd_by_id(e->id);
	bool alive;

	if (fd < 0)
		return errno != ENOENT; /* anything but "gone" keeps counting: fail closed */
	alive = bpf_obj_get_info_by_fd(fd, &info, &len) < 0 ||
		(e->kind == 'm'	  ? map_stamp(&info.map) == e->stamp
		 : e->kind == 'p' ? info.prog.load_time == e->stamp
				  : info.btf.btf_size == e->stamp);
	safe_close(fd);
	return alive;
}

/*
 * The file: a header (magic, and the entries alive at the last pruning),
 * then records as they are in memory. The state directory is root's 0700
 * and the broker's only; a file that doesn't read as one is started over.
 */
#define LEDGER_MAGIC 0x314c4b5242504642ull /* "BFPBRKL1" */

struct ledger_header {
	uint64_t magic;
	uint64_t live_at_prune;
};

/*
 * Read the file's records: 1, or 0 if it doesn't read as a ledger (not ours,
 * or a torn append left a partial record, after which every append would be
 * read misaligned: the caller starts over from what lives), or -ENOMEM.
 */
static int ledger_read(struct ledger *l, int fd)
{
	struct ledger_header h;
	struct stat st;
	size_t n;

	if (fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(h) ||
	    (st.st_size - (off_t)sizeof(h)) % (off_t)sizeof(*l->entries) != 0 ||
	    read(fd, &h, sizeof(h)) != sizeof(h) || h.magic != LEDGER_MAGIC)
		return 0;
	n = (size_t)(st.st_size - (off_t)sizeof(h)) / sizeof(*l->entries);
	if (n > LEDGER_MAX_ENTRIES)
		return 0;
	l->live_at_prune = h.live_at_prune;
	if (n == 0)
		return 1;
	/* Every record in one read: a load costs this read and one append, whatever it counts. */
	l->entries = calloc(n, sizeof(*l->entries));
	if (!l->entries)
		return -ENOMEM;
	l->cap = n;
	if (read(fd, l->entries, n * sizeof(*l->entries)) != (ssize_t)(n * sizeof(*l->entries)))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (l->entries[i].kind != 'm' && l->entries[i].kind != 'p' &&
		    l->entries[i].kind != 'b')
			return 0;
	l->n = n;
	return 1;
}

/* Keep only the entries whose object the kernel still has. */
static void ledger_prune(struct ledger *l)
{
	size_t kept = 0;

	for (size_t i = 0; i < l->n; i++)
		if (entry_alive(&l->entries[i]))
			l->entries[kept++] = l->entries[i];
	l->n = kept;
	l->live_at_prune = kept;
	l->rewrite = true;
}

/* Record a pinned object (adoption of a user's pins for a ledger that was lost). */
static void ledger_adopt_pin(struct ledger *l, int dirfd, const char *name)
{
	char path[PATH_MAX];
	uint64_t type;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dirfd, name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return;
	/* fdinfo says what a pin holds: a map, a program or a link (not counted here). */
	if (fdinfo_get_u64(fd, "map_type", &type) == 0)
		(void)ledger_add_map(l, fd);
	else if (fdinfo_get_u64(fd, "prog_type", &type) == 0)
		(void)ledger_add_prog(l, fd);
	safe_close(fd);
}

static void ledger_adopt_dir(struct ledger *l, int parent, const char *dir)
{
	int dfd = openat(parent, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *e;

	if (!d) {
		safe_close(dfd);
		return;
	}
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && e->d_type != DT_DIR)
			ledger_adopt_pin(l, dirfd(d), e->d_name);
	closedir(d);
}

/*
 * No ledger (a first start with this version, or the state directory was
 * lost): whatever the user has pinned still lives, so count it.
 */
static void ledger_adopt(struct ledger *l, const struct store_config *c, uid_t uid)
{
	char path[4096];
	int dfd;
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "%s/%u", c->pin_root, (unsigned)uid);
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		safe_close(dfd);
		return;
	}
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			ledger_adopt_dir(l, dirfd(d), e->d_name);
	closedir(d);
}

/* BPF_*_GET_FD_BY_ID is CAP_SYS_ADMIN's; before 6.5 every bpf() may want CAP_BPF. */
static const cap_value_t prune_caps[] = {CAP_BPF, CAP_SYS_ADMIN};

int ledger_prune_now(struct ledger *l)
{
	int k = caps_set_effective(prune_caps, ARRAY_SIZE(prune_caps));

	if (k < 0)
		return k;
	ledger_prune(l);
	caps_clear_effective();
	l->n_stored = 0; /* ledger_prune() asked for the file to be written whole */
	return 0;
}

int ledger_open(const struct store_config *c, uid_t uid, bool prune, struct ledger *ret)
{
	struct ledger l = {};
	bool readable = false;
	int fd, k;

	k = snprintf(l.path, sizeof(l.path), "%s/%u/" LEDGER_FILE, c->state_dir, (unsigned)uid);
	if (k < 0 || (size_t)k >= sizeof(l.path))
		return -ENAMETOOLONG;
	fd = open(l.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		k = ledger_read(&l, fd);
		safe_close(fd);
		if (k < 0) {
			free(l.entries);
			return k;
		}
		readable = k > 0;
	}
	if (!readable) {
		/* Missing or not a ledger: start over, from the user's pins, written whole. */
		l.n = 0;
		l.rewrite = true;
	}
	/* Grown to twice what lived at the last pruning: time to drop the dead. */
	prune = prune || !readable || l.n > 2 * l.live_at_prune + 64;
	if (prune) {
		k = caps_set_effective(prune_caps, ARRAY_SIZE(prune_caps));
		if (k < 0) {
			free(l.entries);
			return k;
		}
		if (!readable)
			ledger_adopt(&l, c, uid);
		ledger_prune(&l);
		caps_clear_effective();
	}
	l.n_stored = l.rewrite ? 0 : l.n;
	*ret = l;
	return 0;
}

void ledger_usage(const struct ledger *l, struct ledger_usage *ret)
{
	struct ledger_usage u = {};

	for (size_t i = 0; i < l->n; i++) {
		const struct ledger_entry *e = &l->entries[i];

		if (e->kind == 'p') {
			u.programs++;
			continue;
		}
		if (e->kind == 'm')
			u.maps++;
		else
			u.btf_bytes += e->charge;
		u.map_bytes = u64_add_sat(u.map_bytes, e->charge);
		u.kernel_threads += e->threads;
	}
	*ret = u;
}

static bool ledger_has(const struct ledger *l, char kind, uint32_t id)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->entries[i].kind == kind && l->entries[i].id == id)
			return true;
	return false;
}

int ledger_add_map(struct ledger *l, int fd)
{
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
		return negative_errno();
	return ledger_add_map_info(l, fd, &info);
}

int ledger_add_map_info(struct ledger *l, int fd, const struct bpf_map_info *info)
{
	if (ledger_has(l, 'm', info->id))
		return 0;
	return ledger_append(l, &(struct ledger_entry){.kind = 'm',
						       .id = info->id,
						       .stamp = map_stamp(info),
						       .charge = map_charge(fd, info),
						       .threads = map_threads(info)});
}

int ledger_add_prog(struct ledger *l, int fd)
{
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
		return negative_errno();
	return ledger_add_prog_info(l, &info);
}

int ledger_add_prog_info(struct ledger *l, const struct bpf_prog_info *info)
{
	if (ledger_has(l, 'p', info->id))
		return 0;
	return ledger_append(
		l, &(struct ledger_entry){.kind = 'p', .id = info->id, .stamp = info->load_time});
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? negative_errno() : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int ledger_add_btf(struct ledger *l, int fd)
{
	struct bpf_btf_info info = {};
	uint32_t len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
		return negative_errno();
	if (ledger_has(l, 'b', info.id))
		return 0;
	return ledger_append(l, &(struct ledger_entry){.kind = 'b',
						       .id = info.id,
						       .stamp = info.btf_size,
						       .charge = btf_charge(&info)});
}

int ledger_commit(struct ledger *l)
{
	struct ledger_header h = {.magic = LEDGER_MAGIC, .live_at_prune = l->live_at_prune};
	char tmp[sizeof(l->path) + 8];
	int fd, k;

	if (!l->rewrite) {
		/* Only new records: appended (one write, O_APPEND) to what is there. */
		if (l->n == l->n_stored)
			return 0;
		fd = open(l->path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			return negative_errno();
		k = write_all(fd, l->entries + l->n_stored,
			      (l->n - l->n_stored) * sizeof(*l->entries));
		safe_close(fd);
		if (k >= 0)
			l->n_stored = l->n;
		return k;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", l->path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return negative_errno();
	k = write_all(fd, &h, sizeof(h));
	if (k >= 0)
		k = write_all(fd, l->entries, l->n * sizeof(*l->entries));
	safe_close(fd);
	/* The state directory is a memory file system: no fsync, the rename is enough. */
	if (k >= 0 && rename(tmp, l->path) < 0)
		k = negative_errno();
	if (k < 0) {
		unlink(tmp);
		return k;
	}
	l->n_stored = l->n;
	l->rewrite = false;
	return 0;
}

void ledger_done(struct ledger *l)
{
	free(l->entries);
	*l = (struct ledger){};
}
