"""Real PyTorch under memtrace with each of torch's allocator settings,
checked against torch's own accounting (issue 30, deliver 3): expandable
segments, backend:cudaMallocAsync under `memtrace run --per-tensor`,
PYTORCH_NO_CUDA_MEMORY_CACHING=1, and torch.cuda.graph captures. The
pattern is test_torch.py's, whose helpers this file uses: each program of
programs/ runs on `scripts/sim-run --capacity 1G`, plain and under
memtrace, with the same setting; it prints torch's own figures as a JSON
line; the test asserts that the exit status and those figures are
unchanged under memtrace and that the report's figures equal them.
docs/torch-settings.md quotes the figures these tests print.

A program marks its lines with a `# LINE label` comment: the holders of
an OOM are named by the innermost Python frame in the program's own file,
and the test reads the marks to know which line is which."""
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
import unittest

import test_torch as base
from test_torch import MiB, PROGRAMS

SKIP = 77
EXPANDABLE = {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}
ASYNC = {"PYTORCH_CUDA_ALLOC_CONF": "backend:cudaMallocAsync"}
NO_CACHING = {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}
MEMTRACE = os.path.join(base.SOURCE, "scripts", "memtrace")
LARGE_CHUNK, SMALL_CHUNK = 20 * MiB, 2 * MiB  # torch's expandable segment chunks
# torch's warning when it cannot map an expandable segment's chunk
MAP_FAILED = re.compile(r"expandable_segments: memory mapping failed with OOM on device \d+ "
                        r"while trying to map (\d+) bytes \(free: (\d+), total: (\d+)\)")


def line_marks(name):
    """{line number: label} of the program's `# LINE label` comments."""
    with open(os.path.join(PROGRAMS, name + ".py")) as f:
        return {n: m.group(1) for n, text in enumerate(f, 1)
                if (m := re.search(r"# LINE (\w+)\s*$", text))}


def user_line(frames, name):
    """The line of the innermost Python frame in the program's own file."""
    path = os.path.join(PROGRAMS, name + ".py")
    for f in frames:
        if f["kind"] == "python" and f["file"] and os.path.samefile(f["file"], path):
            return f["line"]
    return None


