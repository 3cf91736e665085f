"""What reading Python frames adds to each recorded allocation: a benchmark,
not a pass/fail test (docs/python.md has the method and the figures).

    python3 tests/bench/python-frames.py [--build BUILD] [--python EXE ...]
                                         [--iterations N] [--rounds R]

For each interpreter (default: every pyenv CPython 3.8-3.13 installed) it
times, on the simulated device, a C loop of cudaMalloc + cudaFree (256 B;
the allocation is recorded with its stack, the free without) in three
places, in the same process:

  native       a thread Python did not start, a few native frames deep
  native-deep  such a thread, as many native frames deep as "python" has
  python       the interpreter's main thread, 20 Python frames deep

each with libmemtrace.so preloaded and without it. The cost memtrace adds
per allocation is the difference of the best rounds (the least disturbed
by other work on the machine); the ratios put the three
side by side: python / native is what an event from Python code costs
against one from native code, python / native-deep what reading the
Python frames costs beyond unwinding the same native depth.

Needs a build with the tests (tests/python builds the helper library and
tests/sim the simulated device): BUILD defaults to $MEMTRACE_BUILD, else
build/ at the top of the source tree."""
import argparse
import glob
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time

PYTHON_FRAMES = 20
SIZES = {"native": 256, "native-deep": 512, "python": 768}  # to tell them apart in a trace


# ---- the child: runs in the interpreter under test ----

def frames_here():
    n, f = 0, sys._getframe(1)
    while f is not None:
        n, f = n + 1, f.f_back
    return n


def at_depth(k, fn, *args):
    """fn(*args) (a C function) called k Python frames deeper than here"""
    if k > 1:
        return at_depth(k - 1, fn, *args)
    if frames_here() != PYTHON_FRAMES:
        raise RuntimeError("%d Python frames, not %d" % (frames_here(), PYTHON_FRAMES))
    return fn(*args)


def child(n, rounds, deep):
    import ctypes
    helper = ctypes.CDLL(os.environ["MEMTRACE_PY_HELPER"])
    helper.bench_alloc_loop.restype = ctypes.c_double
    helper.bench_alloc_loop.argtypes = [ctypes.c_int, ctypes.c_size_t]
    helper.bench_native_thread.restype = ctypes.c_double
    helper.bench_native_thread.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
    runs = {
        "native": lambda: helper.bench_native_thread(n, SIZES["native"], 0),
        "native-deep": lambda: helper.bench_native_thread(n, SIZES["native-deep"], deep),
        # this lambda's frame and at_depth's make up the 20
        "python": lambda: at_depth(PYTHON_FRAMES - frames_here(), helper.bench_alloc_loop,
                                   n, SIZES["python"]),
    }
    out = {name: [] for name in runs}
    for r in range(rounds + 1):
        for name, run in runs.items():
            ns = run()
            if ns < 0:
                raise RuntimeError("allocation failed")
            if r:  # round 0 warms up
                out[name].append(ns)
            time.sleep(0.02)  # lets the writer drain the queue
    print(json.dumps(out))


# ---- the parent ----

def pyenv_interpreters():
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    found = {}
    for path in glob.glob(os.path.join(root, "versions", "3.*")):
        m = re.fullmatch(r"3\.(\d+)\.(\d+)", os.path.basename(path))
        exe = os.path.join(path, "bin", "python3.%s" % m.group(1)) if m else None
        if m and 8 <= int(m.group(1)) <= 13 and os.access(exe, os.X_OK):
            found[int(m.group(1))] = exe
    return [found[k] for k in sorted(found)]


def run_child(build, exe, n, rounds, deep, preload, trace=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMTRACE_")}
    env.update(LD_LIBRARY_PATH=os.path.join(build, "tests", "sim"),
               CUDASIM_DEVICE_MEMORY="1G",
               MEMTRACE_PY_HELPER=os.path.join(build, "tests", "python",
                                               "libpy-native-helper.so"))
    env.pop("LD_PRELOAD", None)
    if preload:
        env.update(LD_PRELOAD=os.path.join(build, "interpose", "libmemtrace.so"),
                   MEMTRACE_OUTPUT=trace, MEMTRACE_QUIET="1")
    proc = subprocess.run([exe, os.path.abspath(__file__), "--child", str(n), str(rounds),
                           str(deep)], env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError("%s failed:\n%s" % (exe, proc.stderr))
    return json.loads(proc.stdout.strip().splitlines()[-1])


def stack_shape(trace, size):
    """(native frames, Python frames) of the first allocation of that size."""
    db = sqlite3.connect("file:%s?mode=ro" % trace, uri=True)
    row = db.execute("SELECT stack FROM events WHERE kind = 1 AND bytes = ? LIMIT 1",
                     (size,)).fetchone()
    kinds = [k for (k,) in db.execute(
        "SELECT f.kind FROM stack_frames s JOIN frames f ON f.id = s.frame "
        "WHERE s.stack = ?", (row[0],))]
    db.close()
    return kinds.count(0), kinds.count(1)


def measure(build, exe, n, rounds):
    with tempfile.TemporaryDirectory(prefix="memtrace-bench-") as tmp:
        # A short calibration run: how deep the Python case is natively.
        trace = os.path.join(tmp, "calibrate.db")
        run_child(build, exe, 100, 1, 0, True, trace)
        shape = {name: stack_shape(trace, size) for name, size in SIZES.items()}
        deep = max(0, shape["python"][0] - shape["native"][0])
        trace = os.path.join(tmp, "deep.db")
        run_child(build, exe, 100, 1, deep, True, trace)
        shape["native-deep"] = stack_shape(trace, SIZES["native-deep"])
        traced = run_child(build, exe, n, rounds, deep, True, os.path.join(tmp, "t.db"))
        plain = run_child(build, exe, n, rounds, deep, False)
    added = {k: min(traced[k]) - min(plain[k]) for k in SIZES}
    return shape, added, plain


def version_of(exe):
    return subprocess.run([exe, "-c", "import platform; print(platform.python_version())"],
                          capture_output=True, text=True, check=True).stdout.strip()


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        return child(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.environ.get("MEMTRACE_BUILD")
                        or os.path.join(here, "..", "..", "build"))
    parser.add_argument("--python", action="append", help="interpreter (repeatable)")
    parser.add_argument("--iterations", type=int, default=2000, help="per round")
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    exes = args.python or pyenv_interpreters()
    print("added cost per recorded allocation, ns (best of %d rounds of %d "
          "cudaMalloc+cudaFree; stack: native+Python frames)" % (args.rounds, args.iterations))
    print("%-8s %15s %18s %18s %8s %8s %10s" % (
        "python", "native", "native-deep", "python (20)", "py/nat", "py/deep", "base"))
    for exe in exes:
        shape, added, plain = measure(args.build, exe, args.iterations, args.rounds)

        def cell(k):
            return "%6.0f (%d+%d)" % (added[k], shape[k][0], shape[k][1])
        print("%-8s %15s %18s %18s %8.2f %8.2f %10.0f" % (
            version_of(exe), cell("native"), cell("native-deep"), cell("python"),
            added["python"] / added["native"], added["python"] / added["native-deep"],
            min(plain["native"])))


if __name__ == "__main__":
    sys.exit(main())
