"""A held-out JAX program (issue 32, "Done when"): holdout/attention.py,
written apart from programs/ and never used to tune memtrace (a jitted
self-attention block with Adam's moments, then the sequence doubled
until XLA runs out of memory), run as test_jax.py runs step.py (plain and
under memtrace on `scripts/sim-run --capacity 1G`) and checked the same
way, against jax.Device.memory_stats() from the same run: XLA's default
preallocation, XLA_PYTHON_CLIENT_PREALLOCATE=false, and the default with
the log silenced (TF_CPP_MIN_LOG_LEVEL=2). Uses test_jax.py's helpers;
skips (77) as it does."""
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

import test_jax as base

HOLDOUT = os.path.join(base.SOURCE, "tests", "jax", "holdout")


def tag_line(tag):
    with open(os.path.join(HOLDOUT, "attention.py")) as f:
        lines = [n for n, line in enumerate(f, 1) if line.rstrip().endswith("# @" + tag)]
    assert len(lines) == 1, tag
    return lines[0]


class HoldOut(unittest.TestCase):
    setUp = base.JaxTest.setUp
    tearDown = base.JaxTest.tearDown
    report = base.JaxTest.report
    report_json = base.JaxTest.report_json
    workspaces = base.JaxTest.workspaces

    def run_program(self, setting, traced):
        extra = dict(setting)
        trace = None
        if traced:
            trace = os.path.join(self.tmp, "attention.db")
            extra.update({"LD_PRELOAD": base.LIB, "MEMTRACE_OUTPUT": trace,
                          "MEMTRACE_CUPTI": "off"})
        start = time.monotonic()
        proc = subprocess.run(
            [base.SIM_RUN, "--capacity", "1G", "--", base.PYTHON,
             os.path.join(HOLDOUT, "attention.py")],
            env=base.run_env(extra), cwd=self.tmp, capture_output=True, text=True, timeout=300)
        lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
        print(f"attention.py {setting or 'default'} {'under memtrace' if traced else 'plain'}: "
              f"exit {proc.returncode}, {time.monotonic() - start:.1f} s, JAX's figures "
              f"{lines[-1] if lines else None}")
        self.assertTrue(lines, f"attention.py printed no figures; stderr:\n{proc.stderr[-4000:]}")
        return proc, json.loads(lines[-1]), trace

    def run_both(self, setting):
        """Plain, then under memtrace, as test_jax.py's run_both: the
        traced run's figures returned, the truth for its trace."""
        plain, plain_fig, _ = self.run_program(setting, traced=False)
        traced, fig, trace = self.run_program(setting, traced=True)
        self.assertEqual(plain.returncode, 0, plain.stderr[-4000:])
        self.assertEqual(traced.returncode, plain.returncode, traced.stderr[-4000:])
        base.assert_same_figures(self, fig, plain_fig)
        self.assertEqual(fig["platform"], "gpu")
        self.assertTrue(fig["error"].startswith("RESOURCE_EXHAUSTED: Out of memory while "
                                                "trying to allocate "), fig["error"])
        return traced, fig, trace

    def check(self, setting, line_tag):
        """The OOM first in the report and on stderr, the request JAX's
        message names, the live set and the peak JAX's pool plus the
        cuBLAS workspace, at the user's line."""
        traced, fig, trace = self.run_both(setting)
        rep = self.report_json(trace)
        (_, ws, _), = self.workspaces(trace)
        self.assertEqual([o["api"] for o in rep["ooms"]], ["BFCAllocator"])
        oom = rep["ooms"][0]
        self.assertIn(f"allocate {base.jax_size(oom['requested_bytes'])}.", fig["error"])
        self.assertEqual(oom["live_bytes"], fig["after_oom"]["pool_bytes"] + ws)
        self.assertEqual(rep["totals"]["peak_bytes"], fig["after_oom"]["peak_pool_bytes"] + ws)
        self.assertEqual(rep["totals"]["live_bytes_at_end"], ws)
        where = f"main (attention.py:{tag_line(line_tag)})"
        text = self.report(trace)
        first = [p for p in text.split("\n\n")[1:] if not p.startswith("Note:")][0]
        first = " ".join(first.split())
        self.assertTrue(first.startswith("OUT OF MEMORY: BFCAllocator of "), first)
        self.assertIn(f" in {where}", first)
        self.assertIn(f"failed in {where}", traced.stderr)
        return rep, fig, text

    def test_default(self):
        """The arena taken at start is the preallocated note and a cause."""
        rep, fig, _ = self.check({}, "oom")
        notes = [n for n in rep["notes"] if n["kind"] == "preallocation"]
        self.assertEqual([n["bytes"] for n in notes], [fig["trained"]["bytes_limit"]])
        diag = rep["diagnosis"]
        causes = [diag["cause"]] + [a["cause"] for a in diag.get("also", [])]
        self.assertIn("preallocated", causes, diag)

    def test_no_preallocation(self):
        """The arena grown as needed: no preallocation, in any form."""
        rep, fig, text = self.check({"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}, "oom")
        self.assertLess(fig["trained"]["pool_bytes"], fig["trained"]["bytes_limit"])
        self.assertEqual([n for n in rep["notes"] if n["kind"] == "preallocation"], [])
        self.assertNotIn("preallocat", text)

    def test_silenced_log(self):
        """No allocator warning: the OOM from the exception, at the wait."""
        self.check({"TF_CPP_MIN_LOG_LEVEL": "2"}, "wait")


def main():
    base.PYTHON = base.framework_python()
    if base.PYTHON is None:
        return base.SKIP
    result = unittest.main(verbosity=2, exit=False).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
