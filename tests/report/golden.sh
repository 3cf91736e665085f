#!/bin/sh
# Golden test: build a trace from SQL text, render it, compare with diff -u.
#   golden.sh REPORT SQL-LOAD TRACE.sql EXPECTED FORMAT [REPORT-ARGS...]
# MEMTRACE_GOLDEN_UPDATE=1 rewrites EXPECTED instead (then review the diff).
set -eu

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
report=$(abs "$1")
sqlload=$(abs "$2")
sql=$(abs "$3")
expected=$(abs "$4")
format=$5
shift 5

# the text report's width is 100 columns unless the test says otherwise
unset COLUMNS
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
"$sqlload" trace.db "$sql"
# the trace path appears in the report: relative, so it is the same everywhere
"$report" trace.db --format "$format" "$@" >out 2>err || {
	echo "memtrace-report failed (exit $?):" >&2
	cat err >&2
	exit 1
}
if [ -n "${MEMTRACE_GOLDEN_UPDATE:-}" ]; then
	cp out "$expected"
	echo "updated $expected"
fi
diff -u "$expected" out
