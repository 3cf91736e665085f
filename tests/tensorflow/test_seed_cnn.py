"""The seed document's CNN on an 8 GB simulated device (issue 49, "Done
when"), in the tensorflow-long suite (not run by default:
scripts/test passes --no-suite tensorflow-long; run it with
`meson test -C build --suite tensorflow-long`).

programs/seed_cnn.py trains a Keras Conv2D stack (five Conv2D of 64 to
256 filters, MaxPooling2D, Dense) on 224x224x3 images with Adam and
Keras's defaults (TensorFlow's BFC arena; XLA's cuDNN convolutions) over
one step, on `scripts/sim-run --capacity 8G`, plain and under
libmemtrace.so:

- batch 128 does not fit, as on a real 8 GB GPU: both runs exit 0 after
  catching the same ResourceExhaustedError, with the same TensorFlow
  figures (get_memory_info('GPU:0') current and peak after the error,
  the arena's memory_limit). The report has one OOM; its request is the
  size TensorFlow names: its error message's "Out of memory while trying
  to allocate N.NNGiB" and, exactly, the bytes its BFC allocator logs
  ("rounded to N", the request rounded up to 256 bytes); it is larger
  than the arena; its stack names the model.fit line; and the diagnosis
  names too_big with the model.fit line.
- batch 16 trains: both runs exit 0 with no error and the same figures,
  and the report has no OOM.

Uses test_tensorflow.py's helpers; skips (77) as it does."""
import json
import os
import re
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_tensorflow as base  # noqa: E402

PROGRAM = "seed_cnn.py"
GiB = 1 << 30


class SeedCnnTest(unittest.TestCase):
    setUp = base.TensorFlowTest.setUp
    tearDown = base.TensorFlowTest.tearDown
    report = base.TensorFlowTest.report
    report_json = base.TensorFlowTest.report_json

    def run_program(self, batch, traced):
        extra, trace = {}, None
        if traced:
            trace = os.path.join(self.tmp, f"seed_cnn_{batch}.db")
            extra = {"LD_PRELOAD": base.LIB, "MEMTRACE_OUTPUT": trace, "MEMTRACE_CUPTI": "off"}
        start = time.monotonic()
        proc = subprocess.run(
            [base.SIM_RUN, "--capacity", "8G", "--", base.PYTHON,
             os.path.join(base.PROGRAMS, PROGRAM), str(batch)],
            env=base.run_env(extra), cwd=self.tmp, capture_output=True, text=True, timeout=600)
        lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
        fig = json.loads(lines[-1]) if lines else None
        print(f"{PROGRAM} {batch} {'under memtrace' if traced else 'plain'}: exit "
              f"{proc.returncode}, {time.monotonic() - start:.1f} s, TensorFlow's figures "
              f"{ {k: fig[k] for k in ('error', 'memory', 'memory_limit')} if fig else None}")
        self.assertTrue(fig, f"no figures; stderr:\n{proc.stderr[-4000:]}")
        return proc, fig, trace

    def run_both(self, batch):
        """Plain, then traced: same exit status (0), same error and figures."""
        plain, fig, _ = self.run_program(batch, traced=False)
        traced, traced_fig, trace = self.run_program(batch, traced=True)
        self.assertEqual(plain.returncode, 0, plain.stderr[-4000:])
        self.assertEqual(traced.returncode, plain.returncode, traced.stderr[-4000:])
        self.assertEqual(fig["gpus"], 1)
        self.assertTrue(fig["device"].endswith("/device:GPU:0"), fig["device"])
        for key in ("error", "message", "memory_limit", "device"):
            self.assertEqual(traced_fig[key], fig[key], f"{key} changed under memtrace")
        for what in ("current", "peak"):
            self.assertEqual(traced_fig["memory"][what], fig["memory"][what],
                             f"get_memory_info {what} changed under memtrace")
        return plain, fig, trace

    def at_fit(self, frames):
        fit = base.tag_line("fit", PROGRAM)
        return any(f["kind"] == "python" and f["file"]
                   and os.path.basename(f["file"]) == PROGRAM and f["line"] == fit
                   for f in frames)

    def test_batch_128_oom(self):
        plain, fig, trace = self.run_both(128)
        self.assertEqual(fig["error"], "ResourceExhaustedError: Graph execution error:")
        # TensorFlow's own size: the message's, in GiB to 2 places, and its
        # BFC allocator's log, the request rounded up to 256 bytes
        m = re.search(r"Out of memory while trying to allocate ([0-9.]+)GiB", fig["message"])
        self.assertTrue(m, fig["message"])
        logged = re.findall(r"Allocator \(GPU_0_bfc\) ran out of memory trying to allocate "
                            r"[0-9.]+GiB \(rounded to ([0-9]+)\)", plain.stderr)
        self.assertEqual(len(logged), 1, plain.stderr[-4000:])
        rounded = int(logged[0])
        rep = self.report_json(trace)
        self.assertEqual(rep["totals"]["ooms"], 1)
        oom = rep["ooms"][0]
        asked = oom["requested_bytes"]
        print(f"report: OOM {oom['api']} of {asked} bytes; TensorFlow: {m.group(1)} GiB, "
              f"rounded to {rounded}; arena {fig['memory_limit']}")
        self.assertEqual(f"{asked / GiB:.2f}", m.group(1))
        self.assertEqual((asked + 255) // 256 * 256, rounded)
        # on a real 8 GB GPU too: the request alone is more than the arena
        self.assertGreater(asked, fig["memory_limit"])
        self.assertTrue(self.at_fit(oom["frames"]), "the OOM's stack does not name model.fit")
        diag = rep["diagnosis"]
        causes = [diag] + diag.get("also", [])
        # judged inside the arena: the step is more than its limit, so
        # too_big leads, and the arena preallocated is no cause
        self.assertEqual(diag["cause"], "too_big", [c["cause"] for c in causes])
        self.assertNotIn("preallocated", [c["cause"] for c in causes])
        self.assertIn("batch_size", diag["try"])
        self.assertTrue(self.at_fit(diag["frames"]), "too_big does not name model.fit")

    def test_batch_16_trains(self):
        _, fig, trace = self.run_both(16)
        self.assertIsNone(fig["error"])
        self.assertGreater(fig["memory"]["peak"], 0)
        rep = self.report_json(trace)
        self.assertEqual(rep["totals"]["ooms"], 0)


def main():
    base.PYTHON = base.framework_python()
    if base.PYTHON is None:
        return base.SKIP
    result = unittest.main(verbosity=2, exit=False).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
