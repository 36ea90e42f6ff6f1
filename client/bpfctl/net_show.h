/* SPDX-License-Identifier: MIT */
/*
 * bpfctl net show and net list: what the network settings of a tag (net-TAG-ip|ifaces|bind)
 * left loaded, and the IPAccounting= counts of its ip object; by tag, by --user unit (its
 * invocation id, from the user's own service manager) or every tag of the caller.
 */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "bpfctl.h"
#include "objects/net/net_enforce.h"

/* net show --unit: the unit is not loaded or not running, or has no objects; net show TAG:
 * no objects of the tag. Distinct from a refusal (1) and an error (2). */
#define EXIT_NOT_THERE 3

/* The accounting of tag, as `net --accounting` prints it when CMD exits (JSON: one line). */
void net_print_acct(FILE *f, bool json, const char *tag, const struct net_enforce_acct *a);

/* net show TAG: the tag's objects and accounting on stdout; an exit status. */
int net_show_tag(struct cli *c, const char *tag);

/* net show --unit UNIT ("foo" means "foo.service", as for systemctl): an exit status. */
int net_show_unit(struct cli *c, const char *unit);

/* net list: every net-* tag of the caller, one line (or JSON element) each: an exit status. */
int net_list(struct cli *c);
