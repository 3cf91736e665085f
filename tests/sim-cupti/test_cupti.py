"""interpose/hooks/cupti.c end to end, on the simulated device and the simulated
CUPTI: a program whose allocations partly bypass every hook, the rule of
docs/cupti.md applied to its trace (reconcile.py), the flush at an
out-of-memory failure, where libcupti is looked for, and each way CUPTI
can be unusable (one message, and a hook-only trace that is still right).

Paths come from tests/sim-cupti/meson.build's environment."""
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reconcile  # noqa: E402

BUILD = os.environ["MEMTRACE_BUILD"]
SIM = os.environ["SIM_DIR"]
SIM_CUPTI = os.environ["SIM_CUPTI_DIR"]
LIB = os.environ["MEMTRACE_CUPTI_LIB"]
PROGRAM = os.environ["PRIVATE_ROUTE"]
REAL_CUPTI = os.environ["REAL_CUPTI"]
POOL_FREE = os.environ["POOL_FREE"]
REPORTER = os.path.join(BUILD, "report", "memtrace-report")
CUPTI_LIB = os.path.join(SIM_CUPTI, "libcupti.so.13")
OBSERVED_DRIVER = os.path.join(SIM_CUPTI, "libcuda.so.1")
MiB = 1 << 20

# private-route.c's numbers.
HOOKED = {1 * MiB, 2 * MiB, 8192}
PRIVATE = [3000000, 5242883, 12288]
PRIVATE_LIVE = 5242883 + 12288


def interpreter(path):
    """The program's ELF interpreter (PT_INTERP)."""
    out = subprocess.run(["readelf", "-l", path], capture_output=True, text=True,
                         check=True).stdout
    return re.search(r"program interpreter: ([^\]]+)\]", out).group(1)


def loaded_libraries(directory):
    """What LD_DEBUG=libs wrote into files ld.* of directory."""
    text = ""
    for f in os.listdir(directory):
        if f.startswith("ld."):
            with open(os.path.join(directory, f)) as fh:
                text += fh.read()
    return text


def graphs_observed():
    """Whether the observed driver's graph calls are observe-graph.c's weak
    ones: once tests/sim's driver has graphs of its own, they win, and
    nothing tells CUPTI of graphs until observe.c learns of them."""
    out = subprocess.run(["nm", "-D", "--defined-only", OBSERVED_DRIVER], capture_output=True,
                         text=True, check=True).stdout
    return re.search(r" W cuGraphCreate$", out, re.M) is not None


class Run:
    def __init__(self, proc, trace):
        self.rc, self.stdout, self.stderr, self.trace = (
            proc.returncode, proc.stdout, proc.stderr, trace)

    def cupti_lines(self):
        """memtrace's messages that speak of CUPTI."""
        return [line for line in self.stderr.splitlines()
                if line.startswith("memtrace:") and "CUPTI" in line]


class CuptiTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="memtrace-cupti-")
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def env(self, extra=None, preload=True):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("MEMTRACE_", "CUPTISIM_", "CUDA_"))}
        env.update({
            "LD_LIBRARY_PATH": f"{SIM_CUPTI}:{SIM}",
            "CUDASIM_DEVICE_MEMORY": "1G",
            "CUDASIM_DEVICE_COUNT": "1",
            "CUDASIM_RESERVED_MEMORY": "0",
            "CUDA_HOME": os.path.join(self.tmp, "no-toolkit"),
        })
        env.pop("LD_PRELOAD", None)
        if preload:
            env["LD_PRELOAD"] = LIB
            env["MEMTRACE_OUTPUT"] = os.path.join(self.tmp, "trace.db")
            env["MEMTRACE_CUPTI_PATH"] = CUPTI_LIB
        for k, v in (extra or {}).items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
        return env

    def run_program(self, args=(), extra=None, preload=True, no_cache=False, program=PROGRAM):
        """no_cache: the loader ignores /etc/ld.so.cache, where a system may
        list a real libcupti that dlopen("libcupti.so.13") would find."""
        env = self.env(extra, preload)
        loader = [interpreter(PROGRAM), "--inhibit-cache"] if no_cache else []
        proc = subprocess.run([*loader, program, *args], env=env, cwd=self.tmp,
                              capture_output=True, text=True, timeout=120)
        return Run(proc, env.get("MEMTRACE_OUTPUT"))

    def run_both(self, args=(), extra=None, no_cache=False):
        """The program's output and status must not change under memtrace."""
        plain = self.run_program(args, extra, preload=False, no_cache=no_cache)
        traced = self.run_program(args, extra, no_cache=no_cache)
        self.assertEqual(plain.stdout, traced.stdout, traced.stderr)
        self.assertEqual(plain.rc, traced.rc, traced.stderr)
        return traced

    def db(self, trace):
        conn = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
        self.addCleanup(conn.close)
        return conn

    def link_dir(self, name, links):
        """A directory of symbolic links: {name in it: target}."""
        d = os.path.join(self.tmp, name)
        os.makedirs(d, exist_ok=True)
        for n, target in links.items():
            os.makedirs(os.path.dirname(os.path.join(d, n)), exist_ok=True)
            os.symlink(target, os.path.join(d, n))
        return d

    # ---- what a hook-only trace of private-route must hold ----

    def assert_hooks_alone(self, run):
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertEqual(run.stdout, "done\n")
        db = self.db(run.trace)
        self.assertEqual(db.execute("SELECT count(*) FROM events WHERE source IS NOT NULL")
                         .fetchone()[0], 0)
        self.assertEqual(db.execute("SELECT count(*) FROM cupti").fetchone()[0], 0)
        allocs = [b for (b,) in db.execute(
            "SELECT bytes FROM events WHERE kind = 1 ORDER BY seq")]
        self.assertEqual(sorted(allocs), sorted(HOOKED))
        self.assertEqual(db.execute("SELECT count(*), sum(bytes) FROM events WHERE kind = 2")
                         .fetchone(), (1, 1 * MiB))
        result = reconcile.reconcile(run.trace)
        self.assertFalse(result["cupti_on"])
        self.assertEqual(result["allocations"]["not_confirmed"]["count"], 0)

    def assert_one_message(self, run, pattern):
        lines = run.cupti_lines()
        self.assertEqual(len(lines), 1, run.stderr)
        self.assertRegex(lines[0], pattern)
        self.assertIn("memtrace goes on with its hooks alone", lines[0])


