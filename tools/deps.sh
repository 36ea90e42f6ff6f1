#!/usr/bin/env bash
# Install what building and testing bpfbroker needs (Debian 12), and mount
# bpffs the way systemd does if nothing mounted it. Idempotent; needs root.
set -euo pipefail

# systemd: systemd-analyze, systemd-socket-activate, systemd-tmpfiles and
# systemd itself for the unit tests; man-db and groff-base: man -l and groff
# for the man page checks; util-linux: unshare, nsenter, setpriv; iproute2: ip, for
# the veth pairs of the interface attach tests; binutils: nm, for the library's exports;
# libseccomp-dev: the workers' system call filter; crun, runc, podman and busybox-static: the
# OCI hook's end-to-end test runs rootless containers of a busybox rootfs with each;
# dbus-user-session: the --user units' test (systemd-run --user --wait talks to the user bus);
# procps: pgrep in the systemd tests; python3: the --user units' test's socket clients (meson
# brings it too); uidmap: newuidmap for rootless podman's user namespace.
packages=(meson ninja-build pkg-config gcc clang llvm libbpf-dev libelf-dev zlib1g-dev
	libsystemd-dev libcap-dev libseccomp-dev libjson-c-dev libssl-dev libcmocka-dev bpftool
	systemd util-linux
	man-db groff-base iproute2 binutils
	crun runc podman busybox-static
	dbus-user-session procps python3 uidmap)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: installing ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# mode=0700: without it bpffs is world-writable, and anyone holding a
# read-only map fd could pin it there and reopen it read-write.
if ! mountpoint -q /sys/fs/bpf; then
	mount -t bpf -o mode=0700 bpf /sys/fs/bpf
fi
# tracefs: tracepoint ids for brokered tracepoint attach (root-only, mode 0700 by default).
if [ -d /sys/kernel/tracing ] && ! mountpoint -q /sys/kernel/tracing; then
	mount -t tracefs tracefs /sys/kernel/tracing || echo "deps: cannot mount tracefs; tracepoint attach will fail" >&2
fi
