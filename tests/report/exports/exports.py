#!/usr/bin/env python3
"""The exports, read back the way their tools read them:
    exports.py REPORT SQL-LOAD SRCDIR

- folded (flamegraph.pl, speedscope): every line "frame;...;frame COUNT",
  no empty frame, no control character, and per weight the counts add up
  to what the JSON report says (the OOM's live bytes, the peak, the
  device-side leaks);
- perfetto: a Chrome trace JSON object whose events have the fields the
  format needs, a counter of device bytes whose highest value is the peak,
  one point per event at the event's time for a trace of few events
  (oom.sql's values as its header derives them), one instant event per OOM;
- --diff and several traces (ranks) as JSON, the ranks as HTML;
- nothing on standard error when it is not a terminal (no progress bar)."""
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

failures = []


def fail(msg):
    failures.append(msg)
    print('FAIL: ' + msg)


def run(*args, ok=True):
    p = subprocess.run(list(args), capture_output=True)
    if ok and p.returncode != 0:
        fail('%s exited %d: %s' % (' '.join(args), p.returncode, p.stderr.decode(errors='replace')))
    return p


LINE = re.compile(r'^(.+) (\d+)$')


def parse_folded(text, where):
    """As flamegraph.pl's parser: the count after the last space."""
    total, lines = 0, 0
    for line in text.split('\n'):
        if not line:
            continue
        m = LINE.match(line)
        if not m:
            fail('%s: not a folded line: %r' % (where, line))
            continue
        frames = m.group(1).split(';')
        if any(f == '' for f in frames):
            fail('%s: empty frame in %r' % (where, line))
        if any(ord(c) < 0x20 or ord(c) == 0x7f for c in line):
            fail('%s: control character in %r' % (where, line))
        total += int(m.group(2))
        lines += 1
    if not text.endswith('\n') and text:
        fail('%s: no final newline' % where)
    return total, lines


def device_kinds(report):
    return {k for k, v in report['memory_kinds'].items() if v['counted_as_device']}


def check_folded(report, db, name):
    js = json.loads(run(report, db, '--format', 'json').stdout)
    dev = device_kinds(js)
    want = {
        'peak': js['totals']['peak_bytes'] if js['sites'] else 0,
        'leaked': sum(g['bytes'] for g in js['leaks'] if g['mem'] in dev),
    }
    if js['ooms'] and js['ooms'][-1]['holders'] is not None:
        want['oom'] = js['ooms'][-1]['live_bytes']
    for weight, expected in sorted(want.items()):
        out = run(report, db, '--format', 'folded', '--weight', weight).stdout.decode('utf-8')
        total, _ = parse_folded(out, '%s --weight %s' % (name, weight))
        # the peak: the bytes each site held then add up to the peak
        if total != expected:
            fail('%s --weight %s: counts add up to %d, expected %d' % (name, weight, total, expected))
    default = run(report, db, '--format', 'folded').stdout
    named = run(report, db, '--format', 'folded', '--weight', 'oom' if 'oom' in want else 'peak').stdout
    if default != named:
        fail('%s: the default weight is not oom-else-peak' % name)
    if 'oom' not in want:
        p = run(report, db, '--format', 'folded', '--weight', 'oom', ok=False)
        if p.returncode != 1 or b'no out-of-memory failure' not in p.stderr:
            fail('%s: --weight oom without an OOM: exit %d' % (name, p.returncode))
    return js


