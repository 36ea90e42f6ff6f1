#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `meson install` into a DESTDIR, and what it installed: the layout, the
# pkg-config file (validated, and a program compiled and run against the
# installed header and library), the man pages (formatted with warnings on,
# and checked against --help and the header), the units (systemd-analyze
# verify, and security --offline at exposure 2.0 or lower), the tmpfiles.d
# snippet, the per-user example unit, bpfbroker-user-net's user unit and drop-in, and the
# bash completion.
# meson test passes the build's directories in the environment (meson.build).
set -uo pipefail

: "${BUILD_DIR:?}" "${SRC_DIR:?}" "${PREFIX:?}" "${BINDIR:?}" "${SBINDIR:?}" "${LIBDIR:?}"
: "${INCLUDEDIR:?}" "${MANDIR:?}" "${DOCDIR:?}" "${EXAMPLEDIR:?}" "${UNITDIR:?}" "${WORKEREXE:?}"
: "${TMPFILESDIR:?}" "${BASHCOMPLETIONDIR:?}" "${CC:?}" "${SANITIZE:?}" "${OCIHOOK:?}" "${HOOKSDDIR:?}"
: "${USERUNITDIR:?}" "${PKGDATADIR:?}" "${USERNETEXE:?}"

failures=0
fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}
check() { # description command...
	local what=$1
	shift
	"$@" || fail "$what"
}

work=$(mktemp -d /tmp/bpfbroker-install-test-XXXXXX)
trap 'rm -rf "$work"' EXIT
D=$work/dest

# --- install ---
if ! meson install -C "$BUILD_DIR" --destdir "$D" --no-rebuild --quiet >"$work/install.log" 2>&1; then
	cat "$work/install.log" >&2
	echo "FAIL: meson install" >&2
	exit 1
fi

# --- layout ---
for f in "$BINDIR/bpfctl" "$SBINDIR/bpfbrokerd" "$WORKEREXE" "$EXAMPLEDIR/netmon" "$OCIHOOK" "$USERNETEXE"; do
	check "$f is not an installed executable" test -x "$D$f" -a -f "$D$f"
done
# The daemon execs its workers from where they are installed.
check "the installed bpfbrokerd does not look for its worker at $WORKEREXE" \
	grep -qaF "$WORKEREXE" "$D$SBINDIR/bpfbrokerd"
check "the installed worker links libsystemd (only the event loop needs it)" \
	bash -c "! ldd '$D$WORKEREXE' | grep -q libsystemd"
for f in "$LIBDIR/libbpfbroker.so" "$LIBDIR/libbpfbroker.so.1" "$LIBDIR/libbpfbroker.so.1.2.0" \
	"$LIBDIR/pkgconfig/libbpfbroker.pc" "$INCLUDEDIR/libbpfbroker.h" \
	"$UNITDIR/bpfbrokerd.service" "$UNITDIR/bpfbrokerd.socket" "$TMPFILESDIR/bpfbroker.conf" \
	"$BASHCOMPLETIONDIR/bpfctl" "$EXAMPLEDIR/netmon.bpf.o" \
	"$MANDIR/man8/bpfbrokerd.8" "$MANDIR/man1/bpfctl.1" "$MANDIR/man5/bpfbroker-policy.5" \
	"$MANDIR/man3/libbpfbroker.3" "$MANDIR/man8/bpfbroker-user-net.8" \
	"$MANDIR/man8/bpfbroker-oci-hook.8" \
	"$DOCDIR/README.md" "$DOCDIR/SECURITY.md" "$DOCDIR/POLICY.md" "$DOCDIR/HELPERS.md" \
	"$DOCDIR/PROTOCOL.md" "$DOCDIR/NAMED.md" "$DOCDIR/FLEET.md" \
	"$DOCDIR/examples/policy.d/50-example.json" "$DOCDIR/examples/netmon.service" \
	"$DOCDIR/examples/policy.d/60-rootless-containers.json" "$HOOKSDDIR/bpfbroker-devices.json" \
	"$DOCDIR/examples/policy.d/70-user-network.json" "$PKGDATADIR/objects/ip-firewall.bpf.o" \
	"$PKGDATADIR/objects/ip-firewall.json" "$PKGDATADIR/objects/restrict-ifaces.bpf.o" \
	"$PKGDATADIR/objects/restrict-ifaces.json" "$PKGDATADIR/objects/socket-bind.bpf.o" \
	"$PKGDATADIR/objects/socket-bind.json" \
	"$DOCDIR/examples/netmon.c" "$DOCDIR/examples/netmon.bpf.c" \
	"$USERUNITDIR/bpfbroker-user-net.service" "$PKGDATADIR/bpfbroker-user-net.conf"; do
	check "$f is not installed" test -f "$D$f"
