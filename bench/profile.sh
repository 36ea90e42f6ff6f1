#!/usr/bin/env bash
# CPU profile of N tiny loads through the broker, by process role and phase
# (BENCHMARKS.md, "Where the time goes"). Root; needs perf (linux-perf).
#   bench/profile.sh [LOADS]
set -euo pipefail
cd "$(dirname "$0")/.."
loads=${1:-600}
freq=999
command -v perf >/dev/null || { echo "profile: needs perf (apt-get install linux-perf)" >&2; exit 1; }
[ -d build ] || meson setup build
ninja -C build >/dev/null
mountpoint -q /sys/fs/bpf || mount -t bpf -o mode=0700 bpf /sys/fs/bpf
data=$(mktemp /tmp/bpfbroker-profile.XXXXXX)
trap 'rm -f "$data"' EXIT
[ -n "${KEEP:-}" ] && trap - EXIT && echo "perf data: $data"
perf record -q -F "$freq" -a --call-graph dwarf,16384 -o "$data" -- \
	build/bench/bpfbroker-bench --profile-loads "$loads"
python3 bench/profile.py "$data" "$loads" "$freq"
