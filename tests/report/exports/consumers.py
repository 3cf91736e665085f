#!/usr/bin/env python3
"""The exports for other tools, read by those tools or by readers that
follow their rules:

    consumers.py torch|speedscope|pprof|perfetto-job REPORT SQL-LOAD SRCDIR

- torch: the pickle has only the opcodes PyTorch's memory viewer
  (MemoryViz.js) unpickles itself, protocol 2 to 4 (pickletools); it
  loads with Python's pickle; every segment has PyTorch's fields and its
  blocks add up to its total_size (what _memory_viz.py's segsum asserts);
  the device traces replay backwards from the segments as the viewer's
  segment view does, every block inside a segment at every step; the
  live bytes match the JSON report's at the moment (the OOM, else the
  end).
- speedscope: speedscope's file format: frames shared, one sampled
  profile per weight whose weights add up to endValue and to the folded
  export's counts.
- pprof: `go tool pprof -raw` (Debian's golang-go) reads the gzipped
  profile; its samples add up per weight to what the JSON report says;
  skipped (77) without go.
- perfetto-job: several traces give one Perfetto file, one process per
  rank, and a single trace names its rank in distributedInfo; a trace of
  two devices has a counter per device with the bytes oom.sql implies.

The traces are the golden SQL traces (graphs.sql: device memory that is
all graph memory) plus the edge cases: a trace with no device memory, a
trace killed half-written (end = running): each export of each must be
valid and readable (empty where there is nothing)."""
import gzip
import io
import json
import os
import pickle
import pickletools
import shutil
import subprocess
import sys
import tempfile

failures = []

# MemoryViz.js's unpickler: the opcodes it reads.
VIEWER_OPCODES = {
    'PROTO', 'APPEND', 'APPENDS', 'LIST', 'TUPLE', 'NEWFALSE', 'NEWTRUE', 'NONE', 'BINGET',
    'BININT', 'BININT1', 'BININT2', 'EMPTY_DICT', 'EMPTY_LIST', 'FRAME', 'LONG1',
    'LONG_BINGET', 'MARK', 'MEMOIZE', 'BINPUT', 'LONG_BINPUT', 'SETITEMS', 'SETITEM', 'DICT',
    'SHORT_BINUNICODE', 'BINUNICODE', 'STOP', 'EMPTY_TUPLE', 'TUPLE1', 'TUPLE2', 'TUPLE3',
    'BINFLOAT',
}
SEGMENT_KEYS = {'device', 'address', 'total_size', 'allocated_size', 'active_size',
                'requested_size', 'stream', 'segment_type', 'segment_pool_id', 'is_expandable',
                'frames', 'blocks'}
BLOCK_KEYS = {'address', 'size', 'requested_size', 'state', 'frames'}
ACTIONS = {'alloc', 'free_requested', 'free_completed', 'segment_alloc', 'segment_free',
           'segment_map', 'segment_unmap', 'oom', 'snapshot'}


def fail(msg):
    failures.append(msg)
    print('FAIL: ' + msg)


def run(*args, ok=True):
    p = subprocess.run(list(args), capture_output=True)
    if ok and p.returncode != 0:
        fail('%s exited %d: %s' % (' '.join(args), p.returncode,
                                   p.stderr.decode(errors='replace')))
    return p


def report_json(report, db):
    return json.loads(run(report, db, '--format', 'json').stdout)


def device_kinds(js):
    return {k for k, v in js['memory_kinds'].items() if v['counted_as_device']}


# ---- torch ----

def check_frames(frames, where):
    if not isinstance(frames, list):
        fail('%s: frames is %r' % (where, type(frames)))
        return
    for f in frames:
        if set(f) != {'filename', 'line', 'name'} or not isinstance(f['line'], int):
            fail('%s: frame %r' % (where, f))


def replay(snapshot, device, where):
    """The viewer's segment view: from the segments (the moment), undo the
    device trace's entries from the last to the first; every block must
    lie in a segment after each step, and a free_requested must find its
    block."""
    segments = {}  # address -> size
    blocks = {}  # address -> size
    for seg in snapshot['segments']:
        if seg['device'] != device:
            continue
        segments[seg['address']] = seg['total_size']
        for b in seg['blocks']:
            if b['state'] in ('active_allocated', 'active_pending_free'):
                blocks[b['address']] = b['size']

    def inside(addr):
        return any(a <= addr < a + n for a, n in segments.items())

    for i, e in reversed(list(enumerate(snapshot['device_traces'][device]))):
        a = e['action']
        if a == 'alloc':
            blocks.pop(e['addr'], None)
        elif a == 'free_completed':
            blocks[e['addr']] = e['size']
        elif a == 'free_requested':
            if e['addr'] not in blocks:
                fail('%s: entry %d, free_requested of a block the replay does not have' % (where, i))
        elif a in ('segment_free', 'segment_unmap'):
            segments[e['addr']] = e['size']
        elif a in ('segment_alloc', 'segment_map'):
            segments.pop(e['addr'], None)
        for addr in blocks:
            if not inside(addr):
                fail('%s: entry %d leaves block 0x%x in no segment' % (where, i, addr))
                return