done
# The policy directory is there and empty: installing grants nobody anything.
check "/etc/bpfbroker/policy.d is not an empty directory" \
	test -d "$D/etc/bpfbroker/policy.d" -a -z "$(ls -A "$D/etc/bpfbroker/policy.d" 2>/dev/null)"
# podman and CRI-O run the hook from where it is installed, at createRuntime and poststop.
check "the installed hooks.d file does not run $OCIHOOK" \
	grep -qF "\"path\": \"$OCIHOOK\"" "$D$HOOKSDDIR/bpfbroker-devices.json"
check "the installed hook is setuid or setgid" bash -c "! test -u '$D$OCIHOOK' -o -g '$D$OCIHOOK'"
# Nothing that is only for the tests or the benchmarks.
stray=$(find "$D" -type f \( -name 'test_*' -o -name 'bench*' -o -name '*.a' \))
check "installed test or bench files: $stray" test -z "$stray"
check "the installed unit does not start $SBINDIR/bpfbrokerd" \
	grep -qx "ExecStart=$SBINDIR/bpfbrokerd" "$D$UNITDIR/bpfbrokerd.service"
check "unsubstituted @...@ in the installed units" \
	bash -c "! grep -q '@[a-z]*@' '$D$UNITDIR/bpfbrokerd.service' '$D$DOCDIR/examples/netmon.service' \
		'$D$USERUNITDIR/bpfbroker-user-net.service' '$D$PKGDATADIR/bpfbroker-user-net.conf'"
# The watcher's unit and the drop-in run the installed bpfbroker-user-net.
check "the installed user unit does not run $USERNETEXE" \
	grep -qx "ExecStart=$USERNETEXE watch" "$D$USERUNITDIR/bpfbroker-user-net.service"
check "the installed drop-in does not run $USERNETEXE" \
	grep -qx "ExecStartPre=+$USERNETEXE apply-self" "$D$PKGDATADIR/bpfbroker-user-net.conf"

# The installed programs run (bpfctl from the installed library).
export LD_LIBRARY_PATH="$D$LIBDIR"
check "installed bpfbrokerd --help" bash -c "'$D$SBINDIR/bpfbrokerd' --help >/dev/null"
check "installed bpfctl --help" bash -c "'$D$BINDIR/bpfctl' --help >/dev/null"
check "installed bpfbroker-user-net --help" bash -c "'$D$USERNETEXE' --help >/dev/null"
check "installed bpfctl does not use the installed libbpfbroker" \
	bash -c "ldd '$D$BINDIR/bpfctl' | grep -q '$D$LIBDIR/libbpfbroker.so.1'"

# --- pkg-config, and a program built against what was installed ---
pc="$D$LIBDIR/pkgconfig/libbpfbroker.pc"
check "pkg-config --validate" pkg-config --validate "$pc"
# The .pc file names the real prefix; PKG_CONFIG_SYSROOT_DIR puts DESTDIR in front.
flags=$(PKG_CONFIG_PATH="$D$LIBDIR/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$D" \
	pkg-config --cflags --libs libbpfbroker) || fail "pkg-config --cflags --libs"
case $flags in
*"-I$D$INCLUDEDIR"*"-L$D$LIBDIR"*"-lbpfbroker"*) ;;
*) fail "pkg-config flags lack the installed paths: $flags" ;;
esac
cat >"$work/user.c" <<'EOF'
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <libbpfbroker.h>

int main(void)
{
	struct bpfbroker *b = NULL;
	int k = bpfbroker_connect("/nonexistent/bpfbroker.sock", &b);

	if (k != -ENOENT || b) {
		fprintf(stderr, "connect: %d\n", k);
		return 1;
	}
	if (strcmp(bpfbroker_access_to_string(BPFBROKER_ACCESS_RO), "ro") != 0)
		return 1;
	printf("ok\n");
	return 0;
}
EOF
san=()
[ "$SANITIZE" != none ] && san=("-fsanitize=$SANITIZE")
# shellcheck disable=SC2086 # flags are words
if "$CC" -std=c11 -Wall -Wextra -Werror "${san[@]}" "$work/user.c" -o "$work/user" $flags \
	2>"$work/cc.log"; then
	out=$("$work/user" 2>&1)
	check "a program linked against the installed library: $out" test "$out" = ok
