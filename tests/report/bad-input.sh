#!/bin/sh
# Bad input must end in one clear line and the right exit status, never a
# crash: usage errors (2), unreadable or foreign files (1), damaged but
# readable traces (0, with what is missing shown as unknown).
#   bad-input.sh REPORT SQL-LOAD TESTS-SOURCE-DIR
set -eu

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
report=$(abs "$1")
sqlload=$(abs "$2")
src=$(abs "$3")
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
cd "$tmp"
failures=0

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# run WANT-RC STDERR-PATTERN ARGS...: a nonzero WANT-RC also requires
# exactly one line on stderr, prefixed "memtrace report: ".
run() {
	want=$1
	pattern=$2
	shift 2
	set +e
	"$report" "$@" >out 2>err
	rc=$?
	set -e
	if [ "$rc" -ne "$want" ]; then
		fail "memtrace-report $* exited $rc, expected $want"
		sed 's/^/    /' err >&2
		return
	fi
	if [ "$want" -ne 0 ]; then
		if [ "$(wc -l <err)" -ne 1 ] || ! grep -q '^memtrace report: ' err; then
			fail "memtrace-report $*: not one prefixed line on stderr:"
			sed 's/^/    /' err >&2
		fi
	fi
	if [ -n "$pattern" ] && ! grep -q -- "$pattern" err; then
		fail "memtrace-report $*: stderr lacks '$pattern':"
		sed 's/^/    /' err >&2
	fi
	return 0
}

json_ok() {
	if command -v python3 >/dev/null; then
		python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$1" ||
			fail "$1 is not valid JSON"
	fi
}

trace() { # trace DB SQLFILE-OR-TEXT
	rm -f "$1"
	"$sqlload" "$1" "$2"
}

# --- usage -------------------------------------------------------------
run 2 'no trace file given'
run 2 'unknown format' x.db --format xml
run 2 'top needs a number' x.db --top -1
run 2 'top needs a number' x.db --top lots
run 2 'unknown option' x.db --frobnicate
run 2 'option needs a value' x.db --top
run 2 'width needs a number of columns' x.db --width 0
run 2 'width needs a number of columns' x.db --width -3
run 2 'width needs a number of columns' x.db --width abc
run 2 'width needs a number of columns' x.db --width 80x
run 2 'width needs a number of columns' x.db --width 39
run 2 'width applies to --format text' x.db --format json --width 80
# several traces are the ranks of one job (compare-ranks.c): when none is readable,
# the first one's error (one that is: below)
run 1 'cannot open a.db' a.db b.db
run 0 '' --help
grep -q '^Usage: memtrace report TRACE' out || fail "--help prints no usage"
run 0 '' --version
grep -q '^memtrace report [0-9]' out || fail "--version prints no version"

# --- files that are not traces ----------------------------------------
run 1 'cannot open nonexistent.db: No such file or directory' nonexistent.db
mkdir adir
run 1 'is a directory' adir
echo "hello, I am text" >text.db
run 1 'not a SQLite database' text.db
: >empty.db
run 1 'is empty' empty.db
# killed while the library switched the new trace to WAL: a rollback
# journal beside it, an empty -wal
: >half.db
: >half.db-wal
printf 'journal' >half.db-journal
run 1 'was left half-created' half.db
# killed after SQLite created the journal, before it wrote to it
: >half-empty.db
: >half-empty.db-journal
run 1 'was left half-created' half-empty.db
printf 'SQLite format 3\000garbage garbage garbage' >header-only.db
run 1 '' header-only.db

trace good.db "$src/golden/oom.sql"
cp good.db v7.db
echo 'PRAGMA user_version = 7;' >v7.sql
"$sqlload" v7.db v7.sql
run 1 'has trace schema version 7, but this memtrace report reads versions 1 to 3' v7.db
cp good.db v0.db
echo 'PRAGMA user_version = 0;' >v0.sql
"$sqlload" v0.db v0.sql
run 1 'not a memtrace trace' v0.db

cp good.db noooms.db
echo 'DROP TABLE ooms;' >drop.sql
"$sqlload" noooms.db drop.sql
run 1 "table 'ooms' is missing" noooms.db

