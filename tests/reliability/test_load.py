"""Load: 64 threads allocating and freeing on the simulated device (every
call recorded, exactly, per thread; the tool's memory bounded and not
growing), and 100 forks in a row, each child with its own complete trace.
MEMTRACE_SOAK_LOAD_SECONDS and MEMTRACE_SOAK_FORKS make them longer."""
import collections
import ctypes
import os
import random
import re
import signal
import subprocess
import threading
import time

import mtest
import rel

MiB = 1 << 20
THREADS = 64
# What the tool may add to the program's peak resident memory: the event
# queue (5 MiB), the stacks seen, the writer's maps and SQLite's cache.
# Measured at about 30 MiB (docs/reliability.md); twice that is a bug.
MAX_TOOL_RSS = 64 * MiB
# Growth of the traced process's resident memory after its first second:
# the queue and caches are full by then, so more is a leak.
MAX_GROWTH = 16 * MiB


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


PTRACE_SEIZE, PTRACE_INTERRUPT = 0x4206, 0x4207
WALL = 0x40000000


def stop_thread(tid):
    """Stops one thread of a child process and leaves the others running:
    a ptrace group-stop of that thread alone (SIGSTOP would stop them
    all). False where ptrace is refused."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    if libc.ptrace(PTRACE_SEIZE, tid, None, None) != 0:
        return False
    if libc.ptrace(PTRACE_INTERRUPT, tid, None, None) != 0:
        return False
    os.waitpid(tid, WALL)
    return True


def thread_named(pid, name, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/comm") as f:
                    if f.read().strip() == name:
                        return int(tid)
            except FileNotFoundError:
                pass
        time.sleep(0.01)
    raise AssertionError(f"no thread {name} in {pid}")


class Load(mtest.TraceTest):
    def run_sampled(self, cmd, env):
        """Runs cmd, sampling its resident memory every 100 ms."""
        samples = []
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        start = time.monotonic()

        def sample():
            while proc.poll() is None:
                kb = rss_kb(proc.pid)
                if kb:
                    samples.append((time.monotonic() - start, kb))
                time.sleep(0.1)
        t = threading.Thread(target=sample)
        t.start()
        out, err = proc.communicate(timeout=900)
        t.join()
        return proc.returncode, out, err, samples, time.monotonic() - start

    def test_64_threads(self):
        seconds = rel.knob("MEMTRACE_SOAK_LOAD_SECONDS", 3.0)
        args = [rel.rel_program("churn"), str(THREADS), str(seconds), "--keep", "16"]
        rc, out, err, _, _ = self.run_sampled(args, mtest.sim_env())
        self.assertEqual(rc, 0, err)
        plain_hwm = int(re.search(r"vm_hwm_kb (\d+)", err).group(1))

        trace = os.path.join(self.tmp, "load.db")
        rc, out, err, samples, wall = self.run_sampled(args, rel.traced_env(trace))
        self.assertEqual(rc, 0, err)
        traced_hwm = int(re.search(r"vm_hwm_kb (\d+)", err).group(1))
        tids = dict(re.findall(r"tid (\d+) (\d+)", err))
        want = {}
        for i, allocs, frees in re.findall(r"thread (\d+): allocs (\d+) frees (\d+)", out):
            want[int(tids[i])] = (int(allocs), int(frees))
        self.assertEqual(len(want), THREADS)

        conn = rel.open_ro(trace)
        self.addCleanup(conn.close)
        n, top = conn.execute("SELECT count(*), max(seq) FROM events").fetchone()
        self.assertEqual(n, top + 1, "seq has gaps")
        got = collections.defaultdict(lambda: [0, 0])
        for tid, kind, count in conn.execute(
                "SELECT thread, kind, count(*) FROM events WHERE kind IN (1, 2) "
                "GROUP BY thread, kind"):
            got[tid][kind - 1] = count
        # the main thread's share is the device event only
        self.assertEqual({t: tuple(c) for t, c in got.items()}, want)
        meta = rel.meta(conn)
        self.assertEqual(int(meta["events_written"]), n)
        self.assertEqual(meta["end"], "exit")
        live = conn.execute("SELECT count(*) FROM events WHERE kind = 1").fetchone()[0] - \
            conn.execute("SELECT count(*) FROM events WHERE kind = 2").fetchone()[0]
        self.assertEqual(live, 0)

        tool = (traced_hwm - plain_hwm) * 1024
        early = [kb for t, kb in samples if 0.9 <= t <= 1.5]
        late = max(kb for _, kb in samples) if samples else 0
        growth = (late - min(early)) * 1024 if early else 0
        rel.figure("load_64_threads", seconds=seconds, wall_s=round(wall, 1), events=n,
                   events_per_s=int(n / wall), producer_wait_s=round(
                       int(meta["producer_wait_ns"]) / 1e9, 1),
                   plain_hwm_mib=round(plain_hwm / 1024, 1),
                   traced_hwm_mib=round(traced_hwm / 1024, 1),
                   rss_growth_after_1s_mib=round(growth / MiB, 1),
                   trace_mib=round(os.path.getsize(trace) / MiB, 1))
        self.assertLess(tool, MAX_TOOL_RSS, f"the tool added {tool / MiB:.1f} MiB")
        self.assertLess(growth, MAX_GROWTH, f"resident memory grew {growth / MiB:.1f} MiB")

    def test_forks_in_a_row(self):
        forks = rel.knob("MEMTRACE_SOAK_FORKS", 100)
        pattern = os.path.join(self.tmp, "t-%p.db")
        cmd = [rel.rel_program("forks"), "chain", str(forks)]
        plain = subprocess.run(cmd, env=mtest.sim_env(), capture_output=True, text=True,
                               timeout=600)
        start = time.monotonic()
        traced = subprocess.run(cmd, env=rel.traced_env(pattern), capture_output=True,
                                text=True, timeout=600)
        wall = time.monotonic() - start
        self.assertEqual(plain.returncode, 0, plain.stderr)
        self.assertEqual((traced.returncode, traced.stdout), (0, plain.stdout), traced.stderr)
        traces = sorted(os.listdir(self.tmp))
        self.assertEqual(len(traces), forks + 1)
        pids = set()
        parent = []
        ppids = set()
        for name in traces:
            path = os.path.join(self.tmp, name)
            conn = rel.open_ro(path)
            try:
                self.assertEqual(rel.trace_state(path), "trace")
                meta = rel.meta(conn)
                kinds = dict(conn.execute("SELECT kind, count(*) FROM events GROUP BY kind"))
                ooms = conn.execute("SELECT count(*) FROM ooms").fetchone()[0]
            finally:
                conn.close()
            self.assertEqual(name, f"t-{meta['pid']}.db")
            self.assertEqual(meta["end"], "exit", name)
            pids.add(meta["pid"])
            if kinds == {1: 1, 2: 1, 12: 1}:
                parent.append(meta["pid"])
                continue
            # 10 pairs, the OOM, the device event
            self.assertEqual((kinds, ooms), ({1: 10, 2: 10, 3: 1, 12: 1}, 1), name)
            ppids.add(meta["ppid"])
        self.assertEqual(len(parent), 1)
        self.assertEqual(ppids, set(parent))
        self.assertEqual(len(pids), forks + 1)
        rel.figure("forks_in_a_row", forks=forks, wall_s=round(wall, 1))


    def test_writer_stopped_then_sigkill(self):
        """The writer thread stopped for seconds (ptrace: SIGSTOP would
        stop every thread) while churn's threads, one per core, allocate
        unpaced, then SIGKILL: the queue fills and the threads wait for
        room, and after memtrace recover every call churn logged as
        returned is in the trace."""
        runs = rel.knob("MEMTRACE_SOAK_STOPS", 3)
        stop_s = rel.knob("MEMTRACE_SOAK_STOP_SECONDS", 1.5)
        seed = rel.knob("MEMTRACE_SOAK_SEED", 20261129)
        rng = random.Random(seed)
        threads = max(os.cpu_count() or 1, 2)
        events = recovered = 0
        for i in range(runs):
            trace = os.path.join(self.tmp, f"w{i}.db")
            log = os.path.join(self.tmp, f"w{i}.log")
            with open(log, "w") as out:
                proc = subprocess.Popen(
                    [rel.rel_program("churn"), str(threads), "60", "--log", "--oom-every", "400"],
                    env=rel.traced_env(trace), stdout=out, stderr=subprocess.DEVNULL)
            try:
                rel.wait_for_line(log, "ready")
                time.sleep(rng.uniform(0.05, 0.5))
                writer = thread_named(proc.pid, "memtrace-writer")
                if not stop_thread(writer):
                    self.skipTest("ptrace refused: cannot stop the writer thread alone")
                time.sleep(stop_s)
                proc.send_signal(signal.SIGKILL)
                # a traced thread's exit is its tracer's to collect, before
                # the process's can be
                try:
                    while True:
                        os.waitpid(writer, WALL)
                except ChildProcessError:
                    pass
            finally:
                proc.kill()
                proc.wait()
            calls = collections.defaultdict(collections.Counter)
            with open(log) as f:
                for line in f:
                    parts = line.split()
                    if len(parts) == 3 and parts[0] in "AFO" and line.endswith("\n"):
                        calls[int(parts[1])][parts[0]] += 1
            with self.subTest(run=i, seed=seed):
                rec = subprocess.run([mtest.REPORTER, "--recover", trace], capture_output=True,
                                     text=True, timeout=300)
                self.assertEqual(rec.returncode, 0, rec.stderr)
                n_rec = int(re.search(r": (\d+) events recovered", rec.stdout).group(1))
                # the ring was full: the writer was stopped long enough
                self.assertGreater(n_rec, 30000, rec.stdout)
                conn = rel.open_ro(trace)
                n, top = conn.execute(
                    "SELECT count(*), coalesce(max(seq), -1) FROM events").fetchone()
                counts = collections.Counter(conn.execute(
                    "SELECT thread, kind FROM events WHERE kind IN (1, 2, 3)"))
                conn.close()
                self.assertEqual(n, top + 1, "events are not seq 0..n-1 without gaps")
                kind = {"A": 1, "F": 2, "O": 3}
                for tid, kinds in calls.items():
                    for k, logged in kinds.items():
                        have = counts[(tid, kind[k])]
                        self.assertGreaterEqual(have, logged,
                                                f"thread {tid}: {logged - have} {k} lost")
                        self.assertLessEqual(have, logged + 1)
                events += n
                recovered += n_rec
            for f in os.listdir(self.tmp):
                os.unlink(os.path.join(self.tmp, f))
        rel.figure("writer_stopped_sigkill", runs=runs, stop_s=stop_s, threads=threads,
                   seed=seed, events_checked=events, recovered=recovered, lost_after_recover=0)


if __name__ == "__main__":
    mtest.main()
