#!/usr/bin/env python3
"""make-corpus.py [--small] OUTDIR SQLFILE...: the seed corpus for the reporter's
fuzz target and for check-corpus.py, built from traces kept as SQL text
(tests/report/golden/*.sql, tests/fuzz/seeds/*.sql).

For each trace, OUTDIR gets the database itself and variants of it, each
a file the reporter must answer with a report or one clear error, never a
crash, hang or unbounded memory:
  - schema: user_version 0, 2, -1, 2^31; each table dropped; a table
    with the wrong columns; meta without 'format'; no tables at all
  - values: huge, negative and wrong-typed numbers in every integer
    column; seq far apart; a stack of 3000 frames; depths repeated,
    negative and 2^62; references to rows that are not there (schema
    version 2: allocations naming no site, frees naming no allocation,
    seqs shared between its event tables)
  - strings: invalid UTF-8, control characters, HTML/JSON specials and
    the marker "<mt-x>" (check-corpus.py looks for it, unescaped, in the
    HTML) in every text column
  - bytes: the file cut at 0, 100, 512, 4096 bytes and in half; pages
    scribbled over; the header's page size and WAL flags changed
and, for the fuzz target's SQL mode, the SQL text itself after the line
"-- sql" (fuzz-report.c builds the database from it).
--small keeps the byte variants and a few of each other kind (SMALL): the
seeds a one-minute fuzz run can get through and still have time to mutate.
Everything is deterministic: the same inputs give the same corpus."""
import os
import random
import sqlite3
import sys

HOSTILE = ("<mt-x>\"'&\\</script><!--" + "\x1b[2J\x07\r\x00" + "\u2028\u2029"
           + "\U0001F4A5")
BAD_UTF8 = b"\xff\xfe\xc0\x80\xed\xa0\x80\xf4\x90\x80\x80<mt-x>"

SMALL = {"user-version-2", "drop-events", "drop-stack_frames", "drop-meta",
         "wrong-columns-events", "no-format", "meta-hostile", "meta-bad-utf8",
         "frames-function-hostile", "frames-function-bad-utf8", "modules-path-hostile",
         "events-kind-each", "events-mem-each", "events-seq-apart", "stack-depth-huge",
         "stack-dangling", "stack-self", "events-bytes-0", "events-address-1",
         "drop-allocs", "drop-sites", "allocs-site-dangling", "frees-alloc-dangling",
         "frees-alloc-free", "narrow-seq-clash", "sites-kind-each"}

TABLES = ["meta", "apis", "modules", "frames", "stack_frames", "threads", "events", "ooms",
          "devices", "ops", "cupti", "sites", "allocs", "frees", "other_events"]
INT_COLUMNS = {
    "events": ["seq", "time_ns", "kind", "api", "thread", "device", "stream", "address",
               "bytes", "mem", "stack", "status", "handle", "op", "source"],
    "other_events": ["seq", "time_ns", "kind", "api", "thread", "device", "stream", "address",
                     "bytes", "mem", "stack", "status", "handle", "op", "source"],
    "sites": ["id", "kind", "stack", "api", "thread", "device", "mem", "stream", "op",
              "status", "handle", "source"],
    "allocs": ["seq", "time_ns", "site", "address", "bytes"],
    "frees": ["seq", "time_ns", "site", "alloc"],
    "frames": ["id", "kind", "ip", "module", "offset", "line"],
    "modules": ["id", "base"],
    "stack_frames": ["stack", "depth", "frame"],
    "ooms": ["seq", "device_free", "device_total"],
    "devices": ["id", "total_bytes", "free_bytes_at_first_use", "first_seq"],
    "threads": ["id"],
    "apis": ["id"],
}
TEXT_COLUMNS = {
    "meta": ["value"], "apis": ["name"], "modules": ["path", "build_id"],
    "frames": ["function", "file"], "threads": ["name"], "ops": ["name", "domain"],
}
NUMBERS = ["9223372036854775807", "-9223372036854775808", "-1", "1e308", "'many'",
           "X'00ff'", "NULL"]


def tables_of(conn):
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def columns_of(conn, table):
    return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}