def check_torch(report, db, name):
    out = run(report, db, '--format', 'torch-snapshot').stdout
    try:
        ops = [op for op, _, _ in pickletools.genops(out)]
    except Exception as e:  # pickletools says what is wrong
        fail('%s: not a pickle: %s' % (name, e))
        return
    names = {op.name for op in ops}
    if names - VIEWER_OPCODES:
        fail('%s: opcodes the viewer cannot read: %s' % (name, sorted(names - VIEWER_OPCODES)))
    for op, arg, _ in pickletools.genops(out):
        if op.name == 'PROTO' and not 2 <= arg <= 4:
            fail('%s: protocol %d' % (name, arg))
    snap = pickle.loads(out)
    if set(snap) != {'segments', 'device_traces'}:
        fail('%s: keys %s' % (name, sorted(snap)))
        return
    live = 0
    for i, seg in enumerate(snap['segments']):
        where = '%s segment %d' % (name, i)
        if set(seg) != SEGMENT_KEYS:
            fail('%s: keys %s' % (where, sorted(seg)))
            continue
        check_frames(seg['frames'], where)
        if sum(b['size'] for b in seg['blocks']) != seg['total_size']:
            fail('%s: blocks add up to %d, not %d' % (where, sum(b['size'] for b in seg['blocks']),
                                                      seg['total_size']))
        if seg['segment_type'] not in ('large', 'small') or len(seg['segment_pool_id']) != 2:
            fail('%s: type %r pool %r' % (where, seg['segment_type'], seg['segment_pool_id']))
        addr = seg['address']
        for b in seg['blocks']:
            if set(b) != BLOCK_KEYS or b['address'] != addr:
                fail('%s: block %r' % (where, {k: v for k, v in b.items() if k != 'frames'}))
            if b['state'] not in ('active_allocated', 'active_pending_free', 'inactive'):
                fail('%s: state %r' % (where, b['state']))
            check_frames(b['frames'], where)
            addr += b['size']
            live += b['size'] if b['state'] == 'active_allocated' else 0
    for d, trace in enumerate(snap['device_traces']):
        for j, e in enumerate(trace):
            where = '%s device %d entry %d' % (name, d, j)
            if e.get('action') not in ACTIONS:
                fail('%s: action %r' % (where, e.get('action')))
                continue
            want = {'action', 'size', 'stream', 'time_us', 'frames',
                    'device_free' if e['action'] == 'oom' else 'addr'}
            if set(e) != want:
                fail('%s: keys %s' % (where, sorted(e)))
            check_frames(e.get('frames', []), where)
        replay(snap, d, '%s device %d' % (name, d))
    js = report_json(report, db)
    expected = js['ooms'][-1]['live_bytes'] if js['ooms'] else None
    if expected is not None and js['ooms'][-1]['holders'] is not None:
        # at the OOM: the holders of the OOM, less what has no address to show
        shown = sum(h['bytes'] for h in js['ooms'][-1]['holders'])
        if live > shown:
            fail('%s: %d bytes live in the snapshot, the OOM held %d' % (name, live, shown))


# ---- speedscope ----

def check_speedscope(report, db, name):
    try:
        doc = json.loads(run(report, db, '--format', 'speedscope').stdout)
    except ValueError as e:
        fail('%s: speedscope output is not JSON: %s' % (name, e))
        return
    if doc.get('$schema') != 'https://www.speedscope.app/file-format-schema.json':
        fail('%s: $schema %r' % (name, doc.get('$schema')))
    frames = doc['shared']['frames']
    for f in frames:
        if not isinstance(f.get('name'), str):
            fail('%s: frame %r' % (name, f))
    if not 0 <= doc['activeProfileIndex'] < max(1, len(doc['profiles'])):
        fail('%s: activeProfileIndex %r' % (name, doc['activeProfileIndex']))
    weights = {'peak': 'held at the peak', 'oom': 'at the last OOM', 'leaked': 'still live'}
    for p in doc['profiles']:
        if p['type'] != 'sampled' or p['unit'] != 'bytes':
            fail('%s: profile %s/%s' % (name, p['type'], p['unit']))
        if len(p['samples']) != len(p['weights']) or sum(p['weights']) != p['endValue']:
            fail('%s: %s: weights add up to %d, endValue %d' % (name, p['name'], sum(p['weights']),
                                                                p['endValue']))
        for s in p['samples']:
            if not s or any(not 0 <= i < len(frames) for i in s):
                fail('%s: %s: a sample %r' % (name, p['name'], s))
        weight = [w for w, text in weights.items() if text in p['name']]
        if len(weight) != 1:
            fail('%s: profile name %r' % (name, p['name']))
            continue
        folded = run(report, db, '--format', 'folded', '--weight', weight[0]).stdout.decode()
        # lines as flamegraph.pl splits them: at \n only
        total = sum(int(line.rsplit(' ', 1)[1]) for line in folded.split('\n') if line)
        if total != p['endValue']:
            fail('%s: %s: %d, folded says %d' % (name, weight[0], p['endValue'], total))


