-- Sites by the user's own frame: Python frames (kind 1) among native
-- ones, frames of the standard library and of the frameworks' packages,
-- framework allocators, CUDA, the interpreter; NVTX operations
-- (events.op, the ops table, two ids of one name made one); marks. The
-- golden test of --group-by (site, python, op, native, stack) and of the
-- "marks", "ops" and "growth" keys. Schema version 1 with every column.
--
-- MiB = 1048576. Modules: 1 libc10_cuda.so (an allocator), 2
-- libtorch_cuda.so, 3 python3.11 (the interpreter), 4 libtorch_python.so,
-- 5 myext.so (the user's C extension), 6 libcudart.so.12. Frames:
--   1 c10 CUDACachingAllocator malloc (libc10_cuda)   2 at::native::empty_cuda
--   (libtorch_cuda)  3 THPVariable_add (libtorch_python)  4 PyObject_Call,
--   5 main (python3.11)  6 myext_alloc (myext.so)  7 cudaMallocAsync
--   (libcudart); Python: 10 forward model.py:42 (user), 11 Linear.forward,
--   12 _call_impl (torch's site-packages), 13 train_step train.py:88 (user),
--   14 <module> train.py:120 (user), 15 run threading.py (stdlib), 16
--   _bootstrap <frozen importlib._bootstrap> (stdlib), 17 load
--   dist-packages/cupy (a framework), 18 prefetch data.py:10 (user).
-- Stacks and their sites (the default cascade: Python, op, native, stack):
--   S1 1 2 3 11 12 10 12 13 14 4 5   python forward (model.py:42)
--   S2 1 2 3 11 12 10 13 14 5        python forward (model.py:42): same site
--   S3 1 2 3 12 13 14 5              python train_step (train.py:88)
--   S4 1 2 3 16 15 4 5               no user Python frame: its op, else
--                                    native empty_cuda
--   S5 7 6 17 18                     python prefetch (data.py:10)
--   S6 6 5                           native myext_alloc
--   S7 7 4 5                         nothing of the user's: the stack
-- Ops: 1 aten::mm, 2 data_load (domain myapp), 3 aten::mm again (one op
-- with 1), 4-6 the marks' labels "epoch 1" ... "epoch 3".
--
--   seq 0  1 ms  device event: 16 GiB, 15 GiB free
--   seq 1  1 ms  cudaMalloc 64 MiB at 0x1000, S1             forward 64
--   seq 2  2 ms  cudaMalloc 32 MiB at 0x2000, S2, op aten::mm forward 96
--   seq 3  3 ms  mark "epoch 1" (S3): live 96 MiB, forward 96
--   seq 4  4 ms  cudaMalloc 16 MiB at 0x3000, S3             train_step 16
--   seq 5  5 ms  cudaMalloc 8 MiB at 0x4000, S4, op data_load   [op] data_load 8
--   seq 6  6 ms  cudaMalloc 4 MiB at 0x5000, S4              empty_cuda 4
--   seq 7  7 ms  cudaMallocAsync 2 MiB at 0x6000, S5          prefetch 2
--   seq 8  8 ms  cudaMalloc 1 MiB at 0x7000, S6              myext_alloc 1
--   seq 9  9 ms  cudaMalloc 512 KiB at 0x8000, S7            stack S7 0.5
--                live 127.5 MiB = 133693440: the peak
--   seq 10 10 ms mark "epoch 2" (S3): live 127.5 MiB
--   seq 11 11 ms cudaFree 0x2000                              forward 64
--   seq 12 12 ms cudaFree 0x4000                              data_load 0
--   seq 13 13 ms cudaMalloc 16 MiB at 0x9000, S3, op 3 (= aten::mm)  train_step 32
--   seq 14 14 ms mark "epoch 3" (S3): live 103.5 MiB
--   seq 15 15 ms cudaFree 0x5000                              empty_cuda 0
--
-- Default sites (at peak / total / count / at end / stacks), by peak:
--   forward 96 / 96 / 2 / 64 / 2 (op: aten::mm, its only op);
--   train_step 16 / 32 / 2 / 32 / 1 (op aten::mm); [op] data_load 8 / 8 /
--   1 / 0; empty_cuda 4 / 4 / 1 / 0; prefetch 2; myext_alloc 1; S7 0.5.
-- --group-by python: S4's two allocations and S6, S7 go by stack (S4 12
-- MiB). --group-by op: aten::mm 32 / 48 / 2 / 16, data_load 8; the rest by
-- stack. --group-by native: empty_cuda (libtorch_cuda) holds S1-S4: 124 MiB
-- at the peak; myext_alloc S5 and S6 (3 MiB); S7 by stack. --group-by
-- stack: one site per stack.
-- Ops: aten::mm 32 MiB at the peak, 48 MiB in 2, 16 MiB at the end;
-- data_load 8 MiB, 8 MiB in 1, 0 at the end.
-- Growth (basis marks, 3 points): train_step 0, 16, 32 MiB: grows, 16 MiB
-- per point; forward 96, 96, 64: a step down (-16 MiB per point);
-- data_load 0, 8, 0; empty_cuda 0, 4, 4 (one rise: not growing, 2 MiB per
-- point); prefetch 0, 2, 2; myext_alloc 0, 1, 1; S7 0, 0.5, 0.5.
PRAGMA user_version = 1;
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE apis(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE modules(id INTEGER PRIMARY KEY, path TEXT NOT NULL, base INTEGER NOT NULL, build_id TEXT);
CREATE TABLE frames(id INTEGER PRIMARY KEY, kind INTEGER NOT NULL, ip INTEGER, module INTEGER, offset INTEGER, function TEXT, file TEXT, line INTEGER);
CREATE TABLE stack_frames(stack INTEGER NOT NULL, depth INTEGER NOT NULL, frame INTEGER NOT NULL, PRIMARY KEY(stack, depth)) WITHOUT ROWID;
CREATE TABLE threads(id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE events(seq INTEGER PRIMARY KEY, time_ns INTEGER NOT NULL, kind INTEGER NOT NULL, api INTEGER NOT NULL, thread INTEGER, device INTEGER, stream INTEGER, address INTEGER, bytes INTEGER, mem INTEGER, stack INTEGER, status INTEGER, handle INTEGER, op INTEGER, source INTEGER);
CREATE TABLE ooms(seq INTEGER PRIMARY KEY, device_free INTEGER, device_total INTEGER);
CREATE TABLE devices(id INTEGER PRIMARY KEY, total_bytes INTEGER, free_bytes_at_first_use INTEGER, first_seq INTEGER);
CREATE TABLE ops(id INTEGER PRIMARY KEY, name TEXT NOT NULL, domain TEXT);
CREATE TABLE cupti(seq INTEGER PRIMARY KEY, correlation_id INTEGER, pc INTEGER);

INSERT INTO meta VALUES
  ('format', 'memtrace-trace'), ('schema_version', '1'), ('memtrace_version', '0.3.0'),
  ('pid', '777'), ('ppid', '1'), ('host', 'gpu03'), ('rank', ''),
  ('cmdline', 'python train.py'), ('exe', '/usr/bin/python3.11'),
  ('start_realtime_ns', '1700000000000000000'), ('start_monotonic_ns', '5000000000'),
  ('depth', '64'), ('queue_capacity', '65536'), ('commit_interval_ms', '100'),
  ('events_written', '16'), ('producer_wait_ns', '0'),
  ('end_monotonic_ns', '20000000'), ('end', 'exit');
INSERT INTO apis VALUES (1, 'cudaMalloc'), (2, 'cudaFree'), (3, 'memtrace_mark'),
  (4, 'cudaMallocAsync');
INSERT INTO modules VALUES
  (1, '/opt/venv/lib/python3.11/site-packages/torch/lib/libc10_cuda.so', 139672729321472, NULL),
  (2, '/opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so', 139672796430336, NULL),
  (3, '/usr/bin/python3.11', 0, NULL),
  (4, '/opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_python.so', 139672863539200, NULL),
  (5, '/home/u/ext/myext.so', 139672930648064, NULL),
  (6, '/usr/local/cuda/lib64/libcudart.so.12', 139672997756928, NULL);
INSERT INTO frames VALUES
  (1, 0, 139672729325568, 1, 4096, '_ZN3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocator6mallocEPPvimP11CUstream_st', NULL, NULL),
  (2, 0, 139672796434432, 2, 4096, 'at::native::empty_cuda', NULL, NULL),
  (3, 0, 139672863543296, 4, 4096, 'THPVariable_add', NULL, NULL),
  (4, 0, 4198400, 3, 4198400, 'PyObject_Call', NULL, NULL),
  (5, 0, 4202496, 3, 4202496, 'main', NULL, NULL),
  (6, 0, 139672930652160, 5, 4096, 'myext_alloc', '/home/u/ext/myext.c', 31),
  (7, 0, 139672997761024, 6, 4096, 'cudaMallocAsync', NULL, NULL),
  (10, 1, NULL, NULL, NULL, 'forward', '/home/u/model.py', 42),
  (11, 1, NULL, NULL, NULL, 'Linear.forward', '/opt/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py', 125),
  (12, 1, NULL, NULL, NULL, 'Module._call_impl', '/opt/venv/lib/python3.11/site-packages/torch/nn/modules/module.py', 1527),
  (13, 1, NULL, NULL, NULL, 'train_step', '/home/u/train.py', 88),
  (14, 1, NULL, NULL, NULL, '<module>', '/home/u/train.py', 120),
  (15, 1, NULL, NULL, NULL, 'Thread.run', '/usr/lib/python3.11/threading.py', 975),
  (16, 1, NULL, NULL, NULL, '_bootstrap', '<frozen importlib._bootstrap>', 241),
  (17, 1, NULL, NULL, NULL, 'load', '/usr/lib/python3/dist-packages/cupy/_creation/basic.py', 22),
  (18, 1, NULL, NULL, NULL, 'prefetch', '/home/u/data.py', 10);
INSERT INTO stack_frames VALUES
  (1, 0, 1), (1, 1, 2), (1, 2, 3), (1, 3, 11), (1, 4, 12), (1, 5, 10), (1, 6, 12),
  (1, 7, 13), (1, 8, 14), (1, 9, 4), (1, 10, 5),
  (2, 0, 1), (2, 1, 2), (2, 2, 3), (2, 3, 11), (2, 4, 12), (2, 5, 10), (2, 6, 13),
  (2, 7, 14), (2, 8, 5),
  (3, 0, 1), (3, 1, 2), (3, 2, 3), (3, 3, 12), (3, 4, 13), (3, 5, 14), (3, 6, 5),
  (4, 0, 1), (4, 1, 2), (4, 2, 3), (4, 3, 16), (4, 4, 15), (4, 5, 4), (4, 6, 5),
  (5, 0, 7), (5, 1, 6), (5, 2, 17), (5, 3, 18),
  (6, 0, 6), (6, 1, 5),
  (7, 0, 7), (7, 1, 4), (7, 2, 5);
INSERT INTO threads VALUES (777, 'python');
INSERT INTO ops VALUES (1, 'aten::mm', NULL), (2, 'data_load', 'myapp'), (3, 'aten::mm', NULL),
  (4, 'epoch 1', NULL), (5, 'epoch 2', NULL), (6, 'epoch 3', NULL);
-- seq, time_ns, kind, api, thread, device, stream, address, bytes, mem, stack, status, handle, op, source
INSERT INTO events VALUES
  (0, 1000000, 12, 1, 777, 0, 0, 0, 17179869184, 0, 0, 0, 16106127360, NULL, NULL),
  (1, 1000000, 1, 1, 777, 0, 0, 4096, 67108864, 1, 1, 0, NULL, NULL, NULL),
  (2, 2000000, 1, 1, 777, 0, 0, 8192, 33554432, 1, 2, 0, NULL, 1, NULL),
  (3, 3000000, 13, 3, 777, -1, 0, NULL, NULL, NULL, 3, 0, NULL, 4, NULL),
  (4, 4000000, 1, 1, 777, 0, 0, 12288, 16777216, 1, 3, 0, NULL, NULL, NULL),
  (5, 5000000, 1, 1, 777, 0, 0, 16384, 8388608, 1, 4, 0, NULL, 2, NULL),
  (6, 6000000, 1, 1, 777, 0, 0, 20480, 4194304, 1, 4, 0, NULL, NULL, NULL),
  (7, 7000000, 1, 4, 777, 0, 5, 24576, 2097152, 1, 5, 0, NULL, NULL, NULL),
  (8, 8000000, 1, 1, 777, 0, 0, 28672, 1048576, 1, 6, 0, NULL, NULL, NULL),
  (9, 9000000, 1, 1, 777, 0, 0, 32768, 524288, 1, 7, 0, NULL, NULL, NULL),
  (10, 10000000, 13, 3, 777, -1, 0, NULL, NULL, NULL, 3, 0, NULL, 5, NULL),
  (11, 11000000, 2, 2, 777, -1, 0, 8192, 33554432, 1, 0, 0, NULL, NULL, NULL),
  (12, 12000000, 2, 2, 777, -1, 0, 16384, 8388608, 1, 0, 0, NULL, NULL, NULL),
  (13, 13000000, 1, 1, 777, 0, 0, 36864, 16777216, 1, 3, 0, NULL, 3, NULL),
  (14, 14000000, 13, 3, 777, -1, 0, NULL, NULL, NULL, 3, 0, NULL, 6, NULL),
  (15, 15000000, 2, 2, 777, -1, 0, 20480, 4194304, 1, 0, 0, NULL, NULL, NULL);
INSERT INTO devices VALUES (0, 17179869184, 16106127360, 0);
