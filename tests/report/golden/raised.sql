-- A framework's OOM that failed on one thread and reached the program on
-- another (TensorFlow: the BFC allocator's op fails on an executor
-- thread; ResourceExhaustedError is raised on the thread that called
-- model.fit): the golden test of the oom_raised event (kind 34,
-- docs/trace-format.md) in the text and JSON reports (raised.expected.*).
--
-- Thread 100 is the program's (Python frames), thread 200 TensorFlow's
-- executor (native frames only). MiB = 1048576.
--   seq 0  1.0 ms  alloc 800 MiB device, thread 100, stack 1 (build, fit.py:28): the arena
--   seq 1  2.0 ms  alloc  32 MiB device, thread 200, stack 3 (cublasCreate_v2)
--   seq 2  5.0 s   oom   BFCAllocator of 781.25 MiB, thread 200, stack 2
--                  (tensorflow::OpKernelContext::allocate_output): no user's line
--   seq 3  5.1 s   oom_raised, thread 100, stack 4 (quick_execute in
--                  site-packages <- main (fit.py:59) <- <module> (fit.py:76))
-- So: the OOM's stack is 4, at main (fit.py:59); its failed_stack is 2.
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
  ('cmdline', 'python fit.py --oom 200000'), ('exe', '/nonexistent/python3.11'),
  ('start_realtime_ns', '1700000000000000000'), ('start_monotonic_ns', '5000000000'),
  ('depth', '64'), ('queue_capacity', '65536'), ('commit_interval_ms', '100'),
  ('events_written', '4'), ('producer_wait_ns', '0'),
  ('end_monotonic_ns', '6000000000'), ('end', 'exit'), ('exit_status', '0');
INSERT INTO apis VALUES (1, 'cuMemAlloc_v2'), (2, 'BFCAllocator');
INSERT INTO modules VALUES
  (1, '/nonexistent/libtensorflow_framework.so.2', 140737351843840, NULL),
  (2, '/nonexistent/libcublas.so.12', 140737371843840, NULL);
INSERT INTO frames VALUES
  (1, 1, NULL, NULL, NULL, 'build', '/work/fit.py', 28),
  (2, 1, NULL, NULL, NULL, 'main', '/work/fit.py', 46),
  (3, 1, NULL, NULL, NULL, '<module>', '/work/fit.py', 76),
  (4, 0, 140737351847936, 1, 4096, 'tensorflow::OpKernelContext::allocate_output(int, tensorflow::TensorShape const&, tensorflow::Tensor**)', NULL, NULL),
  (5, 0, 140737351852032, 1, 8192, 'tensorflow::ThreadPoolDevice::Compute(tensorflow::OpKernel*, tensorflow::OpKernelContext*)', NULL, NULL),
  (6, 0, 140737371847936, 2, 4096, 'cublasCreate_v2', NULL, NULL),
  (7, 1, NULL, NULL, NULL, 'quick_execute', '/venv/lib/python3.11/site-packages/tensorflow/python/eager/execute.py', 53),
  (8, 1, NULL, NULL, NULL, 'main', '/work/fit.py', 59);
INSERT INTO stack_frames VALUES
  (1, 0, 1), (1, 1, 2), (1, 2, 3),
  (2, 0, 4), (2, 1, 5),
  (3, 0, 6), (3, 1, 5),
  (4, 0, 7), (4, 1, 8), (4, 2, 3);
INSERT INTO threads VALUES (100, 'python'), (200, 'tf_executor');
INSERT INTO events VALUES
  (0, 1000000, 1, 1, 100, 0, 0, 139637976727552, 838860800, 1, 1, 0),
  (1, 2000000, 1, 1, 200, 0, 0, 139638876727552, 33554432, 1, 3, 0),
  (2, 5000000000, 3, 2, 200, 0, 0, NULL, 819200000, 1, 2, 2),
  (3, 5100000000, 34, 2, 100, 0, 0, NULL, 819200000, 1, 4, 0);
INSERT INTO ooms VALUES (2, 202375168, 1073741824);
