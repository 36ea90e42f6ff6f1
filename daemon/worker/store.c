/* SPDX-License-Identifier: MIT */
#include "store.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/shared/audit.h"
#include "daemon/shared/caps.h"
#include "common/macro.h"
#include "daemon/shared/log.h"
#include "policy/policy.h"
#include "proto/jsonscan.h"
#include "proto/proto.h"
#include "common/parse.h"

#define PINNED_DIR "-pinned"
#define META_SUFFIX ".json"
#define TMP_SUFFIX ".tmp"

static int mkdir_private(const char *path)
{
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int user_state_dir(const struct store_config *c, uid_t uid, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s/%u", c->state_dir, (unsigned)uid);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int user_pin_dir(const struct store_config *c, uid_t uid, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s/%u", c->pin_root, (unsigned)uid);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int store_lock_user(const struct store_config *c, uid_t uid)
{
	char path[PATH_MAX];
	int fd, k;

	k = mkdir_private(c->state_dir);
	if (k >= 0)
		k = user_state_dir(c, uid, path, sizeof(path));
	if (k >= 0)
		k = mkdir_private(path);
	if (k < 0)
		return k;
	strncat(path, "/lock", sizeof(path) - strlen(path) - 1);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	/* The worker is killed at its deadline, so waiting here is bounded too. */
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			k = -errno;
			safe_close(fd);
			return k;
		}
	}
	return fd;
}

