/* SPDX-License-Identifier: MIT */
/* libbpf's kernel feature probes, run once in the spawner for every worker it forks. */
#pragma once

/* Never fails: without it, each worker's libbpf probes for itself. */
void warmup_libbpf(void);