class PrivateRoute(CuptiTest):
    """The static-runtime case: allocations only CUPTI sees."""

    def function_range(self, name):
        out = subprocess.run(["nm", "-S", PROGRAM], capture_output=True, text=True,
                             check=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) == 4 and f[3] == name:
                return int(f[0], 16), int(f[0], 16) + int(f[1], 16)
        self.fail(f"{name} not in {PROGRAM}")

    def check_private_route(self, run):
        result = reconcile.reconcile(run.trace)
        self.assertTrue(result["cupti_on"])
        a = result["allocations"]
        self.assertEqual((a["hooks"], a["cupti"], a["matched"]), (3, 6, 3))
        alone = a["cupti_alone"]
        self.assertEqual(alone["count"], 3)
        self.assertEqual(alone["bytes"], 8255171)
        self.assertEqual(alone["live_bytes"], PRIVATE_LIVE)
        self.assertEqual([x["bytes"] for x in alone["allocations"]], PRIVATE)
        self.assertEqual([x["mem"] for x in alone["allocations"]], [1, 1, 2])
        self.assertEqual([x["freed"] for x in alone["allocations"]], [True, False, False])
        self.assertEqual(alone["by_module"], {PROGRAM: {"count": 3, "bytes": 8255171}})
        self.assertEqual(a["not_confirmed"]["count"], 0)
        return result

    def test_allocations_seen_by_cupti_alone(self):
        run = self.run_both()
        self.assertEqual(run.stdout, "done\n")
        result = self.check_private_route(run)
        # The program counters are in the functions that called the driver.
        lo, hi = self.function_range("private_alloc")
        mlo, mhi = self.function_range("private_alloc_managed")
        offsets = [x["offset"] for x in result["allocations"]["cupti_alone"]["allocations"]]
        self.assertTrue(lo < offsets[0] <= hi and lo < offsets[1] <= hi, offsets)
        self.assertTrue(mlo < offsets[2] <= mhi, offsets)
        self.assertIn("cross-checking allocations with CUPTI (%s)" % CUPTI_LIB, run.stderr)

    def test_graph_lifetimes(self):
        """Graphs made by the private route: CUPTI's callbacks alone."""
        if not graphs_observed():
            self.skipTest("tests/sim's driver has its own graphs: observe.c must report them")
        result = reconcile.reconcile(self.run_program().trace)
        self.assertEqual(result["graphs"], {
            "matched": 0,
            "cupti_alone": {"graphs": 2, "graphs_never_destroyed": 1, "execs": 1,
                            "execs_never_destroyed": 0}})

    def test_trace_rows(self):
        run = self.run_program()
        db = self.db(run.trace)
        # Every CUPTI event has its cupti row and no api; activity records
        # have no thread (0), the graph callbacks run on the program's.
        rows = db.execute(
            "SELECT e.kind, e.api, e.thread, c.correlation_id, c.pc FROM events e "
            "LEFT JOIN cupti c ON c.seq = e.seq WHERE e.source = 1 ORDER BY e.seq").fetchall()
        self.assertEqual(len(rows), db.execute("SELECT count(*) FROM cupti").fetchone()[0])
        self.assertTrue(all(r[1] == 0 for r in rows))
        memory = [r for r in rows if r[0] in (1, 2)]
        self.assertEqual(len(memory), 6 + 2)
        self.assertTrue(all(r[2] == 0 and r[3] and r[4] for r in memory), memory)
        self.assertEqual(len({r[3] for r in memory}), len(memory), "correlation ids repeat")
        # The marks that bound CUPTI's watch.
        marks = db.execute(
            "SELECT o.name FROM events e JOIN ops o ON o.id = e.op "
            "WHERE e.kind = 13 AND e.source = 1 ORDER BY e.time_ns").fetchall()
        self.assertEqual(marks, [("memtrace: CUPTI on",), ("memtrace: CUPTI off",)])

    def test_graph_rows(self):
        """Graph events: CUPTI's ids in correlation_id, the handles in handle."""
        if not graphs_observed():
            self.skipTest("tests/sim's driver has its own graphs: observe.c must report them")
        db = self.db(self.run_program().trace)
        graphs = db.execute(
            "SELECT e.kind, c.correlation_id, e.handle, e.address FROM events e "
            "JOIN cupti c ON c.seq = e.seq WHERE e.kind BETWEEN 14 AND 18 ORDER BY e.seq"
        ).fetchall()
        self.assertEqual([(k, i) for k, i, _, _ in graphs],
                         [(14, 1), (17, 1), (15, 2), (18, 1), (16, 2)])
        g, e, c = graphs[0][2], graphs[1][2], graphs[2][2]
        self.assertEqual(graphs[1][3], g)  # the exec's graph
        self.assertEqual(graphs[2][3], g)  # the clone's original
        self.assertEqual((graphs[3][2], graphs[4][2]), (e, c))

    def test_clock_measured_when_cupti_keeps_its_own(self):
        """A CUPTI without the timestamp callback stamps CLOCK_REALTIME:
        the offset measured at start must still put each record inside
        its hooked twin's life."""
        run = self.run_both(extra={"CUPTISIM_NO_TIMESTAMP_CALLBACK": "1"})
        self.check_private_route(run)

    def test_report_reads_the_trace(self):
        run = self.run_program()
        proc = subprocess.run([REPORTER, run.trace, "--format", "json"], capture_output=True,
                              text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def report(self, trace):
        proc = subprocess.run([REPORTER, trace, "--format", "json"], capture_output=True,
                              text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        report = json.loads(proc.stdout)
        if "cupti" not in report:
            self.skipTest("the reporter does not apply the CUPTI rule (docs/cupti.md)")
        return report

    def test_report_counts_cupti_alone(self):
        """The report applies the rule of docs/cupti.md: the same numbers
        as reconcile.py, each allocation counted once."""
        report = self.report(self.run_program().trace)
        c = report["cupti"]
        self.assertTrue(c["active"])
        self.assertEqual((c["allocations"], c["matched"]), (6, 3))
        self.assertEqual(c["matched_bytes"], 1 * MiB + 2 * MiB + 8192)
        self.assertEqual((c["cupti_only"]["count"], c["cupti_only"]["bytes"]), (3, 8255171))
        self.assertEqual([{k: m[k] for k in ("module", "count", "bytes")}
                          for m in c["cupti_only"]["by_module"]],
                         [{"module": "private-route", "count": 3, "bytes": 8255171}])
        self.assertEqual(c["unconfirmed"], {"count": 0, "bytes": 0})
        self.assertEqual(report["totals"]["live_bytes_at_end"], 2 * MiB + PRIVATE_LIVE)

    @unittest.expectedFailure
    def test_report_peak_in_time_order(self):
        """The device peak, with the private allocations at the times CUPTI
        gave them: 1 MiB + 3,000,000 + 5,242,883 + 12,288 = 9,303,747 bytes,
        before the 1 MiB and the 3,000,000 are freed and the 2 MiB made.
        CUPTI's records reach the trace in batches, after hooked events that
        came later in time; a model that replays them in seq order has the
        2 MiB live with the 3,000,000 and reports 10,352,323."""
        report = self.report(self.run_program().trace)
        self.assertEqual(report["totals"]["peak_bytes"], 9303747)

    def test_not_confirmed(self):
        """A record CUPTI lost: the hooked allocation it was is flagged,
        and the loss is said once."""
        run = self.run_both(extra={"CUPTISIM_DROP": "1"})
        result = reconcile.reconcile(run.trace)
        a = result["allocations"]
        self.assertEqual((a["hooks"], a["cupti"], a["matched"]), (3, 5, 2))
        self.assertEqual(a["not_confirmed"]["count"], 1)
        self.assertEqual(a["not_confirmed"]["bytes"], 1 * MiB)
        seq = a["not_confirmed"]["seqs"][0]
        self.assertEqual(self.db(run.trace).execute(
            "SELECT api FROM events WHERE seq = ?", (seq,)).fetchone()[0],
            self.db(run.trace).execute(
                "SELECT id FROM apis WHERE name = 'cudaMalloc'").fetchone()[0])
        self.assertEqual(a["cupti_alone"]["count"], 3)
        self.assertIn("memtrace: CUPTI dropped 1 records", run.stderr)


class Writer(CuptiTest):
    def test_cupti_records_leave_the_hooked_frees_alone(self):
        """The writer fills a free's bytes and kind from the allocations it
        knows live; CUPTI's events must not enter that map (the hooks record
        a pool allocation as pool memory, CUPTI as device memory). Expected
        to fail until the writer's track_live skips events with a source."""
        run = self.run_program(program=POOL_FREE)
        self.assertEqual((run.rc, run.stdout), (0, "done\n"), run.stderr)
        row = self.db(run.trace).execute(
            "SELECT bytes, mem FROM events WHERE kind = 2 AND source IS NULL").fetchone()
        self.assertEqual(row, (1 << 20, 4))


class OutOfMemory(CuptiTest):
    def test_flushed_before_the_oom_is_committed(self):
        """The program is killed right after an out-of-memory failure: what
        CUPTI held must already be in the trace."""
        run = self.run_program(["oom"])
        self.assertEqual(run.rc, -9, run.stderr)
        self.assertEqual(run.stdout, "out of memory\n")
        db = self.db(run.trace)
        (oom_ns,) = db.execute("SELECT time_ns FROM events WHERE kind = 3").fetchone()
        result = reconcile.reconcile(run.trace, at_ns=oom_ns)
        alone = result["allocations"]["cupti_alone"]
        self.assertEqual([x["bytes"] for x in alone["allocations"]], PRIVATE)
        self.assertEqual(alone["live_bytes"], PRIVATE_LIVE)
        self.assertTrue(all(x["time_ns"] < oom_ns for x in alone["allocations"]))
        self.assertEqual(result["allocations"]["matched"], 3)


class Finding(CuptiTest):
    """Where libcupti is looked for, in order."""

    def found(self, run, path_part):
        self.assertEqual(run.rc, 0, run.stderr)
        lines = run.cupti_lines()
        self.assertEqual(len(lines), 1, run.stderr)
        self.assertIn("cross-checking allocations with CUPTI (", lines[0])
        self.assertIn(path_part, lines[0])
        self.assertTrue(reconcile.reconcile(run.trace)["cupti_on"])

    def test_next_to_the_runtime(self):
        d = self.link_dir("cuda", {"libcudart.so.13": os.path.join(SIM, "libcudart.so.13"),
                                   "libcupti.so.13": CUPTI_LIB,
                                   "libcuda.so.1": OBSERVED_DRIVER})
        run = self.run_program(extra={"MEMTRACE_CUPTI_PATH": None, "LD_LIBRARY_PATH": d})
        self.found(run, os.path.join(d, "libcupti.so.13"))

    def test_next_to_the_runtime_in_a_wheel(self):
        site = self.link_dir("site-packages", {
            "nvidia/cuda_runtime/lib/libcudart.so.13": os.path.join(SIM, "libcudart.so.13"),
            "nvidia/cuda_cupti/lib/libcupti.so.13": CUPTI_LIB})
        drv = self.link_dir("driver", {"libcuda.so.1": OBSERVED_DRIVER})
        lib = os.path.join(site, "nvidia", "cuda_runtime", "lib")
        run = self.run_program(extra={"MEMTRACE_CUPTI_PATH": None,
                                      "LD_LIBRARY_PATH": f"{lib}:{drv}"})
        self.found(run, "cuda_cupti/lib/libcupti.so.13")

    def test_in_the_toolkit(self):
        home = self.link_dir("toolkit", {"lib64/libcupti.so.13": CUPTI_LIB})
        drv = self.link_dir("driver", {"libcuda.so.1": OBSERVED_DRIVER})
        run = self.run_program(extra={"MEMTRACE_CUPTI_PATH": None, "CUDA_HOME": home,
                                      "LD_LIBRARY_PATH": f"{drv}:{SIM}"})
        self.found(run, os.path.join(home, "lib64", "libcupti.so.13"))

    def test_by_soname(self):
        run = self.run_program(extra={"MEMTRACE_CUPTI_PATH": None})
        self.found(run, CUPTI_LIB)

    def test_unloadable_path_then_the_next_place(self):
        run = self.run_program(extra={"MEMTRACE_CUPTI_PATH": "/nonexistent/libcupti.so"})
        self.assertRegex(run.stderr, r"MEMTRACE_CUPTI_PATH=/nonexistent/libcupti.so: .*; "
                                     r"using .*libcupti.so.13")
        self.assertTrue(reconcile.reconcile(run.trace)["cupti_on"])

    def test_not_started_without_cuda(self):
        """A process that never uses CUDA loads no CUPTI and makes no trace."""
        ld = os.path.join(self.tmp, "ld")
        proc = subprocess.run(["/bin/sh", "-c", "exit 0"],
                              env=self.env({"LD_DEBUG": "libs", "LD_DEBUG_OUTPUT": ld}),
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0)
        loaded = loaded_libraries(self.tmp)
        self.assertIn("libmemtrace.so", loaded)
        self.assertNotIn("libcupti", loaded)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "trace.db")))
        self.assertNotIn("CUPTI", proc.stderr)


