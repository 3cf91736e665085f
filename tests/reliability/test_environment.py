"""Faults in the environment: a read-only output directory, a full disk
(RLIMIT_FSIZE, and a small tmpfs where one can be mounted), the trace path
taken by a run still going, files planted at the trace's -wal and -shm
paths. In each case the program's output and exit status are those of a
run without memtrace, memtrace says what is wrong in one message, and no
file outside the chosen path is written. (tests/e2e/test_library.py covers
a missing directory, an existing file and a symlink at the trace path.)"""
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import mtest
import rel

# churn: one thread, 3000 allocations with a pause: many commits, so a
# limit is hit by the writer thread mid-run; CHURN_OOM adds an OOM every 500
CHURN = ["1", "0", "--iterations", "3000", "--pace-us", "100"]
CHURN_OOM = CHURN + ["--oom-every", "500"]


def as_nobody():
    """The command prefix that drops root, or [] when not root, or None
    when root cannot drop (then permission tests cannot run)."""
    if os.getuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if not setpriv:
        return None
    prefix = [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    ok = subprocess.run(prefix + ["true"], capture_output=True).returncode == 0
    return prefix if ok else None


def memtrace_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith("memtrace:")]


def failure_lines(stderr):
    """memtrace's messages less the summary at exit ("N events could not
    be written"), which says what the one message about the failure
    cost."""
    return [l for l in memtrace_lines(stderr) if "events could not be written" not in l]


