#!/usr/bin/env bash
# libbpfbroker exports its API and nothing else: every function declared in
# libbpfbroker.h, and no other symbol (client/libbpfbroker.sym). A helper the
# library links in (proto_*, common) that leaked out would become ABI.
#   test_exports.sh LIBRARY HEADER
set -euo pipefail
lib=$1 header=$2
exported=$(nm -D --defined-only "$lib" | awk '$2 != "A" {sub(/@.*/, "", $3); print $3}' | sort -u)
declared=$(grep -oE '\bbpfbroker_[a-z0-9_]+\(' "$header" | tr -d '(' | sort -u)
rc=0
others=$(grep -v '^bpfbroker_' <<<"$exported" || true)
if [ -n "$others" ]; then
	echo "exported beyond the API:" $others >&2
	rc=1
fi
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
if [ -n "$missing" ]; then
	echo "declared in $(basename "$header") but not exported:" $missing >&2
	rc=1
fi
extra=$(comm -13 <(echo "$declared") <(grep '^bpfbroker_' <<<"$exported"))
if [ -n "$extra" ]; then
	echo "exported but not declared in $(basename "$header"):" $extra >&2
	rc=1
fi
if [ $rc = 0 ]; then
	echo "$(wc -l <<<"$exported") functions exported, all of the API"
fi
exit $rc
