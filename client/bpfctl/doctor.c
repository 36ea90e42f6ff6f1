/* SPDX-License-Identifier: MIT */
/*
 * bpfctl policy and doctor: what the broker's policy grants me, and what on
 * this machine weakens the broker's guarantees (doctor.h).
 */
#include "doctor.h"

#include <errno.h>
#include <json-c/json.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bpfctl.h"
#include "common/bpffs.h"
#include "common/macro.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

enum level { LEVEL_OK, LEVEL_INFO, LEVEL_WARN };

static const char *const level_names[] = {"ok", "info", "warn"};

struct report {
	json_object *checks;
	bool json;
	unsigned warnings;
};

_printf_(4, 5) static void report_add(struct report *r, enum level level, const char *check,
				      const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (level == LEVEL_WARN)
		r->warnings++;
	if (r->json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "check", json_object_new_string(check));
		json_object_object_add(o, "level", json_object_new_string(level_names[level]));
		json_object_object_add(o, "message", json_object_new_string(msg));
		json_object_array_add(r->checks, o);
	} else {
		printf("%-5s %-22s %s\n", level_names[level], check, msg);
	}
}

/* The first line of a small file, without its newline; NULL if unreadable. */
static char *read_line(const char *path, char *buf, size_t size)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");

	if (!f || !fgets(buf, (int)size, f))
		return NULL;
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static void check_kernel(struct report *r)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) < 0) {
		report_add(r, LEVEL_WARN, "kernel", "uname: %s", strerror(errno));
		return;
	}
	sscanf(u.release, "%d.%d", &major, &minor);
	/* SO_PEERPIDFD (6.5) lets the broker find a caller's network namespace race-free. */
	if (major > 6 || (major == 6 && minor >= 5))
		report_add(r, LEVEL_OK, "kernel", "Linux %s", u.release);
	else
		report_add(
			r, LEVEL_INFO, "kernel",
			"Linux %s: before 6.5 there is no SO_PEERPIDFD, so xdp/tc attach in the "
			"caller's network namespace is unavailable, and an unprivileged caller may "
			"not be able to use bpf() on map fds at all",
			u.release);
}

static void check_unprivileged_bpf(struct report *r)
{
	char buf[32];

	if (!read_line("/proc/sys/kernel/unprivileged_bpf_disabled", buf, sizeof(buf))) {
		report_add(r, LEVEL_INFO, "unprivileged_bpf",
			   "cannot read "
			   "kernel.unprivileged_bpf_disabled");
		return;
	}
	if (strcmp(buf, "0") == 0)
		report_add(r, LEVEL_WARN, "unprivileged_bpf",
			   "kernel.unprivileged_bpf_disabled = 0: users can load socket filters "
			   "without the broker, outside its policy (set it to 2)");
	else
		report_add(r, LEVEL_OK, "unprivileged_bpf", "kernel.unprivileged_bpf_disabled = %s",
			   buf);
}

static void check_bpffs(struct report *r)
{
	struct bpffs_mount mounts[64];
	int n = bpffs_mounts(mounts, 64);

	if (n < 0) {
		report_add(r, LEVEL_WARN, "bpffs", "cannot read /proc/self/mountinfo: %s",
			   strerror(-n));
		return;
	}
	if (n == 0)
		report_add(r, LEVEL_INFO, "bpffs",
			   "no bpffs mounted: named objects need one (mount -t bpf -o mode=0700 "
			   "bpf /sys/fs/bpf)");
	for (int i = 0; i < n && i < 64; i++) {
		if (mounts[i].problem != BPFFS_OK) {
			char what[1200], fix[700];

			bpffs_describe(&mounts[i], what, sizeof(what), fix, sizeof(fix));
			report_add(r, LEVEL_WARN, "bpffs",
				   "%s: a read-only map fd pinned where users other than root can "
				   "write comes back read-write; the broker refuses ro, wo and "
				   "consume fds until %s",
				   what, fix);
		} else {
			report_add(r, LEVEL_OK, "bpffs", "%s (mode %04o, owner %u)", mounts[i].path,
				   (unsigned)mounts[i].mode, (unsigned)mounts[i].uid);
		}
	}
}

