#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where the CPU goes per load, by process role and phase, from a perf.data
recorded with `perf record -a --call-graph dwarf` around
`bpfbroker-bench --profile-loads N` (bench/profile.sh does both).

    profile.py perf.data LOADS FREQUENCY
"""
import collections
import subprocess
import sys

ROLES = {"bpfbrokerd": "event loop", "bpfbroker-spawn": "spawner",
         "bpfbroker-work": "worker", "bpfbroker-bench": "client"}
# The first of these found in a sample's call chain names its phase.
PHASES = ["do_exit", "copy_process", "load_audit_flush", "proto_recv", "proto_send",
          "job_read_object", "inspect_elf_calls", "btfcheck_object", "bpf_object__open_mem",
          "job_configure", "inspect_object", "policy_decide", "job_check_quotas",
          "bpf_object__load", "job_post_load_check", "job_hand_out", "job_done",
          "caps_worker_check", "json_", "__sys_bpf", "poll", "epoll_wait",
          "asm_exc_page_fault"]


def main():
    data, loads, hz = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    out = subprocess.run(["perf", "script", "-i", data, "-F", "comm,pid,ip,sym"],
                         capture_output=True, text=True, check=True).stdout
    per = collections.defaultdict(collections.Counter)
    for block in out.split("\n\n"):
        lines = [ln for ln in block.split("\n") if ln.strip()]
        if not lines:
            continue
        comm = lines[0].split()[0]
        stack = [ln.strip().split(" ", 1)[-1] for ln in lines[1:]]
        role = ROLES.get(comm, "other (%s)" % comm if comm != "swapper" else "idle")
        phase = next((p for p in PHASES if any(p in f for f in stack)),
                     "other: " + (stack[0] if stack else "?"))
        per[role][phase] += 1

    def us(n):
        return n / hz * 1e6 / loads

    for role, c in sorted(per.items(), key=lambda x: -sum(x[1].values())):
        if role.startswith("other ("):
            continue
        print("%-12s %8.1f us per load" % (role, us(sum(c.values()))))
        if role == "idle":
            continue
        for phase, n in c.most_common(12):
            print("    %-50.50s %7.1f" % (phase, us(n)))


if __name__ == "__main__":
    main()
