#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bpfbrokerd under its real units and a real systemd: boots systemd as PID 1
# of new mount, pid, cgroup, UTS and IPC namespaces (with its own /run, /tmp,
# cgroup2 and bpffs), starts bpfbrokerd.socket, and as an unprivileged user
# lets socket activation start the daemon in its sandbox; then loads, attaches
# (cgroup, xdp, tc, tracepoint, raw tracepoint, uprobe), reloads the policy, restarts
# the daemon and unloads, checking that nothing the sandbox forbids was
# needed. The units are the build's, as installed; drop-ins only point
# ExecStart= at a copy of the build's daemon and a test policy, and drop the
# default dependencies, so that the container starts nothing but them
# (container.sh).
# Needs root; exits 77 (skipped) where systemd cannot be booted like this.
set -uo pipefail

: "${BUILD_DIR:?}" "${SRC_DIR:?}" "${SANITIZE:?}"
CONTAINER_NAME=test-under-systemd
. "$SRC_DIR/tests/systemd/container.sh"

cat >"$work/policy.d/50-test.json" <<'EOF'
{ "rules": [ { "match": { "uids": ["65534"] },
  "allow": { "program_types": ["socket_filter", "xdp", "sched_cls", "tracepoint", "raw_tracepoint", "cgroup_skb", "kprobe"],
             "helper_classes": ["base", "net_read", "current_task"], "pinning": true,
             "maps": [ { "name": "config*", "access": "ro" }, { "name": "*", "access": "rw" } ],
             "attach": { "cgroups": true, "host_interfaces": ["lo"], "tracepoints": ["sched:sched_process_fork"],
                         "raw_tracepoints": ["sys_enter"], "uprobes": true } } } ] }
EOF
container_boot
as_nobody() { inside setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
# The same in a network namespace of its own (xdp and tc on its lo).
as_nobody_netns() { inside unshare --net setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
ctl() { as_nobody "$BUILD_DIR/client/bpfctl" "$@"; }
show() { inside systemctl show -p "$2" --value "$1"; }
obj() { echo "$BUILD_DIR/tests/$1.bpf.o"; }

# --- socket activation, as an unprivileged user, on the default socket path ---
check_out() { # description expected-substring command...
	local what=$1 want=$2 out
	shift 2
	out=$("$@" 2>&1) || fail "$what: exit $?: $out"
	case $out in *"$want"*) ;; *) fail "$what: no \"$want\" in: $out" ;; esac
}
[ "$(show bpfbrokerd.service ActiveState)" = inactive ] || fail "the service ran before anyone connected"
check_out "bpfctl run through the socket unit" "counted 3 packets" \
	ctl run "$BUILD_DIR/examples/count_packets.bpf.o" -- "$BUILD_DIR/examples/socket-counter"
[ "$(show bpfbrokerd.service ActiveState)" = active ] || fail "the service is not active"
[ "$(show bpfbrokerd.service SubState)" = running ] || fail "the service is not running (READY=1?)"

# The daemon as the kernel sees it: its four capabilities (no CAP_SYS_PTRACE),
# none effective, no ambient or inheritable ones, no_new_privs, the seccomp
# filter; no CAP_SETPCAP.
main_pid=$(show bpfbrokerd.service MainPID)
status=$(inside cat "/proc/$main_pid/status")
for want in "CapPrm:	000000c000201000" "CapBnd:	000000c000201000" "CapEff:	0000000000000000" \
	"CapInh:	0000000000000000" "CapAmb:	0000000000000000" "NoNewPrivs:	1" "Seccomp:	2"; do
	grep -qF "$want" <<<"$status" || fail "daemon status lacks \"$want\""
done

# --- named objects and every kind of brokered attach ---
check_out "load netcount" "loaded nc" ctl load "$(obj netcount)" --name nc
check_out "attach xdp (setns into the caller's netns)" "attached xdp_count" \
	as_nobody_netns "$BUILD_DIR/client/bpfctl" attach nc/xdp_count xdp lo --pin
check_out "attach tc" "attached tc_count" \
	as_nobody_netns "$BUILD_DIR/client/bpfctl" attach nc/tc_count tc lo ingress --pin
check_out "load tracepoint" "loaded tp" ctl load "$(obj tracepoint)" --name tp
check_out "attach tracepoint (perf_event_open)" "attached count_forks" \
	ctl attach tp/count_forks tracepoint sched:sched_process_fork --pin
check_out "load rawtp" "loaded rt" ctl load "$(obj rawtp)" --name rt
check_out "attach raw tracepoint" "attached rawtp_count" \
	ctl attach rt/rawtp_count raw_tracepoint sys_enter --pin
