"""The cause of an OOM, judged from the events (report/render/diagnose.c).

Each program under tests/e2e/cause says what it does wrong in its CAUSE
(growth, too_big, orphaned_graphs); a growth program also says what it
keeps per step (KEPT_PER_STEP) and prints the step that failed. The
report's JSON `diagnosis` must name that cause, with and without pauses
between steps (the cause must not depend on wall time), and a growth's
bytes per repetition and count must be the program's. tests/e2e/cause/
unseen holds programs written the same way that the rules were not
tuned against. The demo (demo-oom.c keeps one activation per step) and
flight-churn (a one-time load, a burst, then too much at once) too.
The library's answer on stderr at the OOM gives the same cause.
"""
import ast
import os
import re
import subprocess
import sys

import mtest

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cause")


def constants(path):
    """The program's module-level constants: CAUSE, KEPT_PER_STEP."""
    with open(path) as f:
        tree = ast.parse(f.read())
    env = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            try:
                env[node.targets[0].id] = eval(compile(ast.Expression(node.value), path, "eval"),
                                               {}, dict(env))
            except Exception:
                pass
    return env


class CauseTest(mtest.TraceTest):
    def run_python(self, script, args=(), preload=True, quiet=True):
        extra = {}
        # a trace of its own per run: subtests share the directory
        self.runs = getattr(self, "runs", 0) + 1
        path = os.path.join(self.tmp, f"trace-{self.runs}.db")
        if preload:
            extra = {"LD_PRELOAD": mtest.LIB, "MEMTRACE_OUTPUT": path,
                     "MEMTRACE_QUIET": "1" if quiet else "0"}
        proc = subprocess.run([sys.executable, script, *args], env=mtest.sim_env(extra),
                              cwd=self.tmp, capture_output=True, text=True, timeout=300)
        return mtest.Run(proc, path)

    def check(self, script, args=()):
        want = constants(script)
        plain = self.run_python(script, args, preload=False)
        run = self.run_python(script, args)
        self.assertEqual(plain.stdout, run.stdout, "stdout changed under memtrace")
        self.assertEqual(plain.rc, run.rc, "exit status changed under memtrace")
        rep = self.report(run.trace)
        diag = rep["diagnosis"]
        self.assertIsNotNone(diag, f"{script}: no diagnosis")
        self.assertEqual(diag["cause"], want["CAUSE"],
                         f"{os.path.basename(script)} {' '.join(args)}: {diag['evidence']}")
        if rep["ooms"]:
            # the headline's is the last OOM's
            self.assertEqual(rep["ooms"][-1]["diagnosis"]["cause"], want["CAUSE"])
        if want["CAUSE"] == "growth":
            self.assertEqual(diag["bytes"], want["KEPT_PER_STEP"], diag["evidence"])
            failed = int(re.search(r"(\d+)", run.stdout.splitlines()[-1]).group(1))
            # one kept per step that finished before the failing one
            self.assertEqual(diag["repetitions"], failed - 1, diag["evidence"])
        return rep

    def programs(self, where):
        return sorted(os.path.join(where, f) for f in os.listdir(where) if f.endswith(".py"))

    def test_tuned(self):
        for script in self.programs(HERE):
            for args in ((), ("--sleep",)):
                with self.subTest(program=os.path.basename(script), args=args):
                    self.check(script, args)

    def test_unseen(self):
        for script in self.programs(os.path.join(HERE, "unseen")):
            with self.subTest(program=os.path.basename(script)):
                self.check(script)
        with self.subTest(program="history_leak.py --sleep"):
            self.check(os.path.join(HERE, "unseen", "history_leak.py"), ("--sleep",))

    def stderr_cause(self, stderr):
        """The cause the library's out-of-memory answer gives on stderr."""
        m = re.search(r"^memtrace:   cause \((\w+)\): ", stderr, re.M)
        return m.group(1) if m else None

    def test_stderr_answer_gives_the_cause(self):
        # the library judges the cause from the events as it writes them
        # (trace/trace-cause.h): the report's cause for the same run,
        # with and without pauses
        scripts = [(s, a) for s in self.programs(HERE) for a in ((), ("--sleep",))]
        scripts += [(s, ()) for s in self.programs(os.path.join(HERE, "unseen"))]
        for script, args in scripts:
            with self.subTest(program=os.path.basename(script), args=args):
                want = constants(script)["CAUSE"]
                run = self.run_python(script, args, quiet=False)
                self.assertIn("memtrace: out of memory:", run.stderr)
                self.assertEqual(self.stderr_cause(run.stderr), want, run.stderr)
                self.assertEqual(self.report(run.trace)["diagnosis"]["cause"], want)
                self.assertRegex(run.stderr, r"\nmemtrace:   try: \S")
        with self.subTest(program="demo-oom"):
            run = self.run_program("demo-oom", env={"MEMTRACE_QUIET": "0"})
            self.assertRegex(run.stderr, r"memtrace:   cause \(growth\): memory kept across "
                             r"iterations: forward \(demo-oom\) <- main \(demo-oom\) kept "
                             r"96.0 MiB in each of 5 repetitions in a row")

    def test_demo_is_growth(self):
        # demo-oom.c keeps the third activation of each step: 96 MiB + 256
        # bytes, one per step for the 5 steps before the failing 6th
        run = self.run_both("demo-oom")
        self.assertEqual(run.rc, 1)
        diag = self.report(run.trace)["diagnosis"]
        self.assertEqual(diag["cause"], "growth", diag["evidence"])
        self.assertEqual(diag["bytes"], (96 << 20) + 256)
        self.assertEqual(diag["repetitions"], 5)

    def test_flight_churn_load_is_not_growth(self):
        # a one-time load of the weights, a burst of churn, six live
        # activations, then 512 MiB that cannot fit (flight-churn.c)
        for pairs in ("1000", "100000"):
            with self.subTest(pairs=pairs):
                run = self.run_program("flight-churn", [pairs], trace=f"churn-{pairs}.db")
                self.assertEqual(run.rc, 0)
                rep = self.report(run.trace)
                self.assertEqual(len(rep["ooms"]), 1)
                diag = rep["ooms"][0]["diagnosis"]
                self.assertEqual(diag["cause"], "too_big", diag["evidence"])
                # the step's need: the six activations and the request
                self.assertEqual(diag["bytes"], 6 * 100 * mtest.MiB + 512 * mtest.MiB)

    def test_builds_without_oom(self):
        # build-leak.c: each of 10 builds leaks one 2 MiB cache; no OOM
        run = self.run_both("build-leak")
        rep = self.report(run.trace)
        self.assertEqual(rep["ooms"], [])
        diag = rep["diagnosis"]
        self.assertEqual(diag["cause"], "growth", diag)
        self.assertEqual(diag["bytes"], 2 * mtest.MiB)

    def test_beyond_the_device(self):
        # beyond_device.py: an arena, then a request larger than the
        # device: too_big leads (check() in test_tuned), saying so, with the
        # arena after it; the stderr answer says the same
        run = self.run_python(os.path.join(HERE, "beyond_device.py"), quiet=False)
        diag = self.report(run.trace)["ooms"][-1]["diagnosis"]
        self.assertEqual(diag["cause"], "too_big", diag)
        self.assertIn("the 2.0 GiB asked for is more than the device's 1.0 GiB",
                      diag["evidence"])
        self.assertEqual([a["cause"] for a in diag["also"]], ["preallocated"], diag)
        self.assertIn("memtrace:   cause (too_big): the 2.0 GiB asked for is more than the "
                      "device's 1.0 GiB", run.stderr)

    def test_kept_without_frees(self):
        # kept_cached.py: outputs kept, nothing ever freed (a cache of its
        # own); no round boundary in the trace
        script = os.path.join(HERE, "kept_cached.py")
        want = constants(script)
        for args in ((), ("--sleep",)):
            with self.subTest(args=args):
                run = self.run_python(script, args)
                failed = int(re.search(r"(\d+)", run.stdout.splitlines()[-1]).group(1))
                oom = self.report(run.trace)["ooms"][-1]["diagnosis"]
                # at the OOM: too_big leads (check() in test_tuned), growth
                # after it, with what each step kept and how many
                grew = [a for a in oom["also"] if a["cause"] == "growth"]
                self.assertEqual(len(grew), 1, oom)
                self.assertEqual(grew[0]["bytes"], want["KEPT_PER_STEP"], grew[0]["evidence"])
                self.assertEqual(grew[0]["repetitions"], failed - 1, grew[0]["evidence"])
                self.assertIn("evaluate (kept_cached.py:", grew[0]["evidence"])
                self.assertNotIn("nothing was kept", oom["evidence"])
        # no OOM: the outputs grew over the run, one per step
        run = self.run_python(script, ("--steps", "12"))
        self.assertEqual(run.stdout.strip(), "kept 12 outputs")
        diag = self.report(run.trace)["diagnosis"]
        self.assertEqual(diag["cause"], "growth", diag)
        self.assertEqual(diag["bytes"], want["KEPT_PER_STEP"], diag["evidence"])
        self.assertEqual(diag["repetitions"], 12, diag["evidence"])
        self.assertIn("evaluate (kept_cached.py:", diag["evidence"])

    def test_text_and_html_agree(self):
        run = self.run_python(os.path.join(HERE, "leak_step.py"))
        text = self.report_text(run.trace)
        self.assertIn("Cause (growth): Memory kept across iterations.", text)
        html = subprocess.run([mtest.REPORTER, run.trace, "--format", "html"],
                              capture_output=True, text=True, timeout=300)
        self.assertEqual(html.returncode, 0, html.stderr)
        self.assertIn('data-cause="growth"><b>Cause (growth)', html.stdout)


if __name__ == "__main__":
    mtest.main()
