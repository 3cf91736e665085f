#!/usr/bin/env python3
"""memtrace benchmarks: runs the benchmark programs of tests/bench, many
times each, and prints medians side by side. The methods and the targets
are in docs/performance.md; run-all.sh builds and runs every section.

    bench.py [--build DIR] [--out DIR] [--quick] [--runs N] [--big]
             [--section hotpath|producer|throughput|flight|python|report|scale|nocuda|profile]...

Results: tables on stdout, and OUT/results.json (every sample) and
OUT/results.md (the tables). Never part of the pass/fail tests."""
import argparse
import ctypes
import datetime
import json
import mmap
import os
import platform
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

SECTIONS = ["hotpath", "bytes", "producer", "throughput", "flight", "python", "report", "scale",
            "nocuda", "profile"]
RANKS = 256  # the scale section's job
RANK_EVENTS = 100000
DEPTHS = [5, 20, 60]
THREADS = [1, 8]
# Every configuration runs on one simulated device big enough for any
# live set of the benchmarks.
DEVICE_MEMORY = "4G"
GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


class Bench:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.out = os.path.abspath(args.out or os.path.join(self.build, "bench-results"))
        os.makedirs(self.out, exist_ok=True)
        # Traces go to the disk the results go to, as a user's would.
        self.scratch = tempfile.mkdtemp(prefix="scratch-", dir=self.out)
        b = lambda *p: os.path.join(self.build, *p)
        self.lib = b("interpose", "libmemtrace.so")
        self.sink = b("tests", "bench", "libbench-sqlite-sink.so")
        self.churn = b("tests", "bench", "bench-churn")
        self.producer = b("tests", "bench", "bench-producer")
        self.gen = b("tests", "bench", "gen-trace")
        self.bench_read = b("tests", "bench", "bench-read")
        self.reporter = b("report", "memtrace-report")
        self.nocuda_prog = b("tests", "programs", "nocuda")
        self.sim = b("tests", "sim")
        self.here = os.path.dirname(os.path.abspath(__file__))
        self.heaptrack = shutil.which("heaptrack")
        self.heaptrack_preload = self.find_heaptrack_preload()
        self.results = {"machine": machine(), "build": self.build, "quick": args.quick,
                        "date": datetime.datetime.now().isoformat(timespec="seconds")}
        self.tables = []
        self.counter = 0

    def find_heaptrack_preload(self):
        if not self.heaptrack:
            return None
        root = os.path.dirname(os.path.dirname(os.path.realpath(self.heaptrack)))
        for rel in ("lib/heaptrack", "lib/x86_64-linux-gnu/heaptrack", "lib64/heaptrack"):
            p = os.path.join(root, rel, "libheaptrack_preload.so")
            if os.path.exists(p):
                return p
        return None

    def runs(self, full, quick):
        if self.args.runs:
            return self.args.runs
        return quick if self.args.quick else full

    # ---- running one process ----

    def env(self, extra=None, sim=True):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("MEMTRACE_", "CUDASIM_", "DUMP_HEAPTRACK"))
               and k not in ("LD_PRELOAD",)}
        env["MEMTRACE_QUIET"] = "1"
        if sim:
            env["LD_LIBRARY_PATH"] = self.sim
            env["CUDASIM_DEVICE_MEMORY"] = DEVICE_MEMORY
        env.update(extra or {})
        return env

    def run(self, cmd, env, cwd=None, check=True):
        """Runs cmd; returns its key=value line, wall_s, cpu_s (the whole
        process tree: rusage of the child and its reaped descendants) and
        maxrss_kib."""
        # Linux keeps the peak RSS across exec, so a child forked from this
        # Python process would report at least ours: GNU time, small, forks
        # the command and reports its peak.
        # The preloaded library must not be loaded into GNU time itself
        # (heaptrack's would trace time and hide itself from its child):
        # env(1) sets LD_PRELOAD for the command alone, in every variant,
        # so that each pays the same exec.
        rss_file = os.path.join(self.scratch, "rss")
        if GNU_TIME:
            env = dict(env)
            preload = ["LD_PRELOAD=" + env.pop("LD_PRELOAD")] if "LD_PRELOAD" in env else []
            cmd = [GNU_TIME, "-f", "%M", "-o", rss_file, "env"] + preload + list(cmd)
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            t0 = time.perf_counter()
            p = subprocess.Popen(cmd, env=env, cwd=cwd or self.scratch, stdout=out,
                                 stderr=err)
            _, status, ru = os.wait4(p.pid, 0)
            wall = time.perf_counter() - t0
            p.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            err.seek(0)
            text, errors = out.read().decode(errors="replace"), err.read().decode(errors="replace")
        if check and p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}\n{errors[-2000:]}")
        maxrss = ru.ru_maxrss
        if GNU_TIME:
            with open(rss_file) as f:
                maxrss = int(f.read().split()[-1])
            os.unlink(rss_file)
        kv = parse_kv(text)
        kv.update(wall_s=wall, cpu_s=ru.ru_utime + ru.ru_stime, maxrss_kib=maxrss,
                  rc=p.returncode, stdout=text)
        return kv

    def trace_path(self):
        self.counter += 1
        return os.path.join(self.scratch, f"t{self.counter}.db")

    # ---- the variants of one churn run ----

    def churn_cmd(self, api, pairs, depth, threads):
        return [self.churn, "--api", api, "--pairs", str(pairs), "--depth", str(depth),
                "--threads", str(threads)]

    def run_variant(self, variant, pairs, depth, threads):
        api = "malloc" if variant in ("malloc", "heaptrack-preload", "heaptrack") else "async"
        cmd = self.churn_cmd(api, pairs, depth, threads)
        extra = {}
        trace = None
        if variant in ("memtrace", "memtrace-sink"):
            trace = self.trace_path()
            extra["MEMTRACE_OUTPUT"] = trace
            extra["LD_PRELOAD"] = self.lib if variant == "memtrace" else \
                self.sink + ":" + self.lib
        elif variant == "heaptrack-preload":
            extra["LD_PRELOAD"] = self.heaptrack_preload
            extra["DUMP_HEAPTRACK_OUTPUT"] = "/dev/null"
        elif variant == "heaptrack":
            ht = os.path.join(self.scratch, f"ht{self.counter}")
            self.counter += 1
            cmd = [self.heaptrack, "-o", ht] + cmd
        r = self.run(cmd, self.env(extra))
        if trace:
            r.update(trace_facts(trace))
            os.unlink(trace)
        for f in os.listdir(self.scratch):
            if f.startswith("ht"):
                os.unlink(os.path.join(self.scratch, f))
        return r

    def variants(self):
        v = ["cuda", "memtrace", "memtrace-sink", "malloc"]
        if self.heaptrack_preload:
            v.append("heaptrack-preload")
        if self.heaptrack:
            v.append("heaptrack")
        return v

    # ---- sections ----

    def hotpath(self):
        """Added time per alloc/free pair, memtrace against heaptrack."""
        pairs = 50000 if self.args.quick else 200000
        runs = self.runs(5, 3)
        depths = [20] if self.args.quick else DEPTHS
        variants = self.variants()
        # Fixed costs (start-up, exit) of each variant, from 1-pair runs:
        # subtracted so that the end-to-end figure is per pair.
        fixed = {v: [] for v in variants}
        for _ in range(runs):
            for v in variants:
                fixed[v].append(self.run_variant(v, 1, 20, 1))
        fixed_wall = {v: med(r["wall_s"] for r in fixed[v]) for v in variants}
        fixed_cpu = {v: med(r["cpu_s"] for r in fixed[v]) for v in variants}
        rows, raw = [], {"fixed": fixed}
        for depth in depths:
            for threads in THREADS:
                samples = {v: [] for v in variants}
                for _ in range(runs):  # interleaved, so that noise falls on all alike
                    for v in variants:
                        samples[v].append(self.run_variant(v, pairs, depth, threads))
                raw[f"d{depth}t{threads}"] = samples
                rows.append(self.hotpath_row(depth, threads, pairs, samples, fixed_wall,
                                             fixed_cpu))
        self.results["hotpath"] = {"pairs": pairs, "runs": runs, "rows": rows, "raw": raw,
                                   "fixed_wall_s": fixed_wall, "fixed_cpu_s": fixed_cpu}
        self.table("Hot path: added ns per alloc/free pair (medians of %d runs, %d pairs; "
                   "app: CPU of the program's threads, memtrace's writer discarding; "
                   "e2e: CPU of every thread and process; best: the least disturbed runs)"
                   % (runs, pairs),
                   ["depth", "thr", "base cuda", "base malloc", "mt app", "ht preload",
                    "app ratio", "best", "mt e2e", "ht e2e", "e2e ratio", "best",
                    "mt app, real writer", "mt wait/event"],
                   [[r["depth"], r["threads"], r["base_cuda_ns"], r["base_malloc_ns"],
                     r["mt_app_ns"], r["ht_preload_ns"], r["app_ratio"], r["app_ratio_best"],
                     r["mt_e2e_cpu_ns"], r["ht_e2e_cpu_ns"], r["e2e_ratio"],
                     r["e2e_ratio_best"], r["mt_app_real_writer_ns"],
                     r["mt_wait_ns_per_event"]] for r in rows])
        self.table("Fixed costs per run (start-up and exit), medians",
                   ["variant", "wall ms", "cpu ms"],
                   [[v, fixed_wall[v] * 1e3, fixed_cpu[v] * 1e3] for v in variants])

    def hotpath_row(self, depth, threads, pairs, s, fixed_wall, fixed_cpu):
        def per_pair_cpu(v):
            return med(r["cpu_ns"] / pairs for r in s[v]) if v in s else None

        def e2e(v, base, key, fixed):
            if v not in s:
                return None
            t = med(r[key] for r in s[v]) - fixed[v]
            t0 = med(r[key] for r in s[base]) - fixed[base]
            return (t - t0) / pairs * 1e9

        def best_cpu(v, base):
            if v not in s:
                return None
            return (min(r["cpu_ns"] for r in s[v]) - min(r["cpu_ns"] for r in s[base])) / pairs

        def best_e2e(v, base):
            if v not in s:
                return None
            return (min(r["cpu_s"] for r in s[v]) - fixed_cpu[v] -
                    min(r["cpu_s"] for r in s[base]) + fixed_cpu[base]) / pairs * 1e9

        base_cuda, base_malloc = per_pair_cpu("cuda"), per_pair_cpu("malloc")
        mt_app = per_pair_cpu("memtrace-sink") - base_cuda
        ht_pre = per_pair_cpu("heaptrack-preload")
        ht_pre = ht_pre - base_malloc if ht_pre is not None else None
        mt_e2e = e2e("memtrace", "cuda", "wall_s", fixed_wall)
        ht_e2e = e2e("heaptrack", "malloc", "wall_s", fixed_wall)
        events = med(r.get("events_written", 0) for r in s["memtrace"])
        return {
            "depth": depth, "threads": threads, "pairs": pairs,
            "base_cuda_ns": base_cuda, "base_malloc_ns": base_malloc,
            "mt_app_ns": mt_app, "ht_preload_ns": ht_pre, "app_ratio": ratio(mt_app, ht_pre),
            # wall clock, in results.json only: on a shared 2-core machine the
            # noise of the fixed costs (heaptrack's script: 0.3-0.9 s) swamps it
            "mt_e2e_wall_ns": mt_e2e, "ht_e2e_wall_ns": ht_e2e,
            "mt_e2e_cpu_ns": e2e("memtrace", "cuda", "cpu_s", fixed_cpu),
            "ht_e2e_cpu_ns": e2e("heaptrack", "malloc", "cpu_s", fixed_cpu),
            "app_ratio_best": ratio(best_cpu("memtrace-sink", "cuda"),
                                    best_cpu("heaptrack-preload", "malloc")),
            "e2e_ratio": ratio(e2e("memtrace", "cuda", "cpu_s", fixed_cpu),
                               e2e("heaptrack", "malloc", "cpu_s", fixed_cpu)),
            "e2e_ratio_best": ratio(best_e2e("memtrace", "cuda"),
                                    best_e2e("heaptrack", "malloc")),
            "mt_app_real_writer_ns": per_pair_cpu("memtrace") - base_cuda,
            "mt_wait_ns_per_event": med(r.get("producer_wait_ns", 0) for r in s["memtrace"])
            / max(events, 1),
            "mt_sink_wait_ns_per_event": med(r.get("producer_wait_ns", 0)
                                             for r in s["memtrace-sink"]) / max(events, 1),
            "bytes_per_event": med(r["bytes"] / r["events_written"] for r in s["memtrace"]),
            "events_ok": all(r.get("events_ok") for r in s["memtrace"]),
        }

    def trace_bytes(self):
        """Trace bytes per event: the hot path's churn at depth 20, one
        thread, kept for the per-table breakdown."""
        rows = []
        trace = self.trace_path()
        pairs = 50000 if self.args.quick else 200000
        self.run(self.churn_cmd("async", pairs, 20, 1),
                 self.env({"LD_PRELOAD": self.lib, "MEMTRACE_OUTPUT": trace}))
        facts = trace_facts(trace)
        per_table = dbstat(trace)
        os.unlink(trace)
        n = facts["events_written"]
        rows.append(["whole file", facts["bytes"], facts["bytes"] / n])
        big = [(name, size) for name, size in per_table if size > 4096]
        rest = sum(size for name, size in per_table if size <= 4096)
        for name, size in big:
            rows.append([name + " table", size, size / n])
        if rest:
            rows.append(["%d other tables and indexes (one page each)"
                         % (len(per_table) - len(big)), rest, rest / n])
        self.results["trace_bytes"] = {"events": n, "file_bytes": facts["bytes"],
                                       "bytes_per_event": facts["bytes"] / n,
                                       "tables": per_table}
        self.table("Trace bytes per event (churn, depth 20, 1 thread, %d events)" % n,
                   ["part", "bytes", "bytes/event"], rows)

    def producer_section(self):
        """The application-thread steps alone, from the capture core."""
        iters = 100000 if self.args.quick else 400000
        runs = self.runs(5, 3)
        modes = ["none", "pair", "unwind", "intern", "push"]
        depths = [20] if self.args.quick else DEPTHS
        rows, raw = [], {}
        for depth in depths:
            for threads in THREADS:
                s = {m: [] for m in modes + ["stalled"]}
                for _ in range(runs):
                    for m in modes:
                        s[m].append(self.run([self.producer, "--mode", m, "--iterations",
                                              str(iters), "--depth", str(depth), "--threads",
                                              str(threads)], self.env(sim=False)))
                    if threads == 1:
                        s["stalled"].append(self.run(
                            [self.producer, "--mode", "pair", "--stalled", "--iterations",
                             str(iters), "--depth", str(depth)], self.env(sim=False)))
                per = {m: med(r["cpu_ns"] / iters for r in s[m]) for m in s if s[m]}
                none = per["none"]
                row = {"depth": depth, "threads": threads,
                       **{m: per[m] - none for m in per if m != "none"},
                       "wait_ns_per_pair": med(r["wait_ns"] / iters for r in s["pair"])}
                rows.append(row)
                raw[f"d{depth}t{threads}"] = s
        self.results["producer"] = {"iterations": iters, "runs": runs, "rows": rows,
                                    "raw": raw}
        self.table("Application thread, capture core only: ns per operation "
                   "(CPU, call chain's own cost removed; medians of %d runs)" % runs,
                   ["depth", "thr", "pair (discarding consumer)", "pair (stalled writer)",
                    "unwind", "intern", "2 pushes", "wait/pair"],
                   [[r["depth"], r["threads"], r["pair"], r.get("stalled"), r["unwind"],
                     r["intern"], r["push"], r["wait_ns_per_pair"]] for r in rows])

    def throughput(self):
        """Events per second into the trace, 8 producers, none lost."""
        pairs = 250000 if self.args.quick else 1000000
        runs = self.runs(3, 2)
        s, base = [], []
        for _ in range(runs):
            base.append(self.run(self.churn_cmd("async", pairs, 20, 8), self.env()))
            trace = self.trace_path()
            r = self.run(self.churn_cmd("async", pairs, 20, 8),
                         self.env({"LD_PRELOAD": self.lib, "MEMTRACE_OUTPUT": trace}))
            r.update(trace_facts(trace))
            os.unlink(trace)
            s.append(r)
        expected = 2 * pairs + 3  # the pairs, the warm-up pair, the device's first use
        res = {
            "pairs": pairs, "runs": runs, "expected_events": expected,
            "events_per_s": med(r["events_written"] / (r["end_monotonic_ns"] / 1e9) for r in s),
            "lost": max(expected - r["events_in_table"] for r in s),
            "gaps": max(r["seq_gaps"] for r in s),
            "wait_ns_per_event": med(r["producer_wait_ns"] / r["events_written"] for r in s),
            "wait_share": med(r["producer_wait_ns"] / (8 * r["wall_ns"]) for r in s),
            "rss_tool_mib": (med(r["maxrss_kib"] for r in s) -
                             med(r["maxrss_kib"] for r in base)) / 1024,
            "rss_base_mib": med(r["maxrss_kib"] for r in base) / 1024,
            "raw": {"memtrace": s, "base": base},
        }
        self.results["throughput"] = res
        self.table("Sustained throughput: 8 threads, depth 20, %d pairs (medians of %d runs)"
                   % (pairs, runs),
                   ["events/s", "events lost", "seq gaps", "producer wait ns/event",
                    "wait share of thread time", "tool RSS MiB"],
                   [[res["events_per_s"], res["lost"], res["gaps"], res["wait_ns_per_event"],
                     res["wait_share"], res["rss_tool_mib"]]])

    def flight_section(self):
        """Flight mode (MEMTRACE_FLIGHT) against the full trace, interleaved
        run by run: what an event costs the application thread and the
        writer, 1 and 8 threads at depth 20; then one long run under a
        64 MiB bound, its file polled for size and its totals checked
        against the program's own count."""
        pairs = 50000 if self.args.quick else 200000
        runs = self.runs(5, 3)
        rows, raw = [], {}
        for threads in THREADS:
            s = {"cuda": [], "full": [], "flight": []}
            for _ in range(runs):
                for v in s:
                    extra, trace = {}, None
                    if v != "cuda":
                        trace = self.trace_path()
                        extra = {"LD_PRELOAD": self.lib, "MEMTRACE_OUTPUT": trace}
                        if v == "flight":
                            extra["MEMTRACE_FLIGHT"] = "4M"
                    r = self.run(self.churn_cmd("async", pairs, 20, threads), self.env(extra))
                    if trace:
                        r.update(light_facts(trace))
                        remove_trace(trace)
                    s[v].append(r)
            # the CPU of the process beyond the loop's threads: the writer,
            # less what the program spends there without a tool
            other = {v: med(r["cpu_s"] * 1e9 - r["cpu_ns"] for r in s[v]) for v in s}
            app0 = med(r["cpu_ns"] for r in s["cuda"])
            for v in ("full", "flight"):
                events = med(r["events_written"] for r in s[v])
                rows.append({
                    "threads": threads, "mode": v, "runs": runs, "events": events,
                    "app_ns_per_pair": (med(r["cpu_ns"] for r in s[v]) - app0) / pairs,
                    "writer_ns_per_event": (other[v] - other["cuda"]) / events,
                    "wait_ns_per_event": med(r["producer_wait_ns"] / r["events_written"]
                                             for r in s[v]),
                    "wall_s": med(r["wall_s"] for r in s[v]),
                    "trace_mib": med(r["bytes"] for r in s[v]) / 2**20,
                })
            raw[f"threads-{threads}"] = s
        self.table("Flight mode (4 MiB bound) against the full trace: churn, depth 20, "
                   "%d pairs (medians of %d runs)" % (pairs, runs),
                   ["threads", "mode", "app thread ns/pair added", "writer CPU ns/event",
                    "producer wait ns/event", "wall s", "trace MiB"],
                   [[r["threads"], r["mode"], r["app_ns_per_pair"], r["writer_ns_per_event"],
                     r["wait_ns_per_event"], r["wall_s"], r["trace_mib"]] for r in rows])
        long = self.flight_long(5000000 if self.args.quick else 50000000)
        self.results["flight"] = {"rows": rows, "long": long, "raw": raw}
        self.table("Flight mode, one long run: %d events under MEMTRACE_FLIGHT=64M"
                   % long["events_expected"],
                   ["events", "wall s", "largest file MiB (polled)", "within bound",
                    "totals exact", "report s"],
                   [[long["events_reported"], long["wall_s"], long["largest_mib"],
                     long["within_bound"], long["exact"], long["report_s"]]])

    def flight_long(self, pairs):
        """pairs alloc/free pairs on one thread under a 64 MiB bound; the
        file (main and log) sampled every 50 ms."""
        bound = 64 << 20
        trace = self.trace_path()
        env = self.env({"LD_PRELOAD": self.lib, "MEMTRACE_OUTPUT": trace,
                        "MEMTRACE_FLIGHT": "64M"})
        t0 = time.perf_counter()
        p = subprocess.Popen(self.churn_cmd("async", pairs, 20, 1), env=env, cwd=self.scratch,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        largest = 0
        while p.poll() is None:
            largest = max(largest, trace_size(trace))
            time.sleep(0.05)
        out, err = p.communicate()
        wall = time.perf_counter() - t0
        if p.returncode != 0:
            raise RuntimeError(f"bench-churn under flight mode: exit {p.returncode}\n{err[-2000:]}")
        largest = max(largest, trace_size(trace))
        kv = parse_kv(out)
        t1 = time.perf_counter()
        rep = json.loads(subprocess.run([self.reporter, trace, "--format", "json"],
                                        env=self.env(sim=False), capture_output=True,
                                        text=True, check=True).stdout)
        report_s = time.perf_counter() - t1
        remove_trace(trace)
        t = rep["totals"]
        # the loop's pairs and the warm-up pair of 512 bytes; the device's first use
        expected = {"allocations": pairs + 1, "frees": pairs + 1,
                    "bytes_allocated": kv["bytes"] + 512, "live_bytes_at_end": 0,
                    "events": 2 * pairs + 3}
        got = {k: t[k] for k in expected}
        return {"pairs": pairs, "events_expected": 2 * pairs + 3, "events_reported": t["events"],
                "wall_s": wall, "largest_mib": largest / 2**20, "within_bound": largest <= bound,
                "exact": got == expected, "expected": expected, "got": got,
                "report_s": report_s}

    def python_section(self):
        """Cost of Python frames per event at 20 Python frames: python-frames.py
        (docs/python.md), run under this interpreter."""
        script = os.path.join(self.here, "python-frames.py")
        helper = os.path.join(self.build, "tests", "python", "libpy-native-helper.so")
        if not os.path.exists(helper):
            self.results["python"] = None
            print("\nPython frames: tests/python's helper is not built; skipped")
            return
        rounds = 10 if self.args.quick else 30
        r = self.run([sys.executable, script, "--build", self.build, "--python", sys.executable,
                      "--rounds", str(rounds)], self.env(sim=False))
        cells = re.findall(r"(-?\d+) \((\d+)\+(\d+)\)", r["stdout"])
        if len(cells) != 3:
            raise RuntimeError("python-frames.py said:\n" + r["stdout"])
        names = ["native", "native-deep", "python"]
        added = {n: int(c[0]) for n, c in zip(names, cells)}
        shape = {n: f"{c[1]}+{c[2]}" for n, c in zip(names, cells)}
        res = {"rounds": rounds, "added_ns": added, "stack": shape,
               "python_frames_cost_ns": added["python"] - added["native-deep"],
               "python": platform.python_version(), "output": r["stdout"]}
        self.results["python"] = res
        self.table("Python frames: ns memtrace adds per recorded allocation (python-frames.py, "
                   "Python %s, best of %d rounds; stack = native+Python frames)"
                   % (res["python"], rounds),
                   ["native", "native, as deep", "20 Python frames", "Python frames cost"],
                   [[f"{added['native']} ({shape['native']})",
                     f"{added['native-deep']} ({shape['native-deep']})",
                     f"{added['python']} ({shape['python']})",
                     res["python_frames_cost_ns"]]])

    def generated(self, name, args):
        """The trace gen-trace makes with args, kept in OUT for the next
        run (the same arguments make the same trace)."""
        trace = os.path.join(self.out, name + ".db")
        stamp = trace + ".args"
        made_by = " ".join(args) + " 2"
        if not (os.path.exists(trace) and os.path.exists(stamp)
                and open(stamp).read() == made_by):
            self.run([self.gen, "--out", trace] + args, self.env(sim=False))
            with open(stamp, "w") as f:
                f.write(made_by)
        return trace

    def heaptrack_trace(self, pairs):
        """heaptrack's trace of the churn with pairs malloc/free pairs
        (depth 20, one thread), kept in OUT; None without heaptrack."""
        if not self.heaptrack:
            return None
        ht = os.path.join(self.out, f"heaptrack-churn-{pairs}")
        if not os.path.exists(ht + ".zst"):
            self.run([self.heaptrack, "-o", ht] + self.churn_cmd("malloc", pairs, 20, 1),
                     self.env())
        return ht + ".zst" if os.path.exists(ht + ".zst") else None

    def memtrace_churn_trace(self, pairs):
        """memtrace's trace of the same churn as heaptrack_trace's, on the
        simulated device (cudaMallocAsync and cudaFreeAsync), kept in OUT:
        a trace as the writer makes it, not gen-trace's."""
        trace = os.path.join(self.out, f"memtrace-churn-{pairs}.db")
        if not os.path.exists(trace):
            part = trace + ".part"
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(part + suffix):
                    os.unlink(part + suffix)
            self.run(self.churn_cmd("async", pairs, 20, 1),
                     self.env({"LD_PRELOAD": self.lib, "MEMTRACE_OUTPUT": part}))
            if not trace_facts(part)["events_ok"]:
                raise RuntimeError(f"{part}: events lost or out of order")
            for suffix in ("-wal", "-shm"):  # the trace as the writer left it
                if os.path.exists(part + suffix):
                    os.rename(part + suffix, trace + suffix)
            os.rename(part, trace)
        return trace

    def scale_section(self):
        """Issue #18, side by side in one run: memtrace-report on 10M
        events (each format), of gen-trace and of memtrace's trace of a
        churn, against heaptrack_print on heaptrack's trace of the same
        churn; the reader alone (raw bytes, the
        pages, SQLite's rows); the HTML page's size; 256 ranks of 100,000
        events read on 1 thread and on 2; with --big, 100M events. With
        --before REPORTER, that memtrace-report too (an earlier build),
        in the same interleaved runs."""
        n = 10000000
        trace = self.generated("gen-10000000", ["--events", str(n)])
        ht = self.heaptrack_trace(n // 2)
        churn = self.memtrace_churn_trace(n // 2)
        churn_events = trace_facts(churn)["events_written"]
        html = os.path.join(self.scratch, "page.html")
        ranks = [self.generated(f"rank-{r}", ["--events", str(RANK_EVENTS), "--rank", str(r),
                                              "--seed", str(r + 1)]) for r in range(RANKS)]
        cases = {f: [self.reporter, trace, "--format", f, "--no-progress", "-o",
                     html if f == "html" else os.devnull] for f in ("json", "text", "html")}
        for f in ("json", "text", "html"):
            cases[f"{f}, churn"] = [self.reporter, churn, "--format", f, "--no-progress", "-o",
                                    os.devnull]
        if ht:
            cases["heaptrack_print"] = ["sh", "-c", 'exec heaptrack_print "$0" >/dev/null', ht]
        for m in ("raw", "pages", "sql"):
            cases["read " + m] = [self.bench_read, trace, "--" + m]
        for j in (1, 2):
            cases[f"{RANKS} ranks, --jobs {j}"] = [self.reporter, "--format", "json", "--jobs",
                                                   str(j), "-o", os.devnull] + ranks
        before = self.args.before
        if before:
            for f in ("json", "text", "html"):
                cases[f"before: {f}"] = [before, trace, "--format", f, "--no-progress", "-o",
                                         os.devnull]
            cases[f"before: {RANKS} ranks, --jobs 2"] = [before, "--format", "json", "--jobs",
                                                         "2", "-o", os.devnull] + ranks
        # What each case reads, read once just before it runs: this machine's
        # page cache lets go of a file within a minute or two even with
        # most of the memory free, and the targets are for reading from it.
        inputs = {k: [a for a in cmd[1:] if a.endswith((".db", ".zst"))]
                  for k, cmd in cases.items()}
        samples = {k: [] for k in cases}

        def timed(k, cmd):
            cached = warm(inputs[k])
            r = self.run(cmd, self.env(sim=False))
            r["cached_before"] = cached
            samples[k].append(r)

        for _ in range(self.runs(3, 2)):  # interleaved: other load falls on all alike
            for k, cmd in cases.items():
                timed(k, cmd)
        if self.args.big:
            big = self.generated("gen-100000000", ["--events", "100000000"])
            big_cases = {"json, 100M events": self.reporter}
            if before:
                big_cases["before: json, 100M events"] = before
            for k in big_cases:
                samples[k] = []
                inputs[k] = [big]
            for _ in range(2):  # interleaved, as above
                for k, rep in big_cases.items():
                    timed(k, [rep, big, "--format", "json", "--no-progress", "-o", os.devnull])
        rows = []
        for k, s in samples.items():
            events = (RANKS * RANK_EVENTS if "ranks" in k else 100000000 if "100M" in k
                      else churn_events if "churn" in k else n)
            t = med(r["wall_s"] for r in s)
            rows.append([k, events, t, events / t, med(r["cpu_s"] for r in s),
                         max(r["maxrss_kib"] for r in s) / 1024,
                         "%.0f%%" % (100 * min(r["cached_before"] for r in s))])
        self.results["scale"] = {"rows": rows, "raw": samples,
                                 "html_bytes": os.path.getsize(html),
                                 "trace_bytes": os.path.getsize(trace),
                                 "heaptrack_bytes": os.path.getsize(ht) if ht else None}
        self.table(f"Scale (medians of {len(samples['json'])} interleaved runs, each after "
                   "reading its traces into the page cache (cached before: the least share "
                   "of them that was still there); HTML page "
                   f"{os.path.getsize(html):,} bytes; trace {os.path.getsize(trace):,} bytes"
                   + (f", heaptrack's {os.path.getsize(ht):,}" if ht else "") + ")",
                   ["what", "events", "seconds", "events/s", "CPU s", "peak RSS MiB",
                    "cached before"], rows)

    def report_section(self):
        """memtrace-report on generated traces of 1M and 10M events; and, in
        full mode, 1M events whose addresses are never reused."""
        cases = [(1000000, False)] if self.args.quick else \
            [(1000000, False), (10000000, False), (1000000, True)]
        rows, raw = [], {}
        for n, unique in cases:
            name = f"gen-{n}" + ("-unique" if unique else "")
            trace = os.path.join(self.out, name + ".db")
            stamp = trace + ".args"
            args = [self.gen, "--events", str(n), "--out", trace] + \
                (["--unique-addresses"] if unique else [])
            # the same generator run makes the same trace; "2": addresses reused
            made_by = " ".join(args[1:3] + args[5:]) + " 2"
            if not (os.path.exists(trace) and os.path.exists(stamp)
                    and open(stamp).read() == made_by):
                self.run(args, self.env(sim=False))
                with open(stamp, "w") as f:
                    f.write(made_by)
            # 10M events and the unique-address case take long: two runs each
            runs = self.runs(5, 3) if n <= 1000000 and not unique else self.runs(2, 2)
            for fmt in ("json",) if unique else ("json", "text", "html"):
                s = []
                for _ in range(runs):  # from the page cache, as in scale_section
                    warm([trace])
                    s.append(self.run([self.reporter, trace, "--format", fmt, "-o",
                                       os.devnull], self.env(sim=False)))
                t = med(r["wall_s"] for r in s)
                rows.append({"events": n, "addresses": "unique" if unique else "reused",
                             "format": fmt, "runs": runs, "seconds": t, "events_per_s": n / t,
                             "peak_rss_mib": max(r["maxrss_kib"] for r in s) / 1024,
                             "trace_mib": os.path.getsize(trace) / 2**20})
                raw[f"{name}-{fmt}"] = s
        self.results["report"] = {"rows": rows, "raw": raw}
        self.table("Reporter: generated traces (medians)",
                   ["events", "addresses", "format", "seconds", "events/s", "peak RSS MiB",
                    "trace MiB"],
                   [[r["events"], r["addresses"], r["format"], r["seconds"], r["events_per_s"],
                     r["peak_rss_mib"], r["trace_mib"]] for r in rows])

    def nocuda(self):
        """Preloaded into a process that never uses CUDA."""
        runs = self.runs(60, 20)
        base, mt = [], []
        for _ in range(runs):
            base.append(self.run([self.nocuda_prog], self.env(sim=False))["wall_s"])
            mt.append(self.run([self.nocuda_prog], self.env({"LD_PRELOAD": self.lib},
                                                        sim=False))["wall_s"])
        cwd = tempfile.mkdtemp(dir=self.scratch)
        env = self.env({"LD_PRELOAD": self.lib}, sim=False)
        del env["MEMTRACE_QUIET"]
        self.run([self.nocuda_prog], env, cwd=cwd)  # the default output pattern, in cwd
        left = os.listdir(cwd)
        created = strace_creates(self.nocuda_prog, env, cwd)
        res = {"runs": runs, "base_ms": med(base) * 1e3, "memtrace_ms": med(mt) * 1e3,
               "added_ms": (med(mt) - med(base)) * 1e3, "files_left": left,
               "files_created": created}
        self.results["nocuda"] = res
        self.table("Preload into a process without CUDA (tests/programs/nocuda; medians of %d)"
                   % runs, ["without ms", "with ms", "added ms", "files left in cwd",
                            "files created (strace)"],
                   [[res["base_ms"], res["memtrace_ms"], res["added_ms"], len(left),
                     "n/a" if created is None else len(created)]])

    def profile(self):
        """Instruction counts under callgrind: stable on a noisy machine."""
        if not shutil.which("valgrind"):
            self.results["profile"] = None
            return
        pairs = 5000 if self.args.quick else 20000
        res = {"pairs": pairs}
        # heaptrack is left out: under valgrind its preload library records
        # nothing (its output stays empty), so there is nothing to count.
        app = {v: self.callgrind(v, pairs) for v in ("cuda", "memtrace")}
        per = lambda v: app[v]["app_ir"] / pairs
        res["ir_per_pair"] = {v: per(v) for v in app}
        res["mt_app_ir"] = per("memtrace") - per("cuda")
        res["writer_ir_per_event"] = app["memtrace"]["writer_ir"] / (2 * pairs)
        res["app_top"] = app["memtrace"]["app_top"]
        res["writer_top"] = app["memtrace"]["writer_top"]
        self.results["profile"] = res
        self.table("callgrind: instructions per alloc/free pair (depth 20, 1 thread, %d pairs)"
                   % pairs,
                   ["app thread without", "app thread with memtrace", "added",
                    "writer per event"],
                   [[per("cuda"), per("memtrace"), res["mt_app_ir"],
                     res["writer_ir_per_event"]]])
        self.table("callgrind: top functions on the application thread (memtrace run)",
                   ["instructions/pair", "function"],
                   [[ir / pairs, fn] for ir, fn in res["app_top"]])
        self.table("callgrind: top functions in the writer thread",
                   ["instructions/event", "function"],
                   [[ir / (2 * pairs), fn] for ir, fn in res["writer_top"]])

    def callgrind(self, variant, pairs):
        d = tempfile.mkdtemp(dir=self.scratch)
        extra = {}
        if variant == "memtrace":
            extra = {"LD_PRELOAD": self.lib, "MEMTRACE_OUTPUT": os.path.join(d, "t.db")}
        cmd = ["valgrind", "--tool=callgrind", "--trace-children=yes",
               "--separate-threads=yes", "--toggle-collect=work", "--toggle-collect=writer_main",
               "--callgrind-out-file=" + os.path.join(d, "cg.%p"), "env"] + \
            [f"{k}={v}" for k, v in extra.items()] + \
            self.churn_cmd("async", pairs, 20, 1)
        self.run(cmd, self.env())
        res = {"app_ir": 0, "writer_ir": 0, "app_top": [], "writer_top": []}
        for f in sorted(os.listdir(d)):
            if not f.startswith("cg."):
                continue
            path = os.path.join(d, f)
            text = open(path, errors="replace").read()
            m = re.search(r"^totals:\s+(\d+)", text, re.M)
            total = int(m.group(1)) if m else 0
            if not total:
                continue
            role = "writer" if "writer_main" in text else "app" if "down_a" in text else None
            if role:
                res[role + "_ir"] += total
                res[role + "_top"] = annotate_top(path)
        return res

    # ---- output ----

    def table(self, title, header, rows):
        self.tables.append((title, header, rows))
        print_table(title, header, rows)

    def write(self):
        # One section alone (meson test --benchmark runs them one by one)
        # writes files of its own.
        sections = self.args.section or []
        name = "results-" + sections[0] if len(sections) == 1 else "results"
        with open(os.path.join(self.out, name + ".json"), "w") as f:
            json.dump(self.results, f, indent=1, default=str)
        with open(os.path.join(self.out, name + ".md"), "w") as f:
            m = self.results["machine"]
            f.write(f"Machine: {m['cpu']}, {m['cores']} cores, {m['kernel']}; "
                    f"{self.results['date']}; build {self.build}\n\n")
            load = self.results.get("load", {})
            if load:
                f.write("Load average (1 min, highest seen) per section: " +
                        ", ".join(f"{k} {v:.1f}" for k, v in load.items()) + "\n\n")
            for title, header, rows in self.tables:
                f.write(f"### {title}\n\n| " + " | ".join(header) + " |\n|")
                f.write("---|" * len(header) + "\n")
                for r in rows:
                    f.write("| " + " | ".join(fmt(c) for c in r) + " |\n")
                f.write("\n")
        shutil.rmtree(self.scratch, ignore_errors=True)
        print(f"\nresults: {self.out}/{name}.md, {self.out}/{name}.json")


# ---- helpers ----

def parse_kv(text):
    """The benchmark programs' result line: key=value pairs, first key
    pairs or iterations (heaptrack's script prints lines of its own)."""
    kv = {}
    for line in text.splitlines():
        if not line.startswith(("pairs=", "iterations=")):
            continue
        for k, v in (p.split("=", 1) for p in line.split() if "=" in p):
            try:
                kv[k] = int(v)
            except ValueError:
                kv[k] = v
    return kv


def trace_facts(path):
    """What the trace says about the run: events, waits, size; checked for
    loss (every seq from 0 present)."""
    facts = {"bytes": os.path.getsize(path)}
    if os.path.exists(path + "-wal"):  # not checkpointed: it is part of the trace
        facts["bytes"] += os.path.getsize(path + "-wal")
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    meta = dict(db.execute("SELECT key, value FROM meta"))
    n, top = db.execute("SELECT count(*), max(seq) FROM events").fetchone()
    db.close()
    facts["events_written"] = int(meta.get("events_written", 0))
    facts["producer_wait_ns"] = int(meta.get("producer_wait_ns", 0))
    facts["end_monotonic_ns"] = int(meta.get("end_monotonic_ns", 0))
    facts["events_in_table"] = n
    facts["seq_gaps"] = (top + 1 - n) if top is not None else 0
    # The sink discards event rows: then the count says nothing.
    facts["events_ok"] = n == 0 or (n == facts["events_written"] and facts["seq_gaps"] == 0)
    return facts


def trace_size(path):
    """The trace's main file and its write-ahead log, as they are now."""
    size = 0
    for suffix in ("", "-wal"):
        try:
            size += os.path.getsize(path + suffix)
        except FileNotFoundError:
            pass
    return size


def light_facts(path):
    """What the writer says of the run, without reading the events."""
    facts = {"bytes": trace_size(path)}
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    meta = dict(db.execute("SELECT key, value FROM meta"))
    db.close()
    for key in ("events_written", "producer_wait_ns", "end_monotonic_ns"):
        facts[key] = int(meta.get(key, 0))
    return facts


def remove_trace(path):
    for suffix in ("", "-wal", "-shm"):
        try:
            os.unlink(path + suffix)
        except FileNotFoundError:
            pass


def resident(path):
    """The share of path's pages in the page cache now (mincore(2) on a
    mapping of it), or None where that cannot be asked."""
    size = os.path.getsize(path)
    if not size:
        return 1.0
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                              ctypes.c_int, ctypes.c_long]
        libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
        n = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
        vec = (ctypes.c_ubyte * n)()
        with open(path, "rb") as f:
            addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, f.fileno(), 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            return None
        try:
            if libc.mincore(addr, size, vec) != 0:
                return None
        finally:
            libc.munmap(addr, size)
        return sum(v & 1 for v in vec) / n
    except (OSError, AttributeError):
        return None


def warm(paths):
    """Reads paths once, so that the run after reads them from the page
    cache; returns the smallest share of them that was there before."""
    least = 1.0
    for path in paths:
        r = resident(path)
        if r is not None:
            least = min(least, r)
        with open(path, "rb") as f:
            while f.read(16 << 20):
                pass
    return least


def dbstat(path):
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        rows = db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name "
                          "ORDER BY 2 DESC").fetchall()
        db.close()
        return rows
    except sqlite3.Error:
        return []


def python_frames(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    n = db.execute("SELECT count(*) FROM frames WHERE kind = 1").fetchone()[0]
    db.close()
    return n


def strace_creates(prog, env, cwd):
    if not shutil.which("strace"):
        return None
    log = os.path.join(cwd, "..", "strace.log")
    subprocess.run(["strace", "-f", "-qq", "-o", log, "-e",
                    "trace=open,openat,creat,mkdir,mkdirat,rename,renameat,link,symlink",
                    prog], env=env, cwd=cwd, stdout=subprocess.DEVNULL, check=False)
    created = [l.strip() for l in open(log)
               if ("O_CREAT" in l or re.search(r"\b(creat|mkdir|mkdirat|rename|renameat|"
                                                r"link|symlink)\(", l)) and "= -1" not in l]
    os.unlink(log)
    return created


def annotate_top(path, n=14):
    out = subprocess.run(["callgrind_annotate", path], capture_output=True, text=True).stdout
    top = []
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\([\s\d.]+%\)\s+(.*)", line)
        if m and "PROGRAM TOTALS" not in line:
            fn = re.sub(r"\s+\[.*\]$", "", m.group(2))
            fn = re.sub(r"^.*/(?=[^/]*:)", "", fn)  # file's directory off
            top.append((int(m.group(1).replace(",", "")), fn))
    return top[:n]


def med(values):
    v = [x for x in values if x is not None]
    return statistics.median(v) if v else None


def ratio(a, b):
    return a / b if a is not None and b else None


def fmt(c):
    if c is None:
        return "n/a"
    if isinstance(c, float):
        if abs(c) >= 1000:
            return f"{c:,.0f}"
        if abs(c) >= 10:
            return f"{c:.0f}"
        return f"{c:.2f}"
    return str(c)


def print_table(title, header, rows):
    cells = [header] + [[fmt(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    print(f"\n{title}")
    for i, r in enumerate(cells):
        print("  " + "  ".join(c.rjust(w) for c, w in zip(r, widths)))
        if i == 0:
            print("  " + "  ".join("-" * w for w in widths))
    sys.stdout.flush()


def machine():
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release(),
            "python": platform.python_version()}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.environ.get("MEMTRACE_BUILD", "build"))
    ap.add_argument("--out")
    ap.add_argument("--quick", action="store_true", help="fewer runs, depth 20 only, 1M only")
    ap.add_argument("--runs", type=int, help="runs per configuration (default 5, quick 3)")
    ap.add_argument("--section", action="append", choices=SECTIONS)
    ap.add_argument("--big", action="store_true", help="scale: also 100M events (2.6 GB of trace)")
    ap.add_argument("--before", metavar="REPORTER",
                    help="scale: also this memtrace-report (an earlier build), side by side")
    args = ap.parse_args()
    b = Bench(args)
    print(f"memtrace benchmarks: {b.results['machine']['cpu']}, "
          f"{b.results['machine']['cores']} cores; build {b.build}"
          + ("; heaptrack " + b.heaptrack_preload if b.heaptrack_preload
             else "; heaptrack not found: its columns are n/a"))
    run = {"hotpath": b.hotpath, "bytes": b.trace_bytes, "producer": b.producer_section, "throughput": b.throughput,
           "flight": b.flight_section,
           "python": b.python_section, "report": b.report_section, "scale": b.scale_section,
           "nocuda": b.nocuda,
           "profile": b.profile}
    for s in args.section or SECTIONS:
        t0, load0 = time.monotonic(), os.getloadavg()[0]
        run[s]()
        load = max(load0, os.getloadavg()[0])
        b.results.setdefault("seconds", {})[s] = time.monotonic() - t0
        b.results.setdefault("load", {})[s] = load
        if load > os.cpu_count():
            # Other work on the machine: times are not to be trusted, the
            # instruction counts (profile) still are.
            print(f"warning: load average {load:.1f} on {os.cpu_count()} cores during "
                  f"{s}: its times are disturbed", file=sys.stderr)
    b.write()


if __name__ == "__main__":
    main()
