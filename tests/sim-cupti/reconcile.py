#!/usr/bin/env python3
"""The reconciliation rule of docs/cupti.md, applied to one trace: which
allocations (and graphs) the hooks and CUPTI both saw, which CUPTI alone
saw and which library made them, and which hooked allocations CUPTI never
confirmed. The reference the reporter's port is checked against; used by
test_cupti.py.

usage: reconcile.py TRACE [--at-ns T]   prints the result as JSON"""
import argparse
import json
import sqlite3
import sys
from collections import defaultdict

ALLOC, FREE, FREE_ERROR, MARK = 1, 2, 5, 13
GRAPH_CREATE, GRAPH_CLONE, GRAPH_DESTROY, EXEC_CREATE, EXEC_DESTROY = 14, 15, 16, 17, 18
# Hooked memory kinds that CUPTI's MEMORY2 records report: device,
# managed, host_pinned, pool. Not compared: arrays (the hooks record the
# array handle, CUPTI an address), virtual memory, IPC imports, host
# registrations, graph allocations.
COMPARED_HOOK_MEMS = {1, 2, 3, 4}
COMPARED_CUPTI_MEMS = {1, 2, 3}
ON_MARK, OFF_MARK = "memtrace: CUPTI on", "memtrace: CUPTI off"
INF = float("inf")


class Life:
    """One object's life as one witness saw it: from `time` until `until`
    (INF: never ended), at `key` (an address or a handle)."""

    def __init__(self, row, key):
        self.seq, self.time, self.kind = row["seq"], row["time_ns"], row["kind"]
        self.key, self.bytes, self.mem = key, row["bytes"], row["mem"]
        self.stack = row["stack"]
        self.after = -INF  # when the previous life at this key ended
        self.until = INF
        self.match = None


def lives(rows, begins, ends, key):
    """Lives from events in seq order. A free_error puts back the life the
    free just before it ended."""
    live, ended, last_end, out = {}, {}, {}, []
    for r in rows:
        k = key(r)
        if r["kind"] in begins:
            life = Life(r, k)
            life.after = last_end.get(k, -INF)
            live[k] = life
            out.append(life)
        elif r["kind"] in ends and k in live:
            life = live.pop(k)
            life.until = r["time_ns"]
            ended[k] = (life, last_end.get(k, -INF))
            last_end[k] = r["time_ns"]
        elif r["kind"] == FREE_ERROR and k in ended:
            life, before = ended.pop(k)
            life.until = INF
            last_end[k] = before
            live[k] = life
    return out


def match(cupti, hooked, same):
    """Pairs each CUPTI life with the hooked life at the same key whose
    window (the end of the previous life there, its own end) holds the
    CUPTI life's start, when `same` agrees. Returns the CUPTI lives left
    alone."""
    by_key = defaultdict(list)
    for h in hooked:
        by_key[h.key].append(h)
    alone = []
    for c in sorted(cupti, key=lambda c: c.time):
        found = [h for h in by_key[c.key]
                 if h.match is None and h.after < c.time < h.until and same(h, c)]
        if found:
            h = min(found, key=lambda h: abs(h.time - c.time))
            h.match, c.match = c, h
        else:
            alone.append(c)
    return alone


def window(db):
    """From when to when CUPTI was on: its marks (source 1)."""
    on, off = None, INF
    for t, name in db.execute(
            "SELECT e.time_ns, o.name FROM events e JOIN ops o ON o.id = e.op "
            "WHERE e.kind = ? AND e.source = 1 ORDER BY e.seq", (MARK,)):
        if name == ON_MARK and on is None:
            on = t
        elif name == OFF_MARK:
            off = t
    return on, off


def module_of(db, stack):
    row = db.execute(
        "SELECT m.path, f.offset, f.ip FROM stack_frames s JOIN frames f ON f.id = s.frame "
        "LEFT JOIN modules m ON m.id = f.module WHERE s.stack = ? AND s.depth = 0",
        (stack,)).fetchone()
    return row if row else (None, None, None)


