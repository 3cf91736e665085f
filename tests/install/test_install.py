"""The two ways memtrace is installed, each used as a user would:

- pip: the source tree copied, installed into a fresh virtual environment
  offline (python3 -m venv --system-site-packages; pip install
  --no-build-isolation --no-index, with Debian's python3-mesonpy), then the
  venv's `memtrace run` traces a Python program on the simulated device
  with no variable set, and its report has the program's exact numbers.
- meson install: into a DESTDIR; every piece is there (command, reporter,
  library, memtrace.h, pkg-config file, Python module, man pages made from
  the --help texts), and the installed command traces a program.

Skipped (77) when no Python here can build a wheel (no mesonpy or venv)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

BUILD = os.environ["MEMTRACE_BUILD"]
SOURCE = os.environ["MEMTRACE_SOURCE"]
SIM = os.path.join(BUILD, "tests", "sim")
VERSION = os.environ["MEMTRACE_VERSION"]
MiB = 1 << 20

# Three builds of a model: each keeps 3 MiB (a leak) and frees a 5 MiB
# scratch allocation; each build ends with a mark (memtrace.marked).
PROGRAM = r'''
import ctypes, os, sys
import memtrace
print("module", os.path.dirname(memtrace.__file__))
print("preload", os.environ.get("LD_PRELOAD", ""))
print("active", memtrace.active())
rt = ctypes.CDLL("libcudart.so.13")
kept = []
def alloc(n):
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(n)) == 0
    return p
for build in range(3):
    with memtrace.marked("build %d" % build):
        kept.append(alloc(3 << 20))
        rt.cudaFree(alloc(5 << 20))
print("flushed", memtrace.flush())
'''


def clean_env(extra=None):
    """The environment of a user who set nothing for memtrace."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MEMTRACE_") and k not in ("LD_PRELOAD", "PYTHONPATH")}
    env.update({"LD_LIBRARY_PATH": SIM, "CUDASIM_DEVICE_MEMORY": "1G",
                "MEMTRACE_CUPTI": "off", "PYTHONDONTWRITEBYTECODE": "1",
                "PIP_CONFIG_FILE": os.devnull, "PIP_NO_INPUT": "1"})
    env.update(extra or {})
    return env


def run(cmd, env=None, cwd=None, timeout=600):
    return subprocess.run(cmd, env=env or clean_env(), cwd=cwd, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=timeout)


def wheel_python():
    """A Python that can make a venv and build with meson-python offline."""
    probe = "import ensurepip, venv, mesonpy"
    for py in ("/usr/bin/python3", sys.executable, shutil.which("python3")):
        if py and os.path.exists(py) and run([py, "-c", probe]).returncode == 0:
            return py
    return None


def copy_tree(dst):
    """The source tree as a user has it: no build directories, no traces."""
    ignore = shutil.ignore_patterns("build*", ".git", "*.db", "*.db-*", ".mesonpy*",
                                    "__pycache__")
    shutil.copytree(SOURCE, dst, ignore=ignore, symlinks=True)


class Checks(unittest.TestCase):
    def check_trace(self, memtrace, tmp, python):
        """memtrace run -- python PROGRAM, then the JSON report: 3 builds of
        (3 MiB kept + 5 MiB freed)."""
        script = os.path.join(tmp, "builds.py")
        with open(script, "w") as f:
            f.write(PROGRAM)
        trace = os.path.join(tmp, "builds.db")
        proc = run([memtrace, "run", "-q", "-o", trace, "--", python, script], cwd=tmp)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("active True\n", proc.stdout)
        self.assertIn("flushed True\n", proc.stdout)
        self.assertEqual(proc.stderr, "")
        program_output = proc.stdout

        proc = run([memtrace, "report", trace, "--format", "json"], cwd=tmp)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        rep = json.loads(proc.stdout)
        totals = rep["totals"]
        self.assertEqual(totals["allocations"], 6)
        self.assertEqual(totals["frees"], 3)
        self.assertEqual(totals["bytes_allocated"], 3 * (3 + 5) * MiB)
        self.assertEqual(totals["live_bytes_at_end"], 3 * 3 * MiB)
        # the peak: two builds kept, the third's 3 MiB and its 5 MiB scratch
        self.assertEqual(totals["peak_bytes"], (3 * 3 + 5) * MiB)
        self.assertEqual(sum(g["bytes"] for g in rep["leaks"]), 9 * MiB)
        self.assertEqual(sum(g["count"] for g in rep["leaks"]), 3)
        marks = [(m["label"], m["live_bytes"]) for m in rep["marks"] if m["by"] == "user"]
        self.assertEqual(marks, [("build 0", 3 * MiB), ("build 1", 6 * MiB),
                                 ("build 2", 9 * MiB)])
        return program_output

    def check_one_help(self, memtrace, reporter):
        """memtrace report --help is the reporter's own help."""
        mine = run([memtrace, "report", "--help"])
        theirs = run([reporter, "--help"])
        self.assertEqual(mine.returncode, 0, mine.stderr)
        self.assertEqual(mine.stdout, theirs.stdout)
        self.assertIn("perfetto", mine.stdout)
        ver = run([memtrace, "--version"])
        self.assertEqual(ver.stdout, "memtrace %s\n" % VERSION)