# ---- pprof ----

def pprof_raw(path):
    """go tool pprof -raw: the sample types line and the samples, each
    (values, location ids, leaf first)."""
    p = subprocess.run(['go', 'tool', 'pprof', '-raw', path], capture_output=True, text=True)
    if p.returncode != 0:
        fail('go tool pprof -raw %s: %s' % (path, p.stderr))
        return None, []
    lines = p.stdout.splitlines()
    if 'Samples:' not in lines:
        return '', []
    start = lines.index('Samples:')
    samples = []
    for line in lines[start + 2:]:
        if line.startswith('Locations'):
            break
        if ':[' in line:  # a label line of the sample above: memory:[device]
            continue
        head, tail = line.split(':', 1)
        samples.append(([int(v) for v in head.split()], [int(x) for x in tail.split()]))
    return lines[start + 1], samples


def check_pprof(report, db, name, tmp):
    js = report_json(report, db)
    dev = device_kinds(js)
    want = {
        'peak': js['totals']['peak_bytes'] if js['sites'] else 0,
        'leaked': sum(g['bytes'] for g in js['leaks'] if g['mem'] in dev),
    }
    if js['ooms'] and js['ooms'][-1]['holders'] is not None:
        want['oom'] = js['ooms'][-1]['live_bytes']
    for weight, expected in sorted(want.items()):
        path = os.path.join(tmp, '%s-%s.pb.gz' % (name, weight))
        run(report, db, '--format', 'pprof', '--weight', weight, '-o', path)
        with open(path, 'rb') as f:
            data = f.read()
        if data[:2] != b'\x1f\x8b':
            fail('%s --weight %s: not gzip' % (name, weight))
            continue
        gzip.decompress(data)
        types, samples = pprof_raw(path)
        if types is None:
            continue
        if 'allocations/count' not in str(types) or 'space/bytes' not in str(types):
            fail('%s: sample types %r' % (name, types))
        total = sum(v[1] for v, _ in samples)
        if total != expected:
            fail('%s --weight %s: pprof samples add up to %d, expected %d'
                 % (name, weight, total, expected))


# ---- perfetto, several traces ----

def check_perfetto_job(report, dbs):
    names = sorted(dbs)
    p = run(report, *[dbs[n] for n in names], '--format', 'perfetto')
    try:
        job = json.loads(p.stdout)
    except ValueError as e:
        fail('perfetto job: not JSON: %s' % e)
        return
    procs = [e for e in job['traceEvents'] if e['ph'] == 'M' and e['name'] == 'process_name']
    if len(procs) != len(names) or len({e['pid'] for e in procs}) != len(names):
        fail('perfetto job: %d process names for %d traces' % (len(procs), len(names)))
    for e in procs:
        if not e['args']['name'].startswith('rank '):
            fail('perfetto job: process %r' % e['args']['name'])
    for e in job['traceEvents']:
        if e['ph'] == 'i' and e.get('s') not in ('p', 't'):
            fail('perfetto job: an instant event not scoped to its process: %r' % e)
    one = json.loads(run(report, dbs[names[0]], '--format', 'perfetto').stdout)
    if not isinstance(one.get('distributedInfo', {}).get('rank'), int):
        fail('perfetto: a single trace without distributedInfo.rank: %r' % one.get('distributedInfo'))


def counter_line(trace, name):
    """A counter track's values in time order."""
    pts = [(e['ts'], e['args']['bytes']) for e in trace['traceEvents']
           if e['ph'] == 'C' and e['name'] == name]
    return [b for _, b in sorted(pts, key=lambda x: x[0])]


