"""Python frames in traces (docs/python.md), for one interpreter.

    test_python.py --version 3.X        the newest CPython 3.X under pyenv
    test_python.py --interpreter PATH   any python executable
    test_python.py --absent             a program with no Python at all

Runs alloc_scenarios.py with that interpreter under LD_PRELOAD=libmemtrace.so
on the simulated device, and checks every allocation's stack in the trace:
the Python frames (function, file, line, read from the script's tags), the
number of allocations of each scenario, and where the Python frames sit
among the native ones. With a shared libpython, also runs the embedding
program (embed.c) that loads Python after the trace has started. On a
version memtrace does not read (before 3.8), checks that the program runs
and its stacks are native only.

Exit status 77 (meson: SKIP) when the interpreter is not installed.
Paths come from the environment tests/python/meson.build sets:
MEMTRACE_BUILD (build root), MEMTRACE_SOURCE (source root)."""
import argparse
import glob
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import unittest

BUILD = os.environ["MEMTRACE_BUILD"]
SOURCE = os.environ["MEMTRACE_SOURCE"]
LIB = os.path.join(BUILD, "interpose", "libmemtrace.so")
REPORTER = os.path.join(BUILD, "report", "memtrace-report")
SIM = os.path.join(BUILD, "tests", "sim")
HELPER = os.path.join(BUILD, "tests", "python", "libpy-native-helper.so")
EMBED = os.path.join(BUILD, "tests", "python", "py-embed")
HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "alloc_scenarios.py")
KiB = 1024
SUPPORTED = range(8, 14)  # 3.8 .. 3.13
SKIP = 77


# ---- the interpreter under test ----

def pyenv_versions():
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    return os.path.join(root, "versions")


def find_version(version):
    """The newest pyenv install of 3.X (not a free-threaded "t" build)."""
    pattern = re.compile(re.escape(version) + r"\.(\d+)((?:a|b|rc)\d+)?")
    found = []
    for path in glob.glob(os.path.join(pyenv_versions(), version + ".*")):
        m = pattern.fullmatch(os.path.basename(path))
        exe = os.path.join(path, "bin", "python" + version)
        if m and os.access(exe, os.X_OK):
            found.append((int(m.group(1)), m.group(2) is None, exe))
    return max(found)[2] if found else None


