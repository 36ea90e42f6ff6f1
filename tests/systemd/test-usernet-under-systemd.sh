#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --user units' network settings end to end, under a real systemd: boots systemd as PID 1
# of new namespaces (container.sh), a network namespace with only lo among them, where a
# listener waits on 127.0.0.2 and 127.0.0.3; starts a user manager (user@65534.service)
# there, and runs --user units with IPAddressDeny=any that try to connect:
#  1. without bpfbroker-user-net: the user manager takes IPAddressDeny=any, shows it on its
#     D-Bus API, and the unit connects anyway (the manager cannot enforce it);
#  2. with the watcher (bpfbroker-user-net.service, enabled with systemctl --global): it
#     sees the unit start, reads IPAddressDeny=/IPAddressAllow= and the unit's control group
#     (checked against the unit's own /proc/self/cgroup), has the broker attach the vetted
#     network objects (the test policy grants them to $uid, as the example drop-in
#     70-user-network.json does): 127.0.0.2 reachable, 127.0.0.3 refused; the unit's own
#     processes cannot unload or detach them; on stop nothing is left (named objects, pins);
#  3. with the ExecStartPre= drop-in: apply-self has the watcher apply before the main
#     process runs, so the unit's very first connect is already refused (no window);
#     Parent slices: a slice's IPAddressDeny=any and IPAddressAllow= are added to the units'
#     in it (as systemd does), not applied to the slice; a unit with nothing of its own is
#     enforced for its slices' lists;
#  4. the watcher, restarted, removes the objects of a unit that stopped while it was down.
# Needs root; exits 77 (skipped) where systemd cannot be booted like this.
set -uo pipefail

: "${BUILD_DIR:?}" "${SRC_DIR:?}" "${SANITIZE:?}"
CONTAINER_NAME=test-usernet CONTAINER_NET=1
. "$SRC_DIR/tests/systemd/container.sh"
command -v ip >/dev/null || skip "needs ip (iproute2)"
python=/usr/bin/python3
[ -x $python ] || python=$(command -v python3) || skip "needs python3 (the listener)"
uid=65534

# --- what the container boots: the broker's units (for the enforcing part) and a user
# manager for $uid. ---
mkdir -p "$units/user@$uid.service.d"
# The vetted network objects, as the package installs them, granted to $uid as the example
# drop-in (examples/policy.d/70-user-network.json) grants them.
mkdir "$work/objects"
for o in ip-firewall restrict-ifaces socket-bind; do
	cp "$BUILD_DIR/objects/net/$o.bpf.o" "$BUILD_DIR/objects/$o.json" "$work/objects/" ||
		fail "no system object $o in the build"
done
cat >"$work/policy.d/50-test.json" <<EOF
{ "rules": [ { "match": { "uids": ["$uid"] },
               "allow": { "objects": ["ip-firewall", "restrict-ifaces", "socket-bind"] },
               "limits": { "max_named_objects": 48, "max_attachments": 96,
                           "max_loaded_programs": 128 } } ] }
EOF
# The real user@.service, without what needs logind and a PAM stack: its runtime
# directory made here instead of by systemd-user-runtime-dir (which asks logind), no PAM
# session, and not pulling in sysinit.target (the container boots nothing else).
cat >"$units/user-runtime-dir@.service" <<'EOF'
[Unit]
Description=/run/user/%i (test)
DefaultDependencies=no
StopWhenUnneeded=yes
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh -c 'mkdir -p /run/user/%i && chown %i:%i /run/user/%i && chmod 0700 /run/user/%i'
ExecStop=/bin/rm -rf /run/user/%i
EOF
cat >"$units/user@$uid.service.d/test.conf" <<EOF
[Unit]
DefaultDependencies=no
[Service]
PAMName=
Environment=XDG_RUNTIME_DIR=/run/user/$uid
EOF
container_boot
inside mkdir -p /run/systemd/user /run/bpftest/user
inside chown $uid /run/bpftest/user
as_user() {
	inside setpriv --reuid=$uid --regid=$uid --clear-groups -- \
		env -i PATH=/usr/bin:/bin XDG_RUNTIME_DIR=/run/user/$uid "$@"
}
user_net="$BUILD_DIR/usernet/bpfbroker-user-net"
bpfctl="$BUILD_DIR/client/bpfctl"
ulog=/run/bpftest/user

if ! inside systemctl start "user@$uid.service"; then
	inside systemctl --no-pager status "user@$uid.service" >&2
	cat "$work/systemd.log" >&2
	skip "the user manager for $uid did not start in the namespaces"
fi
echo "a user manager for $uid runs"

