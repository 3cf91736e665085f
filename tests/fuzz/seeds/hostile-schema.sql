-- A trace whose schema only looks like memtrace's: untyped columns, no
-- primary keys, so ids repeat; every column of every row of the wrong type
-- somewhere; meta keys repeated; an event kind and memory kind for each
-- value the reader knows and some it does not; an OOM and a free for an
-- address never allocated. The fuzz target mutates it from here.
PRAGMA user_version = 1;
CREATE TABLE meta(key, value);
CREATE TABLE apis(id, name);
CREATE TABLE modules(id, path, base, build_id);
CREATE TABLE frames(id, kind, ip, module, offset, function, file, line);
CREATE TABLE stack_frames(stack, depth, frame);
CREATE TABLE threads(id, name);
CREATE TABLE events(seq INTEGER PRIMARY KEY, time_ns, kind, api, thread, device, stream,
                    address, bytes, mem, stack, status, handle, op, source);
CREATE TABLE ooms(seq, device_free, device_total);
CREATE TABLE devices(id, total_bytes, free_bytes_at_first_use, first_seq);
CREATE TABLE ops(id, name, domain);
CREATE TABLE cupti(seq, correlation_id, pc);
INSERT INTO meta VALUES ('format', 'memtrace-trace'), ('format', 'again'), ('pid', -1),
  ('end', 'exit'), ('end_monotonic_ns', 9223372036854775807), ('start_realtime_ns', -5),
  ('cmdline', X'00'), ('host', '<mt-x>'), ('depth', 'deep');
INSERT INTO apis VALUES (1, 'cudaMalloc'), (1, 'cudaFree'), (2, NULL), (-1, '<mt-x>');
INSERT INTO modules VALUES (1, '/opt/app/main', 0, 'ab'), (1, '/opt/app/other', -4096, NULL),
  (2, X'2f00', 9223372036854775807, X'ff');
INSERT INTO frames VALUES (1, 0, 4096, 1, 4096, 'main', NULL, NULL),
  (1, 1, NULL, NULL, NULL, 'dup', 'file.py', 12), (2, 0, -1, 2, -1, NULL, NULL, NULL),
  (3, 1, 'ip', 'module', 'offset', 'f', 'g', 'h'), (4, 0, 1, 1, 1, '<mt-x>', '<mt-x>', 1);
INSERT INTO stack_frames VALUES (1, 0, 1), (1, 0, 2), (1, 1, 1), (1, 2, 1), (2, 0, 3),
  (2, 5, 4), (3, -1, 1), (3, 9223372036854775807, 2), (NULL, NULL, NULL), (4, 0, 99);
INSERT INTO threads VALUES (1, '<mt-x>'), (1, 'dup'), (NULL, X'ff');
INSERT INTO events VALUES
  (0, 0, 12, 1, 1, 0, 0, 0, 1073741824, 0, 0, 0, 1073741824, NULL, NULL),
  (1, 10, 1, 1, 1, 0, 0, 4096, 1024, 1, 1, 0, NULL, 1, NULL),
  (2, 20, 1, 1, 1, 0, 0, 8192, 9223372036854775807, 2, 2, 0, NULL, NULL, NULL),
  (3, 30, 3, 1, 1, 0, 0, 0, 2048, 1, 3, 2, NULL, NULL, NULL),
  (4, 40, 2, 2, 1, -1, 0, 4096, NULL, NULL, 0, 0, NULL, NULL, NULL),
  (5, 50, 2, 2, 1, -1, 0, 123456, NULL, NULL, 0, 0, NULL, NULL, NULL),
  (6, 60, 5, 2, 1, -1, 0, 8192, NULL, NULL, 0, 1, NULL, NULL, NULL),
  (7, 70, 6, 1, 1, 0, 0, 65536, 4096, 6, 4, 0, 7, NULL, NULL),
  (8, 80, 7, 1, 1, 0, 0, 65536, 4096, 6, 4, 0, 7, NULL, NULL),
  (9, 90, 9, 1, 1, 0, 0, 0, 0, 0, 4, 0, 55, NULL, NULL),
  (10, 100, 1, 1, 1, 0, 0, 12288, 4096, 4, 4, 0, 55, NULL, NULL),
  (11, 110, 10, 1, 1, 0, 0, 0, 0, 0, 4, 0, 55, NULL, NULL),
  (12, 120, 13, 1, 1, -1, 0, 0, 0, 0, 1, 0, NULL, 2, NULL),
  (13, 130, 1, 1, 1, 0, 0, 16384, 512, 1, 1, 0, NULL, NULL, 1),
  (14, 140, 99, 1, 1, 0, 0, 0, 0, 99, 1, 0, NULL, NULL, 7),
  (15, 150, 3, 1, 1, 0, 0, 0, 4096, 1, 1, 2, NULL, NULL, NULL);
INSERT INTO ooms VALUES (3, 1024, 4096), (3, 'x', NULL), (15, -1, -1);
INSERT INTO devices VALUES (0, 1073741824, 1073741824, 0), (0, -1, -1, -1), (5000, 1, 1, 1);
INSERT INTO ops VALUES (1, '<mt-x>', X'ff'), (2, 'mark', NULL), (2, 'dup', 'd');
INSERT INTO cupti VALUES (13, 1, 2), (13, NULL, 'pc');
