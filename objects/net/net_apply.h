/* SPDX-License-Identifier: MIT */
/*
 * Parsed network settings (net_settings.h) written into the maps of freshly loaded network
 * objects, given the maps' fds (from libbpf, or from the broker by map name); and the
 * accounting read back. Fill the maps before attaching the programs: until then they let
 * everything through.
 */
#pragma once

#include <stdint.h>

#include "objects/net/net_settings.h"

/* ip_firewall.bpf.o's tries, by their names in net_maps.h. */
struct net_ip_map_fds {
	int ipv4_allow, ipv4_deny, ipv6_allow, ipv6_deny;
};

/* IPAddressAllow=/IPAddressDeny= into the four tries. */
int net_ip_fill(const struct net_settings *s, const struct net_ip_map_fds *fds, char **error);

/* The counts of ip_acct (NET_MAP_IP_ACCT) for both directions. */
int net_ip_acct_read(int acct_fd, struct net_ip_acct *ret_ingress, struct net_ip_acct *ret_egress);

/*
 * An interface name (or alternative name) to its index in the caller's network namespace
 * now: -ENODEV if there is none. An index stays with its interface: a later rename, or a new
 * interface of the same name, does not change what a filled map says.
 */
int net_ifname_to_index(const char *name, uint32_t *ret);

/*
 * RestrictNetworkInterfaces= into "ifaces" and "ifaces_mode", names resolved now. A name
 * with no interface is left out, as systemd leaves it out (on an allow list the interface is
 * then refused; on a deny list it is not refused if it appears later); *ret_unknown (if not
 * NULL) counts them, for the caller to warn.
 */
int net_ifaces_fill(const struct net_settings *s, int ifaces_fd, int mode_fd, size_t *ret_unknown,
		    char **error);

/* SocketBindAllow=/SocketBindDeny= into "bind_allow" and "bind_deny", every entry written
 * (those past the rules zeroed, so a map filled before holds no stale rule). */
int net_bind_fill(const struct net_settings *s, int allow_fd, int deny_fd, char **error);
