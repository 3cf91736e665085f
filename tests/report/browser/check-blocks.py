#!/usr/bin/env python3
"""check-blocks.py TRACE.db PAGE.dom REPORT.json

The segment view of the HTML page (render-html.js, drawSegments) against
the trace itself: at the moment the page shows first (the headline OOM),
the segments it draws are those PyTorch's caching allocator held then
(its segment_alloc/map less segment_free/unmap, kinds 29-32), each drawn
block lies inside its segment, the blocks cover it end to end, and the
tensors' blocks are exactly the tensors live then (tensor_alloc less
free_requested, kinds 26-27): at their addresses, each at least its
request rounded up to 512 bytes as torch rounds it. Replayed here from the
rows, not from memtrace's model; the report gives only the OOM's seq."""
import json
import re
import sqlite3
import sys

TENSOR_ALLOC, FREE_REQUESTED = 26, 27
SEGMENT_ALLOC, SEGMENT_FREE, SEGMENT_MAP, SEGMENT_UNMAP = 29, 30, 31, 32


def main():
    db, dom, report = sys.argv[1:4]
    failures = []
    r = json.load(open(report))
    oom_seq = r['ooms'][0]['seq']
    conn = sqlite3.connect(db)
    segments, tensors = {}, {}
    for seq, kind, addr, size in conn.execute(
            'SELECT seq, kind, address, bytes FROM events WHERE kind BETWEEN 26 AND 33 '
            'AND seq <= ? ORDER BY seq', (oom_seq,)):
        if kind in (SEGMENT_ALLOC, SEGMENT_MAP):
            segments[addr] = size
        elif kind in (SEGMENT_FREE, SEGMENT_UNMAP):
            segments.pop(addr, None)
        elif kind == TENSOR_ALLOC:
            tensors[addr] = size
        elif kind == FREE_REQUESTED:
            tensors.pop(addr, None)

    text = open(dom, encoding='utf-8', errors='replace').read()
    view = text[text.find('<div id="segments">'):]
    view = view[:view.find('</svg>')]
    drawn = {}
    for part in view.split('data-segment="')[1:]:
        address, size = map(int, part[:part.find('"')].split(','))
        blocks = [tuple(map(int, b.split(','))) for b in re.findall(r'data-block="([0-9,]+)"', part)]
        drawn[address] = (size, blocks)
    if {a: s for a, (s, _) in drawn.items()} != segments:
        failures.append('segments drawn %r, the trace held %r'
                        % (sorted((a, s) for a, (s, _) in drawn.items()), sorted(segments.items())))
    held = {}
    for address, (size, blocks) in drawn.items():
        at = address
        for b_addr, b_size, state in blocks:
            if b_addr != at or b_size <= 0:
                failures.append('segment %#x: a block at %#x, expected one at %#x' % (address, b_addr, at))
            at = b_addr + b_size
            if state == 0:
                held[b_addr] = b_size
        if at != address + size:
            failures.append('segment %#x: its blocks end at %#x, it at %#x' % (address, at, address + size))
    if sorted(held) != sorted(tensors):
        failures.append('tensors drawn at %r, the trace has tensors live at %r' % (sorted(held), sorted(tensors)))
    for addr, size in tensors.items():
        if addr in held and held[addr] < -(-size // 512) * 512:
            failures.append('the block at %#x is %d bytes, its tensor asked for %d' % (addr, held[addr], size))
    if not held:
        failures.append('no tensor block drawn')
    for f in failures:
        print('FAIL: ' + f)
    print('%d segments, %d blocks drawn, %d of them tensors\'' % (
        len(drawn), sum(len(b) for _, b in drawn.values()), len(held)))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
