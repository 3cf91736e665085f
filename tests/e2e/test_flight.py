"""Flight mode (MEMTRACE_FLIGHT) and what every trace now has: a file
within its bound whatever the run's length, with exact totals, live set,
peak and OOM; the out-of-memory summary on the program's stderr; the report
written at exit, and by memtrace run --report when the program is killed.

The numbers are flight-churn.c's (its comment): P pairs of churn around an
OOM of 512 MiB with 856 MiB live (6 x 100 MiB activations, 4 x 64 MiB
weights), 259 MiB left live at the end (the weights and 3 x 1 MiB)."""
import json
import os
import re
import signal
import subprocess
import tempfile
import time

import mtest

MiB = 1 << 20
SCRIPT = os.path.join(mtest.SOURCE, "scripts", "memtrace")


def churn_bytes(pairs):
    return sum(4096 * (1 + i % 16) for i in range(pairs))


def oom_section(text):
    """The text report's OOM section, from its headline to the line before
    the peak, with its times (of two runs) masked."""
    lines = text.splitlines()
    first = next(i for i, l in enumerate(lines) if l.startswith("OUT OF MEMORY"))
    last = next(i for i, l in enumerate(lines) if l.startswith("Peak device memory"))
    return re.sub(r"\b\d+\.\d+ s\b", "T s", "\n".join(lines[first:last]))


def no_cause(section):
    """The section without its cause paragraphs ("  Cause (...)", "  Also
    (...)" and their continuation lines)."""
    out, skip = [], False
    for line in section.splitlines():
        if line.startswith(("  Cause (", "  Also (")):
            skip = True
            continue
        if skip and line.startswith("    "):
            continue
        skip = False
        out.append(line)
    return "\n".join(out)