# The listener the units try to reach, in the container's network namespace.
# A system unit of the container's: it goes with it.
# No default dependencies: it must not pull sysinit.target (tmpfiles, utmp) into the container.
inside systemd-run --quiet --unit=listener -p DefaultDependencies=no "$python" -c '
import socket, time
ss = []
for a in ("127.0.0.2", "127.0.0.3"):
    s = socket.socket(); s.bind((a, 8080)); s.listen(64); ss.append(s)
time.sleep(3600)' || fail "cannot start the listener"
for _ in $(seq 50); do
	inside ss -ltn | grep -q 127.0.0.3:8080 && break
	sleep 0.1
done

out_of() { inside cat "$1" 2>/dev/null; }
# run_unit NAME OUTFILE PROPERTY... : a --user service that prints its control group and
# whether it reached 127.0.0.3 and 127.0.0.2 (in that order: the first is the one a deny
# refuses), then waits in its control group to be read. With GO=FILE it waits for FILE
# before it connects; with TRY_REMOVE=1 it then tries to unload and detach its own rules
# through the broker, and connects again.
run_unit() {
	local name=$1 out=$2
	shift 2
	as_user systemd-run --user --quiet --unit="$name" \
		-p StandardOutput=append:"$out" -p StandardError=append:"$out" \
		-E GO="${GO:-}" -E TRY_REMOVE="${TRY_REMOVE:-}" -E BPFCTL="$bpfctl" "$@" \
		/bin/bash -c 'sed -n "s/^0:://p" /proc/self/cgroup | sed "s/^/cgroup: /"
			if [ -n "$GO" ]; then
				while [ ! -e "$GO" ]; do sleep 0.05; done
			fi
			try() {
				for a in 127.0.0.3 127.0.0.2; do
					if timeout 2 bash -c "exec 3<>/dev/tcp/$a/8080" 2>/dev/null; then echo "connect $a: ok"
					else echo "connect $a: refused"; fi
				done
			}
			try
			if [ -n "$TRY_REMOVE" ]; then
				o=net-unit-$INVOCATION_ID-ip
				"$BPFCTL" unload $o 2>&1 | sed "s/^/unload: /"
				"$BPFCTL" detach $o/ip_egress 2>&1 | sed "s/^/detach: /"
				echo "again:"
				try
			fi
			echo done
			exec sleep 600' || return
	for _ in $(seq 100); do
		grep -qx done <<<"$(out_of "$out")" && return 0
		sleep 0.1
	done
	return 1
}
# wait_for FILE PATTERN: up to 5 s for the watcher to log a line (it follows signals).
wait_for() {
	for _ in $(seq 50); do
		grep -q "$2" <<<"$(out_of "$1")" && return
		sleep 0.1
	done
}
# Whether text has IPAddressDeny=any as the component spells it: both prefixes, in the
# order the manager's set gives them.
deny_any() { grep -qE 'IPAddressDeny=(0\.0\.0\.0/0 ::/0|::/0 0\.0\.0\.0/0)(;|$)' <<<"$1"; }
has() { # description file expected-substring
	grep -qF -- "$3" <<<"$(out_of "$2")" || fail "$1: no \"$3\" in $2: $(out_of "$2")"
}

# --- 1. without the component: accepted, shown, not enforced ---
run_unit net-without.service $ulog/without.out -p IPAddressDeny=any ||
	fail "systemd-run --user -p IPAddressDeny=any failed"
shown=$(as_user systemctl --user show -p IPAddressDeny --value net-without.service)
case $shown in *0.0.0.0/0*) ;; *) fail "the user manager does not show IPAddressDeny=any: $shown" ;; esac
has "without the component, IPAddressDeny=any is ignored" $ulog/without.out "connect 127.0.0.2: ok"
# What the component reads for that unit.
read_out=$(as_user "$user_net" show net-without.service 2>&1) || fail "show: $read_out"
deny_any "$(grep -x 'setting: .*' <<<"$read_out")" ||
	fail "show does not read IPAddressDeny=any: $read_out"
want_cg=$(sed -n 's/^cgroup: //p' <<<"$(out_of $ulog/without.out)")
grep -qxF "cgroup: /sys/fs/cgroup$want_cg" <<<"$read_out" ||
	fail "show's control group is not the unit's ($want_cg): $read_out"
as_user systemctl --user stop net-without.service
# Every setting, read back in unit-file syntax as the settings parser takes it.
run_unit net-all.service $ulog/all.out -p IPAccounting=yes -p IPAddressAllow=10.0.0.0/8 \
	-p IPAddressAllow=fe80::1 -p RestrictNetworkInterfaces="~lo veth0" \
	-p SocketBindAllow=ipv6:udp:1024-2047 -p SocketBindDeny=tcp:22 -p SocketBindDeny=any ||
	fail "systemd-run --user with every setting failed"