class Wheel(Checks):
    @classmethod
    def setUpClass(cls):
        cls.python = wheel_python()
        if cls.python is None:
            raise unittest.SkipTest("no python3 with venv, ensurepip and mesonpy "
                                    "(Debian: python3-venv python3-mesonpy)")
        cls._tmp = tempfile.TemporaryDirectory(prefix="memtrace-wheel-")
        cls.tmp = cls._tmp.name
        src = os.path.join(cls.tmp, "src")
        copy_tree(src)
        cls.venv = os.path.join(cls.tmp, "venv")
        proc = run([cls.python, "-m", "venv", "--system-site-packages", cls.venv])
        assert proc.returncode == 0, proc.stderr
        cls.pip = run([os.path.join(cls.venv, "bin", "pip"), "install", "--no-build-isolation",
                       "--no-index", "--no-cache-dir", src])
        cls.bin = os.path.join(cls.venv, "bin")
        ver = run([cls.python, "-c", "import sys; print(*sys.version_info[:2])"])
        cls.version = tuple(int(v) for v in ver.stdout.split())

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def setUp(self):
        self.assertEqual(self.pip.returncode, 0, self.pip.stdout + self.pip.stderr)

    def test_installed_as_memtrace_cuda(self):
        proc = run([os.path.join(self.bin, "pip"), "show", "memtrace-cuda"])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("Name: memtrace-cuda\n", proc.stdout)
        self.assertIn("Version: %s\n" % VERSION, proc.stdout)

    def test_run_and_report_from_the_venv(self):
        out = self.check_trace(os.path.join(self.bin, "memtrace"), self.tmp,
                               os.path.join(self.bin, "python"))
        # the venv's module and the venv's library, found without a variable
        pkg = os.path.join(os.path.realpath(self.venv), "lib",
                           "python%d.%d" % self.version, "site-packages", "memtrace")
        self.assertIn("module %s\n" % pkg, out)
        self.assertIn("preload %s\n" % os.path.join(pkg, "lib", "libmemtrace.so"), out)

    def test_python_dash_m(self):
        proc = run([os.path.join(self.bin, "python"), "-m", "memtrace", "--version"])
        self.assertEqual(proc.stdout, "memtrace %s\n" % VERSION, proc.stderr)

    def test_one_help(self):
        pkg = os.path.join(self.venv, "lib", "python%d.%d" % self.version, "site-packages",
                           "memtrace")
        self.check_one_help(os.path.join(self.bin, "memtrace"),
                            os.path.join(pkg, "bin", "memtrace-report"))


