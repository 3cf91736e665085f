"""NVTX ranges name the operation of each allocation; marks are events.
Expected values follow tests/e2e/nvtx-ops.c."""
import os
import subprocess

import mtest

MiB = 1 << 20


class Nvtx(mtest.TraceTest):
    def run_nvtx(self, preload):
        env = {"MEMTRACE_OUTPUT": os.path.join(self.tmp, "t.db"), "MEMTRACE_QUIET": "1"}
        if preload:
            env["LD_PRELOAD"] = mtest.LIB
        return subprocess.run([os.path.join(mtest.BUILD, "tests", "e2e", "nvtx-ops")],
                              env=mtest.sim_env(env), cwd=self.tmp, capture_output=True,
                              text=True, timeout=120)

    def test_ranges_and_marks(self):
        plain = self.run_nvtx(False)
        traced = self.run_nvtx(True)
        self.assertEqual((plain.returncode, plain.stdout), (traced.returncode, traced.stdout))
        self.assertEqual(traced.stdout, "nvtx-ops: 8 allocations, all freed\n")
        with self.db(os.path.join(self.tmp, "t.db")) as db:
            ops = dict((b // MiB, (name, domain)) for b, name, domain in db.execute(
                "SELECT e.bytes, o.name, o.domain FROM events e LEFT JOIN ops o ON o.id = e.op "
                "WHERE e.kind = 1"))
            marks = db.execute("SELECT o.name, a.name, e.stack != 0 FROM events e "
                               "JOIN ops o ON o.id = e.op JOIN apis a ON a.id = e.api "
                               "WHERE e.kind = 13 ORDER BY e.seq").fetchall()
            threads = dict(db.execute("SELECT bytes / 1048576, thread FROM events "
                                      "WHERE kind = 1"))
        self.assertEqual(ops, {
            1: ("model.build", None),
            2: ("aten::mm", None),
            3: ("model.build", None),
            4: (None, None),
            5: ("step", "trainer"),
            6: ("worker", None),
            7: ("outer", None),
            8: ("async-range", None),
        })
        self.assertNotEqual(threads[6], threads[7])
        # "start" came before the first CUDA call: kept, without a stack
        self.assertEqual(marks, [("start", "memtrace_mark", 0), ("checkpoint", "nvtxMark", 1),
                                 ("end", "memtrace_mark", 1)])

    def test_user_injection_is_kept(self):
        env = {"MEMTRACE_OUTPUT": os.path.join(self.tmp, "t.db"), "MEMTRACE_QUIET": "0",
               "LD_PRELOAD": mtest.LIB, "NVTX_INJECTION64_PATH": "/nonexistent/tool.so"}
        proc = subprocess.run([os.path.join(mtest.BUILD, "tests", "e2e", "nvtx-ops")],
                              env=mtest.sim_env(env), cwd=self.tmp, capture_output=True,
                              text=True, timeout=120)
        self.assertEqual(proc.returncode, 0)
        self.assertIn("NVTX_INJECTION64_PATH is set to /nonexistent/tool.so", proc.stderr)
        with self.db(os.path.join(self.tmp, "t.db")) as db:
            named, = db.execute("SELECT count(*) FROM events WHERE op IS NOT NULL AND kind = 1"
                                ).fetchone()
        self.assertEqual(named, 0)


if __name__ == "__main__":
    mtest.main()
