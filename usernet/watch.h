/* SPDX-License-Identifier: MIT */
/*
 * The watcher: follows the user manager's units (its signals only say "look again"; what
 * it acts on is read back by method calls) and calls usernet_apply() when a unit with
 * network settings (its own, or its parent slices' IP lists) runs in its control group,
 * usernet_remove() when it stops.
 */
#pragma once

#include <systemd/sd-bus.h>

/*
 * Subscribe to the manager's signals, apply to the units already running, tell the service
 * manager READY=1, and serve until the manager goes away (0) or an error (-errno).
 */
int usernet_watch(sd_bus *bus);
