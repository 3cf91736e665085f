-- A trace whose strings try to break out of the HTML report: function and
-- file names, an NVTX range name, a mark label, a thread name and the
-- command line hold "</script>", quotes, "<img onerror>", "<!--", U+2028
-- and invalid UTF-8. The browser test checks that the page shows them as
-- text and runs none of them. Real schema, version 1, with an OOM so the
-- headline, the flame graph and the table all show these names.
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

INSERT INTO meta VALUES
  ('format', 'memtrace-trace'), ('schema_version', '1'), ('memtrace_version', '0.1.0'),
  ('pid', '77'), ('host', 'node"</title><script>document.title=''PWNED''</script>'), ('rank', '3'),
  ('cmdline', 'python train.py --tag "</script><script>document.title=''PWNED''</script>"'),
  ('exe', '/usr/bin/python3'), ('start_realtime_ns', '1700000000000000000'),
  ('end_monotonic_ns', '4000000'), ('end', 'running');
INSERT INTO apis VALUES (1, 'cudaMalloc'), (2, 'cudaFree'), (3, 'nvtxMarkA');
INSERT INTO modules VALUES (1, '/opt/lib"><img src=x onerror=alert(1)>.so', 4096, NULL);
INSERT INTO frames VALUES
  (1, 0, 8192, 1, 4096, '</script><script>document.title=''PWNED''</script>', NULL, NULL),
  (2, 1, NULL, NULL, NULL, 'step"''><img src=x onerror="document.body.setAttribute(''data-pwned'',''1'')">',
     '/work/<!--train-->.py', 12),
  (3, 0, 12288, 1, 8192, CAST(X'6261642dff2d666e' AS TEXT), NULL, NULL),
  (4, 1, NULL, NULL, NULL, 'main' || char(8232) || 'line' || char(8233) || 'sep', '/work/"quoted".py', 1),
  (5, 0, 16384, 1, 12288, NULL, NULL, NULL);
INSERT INTO stack_frames VALUES
  (1, 0, 1), (1, 1, 2), (1, 2, 4),
  (2, 0, 3), (2, 1, 2), (2, 2, 4),
  (3, 0, 5), (3, 1, 4);
INSERT INTO threads VALUES (1, '<img src=x onerror=alert(2)>');
INSERT INTO ops VALUES (1, '</script><img src=x onerror="document.title=''PWNED''">', '"><b>dom</b>'),
  (2, 'mark <!-- </script> ' || CAST(X'ff' AS TEXT), NULL);
INSERT INTO devices VALUES (0, 1073741824, 1000000000, 0);
INSERT INTO events VALUES
  (0, 100000, 1, 1, 1, 0, 0, 4096, 268435456, 1, 1, 0, NULL, 1, NULL),
  (1, 500000, 13, 3, 1, 0, 0, NULL, NULL, NULL, 0, 0, NULL, 2, NULL),
  (2, 1000000, 1, 1, 1, 0, 0, 8192, 402653184, 1, 2, 0, NULL, NULL, NULL),
  (3, 1500000, 1, 1, 1, 0, 0, 12288, 134217728, 1, 3, 0, NULL, NULL, NULL),
  (4, 2000000, 2, 2, 1, -1, 0, 12288, 134217728, 1, 0, 0, NULL, NULL, NULL),
  (5, 3000000, 3, 1, 1, 0, 0, NULL, 536870912, 1, 2, 2, NULL, 1, NULL);
INSERT INTO ooms VALUES (5, 268435456, 1073741824);
