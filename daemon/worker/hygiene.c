/* SPDX-License-Identifier: MIT */
#include "hygiene.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "common/macro.h"
#include "common/parse.h"
#include "daemon/shared/caps.h"
#include "handout.h"
#include "libbpflog.h"

static const char *const ns_names[HYGIENE_N_NS] = {"net", "mnt", "user", "pid"};

/*
 * Open fds, not counting the one that lists them, each with what it is: at
 * most max, or -EMFILE (as many as there are in *ret_n either way, when fewer).
 */
static int list_fds(struct hygiene_file *ret, unsigned max, unsigned *ret_n)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	unsigned n = 0;
	int k = 0;

	if (!d)
		return negative_errno();
	while ((e = readdir(d))) {
		struct stat st;
		uint64_t v;
		int fd;

		if (e->d_name[0] == '.' || parse_u64(e->d_name, INT32_MAX, &v) < 0)
			continue;
		fd = (int)v;
		if (fd == dirfd(d))
			continue;
		if (fstat(fd, &st) < 0)
			continue; /* closed since the listing began: not ours to count */
		if (n >= max) {
			k = -EMFILE;
			n++;
			continue;
		}
		ret[n++] = (struct hygiene_file){.fd = fd, .dev = st.st_dev, .ino = st.st_ino};
	}
	closedir(d);
	*ret_n = n;
	return k;
}

/* The fds now, against the baseline's: the same numbers, each the same file. */
static int fds_same(const struct hygiene_baseline *b, unsigned *ret_n)
{
	struct hygiene_file now[HYGIENE_MAX_FDS];
	unsigned n = 0;
	int k = list_fds(now, HYGIENE_MAX_FDS, &n);

	*ret_n = n;
	if (k < 0)
		return k;
	if (n != b->n_fds)
		return 0;
	/* readdir lists /proc/self/fd in fd order, both times. */
	for (unsigned i = 0; i < n; i++)
		if (now[i].fd != b->fds[i].fd || now[i].dev != b->fds[i].dev ||
		    now[i].ino != b->fds[i].ino)
			return 0;
	return 1;
}

static int resident_bytes(uint64_t *ret)
{
	char buf[128];
	unsigned long long size, resident;
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return negative_errno();
	n = read(fd, buf, sizeof(buf) - 1);
	safe_close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &size, &resident) != 2)
		return -EIO;
	*ret = (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
	return 0;
}

static int identity_of(const char *path, dev_t *dev, ino_t *ino)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return negative_errno();
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

static int ns_path(char *buf, size_t size, int i)
{
	return snprintf(buf, size, "/proc/self/ns/%s", ns_names[i]);
}

int hygiene_baseline_take(struct hygiene_baseline *b, uint64_t rss_growth)
{
	char path[64];
	uint64_t rss = 0;
	mode_t m;
	int k;

	*b = (struct hygiene_baseline){};
	k = list_fds(b->fds, HYGIENE_MAX_FDS, &b->n_fds);
	for (int i = 0; k >= 0 && i < HYGIENE_N_NS; i++) {
		ns_path(path, sizeof(path), i);
		k = identity_of(path, &b->ns[i].dev, &b->ns[i].ino);
	}
	if (k >= 0)
		k = identity_of(".", &b->cwd.dev, &b->cwd.ino);
	if (k >= 0)
		k = identity_of("/", &b->root.dev, &b->root.ino);
	for (int i = 0; k >= 0 && i < RLIM_NLIMITS; i++)
		if (getrlimit(i, &b->rlimits[i]) < 0)
			k = negative_errno();
	for (int s = 1; k >= 0 && s < _NSIG; s++)
		/* Real-time signals glibc reserves, SIGKILL, SIGSTOP: EINVAL, nothing to keep. */
		(void)sigaction(s, NULL, &b->signals[s]);
	if (k >= 0 && (getresuid(&b->uid[0], &b->uid[1], &b->uid[2]) < 0 ||
		       getresgid(&b->gid[0], &b->gid[1], &b->gid[2]) < 0))
		k = negative_errno();
	if (k >= 0)
		k = resident_bytes(&rss);
	if (k < 0)
		return k;
	m = umask(0);
	umask(m);
	b->umask = m;
	b->rss_max_bytes = rss + rss_growth;
	return 0;
}

/* What a job sets on purpose (the verifier's deadline timer and its handler): back as it was. */
static void restore_signals(const struct hygiene_baseline *b)
{
	struct itimerval off = {};
	sigset_t none;

	setitimer(ITIMER_REAL, &off, NULL);
	for (int s = 1; s < _NSIG; s++) {
		struct sigaction now;

		if (sigaction(s, NULL, &now) < 0)
			continue;
		if (now.sa_handler != b->signals[s].sa_handler ||
		    now.sa_flags != b->signals[s].sa_flags)
			(void)sigaction(s, &b->signals[s], NULL);
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

#define FAIL(k, ...) (snprintf(why, size, __VA_ARGS__), (k))

int hygiene_restore(const struct hygiene_baseline *b, char *why, size_t size)
{
	char path[64];
	unsigned n_fds = 0;
	uint64_t rss = 0;
	uid_t uid[3];
	gid_t gid[3];
	dev_t dev;
	ino_t ino;
	int k;

	restore_signals(b);
	if (umask(b->umask) != b->umask)
		return FAIL(-EPERM, "the job changed the umask");
	libbpflog_reset();
	handout_forget();

	/* No capability may stay raised; the permitted set is what the spawner gave. */
	k = caps_worker_check();
	if (k < 0)
		return FAIL(k, "a capability is still raised, or the permitted set changed");
	k = fds_same(b, &n_fds);
	if (k < 0 && k != -EMFILE)
		return FAIL(k, "cannot list our fds: %s", strerror(-k));
	if (k <= 0)
		return FAIL(-EMFILE, "%u fds open after the job, %u before, or not the same files",
			    n_fds, b->n_fds);
	for (int i = 0; i < HYGIENE_N_NS; i++) {
		ns_path(path, sizeof(path), i);
		k = identity_of(path, &dev, &ino);
		if (k < 0 || dev != b->ns[i].dev || ino != b->ns[i].ino)
			return FAIL(k < 0 ? k : -EPERM, "not in our %s namespace any more",
				    ns_names[i]);
	}
	k = identity_of(".", &dev, &ino);
	if (k < 0 || dev != b->cwd.dev || ino != b->cwd.ino)
		return FAIL(-EPERM, "the working directory changed");
	k = identity_of("/", &dev, &ino);
	if (k < 0 || dev != b->root.dev || ino != b->root.ino)
		return FAIL(-EPERM, "the root directory changed");
	for (int i = 0; i < RLIM_NLIMITS; i++) {
		struct rlimit r;

		if (getrlimit(i, &r) < 0 || r.rlim_cur != b->rlimits[i].rlim_cur ||
		    r.rlim_max != b->rlimits[i].rlim_max)
			return FAIL(-EPERM, "resource limit %d changed", i);
	}
	if (getresuid(&uid[0], &uid[1], &uid[2]) < 0 || getresgid(&gid[0], &gid[1], &gid[2]) < 0 ||
	    memcmp(uid, b->uid, sizeof(uid)) != 0 || memcmp(gid, b->gid, sizeof(gid)) != 0)
		return FAIL(-EPERM, "our user or group ids changed");
	k = resident_bytes(&rss);
	if (k < 0 || rss > b->rss_max_bytes)
		return FAIL(-ENOMEM, "resident memory grew to %llu KiB",
			    (unsigned long long)(rss / 1024));
	return 0;
}
