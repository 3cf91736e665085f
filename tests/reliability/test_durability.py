"""Durability: a program killed with SIGKILL at random points, or ending
by abort(), a segfault, exit() from a thread, _exit(), os._exit() in
Python or an uncaught C++ exception, leaves a trace that opens, passes
PRAGMA integrity_check, holds every event older than the documented loss
window and every out-of-memory event, and says how the process ended
where memtrace can know (meta 'end': 'exit' after a normal exit or
_exit(), which the library interposes to close the trace first, else
'running')."""
import collections
import json
import os
import random
import re
import shutil
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
        lacking = self.missing(trace, calls)
        proc = rel.report(trace)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        # the first report recovered the ring file first, and said so:
        # after it nothing the program logged is missing
        if lacking:
            m = re.search(r"^memtrace report: recovered (\d+) events of ", proc.stderr, re.M)
            self.assertTrue(m, proc.stderr)
            self.assertGreaterEqual(int(m.group(1)), lacking)
        self.assertEqual(self.missing(trace, calls), 0)
        self.assertFalse(os.path.exists(trace + "-ring"))
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


    def recover(self, trace):
        return subprocess.run([mtest.REPORTER, "--recover", trace], capture_output=True,
                              text=True, timeout=120)

    def check_recovered(self, trace, calls):
        """After memtrace recover: every call churn logged as returned is
        in the trace (at most the call in flight more), seq without gaps,
        and the trace one file. Returns the events in the trace."""
        conn = rel.open_ro(trace)
        try:
            n, top = conn.execute(
                "SELECT count(*), coalesce(max(seq), -1) FROM events").fetchone()
            self.assertEqual(n, top + 1, "events are not seq 0..n-1 without gaps")
            counts = collections.Counter(conn.execute(
                "SELECT thread, kind FROM events WHERE kind IN (1, 2, 3)"))
            self.assertEqual(rel.meta(conn)["end"], "running")
        finally:
            conn.close()
        for tid, kinds in calls.items():
            for k, times in kinds.items():
                have = counts[(tid, self.KIND[k])]
                self.assertGreaterEqual(have, len(times),
                                        f"thread {tid}: {len(times) - have} {k} calls lost")
                self.assertLessEqual(have, len(times) + 1, f"thread {tid} {k}")
        base = os.path.basename(trace)
        self.assertEqual(sorted(f for f in os.listdir(self.tmp) if f.startswith(base)), [base])
        return n

    def missing(self, trace, calls):
        conn = rel.open_ro(trace)
        try:
            counts = collections.Counter(conn.execute(
                "SELECT thread, kind FROM events WHERE kind IN (1, 2, 3)"))
        finally:
            conn.close()
        return sum(max(0, len(times) - counts[(tid, self.KIND[k])])
                   for tid, kinds in calls.items() for k, times in kinds.items())

    def test_sigkill_then_recover_loses_nothing(self):
        """Killed with SIGKILL at random points (churn unpaced or paced):
        memtrace recover moves what the ring file holds and the trace
        lacks into the trace, and then every call the program logged as
        returned is there: none lost. Before it, the trace lacks some
        (what the writer had not committed), which is what the ring file
        is for; a second recover recovers 0 and leaves the file as it
        was."""
        runs = rel.knob("MEMTRACE_SOAK_RECOVER_KILLS", 16)
        seed = rel.knob("MEMTRACE_SOAK_SEED", 20261129)
        rng = random.Random(seed)
        events = recovered = lacking = traces = 0
        for i in range(runs):
            trace, calls, kill_ns = self.kill_once(rng, i, pace_us=(0, 200)[i % 2])
            with self.subTest(run=i, seed=seed):
                state = rel.trace_state(trace)
                if state != "trace":
                    self.assertFalse(any(c["A"] or c["O"] for c in calls.values()), state)
                    continue
                lacking += self.missing(trace, calls)
                proc = self.recover(trace)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                m = re.fullmatch(r".*: (\d+) events recovered\n", proc.stdout)
                self.assertTrue(m, proc.stdout)
                recovered += int(m.group(1))
                events += self.check_recovered(trace, calls)
                traces += 1
                with open(trace, "rb") as f:
                    before = f.read()
                proc = self.recover(trace)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                self.assertRegex(proc.stdout, r": 0 events recovered")
                with open(trace, "rb") as f:
                    self.assertEqual(f.read(), before, "a second recover changed the trace")
                proc = rel.report(trace)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                self.assertEqual(json.loads(proc.stdout)["totals"]["unmatched_frees"], 0)
            for f in os.listdir(self.tmp):
                os.unlink(os.path.join(self.tmp, f))
        # the test means something only if the traces lacked calls
        self.assertGreater(lacking, 0)
        rel.figure("sigkill_recover", runs=runs, seed=seed, traces=traces,
                   events_checked=events, lacking_before_recover=lacking,
                   recovered=recovered, lost_after_recover=0)

    def test_recover_on_a_closed_trace(self):
        """A trace its process closed has no ring file: recover says 0
        and changes nothing."""
        trace = os.path.join(self.tmp, "closed.db")
        proc = subprocess.run([rel.rel_program("churn"), "2", "0", "--iterations", "50"],
                              env=rel.traced_env(trace), capture_output=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(sorted(os.listdir(self.tmp)), ["closed.db"])
        with open(trace, "rb") as f:
            before = f.read()
        proc = self.recover(trace)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(proc.stdout, r"^.*closed\.db: 0 events recovered")
        with open(trace, "rb") as f:
            self.assertEqual(f.read(), before)
        self.assertEqual(sorted(os.listdir(self.tmp)), ["closed.db"])

    def test_fatal_signals_at_random_points_under_load(self):
        """churn's four threads allocate, free and run out of memory
        unpaced when the main thread ends the process with a segfault,
        SIGTERM or SIGKILL at a random point: after memtrace recover,
        every call logged before the end began is in the trace. (Before
        recover the traces lack some: what the ring file is for.)"""
        runs = rel.knob("MEMTRACE_SOAK_SIGNALS", 9)
        seed = rel.knob("MEMTRACE_SOAK_SEED", 20261129)
        rng = random.Random(seed)
        events = lacking = 0
        hows = {"segv": signal.SIGSEGV, "term": signal.SIGTERM, "kill": signal.SIGKILL}
        for i in range(runs):
            how = list(hows)[i % 3]
            trace = os.path.join(self.tmp, f"s{i}.db")
            log = os.path.join(self.tmp, f"s{i}.log")
            with open(log, "w") as out:
                proc = subprocess.run(
                    [rel.rel_program("churn"), "4", "30", "--log", "--oom-every", "40",
                     "--end-after-ms", str(rng.randint(0, 300)), how],
                    env=rel.traced_env(trace), stdout=out, stderr=subprocess.DEVNULL,
                    timeout=60)
            with self.subTest(run=i, how=how, seed=seed):
                self.assertEqual(proc.returncode, -hows[how])
                with open(log) as f:
                    end_ns = [int(l.split()[1]) for l in f if l.startswith("E ")][0]
                calls = read_log(log)
                if rel.trace_state(trace) != "trace":
                    self.assertFalse(any(c["A"] or c["O"] for c in calls.values()))
                    continue
                due = {tid: {k: [t for t in times if t < end_ns] for k, times in kinds.items()}
                       for tid, kinds in calls.items()}
                lacking += self.missing(trace, due)
                rec = self.recover(trace)
                self.assertEqual(rec.returncode, 0, rec.stderr)
                lacking_after = self.missing(trace, due)
                self.assertEqual(lacking_after, 0, f"{lacking_after} calls lost")
                conn = rel.open_ro(trace)
                n, top = conn.execute(
                    "SELECT count(*), coalesce(max(seq), -1) FROM events").fetchone()
                conn.close()
                self.assertEqual(n, top + 1, "events are not seq 0..n-1 without gaps")
                # each recovered free named the allocation it releases
                rep = rel.report(trace)
                self.assertEqual(rep.returncode, 0, rep.stderr)
                self.assertEqual(json.loads(rep.stdout)["totals"]["unmatched_frees"], 0)
                events += n
            for f in os.listdir(self.tmp):
                os.unlink(os.path.join(self.tmp, f))
        self.assertGreater(lacking, 0)
        rel.figure("fatal_signals_under_load", runs=runs, seed=seed, events_checked=events,
                   lacking_before_recover=lacking, lost_after_recover=0)

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

    def test_exit_and_abort_at_random_points_under_load(self):
        """churn's four threads allocate, free and run out of memory
        unpaced (the writer has the CPU least) when the main thread ends
        the process with _exit or abort at a random point: every call
        logged before it began to end is in the trace (no loss window)."""
        runs = rel.knob("MEMTRACE_SOAK_ENDINGS", 12)
        seed = rel.knob("MEMTRACE_SOAK_SEED", 20261129)
        rng = random.Random(seed)
        events = 0
        for i in range(runs):
            how = ("_exit", "abort")[i % 2]
            trace = os.path.join(self.tmp, f"e{i}.db")
            log = os.path.join(self.tmp, f"e{i}.log")
            with open(log, "w") as out:
                proc = subprocess.run(
                    [rel.rel_program("churn"), "4", "30", "--log", "--oom-every", "40",
                     "--end-after-ms", str(rng.randint(0, 300)), how],
                    env=rel.traced_env(trace), stdout=out, stderr=subprocess.DEVNULL,
                    timeout=60)
            with self.subTest(run=i, how=how, seed=seed):
                self.assertEqual(proc.returncode, 0 if how == "_exit" else -signal.SIGABRT)
                with open(log) as f:
                    end_ns = [int(l.split()[1]) for l in f if l.startswith("E ")][0]
                calls = read_log(log)
                state = rel.trace_state(trace)
                if state != "trace":
                    # ended while the first call was creating the trace
                    self.assertFalse(any(c["A"] or c["O"] for c in calls.values()), state)
                    continue
                conn = rel.open_ro(trace)
                self.addCleanup(conn.close)
                n, top = conn.execute(
                    "SELECT count(*), coalesce(max(seq), -1) FROM events").fetchone()
                self.assertEqual(n, top + 1, "events are not seq 0..n-1 without gaps")
                self.assertEqual(rel.meta(conn)["end"], "exit" if how == "_exit" else "running")
                counts = collections.Counter(conn.execute(
                    "SELECT thread, kind FROM events WHERE kind IN (1, 2, 3)"))
                for tid, kinds in calls.items():
                    for k, times in kinds.items():
                        due = sum(1 for t in times if t < end_ns)
                        have = counts[(tid, Sigkill.KIND[k])]
                        self.assertGreaterEqual(have, due, f"thread {tid}: {due - have} {k} "
                                                "calls that returned before the end missing")
                events += n
            for f in os.listdir(self.tmp):
                os.unlink(os.path.join(self.tmp, f))
        rel.figure("endings_under_load", runs=runs, seed=seed, events_checked=events)


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
        if end == "running":
            # killed or crashed: the ring file holds what the writer had
            # not committed, and recover moves it into the trace
            proc = subprocess.run([mtest.REPORTER, "--recover", trace], capture_output=True,
                                  text=True, timeout=60)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            all_events = True
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

    def test_closed_trace_is_one_file(self):
        """A closed trace is in rollback-journal mode (file format bytes
        18 and 19 are 1, not WAL's 2): any reader, read-only too, opens it
        without making a -wal and -shm beside it, and so can a reader on a
        read-only medium, where it could not make them."""
        trace = self.run_ending(rel.rel_program("endings"), "exit", 0, 3)
        self.assertEqual(os.listdir(self.tmp), [os.path.basename(trace)])
        with open(trace, "rb") as f:
            self.assertEqual(f.read(20)[18:20], b"\x01\x01")
        conn = rel.open_ro(trace)
        self.assertEqual(conn.execute("SELECT count(*) FROM allocs").fetchone(), (3,))
        self.assertEqual(conn.execute("PRAGMA journal_mode").fetchone(), ("delete",))
        conn.close()
        if shutil.which("sqlite3"):
            proc = subprocess.run(["sqlite3", "-readonly", trace, "SELECT count(*) FROM allocs"],
                                  capture_output=True, text=True, timeout=60)
            self.assertEqual((proc.returncode, proc.stdout), (0, "3\n"), proc.stderr)
        self.assertEqual(os.listdir(self.tmp), [os.path.basename(trace)])

    def test__exit(self):
        # _exit is interposed: the trace is drained and closed first
        self.check("_exit", 6, "exit")

    def test__Exit(self):
        self.check("_Exit", 8, "exit")

    def check_busy_end(self, trace, want_rc):
        """A busy ending's trace: closed with the status, the 3 buffers and
        the first OOM there, every free naming an allocation."""
        self.assertEqual(rel.trace_state(trace), "trace")
        conn = rel.open_ro(trace)
        self.addCleanup(conn.close)
        meta = rel.meta(conn)
        self.assertEqual((meta["end"], meta.get("exit_status")), ("exit", str(want_rc)))
        self.assertEqual(conn.execute("SELECT count(*) FROM allocs WHERE bytes = ?",
                                      (MiB,)).fetchone(), (3,))
        self.assertGreaterEqual(conn.execute("SELECT count(*) FROM ooms").fetchone()[0], 1)
        self.assertEqual(conn.execute("SELECT count(*) FROM frees f LEFT JOIN allocs a "
                                      "ON a.seq = f.alloc WHERE a.seq IS NULL").fetchone(), (0,))

    def test__exit_from_a_thread_while_others_allocate(self):
        for i in range(rel.knob("MEMTRACE_SOAK_BUSY_EXITS", 10)):
            with self.subTest(run=i):
                trace = self.run_ending(rel.rel_program("endings"), "busy-_exit", 0, 5)
                self.check_busy_end(trace, 5)

    def test__exit_from_a_signal_handler_inside_a_hook(self):
        # the handler may run inside a hook, with a queue cell taken:
        # no deadlock, the trace closed, everything before it there
        for i in range(rel.knob("MEMTRACE_SOAK_BUSY_EXITS", 10)):
            with self.subTest(run=i):
                trace = self.run_ending(rel.rel_program("endings"), "signal-_exit", 0, 10)
                self.check_busy_end(trace, 10)

    def test_vfork_child__exit_leaves_the_parents_trace(self):
        trace = self.run_ending(rel.rel_program("endings"), "vfork", 0, 11)
        self.check_trace(trace, "exit", all_events=False, want_rc=11)
        conn = rel.open_ro(trace)
        self.addCleanup(conn.close)
        allocs = conn.execute("SELECT count(*) FROM allocs WHERE bytes = ?", (MiB,)).fetchone()
        self.assertEqual(allocs, (6,))

    def test_abort(self):
        self.check("abort", -signal.SIGABRT, "running")

    def test_segfault(self):
        self.check("segv", -signal.SIGSEGV, "running")

    def test_kill_self(self):
        self.check("kill", -signal.SIGKILL, "running")

    def test_sigterm(self):
        self.check("term", -signal.SIGTERM, "running")

    def test_sigfpe(self):
        self.check("fpe", -signal.SIGFPE, "running")

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
            "assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(2 << 40)) == 2\n"
            "print('ending os._exit', flush=True)\n"
            "time.sleep(int(sys.argv[1]) / 1000)\n"
            "for i in range(3):\n"
            "    assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(1 << 20)) == 0\n"
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
                self.check_trace(trace, "exit", all_events=True, want_rc=9)

    def test_python_os_execv(self):
        """An exec without exit, right after the last allocation: every
        event pushed is committed before the new image; the trace stays
        unfinished (end = running)."""
        code = (
            "import ctypes, os\n"
            "rt = ctypes.CDLL('libcudart.so.13')\n"
            "p = ctypes.c_void_p()\n"
            "assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(2 << 40)) == 2\n"
            "print('ending exec', flush=True)\n"
            "for i in range(3):\n"
            "    assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(1 << 20)) == 0\n"
            "os.execv('/bin/sh', ['sh', '-c', 'exit 12'])\n")
        trace = os.path.join(self.tmp, "exec.db")
        args = [sys.executable, "-c", code]
        plain = subprocess.run(args, env=mtest.sim_env(), capture_output=True, text=True,
                               timeout=60)
        traced = subprocess.run(args, env=rel.traced_env(trace), capture_output=True,
                                text=True, timeout=60)
        self.assertEqual((plain.returncode, plain.stdout), (12, "ending exec\n"), plain.stderr)
        self.assertEqual((traced.returncode, traced.stdout), (plain.returncode, plain.stdout),
                         traced.stderr)
        self.check_trace(trace, "running", all_events=True, want_rc=None)

    def test_python_os_abort(self):
        """abort() right after the last allocation (os.abort; C++'s
        std::terminate calls it the same way): every event pushed is
        committed before the real abort; the trace stays unfinished."""
        code = (
            "import ctypes, os\n"
            "rt = ctypes.CDLL('libcudart.so.13')\n"
            "p = ctypes.c_void_p()\n"
            "assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(2 << 40)) == 2\n"
            "print('ending abort', flush=True)\n"
            "for i in range(3):\n"
            "    assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(1 << 20)) == 0\n"
            "os.abort()\n")
        trace = os.path.join(self.tmp, "abort.db")
        args = [sys.executable, "-c", code]
        plain = subprocess.run(args, env=mtest.sim_env(), capture_output=True, text=True,
                               timeout=60)
        traced = subprocess.run(args, env=rel.traced_env(trace), capture_output=True,
                                text=True, timeout=60)
        self.assertEqual((plain.returncode, plain.stdout), (-signal.SIGABRT, "ending abort\n"),
                         plain.stderr)
        self.assertEqual((traced.returncode, traced.stdout), (plain.returncode, plain.stdout),
                         traced.stderr)
        self.check_trace(trace, "running", all_events=True, want_rc=None)

    def test_multiprocessing_forked_workers(self):
        """multiprocessing's forked workers end with os._exit right after
        their target returns: each worker's trace is closed and whole."""
        code = (
            "import ctypes, multiprocessing, sys\n"
            "def work(i):\n"
            "    rt = ctypes.CDLL('libcudart.so.13')\n"
            "    p = ctypes.c_void_p()\n"
            "    for _ in range(3 + i):\n"
            "        assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(1 << 20)) == 0\n"
            "ctx = multiprocessing.get_context('fork')\n"
            "procs = [ctx.Process(target=work, args=(i,)) for i in range(4)]\n"
            "for p in procs: p.start()\n"
            "for p in procs: p.join()\n"
            "print('workers', [p.exitcode for p in procs], flush=True)\n")
        args = [sys.executable, "-c", code]
        plain = subprocess.run(args, env=mtest.sim_env(), capture_output=True, text=True,
                               timeout=60)
        pattern = os.path.join(self.tmp, "w-%p.db")
        traced = subprocess.run(args, env=rel.traced_env(pattern), capture_output=True,
                                text=True, timeout=60)
        self.assertEqual((plain.returncode, plain.stdout), (0, "workers [0, 0, 0, 0]\n"),
                         plain.stderr)
        self.assertEqual((traced.returncode, traced.stdout), (plain.returncode, plain.stdout),
                         traced.stderr)
        traces = sorted(os.listdir(self.tmp))
        self.assertEqual(len(traces), 4, traces)  # one per worker, each one file
        counts = []
        for name in traces:
            conn = rel.open_ro(os.path.join(self.tmp, name))
            self.addCleanup(conn.close)
            meta = rel.meta(conn)
            self.assertEqual((meta["end"], meta.get("exit_status")), ("exit", "0"))
            counts.append(conn.execute("SELECT count(*) FROM allocs WHERE bytes = ?",
                                       (MiB,)).fetchone()[0])
        self.assertEqual(sorted(counts), [3, 4, 5, 6])


if __name__ == "__main__":
    mtest.main()
