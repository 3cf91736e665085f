-- A free that fails and is retried, as the library writes it (schema
-- version 1): the retry names the same allocation, which a version-2
-- reader has already seen freed (v2-same.sh, where to-v2 rewrites it).
-- Then the address is allocated and freed again, and one allocation leaks.
PRAGMA user_version = 1;
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE apis(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE modules(id INTEGER PRIMARY KEY, path TEXT NOT NULL, base INTEGER NOT NULL, build_id TEXT);
CREATE TABLE frames(id INTEGER PRIMARY KEY, kind INTEGER NOT NULL, ip INTEGER, module INTEGER, offset INTEGER, function TEXT, file TEXT, line INTEGER);
CREATE TABLE stack_frames(stack INTEGER NOT NULL, depth INTEGER NOT NULL, frame INTEGER NOT NULL, PRIMARY KEY(stack, depth)) WITHOUT ROWID;
CREATE TABLE threads(id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE events(seq INTEGER PRIMARY KEY, time_ns INTEGER NOT NULL, kind INTEGER NOT NULL, api INTEGER NOT NULL, thread INTEGER, device INTEGER, stream INTEGER, address INTEGER, bytes INTEGER, mem INTEGER, stack INTEGER, status INTEGER, handle INTEGER, op INTEGER, source INTEGER);
CREATE TABLE ooms(seq INTEGER PRIMARY KEY, device_free INTEGER, device_total INTEGER);

INSERT INTO meta VALUES
  ('format', 'memtrace-trace'), ('schema_version', '1'), ('memtrace_version', '0.3.0'),
  ('pid', '4242'), ('ppid', '1'), ('host', 'gpu01'), ('rank', '0'),
  ('cmdline', './refree'), ('exe', '/nonexistent/refree'),
  ('start_realtime_ns', '1700000000000000000'), ('start_monotonic_ns', '5000000000'),
  ('depth', '64'), ('queue_capacity', '65536'), ('commit_interval_ms', '50'),
  ('events_written', '7'), ('producer_wait_ns', '0'),
  ('end_monotonic_ns', '20000000'), ('end', 'exit');
INSERT INTO apis VALUES (1, 'cudaMalloc'), (2, 'cudaFree');
INSERT INTO modules VALUES (1, '/nonexistent/refree', 93824992231424, NULL);
INSERT INTO frames VALUES
  (1, 0, 93824992235776, 1, 4352, 'load', NULL, NULL),
  (2, 0, 93824992236032, 1, 4608, 'main', NULL, NULL);
INSERT INTO stack_frames VALUES (1, 0, 1), (1, 1, 2), (2, 0, 2);
INSERT INTO threads VALUES (4242, 'refree');
INSERT INTO events VALUES
  (0, 1000000, 1, 1, 4242, 0, 0, 139637976727552, 1048576, 1, 1, 0, NULL, NULL, NULL),
  (1, 2000000, 2, 2, 4242, -1, 0, 139637976727552, 1048576, 1, 0, 0, NULL, NULL, NULL),
  (2, 2100000, 5, 2, 4242, -1, 0, 139637976727552, 1048576, 1, 0, 1, NULL, NULL, NULL),
  (3, 3000000, 2, 2, 4242, -1, 0, 139637976727552, 1048576, 1, 0, 0, NULL, NULL, NULL),
  (4, 4000000, 1, 1, 4242, 0, 0, 139637976727552, 2097152, 1, 1, 0, NULL, NULL, NULL),
  (5, 5000000, 2, 2, 4242, -1, 0, 139637976727552, 2097152, 1, 0, 0, NULL, NULL, NULL),
  (6, 6000000, 1, 1, 4242, 0, 0, 139638513598464, 4194304, 1, 2, 0, NULL, NULL, NULL);
