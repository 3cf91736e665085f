-- CUPTI's records checked against the hooks' by the matching rule of
-- docs/cupti.md (as tests/sim-cupti/reconcile.py applies it): matched
-- allocations counted once, allocations seen by CUPTI alone counted and
-- live under their own site, a hooked allocation CUPTI never confirmed,
-- records of kinds that are not compared, CUPTI's on and off marks,
-- graphs matched by handle and graphs only CUPTI saw. The golden test of
-- the "cupti" key. CUPTI's records come in a batch after the hooked
-- events they describe, with the earlier times CUPTI stamped.
--
-- MiB = 1048576. Modules: 1 app, 2 libprivate.so (base 139672729321472), 3
-- libcuda.so.1. Stacks: S1 alloc_weights <- main; S2 private_alloc
-- (libprivate.so, CUPTI's one-frame stack); S3 a frame in libcuda.so.1.
--   seq 0  (0.5 ms) mark "memtrace: CUPTI on" (CUPTI watches from 0.5 ms)
--   seq 1  1 ms     device event: 8 GiB, 7 GiB free
--   seq 2  2 ms     cudaMalloc 1 MiB at 0x1000 (S1)
--   seq 3  2.5 ms   cudaMalloc 2 MiB at 0x2000
--   seq 4  3 ms     cudaMallocHost 8192 at 0x3000
--   seq 5  3.2 ms   cudaMallocArray 4 MiB, handle 0x4000: arrays are not compared
--   seq 6  4 ms     cudaFree 0x1000
--   seq 7-9         CUPTI (1.9, 2.4, 2.9 ms): 0x1000 1 MiB, 0x2000 2 MiB,
--                   0x3000 8192 pinned: each inside its hooked twin's window: matched
--   seq 10 (3.1 ms) CUPTI: an array at 0x9000: not compared
--   seq 11 (3.5 ms) CUPTI: 0x5000 3000000 (S2): alone
--   seq 12 (3.6 ms) CUPTI: 0x6000 5242883, no stack, pc in libprivate.so: alone
--   seq 13 (3.7 ms) CUPTI: 0x7000 12288 managed (S2): alone
--   seq 14 (3.9 ms) CUPTI free of 0x1000: a matched allocation's: dropped
--   seq 15 (4.5 ms) CUPTI free of 0x5000: ends that alone allocation
--   seq 16 5 ms     cudaMalloc 4 MiB at 0x8000: no CUPTI record: not confirmed
--   seq 17 6 ms     OOM: cudaMalloc 2 GiB; the driver: 1 GiB free of 8 GiB
--   seq 18 (7 ms)   CUPTI graph_create 0xa1; seq 19 7.1 ms the hooked one: matched
--   seq 20 (7.5 ms) CUPTI graph_create 0xb1: only CUPTI saw it, never destroyed
--   seq 21-22       CUPTI exec_create 0xb2 of 0xb1 (7.6 ms), exec_destroy (7.7 ms)
--   seq 23 8 ms     cudaGraphDestroy 0xa1; seq 24 (7.95 ms) CUPTI's destroy of it
--   seq 25 (9 ms)   mark "memtrace: CUPTI off"
--   seq 26 9.5 ms   cudaMalloc 1 MiB at 0xa000: after the off mark, not flagged
--
-- cupti: on; 14 records, 6 compared allocations, 3 matched (3153920
-- bytes); alone 3 allocations, 8255171 bytes, 5255171 live at the end, all
-- libprivate.so; not confirmed 1, 4194304 bytes; graphs: 1 matched, 1
-- graph alone (never destroyed), 1 exec alone (destroyed).
-- graphs: 2 created (1 destroyed), 1 exec (destroyed); orphaned: graph 0xb1.
-- Device memory: 8 allocations (5 hooked, 3 alone) of 20838083 bytes, 2
-- frees (0x1000, 0x5000); peak 16789507 at 9.5 ms; 16789507 live at the
-- end in 6. The OOM: 15740931 live, 5255171 of it seen by CUPTI alone;
-- unexplained 7 GiB - 15740931 = 7500451837. Site "(seen by CUPTI only:
-- libprivate.so)": 5255171 at the peak and at the end, 8255171 in 3.
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
  ('pid', '999'), ('ppid', '1'), ('host', 'gpu05'), ('rank', ''),
  ('cmdline', './app --private'), ('exe', '/nonexistent/app'),
  ('start_realtime_ns', '1700000000000000000'), ('start_monotonic_ns', '3000000000'),
  ('depth', '64'), ('queue_capacity', '65536'), ('commit_interval_ms', '100'),
  ('events_written', '27'), ('producer_wait_ns', '0'),
  ('end_monotonic_ns', '10000000'), ('end', 'exit');
INSERT INTO apis VALUES (0, 'none'), (1, 'cudaMalloc'), (2, 'cudaFree'), (3, 'cudaMallocHost'),
  (4, 'cudaMallocArray'), (5, 'cudaGraphCreate'), (6, 'cudaGraphDestroy');
INSERT INTO modules VALUES (1, '/nonexistent/app', 93824992231424, NULL),
  (2, '/opt/vendor/libprivate.so', 139672729321472, NULL),
  (3, '/usr/lib/x86_64-linux-gnu/libcuda.so.1', 139672796430336, NULL);
