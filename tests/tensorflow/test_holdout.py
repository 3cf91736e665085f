"""A held-out set for TensorFlow (issue 32, "Done when"): holdout/*.py,
written apart from programs/ and never used to tune memtrace, run as
test_tensorflow.py runs its programs (plain and under memtrace on
`scripts/sim-run --capacity 1G`) and checked the same way, against
TensorFlow's own figures from the same run
(tf.config.experimental.get_memory_info('GPU:0'), the BFC arena's
memory_limit, the ResourceExhaustedError's message):

- double.py: a Keras MLP whose batch is doubled until model.fit runs out
  of memory; the default BFC arena, and with its log silenced;
- custom_step.py: a tf.function training step with a GradientTape, one
  batch too large;
- grow.py: Keras models built in a loop and kept, under
  TF_GPU_ALLOCATOR=cuda_malloc_async.

Uses test_tensorflow.py's helpers; skips (77) as it does."""
import json
import os
import sqlite3
import subprocess
import sys
import time
import unittest

import test_tensorflow as base

HOLDOUT = os.path.join(base.SOURCE, "tests", "tensorflow", "holdout")


def tag_line(program, tag):
    with open(os.path.join(HOLDOUT, program)) as f:
        lines = [n for n, line in enumerate(f, 1) if line.rstrip().endswith("# @" + tag)]
    assert len(lines) == 1, tag
    return lines[0]


