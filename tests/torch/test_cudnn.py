"""PyTorch with cuDNN on, on the simulated device (issue 49): a small
ResNet-style CNN (programs/cudnn_resnet.py), a bidirectional LSTM
(programs/cudnn_lstm.py) and a nanoGPT-style model whose default SDPA
backend is cuDNN attention (programs/cudnn_sdpa.py) train with torch's
defaults, plain and under
memtrace. Asserted: the same exit status and torch's figures both ways;
memtrace's report equal to them (peak and live bytes: torch's reserved
memory plus the cuBLAS handles' workspaces, found in the trace by their
stacks) and to the simulator's counter (what cudaMemGetInfo says the
device lost); and cuDNN's own buffers in the trace, of the sizes the
simulated cuDNN's rule gives (tests/sim/README.md, "cuDNN"), each
attributed to the user's line that made it. Uses test_torch.py's
helpers; skips (77) as it does."""
import os
import sqlite3
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import test_torch as base

TENSOR_ALLOC = 26


def rule(largest_tensor_bytes):
    """The simulated cuDNN's workspace and reserve-space size."""
    return (largest_tensor_bytes + 255) // 256 * 256


class CudnnTest(unittest.TestCase):
    setUp = base.TorchTest.setUp
    tearDown = base.TorchTest.tearDown
    run_program = base.TorchTest.run_program
    run_both = base.TorchTest.run_both
    report = base.TorchTest.report
    report_json = base.TorchTest.report_json
    cublas_workspaces = base.TorchTest.cublas_workspaces
    live_allocations = base.TorchTest.live_allocations

    def check_totals(self, run):
        """memtrace's peak and live bytes are torch's reserved memory plus
        the cuBLAS workspaces (never freed here), and the live bytes are
        what the device lost (the simulator's counter)."""
        fig = run.figures
        t = self.report_json(run.trace)["totals"]
        ws = self.cublas_workspaces(run.trace)
        self.assertTrue(all(f is None for _, _, f in ws), "a cuBLAS workspace was freed")
        ws_bytes = sum(size for _, size, _ in ws)
        self.assertEqual(t["ooms"], 0)
        self.assertEqual(t["peak_bytes"], fig["max_memory_reserved"] + ws_bytes)
        self.assertEqual(t["live_bytes_at_end"], fig["memory_reserved"] + ws_bytes)
        self.assertEqual(t["live_bytes_at_end"], fig["device_used"])
        self.assertEqual(t["live_allocations_at_end"], fig["segments"] + len(ws))
        ws_seqs = {seq for seq, _, _ in ws}
        live = [(addr, size) for seq, addr, size in self.live_allocations(run.trace)
                if seq not in ws_seqs]
        self.assertEqual(sorted(live), sorted(map(tuple, fig["segment_list"])))

    def tensor_allocs(self, trace, native):
        """[(bytes, user's line or None, made by at::empty)] of torch's
        tensor allocations whose stack has a native frame matching native
        (SQL LIKE); the user's line is the innermost Python frame in
        programs/."""
        conn = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
        self.addCleanup(conn.close)
        return conn.execute("""
            SELECT e.bytes,
                   (SELECT fr.file || ':' || fr.line FROM stack_frames sf
                      JOIN frames fr ON fr.id = sf.frame
                     WHERE sf.stack = e.stack AND fr.kind = 1 AND fr.file LIKE ?
                     ORDER BY sf.depth LIMIT 1),
                   EXISTS (SELECT 1 FROM stack_frames sf JOIN frames fr ON fr.id = sf.frame
                            WHERE sf.stack = e.stack AND fr.function LIKE '%empty_cuda%')
              FROM other_events e
             WHERE e.kind = ? AND EXISTS (
                   SELECT 1 FROM stack_frames sf JOIN frames fr ON fr.id = sf.frame
                    WHERE sf.stack = e.stack AND fr.function LIKE ?)
             ORDER BY e.seq""", (base.PROGRAMS + "/%", TENSOR_ALLOC, native)).fetchall()

    def test_resnet(self):
        """Conv2d, BatchNorm2d, MaxPool2d, a residual block, three SGD
        steps: each forward convolution's cuDNN workspace (an allocation of
        torch's caching allocator, not a tensor) is in the trace, of the
        rule's size, at the user's line that ran the convolution; each
        backward convolution's, at the line that called backward()."""
        run = self.run_both("cudnn_resnet")
        fig = run.figures
        self.check_totals(run)
        where = os.path.join(base.PROGRAMS, "cudnn_resnet.py")
        forward = f"{where}:{base.tag_line('cudnn_resnet.py', 'forward')}"
        allocs = self.tensor_allocs(run.trace, "%cudnn_convolution%")
        at_forward = [(size, tensor) for size, line, tensor in allocs if line == forward]
        # Per step, the first convolution's output (a tensor) and its
        # workspace (raw memory of the caching allocator), both the rule's
        # size here (y is the largest of x, w, y).
        workspaces = [size for size, tensor in at_forward if not tensor]
        outputs = [size for size, tensor in at_forward if tensor]
        self.assertEqual(workspaces, [fig["conv1_workspace"]] * fig["steps"], allocs)
        self.assertEqual(outputs, [fig["conv1_workspace"]] * fig["steps"], allocs)
        # Every convolution's allocations are at a line of the program.
        self.assertTrue(all(line and line.startswith(where + ":") for _, line, _ in allocs),
                        allocs)
        self.assertEqual(len([a for a in allocs if not a[2]]), 5 * fig["steps"], allocs)
        # The backward convolutions' cuDNN workspaces (raw memory of the
        # caching allocator under autograd's ConvolutionBackward0, made on
        # its device thread) carry the line that called backward(): the
        # caller's frames are borrowed (interpose/hooks/hook-autograd.c).
        # Per step: data and filter workspaces for the four block
        # convolutions, the filter's alone for the first (its input needs
        # no gradient); the rule's sizes, with dy the largest: the first
        # block's at 32x32 as conv1's, the second's after MaxPool2d(2) a
        # quarter of it.
        backward = f"{where}:{base.tag_line('cudnn_resnet.py', 'backward')}"
        back = self.tensor_allocs(run.trace, "%ConvolutionBackward0%apply%")
        back_ws = [(size, line) for size, line, tensor in back if not tensor]
        full, quarter = fig["conv1_workspace"], rule(fig["conv1_workspace"] // 4)
        self.assertEqual(sorted(size for size, _ in back_ws),
                         sorted([quarter] * 4 * fig["steps"] + [full] * 5 * fig["steps"]), back)
        self.assertEqual({line for _, line in back_ws}, {backward}, back)

    def test_lstm(self):
        """A two-layer bidirectional LSTM, three Adam steps: cuDNN's weight
        space is the parameters' size (torch's own count), and each forward
        takes a workspace and a reserve space of the rule's size (the
        largest tensor described: x), at the user's line."""
        run = self.run_both("cudnn_lstm")
        fig = run.figures
        self.check_totals(run)
        self.assertEqual(fig["flat_weight_bytes"], fig["lstm_param_bytes"])
        where = os.path.join(base.PROGRAMS, "cudnn_lstm.py")
        at_lstm = f"{where}:{base.tag_line('cudnn_lstm.py', 'lstm')}"
        allocs = self.tensor_allocs(run.trace, "%cudnn_rnn%")
        spaces = [size for size, line, _ in allocs
                  if line == at_lstm and size == rule(fig["x_bytes"])]
        self.assertEqual(len(spaces), 2 * fig["steps"], allocs)
        self.assertTrue(all(line and line.startswith(where + ":") for _, line, _ in allocs),
                        allocs)

    def test_sdpa(self):
        """A nanoGPT-style model under bf16 autocast with the default SDPA
        backends, which pick cuDNN attention here: each forward attention's
        workspace (the rule over its graph: the scores) at the user's line
        that called scaled_dot_product_attention."""
        run = self.run_both("cudnn_sdpa")
        fig = run.figures
        self.check_totals(run)
        where = os.path.join(base.PROGRAMS, "cudnn_sdpa.py")
        at_sdpa = f"{where}:{base.tag_line('cudnn_sdpa.py', 'attention')}"
        allocs = self.tensor_allocs(run.trace, "%cudnn%")
        spaces = [size for size, line, _ in allocs
                  if line == at_sdpa and size == rule(fig["scores_bytes"])]
        self.assertEqual(len(spaces), fig["attention_calls"], allocs)
        self.assertTrue(all(line and line.startswith(where + ":") for _, line, _ in allocs),
                        allocs)


def main():
    base.PYTHON = base.framework_python()
    if base.PYTHON is None:
        return base.SKIP
    result = unittest.main(verbosity=2, exit=False).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
