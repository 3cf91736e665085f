"""The trace is readable while the program runs, and a program killed with
SIGKILL leaves a valid trace that holds its OOM event."""
import os
import signal
import sqlite3
import subprocess

import mtest

MiB = 1 << 20


class Durability(mtest.TraceTest):
    def start_waiting_program(self, trace):
        env = mtest.sim_env({"LD_PRELOAD": mtest.LIB, "MEMTRACE_OUTPUT": trace,
                             "MEMTRACE_QUIET": "1"})
        proc = subprocess.Popen([os.path.join(mtest.BUILD, "tests", "e2e", "oom-then-wait")],
                                env=env, stdout=subprocess.PIPE, text=True)
        self.addCleanup(proc.stdout.close)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        self.assertEqual(proc.stdout.readline(), "cudaErrorMemoryAllocation\n")
        self.assertEqual(proc.stdout.readline(), "waiting\n")
        return proc

    def check_trace(self, trace):
        conn = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
        try:
            self.assertEqual(conn.execute("PRAGMA integrity_check").fetchone(), ("ok",))
            allocs = conn.execute("SELECT bytes FROM events WHERE kind = 1").fetchall()
            ooms = conn.execute("SELECT e.bytes, o.device_total FROM events e "
                                "JOIN ooms o ON o.seq = e.seq").fetchall()
        finally:
            conn.close()
        self.assertEqual(allocs, [(100 * MiB,)] * 3)
        self.assertEqual(ooms, [(2048 * MiB, 1024 * MiB)])

    def test_read_while_running_then_sigkill(self):
        trace = os.path.join(self.tmp, "t.db")
        proc = self.start_waiting_program(trace)
        # no sleep: the OOM was committed before cudaMalloc returned
        self.check_trace(trace)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        self.assertEqual(proc.returncode, -signal.SIGKILL)
        self.check_trace(trace)
        rep = self.report(trace)
        self.assertEqual(rep["ooms"][0]["requested_bytes"], 2048 * MiB)
        self.assertEqual(rep["ooms"][0]["live_bytes"], 300 * MiB)
        self.assertEqual(rep["ooms"][0]["frames"][0]["function"], "huge_request")
        self.assertEqual(rep["trace"]["end"], "running")

    def listing(self, names_only=()):
        """Each entry of the test's directory, "." included: its size, mode
        and mtime, or only that it is there for the names in names_only.
        (Not the ctime: SQLite, run as root, chowns a -wal it opens to the
        database's owner, which it already has.)"""
        out = {}
        for name in [".", *os.listdir(self.tmp)]:
            st = os.lstat(os.path.join(self.tmp, name))
            out[name] = None if name in names_only else (st.st_size, st.st_mode, st.st_mtime_ns)
        return out

    def test_report_leaves_a_closed_trace_as_it_was(self):
        run = self.run_program("leaks")
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertEqual(sorted(os.listdir(self.tmp)), ["trace.db"])
        before = self.listing()
        self.report(run.trace)
        self.report_text(run.trace)
        self.assertEqual(self.listing(), before)

    def test_report_reads_a_running_trace_then_makes_the_killed_one_one_file(self):
        trace = os.path.join(self.tmp, "t.db")
        proc = self.start_waiting_program(trace)
        # the writer's -shm changes as it commits: its names are what count
        running = ["t.db", "t.db-shm", "t.db-wal"]
        before = self.listing(names_only=running)
        rep = self.report(trace)
        self.assertEqual(rep["ooms"][0]["live_bytes"], 300 * MiB)
        self.assertEqual(rep["trace"]["end"], "running")
        self.assertEqual(self.listing(names_only=running).keys(), before.keys())
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        self.assertGreater(os.path.getsize(trace + "-wal"), 0, "the test needs data in the -wal")
        # the first report folds the dead writer's -wal in: one file,
        # in rollback-journal mode, as the writer's close leaves it
        rep = self.report(trace)
        self.assertEqual(rep["ooms"][0]["live_bytes"], 300 * MiB)
        self.assertEqual(rep["ooms"][0]["requested_bytes"], 2048 * MiB)
        self.assertEqual(rep["trace"]["end"], "running")
        self.assertEqual(sorted(os.listdir(self.tmp)), ["t.db"])
        with open(trace, "rb") as f:
            self.assertEqual(f.read(20)[18:20], b"\x01\x01")
        before = self.listing()
        self.assertEqual(self.report(trace), rep)
        self.assertEqual(self.listing(), before)


if __name__ == "__main__":
    mtest.main()
