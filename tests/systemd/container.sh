# SPDX-License-Identifier: MIT
# Sourced by the tests that run bpfbrokerd under a real systemd (test-under-systemd.sh,
# test-usernet-under-systemd.sh): checks that systemd can be booted here (else exits 77,
# skipped), takes the integration tests' lock, and makes $work with $units, the broker's
# real units with drop-ins that only point ExecStart= at a copy of the build's daemon and
# a test policy ($work/policy.d, the test writes it) and drop the default dependencies,
# so that the container starts nothing but what the test asks for. container_boot then
# boots systemd as PID 1 of new mount, pid, cgroup, UTS and IPC namespaces (and network,
# with only lo up, if CONTAINER_NET=1), with its own /run, /tmp, cgroup2 and bpffs; inside
# runs a command there. Set CONTAINER_NAME (names the work directory and the cgroup) first.
# A test that puts system objects (NAME.bpf.o and NAME.json) into $work/objects before
# container_boot gets them in /run/bpftest/objects, root's, and the daemon started with
# --objects-dir there.

: "${BUILD_DIR:?}" "${SRC_DIR:?}" "${SANITIZE:?}" "${CONTAINER_NAME:?}"

skip() {
	echo "SKIP: $*"
	exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root"
# LeakSanitizer stops the world with ptrace at exit, which the unit's system
# call filter forbids: the sanitizer build cannot run in this sandbox.
[ "$SANITIZE" = none ] || skip "sanitizer build (the sandbox forbids LeakSanitizer's ptrace)"
systemd_bin=
for f in /usr/lib/systemd/systemd /lib/systemd/systemd; do
	[ -x "$f" ] && systemd_bin=$f && break
done
[ -n "$systemd_bin" ] || skip "no systemd binary"
command -v unshare >/dev/null && command -v nsenter >/dev/null && command -v setpriv >/dev/null ||
	skip "needs unshare, nsenter and setpriv (util-linux)"
cg_mount=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
cg_path=$(sed -n 's/^0:://p' /proc/self/cgroup)
[ -n "$cg_mount" ] && [ -n "$cg_path" ] || skip "no cgroup v2 hierarchy"

failures=0
fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# Integration tests serialize on this lock (tests/integration/harness.c).
exec 9>/run/bpfbroker-integration.lock
flock 9

work=$(mktemp -d "$BUILD_DIR/$CONTAINER_NAME-XXXXXX")
cgroup="$cg_mount${cg_path%/}/bpfbroker-$CONTAINER_NAME-$$"
pid1=
launcher=
cleanup() {
	# Killing PID 1 of the namespace kills everything in it; the private bpffs
	# with every pin goes with its mount namespace.
	[ -n "$pid1" ] && kill -KILL "$pid1" 2>/dev/null
	[ -n "$launcher" ] && wait "$launcher" 2>/dev/null
	if [ -d "$cgroup" ]; then
		for _ in $(seq 50); do
			find "$cgroup" -depth -type d -exec rmdir {} + 2>/dev/null
			[ -d "$cgroup" ] || break
			sleep 0.1
		done
		[ -d "$cgroup" ] && echo "warning: $cgroup outlived the test" >&2
	fi
	rm -rf "$work"
}
trap cleanup EXIT

# --- what the container boots ---
units=$work/units
mkdir -p "$units/bpfbrokerd.service.d" "$units/bpfbrokerd.socket.d" "$work/policy.d"
cp "$BUILD_DIR/systemd/bpfbrokerd.service" "$SRC_DIR/systemd/bpfbrokerd.socket" "$units/"
cat >"$units/bpftest.target" <<'EOF'
[Unit]
Description=bpfbroker test
DefaultDependencies=no
Wants=bpfbrokerd.socket
EOF
cat >"$units/bpfbrokerd.socket.d/test.conf" <<'EOF'
[Unit]
DefaultDependencies=no
EOF
cat >"$units/bpfbrokerd.service.d/test.conf" <<EOF
[Unit]
DefaultDependencies=no
[Service]
ExecStart=
ExecStart=/run/bpftest/bpfbrokerd --policy-dir /run/bpftest/policy.d --worker-exe /run/bpftest/bpfbroker-worker --objects-dir /run/bpftest/objects --verbose
StandardOutput=append:/run/bpftest/daemon.log
StandardError=append:/run/bpftest/daemon.log
EOF

inside() { nsenter -t "$pid1" -m -p ${CONTAINER_NET:+-n} -- "$@"; }

# Boot systemd with $units and $work/policy.d; skip the test if it does not come up.
container_boot() {
	cat >"$work/boot.sh" <<EOF
#!/bin/bash
# In the new namespaces: our own /run, /tmp, cgroup2 and bpffs; then systemd.
set -e
mount --make-rprivate /
mount -t proc proc /proc
mount -t cgroup2 cgroup2 /sys/fs/cgroup
# A source or build tree under /tmp or /run would vanish under the mounts
# below: hold both open and bind them back where they were.
exec 7<"$SRC_DIR" 8<"$BUILD_DIR"
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t tmpfs tmpfs /tmp
# And /var/tmp (PrivateTmp= units' directories), so that nothing of the container's
# systemd lands on the host's; the journal stays in /run (below).
mount -t tmpfs tmpfs /var/tmp
for tree in "7:$SRC_DIR" "8:$BUILD_DIR"; do
	if [ ! -d "\${tree#*:}" ]; then
		mkdir -p "\${tree#*:}"
		# -c: the fd itself, not the path its link names, which is hidden now.
		mount -c --bind "/proc/self/fd/\${tree%%:*}" "\${tree#*:}"
	fi
done
exec 7<&- 8<&-
mount -t bpf -o mode=0700 bpf /sys/fs/bpf
${CONTAINER_NET:+ip link set lo up}
mkdir -p /run/systemd/system /run/bpftest /run/systemd/journald.conf.d
printf '[Journal]\nStorage=volatile\n' >/run/systemd/journald.conf.d/bpftest.conf
# The service gets its own /tmp and no /home or /root (PrivateTmp=,
# ProtectHome=): it runs a copy of the build's daemon and worker from /run, which it sees.
cp "$BUILD_DIR/daemon/bpfbrokerd" "$BUILD_DIR/daemon/bpfbroker-worker" /run/bpftest/
cp -r "$units"/. /run/systemd/system/
cp -r "$work/policy.d" /run/bpftest/
mkdir -m 0755 /run/bpftest/objects
[ ! -d "$work/objects" ] || cp -r "$work/objects"/. /run/bpftest/objects/
# The service may write only what the tmpfiles.d snippet makes: make it so.
systemd-tmpfiles --create "$SRC_DIR/systemd/tmpfiles.d/bpfbroker.conf"
export container=bpfbroker-test
exec "$systemd_bin" --unit=bpftest.target --log-target=console --show-status=no
EOF
	chmod +x "$work/boot.sh"

	mkdir "$cgroup" || skip "cannot create a cgroup under $cg_mount${cg_path%/}"
	(
		echo "$BASHPID" >"$cgroup/cgroup.procs" &&
			exec unshare --mount --pid --fork --cgroup --uts --ipc ${CONTAINER_NET:+--net} "$work/boot.sh"
	) >"$work/systemd.log" 2>&1 &
	launcher=$!

	for _ in $(seq 100); do
		# The launcher became unshare, whose child becomes systemd.
		pid1=$(pgrep -P "$launcher" | head -1)
		if [ -n "$pid1" ]; then
			state=$(inside systemctl is-system-running 2>/dev/null)
			case $state in running | degraded) break ;; esac
		fi
		sleep 0.1
	done
	if [ -z "$pid1" ] || ! inside systemctl is-active -q bpfbrokerd.socket; then
		cat "$work/systemd.log" >&2
		skip "systemd did not boot in the namespaces (state: ${state:-none})"
	fi
	echo "systemd $(inside systemctl --version | head -1 | cut -d' ' -f2) is PID 1 of the test namespaces"
}