class Environment(mtest.TraceTest):
    def run_churn(self, trace, args=CHURN, prefix=(), preexec=None, quiet=False, env=None):
        cmd = [*prefix, rel.rel_program("churn"), *args]
        plain = subprocess.run(cmd, env=mtest.sim_env(env), capture_output=True, text=True,
                               timeout=120, preexec_fn=preexec)
        traced = subprocess.run(cmd, env=rel.traced_env(trace, env, quiet=quiet),
                                capture_output=True, text=True, timeout=120,
                                preexec_fn=preexec)
        self.assertEqual(plain.returncode, 0, plain.stderr)
        self.assertEqual((traced.returncode, traced.stdout), (plain.returncode, plain.stdout),
                         traced.stderr)
        return traced

    def check_prefix(self, trace):
        """A trace cut short holds a valid prefix: seq 0..n-1 without gaps."""
        state = rel.trace_state(trace)
        if state != "trace":
            return 0
        conn = rel.open_ro(trace)
        self.addCleanup(conn.close)
        n, top = conn.execute("SELECT count(*), coalesce(max(seq), -1) FROM events").fetchone()
        self.assertEqual(n, top + 1)
        return n

    # ---- read-only directory ----

    def test_read_only_directory(self):
        prefix = as_nobody()
        if prefix is None:
            self.skipTest("running as root and cannot drop to nobody with setpriv")
        ro = os.path.join(self.tmp, "ro")
        os.mkdir(ro)
        os.chmod(self.tmp, 0o755)
        os.chmod(ro, 0o555)
        probe = subprocess.run([*prefix, rel.rel_program("churn"), "1", "0", "--iterations", "1"],
                               env=mtest.sim_env(), capture_output=True, text=True, timeout=60)
        if probe.returncode != 0:
            self.skipTest(f"nobody cannot run the build's programs here: {probe.stderr.strip()}")
        trace = os.path.join(ro, "t.db")
        run = self.run_churn(trace, prefix=prefix)
        lines = memtrace_lines(run.stderr)
        self.assertEqual(len(lines), 1, run.stderr)
        self.assertIn(f"cannot create the trace file {trace}: Permission denied", lines[0])
        self.assertEqual(os.listdir(ro), [])

    # ---- disk full ----

    def fsize(self, limit):
        def preexec():
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        return preexec

    def check_disk_full(self, limit, args=CHURN):
        sub = os.path.join(self.tmp, str(limit))
        os.mkdir(sub)
        trace = os.path.join(sub, "t.db")
        run = self.run_churn(trace, args, preexec=self.fsize(limit), quiet=True)
        lines = failure_lines(run.stderr)
        events = self.check_prefix(trace)
        for f in os.listdir(sub):
            self.assertTrue(f.startswith("t.db"), f)
        return lines, events

    def test_disk_full_while_tracing(self):
        """RLIMIT_FSIZE reached by the writer thread, mid-run: the program
        runs on, one message, the trace keeps what was committed."""
        figures = {}
        for limit in (96 << 10, 192 << 10, 384 << 10):
            with self.subTest(limit=limit):
                lines, events = self.check_disk_full(limit)
                self.assertEqual(len(lines), 1, lines)
                self.assertRegex(lines[0], r"cannot write the trace .*/t\.db: .*disk I/O error")
                figures[limit] = events
        rel.figure("disk_full_rlimit", events_kept_by_limit=figures)

    def test_disk_full_then_out_of_memory(self):
        """After the disk filled, every OOM adds "could not be committed in
        time": the failure was already said once."""
        lines, _ = self.check_disk_full(128 << 10, CHURN_OOM)
        self.assertEqual(len(lines), 1, lines)

    def test_disk_full_when_the_trace_is_created(self):
        """RLIMIT_FSIZE too small for the trace's first commit, which runs
        on the program's thread: SIGXFSZ must not kill the program."""
        for limit in (0, 4096, 16 << 10, 48 << 10):
            with self.subTest(limit=limit):
                lines, _ = self.check_disk_full(limit)
                self.assertEqual(len(lines), 1, lines)

    def test_disk_full_tmpfs(self):
        small = os.path.join(self.tmp, "small")
        os.mkdir(small)
        mount = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=192k", "tmpfs", small],
                               capture_output=True, text=True)
        if mount.returncode != 0:
            self.skipTest(f"cannot mount a small tmpfs here: {mount.stderr.strip()}")
        try:
            trace = os.path.join(small, "t.db")
            run = self.run_churn(trace, quiet=True)
            lines = failure_lines(run.stderr)
            self.assertEqual(len(lines), 1, lines)
            self.assertIn(f"cannot write the trace {trace}", lines[0])
            self.assertIn("database or disk is full", lines[0])
            events = self.check_prefix(trace)
            for f in os.listdir(small):
                self.assertTrue(f.startswith("t.db"), f)
        finally:
            subprocess.run(["umount", "-l", small])
        rel.figure("disk_full_tmpfs", size_kib=192, events_kept=events)

    # ---- the trace path taken ----

    def test_path_taken_by_a_run_still_going(self):
        trace = os.path.join(self.tmp, "shared.db")
        log = os.path.join(self.tmp, "first.log")
        with open(log, "w") as out:
            first = subprocess.Popen([rel.rel_program("churn"), "2", "1.5", "--log"],
                                     env=rel.traced_env(trace), stdout=out,
                                     stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: first.poll() is None and first.kill())
        rel.wait_for_line(log, "ready")
        second = self.run_churn(trace)
        lines = memtrace_lines(second.stderr)
        self.assertEqual(len(lines), 1, second.stderr)
        self.assertIn(f"the trace file {trace} already exists; not tracing", lines[0])
        _, err = first.communicate(timeout=60)
        self.assertEqual(first.returncode, 0, err)
        conn = rel.open_ro(trace)
        self.addCleanup(conn.close)
        self.assertEqual(rel.trace_state(trace), "trace")
        meta = rel.meta(conn)
        self.assertEqual((meta["pid"], meta["end"]), (str(first.pid), "exit"))
        with open(log) as f:
            calls = sum(1 for line in f if line[0] in "AF")
        self.assertEqual(conn.execute("SELECT count(*) FROM events WHERE kind IN (1, 2)")
                         .fetchone()[0], calls)

    # ---- files planted beside the trace ----

    def plant(self, suffix, symlink):
        trace = os.path.join(self.tmp, "t.db")
        victim = os.path.join(self.tmp, "victim" + suffix)
        with open(victim, "w") as f:
            f.write("someone else's file\n")
        os.chmod(victim, 0o666)
        if symlink:
            os.symlink(victim, trace + suffix)
        else:
            os.rename(victim, trace + suffix)
            victim = trace + suffix
        return trace, victim

    def check_untouched(self, victim):
        with open(victim) as f:
            self.assertEqual(f.read(), "someone else's file\n")

    def test_symlink_at_wal_path(self):
        trace, victim = self.plant("-wal", symlink=True)
        run = self.run_churn(trace)
        self.check_untouched(victim)
        self.assertLessEqual(len(memtrace_lines(run.stderr)), 2)  # tracing to / written

    def test_symlink_at_shm_path(self):
        trace, victim = self.plant("-shm", symlink=True)
        self.run_churn(trace)
        self.check_untouched(victim)

    def test_symlink_at_shm_path_one_clear_message(self):
        trace, _ = self.plant("-shm", symlink=True)
        run = self.run_churn(trace, quiet=True)
        lines = memtrace_lines(run.stderr)
        self.assertEqual(len(lines), 1, lines)
        self.assertLess(len(lines[0]), 400, lines[0])
        self.assertNotIn("CREATE TABLE", lines[0])

    def test_files_planted_at_wal_and_shm_paths(self):
        """Another user's files where the trace's -wal and -shm go (a shared
        directory): memtrace must not write into them, or the 0600 of the
        trace means nothing."""
        for suffix in ("-wal", "-shm"):
            with self.subTest(suffix=suffix):
                for f in os.listdir(self.tmp):
                    os.unlink(os.path.join(self.tmp, f))
                trace, victim = self.plant(suffix, symlink=False)
                self.run_churn(trace)
                self.assertTrue(os.path.exists(victim), f"{victim} was removed")
                self.check_untouched(victim)


if __name__ == "__main__":
    mtest.main()