class SettingsTest(base.TorchTest):
    """test_torch.TorchTest's helpers (setUp, report, cublas_workspaces,
    live_allocations), without its tests."""

    def run_setting(self, name, setting, traced, per_tensor=False):
        extra = dict(setting)
        trace = None
        cmd = [base.PYTHON, os.path.join(PROGRAMS, name + ".py")]
        if traced:
            trace = os.path.join(self.tmp, name + ".db")
            if per_tensor:
                # memtrace run sets the backend itself: the plain run had it set by us
                extra = {"MEMTRACE_LIB": base.LIB, "MEMTRACE_CUPTI": "off"}
                cmd = [MEMTRACE, "run", "--per-tensor", "-o", trace, "--"] + cmd
            else:
                extra.update({"LD_PRELOAD": base.LIB, "MEMTRACE_OUTPUT": trace,
                              "MEMTRACE_CUPTI": "off"})
        start = time.monotonic()
        proc = subprocess.run([base.SIM_RUN, "--capacity", "1G", "--"] + cmd,
                              env=base.run_env(extra), cwd=self.tmp, capture_output=True,
                              text=True, timeout=300)
        run = base.Run(proc, trace, time.monotonic() - start)
        print(f"{name} {'under memtrace' if traced else 'plain'} ({setting}): exit {run.rc}, "
              f"{run.seconds:.1f} s, torch's figures {proc.stdout.strip()}")
        self.assertIsNotNone(run.figures, f"{name} printed no figures; stderr:\n{proc.stderr}")
        return run

    def run_both(self, name, setting, per_tensor=False):
        plain = self.run_setting(name, setting, traced=False)
        traced = self.run_setting(name, setting, traced=True, per_tensor=per_tensor)
        self.assertEqual(plain.rc, 0, f"{name} failed plain:\n{plain.stderr}")
        self.assertEqual(traced.rc, plain.rc, f"exit status changed under memtrace:\n"
                         f"{traced.stderr}")
        self.assertEqual(traced.figures, plain.figures, "torch's figures changed under memtrace")
        return plain, traced

    def holders_by_line(self, oom, name):
        """An OOM's holders as {label of the program's line: bytes}; holders
        with no frame in the program under None."""
        marks = line_marks(name)
        out = {}
        for h in oom["holders"]:
            line = user_line(h["frames"], name)
            label = marks.get(line, f"line {line}") if line else None
            out[label] = out.get(label, 0) + h["bytes"]
        return out

    def query(self, trace, sql):
        conn = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
        self.addCleanup(conn.close)
        return conn.execute(sql).fetchall()

    # ---- expandable segments ----

    def test_expandable_training_loop(self):
        """expandable_segments:True, five AdamW steps: peak and live bytes
        are torch's reserved ones (plus the cuBLAS workspaces); the chunks
        mapped at the end, joined where contiguous, are memory_snapshot()'s
        segments, each at the start of an address range torch reserved."""
        _, run = self.run_both("expandable_train", EXPANDABLE)
        fig = run.figures
        self.assertEqual(fig["expandable"], [True] * fig["segments"])
        rep = self.report_json(run.trace)
        t = rep["totals"]
        ws = self.cublas_workspaces(run.trace)
        self.assertEqual(len(ws), 2, f"cuBLAS workspaces: {ws}")
        ws_bytes = sum(size for _, size, _ in ws)
        self.assertEqual(t["ooms"], 0)
        self.assertEqual(t["peak_bytes"], fig["max_memory_reserved"] + ws_bytes)
        self.assertEqual(t["live_bytes_at_end"], fig["memory_reserved"] + ws_bytes)
        kinds = rep["memory_kinds"]
        self.assertEqual(kinds["vmm_physical"]["live_bytes_at_end"], fig["segments_bytes"])
        # One handle per chunk: 20 MiB in the large pool, 2 MiB in the small.
        pools = dict(fig["segment_pools"])
        chunks = sum(size // (LARGE_CHUNK if pools[addr] == "large" else SMALL_CHUNK)
                     for addr, size in fig["segment_list"])
        self.assertEqual(kinds["vmm_physical"]["live_allocations_at_end"], chunks)
        self.assertEqual(t["live_allocations_at_end"], chunks + len(ws))
        # The mappings left at the end (map events of the trace with no
        # unmap after them), joined where one ends where the next starts.
        maps = self.query(run.trace, """
            SELECT m.address, m.bytes FROM events m
             WHERE m.kind = 6 AND NOT EXISTS (SELECT 1 FROM events u WHERE u.kind = 7
                     AND u.address = m.address AND u.seq > m.seq)
             ORDER BY m.address""")
        joined = []
        for addr, size in maps:
            if joined and joined[-1][0] + joined[-1][1] == addr:
                joined[-1][1] += size
            else:
                joined.append([addr, size])
        self.assertEqual(joined, fig["segment_list"])
        reserved = self.query(run.trace, """
            SELECT a.address FROM allocs a JOIN sites s ON s.id = a.site
             WHERE s.mem = 6 AND NOT EXISTS (SELECT 1 FROM frees f WHERE f.alloc = a.seq)""")
        self.assertEqual(sorted(a for a, in reserved), [a for a, _ in fig["segment_list"]])

    def test_expandable_oom(self):
        """expandable_segments:True and an OOM: each failure is the
        cuMemCreate of the chunk torch's warning names, with the device's
        free memory it names; the holders, by the program's lines, are
        what memory_reserved() grew by on each line, and on the failing
        line the chunks torch had made for it when the device ran out."""
        _, run = self.run_both("expandable_oom", EXPANDABLE)
        fig = run.figures
        self.assertEqual(fig["raised"], "OutOfMemoryError")
        self.assertEqual((fig["num_ooms"], fig["num_alloc_retries"]), (1, 1))
        warnings = [tuple(map(int, m.groups())) for m in MAP_FAILED.finditer(run.stderr)]
        # torch tried twice (before and after freeing its cache), each time
        # making chunks until one failed
        self.assertEqual(len(warnings), fig["num_ooms"] + fig["num_alloc_retries"], run.stderr)
        rep = self.report_json(run.trace)
        ooms = rep["ooms"]
        self.assertEqual(len(ooms), len(warnings))
        # nothing of torch's cache was free to give back: the same both times
        self.assertEqual(fig["reserved_after_oom"], fig["reserved_before_oom"])
        for oom, (chunk, free, total) in zip(ooms, warnings):
            self.assertEqual((oom["api"], oom["requested_bytes"]), ("cuMemCreate", chunk))
            self.assertEqual((oom["device_free"], oom["device_total"]), (free, total))
            self.assertEqual(oom["live_bytes"], total - free)
            making = total - free - fig["reserved_before_oom"]
            self.assertEqual(making % chunk, 0)
            self.assertGreater(making, 0)
            self.assertEqual(self.holders_by_line(oom, "expandable_oom"),
                             dict(fig["grew"], big=making))
        # torch's own account at the raise: the chunks it made were released
        obs, = fig["observer"]
        self.assertEqual(obs["device_free"], obs["device_total"] - fig["reserved_before_oom"])
        t = rep["totals"]
        self.assertEqual(t["live_bytes_at_end"], fig["memory_reserved"])
        self.assertEqual(rep["memory_kinds"]["vmm_physical"]["live_bytes_at_end"],
                         fig["segments_bytes"])

    # ---- backend:cudaMallocAsync, memtrace run --per-tensor ----

    def test_cuda_malloc_async_per_tensor(self):
        """`memtrace run --per-tensor` (backend:cudaMallocAsync), three
        AdamW steps: every tensor the program holds is a live allocation
        at its address of its size; live and peak bytes are torch's
        memory_allocated() and max_memory_allocated() (plus the cuBLAS
        workspaces); the device's used memory is what torch's pool
        reserves plus those workspaces."""
        plain, run = self.run_both("async_pertensor", ASYNC, per_tensor=True)
        self.assertIn("PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync", run.stderr)
        fig = run.figures
        rep = self.report_json(run.trace)
        t = rep["totals"]
        ws = self.cublas_workspaces(run.trace)
        self.assertEqual(len(ws), 2, f"cuBLAS workspaces: {ws}")
        ws_bytes = sum(size for _, size, _ in ws)
        self.assertEqual(t["live_bytes_at_end"], fig["memory_allocated"] + ws_bytes)
        # torch counts each allocation rounded up to 512 bytes (a 4-byte
        # loss is 512 in memory_allocated()), memtrace the bytes CUDA was
        # asked for: the trace's allocations and frees, in its order, with
        # torch's rounding, peak at max_memory_allocated(); as they are,
        # at the report's peak.
        events = self.query(run.trace, """
            SELECT e.kind, e.address, e.bytes FROM events e
             WHERE e.kind IN (1, 2) AND (e.mem IS NULL OR e.mem <> 6) ORDER BY e.seq""")
        exact = rounded = peak_exact = peak_rounded = 0
        live = {}
        for kind, address, size in events:
            if kind == 1:
                live[address] = size
                exact += size
                rounded += round_up(size, 512)
            elif address in live:
                size = live.pop(address)
                exact -= size
                rounded -= round_up(size, 512)
            peak_exact = max(peak_exact, exact)
            peak_rounded = max(peak_rounded, rounded)
        self.assertEqual(peak_rounded, fig["max_memory_allocated"] + ws_bytes)
        self.assertEqual(t["peak_bytes"], peak_exact)
        ws_seqs = {seq for seq, _, _ in ws}
        live = {(addr, size) for seq, addr, size in self.live_allocations(run.trace)
                if seq not in ws_seqs}
        apis = self.query(run.trace, """
            SELECT DISTINCT p.name FROM allocs a JOIN sites s ON s.id = a.site
              JOIN apis p ON p.id = s.api WHERE s.mem <> 6""")
        self.assertIn(("cudaMallocAsync",), apis)
        tensors = set(map(tuple, fig["tensors"]))
        self.assertTrue(tensors <= live, f"tensors not live in the trace: {tensors - live}")
        self.assertEqual(sum(size for _, size in live), fig["memory_allocated"])
        self.assertEqual(fig["device_total"] - fig["device_free"],
                         fig["memory_reserved"] + ws_bytes)
        self.assertEqual(rep["devices"][0]["total_bytes"], fig["device_total"])

    # ---- PYTORCH_NO_CUDA_MEMORY_CACHING=1 ----

    def test_no_caching_oom(self):
        """PYTORCH_NO_CUDA_MEMORY_CACHING=1 and an OOM: the failure is one
        cudaMalloc of the size the program asked for; its holders, by the
        program's lines, are the sizes of the tensors made on each line
        (untyped_storage().nbytes()), and nothing else."""
        _, run = self.run_both("nocache_oom", NO_CACHING)
        fig = run.figures
        self.assertEqual(fig["raised"], "AcceleratorError")
        self.assertEqual((fig["memory_reserved"], fig["memory_allocated"]), (0, 0))
        rep = self.report_json(run.trace)
        oom, = rep["ooms"]
        self.assertEqual((oom["api"], oom["requested_bytes"]), ("cudaMalloc", fig["request_bytes"]))
        held = {label: sum(sizes) for label, sizes in fig["held"].items()}
        self.assertEqual(self.holders_by_line(oom, "nocache_oom"), held)
        self.assertEqual(oom["live_bytes"], sum(held.values()))
        self.assertEqual(oom["live_allocations"], sum(len(s) for s in fig["held"].values()))
        # the simulated device charges each allocation rounded up to 512
        # bytes (tests/sim/README.md)
        self.assertEqual(oom["device_total"] - oom["device_free"],
                         sum(round_up(n, 512) for sizes in fig["held"].values() for n in sizes))
        t = rep["totals"]
        # after the error, with all that still held, one more tensor
        self.assertEqual(t["peak_bytes"], sum(held.values()) + fig["after_bytes"])
        self.assertEqual(t["live_bytes_at_end"], sum(held.values()))
        text = self.report(run.trace)
        self.assertTrue(text.split("\n\n")[1].startswith("OUT OF MEMORY: "), text)

    # ---- torch.cuda.graph ----

    def test_graphs_kept(self):
        """Three torch.cuda.graph captures kept alive, a fourth dropped:
        the segments each capture cudaMallocs for its private pool belong
        to its graph, and each graph left alive is an orphaned exec
        pinning what memory_reserved() grew by during its capture (the
        segments memory_snapshot() lists in its pool); the dropped one is
        not an orphan and its pool's segments were freed."""
        _, run = self.run_both("graphs_kept", {})
        fig = run.figures
        self.assertEqual(fig["private_pool_bytes"], fig["grew"])
        self.assertEqual(fig["dropped_freed"], fig["dropped_growth"])
        rep = self.report_json(run.trace)
        g = rep["graphs"]
        # torch destroys each captured graph once it has its exec
        self.assertEqual((g["created"], g["destroyed"]), (4, 4))
        self.assertEqual((g["execs_created"], g["execs_destroyed"]), (4, 1))
        self.assertEqual(g["launches"], 4)
        orphans = sorted(g["orphaned"], key=lambda o: o["time_ns"])
        self.assertEqual([o["kind"] for o in orphans], ["exec"] * 3)
        self.assertEqual([o["pinned_bytes"] for o in orphans], fig["grew"])
        self.assertEqual([o["segment_bytes"] for o in orphans], fig["grew"])
        self.assertEqual(g["orphan_execs_pinned_bytes"], sum(fig["grew"]))
        self.assertEqual(g["capture_segment_bytes"],
                         sum(fig["grew"]) + fig["dropped_growth"])
        t = rep["totals"]
        self.assertEqual(t["live_bytes_at_end"], fig["memory_reserved"])
        self.assertEqual(t["peak_bytes"], fig["max_memory_reserved"])
        text = self.report(run.trace)
        self.assertIn("Never destroyed by the end of the trace (3 graphs and execs)", text)
        self.assertIn(f"Together they pin {sum(fig['grew']) / MiB:.1f} MiB", text)
        self.assertIn(f"Capture segments: 8 device allocations "
                      f"({(sum(fig['grew']) + fig['dropped_growth']) / MiB:.1f} MiB)", text)


def round_up(n, to):
    return -(-n // to) * to


def main():
    base.PYTHON = base.framework_python()
    if base.PYTHON is None:
        return SKIP
    result = unittest.main(verbosity=2, exit=False).result
    if not result.wasSuccessful():
        return 1
    if result.skipped and len(result.skipped) == result.testsRun:
        return SKIP
    return 0


# Only the settings' tests here: test_torch.py's own run in its meson test
# (a test added there later must not run twice, nor with run_both's other
# signature).
for _name in dir(base.TorchTest):
    if _name.startswith("test_") and _name not in vars(SettingsTest):
        setattr(SettingsTest, _name, None)

if __name__ == "__main__":
    sys.exit(main())