def build(path, sql, after=""):
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.unlink(path + suffix)
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA synchronous = OFF")
        conn.executescript(sql)
        if after:
            # no statement may stop the others: a variant is whatever applies
            for stmt in after.split(";\n"):
                try:
                    conn.execute(stmt)
                except sqlite3.Error:
                    pass
        conn.commit()
    finally:
        conn.close()


def variants(conn):
    """(name, SQL run after the trace is built)."""
    tables = tables_of(conn)
    out = []
    for v in ("0", "2", "-1", "2147483648"):
        out.append((f"user-version-{v}", f"PRAGMA user_version = {v}"))
    for t in sorted(tables):
        out.append((f"drop-{t}", f"DROP TABLE {t}"))
        out.append((f"wrong-columns-{t}",
                    f"ALTER TABLE {t} RENAME TO old_{t};\nCREATE TABLE {t}(x, y)"))
        out.append((f"empty-{t}", f"DELETE FROM {t}"))
    out.append(("no-format", "DELETE FROM meta WHERE key = 'format'"))
    out.append(("foreign-format", "UPDATE meta SET value = 'other' WHERE key = 'format'"))
    out.append(("no-tables", ";\n".join(f"DROP TABLE {t}" for t in sorted(tables))))
    # two of NUMBERS per column, in turn: every value meets many columns
    # without the corpus growing as columns x values
    k = 0
    for table, cols in INT_COLUMNS.items():
        if table not in tables:
            continue
        have = columns_of(conn, table)
        for col in cols:
            if col not in have:
                continue
            for i in (k % len(NUMBERS), (k + 3) % len(NUMBERS)):
                out.append((f"{table}-{col}-{i}",
                            f"UPDATE OR IGNORE {table} SET {col} = {NUMBERS[i]}"))
            k += 1
    for table, cols in TEXT_COLUMNS.items():
        if table not in tables:
            continue
        have = columns_of(conn, table)
        for col in cols:
            if col in have:
                out.append((f"{table}-{col}-hostile",
                            f"UPDATE {table} SET {col} = '{HOSTILE}' || {col}"))
                out.append((f"{table}-{col}-bad-utf8",
                            f"UPDATE {table} SET {col} = CAST(X'{BAD_UTF8.hex()}' AS TEXT)"))
    if "meta" in tables:
        out.append(("meta-hostile", f"UPDATE meta SET value = '{HOSTILE}' || value"))
        out.append(("meta-bad-utf8",
                    f"UPDATE meta SET value = CAST(X'{BAD_UTF8.hex()}' AS TEXT)"))
        out.append(("meta-keys-hostile", f"UPDATE meta SET key = '{HOSTILE}' || key"))
    if "events" in tables:
        out.append(("events-seq-apart", "UPDATE events SET seq = seq * 1000000000000"))
        out.append(("events-duplicated",
                    "INSERT INTO events SELECT seq + 1000000, * FROM "
                    "(SELECT time_ns, kind, api, thread, device, stream, address, bytes, mem, "
                    "stack, status FROM events)"))
        out.append(("events-reversed-time", "UPDATE events SET time_ns = -time_ns"))
        out.append(("events-all-free", "UPDATE events SET kind = 2"))
        out.append(("events-all-oom", "UPDATE events SET kind = 3"))
        out.append(("events-kind-each", "UPDATE events SET kind = seq % 20"))
        out.append(("events-mem-each", "UPDATE events SET mem = seq % 12"))
    if {"sites", "allocs", "frees", "other_events"} <= tables:
        # schema version 2: references between its tables, seqs that clash
        out.append(("allocs-site-dangling", "UPDATE allocs SET site = site + 1000"))
        out.append(("frees-alloc-dangling", "UPDATE frees SET alloc = alloc + 1000"))
        out.append(("frees-alloc-free", "UPDATE frees SET alloc = seq"))
        out.append(("sites-kind-each", "UPDATE sites SET kind = id % 26"))
        out.append(("sites-id-apart", "UPDATE sites SET id = id * 1000000000000"))
        out.append(("narrow-seq-clash", "UPDATE OR IGNORE frees SET seq = alloc;\n"
                    "UPDATE OR IGNORE other_events SET seq = 0"))
        out.append(("narrow-seq-reversed", "UPDATE OR IGNORE allocs SET seq = -seq"))
    if "stack_frames" in tables:
        out.append(("stack-deep",
                    "WITH RECURSIVE d(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM d "
                    "WHERE n < 3000) INSERT OR IGNORE INTO stack_frames "
                    "SELECT 1, 1000 + n, 1 FROM d"))
        out.append(("stack-depth-huge", "UPDATE OR IGNORE stack_frames SET depth = 4611686018427387904 + depth"))
        out.append(("stack-depth-negative", "UPDATE OR IGNORE stack_frames SET depth = -depth - 1"))
        out.append(("stack-self", "UPDATE OR IGNORE stack_frames SET frame = stack"))
        out.append(("stack-dangling", "UPDATE OR IGNORE stack_frames SET frame = frame + 1000"))
        out.append(("stack-all-one", "UPDATE OR IGNORE stack_frames SET stack = 1"))
    if "frames" in tables:
        out.append(("frames-module-self", "UPDATE frames SET module = id"))
        out.append(("frames-kind-each", "UPDATE frames SET kind = id % 4"))
        out.append(("frames-files-system",
                    "UPDATE frames SET kind = 0, offset = 4096, module = 1"))
    if "modules" in tables:
        for i, p in enumerate(("/dev/zero", "/proc/self/exe", "/", ".", "/etc/passwd",
                               "/dev/stdin", "relative/lib.so", "")):
            out.append((f"modules-path-{i}", f"UPDATE modules SET path = '{p}'"))
    return out


