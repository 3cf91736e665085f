"""A held-out set of PyTorch programs (issue 30, "Done when"): written
apart from programs/ and never used to tune memtrace, run the same way
(plain and under memtrace on `scripts/sim-run --capacity 1G`) and checked
the same way, against torch's own figures from the same run: a
transformer encoder trained with token batches of two lengths, an
evaluation loop that keeps every output on the device, a batch raised
until torch runs out of memory. Uses test_torch.py's runner and helpers;
the programs import programs/common.py (PYTHONPATH)."""
import os
import sys

import test_torch as base

MiB = base.MiB

HOLDOUT = os.path.join(base.SOURCE, "tests", "torch", "holdout")


class HoldOut(base.TorchTest):
    def run_program(self, name, traced):
        saved = (base.PROGRAMS, base.run_env)
        base.PROGRAMS = HOLDOUT
        base.run_env = lambda extra: saved[1]({**extra, "PYTHONPATH": saved[0]})
        try:
            return super().run_program(name, traced)
        finally:
            base.PROGRAMS, base.run_env = saved

    def check_end(self, run):
        """At the end: memtrace's peak, live bytes and live allocations are
        torch's plus the cuBLAS workspaces, segment by segment."""
        fig = run.figures
        t = self.report_json(run.trace)["totals"]
        ws = self.cublas_workspaces(run.trace)
        ws_live = self.live_at(ws, 1 << 62)
        self.assertEqual(t["peak_bytes"] - sum(s for _, s, _ in ws),
                         fig["max_memory_reserved"])
        self.assertEqual(t["live_bytes_at_end"], fig["memory_reserved"] + ws_live)
        live_ws = sum(1 for _, _, f in ws if f is None)
        self.assertEqual(t["live_allocations_at_end"], fig["segments"] + live_ws)
        ws_seqs = {seq for seq, _, _ in ws}
        live = sorted((addr, size) for seq, addr, size in self.live_allocations(run.trace)
                      if seq not in ws_seqs)
        self.assertEqual(live, sorted(map(tuple, fig["segment_list"])))
        return ws

    def test_transformer(self):
        """Attention, layer norm, dropout, Adam: figures equal torch's."""
        run = self.run_both("transformer")
        ws = self.check_end(run)
        self.assertGreaterEqual(len(ws), 1)
        self.assertEqual(self.report_json(run.trace)["totals"]["ooms"], 0)

    def test_kept_outputs(self):
        """Every output kept on the device: the live set is torch's, and the
        run's cause is growth, kept by the line that made each output, with
        bytes per repetition equal to one output's."""
        run = self.run_both("kept_outputs")
        self.check_end(run)
        fig = run.figures
        self.assertEqual(fig["kept"], 10)
        diag = self.report_json(run.trace)["diagnosis"]
        self.assertIsNotNone(diag, "no cause for a run that kept ten outputs")
        self.assertEqual(diag["cause"], "growth", diag)
        self.assertEqual(diag["bytes"], fig["kept_bytes"], diag)
        where = f"evaluate (kept_outputs.py:{tag_line_holdout('kept_outputs.py', 'out')})"
        self.assertIn(where, " ".join(f.get("name", "") + " " + str(f)
                                      for f in diag["frames"]) + diag["evidence"], diag)

    def test_oom_grow(self):
        """The batch doubled until torch gives up: the report's failed
        cudaMallocs are torch's tries (its retries and its OOM), the last
        one of the size its observer saw, with torch's reserved memory live
        and the device's free memory as torch saw them; the headline names
        the user's line."""
        run = self.run_both("oom_grow")
        fig = run.figures
        obs, = fig["observer"]
        rep = self.report_json(run.trace)
        ooms = rep["ooms"]
        self.assertEqual(fig["num_ooms"], 1)
        self.assertEqual(len(ooms), fig["num_alloc_retries"] + fig["num_ooms"])
        last = ooms[-1]
        ws = self.cublas_workspaces(run.trace)
        self.assertEqual((last["api"], last["requested_bytes"]), ("cudaMalloc", obs["alloc"]))
        self.assertEqual(last["live_bytes"], obs["reserved"] + self.live_at(ws, last["seq"]))
        self.assertEqual(last["device_free"], obs["device_free"])
        self.assertEqual(last["device_total"], obs["device_total"])
        self.assertEqual(last["retry_of"], ooms[-2]["seq"])
        self.check_end(run)
        text = self.report(run.trace)
        first = " ".join(text.split("\n\n")[1].split())
        self.assertTrue(first.startswith("OUT OF MEMORY: "), text)
        self.assertIn(f"cudaMalloc of {obs['alloc'] / MiB:.1f} MiB failed", first)
        self.assertIn(f" in <module> (oom_grow.py:{tag_line_holdout('oom_grow.py', 'step')})",
                      first)


# Only the held-out tests here: test_torch.py's own run in its meson test.
for _name in dir(base.TorchTest):
    if _name.startswith("test_") and _name not in vars(HoldOut):
        setattr(HoldOut, _name, None)


def tag_line_holdout(program, tag):
    saved = base.PROGRAMS
    base.PROGRAMS = HOLDOUT
    try:
        return base.tag_line(program, tag)
    finally:
        base.PROGRAMS = saved


if __name__ == "__main__":
    sys.exit(base.main())
