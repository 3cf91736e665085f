-- Untrusted strings and a damaged trace: the golden test that every
-- renderer escapes what comes from the trace and survives what is missing
-- (strings.expected.txt, .json, .html). Real schema, version 1.
--
-- Strings: HTML/JSON specials in a function name, an escape sequence and a
-- newline in another, invalid UTF-8 (0xff) in a third, a quote in the host,
-- a tab in the command line, a non-numeric pid (JSON: null), an empty rank.
-- Damage: events name stack 77, which has no frames; stack 2 names frame 99,
-- which does not exist; frame 4 names module 9, which does not exist.
-- Odd values: NULL and negative bytes (counted as 0), NULL mem (untracked),
-- an event kind 42 this version does not know.
--
-- Events, and device bytes live after each:
--   seq 0 100 ns  alloc 4096 at 0x1000 stack 1                 4096
--   seq 1 200 ns  alloc 8192 at 0x2000 stack 77 (missing)     12288
--   seq 2 300 ns  alloc 1024 at 0x3000 stack 2                13312  <- peak
--   seq 3 400 ns  alloc NULL bytes at 0x4000 stack 1 (0 bytes) 13312
--   seq 4 500 ns  alloc -5 bytes at 0x5000 stack 1 (0 bytes)   13312
--   seq 5 600 ns  alloc 100 bytes, mem NULL: untracked         13312
--   seq 6 700 ns  free 0x2000                                   5120
--   seq 7 800 ns  kind 42: unknown
-- Device: 5 allocations, 13312 bytes allocated, 1 free, peak 13312 at 300 ns,
-- 5120 live at the end in 4 allocations. Sites: stack 77 (8192 at peak,
-- 0 at end), stack 1 (4096 at peak, 3 allocations, 4096 at end), stack 2
-- (1024, 1024). Leaks: stack 1 4096 in 3, stack 2 1024 in 1. 8 events, 1
-- missing stack reference, 1 missing frame, 1 missing module, 1 untracked
-- allocation, 1 unknown event. No OOM, no host memory. Duration 5 ms.
PRAGMA user_version = 1;
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE apis(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE modules(id INTEGER PRIMARY KEY, path TEXT NOT NULL, base INTEGER NOT NULL, build_id TEXT);
CREATE TABLE frames(id INTEGER PRIMARY KEY, kind INTEGER NOT NULL, ip INTEGER, module INTEGER, offset INTEGER, function TEXT, file TEXT, line INTEGER);
CREATE TABLE stack_frames(stack INTEGER NOT NULL, depth INTEGER NOT NULL, frame INTEGER NOT NULL, PRIMARY KEY(stack, depth)) WITHOUT ROWID;
CREATE TABLE threads(id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE events(seq INTEGER PRIMARY KEY, time_ns INTEGER NOT NULL, kind INTEGER NOT NULL, api INTEGER NOT NULL, thread INTEGER, device INTEGER, stream INTEGER, address INTEGER, bytes INTEGER, mem INTEGER, stack INTEGER, status INTEGER);
CREATE TABLE ooms(seq INTEGER PRIMARY KEY, device_free INTEGER, device_total INTEGER);

INSERT INTO meta VALUES
  ('format', 'memtrace-trace'), ('schema_version', '1'), ('memtrace_version', '0.1.0'),
  ('pid', 'abc'), ('host', 'lab"box<1>'), ('rank', ''),
  ('cmdline', 'python' || char(9) || 'train.py --name "<x>"'),
  ('exe', '/nonexistent/python3'), ('end_monotonic_ns', '5000000'), ('end', 'running'),
  ('unrelated', NULL);
INSERT INTO apis VALUES (1, 'cudaMalloc'), (2, 'cudaFree');
INSERT INTO modules VALUES (1, '/nonexistent/lib<evil>.so', 4096, NULL);
INSERT INTO frames VALUES
  (1, 0, 8192, 1, 4096, '<script>alert("x&y")</script>''', NULL, NULL),
  (2, 1, NULL, NULL, NULL, 'train_step', '/work/train.py', 12),
  (3, 0, 12288, 1, 8192, 'evil' || char(27) || '[2J' || char(10) || 'fn', NULL, NULL),
  (4, 0, 16384, 9, 12288, CAST(X'6261642dff2d666e' AS TEXT), NULL, NULL);
INSERT INTO stack_frames VALUES
  (1, 0, 1), (1, 1, 2),
  (2, 0, 3), (2, 1, 99), (2, 2, 4);
INSERT INTO threads VALUES (1, CAST(X'ff' AS TEXT));
INSERT INTO events VALUES
  (0, 100, 1, 1, 1, 0, 0, 4096, 4096, 1, 1, 0),
  (1, 200, 1, 1, 1, 0, 0, 8192, 8192, 1, 77, 0),
  (2, 300, 1, 1, 1, 0, 0, 12288, 1024, 1, 2, 0),
  (3, 400, 1, 1, 1, 0, 0, 16384, NULL, 1, 1, 0),
  (4, 500, 1, 1, 1, 0, 0, 20480, -5, 1, 1, 0),
  (5, 600, 1, 1, 1, 0, 0, 24576, 100, NULL, 1, 0),
  (6, 700, 2, 2, 1, 0, 0, 8192, 8192, 1, 0, 0),
  (7, 800, 42, 2, 1, 0, 0, NULL, NULL, NULL, NULL, NULL);