cp good.db nocol.db
cat >nocol.sql <<'SQL'
ALTER TABLE events RENAME TO old_events;
CREATE TABLE events(seq INTEGER PRIMARY KEY, time_ns INTEGER, kind INTEGER, api INTEGER);
SQL
"$sqlload" nocol.db nocol.sql
run 1 "cannot read table 'events'" nocol.db

# damaged files: any clean outcome, no crash
cp good.db truncated.db
truncate -s 6000 truncated.db
set +e
"$report" truncated.db >out 2>err
rc=$?
set -e
[ "$rc" -le 1 ] || fail "truncated trace: exit $rc"
cp good.db scribbled.db
dd if="$report" of=scribbled.db bs=1 skip=4096 seek=4200 count=6000 conv=notrunc 2>/dev/null
for format in text json html; do
	set +e
	"$report" scribbled.db --format $format >out 2>err
	rc=$?
	set -e
	[ "$rc" -le 1 ] || fail "scribbled trace ($format): exit $rc"
done

# --- output ------------------------------------------------------------
run 1 'cannot write the report to /nonexistent/dir/report.txt' good.db -o /nonexistent/dir/report.txt
run 0 '' good.db -o report.json --format json
json_ok report.json
[ ! -s out ] || fail "-o FILE also wrote to standard output"

# --- damaged but readable: dangling references, NULLs, wrong types -----
cat >dangling.sql <<'SQL'
INSERT INTO events VALUES (14, 1239000000, 1, 1, 4242, 0, 0, 4096, 1024, 1, 777, 0);
INSERT INTO stack_frames VALUES (6, 0, 999), (6, 1, 3);
INSERT INTO frames VALUES (8, 0, 1, 55, 16, NULL, NULL, NULL);
INSERT INTO stack_frames VALUES (7, 0, 8);
INSERT INTO events VALUES (15, 1240000000, 1, 1, 4242, 0, 0, 8192, 1024, 1, 6, 0);
INSERT INTO events VALUES (16, 1241000000, 1, 1, 4242, 0, 0, 12288, 1024, 1, 7, 0);
SQL
cp good.db dangling.db
"$sqlload" dangling.db dangling.sql
run 0 'is incomplete' dangling.db
grep -q 'stack 777 is not in the trace' out || fail "missing stack not shown"
run 0 'is incomplete' dangling.db --format json
json_ok out
grep -q '"missing_stacks": 1,' out || fail "missing stack not counted"
grep -q '"missing_frames": 1,' out || fail "missing frame not counted"
grep -q '"missing_modules": 1' out || fail "missing module not counted"
run 0 'is incomplete' dangling.db --format html

cat >hostile.sql <<'SQL'
PRAGMA user_version = 1;
CREATE TABLE meta(key, value);
CREATE TABLE apis(id, name);
CREATE TABLE modules(id, path, base, build_id);
CREATE TABLE frames(id, kind, ip, module, offset, function, file, line);
CREATE TABLE stack_frames(stack, depth, frame);
CREATE TABLE threads(id, name);
CREATE TABLE events(seq INTEGER PRIMARY KEY, time_ns, kind, api, thread, device, stream,
                    address, bytes, mem, stack, status);
CREATE TABLE ooms(seq, device_free, device_total);
INSERT INTO meta VALUES (NULL, 'x'), ('pid', NULL), ('end_monotonic_ns', 'soon'),
  ('cmdline', X'00ff'), ('end', 99), ('rank', '-1');
INSERT INTO apis VALUES (1, NULL), ('two', 'cudaFree'), (1, 'again');
INSERT INTO modules VALUES (1, NULL, NULL, 'zz'), (1, '/dup', 0, NULL),
  (2, '/etc/passwd', 0, NULL), (3, '/proc/self/exe', 0, 'notahexid'),
  (4, '/dev/zero', 0, NULL), (5, '.', 0, NULL), (6, '/', 0, '');
