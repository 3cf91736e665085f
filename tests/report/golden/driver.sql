-- The driver API and what it brings: a framework's early preallocation,
-- VMM (reserve, create, map, release before unmap, one handle mapped
-- twice, an unmap that fails), an explicit pool (create, allocations, trim,
-- destroy), an array, host registration, an imported IPC buffer, pinned
-- host memory, the device event and the devices table, and an OOM on a
-- device that other users also fill. The golden test of the text, JSON
-- and HTML reports (driver.expected.*). Schema version 1 with events.handle
-- and the devices table (docs/trace-format.md).
--
-- MiB = 1048576, GiB = 1073741824. Device 0 has 8 GiB. "dev" is device-side
-- memory live after the event (device + managed + pool + vmm_physical + array).
--   seq 0  1 ms   cuMemAlloc_v2 6 GiB (stack 1, xla_preallocate)       dev 6 GiB
--                 the first of device 0's allocations and 75% of it: the
--                 preallocation note
--   seq 1  1.1 ms device event: 8 GiB total, 1.5 GiB free after seq 0
--   seq 2  2 ms   cuMemAddressReserve 1 GiB at 0x7e0000000000 (stack 4): not memory
--   seq 3  3 ms   cuMemCreate handle 0x1001, 64 MiB (stack 2)           6 GiB + 64
--   seq 4  4 ms   cuMemMap 0x7e0000000000 <- 0x1001 (stack 3): stack 3 holds it
--   seq 5  5 ms   cuMemRelease 0x1001: released, but mapped: still live
--   seq 6  6 ms   cuMemCreate handle 0x1002, 32 MiB (stack 2)           6 GiB + 96
--   seq 7  7 ms   cuMemMap 0x7e0004000000 <- 0x1002 (stack 3): stack 3 holds it
--   seq 8  8 ms   cuMemMap 0x7e0006000000 <- 0x1002 again (stack 12, alias_segment):
--                 counted once, still held by stack 3 (its first live mapping)
--   seq 9  9 ms   cuMemPoolCreate 0x5000 (stack 5, make_pool)
--   seq 10 10 ms  cuMemAllocFromPoolAsync 16 MiB from 0x5000 (stack 6)  6 GiB + 112
--   seq 11 11 ms  cuMemAllocFromPoolAsync  8 MiB from 0x5000 (stack 6)  6 GiB + 120
--                 seq 10 and 11 on thread 5152 ('loader'), all else on 5151 ('train')
--   seq 12 12 ms  cuArrayCreate_v2 4 MiB, handle 0x6000 (stack 7)      6 GiB + 124 <- peak
--   seq 13 13 ms  cuMemHostRegister_v2 256 MiB at 0x500000 (stack 8): pinned, not allocated
--   seq 14 14 ms  cuIpcOpenMemHandle_v2 128 MiB at 0x7c0000000000 (stack 9): not ours
--   seq 15 15 ms  cuMemAllocHost_v2 2 MiB at 0x600000 (stack 8): pinned host
--   seq 16 20 ms  OOM: cuMemAlloc_v2 of 2 GiB on device 0 (stack 10, grow_cache);
--                 the driver: 1 GiB free of 8 GiB, so 7 GiB in use, of which
--                 6 GiB + 124 MiB are ours: 900 MiB (943718400) unexplained.
--                 Holders: stack 1 6 GiB x1, stack 3 96 MiB x2, stack 6 24 MiB x2,
--                 stack 7 4 MiB x1.
--   seq 17 21 ms  cuMemUnmap 0x7e0004000000: 0x1002 goes to its other mapping, stack 12
--   seq 18 22 ms  cuMemUnmap 0x7e0000000000: the last mapping of released
--                 0x1001: its 64 MiB are freed                        6 GiB + 60
--   seq 19 23 ms  cuMemFreeAsync of the 16 MiB pool allocation         6 GiB + 44
--   seq 20 24 ms  cuMemPoolTrimTo 0x5000, keep 0
--   seq 21 25 ms  cuArrayDestroy 0x6000                               6 GiB + 40
--   seq 22 26 ms  cuMemHostUnregister 0x500000
--   seq 23 27 ms  cuMemUnmap 0x7e0006000000: 0x1002 (not released) back to stack 2 ...
--   seq 24 27.1 ms ... which failed: the mapping is back, stack 12 holds 0x1002 again
--   seq 25 28 ms  cuMemPoolDestroy 0x5000, its 8 MiB allocation still live
--
-- Device-side: 6 allocations (seq 0 3 6 10 11 12), 6 GiB + 124 MiB = 6572474368
-- bytes; 3 frees (0x1001 at seq 18, the pool's 16 MiB, the array); peak
-- 6572474368 at 12000000 ns; 6 GiB + 40 MiB = 6484393984 live at the end in 3.
-- Sites: stack 1 (6 GiB at the peak and at the end), stack 3 (96 MiB at the
-- peak, 0 allocations, 2 maps of 96 MiB, 0 at the end), stack 6 (24 MiB, 2
-- allocations, 8 MiB at the end), stack 7 (4 MiB, 0 at the end), stack 2 (0 at
-- the peak, 2 allocations of 96 MiB), stack 12 (0 at the peak, 1 map of 32 MiB,
-- 32 MiB at the end).
-- Kinds: device 1 alloc 6 GiB live; host_pinned 2 MiB live; pool 2 allocs,
-- 1 free, 24 MiB, 8 MiB live; vmm_physical 2 allocs, 1 free, 96 MiB, peak 96,
-- 32 MiB live; vmm_reserved 1 GiB live; imported 128 MiB live; array 4 MiB,
-- freed; host_registered 256 MiB, freed.
-- Leaks by bytes: stack 1 device 6 GiB, stack 4 vmm_reserved 1 GiB, stack 9
-- imported 128 MiB, stack 12 vmm_physical 32 MiB, stack 6 pool 8 MiB, stack 8
-- host_pinned 2 MiB.
-- Pool 0x5000 (20480): created at make_pool, destroyed, 2 allocations of
-- 24 MiB, 8 MiB live at the end, 1 trim. 26 events, 1 unmap error.
PRAGMA user_version = 1;
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE apis(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE modules(id INTEGER PRIMARY KEY, path TEXT NOT NULL, base INTEGER NOT NULL, build_id TEXT);
CREATE TABLE frames(id INTEGER PRIMARY KEY, kind INTEGER NOT NULL, ip INTEGER, module INTEGER, offset INTEGER, function TEXT, file TEXT, line INTEGER);
CREATE TABLE stack_frames(stack INTEGER NOT NULL, depth INTEGER NOT NULL, frame INTEGER NOT NULL, PRIMARY KEY(stack, depth)) WITHOUT ROWID;
CREATE TABLE threads(id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE events(seq INTEGER PRIMARY KEY, time_ns INTEGER NOT NULL, kind INTEGER NOT NULL, api INTEGER NOT NULL, thread INTEGER, device INTEGER, stream INTEGER, address INTEGER, bytes INTEGER, mem INTEGER, stack INTEGER, status INTEGER, handle INTEGER);
CREATE TABLE ooms(seq INTEGER PRIMARY KEY, device_free INTEGER, device_total INTEGER);
CREATE TABLE devices(id INTEGER PRIMARY KEY, total_bytes INTEGER, free_bytes_at_first_use INTEGER, first_seq INTEGER);

INSERT INTO meta VALUES
  ('format', 'memtrace-trace'), ('schema_version', '1'), ('memtrace_version', '0.2.0'),
  ('pid', '5151'), ('ppid', '1'), ('host', 'gpu02'), ('rank', ''),
  ('cmdline', './train --driver'), ('exe', '/nonexistent/train'),
  ('start_realtime_ns', '1700000000000000000'), ('start_monotonic_ns', '7000000000'),
  ('depth', '64'), ('queue_capacity', '65536'), ('commit_interval_ms', '100'),
  ('events_written', '26'), ('producer_wait_ns', '0'),
  ('end_monotonic_ns', '30000000'), ('end', 'exit'), ('exit_status', '0');
INSERT INTO apis VALUES (1, 'cuMemAlloc_v2'), (2, 'cuMemFree_v2'), (3, 'cuMemCreate'),
  (4, 'cuMemMap'), (5, 'cuMemRelease'), (6, 'cuMemUnmap'), (7, 'cuMemAddressReserve'),
  (8, 'cuMemAddressFree'), (9, 'cuMemPoolCreate'), (10, 'cuMemAllocFromPoolAsync'),
  (11, 'cuMemFreeAsync'), (12, 'cuMemPoolTrimTo'), (13, 'cuMemPoolDestroy'),
  (14, 'cuArrayCreate_v2'), (15, 'cuArrayDestroy'), (16, 'cuMemHostRegister_v2'),
  (17, 'cuMemHostUnregister'), (18, 'cuIpcOpenMemHandle_v2'), (19, 'cuIpcCloseMemHandle'),
  (20, 'cuMemAllocHost_v2');
INSERT INTO modules VALUES (1, '/nonexistent/train', 93824992231424, NULL);
INSERT INTO frames VALUES
  (1, 0, 93824992235520, 1, 4096, 'xla_preallocate', NULL, NULL),
  (2, 0, 93824992235776, 1, 4352, 'expand_segment', '/src/alloc.c', 120),
  (3, 0, 93824992236032, 1, 4608, 'map_segment', '/src/alloc.c', 140),
  (4, 0, 93824992236288, 1, 4864, 'reserve_va', '/src/alloc.c', 100),
  (5, 0, 93824992236544, 1, 5120, 'make_pool', NULL, NULL),
  (6, 0, 93824992236800, 1, 5376, 'pool_alloc', NULL, NULL),
  (7, 0, 93824992237056, 1, 5632, 'make_texture', NULL, NULL),
  (8, 0, 93824992237312, 1, 5888, 'pin_buffer', NULL, NULL),
  (9, 0, 93824992237568, 1, 6144, 'open_peer', NULL, NULL),
  (10, 0, 93824992237824, 1, 6400, 'grow_cache', NULL, NULL),
  (11, 0, 93824992238080, 1, 6656, 'main', '/src/train.c', 50),
  (12, 0, 93824992238336, 1, 6912, 'alias_segment', '/src/alloc.c', 160);
INSERT INTO stack_frames VALUES
  (1, 0, 1), (1, 1, 11), (2, 0, 2), (2, 1, 11), (3, 0, 3), (3, 1, 11),
  (4, 0, 4), (4, 1, 11), (5, 0, 5), (5, 1, 11), (6, 0, 6), (6, 1, 11),
  (7, 0, 7), (7, 1, 11), (8, 0, 8), (8, 1, 11), (9, 0, 9), (9, 1, 11),
  (10, 0, 10), (10, 1, 11), (12, 0, 12), (12, 1, 11);
INSERT INTO threads VALUES (5151, 'train'), (5152, 'loader');
-- seq, time_ns, kind, api, thread, device, stream, address, bytes, mem, stack, status, handle
INSERT INTO events VALUES
  (0, 1000000, 1, 1, 5151, 0, 0, 139637976727552, 6442450944, 1, 1, 0, NULL),
  (1, 1100000, 12, 1, 5151, 0, 0, 0, 8589934592, 0, 0, 0, 1610612736),
  (2, 2000000, 1, 7, 5151, 0, 0, 138538465099776, 1073741824, 6, 4, 0, NULL),
  (3, 3000000, 1, 3, 5151, 0, 0, 4097, 67108864, 5, 2, 0, NULL),
  (4, 4000000, 6, 4, 5151, 0, 0, 138538465099776, 67108864, 0, 3, 0, 4097),
  (5, 5000000, 2, 5, 5151, -1, 0, 4097, 67108864, 5, 0, 0, NULL),
  (6, 6000000, 1, 3, 5151, 0, 0, 4098, 33554432, 5, 2, 0, NULL),
  (7, 7000000, 6, 4, 5151, 0, 0, 138538532208640, 33554432, 0, 3, 0, 4098),
  (8, 8000000, 6, 4, 5151, 0, 0, 138538565763072, 33554432, 0, 12, 0, 4098),
  (9, 9000000, 9, 9, 5151, 0, 0, 0, 0, 0, 5, 0, 20480),
  (10, 10000000, 1, 10, 5152, 0, 7, 137438953472000, 16777216, 4, 6, 0, 20480),
  (11, 11000000, 1, 10, 5152, 0, 7, 137438970249216, 8388608, 4, 6, 0, 20480),
  (12, 12000000, 1, 14, 5151, 0, 0, 24576, 4194304, 8, 7, 0, NULL),
  (13, 13000000, 1, 16, 5151, 0, 0, 5242880, 268435456, 9, 8, 0, NULL),
  (14, 14000000, 1, 18, 5151, 0, 0, 136339441844224, 134217728, 7, 9, 0, NULL),
  (15, 15000000, 1, 20, 5151, 0, 0, 6291456, 2097152, 3, 8, 0, NULL),
  (16, 20000000, 3, 1, 5151, 0, 0, NULL, 2147483648, 1, 10, 2, NULL),
  (17, 21000000, 7, 6, 5151, 0, 0, 138538532208640, 33554432, 0, 3, 0, NULL),
  (18, 22000000, 7, 6, 5151, 0, 0, 138538465099776, 67108864, 0, 3, 0, NULL),
  (19, 23000000, 2, 11, 5151, -1, 7, 137438953472000, 16777216, 4, 0, 0, NULL),
  (20, 24000000, 11, 12, 5151, 0, 0, 0, 0, 0, 5, 0, 20480),
  (21, 25000000, 2, 15, 5151, -1, 0, 24576, 4194304, 8, 0, 0, NULL),
  (22, 26000000, 2, 17, 5151, -1, 0, 5242880, 268435456, 9, 0, 0, NULL),
  (23, 27000000, 7, 6, 5151, 0, 0, 138538565763072, 33554432, 0, 12, 0, NULL),
  (24, 27100000, 8, 6, 5151, 0, 0, 138538565763072, 33554432, 0, 12, 1, NULL),
  (25, 28000000, 10, 13, 5151, 0, 0, 0, 0, 0, 5, 0, 20480);
INSERT INTO ooms VALUES (16, 1073741824, 8589934592);
INSERT INTO devices VALUES (0, 8589934592, 1610612736, 1);
