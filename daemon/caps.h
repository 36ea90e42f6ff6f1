/* SPDX-License-Identifier: MIT */
/*
 * Capabilities of the broker's processes. Workers keep in their permitted set
 * only what loading can need and raise into the effective set only what the
 * request's program type needs, for as short as it needs it.
 */
#pragma once

#include <stdbool.h>
#include <sys/capability.h>

/* Reduce a freshly forked worker: permitted = what loading may need, effective empty. */
int caps_worker_init(void);
/* Make exactly these capabilities effective (others dropped from the effective set). */
int caps_set_effective(const cap_value_t *caps, int n);
/* Drop every effective capability. */
int caps_clear_effective(void);
/* Is cap in the effective set right now? (for tests and self-checks) */
bool caps_is_effective(cap_value_t cap);