check_out "load pinned" "loaded pn" ctl load "$(obj pinned)" --name pn
# libbpf looks for modules' BTF here: the worker's filter works under the unit's own.
check_out "load a CO-RE probe for a missing type" "loaded cp" ctl load "$(obj causes_probe)" --name cp
check_out "unload cp" "unloaded cp" ctl unload cp
inside sh -c 'mkdir /sys/fs/cgroup/delegated && cd /sys/fs/cgroup/delegated &&
	chown 65534 . cgroup.procs cgroup.threads cgroup.subtree_control' ||
	fail "cannot make a delegated cgroup"
check_out "load egress" "loaded eg" ctl load "$(obj egress)" --name eg
check_out "attach cgroup (read-only cgroupfs)" "attached count_egress" \
	ctl attach eg/count_egress cgroup /sys/fs/cgroup/delegated --pin
check_out "map dump" "key: 0" ctl map dump tp/forks
# A uprobe on a process of nobody's: the worker opens its /proc/PID/status,
# with no capability (the unit hides no process, the broker has no CAP_SYS_PTRACE).
check_out "load uprobe" "loaded up" ctl load "$(obj uprobe)" --name up
check_out "attach uprobe (a process of the caller's, counted)" "value: 5" \
	as_nobody env T="$BUILD_DIR/tests/integration/uprobe_target" C="$BUILD_DIR/client/bpfctl" \
	sh -ec 'rm -f /tmp/up.in; mkfifo /tmp/up.in
		setpriv --no-new-privs "$T" </tmp/up.in >/tmp/up.out & pid=$!
		exec 3>/tmp/up.in
		# The FIFO opens before setpriv runs: wait until the target runs (with
		# no_new_privs), or the broker may look at the shell that is to become it.
		for _ in $(seq 100); do
			[ "$(readlink /proc/$pid/exe)" = "$T" ] && break; sleep 0.05
		done
		"$C" attach up/count_calls uprobe "$T:uprobe_target_work" --pid $pid --pin
		echo "call 5" >&3
		for _ in $(seq 100); do grep -q "called 5" /tmp/up.out && break; sleep 0.1; done
		"$C" map dump up/uprobe_calls
		echo exit >&3; wait $pid'

# --- reload: a good policy, then a bad one that must leave the good in force ---
check_out "systemctl reload" "" inside systemctl reload bpfbrokerd.service
inside sh -c 'echo "{ not json" >/run/bpftest/policy.d/60-bad.json'
inside systemctl reload bpfbrokerd.service || fail "reload with a bad policy failed the unit"
[ "$(show bpfbrokerd.service ActiveState)" = active ] || fail "a bad policy stopped the service"
check_out "still allowed after a bad reload" "allowed" ctl check "$(obj counter)"
inside rm /run/bpftest/policy.d/60-bad.json

# --- restart: named objects and pinned links survive the sandboxed restart ---
inside systemctl restart bpfbrokerd.service || fail "restart"
n=$(ctl list | grep -c ' loaded ')
[ "$n" = 6 ] || fail "after a restart, $n named objects instead of 6"
check_out "detach" "detached tc_count" ctl detach nc/tc_count
for o in nc tp rt pn eg up; do
	check_out "unload $o" "unloaded $o" ctl unload "$o"
done
check_out "list" "no named objects" ctl list

# --- stop ---
inside systemctl stop bpfbrokerd.service bpfbrokerd.socket || fail "stop"
[ "$(show bpfbrokerd.service Result)" = success ] || fail "the service did not stop cleanly"
[ "$(show bpfbrokerd.service NRestarts)" = 0 ] || fail "the service restarted by itself"

log=$(inside cat /run/bpftest/daemon.log)
grep -q "listening on 1 socket(s) from the service manager" <<<"$log" ||
	fail "the daemon did not use the socket systemd passed"
grep -q "policy reload failed; the previous policy stays in force" <<<"$log" ||
	fail "the bad policy was not reported"
# Whatever the sandbox refused would show as EPERM (SystemCallErrorNumber=,
# capabilities, read-only paths) or EROFS in the daemon's messages.
denied=$(grep -E "Operation not permitted|Read-only file system|Permission denied|Bad system call" <<<"$log")
[ -z "$denied" ] || fail "the sandbox refused the daemon something: $denied"

if [ "$failures" -gt 0 ]; then
	echo "--- daemon log ---" >&2
	echo "$log" >&2
	echo "--- systemd ---" >&2
	inside systemctl --no-pager status bpfbrokerd.service >&2
	echo "$failures check(s) failed" >&2
	exit 1
fi
echo "under systemd: all checks passed"
