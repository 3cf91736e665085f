#!/usr/bin/env python3
"""Truth under threads: the trace's order is the order the device served
the calls. The simulated driver writes what it served, under its lock, in
the order served (CUDASIM_LEDGER, tests/sim/sim-ledger.c); that ledger is
the truth here. tests/programs/race-order.c makes threads act on what the
device shows while the allocating thread is still inside its hook, so an
order taken after the unwind (as memtrace's was) loses the moments when
both blocks were live."""
import collections
import os

from mtest import TraceTest, main

ALLOC, FREE, OOM = 1, 2, 3
DEVICE = 1
RUNS = 5  # every run must be right, not most


def read_ledger(path):
    with open(path) as f:
        return [(op, int(addr, 16), int(size), int(tid))
                for op, addr, size, tid in (line.split() for line in f)]


class Ledger:
    """The device's live set replayed from its ledger: the peak, who held
    it at its first moment, and the live set after the first n lines."""

    def __init__(self, lines):
        self.lines = lines
        live, self.peak, self.peak_by_tid = {}, 0, {}
        for op, addr, size, tid in lines:
            if op == "a":
                live[addr] = (size, tid)
            else:
                del live[addr]
            total = sum(s for s, _ in live.values())
            if total > self.peak:
                self.peak = total
                self.peak_by_tid = self.by_tid(live)

    @staticmethod
    def by_tid(live):
        out = collections.Counter()
        for size, tid in live.values():
            out[tid] += size
        return dict(out)

    def live_after(self, n):
        live = {}
        for op, addr, size, tid in self.lines[:n]:
            if op == "a":
                live[addr] = (size, tid)
            else:
                del live[addr]
        return live


