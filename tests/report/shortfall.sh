#!/bin/sh
# An OOM whose request and free memory print alike (96.0 MiB each) says
# them exactly and by how much it missed: golden/oom.sql with the request
# made 100,663,552 B and the free memory 100,659,712 B, 3.75 KiB short;
# then 3.75 KiB more free than asked (fragmentation), exact too. JSON's
# shortfall_bytes is the request less the free memory.
#   shortfall.sh REPORT SQL-LOAD TESTS-SOURCE-DIR
set -eu

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
report=$(abs "$1")
sqlload=$(abs "$2")
src=$(abs "$3")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
failures=0

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

has() { # has FILE TEXT
	grep -qF -- "$2" "$1" || { fail "$1 lacks '$2':"; sed 's/^/    /' "$1" >&2; }
}

# oom FREE: the golden OOM, 100,663,552 B asked, FREE bytes free
oom() {
	rm -f t.db
	"$sqlload" t.db "$src/golden/oom.sql"
	printf 'UPDATE events SET bytes = 100663552 WHERE seq = 9;\nUPDATE ooms SET device_free = %s WHERE seq = 9;\n' \
		"$1" >set.sql
	"$sqlload" t.db set.sql
	"$report" t.db --width 10000 >out.txt
	"$report" t.db --format json >out.json
}

oom 100659712
has out.txt 'OUT OF MEMORY: cudaMalloc of 96.0 MiB (100,663,552 B) failed at'
has out.txt 'device had 96.0 MiB (100,659,712 B) free of 1.0 GiB, short by 3.75 KiB;'
has out.json '"shortfall_bytes": 3840,'

oom 100667392
has out.txt 'device had 96.0 MiB (100,667,392 B) free of 1.0 GiB;'
has out.txt 'the device had 100,667,392 B free at the failure, more than the 100,663,552 B asked for'
has out.json '"shortfall_bytes": -3840,'

# rounding apart, the headline is as it was
oom 12582912
has out.txt 'OUT OF MEMORY: cudaMalloc of 96.0 MiB failed at'
has out.txt 'device had 12.0 MiB free of 1.0 GiB;'
has out.json '"shortfall_bytes": 88080640,'

[ "$failures" -eq 0 ] || exit 1
echo "all shortfall checks passed"