def interpreter_info(exe):
    code = ("import sys, sysconfig; print(sys.version_info[0], sys.version_info[1]); "
            "print(sysconfig.get_config_var('LIBDIR') or ''); "
            "print(sysconfig.get_config_var('INSTSONAME') or ''); "
            "print(sysconfig.get_config_var('Py_ENABLE_SHARED') or 0); print(sys.prefix)")
    out = subprocess.run([exe, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split("\n")
    major, minor = map(int, out[0].split())
    libpython = os.path.join(out[1], out[2]) if int(out[3] or 0) else None
    return minor, libpython, out[4]


# ---- the expectations ----

def read_tags(path):
    """'# @name' comment -> line number; tags inside UNICODE_SOURCE get the
    line numbers of that source (it is compiled on its own)."""
    tags = {}
    source_start = None
    with open(path, encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            if text.startswith('UNICODE_SOURCE = """'):
                source_start = number
            elif source_start and text.startswith('"""'):
                source_start = None
            m = re.search(r"# @([\w-]+)\s*$", text)
            if m:
                tags[m.group(1)] = number - source_start + 1 if source_start else number
    return tags


UNICODE_FILE = "/nonexistent/unicode-\u00fc-\U0001F600.py"
NATIVE_ONLY = "native only"
THREAD = "thread"


def main_chain(tag):
    return [("main", tag), ("<module>", "module")]


def expected():
    """KiB -> (count, Python frames innermost first as (function, tag[,
    file]); or NATIVE_ONLY; or THREAD: the innermost frames, then
    threading's)."""
    return {
        101: (3, [("cdll_alloc", "cdll"), ("scenario_cdll", "cdll-call")]
              + main_chain("main-cdll")),
        102: (4, [("pydll_alloc", "pydll"), ("scenario_cdll", "pydll-call")]
              + main_chain("main-cdll")),
        103: (5, [("spin_alloc", "spin"), ("scenario_spin", "spin-call")]
              + main_chain("main-spin")),
        104: (1, (THREAD, [("spinner", "spinner-alloc")])),
        105: (2, NATIVE_ONLY),
        106: (2, [("callback_alloc", "callback")]),
        107: (1, [("recurse", "recurse-leaf")] + [("recurse", "recurse-call")] * 100
              + [("scenario_recursion", "recursion-call")] + main_chain("main-recursion")),
        108: (3, [("gen_alloc", "gen"), ("scenario_generator", "gen-consume")]
              + main_chain("main-generator")),
        109: (2, [("coro_leaf", "coro"), ("coro_outer", "coro-await"),
                  ("scenario_coroutine", "coro-drive")] + main_chain("main-coroutine")),
        110: (8, [("Buffer.__init__", "init"), ("scenario_init", "init-call")]
              + main_chain("main-init")),
        111: (1, [("unicode_alloc", "unicode"), ("gr\u00f6\u00dfe", "latin1", UNICODE_FILE),
                  ("scenario_unicode", "unicode-latin1")] + main_chain("main-unicode")),
        112: (1, [("unicode_alloc", "unicode"), ("\u51fd\u6570", "ucs2", UNICODE_FILE),
                  ("scenario_unicode", "unicode-ucs2")] + main_chain("main-unicode")),
        113: (1, [("unicode_alloc", "unicode"), ("\U00020000", "ucs4", UNICODE_FILE),
                  ("scenario_unicode", "unicode-ucs4")] + main_chain("main-unicode")),
        114: (2, [("scenario_nested.<locals>.inner", "nested"),
                  ("scenario_nested", "nested-call")] + main_chain("main-nested")),
        115: (1, (THREAD, [("mutex_worker", "mutex-worker")])),
        116: (1, [("scenario_mutex", "mutex-main")] + main_chain("main-mutex")),
        117: (2, [("memo_lines", "memo-line1"), ("scenario_memo", "memo-lines-call")]
              + main_chain("main-memo")),
        118: (2, [("memo_lines", "memo-line2"), ("scenario_memo", "memo-lines-call")]
              + main_chain("main-memo")),
        119: (2, [("memo_reuse_a", "memo-reuse-a"), ("scenario_memo", "memo-reuse-a-call")]
              + main_chain("main-memo")),
        120: (2, [("memo_reuse_b", "memo-reuse-b"), ("scenario_memo", "memo-reuse-b-call")]
              + main_chain("main-memo")),
        121: (2, memo_depth(3)),
        122: (2, memo_depth(6)),
        123: (1, memo_depth(2)),
        124: (1, [("memo_code_a", "memo-code"), ("scenario_memo", "memo-code-call")]
              + main_chain("main-memo")),
        125: (1, [("memo_code_b", "memo-code"), ("scenario_memo", "memo-code-call")]
              + main_chain("main-memo")),
    }


def memo_depth(depth):
    return ([("memo_depth", "memo-depth-leaf")] + [("memo_depth", "memo-depth-call")] * depth
            + [("scenario_memo", "memo-depth-%d" % depth)] + main_chain("main-memo"))


# ---- reading the trace ----

class Frame:
    def __init__(self, kind, function, file, line, module):
        self.kind, self.function, self.file, self.line = kind, function, file, line
        self.module = os.path.basename(module or "")

    @property
    def python(self):
        return self.kind == 1

    def __repr__(self):
        if self.python:
            return "py %s %s:%s" % (self.function, self.file, self.line)
        return "native %s %s" % (self.function, self.module)


def allocations(trace):
    """[(bytes, [Frame, ...] innermost first)] of every allocation."""
    db = sqlite3.connect("file:%s?mode=ro" % trace, uri=True)
    stacks = {}
    rows = db.execute(
        "SELECT s.stack, f.kind, f.function, f.file, f.line, m.path FROM stack_frames s "
        "JOIN frames f ON f.id = s.frame LEFT JOIN modules m ON m.id = f.module "
        "ORDER BY s.stack, s.depth")
    for stack, *frame in rows:
        stacks.setdefault(stack, []).append(Frame(*frame))
    out = [(b, stacks.get(s, [])) for b, s in
           db.execute("SELECT bytes, stack FROM events WHERE kind = 1 ORDER BY seq")]
    db.close()
    return out


def run_traced(tmp, argv, env_extra=None, timeout=120):
    trace = os.path.join(tmp, "trace-%d.db" % len(os.listdir(tmp)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMTRACE_")}
    env.update(LD_LIBRARY_PATH=SIM, CUDASIM_DEVICE_MEMORY="1G", LD_PRELOAD=LIB,
               MEMTRACE_OUTPUT=trace, MEMTRACE_QUIET="1", MEMTRACE_PY_HELPER=HELPER,
               PYTHONDONTWRITEBYTECODE="1")
    env.update(env_extra or {})
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError("%s exited with %d:\n%s%s" % (
            argv, proc.returncode, proc.stdout, proc.stderr))
    return trace


# ---- the tests ----

INTERPRETER_MODULES = re.compile(r"^(libpython3|python3?(\.\d+)?$)")
CALL_MODULES = re.compile(r"^(libffi|_ctypes)")


class Scenarios(unittest.TestCase):
    exe = None  # set by main()
    minor = None
    libpython = None
    prefix = None

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="memtrace-python-")
        cls.tags = read_tags(SCRIPT)
        # Deep enough that only the 100-deep recursion of 3.8-3.10 outgrows
        # the native stack; the default depth (64) is run too.
        cls.deep_trace = run_traced(cls._tmp.name, [cls.exe, SCRIPT], {"MEMTRACE_DEPTH": "256"})
        cls.deep = allocations(cls.deep_trace)
        cls.default = allocations(run_traced(cls._tmp.name, [cls.exe, SCRIPT]))

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def name(self, qualname):
        # co_qualname is read from 3.11 on; before, co_name
        return qualname if self.minor >= 11 else qualname.split(".")[-1]

    def want(self, chain):
        out = []
        for item in chain:
            function, tag = item[0], item[1]
            file = item[2] if len(item) > 2 else SCRIPT
            out.append((self.name(function), file, self.tags[tag]))
        return out

    def by_size(self, allocs, kib):
        return [frames for b, frames in allocs if b == kib * KiB]

    def check_counts(self, allocs):
        want = {kib: count for kib, (count, _) in expected().items()}
        got = {}
        for b, _ in allocs:
            got[b // KiB] = got.get(b // KiB, 0) + 1
        self.assertEqual(got, want)

    def check_placement(self, frames, main_thread, complete):
        """The Python frames stand where the interpreter's frames were:
        after the frames of the call into C (ctypes, libffi), among the
        interpreter's own frames, before main's (or the thread's start)."""
        kinds = "".join("p" if f.python else "n" for f in frames)
        first, last = kinds.index("p"), kinds.rindex("p")
        self.assertTrue(any(CALL_MODULES.match(f.module) for f in frames[:first]),
                        "no ctypes frame before the Python frames: %r" % frames)
        self.assertFalse(any(f.python for f in frames[:first]))
        for f in frames[first:last + 1]:
            if not f.python:
                self.assertTrue(INTERPRETER_MODULES.match(f.module) or
                                CALL_MODULES.match(f.module),
                                "a foreign native frame among Python frames: %r in %r"
                                % (f, frames))
        self.assertFalse([f for f in frames if f.function == "_PyEval_EvalFrameDefault"],
                         "an evaluation loop frame was not replaced: %r" % frames)
        if complete:
            after = frames[last + 1:]
            self.assertTrue(after, "nothing after the Python frames: %r" % frames)
            if main_thread:
                self.assertTrue([f for f in after if f.function in ("Py_BytesMain",
                                                                    "Py_RunMain")],
                                "main's frames are not after the Python frames: %r"
                                % frames)

    def check_scenario(self, allocs, kib, deep):
        count, chain = expected()[kib]
        stacks = self.by_size(allocs, kib)
        self.assertEqual(len(stacks), count)
        for frames in stacks:
            python = [(f.function, f.file, f.line) for f in frames if f.python]
            if chain == NATIVE_ONLY:
                self.assertEqual(python, [], "Python frames on a native thread")
                self.assertTrue([f for f in frames if f.function == "native_alloc_main"],
                                "the native thread's frames are missing: %r" % frames)
                continue
            if isinstance(chain, tuple):  # a thread started by threading
                head = self.want(chain[1])
                self.assertEqual(python[:len(head)], head)
                rest = python[len(head):]
                self.assertTrue(rest and all(f[1].endswith("threading.py") for f in rest),
                                "not threading's frames: %r" % rest)
                self.assertTrue(rest[-1][0].endswith("_bootstrap"), rest)
            else:
                self.assertEqual(python, self.want(chain))
            # The recursion outgrows the native stack on 3.8-3.10: its
            # Python frames beyond the cut come at the end, in order.
            complete = deep and not (kib == 107 and self.minor <= 10)
            self.check_placement(frames, kib not in (104, 106, 115), complete)

    def test_counts(self):
        self.check_counts(self.deep)
        self.check_counts(self.default)

    def test_scenarios_deep(self):
        for kib in expected():
            with self.subTest(kib=kib):
                self.check_scenario(self.deep, kib, True)

    def test_scenarios_default_depth(self):
        for kib in expected():
            with self.subTest(kib=kib):
                self.check_scenario(self.default, kib, False)

    def test_report_json(self):
        """memtrace-report shows the Python frames in the sites' stacks."""
        proc = subprocess.run([REPORTER, self.deep_trace, "--format", "json"],
                              capture_output=True, text=True, check=True)
        want = {"function": self.name("cdll_alloc"), "file": SCRIPT,
                "line": self.tags["cdll"]}
        sites = json.loads(proc.stdout)["sites"]
        self.assertTrue([s for s in sites for f in s["frames"]
                         if all(f.get(k) == v for k, v in want.items())],
                        "no site has the frame %r" % want)
        # The site of each scenario (the default grouping) is the Python
        # function, file and line that made the allocation.
        for fn, tag, kib in (("cdll_alloc", "cdll", 101), ("pydll_alloc", "pydll", 102),
                             ("spin_alloc", "spin", 103), ("gen_alloc", "gen", 108)):
            with self.subTest(fn=fn):
                site = {"kind": "python", "function": self.name(fn), "file": SCRIPT,
                        "line": self.tags[tag]}
                found = [s for s in sites
                         if all(s["site"].get(k) == v for k, v in site.items())]
                self.assertEqual(len(found), 1, "no site %r" % site)
                count = expected()[kib][0]
                self.assertEqual(found[0]["total_bytes"], count * kib * 1024)
                self.assertEqual(found[0]["count"], count)

    def test_embedded_late(self):
        """An embedding program loads libpython (RTLD_LOCAL) after the
        trace started; memtrace finds it within 4096 calls."""
        if not self.libpython or not os.path.exists(self.libpython):
            self.skipTest("no shared libpython")
        runs = 5000
        with tempfile.TemporaryDirectory(prefix="memtrace-embed-") as tmp:
            allocs = allocations(run_traced(tmp, [EMBED, self.libpython, str(runs)],
                                            {"PYTHONHOME": self.prefix}))
        self.assertEqual([b for b, _ in allocs[:1]], [4096])
        self.assertFalse([f for f in allocs[0][1] if f.python])
        ours = [frames for b, frames in allocs if b == 256]
        self.assertEqual(len(ours), runs)
        with_python = [i for i, frames in enumerate(ours) if any(f.python for f in frames)]
        self.assertTrue(with_python, "Python was never found")
        self.assertLessEqual(with_python[0], 4096)
        self.assertEqual(with_python, list(range(with_python[0], runs)))
        for i in with_python:
            python = [(f.function, f.file, f.line) for f in ours[i] if f.python]
            self.assertEqual(python, [("embedded_alloc", "<string>", 3),
                                      ("<module>", "<string>", 4)])


class Absent(unittest.TestCase):
    """No Python in the process: native stacks as ever, across the calls at
    which memtrace looks for Python again."""

    def test_native_only(self):
        runs = 10000
        with tempfile.TemporaryDirectory(prefix="memtrace-python-") as tmp:
            allocs = allocations(run_traced(tmp, [EMBED, "-", str(runs)]))
        self.assertEqual(len(allocs), runs + 1)
        for b, frames in allocs:
            self.assertTrue([f for f in frames if f.module == "py-embed"], frames)
            self.assertFalse([f for f in frames if f.python])


class Unsupported(unittest.TestCase):
    """A version memtrace does not read: the program runs as ever, stacks
    have native frames only."""
    exe = None

    def test_native_only(self):
        with tempfile.TemporaryDirectory(prefix="memtrace-python-") as tmp:
            allocs = allocations(run_traced(tmp, [self.exe, SCRIPT]))
        self.assertEqual(len(allocs), sum(c for c, _ in expected().values()))
        for b, frames in allocs:
            self.assertTrue(frames)
            self.assertFalse([f for f in frames if f.python])


def main():
    parser = argparse.ArgumentParser()
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--version", help="3.X: the newest pyenv install of it")
    group.add_argument("--interpreter", help="a python executable")
    group.add_argument("--absent", action="store_true", help="a program without Python")
    args, rest = parser.parse_known_args()
    if args.absent:
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(Absent)
        return 0 if unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful() else 1
    exe = find_version(args.version) if args.version else args.interpreter
    if not exe or not os.access(exe, os.X_OK):
        print("SKIP: no interpreter %s installed (looked in %s)"
              % (args.version or args.interpreter, pyenv_versions()))
        return SKIP
    minor, libpython, prefix = interpreter_info(exe)
    print("interpreter: %s (3.%d); shared libpython for embedding: %s"
          % (exe, minor, libpython or "none"))
    if minor in SUPPORTED:
        case = Scenarios
        Scenarios.exe, Scenarios.minor = exe, minor
        Scenarios.libpython, Scenarios.prefix = libpython, prefix
    elif minor < SUPPORTED[0]:
        case = Unsupported
        Unsupported.exe = exe
    else:
        print("FAIL: Python 3.%d is installed but memtrace does not read its frames yet: "
              "add its row to interpose/carry/python-layout.c (docs/python.md)" % minor)
        return 1
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(case)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