def scribble(data, rng, n):
    b = bytearray(data)
    for _ in range(n):
        i = rng.randrange(len(b))
        b[i] = rng.randrange(256)
    return bytes(b)


def byte_variants(name, data):
    rng = random.Random(name)
    out = []
    for cut in (0, 100, 512, 4096, len(data) // 2, len(data) - 1):
        if cut < len(data):
            out.append((f"cut-{cut}", data[:cut]))
    for i in range(6):
        out.append((f"scribble-{i}", scribble(data, rng, 1 + 20 * i)))
    if len(data) > 100:
        header = bytearray(data)
        header[16:18] = b"\x00\x01"      # page size 65536
        out.append(("page-size", bytes(header)))
        header = bytearray(data)
        header[18:20] = b"\x02\x02"      # WAL, without its -wal
        out.append(("wal-flag", bytes(header)))
        header = bytearray(data)
        header[28:32] = b"\x7f\xff\xff\xff"  # database size in pages
        out.append(("db-size", bytes(header)))
    return out


def make(outdir, sqlfiles, small=False):
    os.makedirs(outdir, exist_ok=True)
    work = os.path.join(outdir, ".work.db")
    count = 0
    for sqlfile in sqlfiles:
        with open(sqlfile) as f:
            sql = f.read()
        base = os.path.splitext(os.path.basename(sqlfile))[0]
        with open(os.path.join(outdir, f"{base}.sql-mode"), "w") as f:
            f.write("-- sql\n" + sql)
        build(work, sql)
        with open(work, "rb") as f:
            data = f.read()
        with open(os.path.join(outdir, f"{base}.db"), "wb") as f:
            f.write(data)
        count += 2
        for vname, vdata in byte_variants(base, data):
            with open(os.path.join(outdir, f"{base}.{vname}.db"), "wb") as f:
                f.write(vdata)
            count += 1
        conn = sqlite3.connect(work)
        try:
            todo = variants(conn)
        finally:
            conn.close()
        for vname, after in todo:
            if small and vname not in SMALL:
                continue
            build(work, sql, after)
            with open(work, "rb") as f:
                vdata = f.read()
            with open(os.path.join(outdir, f"{base}.{vname}.db"), "wb") as f:
                f.write(vdata)
            count += 1
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(work + suffix):
            os.unlink(work + suffix)
    return count


if __name__ == "__main__":
    args = sys.argv[1:]
    small = bool(args) and args[0] == "--small"
    if small:
        args = args[1:]
    if len(args) < 2:
        sys.exit("usage: make-corpus.py [--small] OUTDIR SQLFILE...")
    n = make(args[0], args[1:], small)
    print(f"{n} corpus files in {args[0]}")