def check_perfetto_devices(report, sqlload, src, tmp):
    """oom.sql with its scratch buffer (seq 3: 256 MiB, freed at seq 4) on
    device 1: a counter per device beside the total. Device 0 reaches
    1012 MiB (400 + 400 + 100 + 112, the failed free of seq 8 keeping the
    112 live) and ends there; device 1 goes 0, 256 MiB, 0; the total's
    peak is the 1056 MiB of seq 3. One device: no per-device line."""
    mib = 1048576
    with open(os.path.join(src, 'golden', 'oom.sql')) as f:
        sql = f.read() + "\nUPDATE events SET device = 1 WHERE seq IN (3, 4);\n"
    path = os.path.join(tmp, 'two-devices.sql')
    with open(path, 'w') as f:
        f.write(sql)
    db = os.path.join(tmp, 'two-devices.db')
    run(sqlload, db, path)
    two = json.loads(run(report, db, '--format', 'perfetto').stdout)
    gpu0, gpu1 = counter_line(two, 'GPU 0 bytes live'), counter_line(two, 'GPU 1 bytes live')
    total = counter_line(two, 'device bytes live')
    if not gpu0 or max(gpu0) != 1012 * mib or gpu0[-1] != 1012 * mib:
        fail('perfetto: GPU 0 line %r, expected a peak and end of %d' % (gpu0, 1012 * mib))
    if not gpu1 or max(gpu1) != 256 * mib or gpu1[-1] != 0:
        fail('perfetto: GPU 1 line %r, expected 256 MiB then 0' % gpu1)
    if not total or max(total) != 1056 * mib:
        fail('perfetto: the total line %r, expected a peak of %d' % (total, 1056 * mib))
    db1 = os.path.join(tmp, 'oom-one.db')
    run(sqlload, db1, os.path.join(src, 'golden', 'oom.sql'))
    one = json.loads(run(report, db1, '--format', 'perfetto').stdout)
    names = {e['name'] for e in one['traceEvents'] if e['ph'] == 'C'}
    if names != {'device bytes live'}:
        fail('perfetto: one device gives counters %r' % sorted(names))


def without_events(sql):
    """The golden trace's schema and small tables, without its events."""
    out, skipping = [], False
    for line in sql.splitlines():
        if line.startswith('INSERT INTO events') or line.startswith('INSERT INTO ooms'):
            skipping = True
        if not skipping:
            out.append(line)
        elif line.rstrip().endswith(';'):
            skipping = False
    return '\n'.join(out)


def edge_traces(sqlload, src, tmp):
    """The cases with little to show (graphs.sql is already one whose
    device memory is all graph memory): no device memory at all, and a
    trace killed half-written."""
    with open(os.path.join(src, 'golden', 'graphs.sql')) as f:
        golden = f.read()
    # seq, time_ns, kind, api, thread, device, stream, address, bytes, mem, stack, status,
    # handle, op, source: one pinned host allocation, nothing on the device
    host = without_events(golden) + """
INSERT INTO events VALUES (0, 1000000, 1, 2, 4321, 0, 0, 4096, 1048576, 3, 1, 0, NULL, NULL, NULL);
"""
    killed = golden + "\nUPDATE meta SET value = 'running' WHERE key = 'end';\n"
    dbs = {}
    for name, sql in (('host-only', host), ('killed', killed)):
        path = os.path.join(tmp, name + '.sql')
        with open(path, 'w') as f:
            f.write(sql)
        db = os.path.join(tmp, name + '.db')
        p = run(sqlload, db, path, ok=False)
        if p.returncode == 0:
            dbs[name] = db
        else:
            fail('%s: the edge trace does not load: %s' % (name, p.stderr.decode()))
    return dbs


def main():
    what, report, sqlload, src = sys.argv[1:5]
    if what == 'pprof' and not shutil.which('go'):
        print('SKIP: no go (Debian: golang-go) to run go tool pprof')
        sys.exit(77)
    with tempfile.TemporaryDirectory() as tmp:
        dbs = {}
        for name, sql in (('oom', 'golden/oom.sql'), ('driver', 'golden/driver.sql'),
                          ('graphs', 'golden/graphs.sql'), ('strings', 'golden/strings.sql'),
                          ('hostile', 'browser/hostile.sql')):
            db = os.path.join(tmp, name + '.db')
            run(sqlload, db, os.path.join(src, sql))
            dbs[name] = db
        dbs.update(edge_traces(sqlload, src, tmp))
        for name, db in sorted(dbs.items()):
            if what == 'torch':
                check_torch(report, db, name)
            elif what == 'speedscope':
                check_speedscope(report, db, name)
            elif what == 'pprof':
                check_pprof(report, db, name, tmp)
        if what == 'perfetto-job':
            check_perfetto_job(report, {k: dbs[k] for k in ('oom', 'driver', 'graphs')})
            check_perfetto_devices(report, sqlload, src, tmp)
    if failures:
        sys.exit(1)
    print('%s: all checks passed' % what)


if __name__ == '__main__':
    main()
