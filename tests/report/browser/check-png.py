#!/usr/bin/env python3
"""check-png.py SHOT.png WIDTH HEIGHT [#rrggbb=MIN_PIXELS ...]

Checks a browser screenshot without any imaging library: its size, and
that each colour given covers at least MIN_PIXELS pixels, which is how the
browser test knows that, say, the flame graph's root row (drawn in one
exact colour) is on the first screen."""
import struct
import sys
import zlib


def read_png(path):
    data = open(path, 'rb').read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        sys.exit('%s: not a PNG' % path)
    pos, idat, ihdr = 8, b'', None
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b'IHDR':
            ihdr = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        sys.exit('%s: unexpected PNG type (depth %d, colour %d, interlace %d)' % (path, depth, ctype, interlace))
    bpp = 4 if ctype == 6 else 3
    raw, stride = zlib.decompress(idat), w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def main():
    path, want_w, want_h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    w, h, bpp, rows = read_png(path)
    failed = False
    if (w, h) != (want_w, want_h):
        print('%s: %dx%d, expected %dx%d' % (path, w, h, want_w, want_h))
        failed = True
    counts = {}
    for line in rows:
        for i in range(0, len(line), bpp):
            key = bytes(line[i:i + 3])
            counts[key] = counts.get(key, 0) + 1
    for spec in sys.argv[4:]:
        colour, minimum = spec.split('=')
        key = bytes.fromhex(colour.lstrip('#'))
        n = counts.get(key, 0)
        if n < int(minimum):
            print('%s: colour %s covers %d pixels, expected at least %s' % (path, colour, n, minimum))
            failed = True
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