class Unusable(CuptiTest):
    """Each way CUPTI cannot be used: one clear message, and the hooks'
    trace as it is without CUPTI."""

    def driver_only(self):
        """A library path with the observed driver and no libcupti. The
        loader's default directories must have none either."""
        for d in ("/lib64", "/usr/lib64", "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                  "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib", "/usr/lib"):
            for major in (13, 12):
                if os.path.exists(os.path.join(d, f"libcupti.so.{major}")):
                    self.skipTest(f"{d} has a libcupti.so.{major}: it cannot be missing here")
        return self.link_dir("driver", {"libcuda.so.1": OBSERVED_DRIVER}) + ":" + SIM

    def test_missing(self):
        run = self.run_both(extra={"MEMTRACE_CUPTI_PATH": None,
                                   "LD_LIBRARY_PATH": self.driver_only()}, no_cache=True)
        self.assert_one_message(run, r"CUPTI not found \(looked next to libcudart, in the CUDA "
                                     r"toolkit and for libcupti.so.13/.12\)")
        self.assert_hooks_alone(run)

    def test_missing_with_a_bad_path(self):
        run = self.run_both(extra={"MEMTRACE_CUPTI_PATH": "/nonexistent/libcupti.so",
                                   "LD_LIBRARY_PATH": self.driver_only()}, no_cache=True)
        self.assert_one_message(run, r"CUPTI not found \(MEMTRACE_CUPTI_PATH="
                                     r"/nonexistent/libcupti.so: .*; looked next to")
        self.assert_hooks_alone(run)

    def test_too_old(self):
        run = self.run_both(extra={"CUPTISIM_API_VERSION": "14"})
        self.assert_one_message(run, r"CUPTI \(.*libcupti.so.13\) is too old: API version 14, "
                                     r"memtrace needs 15 \(CUDA 11.2\) or newer")
        self.assert_hooks_alone(run)

    def test_held_by_another_tool(self):
        run = self.run_both(extra={"CUPTISIM_HELD_BY": "Nsight Systems"})
        self.assert_one_message(run, r"CUPTI is held by another tool \(Nsight Systems\)")
        self.assert_hooks_alone(run)

    def test_no_usable_device(self):
        run = self.run_both(extra={"CUPTISIM_UNPROFILABLE": "1"})
        self.assert_one_message(run, r"CUPTI \(.*\) cannot start: cuptiActivityEnable\(MEMORY2\) "
                                     r"returned CUPTI_ERROR_NOT_INITIALIZED")
        self.assert_hooks_alone(run)

    @unittest.skipUnless(os.path.exists(REAL_CUPTI), "no libcupti.so.13 in the toolkit")
    def test_real_cupti_without_a_gpu(self):
        """NVIDIA's libcupti on a machine whose driver is the simulator."""
        run = self.run_both(extra={"MEMTRACE_CUPTI_PATH": REAL_CUPTI})
        self.assert_one_message(run, r"CUPTI \(.*libcupti.so.13\) cannot start: ")
        self.assert_hooks_alone(run)

    def test_auto_is_quiet_when_asked(self):
        run = self.run_program(extra={"CUPTISIM_HELD_BY": "Kineto", "MEMTRACE_QUIET": "1"})
        self.assertEqual(run.cupti_lines(), [])
        self.assert_hooks_alone(run)

    def test_on_says_it_even_when_quiet(self):
        run = self.run_program(extra={"CUPTISIM_HELD_BY": "Kineto", "MEMTRACE_QUIET": "1",
                                      "MEMTRACE_CUPTI": "on"})
        self.assert_one_message(run, r"CUPTI is held by another tool \(Kineto\)")
        self.assert_hooks_alone(run)

    def test_off(self):
        ld = os.path.join(self.tmp, "ld")
        run = self.run_both(extra={"MEMTRACE_CUPTI": "off", "LD_DEBUG": "libs",
                                   "LD_DEBUG_OUTPUT": ld})
        self.assertEqual(run.cupti_lines(), [])
        self.assertNotIn("libcupti", loaded_libraries(self.tmp))
        self.assert_hooks_alone(run)

    def test_unknown_setting_is_auto(self):
        run = self.run_program(extra={"MEMTRACE_CUPTI": "sometimes"})
        self.assertIn("memtrace: MEMTRACE_CUPTI=sometimes is not auto, on or off; using auto",
                      run.stderr)
        self.assertTrue(reconcile.reconcile(run.trace)["cupti_on"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
