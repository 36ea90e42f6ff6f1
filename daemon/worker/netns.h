/* SPDX-License-Identifier: MIT */
/*
 * Whose a network namespace is. An interface grant (attach.interfaces)
 * applies only in a network namespace that belongs to the client: one that a
 * user namespace the client's uid owns owns, directly or through the user
 * namespaces between it and ours. The host's (owned by our user namespace,
 * the initial one) and one root made are nobody's in this sense, whatever
 * uid asks: interfaces there need attach.host_interfaces. A uid that merely
 * runs in the host's network namespace (a subordinate range's owner can put
 * one there without a new network namespace) gets nothing from its
 * "veth*" there.
 */
#pragma once

#include <sys/types.h>

/*
 * Does a user namespace owned by uid own the network namespace netns_fd
 * (an nsfs fd, such as /proc/PID/ns/net), below our own user namespace?
 * 1 yes, 0 no, or a negative errno (then: no).
 */
int netns_owned_by(int netns_fd, uid_t uid);
