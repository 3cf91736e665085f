"""More of real PyTorch under memtrace, checked against torch's own
accounting (issue 30, deliver 3): models built again and again, a
DataLoader with forked workers and pinned memory, torchrun with two
ranks, the torch-snapshot export opened by torch's own
torch.cuda._memory_viz, and Keras 3 on the torch backend (the python of
`scripts/framework-python keras`).

The pattern is test_torch.py's, whose helpers these tests borrow: each
program of programs/ runs plain and under LD_PRELOAD=libmemtrace.so on
`scripts/sim-run --capacity 1G` with the torch of
`scripts/framework-python torch`, prints torch's own figures as one JSON
line, and the tests assert that the exit status and those figures are
the same both ways and that memtrace's report equals them exactly (with
the cuBLAS handles' default workspaces, which torch does not count, found
in the trace by their stacks and added). Skips (77) only when
scripts/framework-python torch does."""
import glob
import json
import os
import sqlite3
import subprocess
import sys
import time
import unittest

import test_torch as base

MiB = base.MiB


class MoreTorchTest(unittest.TestCase):
    setUp = base.TorchTest.setUp
    tearDown = base.TorchTest.tearDown
    run_program = base.TorchTest.run_program
    run_both = base.TorchTest.run_both
    report = base.TorchTest.report
    report_json = base.TorchTest.report_json
    cublas_workspaces = base.TorchTest.cublas_workspaces
    live_allocations = base.TorchTest.live_allocations

    def test_models_built_again_and_again(self):
        """Six builds of a model, each kept in a list; no mark, no NVTX:
        the report finds the growth over spans of the trace and names the user's function
        that builds the model (not torch's frames), with torch's reserved
        memory as its last value."""
        run = self.run_both("models")
        fig = run.figures
        rep = self.report_json(run.trace)
        t = rep["totals"]
        self.assertEqual(self.cublas_workspaces(run.trace), [])  # no matmul here
        self.assertEqual(t["peak_bytes"], fig["max_memory_reserved"])
        self.assertEqual(t["live_bytes_at_end"], fig["memory_reserved"])
        self.assertEqual(t["live_allocations_at_end"], fig["segments"])
        # torch's own figures say it grew at every build
        reserved = fig["reserved_after"]
        self.assertEqual(len(reserved), fig["builds"])
        self.assertTrue(all(a < b for a, b in zip(reserved, reserved[1:])), reserved)
        growth = rep["growth"]
        self.assertEqual(growth["basis"], "spans", growth)
        top = growth["sites"][0]
        self.assertTrue(top["growing"], top)
        site = top["site"]
        self.assertEqual((site["kind"], site["function"]), ("python", "build_model"), site)
        self.assertEqual(os.path.basename(site["file"]), "models.py")
        body = range(fig["build_model_line"], fig["build_model_line"] + 5)
        self.assertIn(site["line"], body, f"{site} is not in build_model")
        self.assertEqual(top["live_bytes"][-1], fig["memory_reserved"])
        self.assertTrue(all(a <= b for a, b in zip(top["live_bytes"], top["live_bytes"][1:])))
        self.assertLess(top["live_bytes"][0], top["live_bytes"][-1])
        for other in growth["sites"][1:]:
            self.assertFalse(other["growing"], f"another site grows: {other}")
        # The text report leads with it, by the user's line, no torch frame.
        text = self.report(run.trace)
        story = text.split("\n\n")[1]
        self.assertTrue(story.startswith("GROWING BUILD AFTER BUILD"), text)
        self.assertIn(f"build_model (models.py:{site['line']})", story)
        self.assertNotIn("module.py", story)
        self.assertNotIn("torch", story)

    def test_dataloader_workers_pin_memory(self):
        """A DataLoader with two forked workers and pin_memory=True: the
        program runs the same; memtrace's pinned host memory is what
        torch's host allocator holds, its device memory torch's reserved
        plus the cuBLAS workspaces."""
        # torch's host allocator stats depend on how far its pinning thread
        # ran ahead of the loop (its active and cached blocks): they are
        # compared with memtrace's in the same run, not between runs.
        plain = self.run_program("dataloader", traced=False)
        run = self.run_program("dataloader", traced=True)
        self.assertEqual(plain.rc, 0, plain.stderr)
        self.assertEqual(run.rc, 0, run.stderr)
        fig = run.figures
        self.assertEqual({k: v for k, v in fig.items() if k != "host"},
                         {k: v for k, v in plain.figures.items() if k != "host"},
                         "torch's figures changed under memtrace")
        self.assertEqual(fig["pinned_batches"], fig["batches"])
        self.assertGreater(fig["batches"], 0)
        rep = self.report_json(run.trace)
        ws = self.cublas_workspaces(run.trace)
        ws_bytes = sum(size for _, size, _ in ws)
        t = rep["totals"]
        self.assertEqual(t["live_bytes_at_end"], fig["memory_reserved"] + ws_bytes)
        self.assertEqual(t["live_allocations_at_end"], fig["segments"] + len(ws))
        host = rep["host"]
        self.assertGreater(host["allocations"], 0)
        # torch's CachingHostAllocator keeps its pinned blocks: each one a
        # cudaHostAlloc, none freed while the program runs.
        self.assertEqual(host["live_bytes_at_end"], fig["host"]["allocated_bytes.current"])
        self.assertEqual(host["live_allocations_at_end"], fig["host"]["allocations.current"])
        self.assertEqual(host["peak_bytes"], fig["host"]["allocated_bytes.peak"])
        self.assertEqual(rep["memory_kinds"]["host_pinned"]["counted_as_device"], False)
        # one trace: the workers make no CUDA call
        self.assertEqual(glob.glob(os.path.join(self.tmp, "*.db")), [run.trace])

    def run_torchrun(self, traced):
        """ddp.py under torchrun, two ranks: (exit status, stderr,
        {rank: figures}, [traces])."""
        where = os.path.join(self.tmp, "traced" if traced else "plain")
        os.makedirs(where)
        extra = {}
        if traced:
            extra = {"LD_PRELOAD": base.LIB, "MEMTRACE_OUTPUT": "rank%r-%p.db",
                     "MEMTRACE_CUPTI": "off"}
        torchrun = os.path.join(os.path.dirname(base.PYTHON), "torchrun")
        start = time.monotonic()
        proc = subprocess.run(
            [base.SIM_RUN, "--capacity", "1G", "--", torchrun, "--standalone",
             "--nproc-per-node", "2", os.path.join(base.PROGRAMS, "ddp.py")],
            env=base.run_env(extra), cwd=where, capture_output=True, text=True, timeout=400)
        figures = {}
        for path in glob.glob(os.path.join(where, "figures-*.json")):
            with open(path) as f:
                fig = json.load(f)
            figures[fig["rank"]] = fig
        print(f"torchrun {'under memtrace' if traced else 'plain'}: exit {proc.returncode}, "
              f"{time.monotonic() - start:.1f} s, torch's figures {figures}")
        return proc.returncode, proc.stderr, figures, sorted(glob.glob(os.path.join(where, "*.db")))

    def test_torchrun_two_ranks(self):
        """torchrun --nproc-per-node 2 (gloo): one trace per rank, named by
        its rank; the merged table of the two gives each rank torch's
        figures of that rank."""
        rc, err, plain, none = self.run_torchrun(traced=False)
        self.assertEqual(rc, 0, err)
        self.assertEqual(sorted(plain), [0, 1])
        self.assertEqual(none, [])
        rc, err, traced, traces = self.run_torchrun(traced=True)
        self.assertEqual(rc, 0, err)
        self.assertEqual(traced, plain, "torch's figures changed under memtrace")
        # one trace per rank (the launcher makes no CUDA call)
        self.assertEqual(len(traces), 2, traces)
        by_rank = {int(os.path.basename(p)[4:].split("-")[0]): p for p in traces}
        self.assertEqual(sorted(by_rank), [0, 1])
        proc = subprocess.run([base.REPORTER, *traces, "--format", "json"],
                              capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        table = json.loads(proc.stdout)
        self.assertEqual(table["memtrace_ranks"], 2)
        self.assertEqual(table["skipped"], [])
        rows = {row["rank"]: row for row in table["traces"]}
        self.assertEqual(sorted(rows), [0, 1])
        for rank, row in rows.items():
            fig = plain[rank]
            self.assertEqual(by_rank[rank], row["path"])
            ws = self.cublas_workspaces(by_rank[rank])
            ws_bytes = sum(size for _, size, _ in ws)
            self.assertEqual(row["end"], "exit")
            self.assertEqual(row["ooms"], 0)
            self.assertEqual(row["peak_bytes"], fig["max_memory_reserved"] + ws_bytes, rank)
            self.assertEqual(row["live_bytes_at_end"], fig["memory_reserved"] + ws_bytes, rank)
        # the ranks differ (rank 1's model is wider), and the table says so
        self.assertGreater(plain[1]["max_memory_reserved"], plain[0]["max_memory_reserved"])
        self.assertEqual(table["skew"]["heaviest_rank"], 1)
        text = subprocess.run([base.REPORTER, *traces], capture_output=True, text=True,
                              timeout=300)
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn("2 traces", text.stdout)

    def keras_python(self):
        """scripts/framework-python keras: its python (torch's environment
        under it), or the test skips where it exits 77, saying why."""
        proc = subprocess.run([os.path.join(base.SOURCE, "scripts", "framework-python"), "keras"],
                              capture_output=True, text=True)
        if proc.returncode == base.SKIP:
            lines = proc.stderr.strip().splitlines()
            self.skipTest("keras cannot be had here: " + (lines[-1] if lines else "?"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc.stdout.strip()

    def test_keras_fit_on_torch(self):
        """Keras 3 with KERAS_BACKEND=torch, model.fit of a dense model:
        the same exit status and figures under memtrace; its peak, live
        bytes and live allocations are torch's plus the cuBLAS workspaces."""
        python = self.keras_python()
        runs = []
        for traced in (False, True):
            trace = os.path.join(self.tmp, "keras.db") if traced else None
            extra = {"KERAS_BACKEND": "torch"}
            if traced:
                extra.update(LD_PRELOAD=base.LIB, MEMTRACE_OUTPUT=trace, MEMTRACE_CUPTI="off")
            proc = subprocess.run(
                [base.SIM_RUN, "--capacity", "1G", "--", python,
                 os.path.join(base.PROGRAMS, "keras_fit.py")],
                env=base.run_env(extra), cwd=self.tmp, capture_output=True, text=True,
                timeout=300)
            lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
            print(f"keras_fit {'under memtrace' if traced else 'plain'}: exit "
                  f"{proc.returncode}, torch's figures {lines[-1:]}")
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertTrue(lines, proc.stderr)
            runs.append((json.loads(lines[-1]), trace))
        (plain, _), (fig, trace) = runs
        self.assertEqual(fig, plain, "torch's figures changed under memtrace")
        self.assertEqual((fig["backend"], fig["epochs"], fig["weights_device"]),
                         ("torch", 3, "cuda:0"))
        ws = self.cublas_workspaces(trace)
        self.assertEqual(len(ws), 2, ws)
        ws_bytes = sum(size for _, size, _ in ws)
        t = self.report_json(trace)["totals"]
        self.assertEqual(t["peak_bytes"], fig["max_memory_reserved"] + ws_bytes)
        self.assertEqual(t["live_bytes_at_end"], fig["memory_reserved"] + ws_bytes)
        self.assertEqual(t["live_allocations_at_end"], fig["segments"] + len(ws))
        # device memory only: torch pins a few host bytes too (cudaHostAlloc)
        conn = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
        self.addCleanup(conn.close)
        live = conn.execute("""
            SELECT a.seq, a.address, a.bytes FROM allocs a JOIN sites s ON s.id = a.site
             WHERE s.mem = 1 AND NOT EXISTS (SELECT 1 FROM frees f WHERE f.alloc = a.seq)
             ORDER BY a.seq""").fetchall()
        ws_seqs = {seq for seq, _, _ in ws}
        live = [(addr, size) for seq, addr, size in live if seq not in ws_seqs]
        self.assertEqual(sorted(live), sorted(map(tuple, fig["segment_list"])))

    def test_torch_snapshot_opened_by_memory_viz(self):
        """The training loop traced; its torch-snapshot export read by
        torch.cuda._memory_viz (its summary, trace printout and plots, and
        its command line): the segments it reads are the program's own
        memory_snapshot() segments, address and size, plus the cuBLAS
        workspaces."""
        run = self.run_program("train", traced=True)
        self.assertEqual(run.rc, 0, run.stderr)
        fig = run.figures
        export = os.path.join(self.tmp, "train.pickle")
        self.report(run.trace, "--format", "torch-snapshot", "-o", export)
        proc = subprocess.run([base.PYTHON, os.path.join(base.PROGRAMS, "read_snapshot.py"),
                               export], capture_output=True, text=True, timeout=300,
                              env=base.run_env({}))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        read = json.loads(proc.stdout.splitlines()[-1])
        ws = self.cublas_workspaces(run.trace)
        self.assertEqual(len(ws), 2, ws)
        ws_addresses = {addr for seq, addr, size in self.live_allocations(run.trace)
                        if seq in {s for s, _, _ in ws}}
        segments = [s for s in read["segments"] if s[0] not in ws_addresses]
        self.assertEqual(segments, sorted(fig["segment_list"]))
        self.assertEqual(len(read["segments"]), fig["segments"] + len(ws))
        self.assertEqual(read["segsum_segments"], len(read["segments"]))
        self.assertGreater(read["trace_actions"], 0)
        self.assertTrue(all(n > 0 for n in read["plots_bytes"]))
        # torch's own command line reads it too
        cli = subprocess.run([base.PYTHON, "-m", "torch.cuda._memory_viz", "stats", export],
                             capture_output=True, text=True, timeout=300, env=base.run_env({}))
        self.assertEqual(cli.returncode, 0, cli.stderr)
        self.assertIn(f"segments: {len(read['segments'])}", cli.stdout)


def main():
    base.PYTHON = base.framework_python()
    if base.PYTHON is None:
        return base.SKIP
    result = unittest.main(verbosity=2, exit=False).result
    if not result.wasSuccessful():
        return 1
    if result.skipped and len(result.skipped) == result.testsRun:
        return base.SKIP
    return 0


if __name__ == "__main__":
    sys.exit(main())