else
	cat "$work/cc.log" >&2
	fail "cannot compile against the installed header and library"
fi

# --- man pages ---
export MANWIDTH=80 MANPAGER=cat
for page in man8/bpfbrokerd.8 man1/bpfctl.1 man5/bpfbroker-policy.5 man3/libbpfbroker.3 \
	man8/bpfbroker-user-net.8 man8/bpfbroker-oci-hook.8; do
	f="$D$MANDIR/$page"
	warnings=$(groff -t -man -ww -z "$f" 2>&1)
	check "groff warns about $page: $warnings" test -z "$warnings"
	text=$(man -l --warnings "$f" 2>"$work/man.err")
	check "man -l $page failed" test -n "$text"
	check "man -l warns about $page: $(cat "$work/man.err")" test ! -s "$work/man.err"
	long=$(awk 'length > 80' <<<"$text")
	check "$page has lines over 80 columns: $long" test -z "$long"
done
# Accurate to the code: every option and command the programs list is documented,
# and every function the header declares.
roff_has() { grep -qF -- "$(sed 's/-/\\-/g' <<<"$2")" "$1"; }
for opt in $("$D$SBINDIR/bpfbrokerd" --help | grep -oE -- '--[a-z-]+' | sort -u); do
	check "bpfbrokerd(8) lacks $opt" roff_has "$D$MANDIR/man8/bpfbrokerd.8" "$opt"
done
for word in $("$D$BINDIR/bpfctl" --help | grep -oE -- '--[a-z-]+' | sort -u) \
	$("$D$BINDIR/bpfctl" --help | sed -n '/^Commands/,/^Options/p' |
		grep -oE '^  (map )?[a-z-]+' | sed 's/^  //' | sort -u); do
	check "bpfctl(1) lacks $word" roff_has "$D$MANDIR/man1/bpfctl.1" "$word"
done
# Declarations only (lines that do not start a comment), not the usage comment.
for fn in $(grep -vE '^\s*(/?\*|//)' "$D$INCLUDEDIR/libbpfbroker.h" |
	grep -oE '\bbpfbroker_[a-z_]+\(' | tr -d '(' | sort -u); do
	check "libbpfbroker(3) lacks $fn" roff_has "$D$MANDIR/man3/libbpfbroker.3" "$fn"
done
for key in $(grep -oE '^\| `[a-z_]+`' "$SRC_DIR/policy/POLICY.md" | tr -d '|` ' | sort -u); do
	check "bpfbroker-policy(5) lacks $key" roff_has "$D$MANDIR/man5/bpfbroker-policy.5" "$key"
done
# bpfbroker-user-net's commands as its usage lists them (two spaces, the word).
for cmd in $("$D$USERNETEXE" --help | grep -oE '^  [a-z-]+' | sed 's/^  //' | sort -u); do
	check "bpfbroker-user-net(8) lacks $cmd" \
		roff_has "$D$MANDIR/man8/bpfbroker-user-net.8" ".B $cmd"
done
# The hook's annotations, stages and hooks.d file, as its source names them.
for word in $(grep -ohE '"io\.bpfbroker\.[a-z]+"' "$SRC_DIR/oci/hook/main.c" | tr -d '"' | sort -u) \
	createRuntime poststop bpfbroker-devices.json; do
	check "bpfbroker-oci-hook(8) lacks $word" \
		roff_has "$D$MANDIR/man8/bpfbroker-oci-hook.8" "$word"
done

# --- units ---
# verify: the units as installed, but with ExecStart in DESTDIR (verify wants the
# binary to exist), and MANPATH so that it finds the Documentation= pages.
units=$work/units
mkdir -p "$units"
sed "s|^ExecStart=/|ExecStart=$D/|" "$D$UNITDIR/bpfbrokerd.service" >"$units/bpfbrokerd.service"
cp "$D$UNITDIR/bpfbrokerd.socket" "$units/"
if ! out=$(MANPATH="$D$MANDIR" systemd-analyze verify "$units/bpfbrokerd.service" \
	"$units/bpfbrokerd.socket" 2>&1) || [ -n "$out" ]; then
	fail "systemd-analyze verify of the system units: $out"
