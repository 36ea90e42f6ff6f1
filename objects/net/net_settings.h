/* SPDX-License-Identifier: MIT */
/*
 * systemd's network settings as a unit file spells them (IPAddressAllow=, IPAddressDeny=,
 * IPAccounting=, RestrictNetworkInterfaces=, SocketBindAllow=, SocketBindDeny=), parsed into
 * the entries of the network objects' maps (net_maps.h). Pure: no kernel, no files.
 *
 * Every assignment is parsed as systemd parses it: several assignments of one setting add up,
 * an empty one resets the setting. Where systemd logs and ignores an invalid word, these
 * functions refuse the whole assignment (-EINVAL, and a sentence in *error): a typo in a deny
 * list must not quietly leave an address reachable.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "objects/net/net_maps.h"

/* The longest interface name with its NUL: an alternative name (linux/if.h's ALTIFNAMSIZ). */
#define NET_IFNAME_MAX 128

/* An IPv4 or IPv6 prefix, its host bits cleared (as systemd stores it). */
struct net_prefix {
	int family; /* AF_INET or AF_INET6 */
	uint8_t prefixlen;
	uint8_t addr[16]; /* network byte order; 4 bytes used for AF_INET */
};

struct net_settings {
	/* IPAddressAllow=, IPAddressDeny= */
	struct net_prefix *ip_allow, *ip_deny;
	size_t n_ip_allow, n_ip_deny;
	/* IPAccounting= */
	bool ip_accounting;
	/* RestrictNetworkInterfaces=: names (resolved to indexes when applied); empty: no
	 * restriction. ifaces_allow_list is set by the first assignment after a reset. */
	char **ifaces;
	size_t n_ifaces;
	bool ifaces_allow_list;
	/* SocketBindAllow=, SocketBindDeny= (each at most NET_BIND_RULES_MAX) */
	struct net_bind_rule *bind_allow, *bind_deny;
	size_t n_bind_allow, n_bind_deny;
};

/* Free what s holds and zero it (an empty s again). */
void net_settings_done(struct net_settings *s);

/*
 * One word of IPAddressAllow=/IPAddressDeny=: "any" (0.0.0.0/0 and ::/0), "localhost" and
 * the names systemd takes for it (127.0.0.0/8, ::1/128), "link-local" (169.254.0.0/16,
 * fe80::/64), "multicast" (224.0.0.0/4, ff00::/8), or ADDRESS[/PREFIXLENGTH], IPv4 or IPv6,
 * a host address without a length. Up to two prefixes in ret; their number in *ret_n.
 */
int net_prefix_parse(const char *word, struct net_prefix ret[2], size_t *ret_n, char **error);

/* One SocketBindAllow=/SocketBindDeny= value: [ipv4|ipv6:][tcp|udp:][PORT[-PORT]|any], or
 * "any"; ports 1 to 65535. A rule without ports matches every port, 0 included (systemd's
 * programs do the same). */
int net_bind_rule_parse(const char *value, struct net_bind_rule *ret, char **error);

/* Whether name could be an interface's name or alternative name, as systemd checks it
 * (printable ASCII without space, ':', '/' or '%'; not "." or ".."; not a number; shorter
 * than NET_IFNAME_MAX). */
bool net_ifname_is_valid(const char *name);

/*
 * One assignment, "Name=value" as in a unit file, e.g. "IPAddressDeny=any". Name is one of
 * the six settings above. -EINVAL for an unknown name or a value systemd would not take
 * (-E2BIG past a list's bound); s is unchanged on failure.
 */
int net_settings_assign(struct net_settings *s, const char *assignment, char **error);

/* The same with the name and value apart. */
int net_settings_set(struct net_settings *s, const char *name, const char *value, char **error);

/* Whether s asks for anything (a program to attach) in each object. */
bool net_settings_want_ip(const struct net_settings *s);
bool net_settings_want_ifaces(const struct net_settings *s);
bool net_settings_want_bind(const struct net_settings *s);

/* The LPM trie key of a prefix (p->family decides which). */
void net_prefix_to_ipv4_key(const struct net_prefix *p, struct net_ipv4_key *ret);
void net_prefix_to_ipv6_key(const struct net_prefix *p, struct net_ipv6_key *ret);
