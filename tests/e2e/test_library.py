"""The library itself: what it exports, what it links, what it does to a
process that never uses CUDA, and how it treats bad settings."""
import _ctypes
import os
import re
import shutil
import subprocess
import sys

import mtest


class LibraryTest(mtest.TraceTest):
    def exports(self):
        nm = subprocess.run(["nm", "-D", "--defined-only", mtest.LIB],
                            capture_output=True, text=True, check=True).stdout
        return {line.split()[-1] for line in nm.splitlines() if line.strip()}

    def test_exports_exactly_the_hook_list(self):
        with open(os.path.join(mtest.BUILD, "interpose", "libmemtrace.map")) as f:
            text = f.read()
        listed = re.search(r"global:(.*)local:", text, re.S).group(1)
        expected = {s.strip() for s in listed.split(";") if s.strip()}
        for name in ("cudaMalloc", "cuMemAlloc_v2", "cuGetProcAddress_v2", "dlsym",
                     "memtrace_flush"):
            self.assertIn(name, expected)
        self.assertEqual(self.exports(), expected)

    def test_docs_name_every_export(self):
        exported = self.exports()
        with open(os.path.join(mtest.SOURCE, "docs", "capture.md")) as f:
            doc = f.read()
        missing = sorted(name for name in exported
                         if not re.search(r"`%s[`(]" % re.escape(name), doc))
        self.assertEqual(missing, [])

    def test_architecture_names_every_source_file(self):
        """docs/architecture.md names every source file of the library and
        the reporter (with its one idea): a new file must be placed there."""
        with open(os.path.join(mtest.SOURCE, "docs", "architecture.md")) as f:
            doc = f.read()
        missing = []
        for part in ("interpose", "report", "trace"):
            for folder, _, names in sorted(os.walk(os.path.join(mtest.SOURCE, part))):
                for name in sorted(names):
                    if name.endswith((".c", ".h", ".def")) and f"`{name}`" not in doc:
                        missing.append(os.path.relpath(os.path.join(folder, name), mtest.SOURCE))
        self.assertEqual(missing, [])

    def test_rtld_next_from_another_preload_keeps_its_meaning(self):
        shim = os.path.join(mtest.BUILD, "tests", "e2e", "librtld-next-shim.so")
        env = {"LD_PRELOAD": f"{shim} {mtest.LIB}",
               "MEMTRACE_OUTPUT": os.path.join(self.tmp, "t.db"), "MEMTRACE_QUIET": "1"}
        proc = subprocess.run([mtest.program("leaks")], env=mtest.sim_env(env), cwd=self.tmp,
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("shim: next cudaMalloc in libmemtrace.so", proc.stderr)
        with self.db(os.path.join(self.tmp, "t.db")) as db:
            apis = db.execute("SELECT a.name, count(*) FROM events e JOIN apis a "
                              "ON a.id = e.api WHERE e.kind = 1 GROUP BY a.name").fetchall()
        # leaks.c: 11 cudaMalloc and 2 cudaMallocHost, each recorded once
        self.assertEqual(sorted(apis), [("cudaMalloc", 11), ("cudaMallocHost", 2)])

    def test_own_lookup_failure_is_said_once_as_ours(self):
        """A driver without cuCtxGetDevice/cuMemGetInfo_v2: one line for
        each, saying memtrace called it for itself; none says the program's
        call failed; the program's output is unchanged."""
        exe = os.path.join(mtest.BUILD, "tests", "e2e", "own-lookup")
        env = mtest.sim_env({"MEMTRACE_QUIET": "1"})
        env.pop("LD_LIBRARY_PATH")  # the partial driver, not the simulated one
        plain = subprocess.run([exe], env=env, cwd=self.tmp, capture_output=True, text=True,
                               timeout=60)
        trace = os.path.join(self.tmp, "t.db")
        env.update({"LD_PRELOAD": mtest.LIB, "MEMTRACE_OUTPUT": trace})
        traced = subprocess.run([exe], env=env, cwd=self.tmp, capture_output=True, text=True,
                                timeout=60)
        self.assertEqual(plain.returncode, 0, plain.stderr)
        self.assertEqual((traced.returncode, traced.stdout), (0, plain.stdout))
        lines = traced.stderr.splitlines()
        own = [l for l in lines if "which memtrace calls for itself" in l]
        self.assertEqual(len(own), len(set(own)), traced.stderr)  # each once
        self.assertIn("memtrace: cuCtxGetDevice, which memtrace calls for itself, is not in "
                      "this process's CUDA driver: memtrace records without what it tells "
                      "(the program's own calls are not affected)", lines)
        self.assertEqual([l for l in lines if l not in own], [])
        # all three allocations recorded, with the device unknown (-1)
        rep = self.report(trace)
        self.assertEqual(rep["totals"]["allocations"], 3)
        self.assertEqual(rep["totals"]["bytes_allocated"], 6 * mtest.MiB)
        self.assertEqual(rep["totals"]["live_bytes_at_end"], 0)
        with self.db(trace) as db:
            self.assertEqual(db.execute("SELECT count(*) FROM events WHERE kind = 1 "
                                        "AND device = -1").fetchone()[0], 3)

    def test_links_no_cuda_library(self):
        out = subprocess.run(["readelf", "-d", mtest.LIB], capture_output=True, text=True,
                             check=True).stdout
        needed = re.findall(r"\(NEEDED\).*\[(.*)\]", out)
        self.assertTrue(needed)
        for lib in needed:
            self.assertNotRegex(lib, r"^lib(cuda|cudart|cupti)\b")

    def test_no_file_without_cuda(self):
        env = {"MEMTRACE_OUTPUT": os.path.join(self.tmp, "x-%p.db"), "MEMTRACE_QUIET": "0"}
        run = self.run_program("nocuda", env=env, trace=None)
        plain = self.run_program("nocuda", preload=False, trace=None)
        self.assertEqual(run.rc, 0)
        self.assertEqual(run.stdout, plain.stdout)
        self.assertEqual(run.stderr, "")
        self.assertEqual(os.listdir(self.tmp), [])

    def test_run_says_no_cuda_call(self):
        """memtrace run: a program that never calls CUDA ends with one line
        saying there is no trace, whether it is exec'd or a child (--report)."""
        script = os.path.join(mtest.SOURCE, "scripts", "memtrace")
        env = mtest.sim_env({"MEMTRACE_LIB": mtest.LIB, "MEMTRACE_REPORT": mtest.REPORTER})
        for opts in ([], ["--report", "text"]):
            proc = subprocess.run([script, "run", *opts, "-o", os.path.join(self.tmp, "x-%p.db"),
                                   "--", mtest.program("nocuda")], env=env, cwd=self.tmp,
                                  capture_output=True, text=True, timeout=120)
            self.assertEqual((proc.returncode, proc.stdout), (0, "nocuda: no CUDA here\n"))
            self.assertEqual(proc.stderr, "memtrace: no CUDA call; no trace written\n", opts)
            self.assertEqual(os.listdir(self.tmp), [])
            quiet = subprocess.run([script, "run", "-q", *opts, "--", mtest.program("nocuda")],
                                   env=env, cwd=self.tmp, capture_output=True, text=True,
                                   timeout=120)
            self.assertEqual(quiet.stderr, "", opts)

    def test_run_names_a_cpu_only_torch(self):
        """A Python program whose PyTorch is a CPU-only build (it loaded
        libtorch_cpu.so and never libtorch_cuda.so: here a stand-in library
        of that name) gets the reason with the no-trace line."""
        script = os.path.join(mtest.SOURCE, "scripts", "memtrace")
        env = mtest.sim_env({"MEMTRACE_LIB": mtest.LIB, "MEMTRACE_REPORT": mtest.REPORTER})
        libdir = os.path.join(self.tmp, "lib")
        os.mkdir(libdir)
        stand_in = os.path.join(libdir, "libtorch_cpu.so")
        shutil.copy(_ctypes.__file__, stand_in)
        code = f"import ctypes; ctypes.CDLL({stand_in!r}); print('cpu only')"
        proc = subprocess.run([script, "run", "--", sys.executable, "-c", code], env=env,
                              cwd=libdir, capture_output=True, text=True, timeout=120)
        self.assertEqual((proc.returncode, proc.stdout), (0, "cpu only\n"))
        self.assertEqual(proc.stderr, "memtrace: no CUDA call; no trace written: the PyTorch here "
                         "is a CPU-only build (libtorch_cpu.so, no libtorch_cuda.so): install a "
                         "CUDA build\n")

    def test_bad_settings_get_one_message_and_defaults(self):
        env = {"MEMTRACE_DEPTH": "lots", "MEMTRACE_QUIET": "0"}
        run = self.run_program("leaks", env=env)
        plain = self.run_program("leaks", preload=False)
        self.assertEqual((run.rc, run.stdout), (plain.rc, plain.stdout))
        self.assertIn("memtrace: MEMTRACE_DEPTH=lots is not a number from 1 to 256; using 64",
                      run.stderr)
        with self.db(run.trace) as db:
            depth, = db.execute("SELECT value FROM meta WHERE key='depth'").fetchone()
        self.assertEqual(depth, "64")

    def test_existing_trace_is_not_touched(self):
        path = os.path.join(self.tmp, "taken.db")
        with open(path, "w") as f:
            f.write("someone else's file")
        env = {"MEMTRACE_OUTPUT": path, "MEMTRACE_QUIET": "0"}
        run = self.run_program("leaks", env=env, trace=None)
        plain = self.run_program("leaks", preload=False, trace=None)
        self.assertEqual((run.rc, run.stdout), (plain.rc, plain.stdout))
        self.assertIn("already exists; not tracing this process", run.stderr)
        self.assertEqual(run.stderr.count("memtrace:"), 1)
        with open(path) as f:
            self.assertEqual(f.read(), "someone else's file")

    def test_symlink_at_trace_path_is_not_followed(self):
        victim = os.path.join(self.tmp, "victim")
        with open(victim, "w") as f:
            f.write("keep")
        link = os.path.join(self.tmp, "link.db")
        os.symlink(victim, link)
        run = self.run_program("leaks", env={"MEMTRACE_OUTPUT": link, "MEMTRACE_QUIET": "0"},
                               trace=None)
        self.assertIn("memtrace:", run.stderr)
        with open(victim) as f:
            self.assertEqual(f.read(), "keep")

    def test_unwritable_directory(self):
        env = {"MEMTRACE_OUTPUT": "/nonexistent-dir/t.db", "MEMTRACE_QUIET": "0"}
        run = self.run_program("leaks", env=env, trace=None)
        plain = self.run_program("leaks", preload=False, trace=None)
        self.assertEqual((run.rc, run.stdout), (plain.rc, plain.stdout))
        self.assertIn("cannot create the trace file /nonexistent-dir/t.db", run.stderr)

    def test_output_pattern_expands_pid_and_rank(self):
        env = {"MEMTRACE_OUTPUT": os.path.join(self.tmp, "t-%r-%p.db"), "RANK": "3"}
        run = self.run_program("leaks", env=env, trace=None)
        self.assertEqual(run.rc, 0)
        files = [f for f in os.listdir(self.tmp) if f.endswith(".db")]
        self.assertEqual(len(files), 1)
        self.assertRegex(files[0], r"^t-3-\d+\.db$")
        with self.db(os.path.join(self.tmp, files[0])) as db:
            meta = dict(db.execute("SELECT key, value FROM meta"))
        self.assertEqual(files[0], f"t-3-{meta['pid']}.db")
        self.assertEqual(meta["rank"], "3")
        self.assertEqual(meta["end"], "exit")
        st = os.stat(os.path.join(self.tmp, files[0]))
        self.assertEqual(st.st_mode & 0o777, 0o600)


if __name__ == "__main__":
    mtest.main()