read_out=$(as_user "$user_net" show net-all.service 2>&1) || fail "show: $read_out"
want="setting: IPAccounting=yes
setting: IPAddressAllow=10.0.0.0/8 fe80::1/128
setting: RestrictNetworkInterfaces=~lo veth0
setting: SocketBindAllow=ipv6:udp:1024-2047
setting: SocketBindDeny=tcp:22
setting: SocketBindDeny=any"
got=$(grep '^setting: ' <<<"$read_out")
# The manager keeps addresses, names and rules in sets and lists of its own order, and
# sends properties in its own: compare sorted.
sorted() { sed 's/=\(~\?\)/=\1 /' | while read -r k v; do
	echo "$k $(tr ' ' '\n' <<<"$v" | sort | tr '\n' ' ')"; done | sort; }
[ "$(sorted <<<"$got")" = "$(sorted <<<"$want")" ] || fail "show read: $got; want: $want"
as_user systemctl --user stop net-all.service

# --- 2. the watcher, enabled for every user as the README says ---
inside cp "$BUILD_DIR/systemd/user/bpfbroker-user-net-build.service" \
	/run/systemd/user/bpfbroker-user-net.service
inside mkdir -p /run/systemd/user/bpfbroker-user-net.service.d
inside sh -c "printf '[Service]\nStandardError=append:$ulog/watch.log\n' \
	>/run/systemd/user/bpfbroker-user-net.service.d/test.conf"
inside systemctl --global --runtime enable bpfbroker-user-net.service ||
	fail "systemctl --global enable bpfbroker-user-net.service"
inside systemctl restart "user@$uid.service" || fail "restarting the user manager"
as_user systemctl --user is-active -q bpfbroker-user-net.service ||
	fail "the watcher does not run: $(as_user systemctl --user status bpfbroker-user-net.service 2>&1)"
has "the watcher started" $ulog/watch.log "watching the user manager's units"

# objects_of INVOCATION: the user's named objects and the broker's pins for it (none: "").
objects_of() {
	[ -n "$1" ] || { echo "(no invocation id)"; return; }
	{ as_user "$bpfctl" list 2>&1; inside find /sys/fs/bpf -name "*$1*"; } | grep -- "$1"
}
# The watcher alone: the unit waits until it has applied (it has a window: README).
GO=$ulog/watched.go TRY_REMOVE=1 run_unit net-watched.service $ulog/watched.out \
	-p IPAddressDeny=any -p IPAddressAllow=127.0.0.2 &
runner=$!
for _ in $(seq 50); do
	grep -q "^cgroup: " <<<"$(out_of $ulog/watched.out)" && break
	sleep 0.1
done
want_cg=$(sed -n 's/^cgroup: //p' <<<"$(out_of $ulog/watched.out)")
[ -n "$want_cg" ] || fail "the watched unit did not report its control group"
wait_for $ulog/watch.log "net-watched.service: applied\|net-watched.service: cannot"
inside touch $ulog/watched.go
wait $runner || fail "systemd-run --user (watched) failed: $(out_of $ulog/watched.out)"
has "the watcher saw the unit start, in its control group" $ulog/watch.log \
	"net-watched.service: applied to /sys/fs/cgroup$want_cg "
deny_any "$(grep "net-watched.service: applied" <<<"$(out_of $ulog/watch.log)")" ||
	fail "the watcher did not apply IPAddressDeny=any: $(out_of $ulog/watch.log)"
