/* SPDX-License-Identifier: MIT */
/*
 * The network settings of a unit as systemd's D-Bus API gives them (IPAddressAllow= as
 * a(iayu), SocketBindAllow= as a(iiqq), RestrictNetworkInterfaces= as (bas), ...), spelled
 * back as unit-file assignments ("IPAddressDeny=0.0.0.0/0 ::/0"), which is what the
 * settings parser takes. Pure: no bus, no kernel.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A NULL-terminated list of assignments, grown one at a time, each with where it comes from:
 * from[i] is NULL for the unit's own, else the name of the parent slice it was taken from
 * (usernet/inherit.h).
 */
struct usernet_assignments {
	char **v;
	char **from;
	size_t n;
};

void usernet_assignments_done(struct usernet_assignments *a);
/* Append "name=value", the unit's own; -ENOMEM. */
int usernet_assignments_add(struct usernet_assignments *a, const char *name, const char *value);
/* Append a copy of assignment ("name=value") and of from (NULL: the unit's own); -ENOMEM. */
int usernet_assignments_push(struct usernet_assignments *a, const char *assignment,
			     const char *from);

/*
 * One IPAddressAllow=/IPAddressDeny= item (family, address bytes, prefix length) as
 * "ADDRESS/PREFIXLENGTH", appended to *buf (space-separated). -EINVAL for a family other
 * than AF_INET/AF_INET6, an address of the wrong size or a prefix longer than it.
 */
int usernet_append_prefix(char **buf, int32_t family, const void *addr, size_t addr_size,
			  uint32_t prefixlen);

/*
 * One SocketBindAllow=/SocketBindDeny= item (address family, IP protocol, number of ports,
 * first port; no ports: any) as systemd spells it: [ipv4:|ipv6:][tcp:|udp:](any|PORT|LOW-HIGH).
 * -EINVAL for a family or protocol systemd would not have stored, or a range past 65535.
 */
int usernet_format_bind_rule(int32_t family, int32_t protocol, uint16_t nr_ports, uint16_t port_min,
			     char **ret);

/* Append one word (an interface name) to *buf, space-separated; -ENOMEM. */
int usernet_append_word(char **buf, const char *word);