int store_object_dir(const struct store_config *c, uid_t uid, const char *name, char *buf,
		     size_t size)
{
	int n = snprintf(buf, size, "%s/%u/%s", c->pin_root, (unsigned)uid, name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int store_pinned_dir(const struct store_config *c, uid_t uid, char *buf, size_t size)
{
	int k = user_pin_dir(c, uid, buf, size);

	if (k >= 0)
		k = mkdir_private(buf);
	if (k < 0)
		return k;
	if (strlen(buf) + sizeof("/" PINNED_DIR) > size)
		return -ENAMETOOLONG;
	strcat(buf, "/" PINNED_DIR);
	return mkdir_private(buf);
}

int store_object_dir_create(const struct store_config *c, uid_t uid, const char *name)
{
	char path[PATH_MAX];
	int k = user_pin_dir(c, uid, path, sizeof(path));

	if (k >= 0)
		k = mkdir_private(path);
	if (k >= 0)
		k = store_object_dir(c, uid, name, path, sizeof(path));
	if (k < 0)
		return k;
	return mkdir(path, 0700) < 0 ? -errno : 0;
}

static int meta_path(const struct store_config *c, uid_t uid, const char *name, char *buf,
		     size_t size)
{
	int n = snprintf(buf, size, "%s/%u/%s" META_SUFFIX, c->state_dir, (unsigned)uid, name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* The whole of a (small) file, NUL-terminated. */
static int read_all(int fd, char **ret, size_t *ret_len)
{
	size_t len = 0, size = 4096;
	char *buf = malloc(size);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (size - len < 2) {
			char *grown = size < SIZE_MAX / 2 ? realloc(buf, size * 2) : NULL;

			if (!grown) {
				free(buf);
				return -ENOMEM;
			}
			buf = grown;
			size *= 2;
		}
		n = read(fd, buf + len, size - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int k = -errno;

			free(buf);
			return k;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*ret = buf;
	*ret_len = len;
	return 0;
}

/*
 * The metadata, as json-c would parse it, but built from a scan (a list
 * reads 1,000 of these): what the scan leaves to json-c goes to json-c.
 */
static json_object *meta_parse(const char *text, size_t len)
{
	json_object *o = NULL;
	int k = json_scan_build(text, len, &o);

	if (k == -ENOMEM)
		return NULL;
	if (k < 0)
		o = json_tokener_parse(text);
	return o;
}

int store_meta_read(const struct store_config *c, uid_t uid, const char *name, json_object **ret)
{
	char path[PATH_MAX];
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	json_object *o;
	int fd, k = meta_path(c, uid, name, path, sizeof(path));

	if (k < 0)
		return k;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	k = read_all(fd, &text, &len);
	safe_close(fd);
	if (k < 0)
		return k;
	o = meta_parse(text, len);
	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		log_error("%s: unreadable metadata", path);
		return -EIO;
	}
	*ret = o;
	return 0;
}

int store_meta_write(const struct store_config *c, uid_t uid, const char *name, json_object *meta)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	const char *text = json_object_to_json_string_ext(meta, JSON_C_TO_STRING_PLAIN);
	size_t len = strlen(text);
	_cleanup_close_ int fd = -EBADF;
	int k = meta_path(c, uid, name, path, sizeof(path));

	if (k < 0)
		return k;
	snprintf(tmp, sizeof(tmp), "%s" TMP_SUFFIX, path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	/* The rename is the commit: the file must be complete on disk before it. */
	if (write(fd, text, len) != (ssize_t)len || fsync(fd) < 0 || rename(tmp, path) < 0) {
		k = errno ? -errno : -EIO;
		unlink(tmp);
		return k;
	}
	return 0;
}

int store_meta_remove(const struct store_config *c, uid_t uid, const char *name)
{
	char path[PATH_MAX];
	int k = meta_path(c, uid, name, path, sizeof(path));

	if (k < 0)
		return k;
	return unlink(path) < 0 ? -errno : 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

bool store_names_have(char *const *names, size_t n, const char *name)
{
	return n && bsearch(&name, names, n, sizeof(*names), cmp_str);
}

void store_names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* Entries of dir for which keep() returns an allocated name. */
static int list_dir(const char *dir, char *(*keep)(const struct dirent *), char ***ret,
		    size_t *ret_n)
{
	DIR *d = opendir(dir);
	char **v = NULL;
	size_t n = 0;
	struct dirent *e;

	if (!d) {
		if (errno != ENOENT)
			return -errno;
		*ret = NULL;
		*ret_n = 0;
		return 0;
	}
	while ((e = readdir(d))) {
		char *name = keep(e), **nv;

		if (!name)
			continue;
		nv = reallocarray(v, n + 1, sizeof(*v));
		if (!nv) {
			free(name);
			store_names_free(v, n);
			closedir(d);
			return -ENOMEM;
		}
		v = nv;
		v[n++] = name;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	*ret = v;
	*ret_n = n;
	return 0;
}

static char *keep_meta(const struct dirent *e)
{
	size_t len = strlen(e->d_name), sl = strlen(META_SUFFIX);
	char *name;

	if (len <= sl || strcmp(e->d_name + len - sl, META_SUFFIX) != 0)
		return NULL;
	name = strndup(e->d_name, len - sl);
	if (name && !parse_object_name_is_valid(name)) {
		free(name);
		return NULL;
	}
	return name;
}

static char *keep_object_dir(const struct dirent *e)
{
	return parse_object_name_is_valid(e->d_name) ? strdup(e->d_name) : NULL;
}

static char *keep_uid(const struct dirent *e)
{
	uint64_t v;

	/* A uid's directory: digits only, never (uid_t)-1 (common/parse.h). */
	return parse_u64(e->d_name, UINT32_MAX - 1, &v) < 0 ? NULL : strdup(e->d_name);
}

int store_list_names(const struct store_config *c, uid_t uid, char ***ret, size_t *ret_n)
{
	char path[PATH_MAX];
	int k = user_state_dir(c, uid, path, sizeof(path));

	return k < 0 ? k : list_dir(path, keep_meta, ret, ret_n);
}

int store_list_owners(const struct store_config *c, uid_t **ret, size_t *ret_n)
{
	char **names = NULL;
	size_t n = 0;
	uid_t *uids;
	int k = list_dir(c->state_dir, keep_uid, &names, &n);

	if (k < 0)
		return k;
	uids = calloc(n + 1, sizeof(*uids));
	if (!uids) {
		store_names_free(names, n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		uids[i] = (uid_t)strtoul(names[i], NULL, 10);
	store_names_free(names, n);
	*ret = uids;
	*ret_n = n;
	return 0;
}

int store_count_objects(const struct store_config *c, uid_t uid, uint64_t *ret)
{
	char **names = NULL;
	size_t n = 0;
	int k = store_list_names(c, uid, &names, &n);

	if (k < 0)
		return k;
	store_names_free(names, n);
	*ret = n;
	return 0;
}

int store_object_prog_ids(const char *dir, uint32_t **ret, size_t *ret_n)
{
	DIR *d = opendir(dir);
	uint32_t *ids = NULL;
	size_t n = 0;
	struct dirent *e;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char path[PATH_MAX];
		struct bpf_prog_info info = {};
		uint32_t len = sizeof(info), *nids;
		int fd;

		if (e->d_name[0] != 'p')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 &&
		    (nids = reallocarray(ids, n + 1, sizeof(*ids)))) {
			ids = nids;
			ids[n++] = info.id;
		}
		safe_close(fd);
	}
	closedir(d);
	*ret = ids;
	*ret_n = n;
	return 0;
}

static int detach_links_of(const uint32_t *prog_ids, size_t n)
{
	static const cap_value_t caps[] = {CAP_BPF, CAP_SYS_ADMIN};
	uint32_t id = 0;
	int k;

	/* No programs (a half-made directory): no links to look for, no capability to raise. */
	if (n == 0)
		return 0;
	k = caps_set_effective(caps, ARRAY_SIZE(caps));
	if (k < 0)
		return k;
	while (bpf_link_get_next_id(id, &id) == 0) {
		struct bpf_link_info info = {};
		uint32_t len = sizeof(info);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0)
			for (size_t i = 0; i < n; i++)
				if (info.prog_id == prog_ids[i]) {
					/* Ends the attachment even where a client holds the link
					 * fd. */
					if (bpf_link_detach(fd) < 0 && errno != EOPNOTSUPP)
						log_warning("cannot detach link %u: %m", id);
					break;
				}
		safe_close(fd);
	}
	caps_clear_effective();
	return 0;
}

int store_object_remove_pins(const struct store_config *c, uid_t uid, const char *name)
{
	char dir[PATH_MAX];
	_cleanup_free_ uint32_t *ids = NULL;
	size_t n = 0;
	DIR *d;
	struct dirent *e;
	int k = store_object_dir(c, uid, name, dir, sizeof(dir));

	if (k < 0)
		return k;
	k = store_object_prog_ids(dir, &ids, &n);
	if (k == -ENOENT)
		return 0;
	if (k < 0)
		return k;
	k = detach_links_of(ids, n);
	if (k < 0)
		return k;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && unlinkat(dirfd(d), e->d_name, 0) < 0)
			log_warning("cannot unpin %s/%s: %m", dir, e->d_name);
	closedir(d);
	return rmdir(dir) < 0 ? -errno : 0;
}

/* Debris held programs and links, maybe attached: its removal is on record like an unload. */
static void store_audit_sweep(uid_t uid, const char *name, int k)
{
	char object[AUDIT_OBJECT_SIZE];

	audit_format_object(object, sizeof(object), uid, name, NULL);
	audit_log(&(struct audit_record){
		.event = "sweep",
		.decision = k < 0 ? "error" : "allow",
		.uid = uid,
		.object = object,
		.reason = k < 0 ? "pins without metadata, left over by an interrupted load or "
				  "unload: they could not all be removed"
				: "pins without metadata, left over by an interrupted load or "
				  "unload: "
				  "removed, their links detached"});
}

int store_sweep_user(const struct store_config *c, uid_t uid)
{
	char **names = NULL;
	size_t n = 0;
	int k = store_sweep_user_list(c, uid, &names, &n);

	store_names_free(names, n);
	return k;
}

int store_sweep_user_list(const struct store_config *c, uid_t uid, char ***ret, size_t *ret_n)
{
	char path[PATH_MAX];
	char **dirs = NULL, **names = NULL;
	size_t n = 0, n_names = 0;
	int k = user_pin_dir(c, uid, path, sizeof(path));

	if (k >= 0)
		k = list_dir(path, keep_object_dir, &dirs, &n);
	/* Both listings sorted: only pin directories without a commit record cost a syscall. */
	if (k >= 0)
		k = store_list_names(c, uid, &names, &n_names);
	if (k < 0) {
		store_names_free(dirs, n);
		return k;
	}
	for (size_t i = 0; i < n; i++) {
		char meta[PATH_MAX];

		if (n_names && bsearch(&dirs[i], names, n_names, sizeof(*names), cmp_str))
			continue;
		/* Not listed: confirm, since only whether the commit record exists matters. */
		if (meta_path(c, uid, dirs[i], meta, sizeof(meta)) < 0 || access(meta, F_OK) == 0 ||
		    errno != ENOENT)
			continue;
		log_info("removing %s/%s: left over by an interrupted load or unload", path,
			 dirs[i]);
		k = store_object_remove_pins(c, uid, dirs[i]);
		if (k < 0)
			log_warning("cannot remove %s/%s: %s", path, dirs[i], strerror(-k));
		store_audit_sweep(uid, dirs[i], k);
	}
	store_names_free(dirs, n);
	/* The sweep removes pins, never metadata: the listing still holds. */
	*ret = names;
	*ret_n = n_names;
	return 0;
}

static char *keep_tmp(const struct dirent *e)
{
	size_t len = strlen(e->d_name), sl = strlen(TMP_SUFFIX);

	return len > sl && strcmp(e->d_name + len - sl, TMP_SUFFIX) == 0 ? strdup(e->d_name) : NULL;
}

/*
 * Metadata whose pins are gone (bpffs was remounted, or the state directory
 * outlived a reboot) describes kernel ids that may now be anyone's: drop it.
 */
static void store_drop_orphan_meta(const struct store_config *c, uid_t uid)
{
	char **names = NULL;
	size_t n = 0;

	if (store_list_names(c, uid, &names, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		char dir[PATH_MAX];

		if (store_object_dir(c, uid, names[i], dir, sizeof(dir)) < 0 ||
		    access(dir, F_OK) == 0 || errno != ENOENT)
			continue;
		log_warning("dropping %u/%s: its pins are gone", (unsigned)uid, names[i]);
		store_meta_remove(c, uid, names[i]);
	}
	store_names_free(names, n);
}

int store_recover(const struct store_config *c)
{
	char **uids = NULL;
	size_t n = 0;
	int k;

	k = mkdir_private(c->state_dir);
	if (k < 0)
		return k;
	/* Every user with pins, whether or not they have state. */
	k = list_dir(c->pin_root, keep_uid, &uids, &n);
	if (k < 0)
		return k;
	for (size_t i = 0; i < n; i++) {
		uid_t uid = (uid_t)strtoul(uids[i], NULL, 10);
		char dir[PATH_MAX];
		char **tmps = NULL;
		size_t n_tmps = 0;
		int lock = store_lock_user(c, uid);

		if (lock < 0) {
			log_warning("cannot lock the state of uid %u: %s", (unsigned)uid,
				    strerror(-lock));
			continue;
		}
		store_sweep_user(c, uid);
		if (user_state_dir(c, uid, dir, sizeof(dir)) >= 0 &&
		    list_dir(dir, keep_tmp, &tmps, &n_tmps) >= 0) {
			for (size_t t = 0; t < n_tmps; t++) {
				char p[PATH_MAX + 300];

				snprintf(p, sizeof(p), "%s/%s", dir, tmps[t]);
				unlink(p);
			}
			store_names_free(tmps, n_tmps);
		}
		safe_close(lock);
	}
	store_names_free(uids, n);
	/* Every user with state, whether or not they still have pins. */
	{
		_cleanup_free_ uid_t *owners = NULL;
		size_t n_owners = 0;

		if (store_list_owners(c, &owners, &n_owners) >= 0)
			for (size_t i = 0; i < n_owners; i++) {
				int lock = store_lock_user(c, owners[i]);

				if (lock < 0)
					continue;
				store_drop_orphan_meta(c, owners[i]);
				safe_close(lock);
			}
	}
	return 0;
}

void store_fault(const struct store_config *c, const char *point)
{
	const char *how = "crash";

	if (!c->fault)
		return;
	if (strncmp(c->fault, "stall:", 6) == 0 || strncmp(c->fault, "delay:", 6) == 0) {
		if (strcmp(c->fault + 6, point) != 0)
			return;
		how = c->fault[0] == 's' ? "stall" : "delay";
	} else if (strcmp(c->fault, point) != 0) {
		return;
	}
	log_error("fault injection: %s at %s", how, point);
	if (how[0] == 's') {
		/* Until the event loop kills this worker at its time limit. */
		for (;;)
			pause();
	}
	if (how[0] == 'd') {
		/* Long enough for a test to act (hang up, SIGTERM) in the middle of the change. */
		struct timespec ts = {.tv_nsec = 500 * 1000 * 1000};

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		return;
	}
	kill(c->daemon_pid > 0 ? c->daemon_pid : getppid(), SIGKILL);
	kill(getpid(), SIGKILL);
}
