-- A run that fails with out-of-memory: the golden test of the text and JSON
-- reports (oom.expected.txt, oom.expected.json). Schema version 1 as it was
-- before events.handle and the devices table were added: the reporter must
-- still read such traces (no handles, no devices). Module paths do not
-- exist, so the function names below (dladdr's) are what the report shows.
--
-- MiB = 1048576. Events, and device bytes live after each:
--   seq 0  1.0 ms  alloc  400 MiB device  stack 1 (load_weights)  live  400 MiB
--   seq 1  2.0 ms  alloc  400 MiB device  stack 1                 live  800 MiB
--   seq 2  3.0 ms  alloc   16 MiB pinned host, stack 5 (main)     host 16 MiB (host peak)
--   seq 3 10.0 ms  alloc  256 MiB device  stack 4 (scratch)       live 1056 MiB  <- device peak
--   seq 4 11.0 ms  free   the scratch buffer                      live  800 MiB
--   seq 5 12.0 ms  alloc  100 MiB managed stack 2 (forward)       live  900 MiB
--   seq 6 13.0 ms  alloc  112 MiB device  stack 3 (a static function called by forward)
--                                                                 live 1012 MiB
--   seq 7 14.0 ms  free   of the 112 MiB buffer ...               live  900 MiB
--   seq 8 14.1 ms  free_error: ... which failed: it stays live    live 1012 MiB
--   seq 9 1.234 s  oom    cudaMalloc of 96 MiB in forward; driver: 12 MiB free of 1 GiB
--   seq 10         free of 0xdead0000, never allocated: 1 unmatched free
--   seq 11         cudaFree(NULL): ignored
--   seq 12         free of the pinned host buffer
--   seq 13         alloc_error (not an OOM): 1 alloc error
--
-- So: device allocations 5 (seq 0 1 3 5 6), bytes allocated 400+400+256+100+112
-- = 1268 MiB = 1329594368; frees 1 (seq 4; seq 7 undone by seq 8); peak 1056 MiB
-- = 1107296256 at 10000000 ns; live at end 1012 MiB = 1061158912 in 4.
-- Sites at the peak: stack 1 800 MiB, stack 4 256 MiB (0 live at the end: a
-- "last value" would say 0), stack 3 0 (total 112 MiB), stack 2 0 (total 100).
-- The OOM: 1012 MiB live in 4; holders stack 1 800 MiB x2, stack 3 112 MiB,
-- stack 2 100 MiB. Its site is forward (demo-oom.c:42): the innermost frame of
-- stack 2. Stack 3's innermost frame has no name: its site is forward too,
-- shown through that frame, the unnamed one listed in JSON as demo-oom+0x1500.
-- Leaks (by bytes): stack 1 device 800 MiB x2, stack 3 device 112 MiB,
-- stack 2 managed 100 MiB. Host: 1 allocation, 1 free, 16 MiB, peak 16 MiB at
-- 3000000 ns, 0 live. 14 events; duration 1.3 s (end_monotonic_ns).
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
  ('pid', '4242'), ('ppid', '1'), ('host', 'gpu01'), ('rank', '0'),
  ('cmdline', './demo-oom --batch 96'), ('exe', '/nonexistent/demo-oom'),
  ('start_realtime_ns', '1700000000000000000'), ('start_monotonic_ns', '5000000000'),
  ('depth', '64'), ('queue_capacity', '65536'), ('commit_interval_ms', '100'),
  ('events_written', '14'), ('producer_wait_ns', '0'),
  ('end_monotonic_ns', '1300000000'), ('end', 'exit'), ('exit_status', '1');
INSERT INTO apis VALUES (1, 'cudaMalloc'), (2, 'cudaFree'), (3, 'cudaMallocManaged'),
  (4, 'cudaMallocHost'), (5, 'cudaFreeHost');
INSERT INTO modules VALUES
  (1, '/nonexistent/demo-oom', 93824992231424, NULL),
  (2, '/nonexistent/libc.so.6', 140737351843840, '0123456789abcdef0123456789abcdef01234567');
INSERT INTO frames VALUES
  (1, 0, 93824992235913, 1, 4489, 'load_weights', NULL, NULL),
  (2, 0, 93824992236112, 1, 4688, 'init_model', NULL, NULL),
  (3, 0, 93824992236288, 1, 4864, 'main', NULL, NULL),
  (4, 0, 140737352004169, 2, 160329, '__libc_start_main', NULL, NULL),
  (5, 0, 93824992236544, 1, 5120, 'forward', '/src/demo/demo-oom.c', 42),
  (6, 0, 93824992236800, 1, 5376, NULL, NULL, NULL),
  (7, 0, 93824992237056, 1, 5632, 'scratch', NULL, NULL);
INSERT INTO stack_frames VALUES
  (1, 0, 1), (1, 1, 2), (1, 2, 3), (1, 3, 4),
  (2, 0, 5), (2, 1, 3), (2, 2, 4),
  (3, 0, 6), (3, 1, 5), (3, 2, 3),
  (4, 0, 7), (4, 1, 3),
  (5, 0, 3), (5, 1, 4);
INSERT INTO threads VALUES (4242, 'demo-oom');
INSERT INTO events VALUES
  (0, 1000000, 1, 1, 4242, 0, 0, 139637976727552, 419430400, 1, 1, 0),
  (1, 2000000, 1, 1, 4242, 0, 0, 139638513598464, 419430400, 1, 1, 0),
  (2, 3000000, 1, 4, 4242, 0, 0, 2097152, 16777216, 3, 5, 0),
  (3, 10000000, 1, 1, 4242, 0, 0, 139639050469376, 268435456, 1, 4, 0),
  (4, 11000000, 2, 2, 4242, 0, 0, 139639050469376, 268435456, 1, 4, 0),
  (5, 12000000, 1, 3, 4242, 0, 0, 139639318904832, 104857600, 2, 2, 0),
  (6, 13000000, 1, 1, 4242, 0, 0, 139639587340288, 117440512, 1, 3, 0),
  (7, 14000000, 2, 2, 4242, 0, 0, 139639587340288, 117440512, 1, 3, 0),
  (8, 14100000, 5, 2, 4242, 0, 0, 139639587340288, NULL, NULL, 3, 1),
  (9, 1234000000, 3, 1, 4242, 0, 0, NULL, 100663296, 1, 2, 2),
  (10, 1235000000, 2, 2, 4242, 0, 0, 3735879680, NULL, NULL, 3, 0),
  (11, 1236000000, 2, 2, 4242, 0, 0, 0, NULL, NULL, 3, 0),
  (12, 1237000000, 2, 5, 4242, 0, 0, 2097152, 16777216, 3, 5, 0),
  (13, 1238000000, 4, 1, 4242, 0, 0, NULL, 1024, 1, 4, 1);
INSERT INTO ooms VALUES (9, 12582912, 1073741824);
