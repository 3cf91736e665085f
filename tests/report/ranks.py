#!/usr/bin/env python3
"""ranks.py REPORT: the table of a job's ranks (memtrace report r*.db),
checked against numbers that follow from how the traces are made.

A job of N = 256 ranks, one trace each (schema version 1, written here),
named r0.db ... r255.db and given in the shell's lexical order (r0, r1,
r10, r100, ...), as r*.db gives them. Rank r, MiB = 2^20:
  1 ms  load_weights  (64 + r % 4) MiB, never freed       (its leak)
  2 ms  forward       100 MiB, freed at 5 ms
  3 ms  gather_buffer 1024 MiB, rank 137 only, freed at 6 ms
  OOMs: rank 137 at 4 ms (512 MiB, in forward), rank 200 at 2.5 ms (256
  MiB), rank 5 at 300 ms (128 MiB); each trace starts (start_realtime_ns)
  r ms after the first, so by the wall clock 137 fails first (141 ms),
  then 200 (202.5 ms), 5 (305 ms); by time since start, 200 would.
So: peak (164 + r % 4) MiB, rank 137's 1189 MiB; the top holder at the
peak forward's 100 MiB, rank 137's gather_buffer 1 GiB; the median peak
166 MiB (the two middle peaks of 64 x 164, 63 x 165, 64 x 166, 64 x 167
and 1189 are both 166), skew 1189 / 166; the site that makes the
difference gather_buffer, 1 GiB on rank 137 against a median of 0
(load_weights' 65 MiB is under its median, 65.5 MiB). failed_first is
137: in the lexical order of the arguments rank 137 is the 43rd trace.

A second job: ranks 3, 5 and 7 given as r7, r3, r5; only rank 7 fails:
failed_first is 7 (its index in either order is another number).

Then --diff between rank 137 and rank 0 reads as between two runs, and
the traces read on 1 thread and on 4 give the same report."""
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

MiB = 1 << 20
N = 256
failures = []

SCHEMA = """
PRAGMA user_version = 1;
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE apis(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE modules(id INTEGER PRIMARY KEY, path TEXT NOT NULL, base INTEGER NOT NULL, build_id TEXT);
CREATE TABLE frames(id INTEGER PRIMARY KEY, kind INTEGER NOT NULL, ip INTEGER, module INTEGER,
  offset INTEGER, function TEXT, file TEXT, line INTEGER);
CREATE TABLE stack_frames(stack INTEGER NOT NULL, depth INTEGER NOT NULL, frame INTEGER NOT NULL,
  PRIMARY KEY(stack, depth)) WITHOUT ROWID;
CREATE TABLE threads(id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE events(seq INTEGER PRIMARY KEY, time_ns INTEGER NOT NULL, kind INTEGER NOT NULL,
  api INTEGER NOT NULL, thread INTEGER, device INTEGER, stream INTEGER, address INTEGER,
  bytes INTEGER, mem INTEGER, stack INTEGER, status INTEGER);
CREATE TABLE ooms(seq INTEGER PRIMARY KEY, device_free INTEGER, device_total INTEGER);
INSERT INTO apis VALUES (1, 'cudaMalloc'), (2, 'cudaFree');
INSERT INTO modules VALUES (1, '/nonexistent/train', 93824992231424, NULL);
INSERT INTO frames VALUES
  (1, 0, 93824992235913, 1, 4489, 'load_weights', '/src/train.c', 10),
  (2, 0, 93824992236112, 1, 4688, 'forward', '/src/train.c', 20),
  (3, 0, 93824992236288, 1, 4864, 'gather_buffer', '/src/train.c', 30),
  (4, 0, 93824992236544, 1, 5120, 'main', '/src/train.c', 40);
INSERT INTO stack_frames VALUES (1, 0, 1), (1, 1, 4), (2, 0, 2), (2, 1, 4), (3, 0, 3), (3, 1, 4);
"""
STACK = {'load_weights': 1, 'forward': 2, 'gather_buffer': 3}
OOMS = {137: (4_000_000, 512), 200: (2_500_000, 256), 5: (300_000_000, 128)}  # rank: (time, MiB)
START = 1_700_000_000_000_000_000


