"""The program's own behaviour is untouched: errno after every hooked call,
its signal handlers and mask, its dlopen/dlsym/dlerror results, fork in a
multi-threaded program, a program that closes every descriptor, a program
that rewrites its environment. Each program runs with and without
memtrace; its output and exit status must be the same. (RTLD_NEXT from
another preload library is tests/e2e/test_library.py.)"""
import os
import re
import subprocess
import time

import mtest
import rel


class Program(mtest.TraceTest):
    def both(self, name, args=(), env=None, trace="t.db", quiet=True, timeout=120,
             sim_defaults=False):
        """sim_defaults: no CUDASIM_* variables (the simulator's parsing of
        them sets errno in the first call, which would hide memtrace's)."""
        cmd = [rel.rel_program(name), *args]
        path = os.path.join(self.tmp, trace)
        plain_env = mtest.sim_env(env)
        traced_env = rel.traced_env(path, env, quiet=quiet)
        if sim_defaults:
            for e in (plain_env, traced_env):
                for k in [k for k in e if k.startswith("CUDASIM_")]:
                    del e[k]
        plain = subprocess.run(cmd, env=plain_env, cwd=self.tmp, capture_output=True,
                               text=True, timeout=timeout)
        traced = subprocess.run(cmd, env=traced_env, cwd=self.tmp, capture_output=True,
                                text=True, timeout=timeout)
        return plain, traced, path

    def same(self, plain, traced):
        self.assertEqual(plain.returncode, 0, plain.stderr)
        self.assertEqual(traced.returncode, plain.returncode, traced.stderr)
        self.assertEqual(traced.stdout, plain.stdout)

    # ---- errno ----

    def errno_lines(self, env=None, trace="t.db"):
        plain, traced, _ = self.both("errno-kept", env=env, trace=trace, sim_defaults=True)
        self.assertEqual((plain.returncode, traced.returncode), (0, 0), traced.stderr)
        return plain.stdout.splitlines(), traced.stdout.splitlines()

    def test_errno_after_every_other_hooked_call(self):
        plain, traced = self.errno_lines()
        self.assertGreater(len(plain), 100)
        self.assertTrue(plain[0].startswith("cudaMalloc (first call)"))
        self.assertEqual(traced[1:], plain[1:])

    def test_errno_after_the_first_call(self):
        """While tracing starts, when the trace file is taken, and when its
        directory does not exist."""
        open(os.path.join(self.tmp, "taken.db"), "w").close()
        wrong = []
        for case, env, trace in (
                ("tracing", None, "t.db"),
                ("trace file taken", None, "taken.db"),
                ("no such directory", {"MEMTRACE_OUTPUT": "/nonexistent-dir/t.db"}, "x.db")):
            plain, traced = self.errno_lines(env, trace)
            if traced[0] != plain[0]:
                wrong.append(f"{case}: {traced[0]!r}, without memtrace {plain[0]!r}")
        self.assertEqual(wrong, [])

    def test_errno_when_the_tool_is_off(self):
        """Trace file taken: memtrace is off after the first call, and every
        later call passes straight through."""
        open(os.path.join(self.tmp, "taken.db"), "w").close()
        plain, traced = self.errno_lines(trace="taken.db")
        self.assertEqual(traced[1:], plain[1:])

    # ---- signals ----

    def test_signal_handlers_and_mask_untouched(self):
        plain, traced, trace = self.both("signals")
        self.same(plain, traced)
        self.assertRegex(traced.stdout, r"SIGUSR1: 50 of 50 handled, 0 on a thread")
        self.assertEqual(rel.trace_state(trace), "trace")

    # ---- dl ----

    def test_dlopen_dlsym_dlerror_results(self):
        plain, traced, trace = self.both("dl-lookups")
        self.same(plain, traced)
        self.assertIn("cudaMalloc through dlsym                 0", plain.stdout)
        conn = rel.open_ro(trace)
        self.addCleanup(conn.close)
        self.assertEqual(conn.execute("SELECT kind, bytes FROM events WHERE kind IN (1, 2) "
                                      "ORDER BY seq").fetchall(), [(1, 4096), (2, 4096)])

    # ---- fork ----

    def test_fork_in_a_multithreaded_program(self):
        forks = 20
        pattern = os.path.join(self.tmp, "t-%p.db")
        plain, traced, _ = self.both("forks", ["threads", str(forks)],
                                     env={"MEMTRACE_OUTPUT": pattern}, timeout=300)
        self.same(plain, traced)
        traces = sorted(f for f in os.listdir(self.tmp) if f.endswith(".db"))
        # the parent, and the children that made a CUDA call (even ones)
        self.assertEqual(len(traces), 1 + forks // 2, traces)
        pairs = sum(int(n) for n in re.findall(r"worker \d+: (\d+) pairs", traced.stderr))
        parent = None
        children = []
        for name in traces:
            path = os.path.join(self.tmp, name)
            self.assertEqual(rel.trace_state(path), "trace")
            conn = rel.open_ro(path)
            self.addCleanup(conn.close)
            meta = rel.meta(conn)
            self.assertEqual(name, f"t-{meta['pid']}.db")
            self.assertEqual(meta["end"], "exit")
            kinds = dict(conn.execute("SELECT kind, count(*) FROM events GROUP BY kind"))
            if kinds.get(1, 0) > 1:
                parent = (meta, kinds)
            else:
                children.append((meta, kinds))
        self.assertIsNotNone(parent)
        meta, kinds = parent
        # main's cudaMalloc, each worker pair; a device event
        self.assertEqual((kinds[1], kinds[2]), (1 + pairs, 1 + pairs))
        for cmeta, ckinds in children:
            self.assertEqual(cmeta["ppid"], meta["pid"])
            # cudaMalloc fails (initialised before fork): one alloc_error
            self.assertEqual(ckinds, {4: 1})

    # ---- descriptors ----

    def closefds(self, mode, quiet):
        data = os.path.join(self.tmp, "data")
        os.mkdir(data)
        trace = os.path.join(self.tmp, "t.db")
        start = time.monotonic()
        proc = subprocess.run([rel.rel_program("closefds"), mode, data],
                              env=rel.traced_env(trace, quiet=quiet), capture_output=True,
                              text=True, timeout=120)
        seconds = time.monotonic() - start
        with open(os.path.join(data, "verdict")) as f:
            verdict = f.read()
        return proc, verdict, trace, seconds

    def test_closes_every_descriptor_at_start_quiet(self):
        proc, verdict, trace, _ = self.closefds("start", quiet=True)
        self.assertEqual((proc.returncode, verdict), (0, "intact\n"))
        conn = rel.open_ro(trace)
        self.addCleanup(conn.close)
        self.assertEqual(rel.trace_state(trace), "trace")
        # 2000 pairs and the device event
        self.assertEqual(conn.execute("SELECT count(*) FROM events").fetchone()[0], 4001)

    def test_closes_every_descriptor_at_start(self):
        """The default (not quiet): "memtrace: tracing to" must not land in
        the program's file that took descriptor 2."""
        proc, verdict, _, _ = self.closefds("start", quiet=False)
        self.assertEqual((proc.returncode, verdict), (0, "intact\n"))

    def test_closes_descriptors_while_tracing(self):
        """closefrom(3) after the trace started, then the program's own
        files: memtrace must not read, write or close them."""
        proc, verdict, _, seconds = self.closefds("running", quiet=True)
        rel.figure("closefds_running", seconds=round(seconds, 1), verdict=verdict.strip())
        self.assertEqual((proc.returncode, verdict), (0, "intact\n"))

    def fdguard(self, mode, *args):
        trace = os.path.join(self.tmp, "t.db")
        proc = subprocess.run([rel.rel_program("fdguard"), mode, trace, *args],
                              env=rel.traced_env(trace), cwd=self.tmp, capture_output=True,
                              text=True, timeout=120)
        return proc, trace

    def assert_whole_trace(self, trace):
        self.assertEqual(rel.trace_state(trace), "trace")
        conn = rel.open_ro(trace)
        self.addCleanup(conn.close)
        self.assertEqual(rel.meta(conn)["end"], "exit")
        kinds = dict(conn.execute("SELECT kind, count(*) FROM events GROUP BY kind"))
        self.assertEqual((kinds[1], kinds[2]), (1001, 1001))

    def test_close_on_the_traces_descriptor(self):
        """close() on a descriptor the program never opened: EBADF, as
        without memtrace, and the trace goes on."""
        proc, trace = self.fdguard("close")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual(proc.stdout.splitlines(),
                         ["the trace's descriptors: 3"] + ["close: -1 EBADF, still open"] * 3)
        self.assert_whole_trace(trace)

    def test_closefrom_leaves_the_trace(self):
        proc, trace = self.fdguard("closefrom")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual(proc.stdout, "the trace's descriptors: 3 before closefrom(3), 3 after\n")
        self.assert_whole_trace(trace)

    def test_dup2_onto_the_traces_descriptor(self):
        """The program takes the -wal's number for its own file: it gets
        it, memtrace stops tracing with one message, and nothing of the
        trace lands in the file (not even the checkpoint at exit)."""
        mine = os.path.join(self.tmp, "mine")
        proc, _ = self.fdguard("dup2", mine)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual(proc.stdout, "dup2 onto the -wal's descriptor: done\n")
        self.assertRegex(proc.stderr, r"memtrace: the program replaced the trace's file "
                                      r"descriptor \d+; tracing stops")
        with open(mine, "rb") as f:
            self.assertEqual(f.read(), b"the program's first line\nand its second\n")

    # ---- environment ----

    def test_setenv_and_clearenv(self):
        pattern = os.path.join(self.tmp, "t-%r-%p.db")
        plain, traced, _ = self.both("environ", env={"MEMTRACE_OUTPUT": pattern, "RANK": "3"},
                                     quiet=False)
        self.same(plain, traced)
        self.assertIn("after clearenv while tracing: 0 variables", traced.stdout)
        traces = [f for f in os.listdir(self.tmp) if f.endswith(".db")]
        self.assertEqual(len(traces), 1, traces)
        self.assertNotIn("elsewhere", traced.stderr)
        path = os.path.join(self.tmp, traces[0])
        conn = rel.open_ro(path)
        self.addCleanup(conn.close)
        meta = rel.meta(conn)
        self.assertEqual(traces[0], f"t-{meta['rank']}-{meta['pid']}.db")
        self.assertEqual(meta["end"], "exit")
        kinds = dict(conn.execute("SELECT kind, count(*) FROM events GROUP BY kind"))
        self.assertEqual((kinds[1], kinds[2]), (30, 30))


if __name__ == "__main__":
    mtest.main()