has "the watcher read IPAddressAllow=" $ulog/watch.log "IPAddressAllow=127.0.0.2/32"
watched=$(out_of $ulog/watched.out)
[ "$(sed -n '/^connect/p' <<<"$watched" | head -2)" = "connect 127.0.0.3: refused
connect 127.0.0.2: ok" ] || fail "the watcher's IPAddressDeny=any + IPAddressAllow=127.0.0.2: $watched"
# The unit's own processes (same uid) cannot take their rules away: protected links.
grep -q '^unload: .*confines your own cgroup' <<<"$watched" ||
	fail "the unit's own process could unload its rules (or failed otherwise): $watched"
grep -q '^detach: .*confines your own cgroup' <<<"$watched" ||
	fail "the unit's own process could detach its rules (or failed otherwise): $watched"
[ "$(sed -n '/^again:/,$p' <<<"$watched" | grep '^connect')" = "connect 127.0.0.3: refused
connect 127.0.0.2: ok" ] || fail "the rules changed after the unit's tries to remove them: $watched"
watched_id=$(as_user systemctl --user show -p InvocationID --value net-watched.service)
[ -n "$(objects_of "$watched_id")" ] || fail "no objects named after invocation $watched_id"
# IPAccounting= per unit: what the ip object let through (the connects to 127.0.0.2).
acct=$(as_user "$bpfctl" net show "unit-$watched_id" 2>&1)
grep -qE '^IP traffic sent: [1-9][0-9]* bytes, [1-9][0-9]* packets$' <<<"$acct" ||
	fail "bpfctl net show unit-$watched_id: $acct"
# A daemon-reload (what a user runs after editing any unit file) leaves running units'
# rules in place: while it reloads, the manager frees every unit and says UnitRemoved for
# each, and the watcher must not take that for the unit's end. Checked with a process of
# the user's moved into the unit's control group (by root: the move needs the common
# ancestor's cgroup.procs), after the reload.
as_user systemctl --user daemon-reload || fail "daemon-reload of the user manager"
in_watched() {
	inside sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh \
		"/sys/fs/cgroup$want_cg" setpriv --reuid=$uid --regid=$uid --clear-groups -- "$@"
}
# The watcher sees the reload's UnitRemoved signals some time after: watch for 5 s.
for _ in $(seq 50); do
	grep -q "net-watched.service: removed" <<<"$(out_of $ulog/watch.log)" &&
		fail "a daemon-reload removed the running net-watched's rules: $(out_of $ulog/watch.log)"
	sleep 0.1
done
[ -n "$(objects_of "$watched_id")" ] || fail "after a daemon-reload, net-watched's objects are gone"
in_watched timeout 2 bash -c 'exec 3<>/dev/tcp/127.0.0.3/8080' 2>/dev/null &&
	fail "after a daemon-reload, net-watched's cgroup reaches 127.0.0.3"
in_watched timeout 2 bash -c 'exec 3<>/dev/tcp/127.0.0.2/8080' ||
	fail "after a daemon-reload, net-watched's cgroup does not reach 127.0.0.2"
as_user systemctl --user stop net-watched.service
wait_for $ulog/watch.log "net-watched.service: removed"
has "the watcher saw the unit stop" $ulog/watch.log \
	"net-watched.service: removed from /sys/fs/cgroup$want_cg "
left=$(objects_of "$watched_id")
[ -z "$left" ] || fail "after the unit stopped, left: $left"
# A unit without network settings is left alone.
run_unit net-none.service $ulog/none.out || fail "systemd-run --user (no settings) failed"
as_user systemctl --user stop net-none.service
grep -q "net-none" <<<"$(out_of $ulog/watch.log)" && fail "the watcher acted on a unit without settings"

# --- parent slices, combined as systemd combines them: a slice's IPAddressAllow= and
# IPAddressDeny= are not applied to the slice but added to each unit's below it, so a unit's
# own IPAddressAllow= opens what its slice's IPAddressDeny=any closes. ---
inside sh -c "printf '[Slice]\nIPAddressDeny=any\n' >/run/systemd/user/sandbox.slice"
inside sh -c "printf '[Slice]\nIPAddressAllow=127.0.0.2\n' >/run/systemd/user/sandbox-inner.slice"
as_user systemctl --user daemon-reload || fail "daemon-reload of the user manager (slices)"
# any, as the component spells it (either order), from a slice.
deny_any_from() { grep -qE "IPAddressDeny=(0\.0\.0\.0/0 ::/0|::/0 0\.0\.0\.0/0) \(from $1\)" <<<"$2"; }
# No settings of its own: the watcher applies the slice's (the unit waits for it).
GO=$ulog/slice-bare.go run_unit net-slice-bare.service $ulog/slice-bare.out \
	-p Slice=sandbox.slice &
runner=$!
wait_for $ulog/watch.log "net-slice-bare.service: applied\|net-slice-bare.service: cannot"
inside touch $ulog/slice-bare.go
wait $runner || fail "systemd-run --user (in sandbox.slice) failed: $(out_of $ulog/slice-bare.out)"
deny_any_from sandbox.slice "$(grep "net-slice-bare.service: applied" <<<"$(out_of $ulog/watch.log)")" ||
	fail "the watcher did not apply sandbox.slice's IPAddressDeny=any to a unit in it: $(out_of $ulog/watch.log)"
[ "$(sed -n '/^connect/p' <<<"$(out_of $ulog/slice-bare.out)" | head -2)" = "connect 127.0.0.3: refused
connect 127.0.0.2: refused" ] || fail "a unit in a slice with IPAddressDeny=any: $(out_of $ulog/slice-bare.out)"
read_out=$(as_user "$user_net" show net-slice-bare.service 2>&1) || fail "show: $read_out"
deny_any_from sandbox.slice "$(grep -x 'setting: .*' <<<"$read_out")" ||
	fail "show does not mark the slice's IPAddressDeny=any as the slice's: $read_out"
# The slice itself: no access control (it has no other setting, so nothing at all).
read_out=$(as_user "$user_net" show sandbox.slice 2>&1) || fail "show sandbox.slice: $read_out"
grep -q '^setting: ' <<<"$read_out" && fail "the slice keeps settings of its own: $read_out"
grep -qE '^for its units: IPAddressDeny=' <<<"$read_out" ||
	fail "show sandbox.slice does not say its IPAddressDeny= is for its units: $read_out"
slice_id=$(as_user systemctl --user show -p InvocationID --value sandbox.slice)
[ -n "$slice_id" ] || fail "sandbox.slice has no invocation id"
left=$(objects_of "$slice_id")
[ -z "$left" ] || fail "sandbox.slice got objects of its own: $left"
grep -q "sandbox.slice: applied" <<<"$(out_of $ulog/watch.log)" &&
	fail "the watcher applied sandbox.slice's lists to the slice: $(out_of $ulog/watch.log)"
as_user systemctl --user stop net-slice-bare.service

# --- 3. the ExecStartPre= drop-in: applied before the main process runs ---
inside mkdir -p /run/systemd/user/service.d
inside cp "$BUILD_DIR/systemd/user/bpfbroker-user-net-build.conf" \
	/run/systemd/user/service.d/bpfbroker-user-net.conf
as_user systemctl --user daemon-reload || fail "daemon-reload of the user manager"
TRY_REMOVE=1 run_unit net-pre.service $ulog/pre.out -p IPAddressDeny=any \
	-p IPAddressAllow=127.0.0.2 ||
	fail "systemd-run --user with the drop-in failed: $(out_of $ulog/pre.out)"
pre=$(out_of $ulog/pre.out)
want_cg=$(sed -n 's/^cgroup: //p' <<<"$pre")
[ "$(head -1 <<<"$pre")" = \
	"net-pre.service: bpfbroker-user-net.service applied its network settings to /sys/fs/cgroup$want_cg" ] ||
	fail "apply-self did not have the settings applied before the main process ran: $pre"
deny_any "$(grep "net-pre.service: applied to /sys/fs/cgroup$want_cg " <<<"$(out_of $ulog/watch.log)")" ||
	fail "the watcher did not apply net-pre's IPAddressDeny=any: $(out_of $ulog/watch.log)"
# No window: the main process's very first connect is refused already.
[ "$(sed -n '/^connect/p' <<<"$pre" | head -2)" = "connect 127.0.0.3: refused
connect 127.0.0.2: ok" ] || fail "with the drop-in, the first connects: $pre"
grep -q '^unload: .*confines your own cgroup' <<<"$pre" ||
	fail "with the drop-in, the unit's own process could unload its rules: $pre"
pre_id=$(as_user systemctl --user show -p InvocationID --value net-pre.service)
as_user systemctl --user stop net-pre.service
wait_for $ulog/watch.log "net-pre.service: removed"
left=$(objects_of "$pre_id")
[ -z "$left" ] || fail "after net-pre stopped, left: $left"
# A unit without settings starts as before (apply-self exits 0 at once, saying nothing).
run_unit net-pre-none.service $ulog/pre-none.out || fail "a unit without settings failed with the drop-in"
has "a unit without settings, with the drop-in" $ulog/pre-none.out "connect 127.0.0.2: ok"
grep -q "applied" <<<"$(out_of $ulog/pre-none.out)" && fail "apply-self acted on a unit without settings"
as_user systemctl --user stop net-pre-none.service
# In sandbox.slice (IPAddressDeny=any), with IPAddressAllow=127.0.0.2 of its own: the union
# lets 127.0.0.2 through, applied before the main process runs.
run_unit net-slice-allow.service $ulog/slice-allow.out -p Slice=sandbox.slice \
	-p IPAddressAllow=127.0.0.2 || fail "systemd-run --user (slice, allow) failed: $(out_of $ulog/slice-allow.out)"
got=$(out_of $ulog/slice-allow.out)
grep -q "^net-slice-allow.service: bpfbroker-user-net.service applied its network settings" <<<"$got" ||
	fail "apply-self did not have the slice's settings applied: $got"
[ "$(sed -n '/^connect/p' <<<"$got" | head -2)" = "connect 127.0.0.3: refused
connect 127.0.0.2: ok" ] || fail "IPAddressAllow=127.0.0.2 in a slice with IPAddressDeny=any: $got"
as_user systemctl --user stop net-slice-allow.service
# Two levels up: sandbox-inner.slice (IPAddressAllow=127.0.0.2) in sandbox.slice
# (IPAddressDeny=any), a unit with nothing of its own, started through apply-self.
run_unit net-slice-inner.service $ulog/slice-inner.out -p Slice=sandbox-inner.slice ||
	fail "systemd-run --user (inner slice) failed: $(out_of $ulog/slice-inner.out)"
got=$(out_of $ulog/slice-inner.out)
[ "$(sed -n '/^connect/p' <<<"$got" | head -2)" = "connect 127.0.0.3: refused
connect 127.0.0.2: ok" ] || fail "a unit in sandbox-inner.slice in sandbox.slice: $got"
line=$(grep "net-slice-inner.service: applied" <<<"$(out_of $ulog/watch.log)")
grep -qF "IPAddressAllow=127.0.0.2/32 (from sandbox-inner.slice)" <<<"$line" && deny_any_from sandbox.slice "$line" ||
	fail "the watcher did not combine both slices' lists: $line"
as_user systemctl --user stop net-slice-inner.service

# The watcher's socket takes requests from its own user only (the runtime directory is
# theirs, and it checks the peer's uid), and applies only for the asking process's own unit
# and invocation (read from the manager by the peer's pid, never taken from the request).
ask='import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("connect:", e.strerror); sys.exit()
s.send(("apply " + sys.argv[2]).encode())
print("answer:", s.recv(1024).decode())'
sock=/run/user/$uid/bpfbroker-user-net.sock
got=$(inside setpriv --reuid=65533 --regid=65533 --clear-groups -- $python -c "$ask" $sock 0123456789abcdef0123456789abcdef 2>&1)
[ "$got" = "connect: Permission denied" ] || fail "another uid reached the watcher's socket: $got"
got=$(as_user $python -c "$ask" $sock 0123456789abcdef0123456789abcdef 2>&1)
case $got in "answer: "[1-9]*" bpfbroker-user-net: cannot read the unit of pid"*) ;;
*) fail "a process outside the user's units was answered: $got" ;; esac
got=$(as_user systemd-run --user --quiet --wait --pipe -p IPAddressDeny=any \
	$python -c "$ask" $sock 0123456789abcdef0123456789abcdef 2>&1)
case $got in *"answer: 116 bpfbroker-user-net: invocation 0123456789abcdef0123456789abcdef of pid "*) ;;
*) fail "a request for an invocation not the asker's was not refused (ESTALE): $got" ;; esac

# A connection that never sends is closed after the watcher's deadline (10 s), and does
# not hold off a request on another connection meanwhile.
silent='import socket, sys, time
def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect(sys.argv[1]); return s
silent = conn(); start = time.monotonic()
other = conn(); other.settimeout(5); other.send(b"apply 0123456789abcdef0123456789abcdef")
try:
    print("other answered:", other.recv(1024) != b"")
except socket.timeout:
    print("other: no answer in 5 s")
silent.settimeout(20)
try:
    print("silent closed:", silent.recv(1024) == b"", "after", round(time.monotonic() - start), "s")
except socket.timeout:
    print("silent: still open after 20 s")'
got=$(as_user $python -c "$silent" $sock 2>&1)
grep -qx "other answered: True" <<<"$got" || fail "a silent connection held off another request: $got"
grep -qxE "silent closed: True after (9|10|11|12) s" <<<"$got" ||
	fail "a connection that sends nothing was not closed after 10 s: $got"

# Garbage, a message over the watcher's bound (it reads the first 1023 bytes: "apply " and
# an id of a's, no invocation's, answered as any unknown id is), and 64 idle connections (its cap: the next
# one waits for the first idle one's deadline, 10 s): it answers each (or drops it) and
# stays up.
hostile='import socket, sys, time
p = sys.argv[1]
def ask(data):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect(p); s.send(data)
    s.settimeout(20)
    try:
        return s.recv(1024).decode(errors="replace")
    except OSError as e:
        return "no answer: " + str(e)
print("garbage:", ask(b"\x00\xffnonsense"))
print("huge:", ask(b"apply " + b"a" * 70000))
idle = []
for _ in range(64):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect(p); idle.append(s)
print("after idle:", ask(b"apply 0123456789abcdef0123456789abcdef"))'
got=$(as_user $python -c "$hostile" $sock 2>&1)
grep -q '^garbage: 22 unknown request' <<<"$got" || fail "the watcher's answer to garbage: $got"
grep -qE '^huge: [1-9][0-9]* bpfbroker-user-net: (invocation a{900,}|cannot read the unit of pid )' \
	<<<"$got" || fail "the watcher and a huge message: $got"
grep -q '^after idle: [1-9][0-9]* bpfbroker-user-net: ' <<<"$got" ||
	fail "the watcher did not answer after idle connections: $got"
as_user systemctl --user is-active -q bpfbroker-user-net.service ||
	fail "the watcher did not survive hostile requests: $got"

# --- 4. a unit that stops while the watcher is down: cleaned up when it is back ---
run_unit net-orphan.service $ulog/orphan.out -p IPAddressDeny=any ||
	fail "systemd-run --user (orphan) failed: $(out_of $ulog/orphan.out)"
orphan_id=$(as_user systemctl --user show -p InvocationID --value net-orphan.service)
[ -n "$(objects_of "$orphan_id")" ] || fail "net-orphan has no objects"
as_user systemctl --user stop bpfbroker-user-net.service
as_user systemctl --user stop net-orphan.service
[ -n "$(objects_of "$orphan_id")" ] || fail "net-orphan's objects went without the watcher"
as_user systemctl --user start bpfbroker-user-net.service || fail "restarting the watcher"
left=$(objects_of "$orphan_id")
[ -z "$left" ] || fail "the restarted watcher left net-orphan's objects: $left"

# --- begin: bpfctl net show --unit and net list (a unit's IPAccounting= counts) ---
# The drop-in (3.) is still in place: a unit's objects are there before its main process runs.
run_unit net-acct.service $ulog/acct.out -p IPAccounting=yes ||
	fail "systemd-run --user -p IPAccounting=yes failed: $(out_of $ulog/acct.out)"
acct_id=$(as_user systemctl --user show -p InvocationID --value net-acct.service)
acct=$(as_user "$bpfctl" net show --unit net-acct.service 2>&1) ||
	fail "bpfctl net show --unit net-acct.service: $acct"
grep -qx "Unit: net-acct.service" <<<"$acct" && grep -qx "Tag: unit-$acct_id" <<<"$acct" ||
	fail "bpfctl net show --unit net-acct.service does not name the unit and its tag: $acct"
grep -qE '^IP traffic sent: [1-9][0-9]* bytes, [1-9][0-9]* packets$' <<<"$acct" ||
	fail "bpfctl net show --unit net-acct.service counted nothing: $acct"
# "net-acct" is net-acct.service, as systemctl takes it; -j is JSON.
acct=$(as_user "$bpfctl" -j net show --unit net-acct 2>&1)
$python -c 'import json, sys
t = json.loads(sys.argv[1])
assert t["unit"] == "net-acct.service" and t["tag"] == "unit-" + sys.argv[2], t
assert "ip" in t["objects"] and t["egress"]["bytes"] > 0 and t["egress"]["packets"] > 0, t' \
	"$acct" "$acct_id" || fail "bpfctl -j net show --unit net-acct: $acct"
list=$(as_user "$bpfctl" net list 2>&1) || fail "bpfctl net list: $list"
grep -qE "^unit-$acct_id +net-acct\.service +ip +[0-9]+ +[0-9]+ +[1-9][0-9]* +[1-9][0-9]*$" \
	<<<"$list" || fail "bpfctl net list has no line for net-acct.service with its counts: $list"
acct=$(as_user "$bpfctl" -j net list 2>&1)
$python -c 'import json, sys
ts = [t for t in json.loads(sys.argv[1])["tags"] if t["tag"] == "unit-" + sys.argv[2]]
assert len(ts) == 1 and ts[0]["unit"] == "net-acct.service" and ts[0]["egress"]["bytes"] > 0, ts' \
	"$acct" "$acct_id" || fail "bpfctl -j net list: $acct"
# Not loaded, without objects, not running: each said, with status 3.
show_unit_status() { # unit expected-message (said once: no D-Bus error printed before it)
	local got rc
	got=$(as_user "$bpfctl" net show --unit "$1" 2>&1)
	rc=$?
	[ $rc = 3 ] && grep -qF -- "$2" <<<"$got" && ! grep -qF "GetUnit" <<<"$got" ||
		fail "bpfctl net show --unit $1: status $rc (want 3), \"$got\" (want \"$2\")"
}
show_unit_status net-nosuch.service "net-nosuch.service is not loaded"
run_unit net-acct-none.service $ulog/acct-none.out || fail "a unit without settings failed"
show_unit_status net-acct-none.service "net-acct-none.service has no network objects"
as_user systemctl --user stop net-acct-none.service
as_user systemctl --user stop net-acct.service
show_unit_status net-acct.service "net-acct.service is not"
# --- end: bpfctl net show --unit and net list ---

# --- slices' own settings (SocketBindDeny=any here): in place before a unit in the slice
# runs, through apply-self (the drop-in of 3. is still in place), even for a unit with no
# settings of its own; app.slice, where user services go, enforced too: the watcher has a
# slice of its own. ---
got=$(as_user systemctl --user show -p Slice --value bpfbroker-user-net.service)
[ "$got" = bpfbroker-user-net.slice ] || fail "the watcher runs in $got, not bpfbroker-user-net.slice"
inside sh -c "printf '[Slice]\nSocketBindDeny=any\n' >/run/systemd/user/lockdown.slice"
inside sh -c "printf '[Slice]\nSocketBindDeny=any\n' >/run/systemd/user/lockup.slice"
as_user systemctl --user daemon-reload || fail "daemon-reload of the user manager (lockdown)"
# bind_unit NAME OUTFILE PROPERTY...: a service whose first action is a TCP bind.
bind_unit() {
	local name=$1 out=$2
	shift 2
	as_user systemd-run --user --quiet --unit="$name" \
		-p StandardOutput=append:"$out" -p StandardError=append:"$out" "$@" \
		$python -c 'import socket, time
s = socket.socket()
try:
    s.bind(("127.0.0.1", 0)); print("bind: ok", flush=True)
except OSError as e:
    print("bind:", e.strerror, flush=True)
time.sleep(600)'
}
bind_result() { # OUTFILE: its "bind: ..." line, once there
	for _ in $(seq 50); do
		grep -q '^bind: ' <<<"$(out_of "$1")" && break
		sleep 0.1
	done
	grep '^bind: ' <<<"$(out_of "$1")"
}
# The watcher down: a unit in a slice with settings of its own must not start.
as_user systemctl --user stop bpfbroker-user-net.service
got=$(as_user systemctl --user show -p Result -p ExecMainStatus bpfbroker-user-net.service)
[ "$got" = "Result=success
ExecMainStatus=0" ] || fail "the watcher, stopped, did not exit 0: $got"
bind_unit net-lockdown.service $ulog/lockdown.out -p Slice=lockdown.slice &&
	fail "a unit in a slice with SocketBindDeny=any started without the watcher: $(out_of $ulog/lockdown.out)"
grep -q '^bind: ' <<<"$(out_of $ulog/lockdown.out)" &&
	fail "the main process of a unit in lockdown.slice ran without the watcher: $(out_of $ulog/lockdown.out)"
as_user systemctl --user reset-failed net-lockdown.service 2>/dev/null
as_user systemctl --user start bpfbroker-user-net.service || fail "restarting the watcher (lockdown)"
# The watcher up: the slice's objects are there before the main process's first bind.
bind_unit net-lockup.service $ulog/lockup.out -p Slice=lockup.slice ||
	fail "a unit in lockup.slice did not start: $(out_of $ulog/lockup.out)"
got=$(bind_result $ulog/lockup.out)
[ "$got" = "bind: Operation not permitted" ] ||
	fail "a unit in a slice with SocketBindDeny=any, first bind: $got ($(out_of $ulog/lockup.out))"
as_user systemctl --user stop net-lockup.service
# app.slice: the watcher is not in it, so its settings are enforced and the watcher stays.
inside mkdir -p /run/systemd/user/app.slice.d
inside sh -c "printf '[Slice]\nSocketBindDeny=any\n' >/run/systemd/user/app.slice.d/test.conf"
as_user systemctl --user daemon-reload || fail "daemon-reload of the user manager (app.slice)"
bind_unit net-app.service $ulog/app.out -p Slice=app.slice ||
	fail "a unit in app.slice did not start: $(out_of $ulog/app.out)"
got=$(bind_result $ulog/app.out)
[ "$got" = "bind: Operation not permitted" ] ||
	fail "a unit in app.slice with SocketBindDeny=any, first bind: $got ($(out_of $ulog/app.out))"
as_user systemctl --user is-active -q bpfbroker-user-net.service ||
	fail "the watcher does not run after app.slice was enforced: $(out_of $ulog/watch.log)"
grep -q "app.slice: .*stopping it" <<<"$(out_of $ulog/watch.log)" &&
	fail "the watcher stopped app.slice: $(out_of $ulog/watch.log)"
as_user systemctl --user stop net-app.service
inside rm /run/systemd/user/app.slice.d/test.conf
as_user systemctl --user daemon-reload || fail "daemon-reload of the user manager (app.slice back)"
wait_for $ulog/watch.log "app.slice: removed"
has "app.slice's objects went with its setting" $ulog/watch.log "app.slice: removed"

# A daemon-reexec closes the manager's connections: the watcher exits non-zero and
# Restart=on-failure brings it back.
old=$(as_user systemctl --user show -p MainPID --value bpfbroker-user-net.service)
as_user systemctl --user daemon-reexec || fail "daemon-reexec of the user manager"
for _ in $(seq 100); do
	new=$(as_user systemctl --user show -p MainPID --value bpfbroker-user-net.service)
	[ "$new" != 0 ] && [ "$new" != "$old" ] &&
		as_user systemctl --user is-active -q bpfbroker-user-net.service && break
	sleep 0.1
done
[ "$new" != 0 ] && [ "$new" != "$old" ] ||
	fail "the watcher did not come back after a daemon-reexec: $(as_user systemctl --user status bpfbroker-user-net.service 2>&1)"

if [ "$failures" -gt 0 ]; then
	echo "--- watcher log ---" >&2
	out_of $ulog/watch.log >&2
	echo "--- user manager ---" >&2
	inside systemctl --no-pager status "user@$uid.service" >&2
	echo "$failures check(s) failed" >&2
	exit 1
fi
echo "--user units' network settings under systemd: all checks passed"
