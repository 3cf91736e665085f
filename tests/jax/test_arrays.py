"""JAX's arrays inside XLA's arena (issue 47), read from the PJRT C API
(interpose/frameworks/xla-pjrt.c), against JAX's own figures in the same
run (shared design notes, "The truth is somebody else's number").

programs/arrays.py makes arrays from the host, by computations, deletes
some, runs a jitted step three times and donates an array to a jitted
function; at six idle points (arrays ready, garbage collected, XLA's
figures settled) it prints jax.Device.memory_stats() and
then puts a marker array on the device (an int8 array of MARK + i
elements, a size nothing else has) and deletes it. It runs plain and
under libmemtrace.so on `scripts/sim-run --capacity 1G`, nothing in the
program or its environment changed, under each of XLA's allocator
settings. The tests assert:

- the exit status and JAX's figures are the same both ways (the peak
  within TIMING_SLACK, as in test_jax.py);
- the arrays the trace holds live just before marker i (tensor_alloc /
  tensor_free of the pseudo-API XlaPjrt), each rounded up to 256 bytes
  as XLA's BFC allocator rounds a request, add up to at most
  bytes_in_use at point i, and to more than half of it: BFC hands out a
  free chunk whole when it is less than twice the request (it splits
  only when the rest is at least the request), and JAX counts the
  chunk, the trace the array. In the default setting (one preallocated
  arena) they are equal, except after the donation, where XLA gave the
  array a chunk a step's temporary had left (2 MiB for 1.2 MB); where
  the arena grows (PREALLOCATE=false, the platform allocator) the 1 MiB
  array takes the rest of the first 2 MiB region whole, 1040128 bytes
  more than the trace's, until it is deleted, and after the step another
  chunk goes whole to one of its arrays (docs/frameworks.md);
- the arrays' allocations the trace holds up to point i are num_allocs
  while no execution had a temporary (an execution's temporaries never
  reach the PJRT API), and fewer after the step;
- the trace's peak of live arrays is at most peak_bytes_in_use, equal to
  it before the step (whose temporaries make JAX's peak) in the default
  setting;
- each array's allocation names the program's line that made it (its
  Python frame): a device_put, jnp.ones, the jitted step, the donation;
- the report, which does not read the arrays yet, does not take them for
  PyTorch's tensors.

Skips (exit 77) only when scripts/framework-python jax exits 77."""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

BUILD = os.environ["MEMTRACE_BUILD"]
SOURCE = os.environ["MEMTRACE_SOURCE"]
LIB = os.path.join(BUILD, "interpose", "libmemtrace.so")
REPORTER = os.path.join(BUILD, "report", "memtrace-report")
SIM_RUN = os.path.join(SOURCE, "scripts", "sim-run")
PROGRAM = os.path.join(SOURCE, "tests", "jax", "programs", "arrays.py")
MARK = 777001  # programs/arrays.py's
BFC_ROUND = 256  # XLA's BFC allocator rounds every request up to this
SKIP = 77
TIMING_SLACK = 4096  # test_jax.py's, for the peak only
TENSOR_ALLOC, TENSOR_FREE = 26, 28
PYTHON = None

