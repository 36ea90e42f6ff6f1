/* SPDX-License-Identifier: MIT */
/* The status parser over /proc/PID/status text, and the splitter of cgroup paths. */
#include "procfs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/macro.h"

const char *procfs_status_field(const char *text, const char *key)
{
	size_t len = strlen(key);

	for (const char *p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, key, len) == 0 && p[len] == ':')
			return p + len + 1;
	return NULL;
}

int procfs_status_u64(const char *text, const char *key, int base, uint64_t *ret)
{
	const char *v = procfs_status_field(text, key);
	unsigned long long n;
	size_t len;
	char *end;

	if (!v)
		return -ENOENT;
	v += strspn(v, " \t");
	/* Digits to the end of the line: strtoull would take a sign, a 0x or more space too. */
	len = strspn(v, base == 16 ? "0123456789abcdefABCDEF" : "0123456789");
	if (!len || (v[len] != '\n' && v[len] != '\0'))
		return -EINVAL;
	errno = 0;
	n = strtoull(v, &end, base);
	if (errno || end != v + len)
		return -EINVAL;
	*ret = n;
	return 0;
}

static int parse_ids(const char *v, unsigned long *ids)
{
	for (size_t i = 0; i < 4; i++) {
		char *end;

		errno = 0;
		ids[i] = strtoul(v, &end, 10);
		if (errno || end == v || ids[i] > UINT32_MAX)
			return -EINVAL;
		v = end;
	}
	return 0;
}

int procfs_status_parse(const char *text, struct procfs_status *ret)
{
	struct procfs_status p = {};
	unsigned long uids[4], gids[4];
	uint64_t nnp, pid;
	const char *v;

	/* Strictly, and within pid_t: strtol took "-1" and let 2^32 + N wrap into a pid_t. */
	if (procfs_status_u64(text, "Pid", 10, &pid) < 0 || pid == 0 || pid > INT32_MAX)
		return -EINVAL;
	p.pid = (pid_t)pid;
	v = procfs_status_field(text, "State");
	if (!v)
		return -EINVAL;
	v += strspn(v, " \t");
	p.state = *v;
	v = procfs_status_field(text, "Uid");
	if (!v || parse_ids(v, uids) < 0)
		return -EINVAL;
	v = procfs_status_field(text, "Gid");
	if (!v || parse_ids(v, gids) < 0)
		return -EINVAL;
	for (size_t i = 0; i < 4; i++) {
		p.uids[i] = (uid_t)uids[i];
		p.gids[i] = (gid_t)gids[i];
	}
	/* CapAmb since Linux 4.3, NoNewPrivs since 4.10: older kernels are not served. */
	if (procfs_status_u64(text, "CapPrm", 16, &p.cap_prm) < 0 ||
	    procfs_status_u64(text, "CapEff", 16, &p.cap_eff) < 0 ||
	    procfs_status_u64(text, "CapAmb", 16, &p.cap_amb) < 0 ||
	    procfs_status_u64(text, "NoNewPrivs", 10, &nnp) < 0)
		return -EINVAL;
	p.no_new_privs = nnp == 1;
	*ret = p;
	return 0;
}

int procfs_cgroup_split(char *path, char **comp, size_t *ret_n)
{
	size_t n = 0;
	char *save = NULL;

	for (char *c = strtok_r(path, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (n == PROCFS_CGROUP_MAX_DEPTH || strcmp(c, ".") == 0 || strcmp(c, "..") == 0)
			return -EINVAL;
		comp[n++] = c;
	}
	*ret_n = n;
	return 0;
}