class Order(TraceTest):
    def run_race(self, args, env=None):
        self.runs = getattr(self, "runs", 0) + 1
        ledger = os.path.join(self.tmp, f"ledger-{self.runs}.txt")
        run = self.run_program("race-order", args, trace=f"trace-{self.runs}.db",
                               env={"CUDASIM_LEDGER": ledger, "MEMTRACE_DEPTH": "256",
                                    **(env or {})})
        self.assertEqual((run.rc, run.stdout), (0, "done\n"), run.stderr)
        return run, Ledger(read_ledger(ledger))

    def trace_order(self, trace):
        """The trace's allocations and frees of device memory, in seq order,
        as the ledger writes them. No ticket was given up on: a free written
        early is not waited for again."""
        self.assertEqual(self.db(trace).execute(
            "SELECT count(*) FROM meta WHERE key = 'order_tickets_skipped'").fetchone()[0], 0)
        rows = self.db(trace).execute(
            "SELECT kind, address, bytes, thread FROM events WHERE kind IN (?, ?) "
            "AND mem = ? AND source IS NULL ORDER BY seq", (ALLOC, FREE, DEVICE)).fetchall()
        return [("a" if k == ALLOC else "f", a, b, t) for k, a, b, t in rows]

    def assert_peak(self, rep, ledger, what):
        self.assertEqual(rep["totals"]["peak_bytes"], ledger.peak, what)
        got = {e["thread"]: e["bytes"] for e in rep["peak_by_thread"]}
        self.assertEqual(got, ledger.peak_by_tid, what)

    def tid_of_function(self, trace):
        """Which thread allocated through which alloc_by_N (one each)."""
        rep = self.report(trace)
        out = {}
        for site in rep["sites"]:
            for t in self.db(trace).execute(
                    "SELECT DISTINCT thread FROM events WHERE kind = ? AND stack IN "
                    "(SELECT stack FROM events WHERE kind = ?) AND stack = ?",
                    (ALLOC, ALLOC, site["stack"])).fetchall():
                out.setdefault(site["frames"][0]["function"], set()).add(t[0])
        return out

    def assert_oom(self, rep, ledger, nthreads, nrounds, thread_of):
        """The OOM came after the ring's lines and before main's frees:
        its live set is the ledger's live set after the ring."""
        ring_lines = nthreads * nrounds + nthreads * (nrounds - 1)
        live = ledger.live_after(ring_lines)
        (oom,) = rep["ooms"]
        self.assertEqual(oom["live_bytes"], sum(s for s, _ in live.values()))
        self.assertEqual(oom["live_allocations"], len(live))
        held = collections.Counter()
        for h in oom["holders"]:
            (tid,) = thread_of[h["frames"][0]["function"]]
            held[tid] += h["bytes"]
        self.assertEqual(dict(held), Ledger.by_tid(live))

    def test_ring_order_is_the_devices(self):
        """Eight threads, each starting its step when the device shows the
        step before done: the trace's order of device allocations and frees
        is the ledger's, line for line, in every run; the peak and who held
        it, and the live set at the OOM, are the device's."""
        for n in range(RUNS):
            run, ledger = self.run_race(["ring", "8", "40"])
            self.assertEqual(self.trace_order(run.trace), ledger.lines, f"run {n}")
            rep = self.report(run.trace)
            self.assert_peak(rep, ledger, f"run {n}")
            functions = {f: tids for f, tids in self.tid_of_function(run.trace).items()}
            self.assertEqual(len(functions), 8)
            self.assert_oom(rep, ledger, 8, 40, functions)

    def test_handoff_both_live_in_every_round(self):
        """Main frees its 256 MiB as soon as the device shows the worker's:
        both were live at once on the device in every round, and so in the
        trace's order."""
        rounds = 40
        for n in range(RUNS):
            run, ledger = self.run_race(["handoff", str(rounds)])
            order = self.trace_order(run.trace)
            self.assertEqual(order, ledger.lines, f"run {n}")
            rep = self.report(run.trace)
            self.assert_peak(rep, ledger, f"run {n}")
            self.assertEqual(ledger.peak, 512 * 2**20 + (rounds - 1) * 512)

    def test_flight_mode_keeps_the_devices_peak(self):
        """Flight mode counts in the library, in the writer's order: the
        same peak, holders at the peak and live set at the OOM. The
        handoff's peak is its last round, lost wherever that round's order
        is."""
        for n in range(RUNS):
            run, ledger = self.run_race(["handoff", "40"], env={"MEMTRACE_FLIGHT": "16M"})
            self.assert_peak(self.report(run.trace), ledger, f"flight run {n}")
        for n in range(3):
            run, ledger = self.run_race(["ring", "8", "40"], env={"MEMTRACE_FLIGHT": "16M"})
            rep = self.report(run.trace)
            self.assert_peak(rep, ledger, f"flight run {n}")
            (oom,) = rep["ooms"]
            live = ledger.live_after(8 * 40 + 8 * 39)
            self.assertEqual(oom["live_bytes"], sum(s for s, _ in live.values()))

    def test_names_every_thread_that_allocated(self):
        """Each ring thread lives only for the run, and is named from
        itself at its first event."""
        run, _ = self.run_race(["ring", "8", "4"])
        db = self.db(run.trace)
        threads = {t for (t,) in db.execute(
            "SELECT DISTINCT thread FROM events WHERE kind = ?", (ALLOC,))}
        names = dict(db.execute("SELECT id, name FROM threads"))
        self.assertEqual(len(threads), 8)
        for t in threads:
            self.assertEqual(names.get(t), "race-order", t)


