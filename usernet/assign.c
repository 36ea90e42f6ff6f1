/* SPDX-License-Identifier: MIT */
/* Spells the network settings systemd's D-Bus API gives back as unit-file assignments. */
#include "usernet/assign.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/macro.h"

void usernet_assignments_done(struct usernet_assignments *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	*a = (struct usernet_assignments){};
}

int usernet_assignments_add(struct usernet_assignments *a, const char *name, const char *value)
{
	_cleanup_free_ char *s = NULL;
	char **v;

	if (asprintf(&s, "%s=%s", name, value) < 0)
		return -ENOMEM;
	v = reallocarray(a->v, a->n + 2, sizeof(*v));
	if (!v)
		return -ENOMEM;
	a->v = v;
	a->v[a->n++] = TAKE_PTR(s);
	a->v[a->n] = NULL;
	return 0;
}

int usernet_append_word(char **buf, const char *word)
{
	char *s;

	if (asprintf(&s, "%s%s%s", *buf ? *buf : "", *buf ? " " : "", word) < 0)
		return -ENOMEM;
	free(*buf);
	*buf = s;
	return 0;
}

int usernet_append_prefix(char **buf, int32_t family, const void *addr, size_t addr_size,
			  uint32_t prefixlen)
{
	char text[INET6_ADDRSTRLEN], word[INET6_ADDRSTRLEN + sizeof("/128")];

	if (family == AF_INET) {
		if (addr_size != 4 || prefixlen > 32)
			return -EINVAL;
	} else if (family == AF_INET6) {
		if (addr_size != 16 || prefixlen > 128)
			return -EINVAL;
	} else
		return -EINVAL;
	if (!inet_ntop(family, addr, text, sizeof(text)))
		return -EINVAL;
	snprintf(word, sizeof(word), "%s/%u", text, prefixlen);
	return usernet_append_word(buf, word);
}

int usernet_format_bind_rule(int32_t family, int32_t protocol, uint16_t nr_ports, uint16_t port_min,
			     char **ret)
{
	const char *f, *p;
	char ports[24]; /* "65535-65535", with room for what the compiler cannot rule out */
	char *s;

	switch (family) {
	case AF_UNSPEC:
		f = "";
		break;
	case AF_INET:
		f = "ipv4:";
		break;
	case AF_INET6:
		f = "ipv6:";
		break;
	default:
		return -EINVAL;
	}
	switch (protocol) {
	case 0:
		p = "";
		break;
	case IPPROTO_TCP:
		p = "tcp:";
		break;
	case IPPROTO_UDP:
		p = "udp:";
		break;
	default:
		return -EINVAL;
	}
	/* systemd stores "any" as no ports, one port as a range of one. */
	if (nr_ports == 0)
		snprintf(ports, sizeof(ports), "any");
	else if ((uint32_t)port_min + nr_ports - 1 > UINT16_MAX)
		return -EINVAL;
	else if (nr_ports == 1)
		snprintf(ports, sizeof(ports), "%u", port_min);
	else
		snprintf(ports, sizeof(ports), "%u-%u", port_min, port_min + nr_ports - 1u);
	if (asprintf(&s, "%s%s%s", f, p, ports) < 0)
		return -ENOMEM;
	*ret = s;
	return 0;
}