static void check_cgroup(struct report *r)
{
	static const char *const candidates[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};

	for (size_t i = 0; i < ARRAY_SIZE(candidates); i++) {
		struct statfs sfs;

		if (statfs(candidates[i], &sfs) == 0 &&
		    (unsigned long)sfs.f_type == CGROUP2_SUPER_MAGIC) {
			report_add(r, LEVEL_OK, "cgroup2", "cgroup v2 at %s%s", candidates[i],
				   i ? " (hybrid layout)" : "");
			return;
		}
	}
	report_add(r, LEVEL_INFO, "cgroup2", "no cgroup v2 hierarchy: no cgroup attach");
}

static void check_lsm(struct report *r)
{
	char buf[512];

	if (!read_line("/sys/kernel/security/lsm", buf, sizeof(buf))) {
		report_add(r, LEVEL_INFO, "bpf_lsm",
			   "cannot read /sys/kernel/security/lsm (securityfs not mounted?)");
		return;
	}
	if (strstr(buf, "bpf"))
		report_add(r, LEVEL_OK, "bpf_lsm", "BPF LSM active (lsm=%s)", buf);
	else
		report_add(r, LEVEL_INFO, "bpf_lsm",
			   "BPF LSM not active (lsm=%s): no LSM guard; the broker relies on its "
			   "bpffs check and on refusing maps of maps",
			   buf);
}

static void check_jit(struct report *r)
{
	char enable[16], harden[16];

	if (!read_line("/proc/sys/net/core/bpf_jit_enable", enable, sizeof(enable)))
		return;
	if (strcmp(enable, "2") == 0)
		report_add(r, LEVEL_WARN, "jit",
			   "net.core.bpf_jit_enable = 2: JIT images are logged to the kernel log");
	else
		report_add(r, LEVEL_OK, "jit", "net.core.bpf_jit_enable = %s", enable);
	if (read_line("/proc/sys/net/core/bpf_jit_harden", harden, sizeof(harden)) &&
	    strcmp(harden, "0") == 0)
		report_add(r, LEVEL_INFO, "jit",
			   "net.core.bpf_jit_harden = 0: programs loaded with CAP_BPF are JITed "
			   "without constant blinding");
}

static void check_tracefs(struct report *r)
{
	if (access("/sys/kernel/tracing/events", F_OK) == 0 ||
	    access("/sys/kernel/debug/tracing/events", F_OK) == 0)
		report_add(r, LEVEL_OK, "tracefs", "mounted: tracepoint attach works");
	else
		report_add(r, LEVEL_INFO, "tracefs",
			   "not visible here: the broker needs it for tracepoint attach (mount -t "
			   "tracefs tracefs /sys/kernel/tracing)");
}

static void check_broker(struct report *r, struct bpfbroker *b)
{
	struct bpfbroker_error *e = NULL;
	char *json = NULL;
	int k;

	if (!b) {
		report_add(r, LEVEL_INFO, "broker", "not reachable");
		return;
	}
	k = bpfbroker_policy(b, &json, &e);
	if (k < 0) {
		report_add(r, LEVEL_INFO, "broker", "reachable, policy query failed: %s",
			   e && e->message ? e->message : strerror(-k));
		bpfbroker_error_free(e);
		return;
	}
	report_add(r, LEVEL_OK, "broker", "reachable; %s",
		   strstr(json, "\"matched\": true") || strstr(json, "\"matched\":true")
			   ? "a policy rule matches you"
			   : "no policy rule matches you");
	free(json);
}

int doctor_run(struct bpfbroker *b, bool json)
{
	struct report r = {.json = json, .checks = json ? json_object_new_array() : NULL};

	check_kernel(&r);
	check_unprivileged_bpf(&r);
	check_bpffs(&r);
	check_cgroup(&r);
	check_lsm(&r);
	check_jit(&r);
	check_tracefs(&r);
	check_broker(&r, b);
	if (json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "checks", r.checks);
		json_object_object_add(o, "warnings", json_object_new_int((int)r.warnings));
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY));
		json_object_put(o);
	} else if (r.warnings) {
		printf("%u warning(s): the broker's guarantees are weakened here\n", r.warnings);
	}
	return r.warnings ? 1 : 0;
}

int cmd_policy(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	struct bpfbroker_error *e = NULL;
	_cleanup_free_ char *json = NULL;
	int k;

	k = bpfbroker_policy(b, &json, &e);
	if (k < 0)
		return report_error(c, k, e, "policy");
	printf("%s\n", json);
	return EXIT_SUCCESS;
}
