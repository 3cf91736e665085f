#!/usr/bin/env python3
"""The reader's two ways of reading allocs, frees, sites and frames give the same
events and frames
(report/read/trace-rows.c: the file's pages where they are safe to read, else
SQLite's rows), and so does reading them in batches (trace-batch.c):
    rows-same.py ROWS-SAME SQL-LOAD TO-V2 GEN-TRACE SRCDIR

rows-same (rows-same.c) reads each trace both ways and compares every
event; the expectations after the trace say which way the rows must have
come, so that each case is known to exercise what it is about:
- the golden traces rewritten as schema version 2: from the pages;
- values the pages leave to SQLite (text, reals, blobs, a cell on overflow
  pages, records written before ALTER TABLE ADD COLUMN), in allocs, frees,
  sites and frames: looked up;
- seq declared "INTEGER PRIMARY KEY DESC", which is not the rowid: SQLite;
- 512-byte and 64 KiB pages (trees three levels deep and one), 32 bytes
  reserved at the end of each page: from the pages;
- allocations freed long after they were made: every free finds its
  allocation without asking allocs again, with the bytes allocs has;
- a trace whose -wal holds committed rows (the program still running):
  SQLite alone, and those rows are read;
- a leaf page and an interior page zeroed: both ways fail alike."""
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

failures = []


def fail(msg):
    failures.append(msg)
    print('FAIL: ' + msg)


def same(rows_same, db, *expect):
    p = subprocess.run([rows_same, db] + list(expect), capture_output=True, text=True)
    sys.stdout.write(p.stdout)
    if p.returncode != 0:
        fail('%s (%s): %s' % (os.path.basename(db), ' '.join(expect), p.stderr.strip()))
    return p.stdout


def v2_of(tmp, sqlload, tov2, sql, name):
    db = os.path.join(tmp, name + '.db')
    subprocess.run([sqlload, db, sql], check=True)
    subprocess.run([tov2, db], check=True)
    return db


def rebuild(db, table, columns, rows, after=''):
    """table recreated without its constraints (so that any value fits)
    and given rows; after: SQL run next (ALTER TABLE...)."""
    c = sqlite3.connect(db)
    c.executescript('DROP TABLE %s; CREATE TABLE %s(%s);' % (table, table, columns))
    marks = ','.join('?' * len(rows[0]))
    c.executemany('INSERT INTO %s VALUES (%s)' % (table, marks), rows)
    if after:
        c.executescript(after)
    c.commit()
    c.close()


