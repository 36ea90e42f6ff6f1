#!/usr/bin/env bash
# Quickstart: build bpfbroker, start bpfbrokerd with the shipped example
# policy, and show an unprivileged user (nobody, uid 65534) loading the
# example program through it. Run as root from the source tree.
set -euo pipefail
cd "$(dirname "$0")/.."

[ "$(id -u)" = 0 ] || { echo "quickstart: run as root (sudo $0)" >&2; exit 1; }
tools/deps.sh
[ -d build ] || meson setup build >/dev/null
ninja -C build >/dev/null

policy_dir=/etc/bpfbroker/policy.d
mkdir -p "$policy_dir"
if [ ! -e "$policy_dir/50-example.json" ]; then
	install -m 0644 examples/policy.d/50-example.json "$policy_dir/"
	echo "quickstart: installed the example policy as $policy_dir/50-example.json"
fi
build/daemon/bpfbrokerd --check-config

sock=/run/bpfbroker/bpfbroker.sock
pidfile=/run/bpfbroker/bpfbrokerd.pid
if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
	echo "quickstart: bpfbrokerd is already running (pid $(cat "$pidfile")); reloading its policy"
	kill -HUP "$(cat "$pidfile")"
else
	mkdir -p /run/bpfbroker
	# --worker-exe: the build's worker (installed, bpfbrokerd finds its own).
	setsid build/daemon/bpfbrokerd --socket "$sock" --worker-exe "$PWD/build/daemon/bpfbroker-worker" </dev/null >>/run/bpfbroker/bpfbrokerd.log 2>&1 &
	echo $! >"$pidfile"
	for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
	echo "quickstart: bpfbrokerd started (pid $(cat "$pidfile"), log /run/bpfbroker/bpfbrokerd.log)"
fi

as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
obj=build/examples/count_packets.bpf.o

echo; echo "\$ bpfctl policy        # as nobody"
as_nobody build/client/bpfctl policy
echo; echo "\$ bpfctl check $obj        # as nobody"
as_nobody build/client/bpfctl check "$obj"
echo; echo "\$ bpfctl run $obj -- socket-counter        # as nobody"
as_nobody build/client/bpfctl run "$obj" -- build/examples/socket-counter
echo
echo "quickstart: done. Stop the broker with: kill \$(cat $pidfile)"
