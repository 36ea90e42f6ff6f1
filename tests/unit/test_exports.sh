#!/usr/bin/env bash
# libbpfbroker exports its API and nothing else: every function declared in
# libbpfbroker.h, and no other symbol (client/libbpfbroker.sym). A helper the
# library links in (proto_*, common) that leaked out would become ABI.
# And the rest of client/ABI.md that a script can see: every function in a
# version node LIBBPFBROKER_<soname major>.<minor>, and no struct of the
# header that anyone indexes except the frozen elements of the opts' arrays.
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

# The soname's major and the version nodes go together: nodes start over
# at LIBBPFBROKER_<major>.0 when the soname changes.
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
major=${soname#libbpfbroker.so.}
if ! [[ $soname == libbpfbroker.so.* && $major =~ ^[0-9]+$ ]]; then
	echo "soname \"$soname\" is not libbpfbroker.so.MAJOR" >&2
	rc=1
fi
unversioned=$(nm -D --defined-only "$lib" | awk -v node="^LIBBPFBROKER_$major\\.[0-9]+$" \
	'$2 != "A" {n = split($3, v, "@+"); if (n < 2 || v[n] !~ node) print $3}')
if [ -n "$unversioned" ]; then
	echo "not in a node LIBBPFBROKER_$major.N of $soname:" $unversioned >&2
	rc=1
fi

# A struct field that points at structs is an array someone indexes with
# their own sizeof. The library's are handed out one at a time
# (bpfbroker_result_map_at()); a caller's array (const, in the opts) may
# only hold structs marked "Frozen", which never change.
arrays=$(awk '
	/^\/\*/ { comment = "" }
	/^(\/\*| \*)/ { comment = comment $0 }
	/^struct bpfbroker_[a-z_]+ \{/ {
		name = $2; inside = 1
		if (comment ~ /Frozen/) frozen[name] = 1
		next
	}
	/^};/ { inside = 0; comment = "" }
	inside && match($0, /(const )?struct bpfbroker_[a-z_]+ \*+ *[a-z_]+;/) {
		field = substr($0, RSTART, RLENGTH)
		split(field, w, /[ *;]+/)
		elem = w[1] == "const" ? w[3] : w[2]
		if (w[1] != "const") print name ": hands out an array of struct " elem
		else used[elem] = name
	}
	!inside && !/^(\/\*| \*)/ { comment = "" }
	END { for (e in used) if (!(e in frozen)) print used[e] ": takes an array of struct " e ", which is not marked Frozen" }
' "$header")
if [ -n "$arrays" ]; then
	echo "$arrays" >&2
	rc=1
fi

if [ $rc = 0 ]; then
	echo "$(wc -l <<<"$exported") functions exported, all of the API, in $soname's nodes;" \
		"no struct handed out as an array"
fi
exit $rc