INSERT INTO frames VALUES
  (1, 0, 93824992235520, 1, 4096, 'alloc_weights', '/src/app.c', 10),
  (2, 0, 93824992235776, 1, 4352, 'main', '/src/app.c', 90),
  (3, 0, 139672729329664, 2, 8192, 'private_alloc', NULL, NULL),
  (4, 0, 139672796434432, 3, 4096, NULL, NULL, NULL);
INSERT INTO stack_frames VALUES (1, 0, 1), (1, 1, 2), (2, 0, 3), (3, 0, 4);
INSERT INTO threads VALUES (999, 'app');
INSERT INTO ops VALUES (1, 'memtrace: CUPTI on', NULL), (2, 'memtrace: CUPTI off', NULL);
-- seq, time_ns, kind, api, thread, device, stream, address, bytes, mem, stack, status, handle, op, source
INSERT INTO events VALUES
  (0, 500000, 13, 0, 0, -1, 0, NULL, NULL, NULL, 0, 0, NULL, 1, 1),
  (1, 1000000, 12, 1, 999, 0, 0, 0, 8589934592, 0, 0, 0, 7516192768, NULL, NULL),
  (2, 2000000, 1, 1, 999, 0, 0, 4096, 1048576, 1, 1, 0, NULL, NULL, NULL),
  (3, 2500000, 1, 1, 999, 0, 0, 8192, 2097152, 1, 1, 0, NULL, NULL, NULL),
  (4, 3000000, 1, 3, 999, 0, 0, 12288, 8192, 3, 1, 0, NULL, NULL, NULL),
  (5, 3200000, 1, 4, 999, 0, 0, 16384, 4194304, 8, 1, 0, NULL, NULL, NULL),
  (6, 4000000, 2, 2, 999, -1, 0, 4096, 1048576, 1, 0, 0, NULL, NULL, NULL),
  (7, 1900000, 1, 0, 0, 0, 0, 4096, 1048576, 1, 3, 0, NULL, NULL, 1),
  (8, 2400000, 1, 0, 0, 0, 0, 8192, 2097152, 1, 3, 0, NULL, NULL, 1),
  (9, 2900000, 1, 0, 0, 0, 0, 12288, 8192, 3, 3, 0, NULL, NULL, 1),
  (10, 3100000, 1, 0, 0, 0, 0, 36864, 4194304, 8, 3, 0, NULL, NULL, 1),
  (11, 3500000, 1, 0, 0, 0, 0, 20480, 3000000, 1, 2, 0, NULL, NULL, 1),
  (12, 3600000, 1, 0, 0, 0, 0, 24576, 5242883, 1, 0, 0, NULL, NULL, 1),
  (13, 3700000, 1, 0, 0, 0, 0, 28672, 12288, 2, 2, 0, NULL, NULL, 1),
  (14, 3900000, 2, 0, 0, 0, 0, 4096, 1048576, 1, 0, 0, NULL, NULL, 1),
  (15, 4500000, 2, 0, 0, 0, 0, 20480, 3000000, 1, 0, 0, NULL, NULL, 1),
  (16, 5000000, 1, 1, 999, 0, 0, 32768, 4194304, 1, 1, 0, NULL, NULL, NULL),
  (17, 6000000, 3, 1, 999, 0, 0, NULL, 2147483648, 1, 1, 2, NULL, NULL, NULL),
  (18, 7000000, 14, 0, 999, -1, 0, 0, 0, 0, 0, 0, 161, NULL, 1),
  (19, 7100000, 14, 5, 999, 0, 0, 0, 0, 0, 1, 0, 161, NULL, NULL),
  (20, 7500000, 14, 0, 999, -1, 0, 0, 0, 0, 0, 0, 177, NULL, 1),
  (21, 7600000, 17, 0, 999, -1, 0, 177, 0, 0, 0, 0, 178, NULL, 1),
  (22, 7700000, 18, 0, 999, -1, 0, 0, 0, 0, 0, 0, 178, NULL, 1),
  (23, 8000000, 16, 6, 999, 0, 0, 0, 0, 0, 1, 0, 161, NULL, NULL),
  (24, 7950000, 16, 0, 999, -1, 0, 0, 0, 0, 0, 0, 161, NULL, 1),
  (25, 9000000, 13, 0, 0, -1, 0, NULL, NULL, NULL, 0, 0, NULL, 2, 1),
  (26, 9500000, 1, 1, 999, 0, 0, 40960, 1048576, 1, 1, 0, NULL, NULL, NULL);
INSERT INTO ooms VALUES (17, 1073741824, 8589934592);
INSERT INTO cupti VALUES (7, 101, 139672796434432), (8, 102, 139672796434432),
  (9, 103, 139672796434432), (10, 104, 139672796434432), (11, 105, 139672729329664),
  (12, 106, 139672729330000), (13, 107, 139672729329664), (14, 108, NULL), (15, 109, NULL),
  (18, 1, NULL), (20, 2, NULL), (21, 1, NULL), (22, 1, NULL), (24, 1, NULL);
INSERT INTO devices VALUES (0, 8589934592, 7516192768, 1);
