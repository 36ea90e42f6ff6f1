/* SPDX-License-Identifier: MIT */
/*
 * For the tests of bpfctl net and vetted objects (test_netjoin, test_net_attacks,
 * test_vetted_attacks): the shipped network objects and the example policy installed for
 * the harness's daemon, `ip` run.
 */
#pragma once

#include <stddef.h>

/*
 * The shipped network objects and manifests copied into netinstall_objects_dir() as root
 * installs them, and the example policy (examples/policy.d/70-user-network.json) written
 * alone; the daemon's argument naming the directory into arg. 0 or -1.
 */
int netinstall_objects_and_policy(char *arg, size_t size);
/* The directory it installs them in (H.dir/objects), for tests that add their own files. */
void netinstall_objects_dir(char *dir, size_t size);

/* Run ip with argv (argv[0] "ip"): 0 if it exited 0, else -1. */
int run_ip(const char *const *argv);
#define IP(...) run_ip((const char *const[]){"ip", __VA_ARGS__, NULL})
