"""TensorFlow's cuDNN layers on the simulated device (issue 49):
programs/keras_cudnn.py trains a Keras CNN (Conv2D, BatchNormalization,
MaxPooling2D: TensorFlow's cuDNN graph-API convolutions, cuDNN pooling
and batch norm) and a Keras LSTM (CudnnRNNV3: cuDNN's RNN v8 API) with
model.fit, plain and under memtrace, with the simulated cuDNN
(tests/sim/dnn). Asserted: both runs exit 0 with the same figures
(TensorFlow's get_memory_info within test_tensorflow's timing slack, the
arena's memory_limit exactly), and memtrace's report equal to them: the
BFC arena taken whole at the first tensor plus the cuBLAS handle's
workspace (and, at the peak, the buffers TensorFlow's convolution
autotuner allocates outside the arena to check cuDNN's redzones, found
in the trace by their stacks), as peak and as live at the end, and no
OOM. Uses
test_tensorflow.py's helpers; skips (77) as it does."""
import json
import os
import sqlite3
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_tensorflow as base  # noqa: E402


class CudnnTest(unittest.TestCase):
    setUp = base.TensorFlowTest.setUp
    tearDown = base.TensorFlowTest.tearDown
    report = base.TensorFlowTest.report
    report_json = base.TensorFlowTest.report_json
    workspaces = base.TensorFlowTest.workspaces

    def run_program(self, traced):
        extra, trace = {}, None
        if traced:
            trace = os.path.join(self.tmp, "keras_cudnn.db")
            extra = {"LD_PRELOAD": base.LIB, "MEMTRACE_OUTPUT": trace, "MEMTRACE_CUPTI": "off"}
        start = time.monotonic()
        proc = subprocess.run(
            [base.SIM_RUN, "--capacity", "1G", "--", base.PYTHON,
             os.path.join(base.PROGRAMS, "keras_cudnn.py")],
            env=base.run_env(extra), cwd=self.tmp, capture_output=True, text=True, timeout=300)
        lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
        print(f"keras_cudnn.py {'under memtrace' if traced else 'plain'}: exit {proc.returncode}, "
              f"{time.monotonic() - start:.1f} s, TensorFlow's figures "
              f"{lines[-1] if lines else None}")
        self.assertEqual(proc.returncode, 0, proc.stderr[-4000:])
        self.assertTrue(lines, f"no figures; stderr:\n{proc.stderr[-4000:]}")
        return json.loads(lines[-1]), trace

    def redzone_checks(self, trace):
        """The most bytes live at once of the device buffers TensorFlow's
        convolution autotuner allocates outside its arena to check cuDNN's
        redzones (stream_executor::RedzoneAllocator::CheckRedzones, each
        freed at once), from the trace by their stacks; and how many."""
        conn = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
        self.addCleanup(conn.close)
        rows = conn.execute("""
            SELECT a.seq, a.bytes, (SELECT f.seq FROM frees f WHERE f.alloc = a.seq)
              FROM allocs a JOIN sites s ON s.id = a.site
             WHERE EXISTS (SELECT 1 FROM stack_frames sf JOIN frames fr ON fr.id = sf.frame
                            WHERE sf.stack = s.stack
                              AND fr.function LIKE '%RedzoneAllocator%CheckRedzones%')
             ORDER BY a.seq""").fetchall()
        self.assertTrue(all(f is not None for _, _, f in rows), f"a check buffer kept: {rows}")
        events = sorted([(a, b) for a, b, _ in rows] + [(f, -b) for _, b, f in rows])
        live = most = 0
        for _, b in events:
            live += b
            most = max(most, live)
        return most, len(rows)

    def test_keras_cnn_and_lstm(self):
        fig, _ = self.run_program(traced=False)
        traced, trace = self.run_program(traced=True)
        self.assertEqual(fig["gpus"], 1)
        self.assertTrue(fig["device"].endswith("/device:GPU:0"), fig["device"])
        self.assertEqual(traced["memory_limit"], fig["memory_limit"])
        for key in ("after_cnn", "after_lstm"):
            for what in ("current", "peak"):
                base.assert_near(self, traced[key][what], fig[key][what], f"{key} {what}")
        rep = self.report_json(trace)
        ws = self.workspaces(trace)
        t = rep["totals"]
        self.assertEqual(t["ooms"], 0)
        # the autotuner tried the cuDNN convolution's engines: its redzone
        # checks are device memory outside the arena, freed at once
        checks, n = self.redzone_checks(trace)
        self.assertGreater(n, 0, "TensorFlow's convolutions did not autotune cuDNN engines")
        self.assertEqual(t["peak_bytes"], traced["memory_limit"] + ws + checks)
        self.assertEqual(t["live_bytes_at_end"], traced["memory_limit"] + ws)


def main():
    base.PYTHON = base.framework_python()
    if base.PYTHON is None:
        return base.SKIP
    result = unittest.main(verbosity=2, exit=False).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
