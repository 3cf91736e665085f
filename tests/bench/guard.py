#!/usr/bin/env python3
"""The reporter against a stored baseline commit (docs/performance.md,
"Guarding the reporter's speed"): which figure moved, and by how much.

    guard.py [--build DIR] [--baseline COMMIT | --baseline-reporter PATH]
             [--traces DIR] [--rounds N] [--big] [--formats json,text,html]
             [--cases gen-1M,gen-10M,churn-10M] [--threshold 0.10]
             [--also NAME=REPORTER ...]

The baseline is tests/bench/guard-baseline's commit unless --baseline
names another; its reporter is built once into DIR/guard/COMMIT-BUILDTYPE (the
commit's tree from git archive, and a build beside it of DIR's
buildtype). The traces are made once into
--traces (default DIR/guard/traces) and kept: gen-trace's 1M and 10M
events (100M with --big), seed 1, and memtrace's own trace of
bench-churn's 5,000,000 pairs at depth 20 on the simulated device (a
user's frame with two callers: the helper split of model-site.c).

Every round runs every case in every format with both reporters, the
order reversed every other round; each run reads its trace into the page
cache first and runs under nice. The figure is the child's CPU time (user
+ system, wait4), and the wall time beside it; the verdict takes the
median of the run-by-run ratios (this / baseline), which a load shared by
both runs cancels in: 'slower' or 'faster' when it is beyond
--threshold and at least three quarters of the rounds agree, else
'within the noise'. Prints one line a figure and writes every sample to
DIR/guard/results.json. A benchmark, never a pass/fail test: the exit
status is 0 whatever moved (--fail-on-slower to change that)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
SIZES = {"gen-1M": 1000000, "gen-10M": 10000000, "gen-100M": 100000000}
CHURN_PAIRS = 5000000


def sh(cmd, **kw):
    subprocess.run(cmd, check=True, **kw)


def stored_baseline():
    with open(os.path.join(HERE, "guard-baseline")) as f:
        return next(line.split()[0] for line in f if line.strip() and not line.startswith("#"))


def buildtype(build):
    opts = json.loads(subprocess.run(["meson", "introspect", "--buildoptions", build],
                                     check=True, capture_output=True, text=True).stdout)
    return next(o["value"] for o in opts if o["name"] == "buildtype")


def baseline_reporter(build, commit):
    """The baseline's reporter, built once with this build's buildtype."""
    full = subprocess.run(["git", "-C", SRC, "rev-parse", "--verify", commit + "^{commit}"],
                          check=True, capture_output=True, text=True).stdout.strip()
    kind = buildtype(build)
    root = os.path.join(build, "guard", f"{full[:12]}-{kind}")
    src, bdir = os.path.join(root, "src"), os.path.join(root, "build")
    if not os.path.exists(src):
        # the commit's tree, not a worktree the repository would list
        os.makedirs(src + ".part", exist_ok=True)
        archive = subprocess.Popen(["git", "-C", SRC, "archive", full], stdout=subprocess.PIPE)
        sh(["tar", "-x", "-C", src + ".part"], stdin=archive.stdout)
        if archive.wait() != 0:
            raise RuntimeError(f"git archive {full}: exit status {archive.returncode}")
        os.rename(src + ".part", src)
    if not os.path.exists(os.path.join(bdir, "meson-private", "coredata.dat")):
        sh(["meson", "setup", bdir, src, "-Dbuildtype=" + kind], stdout=subprocess.DEVNULL)
    sh(["ninja", "-C", bdir, "report/memtrace-report"], stdout=subprocess.DEVNULL)
    return os.path.join(bdir, "report", "memtrace-report"), full


def gen_trace(build, path, events):
    if not os.path.exists(path):
        sh([os.path.join(build, "tests", "bench", "gen-trace"), "--events", str(events),
            "--seed", "1", "--out", path + ".part"], stdout=subprocess.DEVNULL)
        os.rename(path + ".part", path)
    return path


def churn_trace(build, path):
    """memtrace's trace of the churn, as bench.py's scale section makes it."""
    if not os.path.exists(path):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("MEMTRACE_", "CUDASIM_")) and k != "LD_PRELOAD"}
        env.update(MEMTRACE_QUIET="1", LD_LIBRARY_PATH=os.path.join(build, "tests", "sim"),
                   CUDASIM_DEVICE_MEMORY="4G", MEMTRACE_OUTPUT=path + ".part",
                   LD_PRELOAD=os.path.join(build, "interpose", "libmemtrace.so"))
        sh([os.path.join(build, "tests", "bench", "bench-churn"), "--api", "async", "--pairs",
            str(CHURN_PAIRS), "--depth", "20", "--threads", "1"], env=env,
           stdout=subprocess.DEVNULL)
        for suffix in ("-wal", "-shm"):
            if os.path.exists(path + ".part" + suffix):
                os.unlink(path + ".part" + suffix)
        os.rename(path + ".part", path)
    return path


def warm(path):
    with open(path, "rb") as f:
        while f.read(1 << 22):
            pass


def run(reporter, trace, fmt):
    warm(trace)
    t0 = time.perf_counter()
    p = subprocess.Popen(["nice", reporter, trace, "--format", fmt, "--no-progress", "-o",
                          os.devnull], stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        raise RuntimeError(f"{reporter} {trace} --format {fmt}: exit status {status}")
    return ru.ru_utime + ru.ru_stime, time.perf_counter() - t0


def verdict(ratios, threshold):
    med = statistics.median(ratios)
    agree = max(sum(r > 1 for r in ratios), sum(r < 1 for r in ratios))
    if abs(med - 1) > threshold and agree * 4 >= 3 * len(ratios):
        return "SLOWER" if med > 1 else "faster"
    return "within the noise"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.environ.get("MEMTRACE_BUILD",
                                                      os.path.join(SRC, "build-bench")))
    ap.add_argument("--baseline", help="a commit (default: tests/bench/guard-baseline)")
    ap.add_argument("--baseline-reporter", help="a baseline reporter already built")
    ap.add_argument("--traces")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--big", action="store_true", help="gen-trace's 100M events too")
    ap.add_argument("--formats", default="json,text,html")
    ap.add_argument("--cases", help="default: gen-1M,gen-10M,churn-10M (and gen-100M with --big)")
    ap.add_argument("--threshold", type=float, default=0.10)
    ap.add_argument("--fail-on-slower", action="store_true")
    ap.add_argument("--also", action="append", default=[], metavar="NAME=REPORTER",
                    help="another reporter in the same rounds (another commit's), its medians "
                         "and ratios to the baseline printed after the verdicts")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    this = os.path.join(build, "report", "memtrace-report")
    if args.baseline_reporter:
        base, commit = args.baseline_reporter, "given"
    else:
        base, commit = baseline_reporter(build, args.baseline or stored_baseline())
    traces = os.path.abspath(args.traces or os.path.join(build, "guard", "traces"))
    os.makedirs(traces, exist_ok=True)
    names = (args.cases.split(",") if args.cases else
             ["gen-1M", "gen-10M", "churn-10M"] + (["gen-100M"] if args.big else []))
    cases = {}
    for n in names:
        path = os.path.join(traces, n + ".db")
        cases[n] = churn_trace(build, path) if n == "churn-10M" else gen_trace(build, path,
                                                                                SIZES[n])
    events = {n: SIZES.get(n, 2 * CHURN_PAIRS) for n in names}
    reporters = {"baseline": base, "this": this}
    reporters.update(a.split("=", 1) for a in args.also)
    order = list(reporters)
    figures = {f"{n} {fmt}": {r: {"cpu": [], "wall": []} for r in order}
               for n in names for fmt in args.formats.split(",")}
    for rnd in range(args.rounds):
        for fig, by in figures.items():
            n, fmt = fig.split()
            for r in order if rnd % 2 == 0 else order[::-1]:
                cpu, wall = run(reporters[r], cases[n], fmt)
                by[r]["cpu"].append(cpu)
                by[r]["wall"].append(wall)
            print(f"round {rnd + 1}/{args.rounds}: {fig}: baseline {by['baseline']['cpu'][-1]:.2f}"
                  f" s, this {by['this']['cpu'][-1]:.2f} s (load {os.getloadavg()[0]:.1f})",
                  file=sys.stderr, flush=True)
    out = os.path.join(build, "guard")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"baseline": commit, "figures": figures}, f, indent=1)
    print(f"baseline {commit[:12]} vs this build ({build}), {args.rounds} rounds, CPU seconds")
    print(f"{'figure':<18} {'baseline':>9} {'this':>9} {'events/s':>10} {'ratio':>6} "
          f"{'spread':>13}  verdict")
    slower = False
    for fig, by in figures.items():
        b, t = by["baseline"]["cpu"], by["this"]["cpu"]
        ratios = [y / x for x, y in zip(b, t)]
        v = verdict(ratios, args.threshold)
        slower |= v == "SLOWER"
        rate = events[fig.split()[0]] / statistics.median(t) / 1e6
        print(f"{fig:<18} {statistics.median(b):8.2f}s {statistics.median(t):8.2f}s "
              f"{rate:8.2f}M {statistics.median(ratios):6.3f} {min(ratios):6.3f}-"
              f"{max(ratios):.3f}  {v} ({(statistics.median(ratios) - 1) * 100:+.0f}%)")
    for name in order[2:]:
        print(f"{name} ({reporters[name]}), same rounds:")
        for fig, by in figures.items():
            b, o = by["baseline"]["cpu"], by[name]["cpu"]
            ratios = [y / x for x, y in zip(b, o)]
            rate = events[fig.split()[0]] / statistics.median(o) / 1e6
            print(f"{fig:<18} {statistics.median(b):8.2f}s {statistics.median(o):8.2f}s "
                  f"{rate:8.2f}M {statistics.median(ratios):6.3f} {min(ratios):6.3f}-"
                  f"{max(ratios):.3f}")
    return 1 if slower and args.fail_on_slower else 0


if __name__ == "__main__":
    sys.exit(main())
