"""Every route real software takes to an allocation, each seen exactly
once: the driver through dlsym (TensorFlow's way), a static runtime through
cuGetProcAddress_v2, driver entry points from the runtime (PyTorch's
expandable segments), pools on two streams, arrays and pitched memory,
ctypes-style dlsym on the runtime, a runtime dlopen'ed late with threads
made before and after, fork, exec and IPC. The expected numbers are derived
from the programs (tests/programs/*.c, see their header comments)."""
import glob
import os

import mtest

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30


def calls(db, kind=None):
    """{(api, kind): (count, bytes)} of the trace's events."""
    rows = db.execute("SELECT a.name, e.kind, count(*), coalesce(sum(e.bytes), 0) FROM events e "
                      "JOIN apis a ON a.id = e.api GROUP BY a.name, e.kind").fetchall()
    return {(api, k): (n, b) for api, k, n, b in rows if kind is None or k == kind}


def by_caller(entries, name):
    """The entries whose stack runs through function name."""
    return [e for e in entries if any(f["function"] == name for f in e["frames"])]


def bytes_of(entries, key="live_bytes_at_end"):
    return sum(e[key] for e in entries)


class Routes(mtest.TraceTest):
    def assert_no_driver_allocs(self, db):
        """A runtime call reaches the driver inside the guard: counted once."""
        driver = [api for (api, k) in calls(db) if api.startswith("cu") and
                  not api.startswith("cuda") and k in (1, 2, 3, 4)]
        self.assertEqual(driver, [], "runtime calls recorded twice, at the driver too")

    def test_driver_through_dlsym(self):
        run = self.run_both("driver-dlsym")
        self.assertEqual(run.rc, 0)
        weights, workspace = 3 * 8 * MiB, 2 * 1000000
        managed, pitched = MiB, 1024 * 64  # width 1000 -> pitch 1024, 64 rows
        with self.db(run.trace) as db:
            c = calls(db)
        self.assertEqual(c[("cuMemAlloc_v2", 1)], (5, weights + workspace))
        self.assertEqual(c[("cuMemAlloc_v2", 3)], (1, 2 * GiB))
        self.assertEqual(c[("cuMemFree_v2", 2)], (3, workspace + managed))
        self.assertEqual(c[("cuMemAllocManaged", 1)], (1, managed))
        self.assertEqual(c[("cuMemAllocPitch_v2", 1)], (1, pitched))
        self.assertEqual(c[("cuMemHostRegister_v2", 1)], (1, MiB))
        self.assertEqual(c[("cuMemHostUnregister", 2)], (1, MiB))
        rep = self.report(run.trace)
        t = rep["totals"]
        self.assertEqual((t["allocations"], t["frees"]), (7, 3))
        self.assertEqual(t["bytes_allocated"], weights + workspace + managed + pitched)
        self.assertEqual(t["peak_bytes"], weights + workspace)
        self.assertEqual(t["live_bytes_at_end"], weights + pitched)
        h = rep["host"]
        self.assertEqual((h["allocations"], h["frees"], h["live_bytes_at_end"]),
                         (2, 1, 131072))
        reg = rep["memory_kinds"]["host_registered"]
        self.assertEqual((reg["allocations"], reg["frees"], reg["live_bytes_at_end"],
                          reg["counted_as_device"]), (1, 1, 0, False))
        oom, = rep["ooms"]
        self.assertEqual((oom["api"], oom["requested_bytes"]), ("cuMemAlloc_v2", 2 * GiB))
        self.assertEqual((oom["device_free"], oom["device_total"]),
                         (GiB - weights - pitched, GiB))
        self.assertTrue(any(f["function"] == "try_huge" for f in oom["frames"]))

    def test_static_runtime_through_cuGetProcAddress(self):
        run = self.run_both("static-runtime")
        self.assertEqual(run.rc, 0)
        model, batch = 4 * 16 * MiB, 3 * 4 * MiB
        with self.db(run.trace) as db:
            c = calls(db)
            streams = db.execute("SELECT DISTINCT e.stream FROM events e JOIN apis a "
                                 "ON a.id = e.api WHERE a.name LIKE 'cuMem%Async'").fetchall()
        self.assertEqual(c[("cuMemAlloc_v2", 1)], (5, model + 5000))
        self.assertEqual(c[("cuMemFree_v2", 2)], (1, 5000))
        self.assertEqual(c[("cuMemAllocAsync", 1)], (6, 2 * batch))
        self.assertEqual(c[("cuMemFreeAsync", 2)], (6, 2 * batch))
        self.assertEqual(len(streams), 1)
        self.assertNotEqual(streams[0][0], 0)
        rep = self.report(run.trace)
        t = rep["totals"]
        self.assertEqual((t["allocations"], t["frees"]), (11, 7))
        self.assertEqual(t["peak_bytes"], model + batch)
        self.assertEqual(t["live_bytes_at_end"], model)
        self.assertEqual(bytes_of(by_caller(rep["sites"], "load_model")), model)
        self.assertEqual(bytes_of(by_caller(rep["sites"], "run_batch"), "total_bytes"),
                         2 * batch)

    def test_driver_entry_points_and_vmm(self):
        run = self.run_both("entry-points")
        self.assertEqual(run.rc, 0)
        chunk, plain = 20 * MiB, 4 * MiB
        with self.db(run.trace) as db:
            c = calls(db)
            self.assert_no_driver_allocs_except_vmm(db)
        self.assertEqual(c[("cudaMalloc", 1)], (1, plain))
        self.assertEqual(c[("cuMemAddressReserve", 1)], (1, GiB))
        self.assertEqual(c[("cuMemCreate", 1)], (3, 3 * chunk))
        self.assertEqual(c[("cuMemMap", 6)], (3, 3 * chunk))
        self.assertEqual(c[("cuMemRelease", 2)], (3, 3 * chunk))
        self.assertEqual(c[("cuMemUnmap", 7)], (1, chunk))
        rep = self.report(run.trace)
        t = rep["totals"]
        self.assertEqual(t["peak_bytes"], plain + 3 * chunk)
        # the third chunk goes back at its unmap (its handle was released)
        self.assertEqual(t["live_bytes_at_end"], plain + 2 * chunk)
        k = rep["memory_kinds"]
        self.assertEqual(k["vmm_physical"]["live_bytes_at_end"], 2 * chunk)
        self.assertEqual((k["vmm_reserved"]["live_bytes_at_end"],
                          k["vmm_reserved"]["counted_as_device"]), (GiB, False))
        self.assertEqual(bytes_of(by_caller(rep["sites"], "grow_segment")), 2 * chunk)

    def assert_no_driver_allocs_except_vmm(self, db):
        rows = db.execute("SELECT a.name FROM events e JOIN apis a ON a.id = e.api "
                          "WHERE a.name IN ('cuMemAlloc_v2', 'cuMemFree_v2')").fetchall()
        self.assertEqual(rows, [], "cudaMalloc recorded twice, at the driver too")

    def test_pools_on_two_streams(self):
        run = self.run_both("pools")
        self.assertEqual(run.rc, 0)
        default = [1 * MiB, 3 * MiB]
        pooled = [512 * KiB, 5 * MiB, 1536 * KiB]
        with self.db(run.trace) as db:
            c = calls(db)
            self.assert_no_driver_allocs(db)
            pool_handles = db.execute(
                "SELECT DISTINCT handle FROM events WHERE mem = 4 AND kind = 1").fetchall()
            created = db.execute("SELECT handle FROM events WHERE kind = 9").fetchall()
            streams = db.execute("SELECT count(DISTINCT stream) FROM events "
                                 "WHERE kind = 1 AND stream != 0").fetchone()[0]
        self.assertEqual(c[("cudaMallocAsync", 1)], (2, sum(default)))
        self.assertEqual(c[("cudaMallocFromPoolAsync", 1)], (3, sum(pooled)))
        self.assertEqual(c[("cudaFreeAsync", 2)], (4, 1 * MiB + 5 * MiB + 512 * KiB + 1536 * KiB))
        self.assertEqual((c[("cudaMemPoolCreate", 9)][0], c[("cudaMemPoolTrimTo", 11)][0],
                          c[("cudaMemPoolDestroy", 10)][0]), (1, 1, 1))
        self.assertEqual(pool_handles, created)
        self.assertEqual(streams, 2)
        rep = self.report(run.trace)
        t = rep["totals"]
        self.assertEqual(t["peak_bytes"], sum(default) + sum(pooled))
        self.assertEqual(t["live_bytes_at_end"], 3 * MiB)
        pool, = [p for p in rep["pools"] if p["created"]]
        self.assertEqual((pool["allocations"], pool["bytes_allocated"], pool["destroyed"],
                          pool["live_bytes_at_end"]), (3, sum(pooled), True, 0))

    def test_arrays_3d_and_pitched(self):
        run = self.run_both("arrays")
        self.assertEqual(run.rc, 0)
        arr2d, arr3d, lin3d, pitched = 16 * 256 * 64, 100 * 100 * 10, 1024 * 32 * 4, 3072 * 20
        drv2d, drv3d = 512 * 512, 64 * 64 * 64 * 2 * 2
        with self.db(run.trace) as db:
            c = calls(db)
        # cudaMallocArray and cudaMalloc3DArray reach cuArrayCreate_v2 and
        # cuArray3DCreate_v2 inside the guard: the driver counts below are
        # driver_arrays' own calls only
        self.assertEqual(c[("cudaMallocArray", 1)], (1, arr2d))
        self.assertEqual(c[("cudaMalloc3DArray", 1)], (1, arr3d))
        self.assertEqual(c[("cudaMalloc3D", 1)], (1, lin3d))
        self.assertEqual(c[("cudaMallocPitch", 1)], (1, pitched))
        self.assertEqual(c[("cuArrayCreate_v2", 1)], (1, drv2d))
        self.assertEqual(c[("cuArray3DCreate_v2", 1)], (1, drv3d))
        self.assertEqual(c[("cuArrayDestroy", 2)], (1, drv2d))
        self.assertEqual(c[("cudaFreeArray", 2)], (1, arr2d))
        rep = self.report(run.trace)
        t = rep["totals"]
        self.assertEqual(t["live_bytes_at_end"], arr3d + pitched + drv3d)
        self.assertEqual(t["peak_bytes"], arr2d + arr3d + pitched + drv2d + drv3d)
        self.assertEqual(rep["memory_kinds"]["array"]["live_bytes_at_end"], arr3d + drv3d)

    def test_runtime_through_dlsym(self):
        run = self.run_both("runtime-dlsym")
        self.assertEqual(run.rc, 0)
        with self.db(run.trace) as db:
            c = calls(db)
            self.assert_no_driver_allocs(db)
        self.assertEqual(c[("cudaMalloc", 1)], (3, 2 * 2 * MiB + 3000))
        self.assertEqual(c[("cudaMallocManaged", 1)], (1, MiB))
        rep = self.report(run.trace)
        self.assertEqual(rep["totals"]["live_bytes_at_end"], 3000)
        self.assertEqual(rep["totals"]["peak_bytes"], 4 * MiB)
        leak, = rep["leaks"]
        self.assertTrue(any(f["function"] == "leak_one" for f in leak["frames"]))

    def test_late_dlopen_and_threads_before_and_after(self):
        run = self.run_both("late-dlopen")
        self.assertEqual(run.rc, 0)
        sizes = [1 * MiB, 1 * MiB, 2 * MiB, 3 * MiB, 4 * MiB]
        with self.db(run.trace) as db:
            c = calls(db)
            threads, stacks = db.execute("SELECT count(DISTINCT thread), count(DISTINCT stack) "
                                         "FROM events WHERE kind = 1").fetchone()
        self.assertEqual(c[("cudaMalloc", 1)], (5, sum(sizes)))
        self.assertEqual(c[("cudaFree", 2)], (5, sum(sizes)))
        self.assertEqual(threads, 5)
        # three call paths: first_cuda_call, early_thread_alloc, late_thread_alloc
        self.assertEqual(stacks, 3)
        rep = self.report(run.trace)
        self.assertEqual((rep["totals"]["peak_bytes"], rep["totals"]["live_bytes_at_end"]),
                         (4 * MiB, 0))

    def traces(self):
        return sorted(glob.glob(os.path.join(self.tmp, "t-*.db")))

    def run_family(self, name, args=(), follow=True):
        env = {"MEMTRACE_OUTPUT": os.path.join(self.tmp, "t-%p.db")}
        if not follow:
            env["MEMTRACE_FOLLOW"] = "0"
        run = self.run_both(name, args, env=env, trace=None)
        self.assertEqual(run.rc, 0)
        reports = {}
        for path in self.traces():
            rep = self.report(path)
            reports[int(rep["trace"]["pid"])] = rep
        return reports

    def test_fork_child_gets_its_own_trace(self):
        reps = self.run_family("fork-child")
        self.assertEqual(len(reps), 2)
        parent = [r for r in reps.values() if r["totals"]["allocations"] == 2]
        child = [r for r in reps.values() if r["totals"]["alloc_errors"] == 1]
        self.assertEqual((len(parent), len(child)), (1, 1))
        p, c = parent[0], child[0]
        self.assertEqual((p["totals"]["live_bytes_at_end"], p["totals"]["peak_bytes"]),
                         (4 * MiB, 6 * MiB))
        # the child: CUDA after fork fails, as with the real driver
        self.assertEqual((c["totals"]["allocations"], c["totals"]["events"]), (0, 1))

    def test_fork_child_untraced_without_follow(self):
        reps = self.run_family("fork-child", follow=False)
        self.assertEqual(len(reps), 1)
        self.assertEqual(list(reps.values())[0]["totals"]["allocations"], 2)

    def test_exec_child_traced_into_its_own_file(self):
        reps = self.run_family("exec-child", [mtest.program("leaks")])
        self.assertEqual(len(reps), 2)
        by_allocs = sorted(reps.values(), key=lambda r: r["totals"]["allocations"])
        parent, child = by_allocs
        self.assertEqual((parent["totals"]["allocations"], parent["totals"]["bytes_allocated"],
                          parent["totals"]["live_bytes_at_end"]), (1, 8 * MiB, 0))
        # the child is tests/programs/leaks: 11 cudaMalloc, 3000000 bytes leaked
        self.assertEqual((child["totals"]["allocations"], child["totals"]["live_bytes_at_end"]),
                         (11, 3000000))
        self.assertIn("leaks", child["trace"]["cmdline"])

    def test_exec_child_untraced_without_follow(self):
        reps = self.run_family("exec-child", [mtest.program("leaks")], follow=False)
        self.assertEqual(len(reps), 1)
        self.assertEqual(list(reps.values())[0]["totals"]["bytes_allocated"], 8 * MiB)

    def test_ipc_import_is_shown_not_counted(self):
        reps = self.run_family("ipc")
        self.assertEqual(len(reps), 2)
        exporter = [r for r in reps.values() if r["totals"]["allocations"] == 1]
        importer = [r for r in reps.values() if r["totals"]["allocations"] == 0]
        self.assertEqual((len(exporter), len(importer)), (1, 1))
        self.assertEqual(exporter[0]["totals"]["bytes_allocated"], 16 * MiB)
        imp = importer[0]["memory_kinds"]["imported"]
        self.assertEqual((imp["allocations"], imp["frees"], imp["bytes_allocated"],
                          imp["counted_as_device"]), (1, 1, 16 * MiB, False))
        self.assertEqual(importer[0]["totals"]["peak_bytes"], 0)


if __name__ == "__main__":
    mtest.main()
