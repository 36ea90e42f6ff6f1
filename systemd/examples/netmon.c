/* SPDX-License-Identifier: MIT */
/*
 * The per-user service example (netmon.service): started by
 *
 *   bpfctl run netmon.bpf.o -- netmon --port 5140
 *
 * it finds the socket filter and its maps by name with
 * sd_listen_fds_with_names(), the way a socket-activated service finds its
 * sockets (bpfctl run describes the fds as systemd does: LISTEN_FDS,
 * LISTEN_PID, LISTEN_FDNAMES=map/NAME:...:prog/NAME). It attaches the filter
 * to a UDP socket on 127.0.0.1:PORT and, after every datagram, reports what
 * the filter counted in its "stats" map. SIGTERM (systemctl --user stop)
 * prints the totals and exits 0.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

enum { STAT_DATAGRAMS, STAT_BYTES, STAT_DROPPED, N_STATS };

struct netmon_fds {
	int prog; /* prog/netmon_count */
	int stats; /* map/stats */
	int config; /* map/config_max_len, or -1 if the policy gave none */
};

/* Our fds by the names bpfctl run gave them; -ENOENT names the one missing. */
static int fds_from_listen(struct netmon_fds *ret, const char **ret_missing)
{
	char **names = NULL;
	int n = sd_listen_fds_with_names(true, &names);
	struct netmon_fds f = {-1, -1, -1};

	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		int fd = SD_LISTEN_FDS_START + i;

		if (strcmp(names[i], "prog/netmon_count") == 0)
			f.prog = fd;
		else if (strcmp(names[i], "map/stats") == 0)
			f.stats = fd;
		else if (strcmp(names[i], "map/config_max_len") == 0)
			f.config = fd;
	}
	/* sd_listen_fds_with_names() hands over a NULL-terminated array we own. */
	for (char **p = names; p && *p; p++)
		free(*p);
	free(names);
	if (f.prog < 0 || f.stats < 0) {
		*ret_missing = f.prog < 0 ? "prog/netmon_count" : "map/stats";
		return -ENOENT;
	}
	*ret = f;
	return 0;
}

static int stats_read(int map, uint64_t out[N_STATS])
{
	for (uint32_t key = 0; key < N_STATS; key++)
		if (bpf_map_lookup_elem(map, &key, &out[key]) < 0)
			return -errno;
	return 0;
}

static int udp_socket(uint16_t port, int prog)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	/* Attach before bind: no datagram can arrive unfiltered. */
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_BPF, &prog, sizeof(prog)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int k = -errno;

		close(fd);
		return k;
	}
	return fd;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: bpfctl run netmon.bpf.o -- netmon [--port PORT]\n\n"
		   "Count the UDP datagrams arriving on 127.0.0.1:PORT (default 5140) with a\n"
		   "socket filter loaded through bpfbroker.\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"port", required_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	struct netmon_fds f;
	const char *missing = NULL;
	uint64_t st[N_STATS] = {0}, max_len = 0;
	unsigned long port = 5140;
	sigset_t mask;
	int c, k, sock, sig;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) >= 0) {
		char *end;

		switch (c) {
		case 'p':
			errno = 0;
			port = strtoul(optarg, &end, 10);
			if (errno || *end || end == optarg || port == 0 || port > 65535) {
				fprintf(stderr, "netmon: invalid port \"%s\"\n", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	/* Under systemd, stdout is the journal: one record per line, as it happens. */
	setvbuf(stdout, NULL, _IOLBF, 0);

	k = fds_from_listen(&f, &missing);
	if (k < 0) {
		if (k == -ENOENT && missing)
			fprintf(stderr,
				"netmon: no %s among the fds passed (run me with bpfctl run "
				"netmon.bpf.o --)\n",
				missing);
		else
			fprintf(stderr, "netmon: cannot get the fds passed: %s\n", strerror(-k));
		return 1;
	}
	/* The policy grants config* read-only: we may read the limit, not change it. */
	if (f.config >= 0) {
		uint32_t zero = 0;

		if (bpf_map_lookup_elem(f.config, &zero, &max_len) < 0)
			max_len = 0;
	}

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sig = signalfd(-1, &mask, SFD_CLOEXEC);
	sock = udp_socket((uint16_t)port, f.prog);
	if (sig < 0 || sock < 0) {
		fprintf(stderr, "netmon: cannot listen on 127.0.0.1:%lu: %s\n", port,
			strerror(sock < 0 ? -sock : errno));
		return 1;
	}
	printf("netmon: counting UDP datagrams on 127.0.0.1:%lu", port);
	if (max_len)
		printf(" (keeping those up to %llu bytes)\n", (unsigned long long)max_len);
	else
		printf(" (no length limit)\n");

	for (;;) {
		struct pollfd p[2] = {{.fd = sock, .events = POLLIN},
				      {.fd = sig, .events = POLLIN}};
		char buf[2048];

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("netmon: poll");
			return 1;
		}
		if (p[1].revents)
			break;
		if (recv(sock, buf, sizeof(buf), MSG_DONTWAIT) < 0 && errno != EAGAIN) {
			perror("netmon: recv");
			return 1;
		}
		/* What the filter counted in the kernel, read through our map fd. */
		k = stats_read(f.stats, st);
		if (k < 0) {
			fprintf(stderr, "netmon: reading stats: %s\n", strerror(-k));
			return 1;
		}
		printf("netmon: %llu datagrams, %llu bytes\n",
		       (unsigned long long)st[STAT_DATAGRAMS], (unsigned long long)st[STAT_BYTES]);
	}
	k = stats_read(f.stats, st);
	if (k < 0) {
		fprintf(stderr, "netmon: reading stats: %s\n", strerror(-k));
		return 1;
	}
	printf("netmon: stopping after %llu datagrams, %llu bytes, %llu dropped as too long\n",
	       (unsigned long long)st[STAT_DATAGRAMS], (unsigned long long)st[STAT_BYTES],
	       (unsigned long long)st[STAT_DROPPED]);
	return 0;
}
