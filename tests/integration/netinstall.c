// SPDX-License-Identifier: MIT
/* The network objects and example policy installed for a test's daemon; `ip` run. */
#include "tests/integration/netinstall.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/macro.h"
#include "tests/integration/harness.h"

int run_ip(const char *const *argv)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		execvp("ip", (char *const *)argv);
		_exit(127);
	}
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
			       WEXITSTATUS(status) == 0
		       ? 0
		       : -1;
}

static int read_text(const char *path, char *buf, size_t size)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;

	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

void netinstall_objects_dir(char *dir, size_t size)
{
	snprintf(dir, size, "%s/objects", H.dir);
}

int netinstall_objects_and_policy(char *arg, size_t size)
{
	static const char *const objects[] = {"ip-firewall", "restrict-ifaces", "socket-bind"};
	char dir[300], from[600], to[600], policy[4096];

	/* The shipped objects and manifests, as root installs them. */
	netinstall_objects_dir(dir, sizeof(dir));
	if (mkdir(dir, 0755) < 0)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(objects); i++) {
		snprintf(from, sizeof(from), "%s/objects/net/%s.bpf.o", H.build_dir, objects[i]);
		snprintf(to, sizeof(to), "%s/%s.bpf.o", dir, objects[i]);
		if (harness_copy_file(from, to, 0, 0644) < 0)
			return -1;
		snprintf(from, sizeof(from), "%s/objects/%s.json", H.build_dir, objects[i]);
		snprintf(to, sizeof(to), "%s/%s.json", dir, objects[i]);
		if (harness_copy_file(from, to, 0, 0644) < 0)
			return -1;
	}
	/* The example policy as shipped, alone. */
	snprintf(from, sizeof(from), "%s/examples/policy.d/70-user-network.json",
		 getenv("BPFBROKER_TEST_SRC_DIR"));
	if (read_text(from, policy, sizeof(policy)) < 0 ||
	    harness_write_policy("70-user-network.json", policy) < 0)
		return -1;
	snprintf(arg, size, "--objects-dir=%s", dir);
	return 0;
}
