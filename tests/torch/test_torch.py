"""Real PyTorch under memtrace, checked against torch's own accounting
(issue 30, deliver 3; shared design notes, "The truth is somebody else's
number").

Each program of programs/ runs twice on `scripts/sim-run --capacity 1G`
with the torch of `scripts/framework-python torch`: plain, and under
LD_PRELOAD=libmemtrace.so. It prints torch's own figures as one JSON
line (programs/common.py: memory_reserved(), max_memory_reserved(), the
segments of memory_snapshot(), memory_stats(), what its allocator asked
cudaMalloc for at an OOM). The tests assert that the exit status and those
figures are the same both ways, and that memtrace's report equals them
exactly. The only device memory torch does not count is the default
workspace of each cuBLAS handle (cuMemAlloc_v2 in cublasCreate_v2 of the
simulated libcublas, 32 MiB each, tests/sim/README.md): those are found in
the trace, allocation by allocation, by their stacks, and added.

Skips (exit 77) only when scripts/framework-python torch exits 77; any
other failure to get torch fails. Paths come from the environment that
tests/torch/meson.build sets: MEMTRACE_BUILD and MEMTRACE_SOURCE."""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

BUILD = os.environ["MEMTRACE_BUILD"]
SOURCE = os.environ["MEMTRACE_SOURCE"]
LIB = os.path.join(BUILD, "interpose", "libmemtrace.so")
REPORTER = os.path.join(BUILD, "report", "memtrace-report")
SIM_RUN = os.path.join(SOURCE, "scripts", "sim-run")
PROGRAMS = os.path.join(SOURCE, "tests", "torch", "programs")
CUBLAS = [os.path.join(BUILD, "tests", "sim", "blas", lib)
          for lib in ("libcublas.so.13", "libcublasLt.so.13")]
MiB = 1 << 20
CUBLAS_WORKSPACE = 32 * MiB  # the simulated cuBLAS's default on a 9.0 device
SKIP = 77


# Which of scripts/framework-python's torches: torch (the pinned one), or
# torch-2.11 (the lent GPU machine's), chosen by the meson test.
TORCH = os.environ.get("MEMTRACE_TORCH", "torch")


def framework_python():
    """The torch python, or None when scripts/framework-python says 77."""
    proc = subprocess.run([os.path.join(SOURCE, "scripts", "framework-python"), TORCH],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode == SKIP:
        lines = proc.stderr.strip().splitlines()
        print(f"SKIP: {TORCH} cannot be had here: " + (lines[-1] if lines else "(no reason given)"))
        return None
    if proc.returncode != 0 or not proc.stdout.strip():
        sys.exit(f"FAIL: scripts/framework-python {TORCH} exited {proc.returncode}:\n{proc.stderr}")
    return proc.stdout.strip()


PYTHON = None


def run_env(extra):
    env = dict(os.environ)
    for k in list(env):
        if (k.startswith("MEMTRACE_") and k not in ("MEMTRACE_BUILD", "MEMTRACE_SOURCE")) \
                or k.startswith("CUDASIM_") or k.startswith("PYTORCH_") \
                or k in ("LD_PRELOAD", "CUBLAS_WORKSPACE_CONFIG", "CUDA_VISIBLE_DEVICES"):
            del env[k]
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra)
    return env


class Run:
    def __init__(self, proc, trace, seconds):
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.trace = trace
        self.seconds = seconds
        lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
        self.figures = json.loads(lines[-1]) if lines else None