def check_perfetto(report, db, name, js):
    p = run(report, db, '--format', 'perfetto')
    try:
        trace = json.loads(p.stdout)
    except ValueError as e:
        fail('%s: perfetto output is not JSON: %s' % (name, e))
        return
    events = trace.get('traceEvents')
    if not isinstance(events, list) or not events:
        fail('%s: no traceEvents' % name)
        return
    counters, instants = [], []
    for e in events:
        for key in ('ph', 'pid', 'tid', 'ts', 'name'):
            if key not in e:
                fail('%s: event without %s: %r' % (name, key, e))
        if not isinstance(e.get('ts'), (int, float)) or e['ts'] < 0:
            fail('%s: bad ts in %r' % (name, e))
        if e.get('ph') == 'C':
            counters.append(e)
        elif e.get('ph') == 'i':
            instants.append(e)
            if e.get('s') not in ('g', 'p', 't'):
                fail('%s: instant event with scope %r' % (name, e.get('s')))
        elif e.get('ph') != 'M':
            fail('%s: unexpected phase %r' % (name, e.get('ph')))
    values = [c['args']['bytes'] for c in counters]
    if max(values) != js['totals']['peak_bytes']:
        fail('%s: counter peaks at %d, the report at %d' % (name, max(values), js['totals']['peak_bytes']))
    times = [c['ts'] for c in counters]
    if times != sorted(times):
        fail('%s: counter timestamps go back' % name)
    ooms = [e for e in instants if e.get('cat') == 'oom']
    if len(ooms) != len(js['ooms']):
        fail('%s: %d OOM events, the report has %d' % (name, len(ooms), len(js['ooms'])))
    # a trace of few events: one exact point per event, at its time
    total = [c for c in counters if c['name'] == 'device bytes live']
    with sqlite3.connect(db) as conn:
        times = [t for (t,) in conn.execute('SELECT time_ns FROM events ORDER BY seq')]
    if len(times) <= 4096:
        got = [round(c['ts'] * 1000) for c in total[1:]]
        if got != times:
            fail('%s: counter points at %s, the events at %s' % (name, got, times))
    if name == 'oom':
        # device bytes live after each event, as oom.sql's header derives them
        MiB = 1 << 20
        want = [0, 400, 800, 800, 1056, 800, 900, 1012, 900, 1012, 1012, 1012, 1012, 1012, 1012]
        got = [c['args']['bytes'] for c in total]
        if got != [w * MiB for w in want]:
            fail('%s: counter values %s, oom.sql says %s MiB' % (name, got, want))


def main():
    report, sqlload, src = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as tmp:
        dbs = {}
        for name, sql in (('oom', 'golden/oom.sql'), ('driver', 'golden/driver.sql'),
                          ('strings', 'golden/strings.sql'), ('hostile', 'browser/hostile.sql')):
            db = os.path.join(tmp, name + '.db')
            run(sqlload, db, os.path.join(src, sql))
            dbs[name] = db
        for name, db in sorted(dbs.items()):
            js = check_folded(report, db, name)
            check_perfetto(report, db, name, js)
            for fmt in ('text', 'html', 'folded', 'perfetto'):
                p = run(report, db, '--format', fmt, '--weight', 'peak') if fmt == 'folded' \
                    else run(report, db, '--format', fmt)
                if p.stderr and name in ('oom', 'driver'):
                    fail('%s --format %s: wrote to stderr (not a terminal): %r' % (name, fmt, p.stderr[:200]))
        # driver.sql at its peak (seq 12): thread 5152 ('loader') made the two
        # pool allocations (seq 10, 11: 16 + 8 MiB); 5151 ('train') the 6 GiB
        # preallocation (seq 0), the live VMM handle 0x1002 (seq 6, 32 MiB;
        # 0x1001 was released at seq 5, so it is in no thread) and the array
        # (seq 12, 4 MiB)
        MiB = 1 << 20
        by_thread = json.loads(run(report, dbs['driver'], '--format', 'json').stdout)['peak_by_thread']
        want = [{'thread': 5151, 'name': 'train', 'bytes': 6144 * MiB + 32 * MiB + 4 * MiB, 'allocations': 3},
                {'thread': 5152, 'name': 'loader', 'bytes': 24 * MiB, 'allocations': 2}]
        if by_thread != want:
            fail('driver: peak_by_thread %r, expected %r' % (by_thread, want))
        diff = json.loads(run(report, dbs['oom'], '--diff', dbs['driver'], '--format', 'json').stdout)
        if diff['new']['peak_bytes'] - diff['base']['peak_bytes'] != sum(s['peak_bytes_change'] for s in diff['sites']):
            fail('--diff: the sites\' changes do not add up to the change of the peak')
        ranks = json.loads(run(report, dbs['oom'], dbs['driver'], dbs['hostile'], '--format', 'json').stdout)
        order = [t['rank'] for t in ranks['traces']]
        if order != [0, 3, None] or ranks['failed_first'] != 3:
            fail('ranks: %r, failed first %r (expected [0, 3, None] by rank, 3: hostile.db, rank 3,'
                 ' fails first by the wall clock)' % (order, ranks['failed_first']))
        text = run(report, dbs['oom'], dbs['driver']).stdout.decode()
        if 'failed first' not in text:
            fail('ranks: the text does not say which rank failed first')
        page = run(report, dbs['oom'], dbs['driver'], dbs['hostile'], '--format', 'html').stdout.decode()
        if '<script' in page or 'PWNED' not in page or 'Rank 3 failed first' not in page:
            fail('ranks in html: the hostile host name is not shown as text, or rank 3 is not said to fail first')
    if failures:
        sys.exit(1)
    print('exports: all checks passed')


if __name__ == '__main__':
    main()
