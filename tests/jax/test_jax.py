"""Real JAX under memtrace, checked against JAX's own accounting (issue 32;
shared design notes, "The truth is somebody else's number").

programs/step.py (a jitted MLP training step, then a batch that does not
fit) runs twice on `scripts/sim-run --capacity 1G` with the jax of
`scripts/framework-python jax`, under each of XLA's allocator settings:
plain, and under LD_PRELOAD=libmemtrace.so. It prints
jax.Device.memory_stats() after training, before and after the failed
step, and the error's message, as one JSON line. The tests assert that
the exit status and those figures are the same both ways, and that the
report's figures equal them. The only device memory XLA does not count
is the default workspace of the simulated cuBLAS's handle (32 MiB,
tests/sim/README.md), found in the trace by its stack and added, as in
tests/torch.

The OOM is XLA's own: its BFC arena cannot serve the step's buffers and
no CUDA call fails (docs/capture.md, "A framework allocator's own OOM").

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
PROGRAMS = os.path.join(SOURCE, "tests", "jax", "programs")
MiB = 1 << 20
CUBLAS_WORKSPACE = 32 * MiB  # the simulated cuBLAS's default on a 9.0 device
OOM_BATCH = 300000  # rows of 512 floats: the step's buffers need 3.44 GiB
SKIP = 77
# XLA's peak while a step runs depends on when its async work frees a
# buffer against when the next is taken: a scalar more or less (256
# bytes in one clean-clone CI run, plain against plain as much as under
# memtrace). Those figures are compared within this, every other exactly;
# memtrace's own figures are checked against the same run's.
TIMING_SLACK = 4096
TIMING_KEYS = ("peak_bytes_in_use",)

PYTHON = None


def framework_python():
    """The jax python, or None when scripts/framework-python says 77."""
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


def assert_same_figures(test, traced, plain, what="JAX's figures"):
    """The figures JAX printed under memtrace are those it printed
    plain: every key equal, the timing-dependent ones (TIMING_KEYS)
    within TIMING_SLACK."""
    test.assertEqual(sorted(traced), sorted(plain), f"{what} changed under memtrace")
    for key, value in plain.items():
        if isinstance(value, dict):
            assert_same_figures(test, traced[key], value, f"{what}[{key!r}]")
        elif key in TIMING_KEYS:
            test.assertLessEqual(abs(traced[key] - value), TIMING_SLACK,
                                 f"{what}[{key!r}] changed under memtrace: "
                                 f"{traced[key]} against {value}")
        else:
            test.assertEqual(traced[key], value, f"{what}[{key!r}] changed under memtrace")


def jax_size(n):
    """A size as XLA's messages write it (tsl::strings::HumanReadableNumBytes)."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.2f}{unit}"
    return f"{n}B"


class JaxTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="memtrace-jax-")
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def run_program(self, setting, traced):
        extra = dict(setting)
        trace = None
        if traced:
            trace = os.path.join(self.tmp, "step.db")
            extra.update({"LD_PRELOAD": LIB, "MEMTRACE_OUTPUT": trace, "MEMTRACE_CUPTI": "off"})
        start = time.monotonic()
        proc = subprocess.run(
            [SIM_RUN, "--capacity", "1G", "--", PYTHON, os.path.join(PROGRAMS, "step.py"),
             "--oom", str(OOM_BATCH)],
            env=run_env(extra), cwd=self.tmp, capture_output=True, text=True, timeout=300)
        lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
        print(f"step.py {setting or 'default'} {'under memtrace' if traced else 'plain'}: "
              f"exit {proc.returncode}, {time.monotonic() - start:.1f} s, JAX's figures "
              f"{lines[-1] if lines else None}")
        self.assertTrue(lines, f"step.py printed no figures; stderr:\n{proc.stderr[-4000:]}")
        return proc, json.loads(lines[-1]), trace

    def run_both(self, setting):
        """Plain, then under memtrace: same exit status (0), same figures.
        The figures returned are the traced run's, the truth for its trace."""
        plain, plain_fig, _ = self.run_program(setting, traced=False)
        traced, fig, trace = self.run_program(setting, traced=True)
        self.assertEqual(plain.returncode, 0, plain.stderr[-4000:])
        self.assertEqual(traced.returncode, plain.returncode, traced.stderr[-4000:])
        assert_same_figures(self, fig, plain_fig)
        self.assertEqual(fig["platform"], "gpu")
        self.assertTrue(fig["error"].startswith("RESOURCE_EXHAUSTED: Out of memory while "
                                                "trying to allocate "), fig["error"])
        return traced, fig, trace

    def report(self, trace, *args):
        proc = subprocess.run([REPORTER, trace, *args], capture_output=True, text=True,
                              timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc.stdout

    def workspaces(self, trace):
        """The cuBLAS handles' default workspaces, from the trace: device
        allocations whose stack passes through cublasCreate of the
        simulated libcublas. [(seq, bytes, freed at seq or None)]."""
        conn = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
        self.addCleanup(conn.close)
        rows = conn.execute("""
            SELECT a.seq, a.bytes, f.seq FROM allocs a
              JOIN sites s ON s.id = a.site
              LEFT JOIN frees f ON f.alloc = a.seq
             WHERE EXISTS (SELECT 1 FROM stack_frames sf
                             JOIN frames fr ON fr.id = sf.frame
                             JOIN modules m ON m.id = fr.module
                            WHERE sf.stack = s.stack
                              AND m.path LIKE '%/libcublas.so%'
                              AND fr.function LIKE 'cublasCreate%')
             ORDER BY a.seq""").fetchall()
        for seq, size, _ in rows:
            self.assertEqual(size, CUBLAS_WORKSPACE, f"cuBLAS allocation {seq} is not 32 MiB")
        self.assertEqual(len(rows), 1, f"cuBLAS workspaces: {rows}")
        return rows

    def check_oom(self, rep, text, stderr, fig, ws_bytes):
        """XLA's own OOM, no CUDA call failing: the request JAX names, the
        arena's bytes live at it, the user's line, first in the report."""
        bfc = [o for o in rep["ooms"] if o["api"] == "BFCAllocator"]
        self.assertEqual(len(bfc), 1, rep["ooms"])
        oom = bfc[0]
        self.assertIn(f"allocate {jax_size(oom['requested_bytes'])}.", fig["error"])
        self.assertEqual(oom["live_bytes"], fig["after_oom"]["pool_bytes"] + ws_bytes)
        self.assertEqual(oom["device_total"], 1 << 30)
        where = f"main (step.py:{tag_line('step.py', 'oom')})"
        paragraphs = [p for p in text.split("\n\n")[1:] if not p.startswith("Note:")]
        first = " ".join(paragraphs[0].split())
        self.assertTrue(first.startswith("OUT OF MEMORY: BFCAllocator of "), text)
        self.assertIn(f" in {where};", first)
        self.assertIn(f"memtrace: out of memory: BFCAllocator of", stderr)
        self.assertIn(f"failed in {where}", stderr)

    # ---- the tests ----

    def test_simulated_libraries_match_the_wheels(self):
        """What the simulated libraries define is what the wheels'
        libraries define, with the same version node, and what they define
        for XLA is what XLA's plugin names (it links no CUDA library: it looks each function
        up with dlsym by a name kept in its binary, so those names are
        its imports). A JAX whose plugin stops naming them, or a cuDNN
        that drops them, fails here, not deep inside XLA."""
        site = subprocess.run([PYTHON, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.strip()
        plugin = os.path.join(site, "jax_plugins", "xla_cuda13", "xla_cuda_plugin.so")
        with open(plugin, "rb") as f:
            names = f.read()
        sim_cudnn = os.path.join(BUILD, "tests", "sim", "dnn", "libcudnn.so.9")
        real_cudnn = os.path.join(site, "nvidia", "cudnn", "lib", "libcudnn.so.9")
        self.assertIn("SONAME", soname_line(sim_cudnn))
        self.assertIn("[libcudnn.so.9]", soname_line(sim_cudnn))
        sim = defined(sim_cudnn)
        real = set(defined(real_cudnn))
        self.assertGreater(len(sim), 10)
        for sym in sim:
            self.assertTrue(sym.endswith("@libcudnn.so.9"), sym)
            self.assertTrue(sym in real, f"the wheel's cuDNN has no {sym}")
        # what XLA calls as it starts its DNN support, which the simulated
        # cuDNN first had for it (the rest is torch's as much as XLA's:
        # sim-dnn-exports checks it against torch's imports)
        for name in ("cudnnGetVersion", "cudnnGetCudartVersion", "cudnnGetProperty",
                     "cudnnGetErrorString", "cudnnCreate", "cudnnDestroy", "cudnnSetStream",
                     "cudnnGetStream", "cudnnSetCallback", "cudnnGraphVersionCheck",
                     "cudnnOpsVersionCheck", "cudnnCnnVersionCheck", "cudnnAdvVersionCheck"):
            self.assertIn(name + "@libcudnn.so.9", sim)
            self.assertIn(b"\0" + name.encode() + b"\0", names,
                          f"XLA's plugin never names {name}")
        # the driver functions added for XLA (tests/sim/README.md, "For JAX")
        for name in ("cuModuleLoadFatBinary", "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2",
                     "cuMemcpyDtoDAsync_v2", "cuTensorMapEncodeTiled"):
            self.assertIn(b"\0" + name.encode() + b"\0", names, f"XLA's plugin never names {name}")
            self.assertIn(name, [s.split("@")[0] for s in defined(
                os.path.join(BUILD, "tests", "sim", "libcuda.so.1"))])

    def test_default_preallocation(self):
        """XLA's default: 75 % of the device taken at start as one arena,
        reported as the framework's arena (diagnosis preallocated), not as
        a leak; the jitted step's OOM inside it, with no CUDA call failing.
        The step asks for more than the whole device, so too_big leads,
        saying so, and the arena follows it."""
        traced, fig, trace = self.run_both({})
        rep = self.report_json(trace)
        (_, ws, ws_freed), = self.workspaces(trace)
        arena = fig["trained"]["pool_bytes"]
        self.assertEqual(arena, fig["trained"]["bytes_limit"])
        self.assertEqual(rep["totals"]["peak_bytes"], fig["after_oom"]["peak_pool_bytes"] + ws)
        self.assertEqual([o["api"] for o in rep["ooms"]], ["BFCAllocator"])
        diag = rep["diagnosis"]
        self.assertEqual(diag["cause"], "too_big", diag)
        self.assertIn("is more than the device's 1.0 GiB", diag["evidence"])
        pre = [a for a in diag["also"] if a["cause"] == "preallocated"]
        self.assertEqual(len(pre), 1, diag)
        self.assertIn(f"{arena // MiB}.0 MiB", pre[0]["evidence"])
        # the arena is given back at exit: no leak but the cuBLAS workspace
        self.assertEqual(rep["totals"]["live_bytes_at_end"], ws)
        self.check_oom(rep, self.report(trace), traced.stderr, fig, ws)

    def test_no_preallocation(self):
        """XLA_PYTHON_CLIENT_PREALLOCATE=false: the arena grows as the steps
        need it; memtrace's peak is the arena's peak, and the OOM comes
        when the arena reached its limit (75 %), still with no CUDA call
        failing."""
        traced, fig, trace = self.run_both({"XLA_PYTHON_CLIENT_PREALLOCATE": "false"})
        rep = self.report_json(trace)
        (_, ws, _), = self.workspaces(trace)
        self.assertLess(fig["trained"]["pool_bytes"], fig["trained"]["bytes_limit"])
        self.assertEqual(fig["after_oom"]["pool_bytes"], fig["after_oom"]["bytes_limit"])
        self.assertEqual(rep["totals"]["peak_bytes"], fig["after_oom"]["peak_pool_bytes"] + ws)
        self.assertEqual([o["api"] for o in rep["ooms"]], ["BFCAllocator"])
        text = self.report(trace)
        self.check_oom(rep, text, traced.stderr, fig, ws)
        self.check_no_arena(rep, text, traced.stderr)

    def test_platform_allocator(self):
        """XLA_PYTHON_CLIENT_ALLOCATOR=platform: no arena limit below the
        device; memtrace's peak and live bytes at the end are JAX's
        peak_pool_bytes and pool_bytes (plus the workspace); the OOM is a
        allocator's own; before it, the cuMemCreate calls that asked for
        more than the device had while the arena grew (XLA then asked for
        less, and went on)."""
        traced, fig, trace = self.run_both({"XLA_PYTHON_CLIENT_ALLOCATOR": "platform"})
        rep = self.report_json(trace)
        (_, ws, _), = self.workspaces(trace)
        self.assertEqual(fig["trained"]["bytes_limit"], 1 << 30)
        t = rep["totals"]
        self.assertEqual(t["peak_bytes"], fig["after_oom"]["peak_pool_bytes"] + ws)
        self.assertEqual(t["live_bytes_at_end"], fig["after_oom"]["pool_bytes"] + ws)
        apis = [o["api"] for o in rep["ooms"]]
        self.assertEqual(apis[-1], "BFCAllocator", apis)
        self.assertTrue(all(a == "cuMemCreate" for a in apis[:-1]), apis)
        bfc = rep["ooms"][-1]
        self.assertIn(f"allocate {jax_size(bfc['requested_bytes'])}.", fig["error"])
        self.check_no_arena(rep, self.report(trace), traced.stderr)

    def check_no_arena(self, rep, text, stderr):
        """The arena grew as the steps asked (JAX's pool_bytes below its
        limit after training, checked by the caller): no preallocation
        note, no preallocated cause, in the JSON, the text or on stderr,
        though its last region may be most of the device."""
        self.assertEqual([n for n in rep["notes"] if n["kind"] == "preallocation"], [])
        diag = rep["diagnosis"]
        causes = [diag["cause"]] + [a["cause"] for a in diag.get("also", [])]
        self.assertNotIn("preallocated", causes, diag)
        self.assertNotIn("preallocating", text)
        self.assertNotIn("(preallocated)", stderr)

    def test_silenced_log(self):
        """TF_CPP_MIN_LOG_LEVEL=2, as many programs set it: XLA's allocator
        writes no warning, so its OOM is found from the exception raised
        into Python; the request as its message gives it (three figures),
        the live set exact, at the line where the error reached the
        program (the wait: XLA dispatches the step asynchronously)."""
        setting = {"TF_CPP_MIN_LOG_LEVEL": "2"}
        traced, fig, trace = self.run_both(setting)
        self.assertNotIn("ran out of memory", traced.stderr)
        rep = self.report_json(trace)
        (_, ws, _), = self.workspaces(trace)
        self.assertEqual([o["api"] for o in rep["ooms"]], ["BFCAllocator"])
        oom = rep["ooms"][0]
        self.assertIn(f"allocate {jax_size(oom['requested_bytes'])}.", fig["error"])
        self.assertEqual(oom["live_bytes"], fig["after_oom"]["pool_bytes"] + ws)
        where = f"main (step.py:{tag_line('step.py', 'wait')})"
        first = [p for p in self.report(trace).split("\n\n")[1:] if not p.startswith("Note:")][0]
        self.assertTrue(" ".join(first.split()).startswith("OUT OF MEMORY: BFCAllocator of "), first)
        self.assertIn(f" in {where};", " ".join(first.split()))
        self.assertIn(f"memtrace: out of memory: BFCAllocator of", traced.stderr)
        self.assertIn(f"failed in {where}", traced.stderr)

    def report_json(self, trace):
        return json.loads(self.report(trace, "--format", "json"))


def defined(lib):
    """SYMBOL@VERSION (or SYMBOL@Base) of each function LIB defines."""
    out = subprocess.run(["readelf", "--dyn-syms", "-W", lib], capture_output=True, text=True,
                         check=True).stdout
    syms = []
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] == "FUNC" and f[6] != "UND":
            name = f[7].replace("@@", "@")
            syms.append(name if "@" in name else name + "@Base")
    return syms


def soname_line(lib):
    out = subprocess.run(["readelf", "-d", "-W", lib], capture_output=True, text=True,
                         check=True).stdout
    return next((l for l in out.splitlines() if "(SONAME)" in l), "")


def tag_line(program, tag):
    """The line of programs/PROGRAM that ends in the comment "# @TAG"."""
    with open(os.path.join(PROGRAMS, program)) as f:
        lines = [n for n, line in enumerate(f, 1) if line.rstrip().endswith("# @" + tag)]
    assert len(lines) == 1, (program, tag)
    return lines[0]


def main():
    global PYTHON
    PYTHON = framework_python()
    if PYTHON is None:
        return SKIP
    result = unittest.main(verbosity=2, exit=False).result
    if not result.wasSuccessful():
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
