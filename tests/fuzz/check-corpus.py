#!/usr/bin/env python3
"""check-corpus.py REPORTER SQLFILE...: the reporter against every trace of
the corpus make-corpus.py builds (damaged, hostile, truncated), in every
format. Each run must end with status 0 (a report) or 1 (one line on
stderr, "memtrace report: ..."), within 30 s and 1 GiB, and its output
must hold what it promises:
  json, perfetto  valid JSON in valid UTF-8
  html            valid UTF-8; the marker "<mt-x>" planted in every text
                  column never appears unescaped; as many <script and
                  </script as the page has for a plain trace
  text, folded    valid UTF-8; no control character but newline and tab
Runs everywhere (no clang needed), and in the AddressSanitizer build (suite
'report'), which is where a memory error on hostile input shows."""
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
make_corpus = __import__("make-corpus")

FORMATS = ["text", "json", "html", "folded", "perfetto"]
TIMEOUT_S = 30
MAX_RSS_KB = 1 << 20
CONTROL = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]")


def run(reporter, trace, fmt, out):
    args = [reporter, trace, "--format", fmt, "-o", out]
    if fmt == "folded":
        args += ["--weight", "peak"]
    env = dict(os.environ, MEMTRACE_DEBUGINFOD="")
    env.pop("DEBUGINFOD_URLS", None)
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        stdout, stderr = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return [f"hung (more than {TIMEOUT_S} s)"]
    problems = []
    rc = proc.returncode
    err = stderr.decode("utf-8", "replace")
    if rc not in (0, 1):
        problems.append(f"exit status {rc}: {err[-2000:]}")
        return problems
    lines = err.splitlines()
    if any(not l.startswith("memtrace report: ") for l in lines):
        problems.append(f"stderr not prefixed: {err[:500]!r}")
    if rc == 1:
        if len(lines) != 1:
            problems.append(f"exit 1 with {len(lines)} lines on stderr: {err[:500]!r}")
        return problems
    with open(out, "rb") as f:
        data = f.read()
    problems += check_output(fmt, data)
    return problems


SCRIPTS = None  # ("<script" count, "</script" count) of a plain trace's page


def check_output(fmt, data):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return [f"{fmt}: invalid UTF-8 at byte {e.start}"]
    if fmt in ("json", "perfetto"):
        try:
            json.loads(text)
        except ValueError as e:
            return [f"{fmt}: not JSON: {e}"]
    elif fmt == "html":
        if "<mt-" in text:
            i = text.index("<mt-")
            return [f"html: unescaped marker: {text[max(0, i - 80):i + 20]!r}"]
        scripts = (text.count("<script"), text.count("</script"))
        if SCRIPTS and scripts != SCRIPTS:
            return [f"html: <script, </script: {scripts}, a plain trace's page: {SCRIPTS}"]
    else:
        m = CONTROL.search(data)
        if m:
            i = m.start()
            return [f"{fmt}: control character {data[i]:#x}: {data[max(0, i - 60):i + 10]!r}"]
    return []


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: check-corpus.py REPORTER SQLFILE...")
    reporter, sqlfiles = sys.argv[1], sys.argv[2:]
    with tempfile.TemporaryDirectory(prefix="memtrace-corpus-") as tmp:
        corpus = os.path.join(tmp, "corpus")
        make_corpus.make(corpus, sqlfiles)
        traces = sorted(f for f in os.listdir(corpus) if f.endswith(".db"))
        global SCRIPTS
        plain = os.path.join(tmp, "plain.html")
        first = next(t for t in traces if t.count(".") == 1)  # a trace as written
        if run(reporter, os.path.join(corpus, first), "html", plain) == [] and \
                os.path.exists(plain):
            with open(plain, encoding="utf-8") as f:
                page = f.read()
            SCRIPTS = (page.count("<script"), page.count("</script"))
        jobs = [(t, fmt) for t in traces for fmt in FORMATS]

        def one(job):
            trace, fmt = job
            # each run in its own copy: the reporter may make a -shm beside it
            d = tempfile.mkdtemp(dir=tmp)
            path = os.path.join(d, "t.db")
            with open(os.path.join(corpus, trace), "rb") as src, open(path, "wb") as dst:
                dst.write(src.read())
            return trace, fmt, run(reporter, path, fmt, os.path.join(d, "out"))

        failures = 0
        codes = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            for trace, fmt, problems in pool.map(one, jobs):
                for p in problems:
                    failures += 1
                    print(f"FAIL {trace} --format {fmt}: {p}")
        print(f"{len(traces)} traces x {len(FORMATS)} formats: {len(jobs)} runs, "
              f"{failures} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
