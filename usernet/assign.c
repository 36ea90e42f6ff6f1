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
	for (size_t i = 0; i < a->n; i++) {
		free(a->v[i]);
		free(a->from[i]);
	}
	free(a->v);
	free(a->from);
	*a = (struct usernet_assignments){};
}

/* Append s and from (both malloc'd, from may be NULL), taking them on success only. */
static int assignments_append(struct usernet_assignments *a, char *s, char *from)
{
	char **v, **f;

	v = reallocarray(a->v, a->n + 2, sizeof(*v));
	if (!v)
		return -ENOMEM;
	a->v = v;
	f = reallocarray(a->from, a->n + 1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	a->from = f;
	a->v[a->n] = s;
	a->from[a->n] = from;
	a->v[++a->n] = NULL;
	return 0;
}

int usernet_assignments_add(struct usernet_assignments *a, const char *name, const char *value)
{
	_cleanup_free_ char *s = NULL;
	int k;

	if (asprintf(&s, "%s=%s", name, value) < 0)
		return -ENOMEM;
	k = assignments_append(a, s, NULL);
	if (k < 0)
		return k;
	TAKE_PTR(s);
	return 0;
}

int usernet_assignments_push(struct usernet_assignments *a, const char *assignment,
			     const char *from)
{
	_cleanup_free_ char *s = strdup(assignment), *f = from ? strdup(from) : NULL;
	int k;

	if (!s || (from && !f))
		return -ENOMEM;
	k = assignments_append(a, s, f);
	if (k < 0)
		return k;
	TAKE_PTR(s);
	TAKE_PTR(f);
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
