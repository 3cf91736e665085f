"""Scenario tests: real CUDA programs (tests/programs) on the simulated
device, traced and reported. Every expected number below is derived from
the program's own logic (see the comment at the top of each program), not
from the tool's output. Each program's stdout and exit status must be the
same with and without the preload."""
import json
import os
import subprocess

import mtest
from mtest import by_function, innermost

MiB = 1 << 20
GiB = 1 << 30


class DemoOom(mtest.TraceTest):
    """tests/programs/demo-oom.c on a 1 GiB device."""
    WEIGHT = 64 * MiB
    ACT = 96 * MiB + 256
    CHARGED_ACT = 96 * MiB + 512  # rounded up to the simulator's 512 bytes

    def test_report(self):
        run = self.run_both("demo-oom")
        self.assertEqual(run.rc, 1)
        rep = self.report(run.trace)
        W, A = self.WEIGHT, self.ACT
        # Steps 1-5 fit (4 weights + (s + 2) activations); step 6's third
        # forward allocation fails with 4 weights + 5 kept + 2 new live.
        forward_ok = 5 * 3 + 2
        live = 4 * W + 7 * A
        t = rep["totals"]
        self.assertEqual(t["allocations"], 4 + forward_ok)
        self.assertEqual(t["frees"], 5 * 2)
        # + 1: the record of the device's first use
        self.assertEqual(t["events"], 4 + forward_ok + 1 + 5 * 2 + 1)
        self.assertEqual(t["bytes_allocated"], 4 * W + forward_ok * A)
        self.assertEqual(t["peak_bytes"], live)
        self.assertEqual(t["live_bytes_at_end"], live)

        self.assertEqual(len(rep["ooms"]), 1)
        oom = rep["ooms"][0]
        self.assertEqual(oom["api"], "cudaMalloc")
        self.assertEqual(oom["requested_bytes"], A)
        self.assertEqual(innermost(oom), "forward")
        self.assertEqual(oom["live_bytes"], live)
        self.assertEqual(oom["device_total"], 1 * GiB)
        self.assertEqual(oom["device_free"], 1 * GiB - 4 * W - 7 * self.CHARGED_ACT)
        holders = by_function(oom["holders"])
        self.assertEqual(set(holders), {"forward", "load_weights"})
        self.assertEqual((holders["forward"]["bytes"], holders["forward"]["count"]), (7 * A, 7))
        self.assertEqual((holders["load_weights"]["bytes"], holders["load_weights"]["count"]),
                         (4 * W, 4))
        self.assertEqual(oom["holders"][0]["bytes"], 7 * A, "largest holder first")

        sites = by_function(rep["sites"])
        fwd, lw = sites["forward"], sites["load_weights"]
        # the peak is first reached by step 5's third activation: 4 kept + 3
        self.assertEqual(fwd["peak_bytes"], 7 * A)
        self.assertEqual((fwd["total_bytes"], fwd["count"]), (forward_ok * A, forward_ok))
        self.assertEqual(fwd["live_bytes_at_end"], 7 * A)
        self.assertEqual((lw["peak_bytes"], lw["total_bytes"], lw["count"]), (4 * W, 4 * W, 4))
        self.assertEqual(innermost(rep["sites"][0]), "forward", "ranked by bytes at peak")
        self.assertTrue(fwd["frames"][0]["file"].endswith("demo-oom.c"))
        self.assertEqual(fwd["frames"][1]["function"], "main")

        leaks = by_function(rep["leaks"])
        self.assertEqual((leaks["forward"]["bytes"], leaks["forward"]["count"]), (7 * A, 7))
        self.assertEqual((leaks["load_weights"]["bytes"], leaks["load_weights"]["count"]),
                         (4 * W, 4))

    def test_exports_at_the_oom(self):
        """The exports for other tools at the OOM: PyTorch's snapshot holds
        the 11 allocations live then, each a segment of one block, and the
        way there; pprof (read by go tool pprof) and speedscope weigh the
        two holders."""
        import pickle
        import shutil
        run = self.run_program("demo-oom")
        W, A = self.WEIGHT, self.ACT
        forward_ok = 5 * 3 + 2
        snap = pickle.loads(subprocess.run(
            [mtest.REPORTER, run.trace, "--format", "torch-snapshot"], capture_output=True,
            check=True).stdout)
        sizes = sorted(s["total_size"] for s in snap["segments"])
        self.assertEqual(sizes, [W] * 4 + [A] * 7)
        for seg in snap["segments"]:
            self.assertEqual([b["size"] for b in seg["blocks"]], [seg["total_size"]])
            self.assertEqual(seg["blocks"][0]["state"], "active_allocated")
        trace, = snap["device_traces"]
        # every allocation up to the OOM (segment_alloc + alloc), every free
        # (free_requested, free_completed, segment_free), the OOM last
        self.assertEqual(len(trace), 2 * (4 + forward_ok) + 3 * 5 * 2 + 1)
        oom = trace[-1]
        self.assertEqual((oom["action"], oom["size"]), ("oom", A))
        self.assertEqual(oom["device_free"], 1 * GiB - 4 * W - 7 * self.CHARGED_ACT)
        self.assertEqual(oom["frames"][0]["name"], "forward")
        weights = [s for s in snap["segments"] if s["total_size"] == W]
        self.assertEqual({s["frames"][0]["name"] for s in weights}, {"load_weights"})

        doc = json.loads(self.report_text(run.trace, "--format", "speedscope"))
        active = doc["profiles"][doc["activeProfileIndex"]]
        self.assertIn("OOM", active["name"])
        self.assertEqual(sorted(active["weights"]), [4 * W, 7 * A])
        leaf = {doc["shared"]["frames"][s[-1]]["name"]: w
                for s, w in zip(active["samples"], active["weights"])}
        self.assertEqual(leaf, {"forward": 7 * A, "load_weights": 4 * W})

        if not shutil.which("go"):
            self.skipTest("no go tool pprof (Debian: golang-go)")
        path = os.path.join(self.tmp, "demo.pb.gz")
        subprocess.run([mtest.REPORTER, run.trace, "--format", "pprof", "-o", path], check=True)
        top = subprocess.run(["go", "tool", "pprof", "-top", "-sample_index=space",
                              "-unit=B", path], capture_output=True, text=True, check=True).stdout
        flat = {}
        for line in top.splitlines():
            parts = line.split()
            if len(parts) == 6 and parts[0].endswith("B") and parts[5] in ("forward",
                                                                         "load_weights"):
                flat[parts[5]] = int(parts[0][:-1])
        self.assertEqual(flat, {"forward": 7 * A, "load_weights": 4 * W})
        counts = subprocess.run(["go", "tool", "pprof", "-top", "-sample_index=allocations",
                                 path], capture_output=True, text=True, check=True).stdout
        self.assertRegex(counts, r"\n\s+7\s.*forward\n")
        self.assertRegex(counts, r"\n\s+4\s.*load_weights\n")

    def test_text_report_names_the_oom(self):
        run = self.run_program("demo-oom")
        text = self.report_text(run.trace)
        self.assertIn("OUT OF MEMORY", text)
        self.assertIn("forward", text)
        self.assertIn("96.0 MiB", text)

    def test_group_by_option(self):
        run = self.run_program("demo-oom")
        by_stack = self.report(run.trace, "--group-by", "stack")
        self.assertEqual(by_stack["group_by"], "stack")
        self.assertEqual(sorted(s["count"] for s in by_stack["sites"]), [4, 17])
        proc = subprocess.run([mtest.REPORTER, run.trace, "--group-by", "bogus"],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--group-by takes site, python, op, native or stack", proc.stderr)

    def test_oom_row_in_trace(self):
        """The trace alone (plain SQL) has the failure and the device state."""
        run = self.run_program("demo-oom")
        with self.db(run.trace) as db:
            rows = db.execute("SELECT e.bytes, o.device_free, o.device_total FROM events e "
                              "JOIN ooms o ON o.seq = e.seq WHERE e.kind = 3").fetchall()
        self.assertEqual(rows, [(self.ACT, 1 * GiB - 4 * self.WEIGHT - 7 * self.CHARGED_ACT,
                                 1 * GiB)])


class Leaks(mtest.TraceTest):
    """tests/programs/leaks.c"""

    def test_report(self):
        run = self.run_both("leaks")
        self.assertEqual(run.rc, 0)
        rep = self.report(run.trace)
        t = rep["totals"]
        self.assertEqual((t["allocations"], t["frees"]), (3 + 5 + 3, 5 + 3))
        self.assertEqual(t["bytes_allocated"], 3 * 1000000 + 5 * MiB + 3 * 3000)
        self.assertEqual(t["peak_bytes"], 3 * 1000000 + 5 * MiB)
        self.assertEqual(t["live_bytes_at_end"], 3 * 1000000)
        self.assertEqual(t["events"], 11 + 8 + 2 + 1 + 1)  # + the device record
        h = rep["host"]
        self.assertEqual((h["allocations"], h["frees"]), (2, 1))
        self.assertEqual(h["bytes_allocated"], 2 * 65536)
        self.assertEqual(h["live_bytes_at_end"], 65536)

        leaks = by_function(rep["leaks"])
        self.assertEqual(set(leaks), {"leaky_cache", "stage_host_buffer"})
        self.assertEqual((leaks["leaky_cache"]["bytes"], leaks["leaky_cache"]["count"],
                          leaks["leaky_cache"]["mem"]), (3000000, 3, "device"))
        self.assertEqual((leaks["stage_host_buffer"]["bytes"],
                          leaks["stage_host_buffer"]["count"],
                          leaks["stage_host_buffer"]["mem"]), (65536, 1, "host_pinned"))

        sites = by_function(rep["sites"])
        self.assertEqual(set(sites), {"leaky_cache", "build_index", "run_scratch"})
        expect = {  # peak_bytes, total_bytes, count, live_bytes_at_end
            "leaky_cache": (3000000, 3000000, 3, 3000000),
            "build_index": (5 * MiB, 5 * MiB, 5, 0),
            "run_scratch": (0, 9000, 3, 0),
        }
        for name, (peak, total, count, live) in expect.items():
            s = sites[name]
            self.assertEqual((s["peak_bytes"], s["total_bytes"], s["count"],
                              s["live_bytes_at_end"]), (peak, total, count, live), name)
        self.assertEqual([innermost(s) for s in rep["sites"]][:2],
                         ["build_index", "leaky_cache"])
        self.assertEqual(rep["ooms"], [])


class Threads(mtest.TraceTest):
    """tests/programs/threads.c: 8 threads x 20000 pairs."""

    def test_exact_counts(self):
        run = self.run_both("threads")
        self.assertEqual(run.rc, 0)
        rep = self.report(run.trace)
        pairs = 1 + 8 * 20000
        per_thread = 2500 * sum(512 * k for k in range(1, 9))
        t = rep["totals"]
        self.assertEqual((t["allocations"], t["frees"], t["events"]),
                         (pairs, pairs, 2 * pairs + 1))  # + the device record
        self.assertEqual(t["bytes_allocated"], 4096 + 8 * per_thread)
        self.assertEqual(t["live_bytes_at_end"], 0)
        self.assertEqual(t["unmatched_frees"], 0)
        self.assertGreaterEqual(t["peak_bytes"], 4096)
        self.assertLessEqual(t["peak_bytes"], 8 * 4096)
        self.assertEqual(rep["leaks"], [])
        sites = by_function(rep["sites"])
        self.assertEqual(sites["churn_once"]["count"], 8 * 20000)
        self.assertEqual(sites["warmup"]["count"], 1)
        with self.db(run.trace) as db:
            threads, = db.execute("SELECT count(DISTINCT thread) FROM events").fetchone()
            seqs = db.execute("SELECT min(seq), max(seq), count(*) FROM events").fetchone()
            device = db.execute("SELECT id, total_bytes FROM devices").fetchall()
            meta = dict(db.execute("SELECT key, value FROM meta"))
        self.assertEqual(threads, 9)
        self.assertEqual(seqs, (0, 2 * pairs, 2 * pairs + 1))
        self.assertEqual(int(meta["events_written"]), 2 * pairs + 1)
        self.assertEqual(device, [(0, GiB)])


class Kinds(mtest.TraceTest):
    """tests/programs/kinds.c: managed, pinned, pitched, async on two streams."""

    def test_report(self):
        run = self.run_both("kinds")
        self.assertEqual(run.rc, 0)
        rep = self.report(run.trace)
        t = rep["totals"]
        pitched = 1024 * 16  # width 1000 rounded to a 1024-byte pitch, 16 rows
        self.assertEqual((t["allocations"], t["frees"]), (4, 2))
        self.assertEqual(t["bytes_allocated"], MiB + pitched + 4096 + 8192)
        self.assertEqual(t["peak_bytes"], MiB + pitched)
        self.assertEqual(t["live_bytes_at_end"], MiB + 8192)
        h = rep["host"]
        self.assertEqual((h["allocations"], h["frees"], h["bytes_allocated"]),
                         (2, 2, 8192 + 12288))
        leaks = by_function(rep["leaks"])
        self.assertEqual((leaks["alloc_managed"]["bytes"], leaks["alloc_managed"]["mem"]),
                         (MiB, "managed"))
        self.assertEqual((leaks["alloc_async"]["bytes"], leaks["alloc_async"]["mem"]),
                         (8192, "device"))
        with self.db(run.trace) as db:
            streams = db.execute(
                "SELECT e.bytes, e.stream FROM events e JOIN apis a ON a.id = e.api "
                "WHERE a.name = 'cudaMallocAsync' ORDER BY e.seq").fetchall()
            pitch, = db.execute(
                "SELECT e.bytes FROM events e JOIN apis a ON a.id = e.api "
                "WHERE a.name = 'cudaMallocPitch'").fetchone()
            freed_async, = db.execute(
                "SELECT e.stream FROM events e JOIN apis a ON a.id = e.api "
                "WHERE a.name = 'cudaFreeAsync'").fetchone()
        self.assertEqual([b for b, _ in streams], [4096, 8192])
        self.assertNotEqual(streams[0][1], 0)
        self.assertNotEqual(streams[1][1], 0)
        self.assertNotEqual(streams[0][1], streams[1][1])
        self.assertEqual(freed_async, streams[0][1])
        self.assertEqual(pitch, pitched)


class OomRetry(mtest.TraceTest):
    """tests/programs/oom-retry.c: fail, empty the cache, retry."""

    def test_report(self):
        run = self.run_both("oom-retry")
        self.assertEqual(run.rc, 0)
        rep = self.report(run.trace)
        cache, batch = 6 * 128 * MiB, 384 * MiB
        t = rep["totals"]
        self.assertEqual((t["allocations"], t["frees"], t["live_bytes_at_end"]), (7, 7, 0))
        self.assertEqual(t["peak_bytes"], cache)
        self.assertEqual(t["bytes_allocated"], cache + batch)
        self.assertEqual(len(rep["ooms"]), 1)
        oom = rep["ooms"][0]
        self.assertEqual((oom["requested_bytes"], oom["live_bytes"]), (batch, cache))
        self.assertEqual((oom["device_free"], oom["device_total"]), (GiB - cache, GiB))
        self.assertEqual(innermost(oom), "allocate_batch")
        holders = by_function(oom["holders"])
        self.assertEqual((holders["fill_cache"]["bytes"], holders["fill_cache"]["count"]),
                         (cache, 6))
        self.assertEqual(rep["leaks"], [])

    def test_short_by_a_few_kib(self):
        """A device 3.75 KiB short of the batch: request and free both
        print as 384.0 MiB, so the stderr summary and the report's
        headline give them exactly, and the shortfall."""
        cache, batch, short = 6 * 128 * MiB, 384 * MiB, 3840
        device = cache + batch - short
        run = self.run_program("oom-retry", device_memory=str(device),
                               env={"MEMTRACE_QUIET": "0"})
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertIn("memtrace: out of memory: cudaMalloc of 384.0 MiB (402,653,184 B) "
                      "failed in allocate_batch (oom-retry); device 0 had 384.0 MiB "
                      "(402,649,344 B) free of 1.1 GiB, short by 3.75 KiB\n", run.stderr)
        oom = self.report(run.trace)["ooms"][0]
        self.assertEqual((oom["device_free"], oom["shortfall_bytes"]), (batch - short, short))
        text = self.report_text(run.trace, "--width", "10000")
        self.assertIn("OUT OF MEMORY: cudaMalloc of 384.0 MiB (402,653,184 B) failed at ", text)
        self.assertIn("; device had 384.0 MiB (402,649,344 B) free of 1.1 GiB, short by "
                      "3.75 KiB;", text)


class TypedTemplates(mtest.TraceTest):
    """tests/programs/typed-templates.cc at -O0 and -O2: the typed templates
    of cuda_runtime.h (cudaMalloc<T>...) are CUDA's frames, whether they are
    frames of their own (-O0) or inlined (-O2); every site is the caller's
    own function and line, demangled."""

    @staticmethod
    def site_lines():
        """The lines marked "site: NAME" in the program."""
        import os
        lines = {}
        path = os.path.join(mtest.SOURCE, "tests", "programs", "typed-templates.cc")
        with open(path) as f:
            for n, line in enumerate(f, 1):
                if "// site: " in line:
                    lines[line.split("// site: ")[1].strip()] = n
        return lines

    def check(self, name):
        run = self.run_both(name)
        self.assertEqual(run.rc, 0, run.stderr)
        rep = self.report(run.trace)
        t = rep["totals"]
        self.assertEqual((t["allocations"], t["bytes_allocated"]), (4, 25 * MiB))
        self.assertEqual((t["frees"], t["live_bytes_at_end"]), (1, 24 * MiB))
        self.assertEqual(rep["host"]["bytes_allocated"], 1 * MiB)
        lines = self.site_lines()
        want = {
            "Model<float>::weights(unsigned long)": (lines["weights"], 16 * MiB, 1),
            "Model<float>::activations(unsigned long)": (lines["activations"], 8 * MiB, 2),
            "workspace(CUstream_st*, unsigned long)": (lines["workspace"], 1 * MiB, 1),
        }
        got = {}
        for site in rep["sites"]:
            fn = site["site"]["function"].split(" [clone ")[0]  # gcc's clones at -O2
            self.assertTrue(site["site"]["file"].endswith("typed-templates.cc"), site["site"])
            got[fn] = (site["site"]["line"], site["total_bytes"], site["count"])
        self.assertEqual(got, want)
        # the raw symbol stays available next to the demangled name
        frames = [f for s in rep["sites"] for f in s["frames"]]
        weights = [f for f in frames if f["function"] == "Model<float>::weights(unsigned long)"]
        self.assertEqual({f["symbol"] for f in weights}, {"_ZN5ModelIfE7weightsEm"})
        self.assertFalse([f for f in frames if (f["function"] or "").startswith("_Z")])
        # demangled in every renderer that names frames (perfetto names
        # only an OOM's site); the symbol only where JSON keeps it
        for fmt, name in [("text", "Model<float>::weights(unsigned long)"),
                          ("html", "Model&lt;float&gt;::weights(unsigned long)"),
                          ("folded", "Model<float>::weights(unsigned long)")]:
            out = self.report_text(run.trace, "--format", fmt, "--weight", "leaked") \
                if fmt == "folded" else self.report_text(run.trace, "--format", fmt)
            self.assertIn(name, out, fmt)
            self.assertNotIn("_ZN5Model", out, fmt)
        return rep

    def test_O0_template_frames_are_cuda(self):
        rep = self.check("typed-templates-O0")
        # the template is a frame of its own here, in the program, in cuda_runtime.h
        inner = rep["sites"][0]["frames"][0]
        self.assertIn("cudaMalloc<float>(float**", inner["function"])
        self.assertTrue(inner["file"].endswith("cuda_runtime.h"), inner)

    def test_O2_inlined_templates_are_cuda(self):
        rep = self.check("typed-templates-O2")
        for site in rep["sites"]:
            self.assertFalse(site["frames"][0]["file"].endswith("cuda_runtime.h"))


class CxxLocal(mtest.TraceTest):
    """tests/programs/cxx-local.c: C++ loaded with dlopen(RTLD_LOCAL), as
    Python loads torch, so libstdc++ is not in the global scope. The
    summary on stderr names its C++ functions demangled, as the report
    does."""

    def test_stderr_demangled(self):
        mtest.needs_program("cxx-local")
        run = self.run_program("cxx-local", env={"MEMTRACE_QUIET": "0"})
        self.assertEqual(run.rc, 0, run.stderr)
        grow = "ns::Pool<float>::grow(unsigned long) (libcxx-local.so)"
        self.assertIn(f"memtrace: out of memory: cudaMalloc of 2.0 GiB failed in {grow}",
                      run.stderr)
        self.assertIn(f"64.0 MiB in 1: {grow}", run.stderr)
        self.assertNotIn("_ZN", run.stderr)
        text = self.report_text(run.trace)
        self.assertIn("ns::Pool<float>::grow(unsigned long)", text)


class NvccPrograms(mtest.TraceTest):
    """CUDA C++ built by nvcc -cudart shared, with kernels, on the
    simulated device: their output unchanged under memtrace, their
    numbers exact (see each program's header)."""

    def test_stream_ordered(self):
        mtest.needs_program("stream-ordered")
        run = self.run_both("stream-ordered")
        self.assertEqual(run.rc, 0, run.stderr)
        rep = self.report(run.trace)
        t = rep["totals"]
        self.assertEqual((t["allocations"], t["frees"], t["bytes_allocated"]),
                         (24, 24, 24 * MiB))
        self.assertEqual((t["peak_bytes"], t["live_bytes_at_end"], t["ooms"]), (3 * MiB, 0, 0))
        self.assertEqual((rep["host"]["allocations"], rep["host"]["frees"],
                          rep["host"]["bytes_allocated"]), (3, 3, 3 * MiB))
        # a, b and c: three sites, at the program's own lines in iterate
        lines = mtest.source_lines("stream-ordered.cu", "must(cudaMallocAsync(&")
        self.assertEqual(len(lines), 3)
        got = sorted((s["site"]["function"], s["site"]["line"], s["count"], s["total_bytes"])
                     for s in rep["sites"])
        self.assertEqual(got, [("iterate(host_vectors const&)", n, 8, 8 * MiB) for n in lines])
        self.assertEqual([m["label"] for m in rep["marks"] if m["by"] == "user"],
                         ["basic", "post-sync"])
        self.assertEqual(rep["graphs"]["created"], 0)

    def test_static_alloc_shared_runtime(self):
        """tests/gpu/static-alloc.cu, the real-GPU check's program, built
        with the shared runtime: 64 MiB kept, 1 MiB freed, 3,000,000
        kept, 8 MiB async freed, then one OOM of twice the device."""
        mtest.needs_program("static-alloc-shared")
        run = self.run_both("static-alloc-shared")
        self.assertEqual(run.rc, 0, run.stderr)
        rep = self.report(run.trace)
        t = rep["totals"]
        kept = 64 * MiB + 3000000
        self.assertEqual((t["allocations"], t["frees"]), (4, 2))
        self.assertEqual(t["bytes_allocated"], kept + 1 * MiB + 8 * MiB)
        self.assertEqual((t["live_bytes_at_end"], t["ooms"]), (kept, 1))
        oom, = rep["ooms"]
        self.assertEqual((oom["api"], oom["requested_bytes"]), ("cudaMalloc", 2 * GiB))
        self.assertEqual(innermost(oom), "main")
        self.assertEqual(sorted(l["bytes"] for l in rep["leaks"]), [3000000, 64 * MiB])


if __name__ == "__main__":
    mtest.main()