SETTINGS = [
    {},
    {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"},
    {"XLA_PYTHON_CLIENT_ALLOCATOR": "platform"},
]


def framework_python():
    proc = subprocess.run([os.path.join(SOURCE, "scripts", "framework-python"), "jax"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode == SKIP:
        lines = proc.stderr.strip().splitlines()
        print("SKIP: jax cannot be had here: " + (lines[-1] if lines else "(no reason given)"))
        return None
    if proc.returncode != 0 or not proc.stdout.strip():
        sys.exit(f"FAIL: scripts/framework-python jax exited {proc.returncode}:\n{proc.stderr}")
    return proc.stdout.strip()


def run_env(extra):
    env = dict(os.environ)
    for k in list(env):
        if (k.startswith("MEMTRACE_") and k not in ("MEMTRACE_BUILD", "MEMTRACE_SOURCE")) \
                or k.startswith("CUDASIM_") or k.startswith("XLA_") or k.startswith("JAX_") \
                or k in ("LD_PRELOAD", "CUDA_VISIBLE_DEVICES", "TF_CPP_MIN_LOG_LEVEL"):
            del env[k]
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra)
    return env


def tag_line(tag):
    """The line of programs/arrays.py that ends in the comment "# @TAG"."""
    with open(PROGRAM) as f:
        lines = [n for n, line in enumerate(f, 1) if line.rstrip().endswith("# @" + tag)]
    assert len(lines) == 1, tag
    return lines[0]


def rounded(n):
    return (n + BFC_ROUND - 1) // BFC_ROUND * BFC_ROUND


class ArraysTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="memtrace-jax-arrays-")
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def run_program(self, setting, traced):
        extra = dict(setting)
        trace = None
        if traced:
            trace = os.path.join(self.tmp, "arrays.db")
            extra.update({"LD_PRELOAD": LIB, "MEMTRACE_OUTPUT": trace, "MEMTRACE_CUPTI": "off"})
        start = time.monotonic()
        proc = subprocess.run([SIM_RUN, "--capacity", "1G", "--", PYTHON, PROGRAM],
                              env=run_env(extra), cwd=self.tmp, capture_output=True, text=True,
                              timeout=300)
        lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
        print(f"arrays.py {setting or 'default'} {'under memtrace' if traced else 'plain'}: "
              f"exit {proc.returncode}, {time.monotonic() - start:.1f} s")
        self.assertEqual(proc.returncode, 0, proc.stderr[-4000:])
        self.assertTrue(lines, f"arrays.py printed no figures; stderr:\n{proc.stderr[-4000:]}")
        return proc, json.loads(lines[-1]), trace

    def arrays(self, trace):
        """The trace's arrays in XLA's arena: [(seq, kind, address, bytes,
        line of arrays.py that made it or None)], in order."""
        conn = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
        self.addCleanup(conn.close)
        return conn.execute("""
            SELECT e.seq, e.kind, e.address, e.bytes,
                   (SELECT f.line FROM stack_frames sf JOIN frames f ON f.id = sf.frame
                     WHERE sf.stack = e.stack AND f.kind = 1 AND f.file LIKE '%/arrays.py'
                     ORDER BY sf.depth LIMIT 1)
              FROM other_events e JOIN apis a ON a.id = e.api
             WHERE a.name = 'XlaPjrt' AND e.kind IN (?, ?)
             ORDER BY e.seq""", (TENSOR_ALLOC, TENSOR_FREE)).fetchall()

    def check(self, setting, exact):
        plain, plain_fig, _ = self.run_program(setting, traced=False)
        _, fig, trace = self.run_program(setting, traced=True)
        self.assertEqual(fig["platform"], "gpu")
        names = [p["name"] for p in fig["points"]]
        self.assertEqual(names, [p["name"] for p in plain_fig["points"]])
        for p, q in zip(fig["points"], plain_fig["points"]):
            self.assertEqual((p["bytes_in_use"], p["num_allocs"]),
                             (q["bytes_in_use"], q["num_allocs"]),
                             f"JAX's figures at {p['name']} changed under memtrace")
            self.assertLessEqual(abs(p["peak_bytes_in_use"] - q["peak_bytes_in_use"]),
                                 TIMING_SLACK, p["name"])

        events = self.arrays(trace)
        live, peak, allocs, at = {}, 0, 0, 0
        for i, point in enumerate(fig["points"]):
            markers = [e for e in events if e[1] == TENSOR_ALLOC and e[3] == MARK + i]
            self.assertEqual(len(markers), 1, f"marker {i}")
            while events[at][0] < markers[0][0]:
                seq, kind, address, size, _ = events[at]
                if kind == TENSOR_ALLOC:
                    self.assertNotIn(address, live, f"two arrays at {address:#x} (seq {seq})")
                    live[address] = size
                    allocs += 1
                else:
                    self.assertEqual(live.pop(address, None), size, f"free at seq {seq}")
                peak = max(peak, sum(rounded(b) for b in live.values()))
                at += 1
            held = sum(rounded(b) for b in live.values())
            name = point["name"]
            print(f"  {name}: JAX bytes_in_use {point['bytes_in_use']}, the trace's arrays "
                  f"{held} ({len(live)}); num_allocs {point['num_allocs']}, the trace's "
                  f"{allocs}; peak {point['peak_bytes_in_use']}, the trace's {peak}")
            # BFC hands out a free chunk whole when it is less than twice
            # the request: JAX counts the chunk, the trace the array
            self.assertLessEqual(held, point["bytes_in_use"], name)
            self.assertLessEqual(point["bytes_in_use"] - held, held, name)
            if exact and name != "donated":
                self.assertEqual(held, point["bytes_in_use"], name)
            elif exact:
                # the donated array's chunk: a step's temporary's, not split
                self.assertLess(held, point["bytes_in_use"], name)
                self.assertLess(point["bytes_in_use"] - held, rounded(300 * 1000 * 4), name)
            if name in ("from_host", "computed", "deleted"):
                self.assertEqual(allocs, point["num_allocs"], name)
                if exact:
                    self.assertEqual(peak, point["peak_bytes_in_use"], name)
            else:
                self.assertLess(allocs, point["num_allocs"], name)
            self.assertLessEqual(peak, point["peak_bytes_in_use"], name)

        lines = {}
        for _, kind, _, size, line in events:
            if kind == TENSOR_ALLOC:
                lines.setdefault(size, set()).add(line)
        self.assertEqual(lines[1024 * 4], {tag_line("host")})
        self.assertEqual(lines[1024 * 1024 * 4], {tag_line("ones")})
        self.assertEqual(lines[1024 * 512 * 4], {tag_line("zeros"), tag_line("step")})
        self.assertEqual(lines[300 * 1000 * 4], {tag_line("donate") - 2, tag_line("donate")})

        # the report does not read the arrays yet; it must not take them
        # for PyTorch's tensors
        for fmt in ("text", "json"):
            proc = subprocess.run([REPORTER, trace, "--format", fmt], capture_output=True,
                                  text=True, timeout=300)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertNotIn("PyTorch", proc.stdout)
            self.assertNotIn("pytorch_caching", proc.stdout)

    def test_default(self):
        """XLA's default: the arena preallocated (75 % of the device)."""
        self.check(SETTINGS[0], exact=True)

    def test_no_preallocation(self):
        """XLA_PYTHON_CLIENT_PREALLOCATE=false: the arena grows."""
        self.check(SETTINGS[1], exact=False)

    def test_platform_allocator(self):
        """XLA_PYTHON_CLIENT_ALLOCATOR=platform (still an arena in jax 0.10)."""
        self.check(SETTINGS[2], exact=False)


def main():
    global PYTHON
    PYTHON = framework_python()
    if PYTHON is None:
        sys.exit(SKIP)
    result = unittest.main(exit=False, verbosity=2).result
    sys.exit(0 if result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
