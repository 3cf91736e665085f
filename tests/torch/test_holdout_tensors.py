"""A held-out set for the tensor view (issue 31, "Done when"): programs
written apart from programs/ and not used to tune memtrace (holdout/):
a fragmentation OOM (many sizes, every other one freed, then a request
no free range fits), a model whose activations are kept in a list, and
expandable_segments:True set by the program. Each is run plain and under
memtrace and checked against torch's own figures from the same run:
memory_allocated(), memory_reserved(), memory_snapshot()'s blocks and
largest free block, the blocks each of the program's lines holds, and
the torch-snapshot export's segments and blocks. Uses test_torch.py's
runner and test_torch_tensors.py's checks."""
import os
import sys
import unittest

import test_holdout as holdout
import test_torch as base
import test_torch_tensors as tensors

MiB = base.MiB


class HoldOutTensors(holdout.HoldOut):
    """holdout.HoldOut's runner (the programs of holdout/) with
    test_torch_tensors.py's checks; only the tests below run here."""
    read_export = tensors.TensorTest.read_export
    check_export = tensors.TensorTest.check_export
    html_blocks = tensors.TensorTest.html_blocks
    check_html = tensors.TensorTest.check_html
    by_line = staticmethod(tensors.TensorTest.by_line)

    def check_export_of(self, trace, fig):
        """check_export on the trace's export less the cuBLAS workspaces,
        which cuBLAS took with cudaMalloc beside torch's cache (each a
        segment of one block in the export, not in memory_snapshot())."""
        read = self.read_export(trace)
        ws = {seq for seq, _, _ in self.cublas_workspaces(trace)}
        ws_addr = {addr for seq, addr, _ in self.live_allocations(trace) if seq in ws}
        segments = [s for s in read["segments"] if s[0] not in ws_addr]
        read["segsum_segments"] -= len(read["segments"]) - len(segments)
        read["segments"] = segments
        read["blocks"] = [b for b in read["blocks"] if b[0] not in ws_addr]
        self.check_export(read, fig)

    def check_framework(self, fw, program, fig):
        """A framework object against torch's figures: allocated, reserved,
        the largest free block, and the holders of the program's own lines
        equal to the blocks its tensors of each line hold."""
        self.assertIsNotNone(fw, "no framework object")
        self.assertEqual(fw["allocated_bytes"], fig["memory_allocated"])
        self.assertEqual(fw["reserved_bytes"], fig["memory_reserved"])
        self.assertEqual(fw["largest_free_block"], fig["largest_free"])
        mine = {k: v for k, v in self.by_line(fw).items() if k and k[0] == program}
        want = {(program, holdout.tag_line_holdout(program, tag)): sums
                for tag, sums in fig["by_tag"].items()}
        self.assertEqual(mine, want)

    def test_fragmentation_oom(self):
        """At the OOM: torch's figures right after its OutOfMemoryError, the
        tensor asked for as its message names it, free bytes in the cache
        larger than the largest free block (fragmentation)."""
        run = self.run_both("frag_oom")
        fig = run.figures
        self.assertIsNotNone(fig["error"], "the program did not run out of memory")
        rep = self.report_json(run.trace)
        fw = rep["ooms"][-1]["framework"]
        self.check_framework(fw, "frag_oom.py", fig)
        self.assertEqual(fw["requested_bytes"], 700 * MiB)
        self.assertIn("Tried to allocate 700.00 MiB", fig["error"])
        self.assertGreater(fig["memory_reserved"] - fig["memory_allocated"], fig["largest_free"])
        self.check_export_of(run.trace, fig)
        self.check_html(run.trace, "oom", fig)

    def test_kept_activations(self):
        """At the end: the activations kept in the list held by their line,
        the input by its own."""
        run = self.run_both("kept_acts")
        fig = run.figures
        rep = self.report_json(run.trace)
        end = rep["framework"]["at_end"]
        self.check_framework(end, "kept_acts.py", fig)
        self.assertEqual(end["tensors"], fig["allocations"])
        self.assertEqual(fig["by_tag"]["act"][1], 12)
        self.check_export_of(run.trace, fig)
        self.check_html(run.trace, "end", fig)

    def test_expandable_segments(self):
        """expandable_segments:True: torch's segments are expandable, and the
        figures, the export's segments and blocks are still torch's."""
        run = self.run_both("expandable")
        fig = run.figures
        self.assertTrue(fig["expandable"])
        end = self.report_json(run.trace)["framework"]["at_end"]
        self.check_framework(end, "expandable.py", fig)
        self.assertEqual(end["tensors"], fig["allocations"])
        self.check_export_of(run.trace, fig)
        self.check_html(run.trace, "end", fig)


# Only the tests above: test_holdout.py's and test_torch.py's run in their
# own meson tests.
for _name in dir(holdout.HoldOut):
    if _name.startswith("test_") and _name not in vars(HoldOutTensors):
        setattr(HoldOutTensors, _name, None)


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