def fail(msg):
    failures.append(msg)
    print('FAIL: ' + msg)


def weights(r):
    return (64 + r % 4) * MiB


def peak(r):
    return weights(r) + 100 * MiB + (1024 * MiB if r == 137 else 0)


def write_trace(path, r, ooms):
    """Rank r's trace as the module docstring says; ooms: rank -> (time, MiB)."""
    ev = [(1_000_000, 1, 1, 0x10000000, weights(r), 'load_weights'),
          (2_000_000, 1, 1, 0x20000000, 100 * MiB, 'forward')]
    if r == 137:
        ev.append((3_000_000, 1, 1, 0x30000000, 1024 * MiB, 'gather_buffer'))
    if r in ooms:
        t, mib = ooms[r]
        ev.append((t, 3, 1, None, mib * MiB, 'forward'))
    ev.append((5_000_000, 2, 2, 0x20000000, 100 * MiB, 'forward'))
    if r == 137:
        ev.append((6_000_000, 2, 2, 0x30000000, 1024 * MiB, 'gather_buffer'))
    ev.sort(key=lambda e: e[0])
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    meta = {'format': 'memtrace-trace', 'schema_version': '1', 'pid': str(1000 + r),
            'host': 'node%d' % (r // 8), 'rank': str(r), 'cmdline': './train',
            'start_realtime_ns': str(START + r * 1_000_000), 'end_monotonic_ns': '400000000',
            'end': 'exit'}
    db.executemany('INSERT INTO meta VALUES (?, ?)', meta.items())
    db.execute('INSERT INTO threads VALUES (?, ?)', (1000 + r, 'train'))
    for seq, (t, kind, api, addr, size, site) in enumerate(ev):
        db.execute('INSERT INTO events VALUES (?,?,?,?,?,0,0,?,?,1,?,?)',
                   (seq, t, kind, api, 1000 + r, addr, size, STACK[site], 2 if kind == 3 else 0))
        if kind == 3:
            db.execute('INSERT INTO ooms VALUES (?, ?, ?)', (seq, 64 * MiB, 80 * 1024 * MiB))
    db.commit()
    db.close()


def run(report, *args):
    p = subprocess.run([report, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        fail('memtrace-report %s: exit %d: %s' % (' '.join(args[-3:]), p.returncode,
                                                  p.stderr.decode(errors='replace')))
    return p.stdout.decode()


def check_job(rep):
    traces = rep['traces']
    if [t['rank'] for t in traces] != list(range(N)):
        fail('the traces are not sorted by rank: %r...' % [t['rank'] for t in traces][:12])
        return
    for r, t in enumerate(traces):
        top = 'gather_buffer (train.c:30)' if r == 137 else 'forward (train.c:20)'
        want = {'peak_bytes': peak(r), 'ooms': 1 if r in OOMS else 0,
                'live_bytes_at_end': weights(r),
                'top_site': {'site': top, 'bytes': (1024 if r == 137 else 100) * MiB}}
        got = {k: t[k] for k in want}
        if got != want:
            fail('rank %d: %r, expected %r' % (r, got, want))
    if rep['failed_first'] != 137 or not rep['failed_first_path'].endswith('/r137.db'):
        fail('failed_first %r (%r), expected 137' % (rep['failed_first'], rep['failed_first_path']))
    want = {'max_peak_bytes': 1189 * MiB, 'median_peak_bytes': 166 * MiB,
            'ratio': round(1189 / 166, 4), 'heaviest_rank': 137,
            'site': {'site': 'gather_buffer (train.c:30)', 'bytes': 1024 * MiB, 'median_bytes': 0}}
    got = {k: rep['skew'][k] for k in want}
    if got != want:
        fail('skew %r, expected %r' % (got, want))


def check_text(text):
    for want in ('memtrace report: 256 traces; 3 with an out-of-memory failure',
                 'Heaviest: rank 137 peaked at 1.2 GiB, %.2f times the median peak (166.0 MiB)'
                 % (1189 / 166),
                 'The difference: gather_buffer (train.c:30) holds 1.0 GiB there, 0 B on the median rank',
                 'Rank 137 failed first: cudaMalloc of 512.0 MiB at'):
        if want not in text:
            fail('the text lacks %r' % want)
    rows = [l for l in text.splitlines() if re.match(r'^[* ] \d+ ', l)]
    if [int(l.split()[1 if l.startswith('*') else 0]) for l in rows] != list(range(N)):
        fail('the text table is not the %d ranks in order' % N)
    starred = [l for l in rows if l.startswith('*')]
    if len(starred) != 1 or starred[0].split()[1] != '137' or 'gather_buffer' not in starred[0]:
        fail('the text marks %r as failed first' % starred)


def check_html(page):
    if '<script' in page:
        fail('the ranks page has a script')
    if 'Rank 137 failed first' not in page or 'The difference: <code>gather_buffer' not in page:
        fail('the ranks page does not say which rank failed first, or what makes the difference')
    rows = re.findall(r'<tr( class="(\w+)")?><td>(\d+)</td>', page)
    if [int(r[2]) for r in rows] != list(range(N)):
        fail('the ranks page lists %d rows, not the ranks in order' % len(rows))
    marked = {int(r[2]): r[1] for r in rows if r[1]}
    if marked != {137: 'failed'}:
        fail('the ranks page marks %r' % marked)


def check_small_job(report, tmp):
    paths = []
    for r in (7, 3, 5):
        paths.append(os.path.join(tmp, 'small-r%d.db' % r))
        write_trace(paths[-1], r, {7: (1_000_000, 64)})
    rep = json.loads(run(report, *paths, '--format', 'json'))
    if [t['rank'] for t in rep['traces']] != [3, 5, 7] or rep['failed_first'] != 7:
        fail('ranks 7, 3, 5: traces %r, failed first %r (expected [3, 5, 7], 7)'
             % ([t['rank'] for t in rep['traces']], rep['failed_first']))


def check_diff(report, tmp):
    d = json.loads(run(report, os.path.join(tmp, 'r137.db'), '--diff', os.path.join(tmp, 'r0.db'),
                       '--format', 'json'))
    if (d['new']['rank'], d['base']['rank']) != (137, 0):
        fail('--diff names ranks %r and %r' % (d['new']['rank'], d['base']['rank']))
    change = {s['site']: s['peak_bytes_change'] for s in d['sites']}
    want = {'gather_buffer (train.c:30)': 1024 * MiB, 'load_weights (train.c:10)': 1 * MiB,
            'forward (train.c:20)': 0}
    if change != want or d['sites'][0]['site'] != 'gather_buffer (train.c:30)':
        fail('--diff rank 137 against rank 0: %r, expected %r' % (change, want))
    text = run(report, os.path.join(tmp, 'r137.db'), '--diff', os.path.join(tmp, 'r0.db'))
    if '(rank 137) compared with' not in text or '(rank 0) (the base)' not in text:
        fail('the text of --diff does not name the ranks: %r' % text.splitlines()[0])


def main():
    report = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(N):
            write_trace(os.path.join(tmp, 'r%d.db' % r), r, OOMS)
        paths = sorted(os.path.join(tmp, 'r%d.db' % r) for r in range(N))  # as r*.db
        if paths.index(os.path.join(tmp, 'r137.db')) != 43:
            fail('the test expects rank 137 to be the 43rd trace in lexical order')
        out = run(report, *paths, '--format', 'json', '--jobs', '4')
        try:
            rep = json.loads(out)
        except ValueError:
            fail('the ranks JSON does not parse: %r' % out[:200])
            sys.exit(1)
        check_job(rep)
        if run(report, *paths, '--format', 'json', '--jobs', '1') != out:
            fail('the traces read on 1 thread and on 4 give different reports')
        check_text(run(report, *paths))
        check_html(run(report, *paths, '--format', 'html'))
        check_small_job(report, tmp)
        check_diff(report, tmp)
    if failures:
        sys.exit(1)
    print('ranks: all checks passed')


if __name__ == '__main__':
    main()
