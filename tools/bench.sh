#!/usr/bin/env bash
# Build and run bpfbroker-bench (bench/), as root: load latency against libbpf
# and bpftool, concurrency, request rate, scale and daemon memory. Writes
# bench/results.json and, with matplotlib (or gnuplot), bench/latency.png.
#
#   tools/bench.sh            full run (a few minutes)
#   tools/bench.sh --quick    short run, for CI and smoke tests
# Extra arguments go to bpfbroker-bench (e.g. --workers N).
set -euo pipefail
cd "$(dirname "$0")/.."

[ "$(id -u)" = 0 ] || { echo "bench: run as root (the bench starts the daemon and switches uids)" >&2; exit 1; }
[ -d build ] || meson setup build
ninja -C build
mountpoint -q /sys/fs/bpf || mount -t bpf -o mode=0700 bpf /sys/fs/bpf

build/bench/bpfbroker-bench --json bench/results.json "$@"

# The plot: python3 with matplotlib (Debian's python3-matplotlib), else gnuplot.
plot_python=
for py in /usr/bin/python3 python3; do
	if command -v "$py" >/dev/null && "$py" -c 'import matplotlib' 2>/dev/null; then
		plot_python=$py
		break
	fi
done
if [ -z "$plot_python" ] && ! command -v gnuplot >/dev/null && command -v apt-get >/dev/null; then
	echo "bench: installing python3-matplotlib for the plot" >&2
	if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-matplotlib >/dev/null 2>&1 ||
		{ apt-get update -qq >/dev/null 2>&1 &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-matplotlib >/dev/null 2>&1; }; then
		plot_python=/usr/bin/python3
	fi
fi
if [ -n "$plot_python" ]; then
	"$plot_python" bench/plot.py bench/results.json bench/latency.png
	echo "wrote bench/latency.png"
elif command -v gnuplot >/dev/null; then
	data=$(mktemp)
	trap 'rm -f "$data"' EXIT
	python3 - bench/results.json >"$data" <<'PY'
import json, sys
for e in sorted(json.load(open(sys.argv[1]))["load"], key=lambda e: e["insns"]):
    print(e["insns"], e["direct"]["median_us"] / 1000, e["broker"]["median_us"] / 1000)
PY
	gnuplot <<GP
set terminal png size 840,540
set output "bench/latency.png"
set logscale xy
set xlabel "instructions in the object"
set ylabel "median load latency (ms)"
set grid
plot "$data" using 1:2 with linespoints title "(a) libbpf in-process, root", \
     "$data" using 1:3 with linespoints title "(b) libbpfbroker, uid 65534"
GP
	echo "wrote bench/latency.png"
else
	echo "bench: no matplotlib or gnuplot, no plot" >&2
fi