fi
# The exposure level: the installed file as it is.
out=$(systemd-analyze security --offline=yes --threshold=20 --no-pager \
	"$D$UNITDIR/bpfbrokerd.service" 2>&1) || fail "systemd-analyze security: over 2.0"
level=$(sed -n 's/.*Overall exposure level for bpfbrokerd.service: \([0-9.]*\).*/\1/p' <<<"$out")
echo "exposure level of bpfbrokerd.service: ${level:-?}"
if [ -z "$level" ] || ! awk -v l="$level" 'BEGIN { exit !(l <= 2.0) }'; then
	fail "exposure level ${level:-unknown}, want 2.0 or lower: $out"
fi
# The per-user example, as a user unit.
sed "s| /| $D/|g; s|^ExecStart=/|ExecStart=$D/|" "$D$DOCDIR/examples/netmon.service" \
	>"$units/netmon.service"
mkdir -p "$work/xdg"
if ! out=$(XDG_RUNTIME_DIR="$work/xdg" MANPATH="$D$MANDIR" systemd-analyze verify --user \
	"$units/netmon.service" 2>&1) || [ -n "$out" ]; then
	fail "systemd-analyze verify --user of netmon.service: $out"
fi
# The network watcher's user unit, as the same.
sed "s|^ExecStart=/|ExecStart=$D/|" "$D$USERUNITDIR/bpfbroker-user-net.service" \
	>"$units/bpfbroker-user-net.service"
if ! out=$(XDG_RUNTIME_DIR="$work/xdg" MANPATH="$D$MANDIR" systemd-analyze verify --user \
	"$units/bpfbroker-user-net.service" 2>&1) || [ -n "$out" ]; then
	fail "systemd-analyze verify --user of bpfbroker-user-net.service: $out"
fi

# --- tmpfiles.d ---
root=$work/root
mkdir -p "$root/sys/fs/bpf"
if systemd-tmpfiles --create --root="$root" "$D$TMPFILESDIR/bpfbroker.conf" 2>"$work/tmpfiles.err"; then
	for d in run/bpfbroker/state:700 sys/fs/bpf/bpfbroker:700 run/bpfbroker:755; do
		check "tmpfiles made no ${d%:*} of mode ${d#*:} owned by root" \
			test "$(stat -c '%a %u' "$root/${d%:*}" 2>/dev/null)" = "${d#*:} 0"
	done
else
	fail "systemd-tmpfiles --create: $(cat "$work/tmpfiles.err")"
fi

# --- bash completion ---
complete_words() { # the words of a command line, the last one being completed
	bash -c '
		source "$0"
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		_bpfctl 2>/dev/null
		printf "%s\n" "${COMPREPLY[@]}"' "$D$BASHCOMPLETIONDIR/bpfctl" "$@" | sort | tr '\n' ' '
}
expect_completion() { # expected words... -- command line...
	local want=() got
	while [ "$1" != -- ]; do
		want+=("$1")
		shift
	done
	shift
	got=$(complete_words "$@")
	check "completing \"$*\": got \"$got\", want \"${want[*]} \"" test "$got" = "${want[*]} "
}
check "the completion does not register _bpfctl for bpfctl" \
	bash -c "source '$D$BASHCOMPLETIONDIR/bpfctl' && complete -p bpfctl | grep -q '_bpfctl'"
expect_completion check check-insns -- bpfctl che
expect_completion test-run -- bpfctl test
expect_completion load load-insns -- bpfctl loa
expect_completion --name -- bpfctl load-insns f --type cgroup_device --n
expect_completion cgroup_device -- bpfctl load-insns f --type cgroup_d
expect_completion ringbuf -- bpfctl ring
expect_completion --count -- bpfctl ringbuf --co
expect_completion --shared -- bpfctl list --sha
expect_completion --socket -- bpfctl --so
expect_completion delete dump lookup update -- bpfctl map ''
expect_completion cgroup raw_tracepoint tc tracepoint uprobe xdp -- bpfctl attach obj/prog ''
expect_completion egress ingress -- bpfctl attach obj/prog tc lo ''
check "completing an xdp interface does not offer lo" \
	grep -qw lo <<<"$(complete_words bpfctl attach obj/prog xdp l)"
expect_completion cgroup_inet4_connect -- bpfctl attach --attach-type cgroup_inet4_c

if [ "$failures" -gt 0 ]; then
	echo "$failures check(s) failed" >&2
	exit 1
fi
echo "install test: all checks passed"
