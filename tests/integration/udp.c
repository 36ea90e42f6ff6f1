// SPDX-License-Identifier: MIT
/* UDP datagrams and binds for the network tests (test_netprogs, test_netjoin). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/macro.h"
#include "tests/integration/udp.h"

int send_to(int fd, const char *addr, uint16_t port)
{
	char buf[PAYLOAD] = "netprogs";
	struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
	ssize_t n;

	if (strchr(addr, ':')) {
		inet_pton(AF_INET6, addr, &a6.sin6_addr);
		n = sendto(fd, buf, sizeof(buf), 0, (struct sockaddr *)&a6, sizeof(a6));
	} else {
		inet_pton(AF_INET, addr, &a4.sin_addr);
		n = sendto(fd, buf, sizeof(buf), 0, (struct sockaddr *)&a4, sizeof(a4));
	}
	return n == PAYLOAD ? 0 : n < 0 ? -errno : -EIO;
}

int received(int fd, int ms)
{
	char buf[PAYLOAD + 1];
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int n = 0;

	while (poll(&p, 1, ms) == 1 && recv(fd, buf, sizeof(buf), MSG_DONTWAIT) == PAYLOAD)
		n++;
	return n;
}

int try_bind(int family, int type, uint16_t port)
{
	struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
	_cleanup_close_ int fd = socket(family, type | SOCK_CLOEXEC, 0);
	int k;

	if (fd < 0)
		return -errno;
	a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a6.sin6_addr = in6addr_loopback;
	k = family == AF_INET ? bind(fd, (struct sockaddr *)&a4, sizeof(a4))
			      : bind(fd, (struct sockaddr *)&a6, sizeof(a6));
	return k < 0 ? -errno : 0;
}
