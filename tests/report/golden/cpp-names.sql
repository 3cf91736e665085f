-- C++ names longer than the text report's site column: the golden test of
-- how a site's label is made to fit (cpp-names.expected.txt, and at
-- --width 60 cpp-names-60.expected.txt; text-width.sh checks the rules).
-- The names are shortened, parameter lists first, then template
-- arguments, then leading qualifiers; file:line is always whole, so that
-- two sites of one function (compMalloc.cpp:67 and :80) stay apart.
-- Module paths do not exist, so the names below are what the report shows.
--
-- MiB = 1048576. Frames (all in /nonexistent/app, the user's):
--   1 main   2 ns::Cls::allocateCompressible(void**, unsigned long, bool)
--   at compMalloc.cpp:67   3 the same function at compMalloc.cpp:80
--   4 ns::Codec::compress(...) codec.cpp:120   5 a Pool<...>::grow(...)
--   pool.hpp:31   6 ns::Model::Model(...) model.cpp:12   7 a C function
--   whose name alone is longer than the site column, legacy.c:5.
-- Stacks: S1 2 4 1; S2 3 4 1; S3 5 6 1; S4 7 1.
--
--   seq 0  1 ms  cudaMalloc 64 MiB at 0x1000, S1    live 64 MiB
--   seq 1  2 ms  mark "step 1"                       live 64 MiB
--   seq 2  3 ms  cudaMalloc 32 MiB at 0x2000, S2    live 96 MiB
--   seq 3  4 ms  cudaMalloc 16 MiB at 0x3000, S3    live 112 MiB
--   seq 4  5 ms  cudaMalloc 8 MiB at 0x4000, S4     live 120 MiB: the peak
--   seq 5  6 ms  mark "step 2"                       live 120 MiB
--
-- Sites by peak: compMalloc.cpp:67 64 MiB, compMalloc.cpp:80 32 MiB,
-- pool.hpp:31 16 MiB, legacy.c:5 8 MiB; nothing is freed: four leaks.
PRAGMA user_version = 1;
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE apis(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE modules(id INTEGER PRIMARY KEY, path TEXT NOT NULL, base INTEGER NOT NULL, build_id TEXT);
CREATE TABLE frames(id INTEGER PRIMARY KEY, kind INTEGER NOT NULL, ip INTEGER, module INTEGER, offset INTEGER, function TEXT, file TEXT, line INTEGER);
CREATE TABLE stack_frames(stack INTEGER NOT NULL, depth INTEGER NOT NULL, frame INTEGER NOT NULL, PRIMARY KEY(stack, depth)) WITHOUT ROWID;
CREATE TABLE threads(id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE events(seq INTEGER PRIMARY KEY, time_ns INTEGER NOT NULL, kind INTEGER NOT NULL, api INTEGER NOT NULL, thread INTEGER, device INTEGER, stream INTEGER, address INTEGER, bytes INTEGER, mem INTEGER, stack INTEGER, status INTEGER, handle INTEGER, op INTEGER, source INTEGER);
CREATE TABLE ooms(seq INTEGER PRIMARY KEY, device_free INTEGER, device_total INTEGER);
CREATE TABLE ops(id INTEGER PRIMARY KEY, name TEXT NOT NULL, domain TEXT);

INSERT INTO meta VALUES
  ('format', 'memtrace-trace'), ('schema_version', '1'), ('memtrace_version', '0.3.0'),
  ('pid', '31337'), ('ppid', '1'), ('host', 'gpu07'), ('rank', ''),
  ('cmdline', './app --compress'), ('exe', '/nonexistent/app'),
  ('start_realtime_ns', '1700000000000000000'), ('start_monotonic_ns', '5000000000'),
  ('depth', '64'), ('queue_capacity', '65536'), ('commit_interval_ms', '100'),
  ('events_written', '6'), ('producer_wait_ns', '0'),
  ('end_monotonic_ns', '10000000'), ('end', 'exit'), ('exit_status', '0');
INSERT INTO apis VALUES (1, 'cudaMalloc'), (2, 'cudaFree'), (3, 'memtrace_mark');
INSERT INTO modules VALUES (1, '/nonexistent/app', 93824992231424, NULL);
INSERT INTO frames VALUES
  (1, 0, 93824992235520, 1, 4096, 'main', NULL, NULL),
  (2, 0, 93824992239616, 1, 8192, 'ns::Cls::allocateCompressible(void**, unsigned long, bool)', '/src/comp/compMalloc.cpp', 67),
  (3, 0, 93824992239872, 1, 8448, 'ns::Cls::allocateCompressible(void**, unsigned long, bool)', '/src/comp/compMalloc.cpp', 80),
  (4, 0, 93824992243712, 1, 12288, 'ns::Codec::compress(ns::Buffer const&, ns::Options const&, std::shared_ptr<ns::Stream>)', '/src/comp/codec.cpp', 120),
  (5, 0, 93824992247808, 1, 16384, 'ns::detail::Pool<ns::DeviceAllocator<float, 256ul>, std::integral_constant<bool, true> >::grow(unsigned long, CUstream_st*)', '/src/pool.hpp', 31),
  (6, 0, 93824992251904, 1, 20480, 'ns::Model::Model(ns::Config const&, std::vector<ns::Layer, std::allocator<ns::Layer> > const&)', '/src/model.cpp', 12),
  (7, 0, 93824992256000, 1, 24576, 'a_c_function_whose_name_alone_is_longer_than_the_room_for_a_site_label', '/src/legacy.c', 5);
INSERT INTO stack_frames VALUES
  (1, 0, 2), (1, 1, 4), (1, 2, 1),
  (2, 0, 3), (2, 1, 4), (2, 2, 1),
  (3, 0, 5), (3, 1, 6), (3, 2, 1),
  (4, 0, 7), (4, 1, 1);
INSERT INTO threads VALUES (31337, 'app');
INSERT INTO ops VALUES (1, 'step 1', NULL), (2, 'step 2', NULL);
-- seq, time_ns, kind, api, thread, device, stream, address, bytes, mem, stack, status, handle, op, source
INSERT INTO events VALUES
  (0, 1000000, 1, 1, 31337, 0, 0, 4096, 67108864, 1, 1, 0, NULL, NULL, NULL),
  (1, 2000000, 13, 3, 31337, -1, 0, NULL, NULL, NULL, 1, 0, NULL, 1, NULL),
  (2, 3000000, 1, 1, 31337, 0, 0, 8192, 33554432, 1, 2, 0, NULL, NULL, NULL),
  (3, 4000000, 1, 1, 31337, 0, 0, 12288, 16777216, 1, 3, 0, NULL, NULL, NULL),
  (4, 5000000, 1, 1, 31337, 0, 0, 16384, 8388608, 1, 4, 0, NULL, NULL, NULL),
  (5, 6000000, 13, 3, 31337, -1, 0, NULL, NULL, NULL, 1, 0, NULL, 2, NULL);
