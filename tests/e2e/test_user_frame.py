"""The user's frame (docs/report.md, "The user's frame"): one rule names
it in the headline, the evidence, the tables, the JSON, the exports and
the library's lines on stderr; and a helper called from two places with
different sizes is two sites, each with its own caller
(helper_callers.py, through ctypes: libffi and the interpreter's frames
lie between the runtime and the user's Python line). The bytes each
caller got are the simulator's (its ledger), never memtrace's."""
import json
import os
import re
import subprocess
import sys

import mtest

PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "helper_callers.py")
NAME = os.path.basename(PROGRAM)


def tag_line(tag):
    with open(PROGRAM) as f:
        lines = [n for n, line in enumerate(f, 1) if line.rstrip().endswith("# @" + tag)]
    assert len(lines) == 1, tag
    return lines[0]


class UserFrame(mtest.TraceTest):
    @classmethod
    def setUpClass(cls):
        cls.alloc = f"alloc ({NAME}:{tag_line('alloc')})"
        cls.weights = f"weights ({NAME}:{tag_line('weights')})"
        cls.activations = f"activations ({NAME}:{tag_line('activations')})"

    def run_helper(self):
        trace = os.path.join(self.tmp, "t.db")
        ledger = os.path.join(self.tmp, "ledger")
        base = {"CUDASIM_LEDGER": ledger}
        plain = subprocess.run([sys.executable, PROGRAM], env=mtest.sim_env(base), cwd=self.tmp,
                               capture_output=True, text=True, timeout=120)
        os.unlink(ledger)
        env = dict(base, LD_PRELOAD=mtest.LIB, MEMTRACE_OUTPUT=trace)
        proc = subprocess.run([sys.executable, PROGRAM], env=mtest.sim_env(env), cwd=self.tmp,
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        given = json.loads(proc.stdout.splitlines()[-1])
        plain_given = json.loads(plain.stdout.splitlines()[-1])
        self.assertEqual(plain.stdout.splitlines()[:-1], proc.stdout.splitlines()[:-1])
        self.assertEqual({k: len(v) for k, v in plain_given.items()},
                         {k: len(v) for k, v in given.items()}, "the program ran otherwise")
        charged = {}
        with open(ledger) as f:
            for line in f:
                op, addr, size = line.split()[:3]
                if op == "a":
                    charged[int(addr, 0)] = int(size)
        truth = {who: sum(charged[a] for a in addrs) for who, addrs in given.items()}
        self.assertTrue(truth["weights"] and truth["activations"])
        return proc, trace, truth, given

    def test_names(self):
        proc, trace, truth, given = self.run_helper()
        both = f"{self.alloc} <- {self.activations}"

        # the headline and the evidence: the user's line, not ffi_call
        text = mtest.subprocess.run([mtest.REPORTER, trace, "--width", "1000"],
                                    capture_output=True, text=True, timeout=120)
        self.assertEqual(text.returncode, 0, text.stderr)
        headline = [l for l in text.stdout.splitlines() if l.startswith("OUT OF MEMORY")]
        self.assertEqual(len(headline), 1, text.stdout)
        self.assertIn(f" in {both};", headline[0])
        self.assertNotIn("ffi_call", text.stdout)
        evidence = [l for l in text.stdout.splitlines() if "Evidence:" in l]
        self.assertTrue(evidence and both in evidence[0], text.stdout)

        # the library's answer on stderr
        self.assertIn(f"failed in {both};", proc.stderr)
        self.assertRegex(proc.stderr, r"in \d+: " + re.escape(both) + "\n")
        self.assertRegex(proc.stderr, r"in %d: " % len(given["weights"]) +
                         re.escape(f"{self.alloc} <- {self.weights}"))

        # the sites: one per caller, each with its caller's bytes
        report = self.report(trace)
        sites = {}
        for s in report["sites"]:
            site, caller = s["site"], s["site"]["caller"]
            self.assertEqual((site["function"], site["line"]), ("alloc", tag_line("alloc")))
            self.assertIsNotNone(caller, s)
            sites[caller["function"]] = s
        self.assertEqual(sorted(sites), ["activations", "weights"])
        for who in ("weights", "activations"):
            self.assertEqual(sites[who]["site"]["caller"]["line"], tag_line(who))
            self.assertEqual(sites[who]["total_bytes"], truth[who])
            python = [f["function"] for f in sites[who]["frames"] if f["kind"] == "python"]
            self.assertEqual(python[:2], ["alloc", who])

    def test_full_stacks(self):
        """--full-stacks: each row's callers all there, whole; without it
        they are cut to the width."""
        _, trace, _, _ = self.run_helper()
        rep = self.report(trace)
        frames = rep["ooms"][-1]["frames"]
        outer = [f["function"] for f in frames if f["function"]]
        full = subprocess.run([mtest.REPORTER, trace, "--full-stacks"], capture_output=True,
                              text=True, timeout=120)
        self.assertEqual(full.returncode, 0, full.stderr)
        chain = [l for l in full.stdout.splitlines()
                 if l.lstrip().startswith(f"<- {self.activations}")]
        self.assertTrue(chain, full.stdout)
        self.assertTrue(chain[0].rstrip().endswith("<- " + outer[-1]), chain[0])
        self.assertNotIn("<- ...", chain[0])
        cut = subprocess.run([mtest.REPORTER, trace], capture_output=True, text=True,
                             timeout=120)
        self.assertIn("<- ...", cut.stdout)

    def test_exports(self):
        _, trace, _, given = self.run_helper()
        both = f"{self.alloc} <- {self.activations}"
        out = {}
        for fmt in ("html", "perfetto"):
            proc = subprocess.run([mtest.REPORTER, trace, "--format", fmt], capture_output=True,
                                  text=True, timeout=120)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            out[fmt] = proc.stdout
        # the HTML's headline and "who held it" name the user's line
        html = out["html"]
        h1 = re.search(r"<h1>.*?</h1>", html).group(0)
        holders = re.search(r'<div class="holders">.*?</div>', html).group(0)
        self.assertIn(f"in <code>{both.replace('<', '&lt;')}</code>", h1)
        self.assertRegex(holders, r'<td class="lbl">' + re.escape(both.replace("<", "&lt;")) +
                         r' <span class="cnt">×%d</span>' % len(given["activations"]))
        self.assertNotIn("ffi_call", h1 + holders)
        # The path: every frame of the failing stack (the JSON's), ending
        # in the call that failed; in view, the user's frames; the
        # interpreter's and libffi's folded behind the path's one toggle
        rep = self.report(trace)
        oom = rep["ooms"][-1]
        path = re.search(r'<div class="path">.*?</div>\n', html).group(0)
        frame = r'<span class="fr k-\w+">(.*?)</span>'
        shown = re.findall(frame, path)
        self.assertEqual(shown[-1], oom["api"])
        self.assertEqual(len(shown) - 1, len(oom["frames"]), path)
        self.assertEqual(path.count('class="rt-show"'), 1, path)
        runs = re.findall(r'<span class="rt">((?:<span class="(?:fr k-\w+|sep)">.*?</span>)*)'
                          r'</span>', path)
        folded = "".join(runs)
        self.assertIn("ffi_call", folded)
        self.assertIn("PyObject", folded)
        self.assertNotIn("helper_callers.py", folded)
        in_view = re.findall(frame, re.sub(r'<span class="rt">((?:<span class="(?:fr k-\w+|sep)">'
                                          r'.*?</span>)*)</span>', "", path))
        self.assertEqual(in_view[-1], oom["api"])
        self.assertTrue(in_view[:-1] and all(NAME in f for f in in_view[:-1]), in_view)
        self.assertEqual(in_view[-2], self.alloc)  # the user's innermost frame kept
        innermost = oom["frames"][0]
        self.assertIn(innermost["function"] or "%s+0x%x" % (innermost["module"],
                                                            innermost["offset"]), shown[-2])
        # Perfetto's OOM instant names its site by the same rule
        ooms = [e for e in json.loads(out["perfetto"])["traceEvents"] if e.get("cat") == "oom"]
        self.assertEqual([e["args"]["site"] for e in ooms], [both])

if __name__ == "__main__":
    mtest.main()