class HoldOut(unittest.TestCase):
    setUp = base.TensorFlowTest.setUp
    tearDown = base.TensorFlowTest.tearDown
    report = base.TensorFlowTest.report
    report_json = base.TensorFlowTest.report_json
    failed_frees = base.TensorFlowTest.failed_frees
    failed_before_peak = base.TensorFlowTest.failed_before_peak

    def workspaces(self, trace):
        """The simulated cuBLAS handles' workspaces (tests/sim/README.md),
        from the trace by their stack: bytes TensorFlow does not count."""
        conn = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
        self.addCleanup(conn.close)
        rows = conn.execute("""
            SELECT a.bytes FROM allocs a JOIN sites s ON s.id = a.site
             WHERE EXISTS (SELECT 1 FROM stack_frames sf
                             JOIN frames fr ON fr.id = sf.frame
                             JOIN modules m ON m.id = fr.module
                            WHERE sf.stack = s.stack AND m.path LIKE '%/libcublas.so%'
                              AND fr.function LIKE 'cublasCreate%')""").fetchall()
        self.assertTrue(all(b == base.CUBLAS_WORKSPACE for b, in rows), rows)
        return sum(b for b, in rows)

    def run_program(self, program, setting, traced):
        extra = dict(setting)
        trace = None
        if traced:
            trace = os.path.join(self.tmp, program.replace(".py", ".db"))
            extra.update({"LD_PRELOAD": base.LIB, "MEMTRACE_OUTPUT": trace,
                          "MEMTRACE_CUPTI": "off"})
        start = time.monotonic()
        proc = subprocess.run(
            [base.SIM_RUN, "--capacity", "1G", "--", base.PYTHON,
             os.path.join(HOLDOUT, program)],
            env=base.run_env(extra), cwd=self.tmp, capture_output=True, text=True, timeout=400)
        lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
        print(f"{program} {setting or 'default'} {'under memtrace' if traced else 'plain'}: "
              f"exit {proc.returncode}, {time.monotonic() - start:.1f} s, TensorFlow's figures "
              f"{lines[-1] if lines else None}")
        self.assertTrue(lines, f"{program} printed no figures; stderr:\n{proc.stderr[-4000:]}")
        return proc, json.loads(lines[-1]), trace

    def run_both(self, program, setting, same, near=()):
        """Plain, then under memtrace: exit 0 both ways, the figures named
        in same equal, those in near within base.TIMING_SLACK. The traced
        run's figures returned, the truth for its trace."""
        plain, plain_fig, _ = self.run_program(program, setting, traced=False)
        traced, fig, trace = self.run_program(program, setting, traced=True)
        self.assertEqual(plain.returncode, 0, plain.stderr[-4000:])
        self.assertEqual(traced.returncode, 0, traced.stderr[-4000:])
        for key in same:
            self.assertEqual(fig[key], plain_fig[key], f"{key} changed under memtrace")
        for key in near:
            base.assert_near(self, fig[key], plain_fig[key], key)
        return traced, fig, trace

    def check_oom(self, program, setting, same):
        """The arena's OOM leads the report and the stderr answer, of
        what TensorFlow's error names (the tensor, else the batch copied
        in), with the arena and the workspaces live, at the user's line."""
        traced, fig, trace = self.run_both(program, setting, same)
        self.assertTrue(fig["error"].startswith("ResourceExhaustedError: "), fig["error"])
        rep = self.report_json(trace)
        ws = self.workspaces(trace)
        if "OOM when allocating tensor" in fig["error"]:
            request = base.tensor_bytes(fig["error"])
        else:
            request = fig["batch_bytes"]
        self.assertEqual([o["api"] for o in rep["ooms"]], ["BFCAllocator"], rep["ooms"])
        oom = rep["ooms"][0]
        self.assertEqual(oom["requested_bytes"], request)
        self.assertEqual(oom["live_bytes"], fig["memory_limit"] + ws)
        self.assertEqual(rep["totals"]["peak_bytes"], fig["memory_limit"] + ws)
        self.assertGreaterEqual(fig["memory_limit"], fig["after_oom"]["peak"])
        where = f"main ({program}:{tag_line(program, 'oom')})"
        text = self.report(trace)
        first = [p for p in text.split("\n\n")[1:] if not p.startswith("Note:")][0]
        first = " ".join(first.split())
        self.assertTrue(first.startswith("OUT OF MEMORY: BFCAllocator of "), first)
        self.assertIn(f" in {where}", first)
        self.assertIn("memtrace: out of memory: BFCAllocator of ", traced.stderr)
        self.assertIn(where, traced.stderr)
        return rep, fig

    def test_double_batch(self):
        self.check_oom("double.py", {}, ("error", "batch", "memory_limit"))

    def test_double_batch_silenced(self):
        """TF_CPP_MIN_LOG_LEVEL=2: the OOM from the exception alone."""
        _, fig = self.check_oom("double.py", {"TF_CPP_MIN_LOG_LEVEL": "2"},
                                ("error", "batch", "memory_limit"))
        self.assertIn("OOM when allocating tensor", fig["error"])

    def test_custom_step(self):
        self.check_oom("custom_step.py", {}, ("error", "memory_limit"))

    def test_models_kept(self):
        """Every variable a CUDA allocation (cuda_malloc_async): one
        growing site, the user's build function, whose live bytes at each
        mark are TensorFlow's current and whose growth per build is
        TensorFlow's; the peak never below TensorFlow's."""
        traced, fig, trace = self.run_both("grow.py", {"TF_GPU_ALLOCATOR": "cuda_malloc_async"},
                                           ("weights", "device"), ("current",))
        self.assertTrue(fig["device"].endswith("/device:GPU:0"), fig["device"])
        rep = self.report_json(trace)
        ws = self.workspaces(trace)
        self.assertEqual(rep["growth"]["basis"], "marks")
        growing = [s for s in rep["growth"]["sites"] if s["growing"]]
        self.assertEqual(len(growing), 1, rep["growth"]["sites"])
        site = growing[0]
        self.assertTrue([f for f in site["frames"] if f.get("function") == "new_classifier"
                         and (f.get("file") or "").endswith("grow.py")], site["frames"])
        # a temporary whose free failed stays the build's, not TensorFlow's
        # (test_tensorflow.py's failed_frees)
        failed = self.failed_frees(trace, "grow.py")
        device = [c + sum(b for seq, b, _ in failed if seq < p["seq"])
                  for c, p in zip(fig["current"], rep["growth"]["points"])]
        self.assertEqual(site["live_bytes"], device)
        for a, b in zip(fig["current"], fig["current"][1:]):
            base.assert_near(self, b - a, fig["weights"], "a build's growth")
        self.assertEqual(site["growth_per_point"], base.slope(device))
        diag = rep["diagnosis"]
        self.assertEqual(diag["cause"], "growth", diag)
        # the peak: TensorFlow's, the workspace, and the temporaries whose
        # free failed before it; at most a small tensor in flight above
        # (test_tensorflow.py's test_cuda_malloc_async)
        expected = fig["peak"][-1] + ws + self.failed_before_peak(trace, "grow.py")
        peak = rep["totals"]["peak_bytes"]
        self.assertGreaterEqual(peak, expected)
        self.assertLessEqual(peak - expected, 4096)


def main():
    base.PYTHON = base.framework_python()
    if base.PYTHON is None:
        return base.SKIP
    result = unittest.main(verbosity=2, exit=False).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
