-- A failure PyTorch's allocator recovered from (report/model.c,
-- oom_recovered): the golden test of the Perfetto export
-- (recovered.expected.perfetto.json), which names it 'recovered (no
-- OOM)', category recovered, not an OOM. tensors.sql's trace to seq 8,
-- then:
--
--   seq 9  oom: cudaMalloc of 20 MiB (stack 4, step, train.py:20)
--   seq 10 segment_free A 20 MiB                    torch flushes its cache
--   seq 11 cudaFree A
--   seq 12 cudaMalloc 20 MiB at A, the same thread and request: the retry
--          worked                                   (stack 4)
--   seq 13 segment_alloc A 20 MiB
--
-- No allocator OOM, no raise: the episode was recovered from.
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
  ('pid', '4343'), ('ppid', '1'), ('host', 'gpu01'), ('rank', '0'),
  ('cmdline', 'python train.py'), ('exe', '/nonexistent/python3.11'),
  ('start_realtime_ns', '1700000000000000000'), ('start_monotonic_ns', '5000000000'),
  ('depth', '64'), ('queue_capacity', '65536'), ('commit_interval_ms', '100'),
  ('events_written', '14'), ('producer_wait_ns', '0'),
  ('end_monotonic_ns', '2000000000'), ('end', 'exit'), ('exit_status', '0');
INSERT INTO apis VALUES (1, 'cudaMalloc'), (2, 'cudaFree'), (3, 'CUDACachingAllocator');
INSERT INTO modules VALUES
  (1, '/nonexistent/libc10_cuda.so', 140737351843840, NULL);
INSERT INTO frames VALUES
  (1, 0, 140737351847936, 1, 4096, 'c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc', NULL, NULL),
  (2, 1, NULL, NULL, NULL, 'load_weights', '/src/train.py', 3),
  (3, 1, NULL, NULL, NULL, 'forward', '/src/train.py', 12),
  (4, 1, NULL, NULL, NULL, 'embed', '/src/train.py', 7),
  (5, 1, NULL, NULL, NULL, 'step', '/src/train.py', 20),
  (6, 1, NULL, NULL, NULL, '<module>', '/src/train.py', 30);
INSERT INTO stack_frames VALUES
  (1, 0, 1), (1, 1, 2), (1, 2, 6),
  (2, 0, 1), (2, 1, 3), (2, 2, 6),
  (3, 0, 1), (3, 1, 4), (3, 2, 6),
  (4, 0, 1), (4, 1, 5), (4, 2, 6);
INSERT INTO threads VALUES (4343, 'python');
INSERT INTO events VALUES
  (0, 1000000, 1, 1, 4343, 0, 0, 139637976727552, 20971520, 1, 1, 0),
  (1, 1001000, 29, 3, 4343, 0, 0, 139637976727552, 20971520, NULL, 1, 0),
  (2, 1002000, 26, 3, 4343, 0, 0, 139637976727552, 3145728, NULL, 1, 0),
  (3, 2000000, 26, 3, 4343, 0, 0, 139637979873280, 17303528, NULL, 2, 0),
  (4, 3000000, 27, 3, 4343, 0, 0, 139637976727552, 3145728, NULL, NULL, 0),
  (5, 3001000, 28, 3, 4343, 0, 0, 139637976727552, 3145728, NULL, NULL, 0),
  (6, 4000000, 1, 1, 4343, 0, 0, 139638513598464, 2097152, 1, 3, 0),
  (7, 4001000, 29, 3, 4343, 0, 0, 139638513598464, 2097152, NULL, 3, 0),
  (8, 4002000, 26, 3, 4343, 0, 0, 139638513598464, 1000, NULL, 3, 0),
  (9, 1500000000, 3, 1, 4343, 0, 0, NULL, 20971520, 1, 4, 2),
  (10, 1500001000, 30, 3, 4343, 0, 0, 139637976727552, 20971520, NULL, NULL, 0),
  (11, 1500002000, 2, 2, 4343, 0, 0, 139637976727552, 20971520, 1, NULL, 0),
  (12, 1500003000, 1, 1, 4343, 0, 0, 139637976727552, 20971520, 1, 4, 0),
  (13, 1500004000, 29, 3, 4343, 0, 0, 139637976727552, 20971520, NULL, 4, 0);
INSERT INTO ooms VALUES (9, 4194304, 1073741824);
