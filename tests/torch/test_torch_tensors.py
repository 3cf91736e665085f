"""Tensors inside PyTorch's cache (issue 31): torch's allocator actions
recorded by memtrace from outside, with the caching allocator on and the
program unchanged, checked against torch's own accounting in the same
run (memory_snapshot(), memory_stats(), memory_reserved()). Uses
test_torch.py's helpers; skips (77) as it does."""
import json
import os
import re
import sqlite3
import subprocess
import sys
import unittest

import test_torch as base

MiB = base.MiB
TENSOR_ALLOC, FREE_REQUESTED, TENSOR_FREE = 26, 27, 28
SEGMENT_ALLOC, SEGMENT_FREE, SEGMENT_MAP, SEGMENT_UNMAP, TENSOR_OOM = 29, 30, 31, 32, 33


class TensorTest(unittest.TestCase):
    setUp = base.TorchTest.setUp
    tearDown = base.TorchTest.tearDown
    run_program = base.TorchTest.run_program
    run_both = base.TorchTest.run_both
    report = base.TorchTest.report
    report_json = base.TorchTest.report_json

    def tensor_events(self, trace):
        """[(seq, kind, address, bytes, innermost Python frame as
        (file's base name, line) or None)] of the trace's tensor events."""
        conn = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
        self.addCleanup(conn.close)
        rows = conn.execute("""
            SELECT e.seq, e.kind, e.address, e.bytes,
                   (SELECT fr.file || ':' || fr.line FROM stack_frames sf
                      JOIN frames fr ON fr.id = sf.frame
                     WHERE sf.stack = e.stack AND fr.kind = 1
                     ORDER BY sf.depth LIMIT 1)
              FROM other_events e WHERE e.kind BETWEEN 26 AND 33 ORDER BY e.seq""").fetchall()
        out = []
        for seq, kind, addr, size, where in rows:
            if where:
                path, line = where.rsplit(":", 1)
                where = (os.path.basename(path), int(line))
            out.append((seq, kind, addr, size, where))
        return out

    @staticmethod
    def by_line(framework):
        """The framework object's holders by the innermost Python line:
        {(file's base name, line): [bytes, count]}."""
        out = {}
        for h in framework["holders"]:
            py = [f for f in h["frames"] if f["kind"] == "python"]
            key = (os.path.basename(py[0]["file"]), py[0]["line"]) if py else None
            sums = out.setdefault(key, [0, 0])
            sums[0] += h["bytes"]
            sums[1] += h["count"]
        return out

    @staticmethod
    def expected_by_line(program, by_tag):
        return {(program, base.tag_line(program, tag)): sums for tag, sums in by_tag.items()}

    def test_report_framework(self):
        """The report's framework object at the end and at the peak: torch's
        memory_allocated(), memory_reserved(), max_memory_reserved(), its
        live tensors, the largest free block of memory_snapshot(), and the
        holders by Python line equal to the blocks the program's tensors
        of each line hold."""
        run = self.run_both("tensors")
        fig = run.figures
        rep = self.report_json(run.trace)
        end = rep["framework"]["at_end"]
        self.assertIsNotNone(end, "no framework object")
        self.assertEqual(end["allocator"], "pytorch_caching")
        self.assertEqual(end["allocated_bytes"], fig["memory_allocated"])
        self.assertEqual(end["reserved_bytes"], fig["memory_reserved"])
        self.assertEqual(end["free_in_cache_bytes"],
                         fig["memory_reserved"] - fig["memory_allocated"])
        self.assertEqual(end["tensors"], fig["allocations"])
        self.assertEqual(end["largest_free_block"], fig["largest_free"])
        self.assertEqual(self.by_line(end), self.expected_by_line("tensors.py", fig["by_tag"]))
        # torch did not split the first segment: that tensor's block is
        # bigger than the 11 MiB it asked for
        self.assertGreater(fig["by_tag"]["whole"][0], 11 * MiB)
        self.assertEqual(rep["framework"]["at_peak"]["reserved_bytes"],
                         fig["max_memory_reserved"])

    def test_tensor_events_are_torchs(self):
        """Every live tensor of memory_snapshot() is a tensor allocation of
        the trace at its address, of its requested size, made on the
        program's line; the segments' bytes are memory_reserved(), their
        running peak max_memory_reserved()."""
        run = self.run_both("tensors")
        fig = run.figures
        events = self.tensor_events(run.trace)
        live, reserved, peak = {}, 0, 0
        for seq, kind, addr, size, where in events:
            if kind == TENSOR_ALLOC:
                live[addr] = (size, where)
            elif kind == FREE_REQUESTED:
                del live[addr]
            elif kind in (SEGMENT_ALLOC, SEGMENT_MAP):
                reserved += size
            elif kind in (SEGMENT_FREE, SEGMENT_UNMAP):
                reserved -= size
            peak = max(peak, reserved)
        self.assertEqual(reserved, fig["memory_reserved"])
        self.assertEqual(peak, fig["max_memory_reserved"])
        self.assertEqual(len(live), fig["allocations"])
        active = sorted((a, req) for a, _, req, state in fig["blocks"]
                        if state == "active_allocated")
        self.assertEqual(sorted((a, s) for a, (s, _) in live.items()), active)
        # each tensor made on its line of the program
        lines = {tag: base.tag_line("tensors.py", tag)
                 for tag in ("whole", "small", "mid", "big", "gone", "many")}
        made = sorted(w[1] for _, (_, w) in live.items() if w and w[0] == "tensors.py")
        self.assertEqual(made, sorted([lines["whole"], lines["small"], lines["mid"], lines["big"]] +
                                      [lines["many"]] * 4))
        freed = [e for e in events if e[1] == TENSOR_ALLOC and e[4] == ("tensors.py",
                                                                         lines["gone"])]
        self.assertEqual(len(freed), 1)
        self.assertIn(freed[0][2], {e[2] for e in events if e[1] == FREE_REQUESTED})

    def test_sigkill_after_oom(self):
        """Killed right after the OutOfMemoryError: the trace still holds
        the allocator's OOM (the tensor's size, rounded up to 512 bytes as
        torch's allocator rounds it), and the tensors and segments up to
        it are torch's at the failure: memory_reserved() then, and the
        snapshot's live blocks, each made on its line."""
        plain = self.run_program("tensors_oom_kill", traced=False)
        run = self.run_program("tensors_oom_kill", traced=True)
        self.assertEqual((plain.rc, run.rc), (-9, -9), run.stderr)
        self.assertEqual(run.figures, plain.figures)
        fig = run.figures
        obs, = fig["observer"]
        events = self.tensor_events(run.trace)
        ooms = [e for e in events if e[1] == TENSOR_OOM]
        self.assertEqual(len(ooms), 1, "the allocator's OOM is not in the trace")
        oom_seq, _, device_free, asked, where = ooms[0]
        self.assertEqual(asked, -(-fig["request_bytes"] // 512) * 512)
        self.assertEqual(device_free, obs["device_free"])
        self.assertEqual(where, ("tensors_oom_kill.py", base.tag_line("tensors_oom_kill.py",
                                                                      "huge")))
        live, reserved = {}, 0
        for seq, kind, addr, size, w in events:
            if seq > oom_seq:
                break
            if kind == TENSOR_ALLOC:
                live[addr] = (size, w)
            elif kind == FREE_REQUESTED:
                del live[addr]
            elif kind in (SEGMENT_ALLOC, SEGMENT_MAP):
                reserved += size
            elif kind in (SEGMENT_FREE, SEGMENT_UNMAP):
                reserved -= size
        self.assertEqual(reserved, obs["reserved"])
        self.assertEqual(reserved, fig["memory_reserved"])
        active = sorted((a, req) for a, _, req, state in fig["blocks"]
                        if state == "active_allocated")
        self.assertEqual(sorted((a, s) for a, (s, _) in live.items()), active)
        lines = sorted(w[1] for s, w in live.values())
        self.assertEqual(lines, [base.tag_line("tensors_oom_kill.py", "weights")] * 3 +
                         [base.tag_line("tensors_oom_kill.py", "acts")])
        # The report of the killed trace: the retry's framework object is
        # torch's cache when it raised.
        rep = self.report_json(run.trace)
        self.assertEqual(rep["trace"]["end"], "running")  # never closed
        # no cap: the device refused it, and no cause speaks of a cap
        self.assertIsNotNone(rep["diagnosis"])
        self.assertNotIn("allocator_limit", [rep["diagnosis"]["cause"]] +
                         [a["cause"] for a in rep["diagnosis"]["also"]])
        self.assertNotIn("allocator_limit", run.stderr)
        conn = sqlite3.connect(f"file:{run.trace}?mode=ro", uri=True)
        self.addCleanup(conn.close)
        self.assertEqual(conn.execute(f"SELECT o.limit_bytes FROM ooms o JOIN other_events e "
                                      f"ON e.seq = o.seq WHERE e.kind = {TENSOR_OOM}")
                         .fetchall(), [(None,)])
        retry = rep["ooms"][-1]
        self.assertIsNotNone(retry["retry_of"])
        fw = retry["framework"]
        self.assertIsNotNone(fw, "no framework object at the OOM")
        self.assertEqual(fw["requested_bytes"], asked)
        self.assertEqual(retry["requested_bytes"], obs["alloc"])
        self.assertEqual(fw["allocated_bytes"], fig["memory_allocated"])
        self.assertEqual(fw["reserved_bytes"], obs["reserved"])
        self.assertEqual(fw["largest_free_block"], fig["largest_free"])
        self.assertEqual(self.by_line(fw),
                         self.expected_by_line("tensors_oom_kill.py", fig["by_tag"]))
        # The text report, under the failure: the cache and its tensors'
        # lines, the weights' first.
        text = " ".join(self.report(run.trace).split())
        self.assertIn(f"Inside PyTorch's cache at the failure: {obs['reserved'] / MiB:.1f} MiB "
                      f"reserved, {fig['memory_allocated'] / MiB:.1f} MiB of it allocated to 4 "
                      "tensors", text)
        tensors = text.split("Tensors in the cache at the failure")[1]
        weights = fig["by_tag"]["weights"][0] / MiB
        self.assertIn(f"{weights:.1f} MiB 3 <listcomp> (tensors_oom_kill.py:"
                      f"{base.tag_line('tensors_oom_kill.py', 'weights')})", tensors)

    def read_export(self, trace):
        """The trace's torch-snapshot export as torch.cuda._memory_viz reads
        it (programs/read_snapshot.py: segsum, trace, both plots)."""
        export = os.path.join(self.tmp, os.path.basename(trace) + ".pickle")
        self.report(trace, "--format", "torch-snapshot", "-o", export)
        proc = subprocess.run([base.PYTHON, os.path.join(base.PROGRAMS, "read_snapshot.py"),
                               export], capture_output=True, text=True, timeout=300,
                              env=base.run_env({}))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return json.loads(proc.stdout.splitlines()[-1])

    def check_export(self, read, fig):
        """The export's segments and their blocks are memory_snapshot()'s:
        address and size of each segment, address, size and state of each
        block, the requested size of each tensor's."""
        self.assertEqual(read["segments"], sorted(fig["segment_list"]))
        self.assertEqual(read["segsum_segments"], fig["segments"])
        self.assertEqual([b[:2] + b[3:] for b in read["blocks"]],
                         [b[:2] + b[3:] for b in fig["blocks"]])
        active = [b for b in fig["blocks"] if b[3] == "active_allocated"]
        self.assertEqual([b for b in read["blocks"] if b[3] == "active_allocated"], active)
        self.assertTrue(all(n > 0 for n in read["plots_bytes"]))

    def html_blocks(self, trace, kind):
        """The segments and blocks of the HTML page's last moment of kind
        ("oom": the allocator's last try, "end"), from its data block: ([[address, size]],
        [[address, size, requested, state]]) in torch's words."""
        page = os.path.join(self.tmp, os.path.basename(trace) + ".html")
        self.report(trace, "--format", "html", "-o", page)
        with open(page, encoding="utf-8") as f:
            html = f.read()
        data = json.loads(re.search(r'<script type="application/json" id="memtrace-data">'
                                    r"(.*?)</script>", html, re.S).group(1))
        moment = [m for m in data["moments"] if m["kind"] == kind][-1]
        self.assertIn("segments", moment, f"no segment view at the {kind}")
        states = ["active_allocated", "active_pending_free", "inactive"]
        segments, blocks = [], []
        for address, size, _, bl in moment["segments"]:
            segments.append([address, size])
            at = address
            for b_size, state, _, requested in bl:
                blocks.append([at, b_size, requested, states[state]])
                at += b_size
        return sorted(segments), sorted(blocks)

    def check_html(self, trace, kind, fig):
        """The HTML page's segment view at that moment is memory_snapshot()'s
        segments and blocks (address, size, state; a tensor's request)."""
        segments, blocks = self.html_blocks(trace, kind)
        self.assertEqual(segments, sorted(fig["segment_list"]))
        self.assertEqual([b[:2] + b[3:] for b in blocks], [b[:2] + b[3:] for b in fig["blocks"]])
        self.assertEqual([b for b in blocks if b[3] == "active_allocated"],
                         [b for b in fig["blocks"] if b[3] == "active_allocated"])

    def test_export_blocks_at_end(self):
        """The torch-snapshot export and the HTML page's segment view at
        the end: torch's segments and every
        block in them, free ranges included, as the program's own
        memory_snapshot() lists them."""
        run = self.run_both("tensors")
        # Once (torch 2.11, under load) the export had only the first of
        # torch's three segments, never again. Should it recur, these say
        # whether the trace lacked them (not closed at exit, or events
        # not written) or the export lost them.
        conn = sqlite3.connect(f"file:{run.trace}?mode=ro", uri=True)
        self.addCleanup(conn.close)
        meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN "
                                 "('end', 'events_written')").fetchall())
        self.assertEqual(meta.get("end"), "exit", f"trace not closed at exit:\n{run.stderr}")
        self.assertEqual(int(meta["events_written"]),
                         conn.execute("SELECT count(*) FROM events").fetchone()[0])
        made = [e for e in self.tensor_events(run.trace) if e[1] == SEGMENT_ALLOC]
        self.assertEqual(len(made), run.figures["segments"],
                         f"segments missing from the trace:\n{run.stderr}")
        read = self.read_export(run.trace)
        self.check_export(read, run.figures)
        self.assertIn("inactive", {b[3] for b in read["blocks"]})
        self.check_html(run.trace, "end", run.figures)

    def test_export_blocks_at_oom(self):
        """The export of the trace killed after the OOM, and the HTML
        page's segment view at the OOM, are taken at the failure: memory_snapshot()'s segments and blocks right after the
        OutOfMemoryError."""
        run = self.run_program("tensors_oom_kill", traced=True)
        self.assertEqual(run.rc, -9, run.stderr)
        self.check_export(self.read_export(run.trace), run.figures)
        self.check_html(run.trace, "oom", run.figures)

    def test_oom_with_no_cuda_failure(self):
        """set_per_process_memory_fraction: torch raises OutOfMemoryError
        from its own cap, no CUDA call fails. The report has the OOM all
        the same, with the tensor view: the request torch's message
        names, memory_allocated() and memory_reserved() then, the largest
        free block, the holders by line; and so does the answer on
        stderr."""
        run = self.run_both("fraction_oom")
        fig = run.figures
        self.assertIsNotNone(fig["error"], "torch did not run out of memory")
        self.assertEqual(fig["num_ooms"], 1)
        rep = self.report_json(run.trace)
        self.assertEqual(len(rep["ooms"]), 1, rep["ooms"])
        oom = rep["ooms"][0]
        fw = oom["framework"]
        self.assertIsNotNone(fw, "no framework object at the OOM")
        self.assertEqual(fw["requested_bytes"], 100 * MiB)
        self.assertIn("Tried to allocate 100.00 MiB", fig["error"])
        self.assertEqual(fw["allocated_bytes"], fig["memory_allocated"])
        self.assertEqual(fw["reserved_bytes"], fig["memory_reserved"])
        self.assertEqual(fw["largest_free_block"], fig["largest_free"])
        self.assertEqual(self.by_line(fw), self.expected_by_line("fraction_oom.py", fig["by_tag"]))
        self.assertIn("OUT OF MEMORY", self.report(run.trace))
        self.check_answer(run, "fraction_oom.py", fig, 100 * MiB)

    def run_flight(self, mode):
        """programs/flight_tensors.py MODE, plain then under memtrace with
        MEMTRACE_FLIGHT=1M: same exit status (0), same figures."""
        runs = []
        for traced in (False, True):
            trace = os.path.join(self.tmp, f"flight-{mode}.db") if traced else None
            extra = {"LD_PRELOAD": base.LIB, "MEMTRACE_OUTPUT": trace, "MEMTRACE_CUPTI": "off",
                     "MEMTRACE_FLIGHT": "1M"} if traced else {}
            proc = subprocess.run(
                [base.SIM_RUN, "--capacity", "1G", "--", base.PYTHON,
                 os.path.join(base.PROGRAMS, "flight_tensors.py"), mode],
                env=base.run_env(extra), cwd=self.tmp, capture_output=True, text=True,
                timeout=300)
            runs.append(base.Run(proc, trace, 0))
            self.assertEqual(proc.returncode, 0, proc.stderr)
        plain, traced = runs
        self.assertEqual(traced.figures, plain.figures, "torch's figures changed under memtrace")
        return traced

    def check_answer(self, run, program, fig, request):
        """The answer on stderr at the OOM: the tensor torch's message
        names, memory_reserved() and memory_allocated() then, to the
        byte, and each line's tensors with what the program's tensors of
        that line hold."""
        self.assertIn(f"the tensor asked for: {request / MiB:.1f} MiB ({request:,} B); "
                      f"PyTorch's cache: {fig['memory_reserved'] / MiB:.1f} MiB reserved "
                      f"({fig['memory_reserved']:,} B), {fig['memory_allocated'] / MiB:.1f} MiB "
                      f"allocated ({fig['memory_allocated']:,} B)", run.stderr)
        for tag, (size, count) in fig["by_tag"].items():
            line = base.tag_line(program, tag)
            self.assertRegex(run.stderr, rf"memtrace: +{size / MiB:.1f} MiB in {count}: "
                             rf"\S+ \({re.escape(program)}:{line}\)")

    def test_flight_tensors(self):
        """Flight mode (MEMTRACE_FLIGHT=1M) with 60,000 tensor events: the
        answer on stderr at the OOM gives the tensor view; the
        trace stays within 1 MiB, the tensor events older than the ring
        are gone as every other event's are (counted in kind_totals), and
        the report's tensor view at the OOM is still torch's: the tensor
        torch's message names, memory_allocated() and memory_reserved()
        at the failure, the largest free block, the holders by line. Once
        with tensor events alone after the model's tensors (the cache
        warm: no CUDA call), once with empty_cache() between them (CUDA
        calls in the ring)."""
        for mode in ("warm", "empty"):
            with self.subTest(mode=mode):
                run = self.run_flight(mode)
                fig = run.figures
                self.assertIn(f"Tried to allocate {base.format_size(400 * MiB)}", fig["error"])
                self.assertNotIn("more than MEMTRACE_FLIGHT", run.stderr)
                size = sum(os.path.getsize(run.trace + ext) for ext in ("", "-wal")
                           if os.path.exists(run.trace + ext))
                self.assertLessEqual(size, 1 * MiB, "the flight trace passed its bound")
                conn = sqlite3.connect(f"file:{run.trace}?mode=ro", uri=True)
                self.addCleanup(conn.close)
                rows = conn.execute("SELECT count(*) FROM other_events WHERE kind = ?",
                                    (TENSOR_ALLOC,)).fetchone()[0]
                total = conn.execute("SELECT count FROM kind_totals WHERE kind = ?",
                                     (TENSOR_ALLOC,)).fetchone()[0]
                self.assertEqual(total, fig["rounds"] + 5)
                self.assertLess(rows, total // 2, "the tensor events did not leave the ring")
                fw = self.report_json(run.trace)["ooms"][-1]["framework"]
                self.assertIsNotNone(fw, "no framework object at the OOM")
                self.assertEqual(fw["requested_bytes"], 400 * MiB)
                self.assertEqual(fw["allocated_bytes"], fig["memory_allocated"])
                self.assertEqual(fw["reserved_bytes"], fig["memory_reserved"])
                self.assertEqual(fw["largest_free_block"], fig["largest_free"])
                self.assertEqual(self.by_line(fw),
                                 self.expected_by_line("flight_tensors.py", fig["by_tag"]))
                self.check_answer(run, "flight_tensors.py", fig, 400 * MiB)

    def test_cap_oom_cause(self):
        """The OOM torch raises from its own cap (set_per_process_memory_fraction)
        is caused by that cap, not by the device: the report's cause is
        allocator_limit, and its figures are torch's of the same run: the
        cap (the fraction times the device's total, as torch computes it,
        and as get_per_process_memory_fraction() reads back), what torch
        had reserved (memory_reserved()), what was left under the cap, the
        tensor asked for. The answer on stderr says the same, with the
        same figures; neither speaks of the device being too small."""
        run = self.run_both("fraction_oom")
        fig = run.figures
        self.assertIn("307.20 MiB allowed", fig["error"])  # torch's message, rounded
        self.assertEqual(fig["cap"], fig["cap_read_back"])
        self.assertEqual(fig["device_total"], fig["total_memory"])
        # the trace carries the cap with torch's OOM
        conn = sqlite3.connect(f"file:{run.trace}?mode=ro", uri=True)
        self.addCleanup(conn.close)
        rows = conn.execute("SELECT o.limit_bytes, o.device_free, o.device_total FROM ooms o "
                            "JOIN other_events e ON e.seq = o.seq "
                            f"WHERE e.kind = {TENSOR_OOM}").fetchall()
        self.assertEqual(rows, [(fig["cap"], fig["device_free"], fig["device_total"])])

        rep = self.report_json(run.trace)
        diag = rep["diagnosis"]
        self.assertEqual(diag["cause"], "allocator_limit", diag)
        self.assertNotIn("too_big", [a["cause"] for a in diag["also"]])
        self.assertEqual(diag["bytes"], fig["cap"])
        self.assertEqual(diag["room_bytes"], fig["cap"] - fig["memory_reserved"])
        self.assertEqual(rep["ooms"][0]["framework"]["reserved_bytes"], fig["memory_reserved"])
        self.assertEqual(rep["ooms"][0]["requested_bytes"], 100 * MiB)
        self.assertIn("set_per_process_memory_fraction", diag["try"])

        def figures_said(text):
            """(asked, cap, reserved, left) as the words give them, in bytes."""
            text = " ".join(text.split())
            m = re.search(r"refused the [^(]+\(([\d,]+) B\) asked for.*its cap is [^(]+"
                          r"\(([\d,]+) B\): it had [^(]+\(([\d,]+) B\) reserved, so [^(]+"
                          r"\(([\d,]+) B\) was left under the cap", text)
            self.assertIsNotNone(m, text)
            return tuple(int(g.replace(",", "")) for g in m.groups())

        torchs = (100 * MiB, fig["cap"], fig["memory_reserved"],
                  fig["cap"] - fig["memory_reserved"])
        self.assertEqual(figures_said(diag["evidence"]), torchs)
        text = self.report(run.trace)
        self.assertIn("Cause (allocator_limit)", text)
        self.assertEqual(figures_said(text[text.index("Cause (allocator_limit)"):]), torchs)
        cause = [l for l in run.stderr.splitlines() if "cause (" in l]
        self.assertEqual(len(cause), 1, run.stderr)
        self.assertIn("cause (allocator_limit)", cause[0])
        self.assertEqual(figures_said(cause[0]), torchs)

    def test_backward_tensors_hold_the_backward_line(self):
        """The tensors made during loss.backward(), on autograd's device
        thread (no Python state), hold the line that called backward()
        through a launch frame: as many, and as many requested bytes, as
        memory_stats() counts allocated during the call."""
        run = self.run_both("backward")
        fig = run.figures
        line = base.tag_line("backward.py", "backward")
        conn = sqlite3.connect(f"file:{run.trace}?mode=ro", uri=True)
        self.addCleanup(conn.close)
        rows = conn.execute("""
            SELECT e.bytes, e.thread,
                   (SELECT m.ip FROM stack_frames sm JOIN frames m ON m.id = sm.frame
                     WHERE sm.stack = e.stack AND m.kind = 2)
              FROM other_events e
             WHERE e.kind = ? AND EXISTS (
                   SELECT 1 FROM stack_frames sf JOIN frames fr ON fr.id = sf.frame
                    WHERE sf.stack = e.stack AND fr.kind = 1 AND fr.line = ?
                      AND fr.file LIKE '%/backward.py')""", (TENSOR_ALLOC, line)).fetchall()
        self.assertEqual(len(rows), fig["backward_allocations"])
        self.assertEqual(sum(r[0] for r in rows), fig["backward_requested_bytes"])
        # most of them on another thread, launched from the program's
        launched = [r for r in rows if r[2] is not None]
        self.assertGreater(len(launched), len(rows) // 2)
        self.assertEqual({r[1] != r[2] for r in launched}, {True})

    def test_end_names_the_last_tensor(self):
        """Work done in main(): its tensors are released as it returns.
        The end's figures are torch's after main() returned, and
        after_last_tensor's are torch's at main()'s last line, the last
        tensor made there (@last); the text says both."""
        run = self.run_both("last_line")
        fig = run.figures
        last = fig["last_line"]
        end = self.report_json(run.trace)["framework"]["at_end"]
        self.assertEqual(end["allocated_bytes"], fig["memory_allocated"])
        self.assertEqual(end["tensors"], fig["allocations"])
        self.assertGreater(last["allocated"], fig["memory_allocated"])
        after = end["after_last_tensor"]
        self.assertIsNotNone(after, "no moment named for the tensors main() released")
        self.assertEqual(after["allocated_bytes"], last["allocated"])
        self.assertEqual(after["reserved_bytes"], last["reserved"])
        self.assertEqual(after["tensors"], last["tensors"])
        line = base.tag_line("last_line.py", "last")
        py = [f for f in after["frames"] if f["kind"] == "python"]
        self.assertEqual((os.path.basename(py[0]["file"]), py[0]["line"]),
                         ("last_line.py", line))
        text = " ".join(self.report(run.trace).split())
        self.assertIn(f"At the last tensor made (main (last_line.py:{line})", text)

    def test_roles_at_oom(self):
        """Memory by role at the OOM (issue 50): an MLP with Adam, its
        gradients kept, the batch doubled until the forward runs out.
        The parameters', gradients' and Adam's state's bytes are the
        blocks torch's memory_snapshot() gives those tensors at its OOM
        observer; the rest of memory_allocated() is the step's, the
        cache's free bytes are memory_reserved() less it, and the roles
        add up to what was live on the device."""
        run = self.run_both("roles_mlp")
        fig = run.figures
        self.assertTrue(fig["error"].startswith("CUDA out of memory"), fig["error"])
        torchs, = fig["at_oom"]
        self.assertGreater(torchs["gradients"], 0)
        oom = self.report_json(run.trace)["ooms"][-1]
        roles = oom["roles"]
        self.assertIsNotNone(roles, "no roles at the OOM")
        for role in ("parameters", "gradients", "optimizer_state"):
            self.assertEqual(roles[role], torchs[role], role)
        self.assertEqual(roles["cache"], torchs["reserved"] - torchs["allocated"])
        step = sum(roles[r] for r in ("activations", "temporaries", "data"))
        self.assertEqual(step + oom["framework"]["roles"]["workspaces"] +
                         oom["framework"]["roles"]["other"],
                         torchs["allocated"] - torchs["parameters"] - torchs["gradients"]
                         - torchs["optimizer_state"])
        self.assertGreater(roles["activations"], roles["temporaries"])
        self.assertEqual(sum(roles.values()), oom["live_bytes"])
        self.assertEqual(sum(oom["framework"]["roles"].values()), torchs["reserved"])
        text = " ".join(self.report(run.trace).split())
        self.assertIn("Memory by role at the failure", text)
        self.assertIn(f"optimizer state {torchs['optimizer_state'] / MiB:.1f} MiB (O)", text)
        page = self.report(run.trace, "--format", "html")
        for role in ("parameters", "gradients", "optimizer_state"):
            self.assertIn(f'class="k-{role}" data-bytes="{torchs[role]}"', page)

    def test_tensors_off(self):
        """MEMTRACE_TENSORS=0: no tensor event, the program unchanged."""
        plain = self.run_program("tensors", traced=False)
        trace = os.path.join(self.tmp, "off.db")
        proc = subprocess.run(
            [base.SIM_RUN, "--capacity", "1G", "--", base.PYTHON,
             os.path.join(base.PROGRAMS, "tensors.py")],
            env=base.run_env({"LD_PRELOAD": base.LIB, "MEMTRACE_OUTPUT": trace,
                              "MEMTRACE_CUPTI": "off", "MEMTRACE_TENSORS": "0"}),
            cwd=self.tmp, capture_output=True, text=True, timeout=300)
        traced = base.Run(proc, trace, 0)
        self.assertEqual((traced.rc, traced.figures), (plain.rc, plain.figures))
        self.assertEqual(self.tensor_events(traced.trace), [])


def main():
    base.PYTHON = base.framework_python()
    if base.PYTHON is None:
        return base.SKIP
    result = unittest.main(verbosity=2, exit=False).result
    if not result.wasSuccessful():
        return 1
    if result.skipped and len(result.skipped) == result.testsRun:
        return base.SKIP
    return 0


if __name__ == "__main__":
    sys.exit(main())