class Flight(mtest.TraceTest):
    def run_polled(self, args, env, trace):
        """Runs flight-churn traced, sampling the trace's size (main file and
        WAL) every millisecond; returns (process, largest size seen)."""
        env = mtest.sim_env({"LD_PRELOAD": mtest.LIB, "MEMTRACE_OUTPUT": trace, **env})
        proc = subprocess.Popen([mtest.program("flight-churn"), *args], env=env,
                                cwd=self.tmp, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        largest = 0
        while proc.poll() is None:
            size = 0
            for suffix in ("", "-wal"):
                try:
                    size += os.stat(trace + suffix).st_size
                except FileNotFoundError:
                    pass
            largest = max(largest, size)
            time.sleep(0.001)
        out, err = proc.communicate()
        return proc.returncode, out, err, largest

    def check_totals(self, rep, pairs):
        t = rep["totals"]
        self.assertEqual(t["allocations"], pairs + 13)
        self.assertEqual(t["frees"], pairs + 6)
        self.assertEqual(t["bytes_allocated"], (256 + 600 + 3) * MiB + churn_bytes(pairs))
        self.assertEqual(t["peak_bytes"], 856 * MiB)
        self.assertEqual(t["live_bytes_at_end"], 259 * MiB)
        self.assertEqual(t["live_allocations_at_end"], 7)
        self.assertEqual(t["unmatched_frees"], 0)
        leaks = mtest.by_function(rep["leaks"])
        self.assertEqual((leaks["load_weights"]["bytes"], leaks["load_weights"]["count"]),
                         (256 * MiB, 4))
        self.assertEqual((leaks["leak_buffers"]["bytes"], leaks["leak_buffers"]["count"]),
                         (3 * MiB, 3))
        self.assertEqual(len(leaks), 2)

    def check_oom(self, rep):
        self.assertEqual(len(rep["ooms"]), 1)
        o = rep["ooms"][0]
        self.assertEqual(o["requested_bytes"], 512 * MiB)
        self.assertEqual((o["live_bytes"], o["live_allocations"]), (856 * MiB, 10))
        self.assertEqual(o["device_free"], 168 * MiB)
        holders = mtest.by_function(o["holders"])
        self.assertEqual((holders["activations"]["bytes"], holders["activations"]["count"]),
                         (600 * MiB, 6))
        self.assertEqual((holders["load_weights"]["bytes"], holders["load_weights"]["count"]),
                         (256 * MiB, 4))
        self.assertEqual(len(holders), 2)
        self.assertEqual(o["unexplained_bytes"], 0)

    def test_four_million_events_within_four_mib(self):
        """2M pairs (4M events) under MEMTRACE_FLIGHT=4M: the file never
        passes 4 MiB, its events left the ring, and the totals, peak, OOM
        and leaks are exact."""
        pairs = 2000000
        trace = os.path.join(self.tmp, "flight.db")
        rc, out, err, largest = self.run_polled(
            [str(pairs)], {"MEMTRACE_FLIGHT": "4M", "MEMTRACE_QUIET": "1"}, trace)
        self.assertEqual(rc, 0, err)
        self.assertLessEqual(largest, 4 * MiB)
        self.assertGreater(largest, 1 * MiB)  # it was sampled at all
        rep = self.report(trace)
        flight = rep["trace"]["flight"]
        self.assertEqual(flight["bound_bytes"], 4 * MiB)
        # most of the run left the ring, the OOM among it
        self.assertGreater(flight["events_before_ring"], 3000000)
        self.assertGreater(flight["ring_first_seq"], rep["ooms"][0]["seq"])
        self.assertEqual(rep["totals"]["events"], 2 * pairs + 22)
        self.check_totals(rep, pairs)
        self.check_oom(rep)

    def test_oom_section_same_in_flight_and_full(self):
        """The OOM left the ring: its section comes from the live set the
        writer kept, and reads as in the full trace."""
        pairs = 200000
        full = self.run_program("flight-churn", [str(pairs)], trace="full.db")
        flight = self.run_program("flight-churn", [str(pairs)], trace="flight.db",
                                  env={"MEMTRACE_FLIGHT": "1M"})
        self.assertEqual((full.rc, flight.rc), (0, 0), full.stderr + flight.stderr)
        rep_full, rep_flight = self.report(full.trace), self.report(flight.trace)
        self.assertIsNone(rep_full["trace"]["flight"])
        self.assertGreater(rep_flight["trace"]["flight"]["ring_first_seq"],
                           rep_flight["ooms"][0]["seq"])
        for rep in (rep_full, rep_flight):
            self.check_totals(rep, pairs)
            self.check_oom(rep)
        text_full = self.report_text(full.trace)
        text_flight = self.report_text(flight.trace)
        # the cause is the same; its words differ: a flight trace does not
        # know what each step allocated before the ring (docs/report.md)
        self.assertEqual(rep_flight["ooms"][0]["diagnosis"]["cause"],
                         rep_full["ooms"][0]["diagnosis"]["cause"])
        self.assertEqual(no_cause(oom_section(text_flight)), no_cause(oom_section(text_full)))
        self.assertIn("flight trace (MEMTRACE_FLIGHT=1.0 MiB)", text_flight)
        self.assertNotIn("flight trace", text_full)

    def test_summary_on_stderr_in_both_modes(self):
        for env in ({}, {"MEMTRACE_FLIGHT": "1M"}):
            name = "flight.db" if env else "full.db"
            run = self.run_program("flight-churn", ["20000"], trace=name,
                                   env={**env, "MEMTRACE_QUIET": "0"})
            self.assertEqual(run.rc, 0, run.stderr)
            lines = [l for l in run.stderr.splitlines() if l.startswith("memtrace:")]
            at = next(i for i, l in enumerate(lines) if "out of memory" in l)
            self.assertEqual(lines[at], "memtrace: out of memory: cudaMalloc of 512.0 MiB "
                             "failed in huge (flight-churn); device 0 had 168.0 MiB free "
                             "of 1.0 GiB")
            self.assertEqual(lines[at + 1], "memtrace:   this process holds 856.0 MiB in "
                             "10 allocations; the largest holders:")
            self.assertEqual(lines[at + 2].split(), ["memtrace:", "600.0", "MiB", "in", "6:",
                                                     "activations", "(flight-churn)"])
            self.assertEqual(lines[at + 3].split(), ["memtrace:", "256.0", "MiB", "in", "4:",
                                                     "load_weights", "(flight-churn)"])
            # the cause as the report gives it (test_cause.py has the others)
            self.assertTrue(lines[at + 4].startswith("memtrace:   cause (too_big): the step "
                                                     "in progress needed 1.1 GiB"), lines[at + 4])
            self.assertTrue(lines[at + 5].startswith("memtrace:   try: a smaller batch"))
            self.assertEqual(lines[at + 6], "memtrace:   the full report: memtrace report "
                             + os.path.realpath(run.trace))
        quiet = self.run_program("flight-churn", ["20000"], trace="quiet.db",
                                 env={"MEMTRACE_QUIET": "1"})
        self.assertNotIn("out of memory", quiet.stderr)

    def test_sigkill_after_the_oom_keeps_it(self):
        """Killed right after the OOM, with more churn before it than the
        bound holds: both modes keep the OOM and its live set, which were
        committed with it."""
        for env in ({}, {"MEMTRACE_FLIGHT": "1M"}):
            trace = os.path.join(self.tmp, "flight.db" if env else "full.db")
            penv = mtest.sim_env({"LD_PRELOAD": mtest.LIB, "MEMTRACE_OUTPUT": trace,
                                  "MEMTRACE_QUIET": "1", **env})
            proc = subprocess.Popen([mtest.program("flight-churn"), "400000", "--wait"],
                                    env=penv, stdout=subprocess.PIPE, text=True)
            self.addCleanup(proc.stdout.close)
            self.addCleanup(lambda p=proc: p.poll() is None and p.kill())
            self.assertEqual(proc.stdout.readline(), "huge: cudaErrorMemoryAllocation\n")
            self.assertEqual(proc.stdout.readline(), "waiting\n")
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            rep = self.report(trace)
            self.assertEqual(rep["trace"]["end"], "running")
            self.check_oom(rep)
            self.assertEqual(rep["totals"]["peak_bytes"], 856 * MiB)
            if env:
                self.assertGreater(rep["trace"]["flight"]["ring_first_seq"], 0)

    def test_released_vmm_handles_stay_live_while_mapped(self):
        """PyTorch's expandable segments release each handle right after
        mapping it: the memory stays until the last unmap. The writer's
        own live set (its peak, what flight mode keeps when the events
        leave the ring) must count it as the model does. The numbers are
        entry-points.c's: peak 67108864 bytes; at the end 41943040 bytes
        in 2 chunks and 4194304 in plain_alloc."""
        for env in ({}, {"MEMTRACE_FLIGHT": "1M"}):
            run = self.run_program("entry-points", ["100000"],
                                   trace="flight.db" if env else "full.db", env=env)
            self.assertEqual(run.rc, 0, run.stderr)
            with self.db(run.trace) as conn:
                meta = dict(conn.execute("SELECT key, value FROM meta"))
                self.assertEqual(int(meta["peak_bytes"]), 67108864)
                at_peak = conn.execute("SELECT sum(bytes), sum(count) FROM live_at_peak")
                self.assertEqual(at_peak.fetchone(), (67108864, 4))
            rep = self.report(run.trace)
            if env:
                self.assertGreater(rep["trace"]["flight"]["events_before_ring"], 190000)
            t = rep["totals"]
            self.assertEqual(t["peak_bytes"], 67108864)
            self.assertEqual(t["live_bytes_at_end"], 41943040 + 4194304)
            self.assertEqual(t["live_allocations_at_end"], 3)

    def test_live_set_cases_one_answer(self):
        """Cases A and F of the live-set contract (docs/architecture.md),
        live-cases.c's: a cudaFree that fails during a capture after its
        address was reused puts back the newer allocation (200 bytes of
        site_second), and a VMM handle released right after it is mapped
        is held by the mapping (2 MiB of site_vmm_map). The OOM comes
        after both have left a flight trace's ring, and so does the OOM
        itself: the flight report's holders are the writer's live set.
        The answer on stderr, the full report and the flight report
        name the same holders."""
        pairs = 100000
        runs = {}
        for env in ({}, {"MEMTRACE_FLIGHT": "1M"}):
            run = self.run_program("live-cases", [str(pairs)],
                                   trace="flight.db" if env else "full.db",
                                   env={**env, "MEMTRACE_QUIET": "0"})
            self.assertEqual(run.rc, 0, run.stderr)
            lines = [l for l in run.stderr.splitlines() if l.startswith("memtrace:")]
            at = next(i for i, l in enumerate(lines) if "out of memory" in l)
            self.assertEqual(lines[at + 1], "memtrace:   this process holds 2.0 MiB in "
                             "2 allocations; the largest holders:")
            self.assertEqual(lines[at + 2].split(), ["memtrace:", "2.0", "MiB", "in", "1:",
                                                     "site_vmm_map", "(live-cases)"])
            self.assertEqual(lines[at + 3].split(), ["memtrace:", "200", "B", "in", "1:",
                                                     "site_second", "(live-cases)"])
            runs["flight" if env else "full"] = run
        reps = {k: self.report(r.trace) for k, r in runs.items()}
        flight = reps["flight"]["trace"]["flight"]
        self.assertGreater(flight["ring_first_seq"], reps["flight"]["ooms"][0]["seq"])
        # The simulator's own count at the OOM (its free memory, which
        # cudaMemGetInfo gave the OOM event): what it had in use is the
        # holders' bytes, each rounded up to its 512-byte granule
        # (tests/sim/README.md); with site_second's 200 bytes not put back
        # by the free_error, or counted twice, it is not.
        for rep in reps.values():
            oom = rep["ooms"][0]
            held = [h["bytes"] for h in oom["holders"]]
            self.assertEqual(oom["device_total"] - oom["device_free"],
                             sum(-(-b // 512) * 512 for b in held))
            self.assertEqual(oom["live_bytes"], sum(held))

        def holders(rep):
            return [(h["frames"][0]["function"], h["bytes"], h["count"])
                    for h in rep["ooms"][0]["holders"]]

        def leaks(rep):
            return [(l["frames"][0]["function"], l["bytes"], l["mem"]) for l in rep["leaks"]]

        want = [("site_vmm_map", 2 * MiB, 1), ("site_second", 200, 1)]
        self.assertEqual(holders(reps["full"]), want)
        self.assertEqual(holders(reps["flight"]), want)
        self.assertEqual(leaks(reps["flight"]), leaks(reps["full"]))
        for rep in reps.values():
            self.assertEqual((rep["totals"]["peak_bytes"], rep["totals"]["live_bytes_at_end"]),
                             (2 * MiB + 200 + 4096, 2 * MiB + 200))
        texts = {k: self.report_text(r.trace) for k, r in runs.items()}
        self.assertEqual(no_cause(oom_section(texts["flight"])),
                         no_cause(oom_section(texts["full"])))

    def mount_small(self, size):
        """A tmpfs of size bytes, unmounted at the end; skips where none can
        be mounted (not root)."""
        path = tempfile.mkdtemp(prefix="memtrace-small-")
        self.addCleanup(os.rmdir, path)
        mount = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", path],
                               capture_output=True, text=True)
        if mount.returncode != 0:
            self.skipTest(f"cannot mount a small tmpfs here: {mount.stderr.strip()}")
        self.addCleanup(subprocess.run, ["umount", path], check=True)
        return path

    def test_disk_filling_up_costs_the_ring_not_the_oom(self):
        """The disk fills once the trace has started (another process
        takes all the rest): the bound was reserved, so every commit still
        fits; the OOM, the live set and the totals are whole."""
        small = self.mount_small(8 * MiB)
        trace = os.path.join(small, "t.db")
        env = mtest.sim_env({"LD_PRELOAD": mtest.LIB, "MEMTRACE_OUTPUT": trace,
                             "MEMTRACE_FLIGHT": "4M", "MEMTRACE_QUIET": "1"})
        proc = subprocess.Popen([mtest.program("flight-churn"), "400000"], env=env,
                                cwd=self.tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        # the reservation done: the main file has its share, 3 MiB of 4
        while proc.poll() is None and not (os.path.exists(trace) and
                                           os.path.getsize(trace) >= 3 * MiB):
            time.sleep(0.001)
        self.assertIsNone(proc.poll(), "the program ended before its trace had its share")
        filled = 0
        with open(os.path.join(small, "filler"), "wb") as f:
            try:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
                    filled += 65536
            except OSError:
                pass
        free = os.statvfs(small).f_bavail * os.statvfs(small).f_frsize
        out, err = proc.communicate()
        self.assertEqual(proc.returncode, 0, err)
        self.assertNotIn("cannot write", err)
        self.assertLess(free, 64 << 10)
        self.assertGreater(filled, 2 * MiB)
        os.unlink(os.path.join(small, "filler"))
        rep = self.report(trace)
        self.check_totals(rep, 400000)
        self.check_oom(rep)

    def test_disk_smaller_than_the_bound(self):
        """Less disk than MEMTRACE_FLIGHT: the bound halves until the disk
        holds it, said once; the trace is then whole within it."""
        small = self.mount_small(2 * MiB)
        trace = os.path.join(small, "t.db")
        run = self.run_program("flight-churn", ["100000"], trace=trace,
                               env={"MEMTRACE_FLIGHT": "4M", "MEMTRACE_QUIET": "0"})
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertIn(f"memtrace: the disk of {trace} has less than the 4096 KiB of "
                      "MEMTRACE_FLIGHT free: the flight trace keeps within 1024 KiB",
                      run.stderr)
        self.assertNotIn("cannot write", run.stderr)
        rep = self.report(trace)
        self.assertEqual(rep["trace"]["flight"]["bound_bytes"], 1 * MiB)
        self.check_totals(rep, 100000)
        self.check_oom(rep)

    def test_small_run_leaves_a_small_file(self):
        """The main file grows by its whole share at once while the program
        runs (64M: 48 MiB); closed, it is cut to the pages it uses."""
        trace = os.path.join(self.tmp, "small.db")
        rc, out, err, largest = self.run_polled(
            ["50"], {"MEMTRACE_FLIGHT": "64M", "MEMTRACE_QUIET": "1"}, trace)
        self.assertEqual(rc, 0, err)
        self.assertGreater(largest, 32 * MiB)  # the reservation, while it ran
        st = os.stat(trace)
        self.assertLess(st.st_size, 1 * MiB)
        self.assertLess(st.st_blocks * 512, 1 * MiB)  # the disk given back too
        self.assertFalse(os.path.exists(trace + "-wal"))
        rep = self.report(trace)
        self.assertEqual(rep["trace"]["flight"]["bound_bytes"], 64 * MiB)
        self.assertEqual(rep["totals"]["events"], 2 * 50 + 22)
        self.check_totals(rep, 50)
        self.check_oom(rep)

    def test_report_at_exit_and_after_a_kill(self):
        """MEMTRACE_REPORT_AT_EXIT writes TRACE.json at exit; memtrace run
        --report writes the report of a process that was killed too."""
        run = self.run_program("flight-churn", ["1000"], trace="exit.db",
                               env={"MEMTRACE_REPORT_AT_EXIT": "json",
                                    "MEMTRACE_REPORT": mtest.REPORTER})
        self.assertEqual(run.rc, 0, run.stderr)
        with open(os.path.join(self.tmp, "exit.json")) as f:
            self.assertEqual(json.load(f)["totals"]["live_bytes_at_end"], 259 * MiB)

        trace = os.path.join(self.tmp, "killed.db")
        env = mtest.sim_env({"MEMTRACE_LIB": mtest.LIB, "MEMTRACE_REPORT": mtest.REPORTER,
                             "MEMTRACE_QUIET": "1"})
        proc = subprocess.Popen([SCRIPT, "run", "--report", "text", "-o", trace, "--",
                                 mtest.program("flight-churn"), "1000", "--wait"],
                                env=env, stdout=subprocess.PIPE, text=True)
        self.addCleanup(proc.stdout.close)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        self.assertEqual(proc.stdout.readline(), "huge: cudaErrorMemoryAllocation\n")
        self.assertEqual(proc.stdout.readline(), "waiting\n")
        with self.db(trace) as conn:
            pid = int(conn.execute("SELECT value FROM meta WHERE key = 'pid'").fetchone()[0])
        os.kill(pid, signal.SIGKILL)
        self.assertEqual(proc.wait(timeout=120), 128 + signal.SIGKILL)
        with open(os.path.join(self.tmp, "killed.txt")) as f:
            text = f.read()
        self.assertIn("OUT OF MEMORY: cudaMalloc of 512.0 MiB failed", text)


if __name__ == "__main__":
    mtest.main()
