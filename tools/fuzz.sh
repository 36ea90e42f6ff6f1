#!/usr/bin/env bash
# Build the libFuzzer targets (tests/fuzz/) with clang and
# -fsanitize=fuzzer,address,undefined in build-fuzz/ (meson -Dfuzz=true), and
# run each for SECONDS (default 20) on a fresh copy of its seed corpus
# (tests/fuzz/corpus/<target>/). Exits non-zero if any target finds a crash,
# leak, sanitizer error or timeout, printing the saved input's path.
#
#   tools/fuzz.sh                 every target, 20 s each
#   tools/fuzz.sh 600             every target, 10 minutes each
#   tools/fuzz.sh 3600 fuzz_proto one target for an hour
#
# Longer or parallel campaigns: run a target directly, keeping its corpus,
# e.g. (4 processes, 8 hours, new inputs collected in build-fuzz/fuzz/policy):
#   mkdir -p build-fuzz/fuzz/policy
#   build-fuzz/tests/fuzz/fuzz_policy -fork=4 -max_total_time=28800 -timeout=10 \
#       -rss_limit_mb=2048 build-fuzz/fuzz/policy tests/fuzz/corpus/fuzz_policy
# (the first directory receives new inputs; minimise one into the seed corpus with
# -merge=1 tests/fuzz/corpus/fuzz_policy build-fuzz/fuzz/policy). Reproduce a crash
# by passing its file: build-fuzz/tests/fuzz/fuzz_proto path/to/crash-<sha1>.
# Extra libFuzzer flags for every target: FUZZ_ARGS="-fork=2 -max_len=8192" tools/fuzz.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-20}
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "usage: $0 [SECONDS] [TARGET...]" >&2; exit 2; }
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_proto fuzz_policy fuzz_inspect fuzz_elfsym fuzz_btffilter fuzz_proc_status
	fuzz_cgroup_path fuzz_jobmsg)
builddir=build-fuzz
workdir=$builddir/fuzz-run

# clang and its libFuzzer/sanitizer runtimes (Debian 12: clang, libclang-rt-14-dev).
have_runtime() {
	command -v clang >/dev/null &&
		[ -e "$(clang -print-file-name=libclang_rt.fuzzer-x86_64.a)" ] &&
		[ -e "$(clang -print-file-name=libclang_rt.asan-x86_64.a)" ]
}
if ! have_runtime; then
	echo "fuzz: installing clang and libclang-rt-14-dev"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		clang libclang-rt-14-dev >/dev/null
	have_runtime || { echo "fuzz: clang's libFuzzer runtime is still missing" >&2; exit 1; }
fi

if [ -f "$builddir/build.ninja" ]; then
	meson configure "$builddir" -Dfuzz=true >/dev/null
else
	meson setup "$builddir" -Dfuzz=true >/dev/null
fi
# Only the fuzz targets: the rest of the tree is built and tested by tools/test.sh.
# Quiet when it builds; its errors when it doesn't (set -e would end the script silently).
if ! out=$(ninja -C "$builddir" "${targets[@]/#/tests/fuzz/}" 2>&1); then
	printf '%s\n' "$out" | grep -v '^\[' >&2
	echo "fuzz: the fuzz targets do not build" >&2
	exit 1
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

failed=0
for t in "${targets[@]}"; do
	exe=$builddir/tests/fuzz/$t
	seeds=tests/fuzz/corpus/$t
	dir=$workdir/$t
	if [ ! -x "$exe" ] || [ ! -d "$seeds" ]; then
		echo "fuzz: unknown target $t" >&2
		exit 2
	fi
	rm -rf "$dir"
	mkdir -p "$dir/corpus" "$dir/artifacts"
	cp "$seeds"/* "$dir/corpus/"
	# shellcheck disable=SC2086 # FUZZ_ARGS is a list of flags
	if "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$dir/artifacts/" -print_final_stats=1 ${FUZZ_ARGS:-} \
		"$dir/corpus" >"$dir/log" 2>&1; then
		runs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1 runs in \2 s/p' "$dir/log")
		cov=$(grep -o 'cov: [0-9]* ft: [0-9]* corp: [0-9]*/[0-9a-zA-Z]*' "$dir/log" | tail -1)
		echo "fuzz: $t: ok, ${runs:-?}, $cov (log: $dir/log)"
	else
		failed=1
		echo "fuzz: $t: FAILED (log: $dir/log)"
		grep -E '^==[0-9]+==ERROR|SUMMARY|runtime error|^fd leak|deadly signal|ALARM' "$dir/log" | head -5 | sed 's/^/  /'
		for a in "$dir"/artifacts/*; do
			[ -e "$a" ] && echo "  crashing input: $a (reproduce: $exe $a)"
		done
	fi
done
exit $failed