class Relay(TraceTest):
    """A second racing program, written apart from race-order the same way
    (tests/programs/race-relay.c): a new thread for every allocation,
    named by itself and gone before the writer could read its name; the
    memory freed by another thread, as soon as the device shows the next
    block; three routes to the device (cudaMalloc, cudaMallocPitch, cuMemAlloc
    through the runtime's driver entry point) and two to free it."""

    ROUNDS = 40
    ROUTES = ("get_plain", "get_pitched", "get_driver")
    trace_order = Order.trace_order

    def assert_peak(self, rep, ledger, what):
        """The peak and who held it at its first moment. Past the first
        few threads the report folds the rest into one "(other)" row:
        it must hold what the ledger's other threads held."""
        self.assertEqual(rep["totals"]["peak_bytes"], ledger.peak, what)
        named = {e["thread"]: e["bytes"] for e in rep["peak_by_thread"]
                 if e["thread"] is not None}
        other = [e for e in rep["peak_by_thread"] if e["thread"] is None]
        self.assertEqual(named, {t: ledger.peak_by_tid.get(t) for t in named}, what)
        rest = {t: b for t, b in ledger.peak_by_tid.items() if t not in named}
        self.assertEqual([(e["bytes"], e["allocations"]) for e in other],
                         [(sum(rest.values()), len(rest))] if rest else [], what)

    def run_relay(self, env=None):
        self.runs = getattr(self, "runs", 0) + 1
        ledger = os.path.join(self.tmp, f"ledger-{self.runs}.txt")
        run = self.run_program("race-relay", [str(self.ROUNDS)], trace=f"trace-{self.runs}.db",
                               env={"CUDASIM_LEDGER": ledger, "MEMTRACE_DEPTH": "256",
                                    **(env or {})})
        self.assertEqual((run.rc, run.stdout), (0, "done\n"), run.stderr)
        return run, Ledger(read_ledger(ledger))

    def before_oom(self, ledger):
        """The ledger's lines up to the OOM: every round's allocation and
        the frees of the rounds (the rest are freed after it)."""
        kept = sum(1 for r in range(self.ROUNDS - 1) if r % 5 == 0)
        n = self.ROUNDS + (self.ROUNDS - 1 - kept)
        self.assertEqual(sum(1 for op, *_ in ledger.lines[:n] if op == "a"), self.ROUNDS)
        return n

    def route_of(self, ledger):
        """Which function allocated each address: round r is the r-th
        allocation on the device, and takes route r % 3."""
        allocs = [addr for op, addr, _, _ in ledger.lines if op == "a"]
        return {addr: self.ROUTES[r % 3] for r, addr in enumerate(allocs)}

    def assert_oom(self, rep, ledger):
        live = ledger.live_after(self.before_oom(ledger))
        (oom,) = rep["ooms"]
        self.assertEqual(oom["live_bytes"], sum(s for s, _ in live.values()))
        self.assertEqual(oom["live_allocations"], len(live))
        route = self.route_of(ledger)
        want = collections.Counter()
        for addr, (size, _) in live.items():
            want[route[addr]] += size
        got = collections.Counter()
        for h in oom["holders"]:
            got[h["frames"][0]["function"]] += h["bytes"]
        self.assertEqual(dict(got), dict(want))

    def test_relay_order_is_the_devices(self):
        """In every run: the trace's order of device allocations and frees
        is the ledger's, line for line; the peak, who held it, and the live
        set and its holders at the OOM are the device's."""
        for n in range(RUNS):
            run, ledger = self.run_relay()
            self.assertEqual(self.trace_order(run.trace), ledger.lines, f"run {n}")
            rep = self.report(run.trace)
            self.assert_peak(rep, ledger, f"run {n}")
            self.assert_oom(rep, ledger)

    def test_relay_flight_mode(self):
        """The same in flight mode: the peak, who held it, the OOM's live
        set."""
        for n in range(RUNS):
            run, ledger = self.run_relay(env={"MEMTRACE_FLIGHT": "16M"})
            rep = self.report(run.trace)
            self.assert_peak(rep, ledger, f"flight run {n}")
            self.assert_oom(rep, ledger)

    def test_relay_names_threads_gone_at_once(self):
        """Each relay thread names itself, allocates once and ends: every
        one that allocated is named in the threads table."""
        run, ledger = self.run_relay()
        db = self.db(run.trace)
        threads = {t for (t,) in db.execute(
            "SELECT DISTINCT thread FROM events WHERE kind = ? AND mem = ?", (ALLOC, DEVICE))}
        self.assertEqual(threads, {tid for op, _, _, tid in ledger.lines if op == "a"})
        self.assertEqual(len(threads), self.ROUNDS)
        names = dict(db.execute("SELECT id, name FROM threads"))
        self.assertEqual({t: names.get(t) for t in threads}, {t: "relay" for t in threads})


if __name__ == "__main__":
    main()