def memory(db, on, off, at_ns):
    rows = [dict(r) for r in db.execute(
        "SELECT seq, time_ns, kind, address, bytes, mem, stack, source FROM events "
        "WHERE kind IN (?, ?, ?) ORDER BY seq", (ALLOC, FREE, FREE_ERROR))]
    hooked = [h for h in lives([r for r in rows if r["source"] is None], {ALLOC},
                               {FREE}, lambda r: r["address"])
              if h.mem in COMPARED_HOOK_MEMS]
    cupti = [c for c in lives([r for r in rows if r["source"] == 1], {ALLOC}, {FREE},
                              lambda r: r["address"])
             if c.mem in COMPARED_CUPTI_MEMS]
    alone = match(cupti, hooked, lambda h, c: h.bytes == c.bytes)
    unconfirmed = [h for h in hooked
                   if h.match is None and on is not None and on <= h.time <= off]
    by_module = defaultdict(lambda: {"count": 0, "bytes": 0})
    listed = []
    for c in alone:
        path, offset, ip = module_of(db, c.stack)
        by_module[path]["count"] += 1
        by_module[path]["bytes"] += c.bytes
        listed.append({"seq": c.seq, "time_ns": c.time, "address": c.key, "bytes": c.bytes,
                       "mem": c.mem, "module": path, "offset": offset, "pc": ip,
                       "freed": c.until != INF})
    return {
        "hooks": len(hooked),
        "cupti": len(cupti),
        "matched": sum(1 for h in hooked if h.match is not None),
        "cupti_alone": {
            "count": len(alone),
            "bytes": sum(c.bytes for c in alone),
            "live_bytes": sum(c.bytes for c in alone if c.time <= at_ns < c.until),
            "allocations": listed,
            "by_module": dict(by_module),
        },
        "not_confirmed": {
            "count": len(unconfirmed),
            "bytes": sum(h.bytes for h in unconfirmed),
            "seqs": [h.seq for h in unconfirmed],
        },
    }


def graphs(db):
    rows = [dict(r) for r in db.execute(
        "SELECT seq, time_ns, kind, handle, NULL AS bytes, NULL AS mem, stack, source "
        "FROM events WHERE kind IN (?, ?, ?, ?, ?) ORDER BY seq",
        (GRAPH_CREATE, GRAPH_CLONE, GRAPH_DESTROY, EXEC_CREATE, EXEC_DESTROY))]

    def split(source):
        mine = [r for r in rows if r["source"] == source]
        g = lives(mine, {GRAPH_CREATE, GRAPH_CLONE}, {GRAPH_DESTROY}, lambda r: r["handle"])
        e = lives(mine, {EXEC_CREATE}, {EXEC_DESTROY}, lambda r: r["handle"])
        return g, e

    hook_g, hook_e = split(None)
    cupti_g, cupti_e = split(1)
    alone_g = match(cupti_g, hook_g, lambda h, c: True)
    alone_e = match(cupti_e, hook_e, lambda h, c: True)
    return {
        "matched": sum(1 for h in hook_g + hook_e if h.match is not None),
        "cupti_alone": {
            "graphs": len(alone_g),
            "graphs_never_destroyed": sum(1 for c in alone_g if c.until == INF),
            "execs": len(alone_e),
            "execs_never_destroyed": sum(1 for c in alone_e if c.until == INF),
        },
    }


def reconcile(path, at_ns=None):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    db.row_factory = sqlite3.Row
    try:
        on, off = window(db)
        end = db.execute("SELECT max(time_ns) FROM events").fetchone()[0] or 0
        out = {"cupti_on": on is not None, "on_ns": on, "off_ns": None if off == INF else off}
        out["allocations"] = memory(db, on, off, end + 1 if at_ns is None else at_ns)
        out["graphs"] = graphs(db)
        return out
    finally:
        db.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--at-ns", type=int, default=None,
                    help="live CUPTI-alone bytes at this time (default: the end)")
    args = ap.parse_args()
    json.dump(reconcile(args.trace, args.at_ns), sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
