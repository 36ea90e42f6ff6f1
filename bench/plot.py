#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Plot median load latency against object size from bpfbroker-bench's JSON.

    plot.py results.json latency.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    src, out = sys.argv[1], sys.argv[2]
    with open(src) as fh:
        r = json.load(fh)
    load = sorted(r["load"], key=lambda e: e["insns"])
    x = [e["insns"] for e in load]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for key, label in (("direct", "(a) libbpf in-process, root"),
                       ("direct_cap_bpf", "(a') libbpf in-process, CAP_BPF only"),
                       ("broker", "(b) libbpfbroker, uid 65534"),
                       ("broker_load_with_perfmon",
                        "(b+) libbpfbroker, load_with_perfmon")):
        if key not in load[0]:
            continue
        y = [e[key]["median_us"] / 1000 for e in load]
        ax.plot(x, y, marker="o", label=label)
        for xi, yi in zip(x, y):
            ax.annotate("%.2f" % yi, (xi, yi), textcoords="offset points",
                        xytext=(4, 4), fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("instructions in the object (tiny, medium, large)")
    ax.set_ylabel("median load latency (ms)")
    ax.set_title("bpfbroker load latency, kernel %s, %d CPUs%s"
                 % (r["kernel"], r["cpus"], " (quick)" if r["quick"] else ""))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)


if __name__ == "__main__":
    main()
