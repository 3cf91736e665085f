"""The per-version offsets of interpose/carry/python-layout.c against the headers
of every CPython installed (pyenv's, and the system's python3): compiles
layout-dump.c against each and checks that the row it prints is in the
table verbatim (spaces aside). Exit status 77 (SKIP) when no interpreter
with headers is installed.

    layout-check.py LAYOUT_DUMP_C PYTHON_LAYOUT_C     (compiler: $CC)"""
import glob
import os
import re
import shlex
import subprocess
import sys
import sysconfig
import tempfile

SUPPORTED_FROM = (3, 8)


def include_dirs():
    """{include dir: label} of every interpreter 3.8+ with headers."""
    dirs = {}
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    for path in sorted(glob.glob(os.path.join(root, "versions", "3.*"))):
        m = re.fullmatch(r"3\.(\d+)\.\d+((?:a|b|rc)\d+)?", os.path.basename(path))
        if not m or (3, int(m.group(1))) < SUPPORTED_FROM:
            continue
        inc = os.path.join(path, "include", "python3.%s" % m.group(1))
        if os.path.exists(os.path.join(inc, "Python.h")):
            dirs[inc] = os.path.basename(path)
    for exe in ("/usr/bin/python3",):
        if not os.access(exe, os.X_OK):
            continue
        out = subprocess.run([exe, "-c", "import sysconfig, sys; print(sysconfig.get_path("
                              "'include')); print('%d.%d.%d' % sys.version_info[:3])"],
                             capture_output=True, text=True)
        if out.returncode == 0:
            inc, version = out.stdout.split()
            if os.path.exists(os.path.join(inc, "Python.h")):
                dirs.setdefault(inc, "system " + version)
    return dirs


def squeeze(text):
    return re.sub(r"\s+", "", text)


def main():
    dump_c, layout_c = sys.argv[1], sys.argv[2]
    cc = shlex.split(os.environ.get("CC", "cc"))
    with open(layout_c) as f:
        table = squeeze(f.read())
    dirs = include_dirs()
    if not dirs:
        print("SKIP: no CPython 3.8+ headers installed")
        return 77
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "layout-dump")
        for inc, label in dirs.items():
            build = subprocess.run(cc + ["-w", "-I", inc, dump_c, "-o", exe],
                                   capture_output=True, text=True)
            if build.returncode != 0:
                print("FAIL %s: layout-dump.c does not compile against %s:\n%s"
                      % (label, inc, build.stderr[-2000:]))
                failed += 1
                continue
            row = subprocess.run([exe], capture_output=True, text=True,
                                 check=True).stdout.strip()
            if squeeze(row) in table:
                print("ok   %s: %s" % (label, row))
            else:
                print("FAIL %s: this row is not in %s:\n%s" % (label, layout_c, row))
                failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
