#!/usr/bin/env bash
# The whole test suite: unit and integration tests on the real kernel, once
# with warnings as errors and once more under AddressSanitizer and
# UndefinedBehaviorSanitizer; then the fuzz targets, for a bounded time.
# Run as root from the source tree. Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."

[ "$(id -u)" = 0 ] || { echo "test: run as root (integration tests start the daemon and switch uids)" >&2; exit 1; }
tools/deps.sh || exit 1

passed=0
failed=0
run_suite() { # build-dir meson-options...
	local dir=$1
	shift
	if [ -d "$dir" ]; then
		meson configure "$dir" "$@" >/dev/null || return 1
	else
		meson setup "$dir" "$@" >/dev/null || return 1
	fi
	ninja -C "$dir" || return 1
	meson test -C "$dir" --print-errorlogs
	local log="$dir/meson-logs/testlog.json"
	[ -f "$log" ] || return 1
	# grep -c exits 1 when it counts nothing; the counts are what matter.
	passed=$((passed + $(grep -c '"result": "OK"' "$log" || true)))
	failed=$((failed + $(grep -vc '"result": "OK"' "$log" || true)))
	# A program that skipped as a whole (exit 77) is failed too, unless allowed.
	if [ "${BPFBROKER_ALLOW_SKIPS:-0}" = 1 ]; then
		local whole
		whole=$(grep -c '"result": "SKIP"' "$log" || true)
		passed=$((passed + whole))
		failed=$((failed - whole))
	fi
	# A cmocka case that skips (a tool or sysctl missing) leaves its program
	# "OK": count such a program as failed, so a run that tested less shows.
	# BPFBROKER_ALLOW_SKIPS=1 accepts them on a machine that can't do better.
	local skipped
	skipped=$(grep '"result": "OK"' "$log" | grep -c 'SKIPPED \]' || true)
	if [ "$skipped" -gt 0 ]; then
		echo "test: $skipped test program(s) in $dir skipped cases (grep SKIPPED $log)" >&2
		if [ "${BPFBROKER_ALLOW_SKIPS:-0}" != 1 ]; then
			passed=$((passed - skipped))
			failed=$((failed + skipped))
		fi
	fi
	return 0
}

rc=0
run_suite build -Dwerror=true -Dwarning_level=2 || rc=1
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	run_suite build-sanitize -Dwerror=true -Dwarning_level=2 -Db_sanitize=address,undefined \
	-Db_lundef=false || rc=1
# Fuzz targets: each replays its seed corpus (meson test, suite fuzz), then
# fuzzes for a bounded time (BPFBROKER_FUZZ_SECONDS, default 15 s each).
# tools/fuzz.sh runs them longer.
if tools/fuzz.sh "${BPFBROKER_FUZZ_SECONDS:-15}"; then
	meson test -C build-fuzz --suite fuzz --no-rebuild --print-errorlogs >/dev/null || true
	log=build-fuzz/meson-logs/testlog.json
	if [ -f "$log" ]; then
		passed=$((passed + $(grep -c '"result": "OK"' "$log" || true)))
		failed=$((failed + $(grep -vc '"result": "OK"' "$log" || true)))
	fi
else
	failed=$((failed + 1))
	rc=1
fi
[ "$failed" = 0 ] || rc=1
echo "$passed passed, $failed failed"
exit $rc
