/* SPDX-License-Identifier: MIT */
/*
 * bpfctl doctor: what on this machine weakens the broker's guarantees, as
 * seen from the caller's side (a user's mount namespace may differ from the
 * daemon's). Works without a reachable broker.
 */
#pragma once

#include <stdbool.h>

#include "libbpfbroker.h"

/* Print the report (text, or JSON with json); b may be NULL. Returns the exit status. */
int doctor_run(struct bpfbroker *b, bool json);
