"""scripts/python/memtrace: marks and flush from Python, with and without the
library; the runtime reached through ctypes (dlsym on the runtime's
handle) is traced."""
import os
import subprocess
import sys

import mtest

SCRIPT = r'''
import ctypes, sqlite3, sys
sys.path.insert(0, sys.argv[1])
import memtrace
print("active", memtrace.active())
rt = ctypes.CDLL("libcudart.so.13")
p = ctypes.c_void_p()
memtrace.mark("before")
assert rt.cudaMalloc(ctypes.byref(p), 1 << 20) == 0
memtrace.mark("after")
flushed = memtrace.flush()
print("flushed", flushed)
if flushed:
    db = sqlite3.connect("file:" + sys.argv[2] + "?mode=ro", uri=True)
    print(db.execute("SELECT group_concat(o.name) FROM events e JOIN ops o ON o.id = e.op "
                     "WHERE e.kind = 13").fetchone()[0])
    print(db.execute("SELECT a.name, e.bytes FROM events e JOIN apis a ON a.id = e.api "
                     "WHERE e.kind = 1").fetchall())
'''


class PythonApi(mtest.TraceTest):
    def run_script(self, preload):
        trace = os.path.join(self.tmp, "t.db")
        env = {"MEMTRACE_OUTPUT": trace, "MEMTRACE_QUIET": "1"}
        if preload:
            env["LD_PRELOAD"] = mtest.LIB
        return subprocess.run([sys.executable, "-c", SCRIPT,
                               os.path.join(mtest.SOURCE, "scripts", "python"), trace],
                              env=mtest.sim_env(env), cwd=self.tmp, capture_output=True,
                              text=True, timeout=120)

    def test_without_memtrace_does_nothing(self):
        proc = self.run_script(False)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, "active False\nflushed False\n")

    def test_marks_flush_and_ctypes_route(self):
        proc = self.run_script(True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        # flush() returned only once the marks and the allocation were in the file
        self.assertEqual(proc.stdout, "active True\nflushed True\nbefore,after\n"
                                      "[('cudaMalloc', 1048576)]\n")


if __name__ == "__main__":
    mtest.main()