class MesonInstall(Checks):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="memtrace-install-")
        cls.tmp = cls._tmp.name
        cls.dest = os.path.join(cls.tmp, "dest")
        env = clean_env({"DESTDIR": cls.dest})
        cls.proc = run(["meson", "install", "-C", BUILD, "--no-rebuild", "--quiet",
                        "--destdir", cls.dest], env=env)
        intro = run(["meson", "introspect", "--buildoptions", BUILD])
        opts = {o["name"]: o["value"] for o in json.loads(intro.stdout)}
        cls.prefix = opts["prefix"]
        cls.root = cls.dest + opts["prefix"]
        cls.bindir = os.path.join(cls.root, opts["bindir"])
        cls.libdir = os.path.join(cls.root, opts["libdir"])
        cls.mandir = os.path.join(cls.root, opts["mandir"])
        cls.includedir = os.path.join(cls.root, opts["includedir"])
        cls.installed = []
        for top, _, names in os.walk(cls.dest):
            cls.installed += [os.path.join(top, n) for n in names]

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def setUp(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stdout + self.proc.stderr)

    def installed_named(self, name):
        return [p for p in self.installed if os.path.basename(p) == name]

    def test_every_piece(self):
        for path in [os.path.join(self.bindir, "memtrace"),
                     os.path.join(self.bindir, "memtrace-report"),
                     os.path.join(self.libdir, "libmemtrace.so"),
                     os.path.join(self.includedir, "memtrace.h"),
                     os.path.join(self.libdir, "pkgconfig", "memtrace.pc")] + \
                    [os.path.join(self.mandir, "man1", p + ".1")
                     for p in ("memtrace", "memtrace-run", "memtrace-report")]:
            self.assertTrue(os.path.isfile(path), path)
        self.assertTrue(os.access(os.path.join(self.bindir, "memtrace"), os.X_OK))
        for name in ("__init__.py", "__main__.py", "_install.py"):
            self.assertEqual(len([p for p in self.installed_named(name)
                                  if os.path.basename(os.path.dirname(p)) == "memtrace"]), 1,
                             name)

    def test_pkg_config(self):
        env = clean_env({"PKG_CONFIG_PATH": os.path.join(self.libdir, "pkgconfig")})
        proc = run(["pkg-config", "--variable=preload", "memtrace"], env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.strip(),
                         os.path.join(self.prefix, os.path.relpath(self.libdir, self.root),
                                      "libmemtrace.so"))
        proc = run(["pkg-config", "--cflags", "memtrace"], env=env)
        self.assertIn("-I" + self.includedir[len(self.dest):], proc.stdout)

    def test_python_module_knows_the_command(self):
        (path,) = [p for p in self.installed_named("_install.py")]
        with open(path) as f:
            text = f.read()
        self.assertIn('BINDIR = "%s"' % self.bindir[len(self.dest):], text)

    def test_man_pages_hold_every_option(self):
        helps = {"memtrace": [os.path.join(SOURCE, "scripts", "memtrace"), "--help"],
                 "memtrace-run": [os.path.join(SOURCE, "scripts", "memtrace"), "run", "--help"],
                 "memtrace-report": [os.path.join(BUILD, "report", "memtrace-report"), "--help"]}
        for page, cmd in helps.items():
            help_text = run(cmd).stdout
            options = sorted({w.strip(",.;:()[]") for w in help_text.split()
                              if w.startswith("--") and len(w) > 3})
            self.assertTrue(options, page)
            with open(os.path.join(self.mandir, "man1", page + ".1")) as f:
                roff = f.read()
            self.assertTrue(roff.startswith('.TH "%s" 1 "" "memtrace %s"'
                                            % (page.upper(), VERSION)), roff[:80])
            for opt in options:
                self.assertIn(opt.replace("-", "\\-"), roff, "%s: %s" % (page, opt))

    def test_installed_command_traces(self):
        self.check_one_help(os.path.join(self.bindir, "memtrace"),
                            os.path.join(self.bindir, "memtrace-report"))
        # the module from the install's site directory, the command from bindir
        (init,) = [p for p in self.installed_named("__init__.py")
                   if os.path.basename(os.path.dirname(p)) == "memtrace"]
        site = os.path.dirname(os.path.dirname(init))
        python = os.path.join(self.tmp, "python-with-site")
        with open(python, "w") as f:
            f.write('#!/bin/sh\nPYTHONPATH=%s exec %s "$@"\n' % (site, sys.executable))
        os.chmod(python, 0o755)
        out = self.check_trace(os.path.join(self.bindir, "memtrace"), self.tmp, python)
        self.assertIn("preload %s\n" % os.path.realpath(os.path.join(self.libdir,
                                                                       "libmemtrace.so")), out)


if __name__ == "__main__":
    # test_install.py Wheel | MesonInstall: one meson test each, so that a
    # skip is reported as such.
    result = unittest.main(verbosity=2, exit=False).result
    if not result.wasSuccessful():
        sys.exit(1)
    if result.skipped and len(result.skipped) == result.testsRun:
        sys.exit(77)
