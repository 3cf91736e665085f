"""Durability: a program killed with SIGKILL at random points, or ending
by abort(), a segfault, exit() from a thread, _exit(), os._exit() in
Python or an uncaught C++ exception, leaves a trace that opens, passes
PRAGMA integrity_check, holds every event older than the documented loss
window and every out-of-memory event, and says how the process ended
where memtrace can know (meta 'end': 'exit' after a normal exit, else
'running')."""
import collections
import json
import os
import random
import signal
import subprocess
import sys
import time

import mtest
import rel

MiB = 1 << 20


def read_log(path):
    """churn --log lines -> {tid: {kind: [ns, ...]}}."""
    calls = collections.defaultdict(lambda: collections.defaultdict(list))
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[0] in "AFO" and line.endswith("\n"):
                calls[int(parts[1])][parts[0]].append(int(parts[2]))
    return calls


class Sigkill(mtest.TraceTest):
    KIND = {"A": 1, "F": 2, "O": 3}

    def kill_once(self, rng, i, pace_us=200, extra=None):
        trace = os.path.join(self.tmp, f"k{i}.db")
        log = os.path.join(self.tmp, f"k{i}.log")
        early = i % 3 == 0  # a third of the kills land while the trace is being made
        with open(log, "w") as out:
            proc = subprocess.Popen(
                [rel.rel_program("churn"), "2", "30", "--log", "--oom-every", "40",
                 "--pace-us", str(pace_us)],
                env=rel.traced_env(trace, extra), stdout=out, stderr=subprocess.DEVNULL)
        try:
            if early:
                time.sleep(rng.uniform(0, 0.03))
            else:
                rel.wait_for_line(log, "ready")
                time.sleep(rng.uniform(0.05, 0.6))
            kill_ns = time.monotonic_ns()
            proc.send_signal(signal.SIGKILL)
        finally:
            proc.kill()
            proc.wait()
        self.assertEqual(proc.returncode, -signal.SIGKILL)
        return trace, read_log(log), kill_ns

    def check_run(self, trace, calls, kill_ns):
        """Returns (events in the trace, age in ns of the oldest lost call)."""
        state = rel.trace_state(trace)
        returned = any(c["A"] or c["O"] for c in calls.values())
        if state != "trace":
            # a hooked call returns only after the trace's schema is committed
            self.assertFalse(returned, f"{trace}: {state} after a call returned")
            if state != "absent":
                # the reporter: one clear line, no crash
                proc = rel.report(trace)
                self.assertEqual(proc.returncode, 1, proc.stderr)
                self.assertRegex(proc.stderr, r"^memtrace report: [^\n]*\n$")
                if state == "unfinished":
                    self.assertIn("was left half-created", proc.stderr)
            self.states[state] += 1
            return 0, 0
        self.states[state] += 1
        conn = rel.open_ro(trace)
        self.addCleanup(conn.close)
        n, top = conn.execute("SELECT count(*), coalesce(max(seq), -1) FROM events").fetchone()
        self.assertEqual(n, top + 1, "events are not seq 0..n-1 without gaps")
        self.assertEqual(rel.meta(conn)["end"], "running")
        counts = collections.Counter(conn.execute(
            "SELECT thread, kind FROM events WHERE kind IN (1, 2, 3)"))
        oom_rows = conn.execute("SELECT count(*) FROM ooms").fetchone()[0]
        oldest_lost = 0
        for tid, kinds in calls.items():
            for k, times in kinds.items():
                have = counts[(tid, self.KIND[k])]
                # recorded before it returned (an allocation) or before it
                # ran (a free): at most the call in flight is extra
                self.assertLessEqual(have, len(times) + 1, f"thread {tid} {k}")
                if k == "O":
                    # committed before the call returned: never lost
                    self.assertGreaterEqual(have, len(times), f"thread {tid}: OOM lost")
                    continue
                due = sum(1 for t in times if t < kill_ns - rel.LOSS_TOLERANCE_NS)
                self.assertGreaterEqual(
                    have, due, f"thread {tid}: {due - have} {k} calls older than "
                    f"{rel.LOSS_TOLERANCE_NS // 1_000_000} ms missing")
                if have < len(times):
                    oldest_lost = max(oldest_lost, kill_ns - times[have])
        ooms_logged = sum(len(k["O"]) for k in calls.values())
        self.assertGreaterEqual(oom_rows, ooms_logged)
        proc = rel.report(trace)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return n, oldest_lost

    def test_sigkill_at_random_points(self):
        runs = rel.knob("MEMTRACE_SOAK_KILLS", 30)
        seed = rel.knob("MEMTRACE_SOAK_SEED", 20261129)
        rng = random.Random(seed)
        worst = events = traces = 0
        self.states = collections.Counter()
        for i in range(runs):
            trace, calls, kill_ns = self.kill_once(rng, i)
            with self.subTest(run=i, seed=seed):
                n, lost = self.check_run(trace, calls, kill_ns)
                worst = max(worst, lost)
                events += n
                traces += n > 0
            for f in os.listdir(self.tmp):
                os.unlink(os.path.join(self.tmp, f))
        rel.figure("sigkill", runs=runs, seed=seed, traces_with_events=traces,
                   events_checked=events, states=dict(self.states), oldest_lost_ms=round(worst / 1e6, 1))