class TorchTest(unittest.TestCase):
    def setUp(self):
        for lib in CUBLAS:
            self.assertTrue(os.path.exists(lib), f"{lib} is not built: these tests need "
                            "the simulated cuBLAS (tests/sim/blas)")
        self._tmp = tempfile.TemporaryDirectory(prefix="memtrace-torch-")
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def run_program(self, name, traced):
        extra = {}
        trace = None
        if traced:
            trace = os.path.join(self.tmp, name + ".db")
            extra = {"LD_PRELOAD": LIB, "MEMTRACE_OUTPUT": trace, "MEMTRACE_CUPTI": "off"}
        start = time.monotonic()
        proc = subprocess.run(
            [SIM_RUN, "--capacity", "1G", "--", PYTHON, os.path.join(PROGRAMS, name + ".py")],
            env=run_env(extra), cwd=self.tmp, capture_output=True, text=True, timeout=300)
        run = Run(proc, trace, time.monotonic() - start)
        print(f"{name} {'under memtrace' if traced else 'plain'}: exit {run.rc}, "
              f"{run.seconds:.1f} s, torch's figures {proc.stdout.strip()}")
        self.assertIsNotNone(run.figures, f"{name} printed no figures; stderr:\n{proc.stderr}")
        return run

    def run_both(self, name):
        """Plain, then under memtrace: same exit status (0), same figures."""
        plain = self.run_program(name, traced=False)
        traced = self.run_program(name, traced=True)
        self.assertEqual(plain.rc, 0, f"{name} failed plain:\n{plain.stderr}")
        self.assertEqual(traced.rc, plain.rc, f"exit status changed under memtrace:\n"
                         f"{traced.stderr}")
        self.assertEqual(traced.figures, plain.figures, "torch's figures changed under memtrace")
        return traced

    def report(self, trace, *args):
        proc = subprocess.run([REPORTER, trace, *args], capture_output=True, text=True,
                              timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc.stdout

    def report_json(self, trace):
        return json.loads(self.report(trace, "--format", "json"))

    def cublas_workspaces(self, trace):
        """The cuBLAS handles' default workspaces, from the trace itself:
        the device allocations whose stack has a frame in the simulated
        libcublas and passes through cublasCreate. [(seq, bytes, freed
        at seq or None)], each checked to be 32 MiB."""
        conn = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
        self.addCleanup(conn.close)
        rows = conn.execute("""
            SELECT a.seq, a.bytes, f.seq FROM allocs a
              JOIN sites s ON s.id = a.site
              LEFT JOIN frees f ON f.alloc = a.seq
             WHERE EXISTS (SELECT 1 FROM stack_frames sf
                             JOIN frames fr ON fr.id = sf.frame
                             JOIN modules m ON m.id = fr.module
                            WHERE sf.stack = s.stack
                              AND m.path LIKE '%/libcublas.so%'
                              AND fr.function LIKE 'cublasCreate%')
             ORDER BY a.seq""").fetchall()
        for seq, size, _ in rows:
            self.assertEqual(size, CUBLAS_WORKSPACE, f"cuBLAS allocation {seq} is not 32 MiB")
        return rows

    def live_allocations(self, trace):
        """(address, bytes) of the device allocations live at the end."""
        conn = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
        self.addCleanup(conn.close)
        return conn.execute("""
            SELECT a.seq, a.address, a.bytes FROM allocs a
             WHERE NOT EXISTS (SELECT 1 FROM frees f WHERE f.alloc = a.seq)
             ORDER BY a.seq""").fetchall()

    @staticmethod
    def live_at(workspaces, seq):
        """Bytes of cuBLAS workspace live just before event seq."""
        return sum(size for a, size, f in workspaces if a < seq and (f is None or f > seq))

    # ---- the tests ----

    def test_training_loop(self):
        """An MLP, AdamW, five steps: memtrace's peak, live bytes and live
        allocations at the end are torch's, plus the cuBLAS workspaces."""
        self.check_training_loop("train")

    def test_training_loop_ending_in_os__exit(self):
        """The same, ended by os._exit right after torch's figures: the
        trace is as complete, and closed with the status (issue #48)."""
        run = self.check_training_loop("train_os_exit")
        conn = sqlite3.connect(f"file:{run.trace}?mode=ro", uri=True)
        self.addCleanup(conn.close)
        meta = dict(conn.execute("SELECT key, value FROM meta"))
        self.assertEqual((meta["end"], meta.get("exit_status")), ("exit", "0"))
        # torch's segments are its cache, and the cuBLAS handles' workspaces
        # theirs, kept while the handles live: neither is the program's leak
        fig, rep = run.figures, self.report_json(run.trace)
        leaks = rep["leaks"]
        cache = [g for g in leaks if g["framework_cache"]]
        self.assertEqual(sum(g["count"] for g in cache), fig["segments"])
        self.assertEqual(sum(g["bytes"] for g in cache), fig["memory_reserved"])
        ws = self.cublas_workspaces(run.trace)
        handles = [g for g in leaks if g["library_handle"]]
        self.assertEqual({g["library_handle"] for g in handles}, {"cuBLAS"})
        self.assertEqual(sum(g["bytes"] for g in handles), sum(size for _, size, _ in ws))
        self.assertEqual(sum(g["bytes"] for g in handles),
                         rep["totals"]["live_bytes_at_end"] - fig["memory_reserved"])
        self.assertEqual([g for g in leaks if not g["framework_cache"] and
                          not g["library_handle"]], [])
        text = " ".join(self.report(run.trace).split())
        self.assertIn("Leaks: none outside PyTorch's cache and libraries' handles", text)
        self.assertIn("Held by PyTorch's caching allocator at the end", text)
        self.assertIn("Held by the handles of cuBLAS at the end", text)

    def check_training_loop(self, name):
        run = self.run_both(name)
        fig = run.figures
        rep = self.report_json(run.trace)
        t = rep["totals"]
        ws = self.cublas_workspaces(run.trace)
        # Two handles: the main thread's (forward) and autograd's (backward),
        # made at the first step and never destroyed while the trace runs.
        self.assertEqual(len(ws), 2, f"cuBLAS workspaces: {ws}")
        self.assertTrue(all(f is None for _, _, f in ws), "a cuBLAS workspace was freed")
        ws_bytes = sum(size for _, size, _ in ws)
        self.assertEqual(t["ooms"], 0)
        self.assertEqual(t["peak_bytes"], fig["max_memory_reserved"] + ws_bytes)
        self.assertEqual(t["live_bytes_at_end"], fig["memory_reserved"] + ws_bytes)
        self.assertEqual(t["live_allocations_at_end"], fig["segments"] + len(ws))
        ws_seqs = {seq for seq, _, _ in ws}
        live = [(addr, size) for seq, addr, size in self.live_allocations(run.trace)
                if seq not in ws_seqs]
        self.assertEqual(len(live), fig["segments"])
        self.assertEqual(sum(size for _, size in live), fig["segments_bytes"])
        # Segment by segment: each of memory_snapshot()'s segments is one
        # live cudaMalloc of memtrace's, at its address, of its size.
        self.assertEqual(sorted(live), sorted(map(tuple, fig["segment_list"])))
        return run

    def test_oom(self):
        """A tensor too big for what the model leaves of 1 GiB: the report's
        OOMs are the sizes torch's allocator asked cudaMalloc for, with
        torch's reserved memory live at each, and the text report leads
        with it."""
        run = self.run_both("oom")
        fig = run.figures
        obs, = fig["observer"]  # one OutOfMemoryError
        # What torch asked for: its request rounded up to 2 MiB (above 10
        # MiB), named so by its message.
        self.assertEqual(obs["alloc"], -(-fig["request_bytes"] // (2 * MiB)) * 2 * MiB)
        self.assertEqual(fig["tried_to_allocate"], format_size(obs["alloc"]))
        self.assertEqual((fig["num_ooms"], fig["num_alloc_retries"]), (1, 1))
        rep = self.report_json(run.trace)
        ws = self.cublas_workspaces(run.trace)
        self.assertEqual(len(ws), 2, f"cuBLAS workspaces: {ws}")
        ooms = rep["ooms"]
        # torch's cudaMalloc failed, it freed its cache, retried, failed
        # again: one failure per try, num_alloc_retries + num_ooms, and one
        # episode per OutOfMemoryError, the retry naming the first try and
        # what was freed between them: torch's reserved memory it gave back.
        self.assertEqual(len(ooms), fig["num_alloc_retries"] + fig["num_ooms"])
        self.assertEqual(rep["totals"]["oom_episodes"], fig["num_ooms"])
        first, last = ooms
        self.assertIsNone(first["retry_of"])
        self.assertEqual(last["retry_of"], first["seq"])
        self.assertEqual(last["released_before_retry_bytes"],
                         fig["reserved_before_oom"] - fig["reserved_after_oom"])
        for o in ooms:
            self.assertEqual((o["api"], o["requested_bytes"]), ("cudaMalloc", obs["alloc"]))
        # Before the retry torch still had its cache; after, what it reserved
        # when it raised.
        self.assertGreater(fig["reserved_before_oom"], fig["reserved_after_oom"])
        self.assertEqual(first["live_bytes"],
                         fig["reserved_before_oom"] + self.live_at(ws, first["seq"]))
        self.assertEqual(last["live_bytes"],
                         fig["reserved_after_oom"] + self.live_at(ws, last["seq"]))
        self.assertEqual(last["device_free"], obs["device_free"])
        self.assertEqual(last["device_total"], obs["device_total"])
        # The text report: the OOM right after the header.
        text = self.report(run.trace)
        first_paragraph = text.split("\n\n")[1]
        self.assertTrue(first_paragraph.startswith("OUT OF MEMORY: "), text)
        self.assertIn(f"cudaMalloc of {obs['alloc'] / MiB:.1f} MiB failed", first_paragraph)
        freed = (fig["reserved_before_oom"] - fig["reserved_after_oom"]) / MiB
        self.assertIn("One episode: this request failed first at", first_paragraph)
        self.assertIn(f"{freed:.1f} MiB in", " ".join(first_paragraph.split()))
        # It names the user's line that asked (docs/report.md, "The user's
        # frame"), not a frame of torch's caching allocator.
        where = f"<module> (oom.py:{tag_line('oom.py', 'big')})"
        self.assertIn(f" failed at ", first_paragraph)
        self.assertIn(f" in {where};", " ".join(first_paragraph.split()))
        self.assertNotIn("c10::", first_paragraph)
        # The answer on stderr at the failure.
        self.assertIn(f"memtrace: out of memory: cudaMalloc of {obs['alloc'] / MiB:.1f} MiB "
                      f"failed in {where}", run.stderr)

    def test_oom_halve_batch(self):
        """A training step that does not fit: the program catches each OOM,
        halves its batch, trains and exits 0. Each OOM is torch's, with
        torch's reserved memory live at it."""
        run = self.run_both("oom_halve")
        fig = run.figures
        obs = fig["observer"]
        self.assertEqual(len(fig["batches"]), len(obs) + 1)
        self.assertEqual(fig["num_ooms"], len(obs))
        self.assertGreaterEqual(len(obs), 1)
        # Every retry failed (none succeeded): two failed cudaMallocs each.
        self.assertEqual(fig["num_alloc_retries"], fig["num_ooms"])
        rep = self.report_json(run.trace)
        self.assertEqual(rep["trace"]["end"], "exit")
        self.assertEqual(rep["trace"]["exit_status"], 0)
        ws = self.cublas_workspaces(run.trace)
        self.assertEqual(len(ws), 2, f"cuBLAS workspaces: {ws}")
        ooms = rep["ooms"]
        self.assertEqual(len(ooms), 2 * len(obs))
        for i, o in enumerate(obs):
            tried, retried = ooms[2 * i], ooms[2 * i + 1]
            self.assertEqual(tried["requested_bytes"], o["alloc"])
            self.assertEqual(retried["requested_bytes"], o["alloc"])
            self.assertEqual(retried["live_bytes"],
                             o["reserved"] + self.live_at(ws, retried["seq"]))
            self.assertEqual(retried["device_free"], o["device_free"])
            # each OutOfMemoryError one episode: the retry names its try
            self.assertEqual((tried["retry_of"], retried["retry_of"]), (None, tried["seq"]))
        self.assertEqual(rep["totals"]["oom_episodes"], fig["num_ooms"])
        t = rep["totals"]
        self.assertEqual(t["live_bytes_at_end"],
                         fig["memory_reserved"] + self.live_at(ws, 1 << 62))
        self.assertEqual(t["live_allocations_at_end"], fig["segments"] + len(ws))
        text = self.report(run.trace)
        self.assertIn("the program exited normally", text.split("\n\n")[0])
        paragraphs = [p for p in text.split("\n\n")[1:] if not p.startswith("Note:")]
        self.assertTrue(paragraphs[0].startswith("OUT OF MEMORY: "), text)
        self.assertIn(f"cudaMalloc of {obs[-1]['alloc'] / MiB:.1f} MiB failed", paragraphs[0])

    def test_oom_recovered(self):
        """A cudaMalloc that failed while torch's cache held a freed
        tensor: torch flushed its cache, retried and succeeded. torch
        counts a retry and no OOM; memtrace tells no OOM, on stderr or in
        the report, and tells the retry. (Traced only: torch's figures
        are read under memtrace, to keep the test short.)"""
        run = self.run_program("oom_recovered", traced=True)
        self.assertEqual(run.rc, 0, run.stderr)
        fig = run.figures
        self.assertEqual((fig["num_ooms"], fig["observer"]), (0, []))
        self.assertEqual(fig["num_alloc_retries"], 1)
        self.assertNotIn("out of memory", run.stderr)
        self.assertIn(f"memtrace: cudaMalloc of {fig['request_bytes'] / MiB:.1f} MiB failed "
                      f"in <module> (oom_recovered.py:{tag_line('oom_recovered.py', 'big')})",
                      run.stderr)
        self.assertIn("cache flushed and retried; no OOM", run.stderr)
        rep = self.report_json(run.trace)
        t = rep["totals"]
        self.assertEqual(t["oom_episodes"], fig["num_ooms"])
        self.assertEqual(t["recovered_episodes"], fig["num_alloc_retries"])
        o, = rep["ooms"]
        self.assertTrue(o["recovered"])
        self.assertEqual((o["api"], o["requested_bytes"]), ("cudaMalloc", fig["request_bytes"]))
        # torch gave its whole cache back before the retry
        self.assertEqual(o["released_before_success_bytes"], fig["reserved_before_retry"])
        text = self.report(run.trace)
        self.assertNotIn("OUT OF MEMORY", text)
        first_paragraph = " ".join(text.split("\n\n")[1].split())
        self.assertTrue(first_paragraph.startswith("No OOM: "), text)
        self.assertIn("cache flushed and retried; no OOM", first_paragraph)
        # the rows' caller lines name no interpreter frame (<module> has
        # no caller of the user's)
        self.assertNotIn("PyEval_EvalCode", text)
        html = self.report(run.trace, "--format", "html")
        self.assertNotIn("OUT OF MEMORY", html)
        self.assertIn("cache flushed and retried; no OOM", html)
        # nor in --diff's totals, the ranks table or the Perfetto export:
        # counted apart, as recovered
        diff = json.loads(self.report(run.trace, "--diff", run.trace, "--format", "json"))
        self.assertEqual((diff["new"]["ooms"], diff["new"]["recovered_failures"]), (0, 1))
        self.assertRegex(self.report(run.trace, "--diff", run.trace),
                         r"out of memory +0 +0 +\+0\n +recovered \(no OOM\) +1 +1 +\+0\n")
        other = os.path.join(self.tmp, "other.db")
        shutil.copyfile(run.trace, other)
        ranks = self.report(run.trace, other)
        self.assertIn("0 with an out-of-memory failure", ranks)
        self.assertIn("Recovered from, not in OOMs: 2 failed allocations on 2 ranks", ranks)
        ranks_json = json.loads(self.report(run.trace, other, "--format", "json"))
        self.assertEqual([(r["ooms"], r["recovered_failures"]) for r in ranks_json["traces"]],
                         [(0, 1), (0, 1)])
        events = json.loads(self.report(run.trace, "--format", "perfetto"))["traceEvents"]
        cats = [e.get("cat") for e in events]
        self.assertNotIn("oom", cats)
        self.assertEqual(cats.count("recovered"), 1)


def tag_line(program, tag):
    """The line of programs/PROGRAM that ends in the comment "# @TAG"."""
    with open(os.path.join(PROGRAMS, program)) as f:
        lines = [n for n, line in enumerate(f, 1) if line.rstrip().endswith("# @" + tag)]
    assert len(lines) == 1, (program, tag)
    return lines[0]


def format_size(size):
    """torch's format_size, as its OOM message names a size."""
    if size <= 1024:
        return f"{size} bytes"
    if size <= 1048576:
        return f"{size / 1024:.2f} KiB"
    if size <= 1073741824:
        return f"{size / 1048576:.2f} MiB"
    return f"{size / 1073741824:.2f} GiB"


def main():
    global PYTHON
    PYTHON = framework_python()
    if PYTHON is None:
        return SKIP
    result = unittest.main(verbosity=2, exit=False).result
    if not result.wasSuccessful():
        return 1
    if result.skipped and len(result.skipped) == result.testsRun:
        return SKIP
    return 0


if __name__ == "__main__":
    sys.exit(main())
