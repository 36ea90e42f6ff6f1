/* SPDX-License-Identifier: MIT */
/*
 * How a unit's network settings combine with those of its parent slices, as systemd's
 * bpf_firewall_compile() combines them: a slice (an inner node of the tree) gets no IP
 * access control of its own, only the rest (IPAccounting=, RestrictNetworkInterfaces=,
 * SocketBindAllow=/SocketBindDeny=, which the kernel runs for its descendants too, after
 * theirs); every other unit's IPAddressAllow= and IPAddressDeny= are the union of its own
 * and those of all its parent slices, so that a service's IPAddressAllow= can let through
 * what a slice's IPAddressDeny=any refuses. Pure: no bus, no kernel.
 */
#pragma once

#include <stdbool.h>

#include "usernet/assign.h"

/* Whether an assignment is one that slices pass down (IPAddressAllow=, IPAddressDeny=). */
bool usernet_setting_passes_down(const char *assignment);

/*
 * A slice's settings as read, split: what applies to the slice's own control group stays in
 * *settings, what it passes down to its units is moved to *ret_passed (empty if nothing).
 * 0 or -ENOMEM (then *settings is as it was).
 */
int usernet_slice_split(struct usernet_assignments *settings,
			struct usernet_assignments *ret_passed);

/*
 * Add to a unit's settings what one of its parent slices passes down, of the slice's
 * settings as read, each marked as coming from slice. 0 or -ENOMEM.
 */
int usernet_inherit(struct usernet_assignments *settings,
		    const struct usernet_assignments *slice_settings, const char *slice);
