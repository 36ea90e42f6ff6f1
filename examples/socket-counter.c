/* SPDX-License-Identifier: MIT */
/*
 * The quickstart's client: started by `bpfctl run count_packets.bpf.o --`, it
 * finds its maps and program by name with sd_listen_fds_with_names(),
 * attaches the socket filter to one end of a socketpair, sends a few
 * datagrams, and reads the counter back. It then shows that the read-only
 * map really is read-only: the kernel refuses the update.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

static int fd_named(char **names, int n, const char *want)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], want) == 0)
			return SD_LISTEN_FDS_START + i;
	return -1;
}

/* sd_listen_fds_with_names() hands over a NULL-terminated array we own. */
static void names_free(char **names)
{
	for (char **p = names; p && *p; p++)
		free(*p);
	free(names);
}

int main(void)
{
	char **names = NULL;
	int n = sd_listen_fds_with_names(0, &names);
	int prog, counts, config, sv[2];
	uint32_t key = 0;
	uint64_t value = 0, step = 5;
	char buf[16] = "hello";

	if (n <= 0) {
		fprintf(stderr, "socket-counter: no fds passed (run me with bpfctl run)\n");
		names_free(names);
		return 1;
	}
	prog = fd_named(names, n, "prog/count_packets");
	counts = fd_named(names, n, "map/counts");
	config = fd_named(names, n, "map/config_step");
	names_free(names);
	if (prog < 0 || counts < 0 || config < 0) {
		fprintf(stderr, "socket-counter: expected prog/count_packets, map/counts and "
				"map/config_step\n");
		return 1;
	}
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0 ||
	    setsockopt(sv[1], SOL_SOCKET, SO_ATTACH_BPF, &prog, sizeof(prog)) < 0) {
		perror("socket-counter: attaching the filter");
		return 1;
	}
	for (int i = 0; i < 3; i++) {
		if (send(sv[0], buf, sizeof(buf), 0) < 0 || recv(sv[1], buf, sizeof(buf), 0) < 0) {
			perror("socket-counter: send/recv");
			return 1;
		}
	}
	if (bpf_map_lookup_elem(counts, &key, &value) < 0) {
		perror("socket-counter: reading counts");
		return 1;
	}
	printf("socket-counter (uid %u): the filter counted %llu packets\n", (unsigned)getuid(),
	       (unsigned long long)value);
	if (bpf_map_update_elem(config, &key, &step, BPF_ANY) == 0) {
		fprintf(stderr,
			"socket-counter: config_step was writable, but the policy grants ro\n");
		return 1;
	}
	printf("socket-counter: updating config_step was refused (%s), as its ro grant says\n",
	       strerror(errno));
	return value == 3 ? 0 : 1;
}