INSERT INTO frames VALUES (1, NULL, 'ip', 1, -5, NULL, NULL, -3),
  (2, 0, 0, 3, 9223372036854775807, 'f', 'file', 'line'),
  (3, 99, NULL, NULL, NULL, X'41', NULL, NULL),
  (4, 0, 1, 2, 100, NULL, NULL, NULL), (4, 0, 1, 2, 100, 'twice', NULL, NULL),
  (5, 0, 1, 4, 100, NULL, NULL, NULL), (6, 0, 1, 5, 1, NULL, NULL, NULL),
  (7, 0, 1, 6, -9223372036854775808, NULL, NULL, NULL);
INSERT INTO stack_frames VALUES (1, 0, 1), (1, 0, 2), (1, -1, 3), (1, 5, 4),
  (NULL, NULL, NULL), ('s', 'd', 'f'), (2, 0, 5), (2, 1, 6), (2, 2, 7), (2, 3, 2);
INSERT INTO threads VALUES (NULL, NULL);
INSERT INTO events VALUES
  (0, 'now', 1, 1, NULL, NULL, NULL, 4096, 9223372036854775807, 1, 1, NULL),
  (1, -100, 1, 1, NULL, NULL, NULL, 8192, 9223372036854775807, 2, 1, NULL),
  (2, 5, 3, 'x', NULL, NULL, NULL, NULL, -1, 1, 2, NULL),
  (3, 5, 3, 1, NULL, NULL, NULL, NULL, 10, 1, 1, NULL),
  (4, 6, 2, 1, NULL, NULL, NULL, -4096, NULL, NULL, NULL, NULL),
  (5, 7, 5, 1, NULL, NULL, NULL, 12345, NULL, NULL, NULL, NULL),
  (6, 8, 1, 1, NULL, NULL, NULL, -8192, 1e300, 3, 'stack', NULL),
  (7, 9, -1, 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (8, 10, 1, 1, NULL, NULL, NULL, 16384, 'many', 1, 9223372036854775807, NULL),
  (9, 11, 5, 1, NULL, NULL, NULL, 4096, NULL, NULL, NULL, NULL),
  (10, 12, 2, 1, NULL, NULL, NULL, 4096, NULL, NULL, NULL, NULL),
  (11, 13, 5, 1, NULL, NULL, NULL, 4096, NULL, NULL, NULL, NULL),
  (12, 14, 3, 1, NULL, NULL, NULL, NULL, 1, 1, -1, NULL);
INSERT INTO ooms VALUES (2, -1, NULL), (2, 5, 5), (3, 'x', 1e300), (NULL, NULL, NULL);
SQL
trace hostile.db hostile.sql
for format in text json html; do
	run 0 '' hostile.db --format $format
	cp out hostile.$format
done
json_ok hostile.json
if grep -q "$(printf '\033')" hostile.text; then fail "an escape character reached the text report"; fi

# the driver-API event kinds with nonsense in them: an old trace given the
# handle column and a devices table, then maps without handles or addresses,
# unmaps of nothing, errors with nothing to undo, pool events without
# pools, devices that cannot be, a VMM handle equal to a live pointer
cp good.db driver.db
cat >driver.sql <<'SQL'
ALTER TABLE events ADD COLUMN handle INTEGER;
CREATE TABLE devices(id, total_bytes, free_bytes_at_first_use, first_seq);
INSERT INTO devices VALUES (NULL, 'x', -5, NULL), (-1, 10, 10, 1), (99999, 1, 1, 1),
  (0, 9223372036854775807, NULL, 'q'), (0, 5, 5, 5), ('gpu', 1, 1, 1);
INSERT INTO events VALUES
  (14, 1239000001, 6, 1, 1, 0, 0, 4096, 100, 0, 1, 0, NULL),
  (15, 1239000002, 6, 1, 1, 0, 0, NULL, 100, 0, 1, 0, 5),
  (16, 1239000003, 7, 1, 1, 0, 0, 8192, 100, 0, 1, 0, NULL),
  (17, 1239000004, 8, 1, 1, 0, 0, NULL, 100, 0, 1, 0, NULL),
  (18, 1239000005, 8, 1, 1, 0, 0, 12288, 100, 0, 1, 0, NULL),
  (19, 1239000006, 9, 1, 1, 0, 0, 0, 0, 0, 1, 0, NULL),
  (20, 1239000007, 10, 1, 1, 0, 0, 0, 0, 0, 1, 0, 'x'),
  (21, 1239000008, 11, 1, 1, 0, 0, 0, -1, 0, 1, 0, -1),
  (22, 1239000009, 12, 1, 1, -7, 0, 0, -1, 0, 0, 0, NULL),
  (23, 1239000010, 12, 1, 1, 'gpu', 0, 0, 5, 0, 0, 0, -5),
  (24, 1239000011, 1, 1, 1, 0, 0, 139637976727552, 2097152, 5, 1, 0, NULL),
  (25, 1239000012, 6, 1, 1, 0, 0, 16384, 2097152, 0, 2, 0, 139637976727552),
  (26, 1239000013, 6, 1, 1, 0, 0, 16384, 2097152, 0, 3, 0, 139637976727552),
  (27, 1239000014, 2, 1, 1, 0, 0, 139637976727552, NULL, NULL, 0, 0, NULL),
  (28, 1239000015, 2, 1, 1, 0, 0, 139637976727552, NULL, NULL, 0, 0, NULL),
  (29, 1239000016, 7, 1, 1, 0, 0, 16384, 0, 0, 0, 0, NULL),
  (30, 1239000017, 8, 1, 1, 0, 0, 16384, 0, 0, 0, 0, NULL),
  (31, 1239000018, 7, 1, 1, 0, 0, 16384, 0, 0, 0, 0, NULL),
  (32, 1239000019, 7, 1, 1, 0, 0, 16384, 0, 0, 0, 0, NULL),
  (33, 1239000020, 12, 1, 1, 3, 0, 0, 4096, 0, 0, 0, 4096),
  (34, 1239000021, 1, 1, 1, 3, 0, 65536, 4096, 1, 1, 0, NULL);
SQL
"$sqlload" driver.db driver.sql
for format in text json html; do
	run 0 '' driver.db --format $format
	cp out driver.$format
done
json_ok driver.json
grep -q '"unmatched_maps": 2,' driver.json || fail "driver: maps without a live handle not counted"
grep -q '"unmatched_unmaps": 2,' driver.json || fail "driver: unmaps of nothing not counted"
grep -q '"unmap_errors": 3,' driver.json || fail "driver: unmap errors not counted"
grep -q '"unknown_events": 0,' driver.json || fail "driver: known kinds counted as unknown"
grep -q '"events": 35,' driver.json || fail "driver: not every event counted"
grep -q '"kind": "preallocation"' driver.json || fail "driver: no preallocation note on device 3"

# ops, marks, CUDA graphs and CUPTI with nonsense in them: an old trace
# given the op and source columns and the ops and cupti tables; ops with
# no name, twice the same, a mark naming no op; graph events naming no
# graph or exec, a capture that ends without beginning, a trim of no
# device; CUPTI records without an address, with a pc that is text, of a
# source this version does not know; frames of kind 2 and Python frames
# without a file
cp good.db extra.db
cat >extra.sql <<'SQL'
ALTER TABLE events ADD COLUMN handle INTEGER;
ALTER TABLE events ADD COLUMN op INTEGER;
ALTER TABLE events ADD COLUMN source INTEGER;
CREATE TABLE ops(id, name, domain);
CREATE TABLE cupti(seq, correlation_id, pc);
INSERT INTO ops VALUES (1, NULL, NULL), (2, 'build 1', NULL), (3, 'build 1', NULL),
  (4, 'build 2', X'00'), (NULL, 'x', 'y'), ('z', 'memtrace: CUPTI on', NULL),
  (5, 'memtrace: CUPTI on', NULL);
INSERT INTO cupti VALUES (20, 1, 'pc'), (21, NULL, NULL), (NULL, NULL, NULL), (22, 3, -1);
INSERT INTO frames VALUES (20, 2, NULL, NULL, NULL, 'op frame', NULL, NULL),
  (21, 1, NULL, NULL, NULL, NULL, NULL, NULL), (22, 1, NULL, 1, 5, 'py', NULL, -4);
INSERT INTO stack_frames VALUES (20, 0, 20), (20, 1, 21), (20, 2, 22);
INSERT INTO events VALUES
  (14, 1239000001, 13, 1, 1, 0, 0, NULL, NULL, NULL, 20, 0, NULL, 999, NULL),
  (15, 1239000002, 13, 1, 1, 0, 0, NULL, NULL, NULL, 20, 0, NULL, 5, 1),
  (16, 1239000003, 1, 1, 1, 0, 0, 65536, 100, 1, 20, 0, NULL, 3, NULL),
  (17, 1239000004, 1, 1, 1, 0, 0, 69632, 100, 1, 20, 0, NULL, 2, NULL),
  (18, 1239000005, 1, 1, 1, 0, 0, 73728, 100, 1, 20, 0, NULL, 4, NULL),
  (19, 1239000006, 1, 1, 1, 0, 0, 77824, 100, 1, 20, 0, NULL, 2, NULL),
  (20, 1239000007, 1, 0, 0, 0, 0, NULL, 100, 1, 0, 0, NULL, NULL, 1),
  (21, 1239000008, 1, 0, 0, 0, 0, 65536, 100, 1, 20, 0, NULL, NULL, 1),
  (22, 1239000009, 2, 0, 0, 0, 0, 4096, NULL, NULL, 0, 0, NULL, NULL, 1),
  (23, 1239000010, 1, 0, 0, 0, 0, 81920, 7, 9, 0, 0, NULL, NULL, 7),
  (24, 1239000011, 16, 1, 1, 0, 0, 0, 0, 0, 20, 0, 77, NULL, NULL),
  (25, 1239000012, 18, 1, 1, 0, 0, 0, 0, 0, 20, 0, 78, NULL, NULL),
  (26, 1239000013, 19, 1, 1, -1, 5, 0, 0, 0, 0, 0, 79, NULL, NULL),
  (27, 1239000014, 19, 1, 1, -1, 5, 0, 0, 0, 0, 0, NULL, NULL, NULL),
  (28, 1239000015, 22, 1, 1, 0, 99, 0, 0, 0, 20, 0, 80, NULL, NULL),
  (29, 1239000016, 24, 1, 1, 0, 0, 90000, 0, 0, 20, 0, 81, NULL, NULL),
  (30, 1239000017, 24, 1, 1, 0, 0, NULL, 0, 0, 20, 0, NULL, NULL, NULL),
  (31, 1239000018, 1, 1, 1, 0, 0, 94208, 1000, 10, 20, 0, NULL, NULL, NULL),
  (32, 1239000019, 1, 1, 1, 0, 7, 98304, 1000, 10, 20, 0, NULL, NULL, NULL),
  (33, 1239000020, 17, 1, 1, 0, 0, 82, -1, 0, 20, 0, NULL, NULL, NULL),
  (34, 1239000021, 17, 1, 1, 0, 0, 82, 1, 0, 20, 0, 83, NULL, NULL),
  (35, 1239000022, 19, 1, 1, -1, 0, 0, 0, 0, 0, 0, 83, NULL, NULL),
  (36, 1239000023, 19, 1, 1, -1, 0, 0, 0, 0, 0, 0, 83, NULL, NULL),
  (37, 1239000024, 23, 1, 1, 0, 0, 0, -1, 0, 20, 0, NULL, NULL, NULL),
  (38, 1239000025, 23, 1, 1, 0, 0, 0, 9223372036854775807, 0, 20, 0, NULL, NULL, NULL),
  (39, 1239000026, 2, 1, 1, 0, 0, 94208, NULL, NULL, 0, 0, NULL, NULL, NULL),
  (40, 1239000027, 15, 0, 0, 0, 0, 1, 0, 0, 0, 0, 2, NULL, 1),
  (41, 1239000028, 18, 1, 1, 0, 0, 0, 0, 0, 20, 0, 83, NULL, NULL),
  (42, 1239000029, 21, 1, 1, 0, 7, 0, 0, 0, 20, 0, NULL, NULL, NULL);
SQL
"$sqlload" extra.db extra.sql
for format in text json html; do
	run 0 '' extra.db --format $format
	cp out extra.$format
done
json_ok extra.json
grep -q '"events": 43,' extra.json || fail "extra: not every event counted"
grep -q '"unknown_events": 0,' extra.json || fail "extra: known kinds counted as unknown"
if grep -q "$(printf '\033')" extra.text; then fail "extra: an escape character reached the text"; fi

# --- a trace still being written (WAL, data only in the -wal) ----------
rm -f wal.db*
"$sqlload" wal.db "$src/golden/oom.sql" --keep-wal
[ -s wal.db-wal ] || fail "the WAL fixture has no -wal file"
run 0 '' wal.db --format json
grep -q '"events": 14,' out || fail "events in the -wal were not read"

# the -shm cannot be created (read-only directory): read as immutable. Root
# can write anywhere, so as root this runs as nobody when setpriv can.
as_user=
if [ "$(id -u)" -eq 0 ]; then
	as_user="setpriv --reuid=nobody --regid=nogroup --clear-groups"
	chmod 755 "$tmp"
	$as_user "$report" --version >/dev/null 2>&1 || as_user=none
fi
if [ "$as_user" != none ]; then
	mkdir ro
	"$sqlload" ro/wal.db "$src/golden/oom.sql" --keep-wal   # all data in the -wal
	"$sqlload" ro/flushed.db "$src/golden/oom.sql"
	echo 'PRAGMA journal_mode=WAL;' >wal.sql
	"$sqlload" ro/flushed.db wal.sql                         # WAL mode, checkpointed
	rm -f ro/*-shm
	chmod -R a+r ro
	chmod 555 ro
	set +e
	$as_user "$report" ro/flushed.db --format json >out 2>err
	rc=$?
	set -e
	[ "$rc" -eq 0 ] || fail "read-only WAL trace: exit $rc: $(cat err)"
	grep -q '"read_immutable": true' out || fail "read-only WAL trace: not read as immutable"
	grep -q '"events": 14,' out || fail "read-only WAL trace: events missing"
	[ ! -s err ] || fail "read-only WAL trace without -wal: warned: $(cat err)"
	set +e
	$as_user "$report" ro/wal.db >out 2>err
	rc=$?
	set -e
	[ "$rc" -eq 1 ] && grep -q 'still in its -wal file' err ||
		fail "read-only trace with data only in its -wal: exit $rc: $(cat err)"
	chmod 755 ro
else
	echo "read-only directory case skipped: running as root without setpriv"
fi

# names long enough that the JSON writer writes them in pieces (40,000
# characters) or must make room for them (8,000), in several stacks: every
# frame the same wherever it is written, each name whole (the writer keeps
# a frame's JSON the first time and copies it after)
cp good.db long-names.db
cat >long-names.sql <<'SQL'
DELETE FROM events;
DELETE FROM ooms;
DELETE FROM stack_frames;
DELETE FROM frames;
INSERT INTO frames VALUES
  (1, 0, 4196, 1, 100, 'main', NULL, NULL),
  (2, 0, 4296, 1, 200, replace(hex(zeroblob(20000)), '0', 'a'), NULL, NULL),
  (3, 0, 4396, 1, 300, replace(hex(zeroblob(4000)), '0', 'b'), '/src/b.c', 8),
  (4, 0, 4496, 1, 400, 'leaf', NULL, NULL);
INSERT INTO stack_frames VALUES (1, 0, 2), (1, 1, 1),
  (2, 0, 3), (2, 1, 4), (2, 2, 1),
  (3, 0, 4), (3, 1, 2), (3, 2, 3), (3, 3, 1);
INSERT INTO events VALUES
  (0, 10, 1, 1, 4242, 0, 0, 1048576, 1048576, 1, 1, 0),
  (1, 20, 1, 1, 4242, 0, 0, 4194304, 2097152, 1, 2, 0),
  (2, 30, 1, 1, 4242, 0, 0, 8388608, 3145728, 1, 3, 0);
SQL
"$sqlload" long-names.db long-names.sql
run 0 '' long-names.db --format json
if command -v python3 >/dev/null; then
	python3 - out <<'PY' || fail "long names: frames differ or are cut (above)"
import json, sys
names = {"main": 100, "a" * 40000: 200, "b" * 8000: 300, "leaf": 400}
seen = {}
def walk(v):
    if isinstance(v, dict):
        if {"function", "symbol", "file", "line", "module", "offset", "kind"} <= v.keys():
            if v["function"] not in names or v["offset"] != names[v["function"]]:
                sys.exit("unexpected frame: %.80s" % json.dumps(v))
            if seen.setdefault(v["function"], v) != v:
                sys.exit("one frame written two ways: %.80s" % json.dumps(v))
        for x in v.values():
            walk(x)
    elif isinstance(v, list):
        for x in v:
            walk(x)
walk(json.load(open(sys.argv[1])))
if set(seen) != set(names):
    sys.exit("frames missing: %d of %d seen" % (len(seen), len(names)))
PY
fi

# --- the report must not overwrite a trace ----------------------------
# -o naming an input trace, by any path, or its -wal or -shm: refused
# before anything is written, the trace as it was
trace keep.db "$src/golden/oom.sql"
cp keep.db keep.orig
cp keep.db base.db
ln keep.db keep-hard.db
ln -s keep.db keep-link.db
mkdir sub
: >keep.db-shm
refused() { # refused WHAT-IS-NAMED ARGS...
	named=$1
	shift
	run 2 "is the trace $named: the report would overwrite it" "$@"
	cmp -s keep.db keep.orig || fail "memtrace-report $*: keep.db was changed"
	cmp -s base.db keep.orig || fail "memtrace-report $*: base.db was changed"
}
refused keep.db keep.db -o keep.db
refused keep.db keep.db --output=./keep.db
refused keep.db keep.db -o sub/../keep.db
refused keep.db keep.db -o keep-hard.db
refused keep.db keep.db -o keep-link.db
refused keep.db keep.db --format json -o keep.db
refused keep.db-shm keep.db -o keep.db-shm
refused base.db keep.db --diff base.db -o base.db
refused base.db keep.db base.db -o base.db
rm -f keep.db-shm keep-hard.db keep-link.db
run 0 '' keep.db -o keep.txt
grep -q 'OUT OF MEMORY' keep.txt || fail "keep.db -o keep.txt: no report"

# --- --at-mark names a mark of the trace ---------------------------------
# an unknown label is an error that lists the trace's marks, in every
# format that takes it (the torch snapshot would give the end state)
trace marks.db "$src/golden/graphs.sql"
for f in text json html torch-snapshot; do
	run 2 '--at-mark nope: marks.db has no such mark; its marks: "checkpoint"' \
		marks.db --format "$f" --at-mark nope -o at-mark.out
	[ ! -e at-mark.out ] || fail "--at-mark nope --format $f wrote its output"
done
run 2 '--at-mark checkpoint: keep.db has no marks' keep.db --at-mark checkpoint
run 0 '' marks.db --at-mark checkpoint --format json -o at-mark.out

# --- several traces: an unreadable one is skipped, and said -------------
# (all unreadable: the first one's error, exit 1, as above)
trace rank0.db "$src/golden/oom.sql"
echo "not a trace" >rank1.db
run 0 'warning: skipping rank1.db: rank1.db is not a memtrace trace' rank0.db rank1.db missing.db
grep -q 'skipping missing.db: cannot open missing.db' err || fail "several traces: missing.db not said"
grep -q '^memtrace report: 1 traces;' out || fail "several traces: the table is not of the one read"
grep -q '^Skipped 2 unreadable traces, not in the table:' out ||
	fail "several traces: the text report does not say what it skipped"
grep -q '^  rank1.db: rank1.db is not a memtrace trace' out ||
	fail "several traces: the text report does not say why rank1.db was skipped"
run 0 '' rank0.db missing.db --format json
json_ok out
if command -v python3 >/dev/null; then
	python3 - out <<'PY' || fail "several traces: the JSON does not list the trace skipped"
import json, sys
r = json.load(open(sys.argv[1]))
assert len(r["traces"]) == 1, r["traces"]
assert [s["path"] for s in r["skipped"]] == ["missing.db"], r["skipped"]
assert "cannot open missing.db" in r["skipped"][0]["why"], r["skipped"]
PY
fi
run 0 '' rank0.db missing.db --format html
grep -q 'Skipped: 1 unreadable trace' out || fail "several traces: the HTML does not say what it skipped"
run 1 'cannot open missing.db' missing.db rank1.db

if [ "$failures" -ne 0 ]; then
	echo "$failures bad-input checks failed" >&2
	exit 1
fi
echo "all bad-input checks passed"
