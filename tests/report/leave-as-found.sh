#!/bin/sh
# memtrace report leaves a trace's directory as it found it: a closed
# trace gets no -wal or -shm beside it, and a trace with its data still in
# the -wal of a program running, or copied without its -shm, is read whole
# and keeps its files. The one exception: a killed writer's trace (-wal
# and -shm beside it, no connection on it) is made one file, as the
# writer's close would have left it (report/read/trace-read.c, "the files
# beside it"; docs/trace-format.md).
#   leave-as-found.sh REPORT SQL-LOAD TESTS-SOURCE-DIR
set -eu

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
report=$(abs "$1")
sqlload=$(abs "$2")
src=$(abs "$3")
tmp=$(mktemp -d)
writer_pid=
trap '[ -z "$writer_pid" ] || kill "$writer_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$tmp"
failures=0

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# every entry of DIR, "." included: names, sizes, modes and times
listing() { ls -la --time-style=full-iso "$1" | grep -v ' \.\.$'; }
names() { ls -a "$1"; }

# read DIR/TRACE EVENTS: a JSON report of all EVENTS, nothing on stderr
read_all() {
	rc=0
	"$report" "$1" --format json >out 2>err || rc=$?
	if [ "$rc" -ne 0 ]; then
		fail "$1: exit status $rc: $(cat err)"
		return 0
	fi
	grep -q "\"events\": $2," out || fail "$1: not all $2 events read"
	[ ! -s err ] || fail "$1: warned: $(cat err)"
}

# same WHAT BEFORE AFTER
same() {
	if ! diff -u "$2" "$3" >diff; then
		fail "$1: the directory changed:"
		sed 's/^/    /' diff >&2
	fi
}

wal_trace() { # wal_trace DB: WAL mode, closed as the library closes it
	"$sqlload" "$1" "$src/golden/oom.sql"
	"$sqlload" "$1" wal.sql
}
echo 'PRAGMA journal_mode=WAL;' >wal.sql

# --- closed traces: nothing created, the listing byte for byte the same
for mode in wal rollback; do
	mkdir "$mode"
	if [ $mode = wal ]; then wal_trace $mode/t.db; else "$sqlload" $mode/t.db "$src/golden/oom.sql"; fi
	[ "$(names $mode)" = "$(printf '.\n..\nt.db')" ] || fail "$mode fixture: $(names $mode)"
	listing $mode >before
	read_all $mode/t.db 14
	"$report" $mode/t.db >/dev/null 2>&1 # the text report too
	listing $mode >after
	same "closed $mode trace" before after
done

# --- killed: data only in the -wal, the -shm stale: made one file -----
mkdir killed copied
"$sqlload" killed/t.db "$src/golden/oom.sql" --keep-wal
[ -s killed/t.db-wal ] && [ -e killed/t.db-shm ] || fail "killed fixture: $(names killed)"
cp killed/t.db killed/t.db-wal copied/ # for the next case
read_all killed/t.db 14
names killed >after-names
[ "$(cat after-names)" = "$(printf '.\n..\nt.db')" ] ||
	fail "killed writer's trace not made one file: $(cat after-names)"
# rollback-journal mode (file format bytes 18, 19): no reader makes sidecars
[ "$(od -An -tx1 -j18 -N2 killed/t.db | tr -d ' ')" = 0101 ] ||
	fail "killed writer's trace not in rollback-journal mode"
listing killed >before
read_all killed/t.db 14 # again: the same events, nothing changed
listing killed >after
same "killed writer's trace, read again" before after

# --- the -wal copied without its -shm: the -shm made to read it goes --
names copied >before
read_all copied/t.db 14
names copied >after
same "trace copied with its -wal only" before after

# --- a writer still running, its data in the -wal ---------------------
if command -v python3 >/dev/null; then
	mkdir live
	mkfifo go
	cat >writer.py <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA wal_autocheckpoint=0")
db.executescript(open(sys.argv[2]).read())
print("ready", flush=True)
sys.stdin.read()  # until told to close
db.close()
PY
	python3 writer.py live/t.db "$src/golden/oom.sql" <go >ready &
	writer_pid=$!
	exec 3>go
	while [ ! -s ready ]; do sleep 0.1; done
	[ -s live/t.db-wal ] || fail "live fixture: no data in the -wal"
	names live >before
	read_all live/t.db 14
	read_all live/t.db 14 # again: nothing the first read left in the way
	names live >after
	same "trace of a running writer" before after
	exec 3>&-
	wait "$writer_pid"
	writer_pid=
	# the writer closed it: SQLite folded the -wal in and removed both
	[ "$(names live)" = "$(printf '.\n..\nt.db')" ] ||
		fail "live: the writer did not close the trace alone: $(names live)"
fi

if [ "$failures" -ne 0 ]; then
	echo "$failures leave-as-found checks failed" >&2
	exit 1
fi
echo "all leave-as-found checks passed"
