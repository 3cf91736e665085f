"""CUDA graphs and repeated model builds: orphaned graphs and execs, graph
memory never freed, growth across builds. The expected numbers follow the
programs (tests/programs/graph-*.c, build-leak.c: see their header
comments); graph semantics are the CUDA programming guide's."""
import mtest
from mtest import innermost

MiB = 1 << 20


def calls(db):
    rows = db.execute("SELECT a.name, e.kind, count(*), coalesce(sum(e.bytes), 0) FROM events e "
                      "JOIN apis a ON a.id = e.api GROUP BY a.name, e.kind").fetchall()
    return {(api, k): (n, b) for api, k, n, b in rows}


def slope(ys):
    """Least-squares growth per point, as docs/report-json.md defines it."""
    n = len(ys)
    mx, my = (n - 1) / 2, sum(ys) / n
    return sum((x - mx) * (y - my) for x, y in enumerate(ys)) / sum((x - mx) ** 2
                                                                      for x in range(n))


class Graphs(mtest.TraceTest):
    def test_rebuilds_leave_orphaned_execs(self):
        run = self.run_both("graph-rebuilds")
        self.assertEqual(run.rc, 0)
        builds, odd = 10, 5
        act, state = 8 * MiB, 1 * MiB
        with self.db(run.trace) as db:
            c = calls(db)
        # every build: one capture (the activation allocated and freed in the
        # graph, the state allocated only), one instantiation, one launch
        self.assertEqual(c[("cudaStreamBeginCapture", 21)][0], builds)
        self.assertEqual(c[("cudaStreamEndCapture", 22)][0], builds)
        self.assertEqual(c[("cudaMallocAsync", 1)], (2 * builds, builds * (act + state)))
        self.assertEqual(c[("cudaFreeAsync", 24)][0], builds)
        self.assertEqual(c[("cudaGraphInstantiate", 17)][0], builds)
        self.assertEqual(c[("cudaGraphLaunch", 19)][0], builds)
        self.assertEqual(c[("cudaGraphDestroy", 16)][0], builds)
        self.assertEqual(c[("cudaGraphExecDestroy", 18)][0], builds - odd)
        self.assertEqual(c[("cudaFree", 2)], (builds - odd, (builds - odd) * state))
        self.assertEqual(c[("cudaDeviceGraphMemTrim", 23)][0], 1)
        self.assertEqual(c[("memtrace_mark", 13)][0], builds)

        rep = self.report(run.trace)
        g = rep["graphs"]
        self.assertEqual((g["created"], g["destroyed"], g["execs_created"], g["execs_destroyed"]),
                         (builds, builds, builds, builds - odd))
        self.assertEqual((g["captured_allocations"], g["captured_frees"]), (2 * builds, builds))
        self.assertEqual((g["launches"], g["failed_launches"]), (builds, 0))
        orphans = g["orphaned"]
        self.assertEqual([o["kind"] for o in orphans], ["exec"] * odd)
        # each odd build's exec still pins its state, which nobody frees
        self.assertEqual([o["pinned_bytes"] for o in orphans], [state] * odd)
        for o in orphans:
            self.assertIn("instantiate", [f["function"] for f in o["frames"]])
        never = g["graph_memory_never_freed"]
        self.assertEqual((sum(n["bytes"] for n in never), sum(n["count"] for n in never)),
                         (odd * state, odd))
        leak, = rep["leaks"]
        self.assertEqual((innermost(leak), leak["bytes"], leak["mem"]),
                         ("keep_state", odd * state, "graph"))
        t = rep["totals"]
        # graph memory counts once its graph has run: the 10 states (the
        # activations live only within a launch)
        self.assertEqual((t["allocations"], t["frees"]), (builds, builds - odd))
        self.assertEqual((t["live_bytes_at_end"], t["peak_bytes"]), (odd * state, odd * state))

        growth = rep["growth"]
        self.assertEqual(growth["basis"], "marks")
        self.assertEqual([p["label"] for p in growth["points"]],
                         [f"build {i}" for i in range(builds)])
        # before build i, the states of the odd builds before it are live
        live = [(i // 2) * state for i in range(builds)]
        site, = [s for s in growth["sites"] if s["growing"]]
        self.assertEqual(site["live_bytes"], live)
        self.assertEqual(site["growth_per_point"], int(slope(live)))

    def test_orphans_share_one_pool(self):
        """graph-orphans.c: three execs left behind over one graph memory
        pool pin one graph's memory, not three; the graph kept with its
        exec claims nothing of its own; nothing exceeds the pool."""
        run = self.run_both("graph-orphans")
        self.assertEqual(run.rc, 0, run.stderr)
        work, out, builds = 32 * MiB, 2 * MiB, 6
        rep = self.report(run.trace)
        g = rep["graphs"]
        self.assertEqual((g["created"], g["destroyed"], g["execs_created"], g["execs_destroyed"]),
                         (builds, 4, builds, 3))
        self.assertEqual((g["captured_allocations"], g["captured_frees"]), (2 * builds, builds))
        # the pool: the output live in build 2's launch while build 1's exec
        # keeps its whole graph mapped
        self.assertEqual((g["pool_bytes_at_end"], g["pool_peak_bytes"]),
                         (out + work + out, out + work + out))
        execs = [o for o in g["orphaned"] if o["kind"] == "exec"]
        graphs = [o for o in g["orphaned"] if o["kind"] == "graph"]
        self.assertEqual([o["pinned_bytes"] for o in execs], [work + out] * 3)
        # build 5's graph pins through its exec; build 4's has no exec left
        self.assertEqual(sorted((o["pinned_by_exec"], o["pinned_bytes"]) for o in graphs),
                         [(False, 0), (True, 0)])
        self.assertEqual(g["orphan_execs_pinned_bytes"], work + out)
        self.assertEqual(g["orphans_pinned_bytes"], work + out)
        self.assertLessEqual(g["orphans_pinned_bytes"], g["pool_bytes_at_end"])
        self.assertEqual(g["graph_memory_never_freed"], [])
        # noted at the first launch: the device's total, never inside a capture
        self.assertEqual([d["total_bytes"] for d in rep["devices"]], [1 << 30])
        text = self.report_text(run.trace)
        self.assertIn("3 executable graphs never destroyed pin 34.0 MiB", text)
        self.assertIn("Together they pin 34.0 MiB", text)

    def test_fork_join_capture(self):
        """fork-join.cu (nvcc, kernels): one graph captured from three
        streams; the joined stream's allocation and the frees made on the
        joined streams are the graph's, so nothing leaks and nothing is
        plain device memory."""
        mtest.needs_program("fork-join")
        run = self.run_both("fork-join")
        self.assertEqual(run.rc, 0, run.stderr)
        x, y, launches = 4 * MiB, 3 * MiB // 2, 5
        with self.db(run.trace) as db:
            c = calls(db)
            joins = db.execute("SELECT count(*) FROM events WHERE kind = 25").fetchone()[0]
        self.assertEqual(c[("cudaMallocAsync", 1)], (2, x + y))  # both captured: graph memory
        self.assertEqual(c[("cudaFreeAsync", 24)][0], 2)  # both free nodes
        self.assertNotIn(("cudaFreeAsync", 2), c)  # no plain free
        self.assertEqual(joins, 2)  # b and c joined a's capture
        rep = self.report(run.trace)
        g = rep["graphs"]
        self.assertEqual((g["captured_allocations"], g["captured_frees"], g["unattached_nodes"]),
                         (2, 2, 0))
        self.assertEqual((g["created"], g["destroyed"], g["execs_created"], g["execs_destroyed"]),
                         (1, 1, 1, 1))
        self.assertEqual((g["launches"], g["failed_launches"], g["mem_trims"]), (launches, 0, 1))
        self.assertEqual((g["orphaned"], g["graph_memory_never_freed"]), ([], []))
        # both are freed in their graph: transient, never live after a launch;
        # each launch needs both at once from the pool; the trim gives it back
        self.assertEqual((g["pool_peak_bytes"], g["pool_bytes_at_end"]), (x + y, 0))
        t = rep["totals"]
        self.assertEqual((t["allocations"], t["live_bytes_at_end"], t["peak_bytes"]), (0, 0, 0))
        self.assertEqual(rep["leaks"], [])
        self.assertEqual([m["label"] for m in rep["marks"]], ["capture", "launch", "teardown"])
        self.assertEqual([d["total_bytes"] for d in rep["devices"]], [1 << 30])

    def test_graph_footprint(self):
        """graph-footprint.cu (nvcc, kernels): three graphs over one pool,
        one captured across three streams; the state of g2 is the only
        graph memory that lives past a launch."""
        mtest.needs_program("graph-footprint")
        run = self.run_both("graph-footprint")
        self.assertEqual(run.rc, 0, run.stderr)
        g1, state = 8 * MiB, 3 * MiB
        rep = self.report(run.trace)
        g = rep["graphs"]
        self.assertEqual((g["alloc_nodes"], g["captured_allocations"]), (1, 4))
        self.assertEqual((g["free_nodes"], g["captured_frees"], g["unattached_nodes"]), (1, 3, 0))
        self.assertEqual((g["launches"], g["uploads"], g["failed_launches"]), (5, 1, 0))
        self.assertEqual((g["created"], g["destroyed"], g["execs_created"], g["execs_destroyed"]),
                         (3, 3, 3, 3))
        self.assertEqual((g["orphaned"], g["graph_memory_never_freed"]), ([], []))
        # g2's state, once per launch of g2; the first freed by the second
        # launch (auto-free), the second by cudaFree
        t = rep["totals"]
        self.assertEqual((t["allocations"], t["frees"], t["bytes_allocated"]),
                         (2, 2, 2 * state))
        self.assertEqual((t["live_bytes_at_end"], t["peak_bytes"]), (0, state))
        # the pool: the live state plus g1's mapping, the largest (the model
        # does not round to 2 MiB as the device does)
        self.assertEqual((g["pool_peak_bytes"], g["pool_bytes_at_end"]), (state + g1, 0))
        site, = rep["sites"]
        self.assertEqual(innermost(site), "build_stateful(float**)")
        self.assertEqual(rep["leaks"], [])

    def test_graph_memory_leaked_and_relaunch(self):
        run = self.run_both("graph-leak")
        self.assertEqual(run.rc, 0)
        a, b, c_bytes = 4 * MiB, 2 * MiB, 1 * MiB
        rep = self.report(run.trace)
        g = rep["graphs"]
        self.assertEqual((g["created"], g["destroyed"], g["execs_created"], g["execs_destroyed"]),
                         (3, 3, 3, 3))
        self.assertEqual(g["alloc_nodes"], 3)
        # 1 + 2 + 3 launches; the second of graph B's fails: its allocation
        # is still live and it has no auto-free-on-launch
        self.assertEqual((g["launches"] + g["failed_launches"], g["failed_launches"]), (6, 1))
        self.assertEqual(g["orphaned"], [])
        never = g["graph_memory_never_freed"]
        self.assertEqual((sum(n["bytes"] for n in never), sum(n["count"] for n in never)), (a, 1))
        leak, = rep["leaks"]
        self.assertEqual((innermost(leak), leak["bytes"], leak["mem"]),
                         ("leak_graph_memory", a, "graph"))
        t = rep["totals"]
        # A once; B once (then cudaFree); C three times (auto-free twice, then
        # cudaFreeAsync)
        self.assertEqual((t["allocations"], t["frees"]), (1 + 1 + 3, 1 + 3))
        self.assertEqual((t["live_bytes_at_end"], t["peak_bytes"]), (a, a + b))
        with self.db(run.trace) as db:
            failed = db.execute("SELECT status FROM events WHERE kind = 19 AND status != 0"
                                ).fetchall()
        self.assertEqual(failed, [(1,)])  # cudaErrorInvalidValue
        self.assertGreater(c_bytes, 0)
        # only graph memory (alloc nodes): the device is known all the same
        self.assertEqual([d["total_bytes"] for d in rep["devices"]], [1 << 30])

    def test_graph_memory_freed_properly(self):
        run = self.run_both("graph-freed")
        self.assertEqual(run.rc, 0)
        rep = self.report(run.trace)
        g = rep["graphs"]
        self.assertEqual((g["alloc_nodes"], g["free_nodes"], g["launches"]), (1, 1, 1))
        self.assertEqual((g["orphaned"], g["graph_memory_never_freed"]), ([], []))
        self.assertEqual((g["pool_bytes_at_end"], g["pool_peak_bytes"]), (0, 4 * MiB))
        self.assertEqual((rep["leaks"], rep["totals"]["live_bytes_at_end"]), ([], 0))

    def test_plain_leak_per_build(self):
        run = self.run_both("build-leak")
        self.assertEqual(run.rc, 0)
        builds, cache = 10, 2 * MiB
        rep = self.report(run.trace)
        t = rep["totals"]
        self.assertEqual((t["allocations"], t["frees"]), (3 * builds, 2 * builds))
        self.assertEqual(t["live_bytes_at_end"], builds * cache)
        # build 9, after make_cache: 9 caches + weights + workspace + its cache
        self.assertEqual(t["peak_bytes"], 9 * cache + 4 * MiB + 1 * MiB + cache)
        leak, = rep["leaks"]
        self.assertEqual((innermost(leak), leak["bytes"], leak["count"]),
                         ("make_cache", builds * cache, builds))
        growth = rep["growth"]
        self.assertEqual(growth["basis"], "marks")
        site, = [s for s in growth["sites"] if s["growing"]]
        self.assertEqual(site["live_bytes"], [i * cache for i in range(builds)])
        self.assertEqual(site["growth_per_point"], cache)
        self.assertEqual(rep["graphs"]["created"], 0)

    def test_text_report_leads_with_graphs(self):
        run = self.run_program("graph-rebuilds")
        text = self.report_text(run.trace)
        first = text.split("\n\n")[1]
        self.assertIn("CUDA GRAPHS LEFT BEHIND: 5 executable graphs never destroyed", first)


if __name__ == "__main__":
    mtest.main()