class Endings(mtest.TraceTest):
    """endings.c and endings-cxx.cc: 3 x 1 MiB and one 2 TiB OOM, then the
    ending; with a 200 ms pause first, everything must be in the trace."""

    def run_ending(self, prog, mode, sleep_ms, want_rc):
        trace = os.path.join(self.tmp, f"{mode}-{sleep_ms}.db")
        args = [prog, mode, str(sleep_ms)]
        plain = subprocess.run(args, env=mtest.sim_env(), capture_output=True, text=True,
                               timeout=60)
        traced = subprocess.run(args, env=rel.traced_env(trace), capture_output=True,
                                text=True, timeout=60)
        self.assertEqual(plain.returncode, want_rc, plain.stderr)
        self.assertEqual((traced.returncode, traced.stdout), (plain.returncode, plain.stdout))
        self.assertEqual(traced.stdout, f"ending {mode}\n")
        return trace

    def check_trace(self, trace, end, all_events, want_rc):
        self.assertEqual(rel.trace_state(trace), "trace")
        conn = rel.open_ro(trace)
        self.addCleanup(conn.close)
        ooms = conn.execute("SELECT e.bytes FROM events e JOIN ooms o ON o.seq = e.seq "
                            "WHERE e.kind = 3").fetchall()
        self.assertEqual(ooms, [(2 << 40,)])
        allocs = conn.execute("SELECT bytes FROM events WHERE kind = 1 AND mem = 1").fetchall()
        if all_events:
            self.assertEqual(allocs, [(MiB,)] * 3)
        meta = rel.meta(conn)
        self.assertEqual(meta["end"], end)
        # the status given to exit() is known; after _exit or a signal it is not
        self.assertEqual(meta.get("exit_status"), str(want_rc) if end == "exit" else None)
        proc = rel.report(trace, "json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        text = rel.report(trace, "text")
        self.assertEqual(text.returncode, 0, text.stderr)
        if end != "exit":
            story = "trace not closed: killed, crashed or still running"
        elif want_rc:
            story = f"the program exited with status {want_rc}"
        else:
            story = "the program exited normally"
        self.assertIn(story, text.stdout)

    def check(self, mode, want_rc, end, prog="endings"):
        for sleep_ms in (0, 200):
            with self.subTest(mode=mode, sleep_ms=sleep_ms):
                trace = self.run_ending(rel.rel_program(prog), mode, sleep_ms, want_rc)
                self.check_trace(trace, end, all_events=sleep_ms > 0 or end == "exit",
                                 want_rc=want_rc)

    def test_return(self):
        self.check("return", 0, "exit")

    def test_exit(self):
        self.check("exit", 3, "exit")

    def test_exit_from_a_thread(self):
        self.check("thread-exit", 4, "exit")

    def test_exit_from_a_thread_while_others_allocate(self):
        # exit() runs the library's destructor while other threads are
        # still inside hooks, some waiting for an OOM commit
        for i in range(rel.knob("MEMTRACE_SOAK_BUSY_EXITS", 10)):
            with self.subTest(run=i):
                trace = self.run_ending(rel.rel_program("endings"), "busy-exit", 0, 5)
                self.assertEqual(rel.trace_state(trace), "trace")

    def test__exit(self):
        self.check("_exit", 6, "running")

    def test_abort(self):
        self.check("abort", -signal.SIGABRT, "running")

    def test_segfault(self):
        self.check("segv", -signal.SIGSEGV, "running")

    def test_kill_self(self):
        self.check("kill", -signal.SIGKILL, "running")

    def test_uncaught_cxx_exception(self):
        if not os.path.exists(rel.rel_program("endings-cxx")):
            self.skipTest("no C++ compiler: endings-cxx was not built")
        self.check("throw", -signal.SIGABRT, "running", prog="endings-cxx")
        self.check("noexcept", -signal.SIGABRT, "running", prog="endings-cxx")

    def test_python_os__exit(self):
        code = (
            "import ctypes, os, sys, time\n"
            "rt = ctypes.CDLL('libcudart.so.13')\n"
            "p = ctypes.c_void_p()\n"
            "for i in range(3):\n"
            "    assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(1 << 20)) == 0\n"
            "assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(2 << 40)) == 2\n"
            "print('ending os._exit', flush=True)\n"
            "time.sleep(int(sys.argv[1]) / 1000)\n"
            "os._exit(9)\n")
        for sleep_ms in (0, 200):
            with self.subTest(sleep_ms=sleep_ms):
                trace = os.path.join(self.tmp, f"py-{sleep_ms}.db")
                args = [sys.executable, "-c", code, str(sleep_ms)]
                plain = subprocess.run(args, env=mtest.sim_env(), capture_output=True,
                                       text=True, timeout=60)
                traced = subprocess.run(args, env=rel.traced_env(trace), capture_output=True,
                                        text=True, timeout=60)
                self.assertEqual((plain.returncode, plain.stdout), (9, "ending os._exit\n"),
                                 plain.stderr)
                self.assertEqual((traced.returncode, traced.stdout),
                                 (plain.returncode, plain.stdout), traced.stderr)
                self.check_trace(trace, "running", all_events=sleep_ms > 0, want_rc=None)


if __name__ == "__main__":
    mtest.main()

    def test_sigkill_in_flight_mode(self):
        """The same kills under MEMTRACE_FLIGHT=1M with the churn unpaced,
        so that the ring drops its oldest chunks: the trace passes
        integrity_check, every OOM that returned is in it (most of them
        long out of the ring), with the live set of the first ones, and
        the report's totals count at least every call older than the
        loss window."""
        runs = max(rel.knob("MEMTRACE_SOAK_KILLS", 30) // 3, 3)
        seed = rel.knob("MEMTRACE_SOAK_SEED", 20261129)
        rng = random.Random(seed)
        trimmed = 0
        for i in range(runs):
            trace, calls, kill_ns = self.kill_once(rng, i, pace_us=0,
                                                   extra={"MEMTRACE_FLIGHT": "1M"})
            with self.subTest(run=i, seed=seed):
                state = rel.trace_state(trace)
                returned = any(c["A"] or c["O"] for c in calls.values())
                self.assertTrue(state == "trace" or not returned, f"{trace}: {state}")
                if state == "trace":
                    conn = rel.open_ro(trace)
                    self.addCleanup(conn.close)
                    oom_rows = conn.execute("SELECT count(*) FROM ooms").fetchone()[0]
                    with_live = conn.execute(
                        "SELECT count(DISTINCT oom) FROM live_at_oom").fetchone()[0]
                    conn.close()
                    ooms_logged = sum(len(k["O"]) for k in calls.values())
                    self.assertGreaterEqual(oom_rows, ooms_logged)
                    # the first 63 and the last keep their live sets
                    self.assertGreaterEqual(with_live, min(ooms_logged, 64))
                    proc = rel.report(trace)
                    self.assertEqual(proc.returncode, 0, proc.stderr)
                    rep = json.loads(proc.stdout)
                    due = sum(1 for c in calls.values() for t in c["A"]
                              if t < kill_ns - rel.LOSS_TOLERANCE_NS)
                    self.assertGreaterEqual(rep["totals"]["allocations"], due)
                    self.assertEqual(len(rep["ooms"]), oom_rows)
                    flight = rep["trace"]["flight"]
                    trimmed += bool(flight and flight["events_before_ring"])
            for f in os.listdir(self.tmp):
                os.unlink(os.path.join(self.tmp, f))
        # the test means something only if rings were trimmed
        self.assertGreater(trimmed, 0)
        rel.figure("sigkill_flight", runs=runs, seed=seed, traces_trimmed=trimmed)
