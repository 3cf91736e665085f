#!/usr/bin/env python3
"""check-page.py PAGE.html PAGE.dom REPORT.json [--stacks N] [--left-out]

What the HTML page of a big trace must keep whatever the trace
(report/render/render-html.c, "Bounded size"), checked against the JSON report
of the same trace:
- the page is at most 5 MiB;
- the timeline keeps the peak exactly: its peak is the report's, and the
  highest bucket is that value; every OOM is a marker, at its time;
- at most 2000 stacks of at most 64 frames, labels of at most 200 bytes
  and at most 1 MiB of them (plus the last stack's frames);
- --stacks N: exactly N stacks; --left-out: the page says it left stacks
  out, and the flame graph draws the "(other stacks)" box they went to;
- the flame graph (in the DOM Chromium drew) has at most 2000 rectangles
  beyond its root path, and the page said when it was drawn.
Prints the page's size and the milliseconds it took to draw (a figure,
not a test: times are the benchmarks' business)."""
import json
import re
import sys

MiB = 1 << 20
failures = []


def fail(msg):
    failures.append(msg)
    print('FAIL: ' + msg)


def data_block(html):
    m = re.search(r'<script type="application/json" id="memtrace-data">(.*?)</script>', html, re.S)
    return json.loads(m.group(1))


def main():
    page, dom, report = sys.argv[1:4]
    want_stacks = int(sys.argv[sys.argv.index('--stacks') + 1]) if '--stacks' in sys.argv else None
    left_out = '--left-out' in sys.argv
    html = open(page, encoding='utf-8').read()
    d, r = data_block(html), json.load(open(report))
    size = len(html.encode('utf-8'))
    if size > 5 * MiB:
        fail('the page is %d bytes, more than 5 MiB' % size)

    tl = d['timeline']
    if tl['peak'][1] != r['totals']['peak_bytes']:
        fail('timeline peak %d, the report says %d' % (tl['peak'][1], r['totals']['peak_bytes']))
    if max(b[2] for b in tl['buckets']) != r['totals']['peak_bytes']:
        fail('the highest bucket is not the peak')
    ooms = [m for m in tl['markers'] if m[1] == 3]
    if sorted(m[0] for m in ooms) != sorted(o['time_ns'] for o in r['ooms']):
        fail('OOM markers at %r, the report has OOMs at %r'
             % ([m[0] for m in ooms], [o['time_ns'] for o in r['ooms']]))

    stacks, frames = d['stacks'], d['frames']
    if len(stacks) > 2000 or (want_stacks is not None and len(stacks) != want_stacks):
        fail('%d stacks in the page (expected %s)' % (len(stacks), want_stacks or 'at most 2000'))
    if any(len(s) > 64 for s in stacks):
        fail('a stack of %d frames' % max(len(s) for s in stacks))
    labels = [len(f[0].encode('utf-8')) for f in frames]
    if labels and max(labels) > 200:
        fail('a frame label of %d bytes' % max(labels))
    if sum(labels) + 12 * len(labels) > MiB + 64 * 212:
        fail('%d bytes of frame labels' % sum(labels))
    if left_out != (d.get('stacks_left_out', 0) > 0):
        fail('stacks left out: %d' % d.get('stacks_left_out', 0))

    text = open(dom, encoding='utf-8', errors='replace').read()
    flame = text[text.find('<div id="flame">'):]
    flame = flame[:flame.find('</svg>')]
    rects = flame.count('<rect')
    if not 1 <= rects <= 2000 + 64:
        fail('the flame graph has %d rectangles' % rects)
    # the "(other stacks)" box's label may be cut short: its class says it
    if left_out and ('class="k-other"' not in flame or 'smaller stacks are summed' not in text):
        fail('the page does not say where the stacks it left out went')
    drawn = re.search(r'data-drawn-ms="(\d+)"', text)
    if not drawn:
        fail('the page did not say it was drawn')
    print('%s: %d bytes, %d stacks (%d left out), %d frames, %d flame rectangles, drawn in %s ms'
          % (page, size, len(stacks), d.get('stacks_left_out', 0), len(frames), rects,
             drawn.group(1) if drawn else '?'))
    sys.exit(1 if failures else 0)


if __name__ == '__main__':
    main()
