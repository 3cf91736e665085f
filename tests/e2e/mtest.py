"""Helpers for the end-to-end tests: run a test program on the simulated
device with and without libmemtrace.so, and read the JSON report.

Paths come from the environment that tests/e2e/meson.build sets:
MEMTRACE_BUILD (build root) and MEMTRACE_SOURCE (source root)."""
import json
import os
import sqlite3
import subprocess
import tempfile
import unittest

BUILD = os.environ["MEMTRACE_BUILD"]
SOURCE = os.environ["MEMTRACE_SOURCE"]
LIB = os.path.join(BUILD, "interpose", "libmemtrace.so")
REPORTER = os.path.join(BUILD, "report", "memtrace-report")
SIM = os.path.join(BUILD, "tests", "sim")
MiB = 1 << 20


def program(name):
    return os.path.join(BUILD, "tests", "programs", name)


def source_lines(name, text):
    """The line numbers of the lines of tests/programs/NAME holding text."""
    with open(os.path.join(SOURCE, "tests", "programs", name)) as f:
        return [n for n, line in enumerate(f, 1) if text in line]


def needs_program(name):
    """Skip a test whose program was not built (the nvcc programs, where
    meson found no nvcc)."""
    if not os.path.exists(program(name)):
        raise unittest.SkipTest(f"{name} was not built (no nvcc)")


def sim_env(extra=None, device_memory="1G"):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("MEMTRACE_") and k not in ("MEMTRACE_BUILD", "MEMTRACE_SOURCE"):
            del env[k]
    env["LD_LIBRARY_PATH"] = SIM
    env["CUDASIM_DEVICE_MEMORY"] = device_memory
    # These tests are about the hooks; CUPTI has its own suite
    # (tests/sim-cupti). Without this, the toolkit's real libcupti would be
    # found and fail here (no GPU) with one informational line.
    env["MEMTRACE_CUPTI"] = "off"
    env.pop("LD_PRELOAD", None)
    if extra:
        env.update(extra)
    return env


class Run:
    def __init__(self, proc, trace):
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.trace = trace


class TraceTest(unittest.TestCase):
    """Base class: a temporary directory per test, and runners."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="memtrace-e2e-")
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def run_program(self, name, args=(), preload=True, env=None, trace="trace.db",
                    timeout=300, device_memory="1G"):
        extra = dict(env or {})
        path = os.path.join(self.tmp, trace) if trace else None
        if preload:
            extra["LD_PRELOAD"] = LIB
            if path and "MEMTRACE_OUTPUT" not in extra:
                extra["MEMTRACE_OUTPUT"] = path
            extra.setdefault("MEMTRACE_QUIET", "1")
        proc = subprocess.run([program(name), *args], env=sim_env(extra, device_memory),
                              cwd=self.tmp, capture_output=True, text=True,
                              timeout=timeout)
        return Run(proc, path)

    def run_both(self, name, args=(), env=None, **kw):
        """Runs with and without the preload; the program's own output and
        exit status must not change."""
        plain = self.run_program(name, args, preload=False, env=env, **kw)
        traced = self.run_program(name, args, preload=True, env=env, **kw)
        self.assertEqual(plain.stdout, traced.stdout, "stdout changed under memtrace")
        self.assertEqual(plain.rc, traced.rc, "exit status changed under memtrace")
        return traced

    def report(self, trace, *args):
        proc = subprocess.run([REPORTER, trace, "--format", "json", *args],
                              capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return json.loads(proc.stdout)

    def report_text(self, trace, *args):
        proc = subprocess.run([REPORTER, trace, *args], capture_output=True, text=True,
                              timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc.stdout

    def db(self, trace):
        conn = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
        self.addCleanup(conn.close)
        return conn


def innermost(entry):
    """The innermost function of a site, leak, holder or OOM."""
    return entry["frames"][0]["function"] if entry["frames"] else None


def by_function(entries):
    """Maps innermost function -> entry; fails on duplicates."""
    out = {}
    for e in entries:
        f = innermost(e)
        assert f not in out, f"two entries for {f}"
        out[f] = e
    return out


def main():
    unittest.main(verbosity=2)
