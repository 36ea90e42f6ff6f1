/* SPDX-License-Identifier: MIT */
/* bindmim with BPF_F_RDONLY_PROG on its template, as bind_allow has it: the verifier refuses. */
#define INNER_FLAGS BPF_F_RDONLY_PROG
#include "bindmim.bpf.c"
