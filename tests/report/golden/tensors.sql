-- Tensors inside PyTorch's cache (report/model-torch.c): the golden test of
-- the text and JSON reports' framework view (tensors.expected.txt,
-- tensors.expected.json). Schema version 1's events table, with the
-- allocator's actions (kinds 26-33, api CUDACachingAllocator) between the
-- CUDA calls, as frameworks/torch.c records them. MiB = 1048576; A =
-- 139637976727552, B = 139638513598464.
--
--   seq 0  cudaMalloc 20 MiB at A                   (stack 1, load_weights)
--   seq 1  segment_alloc A 20 MiB                   reserved 20 MiB (a peak)
--   seq 2  tensor_alloc A asks 3 MiB: 17 MiB would be left, more than
--          1 MiB: torch splits, block 3 MiB         allocated 3 MiB
--   seq 3  tensor_alloc A+3 MiB asks 17303528 (17303552 rounded): 522240
--          would be left, not more than 1 MiB: the whole 17 MiB range
--          (stack 2, forward, train.py:12)          allocated 20 MiB
--   seq 4  tensor_free_requested A                  allocated 17 MiB
--   seq 5  tensor_free A: 3 MiB free at A
--   seq 6  cudaMalloc 2 MiB at B                    (stack 3, embed, train.py:7)
--   seq 7  segment_alloc B 2 MiB                    reserved 22 MiB (the peak)
--   seq 8  tensor_alloc B asks 1000: 1024, split    allocated 17 MiB + 1024
--   seq 9  oom: cudaMalloc of 20 MiB (stack 4, step, train.py:20); the
--          driver: 4 MiB free of 1 GiB
--   seq 10 tensor_oom: 8 MiB asked for, 4 MiB free as torch read it
--
-- The cache at the OOM, at the peak (taken after seq 8) and at the end, all
-- alike: reserved 23068672, allocated 17826816 in 2 tensors, free in the
-- cache 5241856, largest free block 3 MiB = 3145728 (at A); holders stack 2
-- 17825792 x1, stack 3 1024 x1. At the OOM the request is 8388608: more
-- than the largest free block and the device's 4 MiB, less than the two
-- free amounts together (9 MiB - 1024): fragmentation.
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
  ('events_written', '11'), ('producer_wait_ns', '0'),
  ('end_monotonic_ns', '2000000000'), ('end', 'exit'), ('exit_status', '1');
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
  (10, 1500001000, 33, 3, 4343, 0, 0, 4194304, 8388608, NULL, 4, 0);
INSERT INTO ooms VALUES (9, 4194304, 1073741824);
