#!/bin/sh
# The reporter says the same of a version-2 trace as of the version-1 trace
# it was made from: each trace given (SQL text, version 1) is rewritten by
# to-v2 (which checks that the view events gives back the version-1 rows)
# and both are rendered in every format and with the golden tests'
# options. The reports (and the warnings) may differ only in the schema
# version they name. So does the version-2 trace with its sites and frames
# numbered otherwise than from 1 in order (as the writer numbers them,
# which the reader looks up without a map).
#   v2-same.sh REPORT SQL-LOAD TO-V2 TRACE.sql...
set -eu

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
report=$(abs "$1")
sqlload=$(abs "$2")
tov2=$(abs "$3")
shift 3

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for sql in "$@"; do
	sql=$(abs "$sql")
	name=$(basename "$sql" .sql)
	mkdir -p "$tmp/v1/$name" "$tmp/v2/$name" "$tmp/sparse/$name"
	(cd "$tmp/v1/$name" && "$sqlload" trace.db "$sql")
	cp "$tmp/v1/$name/trace.db" "$tmp/v2/$name/trace.db"
	"$tov2" "$tmp/v2/$name/trace.db"
	cp "$tmp/v2/$name/trace.db" "$tmp/sparse/$name/trace.db"
	python3 - "$tmp/sparse/$name/trace.db" <<-'EOF'
		import sqlite3, sys
		c = sqlite3.connect(sys.argv[1])
		# id k becomes 10 k + 3, by way of its negative: an id may be
		# changed to one not yet changed
		c.executescript("""
		    UPDATE sites SET id = -(id * 10 + 3);
		    UPDATE sites SET id = -id;
		    UPDATE allocs SET site = site * 10 + 3;
		    UPDATE frees SET site = site * 10 + 3;
		    UPDATE frames SET id = -(id * 10 + 3);
		    UPDATE frames SET id = -id;
		    UPDATE stack_frames SET frame = frame * 10 + 3;
		""")
		c.close()
	EOF
	for args in "--format text" "--format json" "--format html" "--format folded" \
		"--format perfetto" "--format text --group-by python" "--format text --group-by op" \
		"--format text --group-by native" "--format text --group-by stack" \
		"--format json --at-mark checkpoint"; do
		for v in v1 v2 sparse; do
			# the same relative path: the trace's path is in the report;
			# a trace without the mark --at-mark names is refused
			# (exit 2), alike in each version
			: >"$tmp/$v/$name/out"
			rc=0
			(cd "$tmp/$v/$name" && "$report" trace.db $args -o out 2>err) || rc=$?
			if [ "$rc" -ne 0 ] && ! { [ "$rc" -eq 2 ] &&
				grep -q '^memtrace report: --at-mark checkpoint: trace.db has no' \
					"$tmp/$v/$name/err"; }; then
				echo "memtrace-report failed on the $v trace of $name ($args)" >&2
				status=1
			fi
			sed -e 's/schema [12],/schema N,/' \
			    -e 's/"schema_version": *[12]/"schema_version": N/' \
			    "$tmp/$v/$name/out" "$tmp/$v/$name/err" >"$tmp/$v/$name/out.cmp"
		done
		diff -u "$tmp/v1/$name/out.cmp" "$tmp/v2/$name/out.cmp" || {
			echo "FAIL: $name ($args): the version-2 trace reads differently" >&2
			status=1
		}
		diff -u "$tmp/v2/$name/out.cmp" "$tmp/sparse/$name/out.cmp" || {
			echo "FAIL: $name ($args): the trace numbered otherwise reads differently" >&2
			status=1
		}
	done
done
exit $status