def leaf_and_interior(db, table):
    c = sqlite3.connect(db)
    pages = c.execute("SELECT pageno, pagetype FROM dbstat WHERE name = ? ORDER BY pageno",
                      (table,)).fetchall()
    psize = c.execute('PRAGMA page_size').fetchone()[0]
    c.close()
    leaves = [p for p, t in pages if t == 'leaf']
    interior = [p for p, t in pages if t == 'internal']
    return leaves[len(leaves) // 2], interior[-1] if interior else None, psize


def zero_page(src, dst, page, psize):
    shutil.copy(src, dst)
    with open(dst, 'r+b') as f:
        f.seek((page - 1) * psize)
        f.write(b'\0' * psize)


def main():
    rows_same, sqlload, tov2, gen, src = sys.argv[1:6]
    with tempfile.TemporaryDirectory() as tmp:
        # the golden traces as version 2
        for name in ('oom', 'driver', 'sites', 'graphs', 'cupti', 'strings'):
            db = v2_of(tmp, sqlload, tov2, os.path.join(src, 'golden', name + '.sql'), name)
            same(rows_same, db, 'pages', 'no-handover', 'site-pages', 'frame-pages')

        # values that are not plain integers, a cell too big for its page,
        # integers of every width, NULLs
        db = v2_of(tmp, sqlload, tov2, os.path.join(src, 'golden', 'oom.sql'), 'odd')
        c = sqlite3.connect(db)
        allocs = c.execute('SELECT * FROM allocs').fetchall()
        frees = c.execute('SELECT * FROM frees').fetchall()
        c.close()
        top = max(r[0] for r in allocs + frees) + 1
        odd = [(top, 5, allocs[0][2], '139637976727552', 1e3),
               (top + 1, 6, allocs[0][2], 4096.5, b'\x00\xff'),
               (top + 2, 7, allocs[0][2], b'\x01' * 6000, 4096),
               (top + 3, 8, None, None, None)]
        widths = [(top + 10 + i, -1 - i, allocs[0][2], v, -v - 1) for i, v in
                  enumerate([0, 1, 127, 32767, 8388607, 2147483647, 140737488355327,
                             9223372036854775807])]
        rebuild(db, 'allocs', 'seq INTEGER PRIMARY KEY, time_ns, site, address, bytes',
                allocs + odd + widths)
        rebuild(db, 'frees', 'seq INTEGER PRIMARY KEY, time_ns, site, alloc',
                frees + [(top + 20, 9, frees[0][2], str(top + 10)), (top + 21, 9, None, None)])
        # and sites whose handle, op or device is not an integer
        c = sqlite3.connect(db)
        sites = [r[0] for r in c.execute('SELECT id FROM sites ORDER BY id')]
        c.execute("UPDATE sites SET handle = '12', device = NULL WHERE id = ?", (sites[0],))
        c.execute('UPDATE sites SET op = 3.5, device = 1.0 WHERE id = ?', (sites[-1],))
        # and frames whose function or file is not a text, or long enough
        # for overflow pages
        frames = [r[0] for r in c.execute('SELECT id FROM frames ORDER BY id')]
        c.execute('UPDATE frames SET function = 42, file = NULL WHERE id = ?', (frames[0],))
        c.execute("UPDATE frames SET function = x'41004243', line = 'x' WHERE id = ?",
                  (frames[1],))
        c.execute('UPDATE frames SET function = ? WHERE id = ?', ('f' * 9000, frames[-1]))
        c.execute("UPDATE frames SET file = 'caf\u00e9.py' WHERE id = ?", (frames[-2],))
        c.commit()
        c.close()
        same(rows_same, db, 'pages', 'lookups', 'no-handover', 'site-pages', 'frame-pages')

        # rows written before a column was added: SQLite gives its default
        db = v2_of(tmp, sqlload, tov2, os.path.join(src, 'golden', 'oom.sql'), 'short')
        c = sqlite3.connect(db)
        frees = c.execute('SELECT seq, time_ns, site FROM frees').fetchall()
        c.close()
        rebuild(db, 'frees', 'seq INTEGER PRIMARY KEY, time_ns, site', frees,
                'ALTER TABLE frees ADD COLUMN alloc INTEGER DEFAULT 2')
        same(rows_same, db, 'pages', 'lookups')

        # seq is not the rowid: the table has an index of its own for it
        db = v2_of(tmp, sqlload, tov2, os.path.join(src, 'golden', 'oom.sql'), 'desc')
        c = sqlite3.connect(db)
        frees = c.execute('SELECT * FROM frees').fetchall()
        c.close()
        rebuild(db, 'frees', 'seq INTEGER PRIMARY KEY DESC, time_ns, site, alloc', frees)
        same(rows_same, db, 'no-handover')

        # other shapes of file
        for name, args in (('small-pages', ['--page-size', '512']),
                           ('big-pages', ['--page-size', '65536']),
                           ('reserve', ['--reserve', '32'])):
            db = os.path.join(tmp, name + '.db')
            subprocess.run([gen, '--events', '30000', '--stacks', '50', '--out', db] + args,
                           check=True)
            same(rows_same, db, 'pages', 'no-handover', 'site-pages', 'frame-pages')

        # allocations freed long after they were made (a live set of
        # 30,000): the reader keeps the last 32,768 seqs' allocations
        # apart from the older ones, and every free still finds its own
        db = os.path.join(tmp, 'long-lived.db')
        subprocess.run([gen, '--events', '200000', '--stacks', '50', '--live', '30000',
                        '--out', db], check=True)
        out = same(rows_same, db, 'pages', 'no-handover', 'no-alloc-lookups')
        c = sqlite3.connect(db)
        want, = c.execute('SELECT sum(a.bytes) FROM frees f JOIN allocs a ON a.seq = f.alloc'
                          ' WHERE f.seq - a.seq > 32768').fetchone()
        total, = c.execute('SELECT sum(a.bytes) FROM frees f JOIN allocs a'
                           ' ON a.seq = f.alloc').fetchone()
        c.close()
        if not want:
            fail('long-lived.db: no allocation outlives the window')
        if ('freed %d bytes' % total) not in out:
            fail('long-lived.db: the frees freed %d bytes, not as read: %s' % (total, out))

        # committed rows still in the -wal: SQLite reads them, the pages
        # (which do not have them) are not read
        db = os.path.join(tmp, 'small-pages.db')
        wal = os.path.join(tmp, 'wal.db')
        shutil.copy(db, wal)
        c = sqlite3.connect(wal)
        c.execute('PRAGMA journal_mode=WAL')
        c.execute('PRAGMA wal_autocheckpoint=0')
        top = c.execute('SELECT max(seq) FROM allocs').fetchone()[0] + 1000
        site = c.execute('SELECT site FROM allocs LIMIT 1').fetchone()[0]
        c.execute('INSERT INTO allocs VALUES (?, ?, ?, ?, ?)', (top, 10**9, site, 1 << 40, 77))
        c.commit()
        out = same(rows_same, wal, 'no-pages')
        if '30001 events' not in out:
            fail('wal: the row committed to the -wal is not read: %s' % out.strip())
        c.close()

        # damage: SQLite's error, both ways
        leaf, interior, psize = leaf_and_interior(db, 'allocs')
        zero_page(db, os.path.join(tmp, 'leaf.db'), leaf, psize)
        same(rows_same, os.path.join(tmp, 'leaf.db'), 'handover', 'fails')
        zero_page(db, os.path.join(tmp, 'interior.db'), interior, psize)
        same(rows_same, os.path.join(tmp, 'interior.db'), 'handover', 'fails')
    if failures:
        sys.exit(1)
    print('rows-same: all checks passed')


if __name__ == '__main__':
    main()
