-- CUDA graphs: lifetimes, graph memory and the graph pool, by the rules of
-- docs/report-json.md ("graphs"). Explicit alloc and free nodes, a free
-- node of another graph, a stream capture with a freed and a kept
-- allocation, a capture that fails, an exec that fails to relaunch, one
-- with auto-free-on-launch that is uploaded then launched twice, a free
-- outside the graph, a trim; one mark (--at-mark checkpoint) and growth by
-- instantiation (one mark is not enough for marks). The golden test of
-- the "graphs" key, graph memory in totals, sites and leaks.
--
-- MiB = 1048576. Graphs G1..G4 = 0xa1..0xa4 (161..164), execs E1..E4 =
-- 0xe1..0xe4 (225..228). Graph memory: A 0x10000 4 MiB (G1's node), B
-- 0x20000 2 MiB (G2's node, freed by G2's own free node: transient), C
-- 0x21000 1 MiB (G2's node), D 0x30000 8 MiB (captured into G3 and freed
-- there: transient), F 0x31000 1 MiB (captured into G3; G4 has a free node
-- for it), X 0x40000 16 MiB (a capture that failed). "live" is graph
-- memory live after the event; "pool" what device 0's graph pool holds.
--   seq 0  1 ms  device event: 8 GiB, 7 GiB free
--   seq 1  1 ms  cudaGraphCreate G1 (S1 build_g1)
--   seq 2  2 ms  alloc node A in G1 (S1)
--   seq 3  3 ms  cudaGraphCreate G2 (S2 build_g2)
--   seq 4  4 ms  alloc node B in G2; seq 5 free node B in G2; seq 6 alloc node C in G2
--   seq 7  7 ms  instantiate E1 of G1, flags 0 (S4 make_exec): point 1, live 0
--   seq 8  8 ms  launch E1: A live                              live 4, pool 4
--   seq 9  9 ms  launch E1 again: status 1 (A not freed): failed
--   seq 10 10 ms instantiate E2 of G2, flags 1 (auto-free): point 2, live 4
--   seq 11 11 ms upload E2: C live; B needs 2 MiB of pool          live 5, pool 7
--   seq 12 12 ms launch E2: the launch the upload prepared: nothing new
--   seq 13 13 ms launch E2 again: auto-free frees C and makes it again (1 free, 1 allocation)
--   seq 14 14 ms capture begins on stream 5 (S3 capture_step)
--   seq 15 15 ms cudaMallocAsync D on stream 5: captured
--   seq 16 16 ms cudaFreeAsync D on stream 5: a captured free node
--   seq 17 17 ms cudaMallocAsync F on stream 5: captured
--   seq 18 18 ms capture ends: G3 made; D and F are G3's, D transient
--   seq 19 19 ms instantiate E3 of G3, flags 0: point 3, live 5
--   seq 20 20 ms launch E3: F live; D needs 8 MiB               live 6 (the peak), pool 14
--   seq 21 21 ms mark "checkpoint" (S4): live 6 MiB in A 4, C 1, F 1
--   seq 22 22 ms cudaGraphCreate G4 (S7 build_g4); seq 23 its free node for F
--   seq 24 24 ms instantiate E4 of G4: point 4, live 6
--   seq 25 25 ms launch E4: its free node frees F                live 5
--   seq 26 26 ms cudaFree A (outside any graph)                 live 1, pool 14
--   seq 27 27 ms capture begins on stream 6 (S8 capture_fail); seq 28
--                cudaMallocAsync X on it; seq 29 the capture ends with
--                status 900 and no graph: X belongs to no graph
--   seq 30-34    destroy E1, G1, E3, G3, G4 (E2, G2 and E4 are left)
--   seq 35 35 ms cudaDeviceGraphMemTrim(0): the pool keeps what is live  pool 1
--
-- graphs: 4 created (3 destroyed), 4 execs (2 destroyed); 5 launches, 1
-- upload, 1 failed launch; 3 alloc nodes, 3 captured allocations, 2 free
-- nodes, 1 captured free, 1 node of no graph; 1 trim; pool 1 MiB at the
-- end (0 unused), 14 MiB at most.
-- Orphaned at the end: E2 (of G2) and G2 each pin C, 1 MiB (B is no longer
-- mapped after the trim), 2 launches; E4 (of G4) pins nothing, 1 launch.
-- At the mark "checkpoint": E3 and G3 pin 9 MiB (F live, D mapped), E1
-- and G1 4 MiB (A), E2 and G2 3 MiB (C, B mapped); launches E3 1, G3 1,
-- E1 1, G1 1, E2 2, G2 2.
-- Graph memory never freed: C, 1 MiB, graph G2, stack S2.
-- Device memory (graph memory while live): 4 allocations (A, C twice, F)
-- of 7 MiB, 3 frees (C by auto-free, F by G4, A by cudaFree); peak 6 MiB
-- (6291456) at 20 ms; 1 MiB live at the end in 1 allocation. Sites:
-- build_g1 4 MiB at the peak, 4 MiB in 1; build_g2 1 MiB, 2 MiB in 2, 1 MiB
-- at the end; capture_step 1 MiB, 1 MiB in 1.
-- Growth (basis instantiations, 4 points): build_g1 0, 4, 4, 4 MiB (least
-- squares 1.2 MiB = 1258291 per point); build_g2 0, 0, 1, 1 (419430);
-- capture_step 0, 0, 0, 1 (314573); none grows.
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
  ('pid', '4321'), ('ppid', '1'), ('host', 'gpu04'), ('rank', ''),
  ('cmdline', './graphs'), ('exe', '/nonexistent/app'),
  ('start_realtime_ns', '1700000000000000000'), ('start_monotonic_ns', '9000000000'),
  ('depth', '64'), ('queue_capacity', '65536'), ('commit_interval_ms', '100'),
  ('events_written', '36'), ('producer_wait_ns', '0'),
  ('end_monotonic_ns', '40000000'), ('end', 'exit');
INSERT INTO apis VALUES (1, 'cudaGraphCreate'), (2, 'cudaGraphAddMemAllocNode'),
  (3, 'cudaGraphAddMemFreeNode'), (4, 'cudaGraphInstantiate'), (5, 'cudaGraphLaunch'),
  (6, 'cudaGraphUpload'), (7, 'cudaStreamBeginCapture'), (8, 'cudaMallocAsync'),
  (9, 'cudaFreeAsync'), (10, 'cudaStreamEndCapture'), (11, 'cudaFree'),
  (12, 'cudaDeviceGraphMemTrim'), (13, 'cudaGraphExecDestroy'), (14, 'cudaGraphDestroy'),
  (15, 'memtrace_mark');
INSERT INTO modules VALUES (1, '/nonexistent/app', 93824992231424, NULL);
INSERT INTO frames VALUES
  (1, 0, 93824992235520, 1, 4096, 'build_g1', '/src/app.c', 10),
  (2, 0, 93824992235776, 1, 4352, 'build_g2', '/src/app.c', 20),
  (3, 0, 93824992236032, 1, 4608, 'capture_step', '/src/app.c', 30),
  (4, 0, 93824992236288, 1, 4864, 'make_exec', '/src/app.c', 40),
  (5, 0, 93824992236544, 1, 5120, 'main', '/src/app.c', 90),
  (6, 0, 93824992236800, 1, 5376, 'free_state', '/src/app.c', 50),
  (7, 0, 93824992237056, 1, 5632, 'build_g4', '/src/app.c', 60),
  (8, 0, 93824992237312, 1, 5888, 'capture_fail', '/src/app.c', 70);
INSERT INTO stack_frames VALUES
  (1, 0, 1), (1, 1, 5), (2, 0, 2), (2, 1, 5), (3, 0, 3), (3, 1, 5), (4, 0, 4), (4, 1, 5),
  (5, 0, 6), (5, 1, 5), (7, 0, 7), (7, 1, 5), (8, 0, 8), (8, 1, 5);
INSERT INTO threads VALUES (4321, 'graphs');
INSERT INTO ops VALUES (1, 'checkpoint', NULL);
-- seq, time_ns, kind, api, thread, device, stream, address, bytes, mem, stack, status, handle, op, source
INSERT INTO events VALUES
  (0, 1000000, 12, 2, 4321, 0, 0, 0, 8589934592, 0, 0, 0, 7516192768, NULL, NULL),
  (1, 1000000, 14, 1, 4321, 0, 0, 0, 0, 0, 1, 0, 161, NULL, NULL),
  (2, 2000000, 1, 2, 4321, 0, 0, 65536, 4194304, 10, 1, 0, 161, NULL, NULL),
  (3, 3000000, 14, 1, 4321, 0, 0, 0, 0, 0, 2, 0, 162, NULL, NULL),
  (4, 4000000, 1, 2, 4321, 0, 0, 131072, 2097152, 10, 2, 0, 162, NULL, NULL),
  (5, 5000000, 24, 3, 4321, 0, 0, 131072, 0, 0, 2, 0, 162, NULL, NULL),
  (6, 6000000, 1, 2, 4321, 0, 0, 135168, 1048576, 10, 2, 0, 162, NULL, NULL),
  (7, 7000000, 17, 4, 4321, 0, 0, 161, 0, 0, 4, 0, 225, NULL, NULL),
  (8, 8000000, 19, 5, 4321, -1, 5, 0, 0, 0, 0, 0, 225, NULL, NULL),
  (9, 9000000, 19, 5, 4321, -1, 5, 0, 0, 0, 0, 1, 225, NULL, NULL),
  (10, 10000000, 17, 4, 4321, 0, 0, 162, 1, 0, 4, 0, 226, NULL, NULL),
  (11, 11000000, 20, 6, 4321, -1, 5, 0, 0, 0, 0, 0, 226, NULL, NULL),
  (12, 12000000, 19, 5, 4321, -1, 5, 0, 0, 0, 0, 0, 226, NULL, NULL),
  (13, 13000000, 19, 5, 4321, -1, 5, 0, 0, 0, 0, 0, 226, NULL, NULL),
  (14, 14000000, 21, 7, 4321, 0, 5, 0, 0, 0, 3, 0, 0, NULL, NULL),
  (15, 15000000, 1, 8, 4321, 0, 5, 196608, 8388608, 10, 3, 0, NULL, NULL, NULL),
  (16, 16000000, 24, 9, 4321, 0, 5, 196608, 0, 0, 3, 0, 0, NULL, NULL),
  (17, 17000000, 1, 8, 4321, 0, 5, 200704, 1048576, 10, 3, 0, NULL, NULL, NULL),
  (18, 18000000, 22, 10, 4321, 0, 5, 0, 0, 0, 3, 0, 163, NULL, NULL),
  (19, 19000000, 17, 4, 4321, 0, 0, 163, 0, 0, 4, 0, 227, NULL, NULL),
  (20, 20000000, 19, 5, 4321, -1, 5, 0, 0, 0, 0, 0, 227, NULL, NULL),
  (21, 21000000, 13, 15, 4321, -1, 0, NULL, NULL, NULL, 4, 0, NULL, 1, NULL),
  (22, 22000000, 14, 1, 4321, 0, 0, 0, 0, 0, 7, 0, 164, NULL, NULL),
  (23, 23000000, 24, 3, 4321, 0, 0, 200704, 0, 0, 7, 0, 164, NULL, NULL),
  (24, 24000000, 17, 4, 4321, 0, 0, 164, 0, 0, 4, 0, 228, NULL, NULL),
  (25, 25000000, 19, 5, 4321, -1, 5, 0, 0, 0, 0, 0, 228, NULL, NULL),
  (26, 26000000, 2, 11, 4321, -1, 0, 65536, 4194304, 10, 0, 0, NULL, NULL, NULL),
  (27, 27000000, 21, 7, 4321, 0, 6, 0, 0, 0, 8, 0, 0, NULL, NULL),
  (28, 28000000, 1, 8, 4321, 0, 6, 262144, 16777216, 10, 8, 0, NULL, NULL, NULL),
  (29, 29000000, 22, 10, 4321, 0, 6, 0, 0, 0, 8, 900, 0, NULL, NULL),
  (30, 30000000, 18, 13, 4321, 0, 0, 0, 0, 0, 4, 0, 225, NULL, NULL),
  (31, 31000000, 16, 14, 4321, 0, 0, 0, 0, 0, 1, 0, 161, NULL, NULL),
  (32, 32000000, 18, 13, 4321, 0, 0, 0, 0, 0, 4, 0, 227, NULL, NULL),
  (33, 33000000, 16, 14, 4321, 0, 0, 0, 0, 0, 3, 0, 163, NULL, NULL),
  (34, 34000000, 16, 14, 4321, 0, 0, 0, 0, 0, 7, 0, 164, NULL, NULL),
  (35, 35000000, 23, 12, 4321, 0, 0, 0, 0, 0, 5, 0, NULL, NULL, NULL);
INSERT INTO devices VALUES (0, 8589934592, 7516192768, 0);
