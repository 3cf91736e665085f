#!/usr/bin/env python3
"""Reporters of different commits side by side, on the scale section's
traces (docs/performance.md, "The live set's own address index"):

    compare-reporters.py --gen BUILD/tests/bench/gen-trace --traces DIR \\
        --rounds 7 --out results.json NAME=REPORTER NAME=REPORTER...

gen-trace's 10M events (JSON and text) and 64 of the scale section's
ranks (`--events 100000 --rank R --seed R+1`, JSON, `--jobs 1`), made into
DIR once. Each round runs every case with every reporter, in the order
given on even rounds and reversed on odd ones, so that a load that comes
and goes falls on all of them alike; each run reads its traces into the
page cache first and runs under `nice`. The figure is the CPU time (user
+ system) of the child, from wait4: on a shared 2-core machine the wall
time says more about the others than about the reporter. Prints every
run, the medians, and each reporter's run-by-run ratio to the first
named (the ratio within a round is what a load shared by both cancels
in). Never a pass/fail test."""
import argparse
import json
import os
import statistics
import subprocess

RANKS, RANK_EVENTS, EVENTS = 64, 100000, 10000000


def made(gen, path, args):
    if not os.path.exists(path):
        subprocess.run([gen, "--out", path] + args, check=True, stdout=subprocess.DEVNULL)
    return path


def warm(files):
    for f in files:
        with open(f, "rb") as fh:
            while fh.read(1 << 20):
                pass


def cpu_of(cmd):
    p = subprocess.Popen(["nice"] + cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    if status != 0:
        raise RuntimeError(f"{cmd[0]}: exit status {status}")
    return usage.ru_utime + usage.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gen", required=True, help="gen-trace")
    ap.add_argument("--traces", required=True, help="where the traces are (made once)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cases", default="json,text,ranks")
    ap.add_argument("--out")
    ap.add_argument("reporters", nargs="+", metavar="NAME=REPORTER")
    args = ap.parse_args()
    reporters = dict(r.split("=", 1) for r in args.reporters)
    os.makedirs(args.traces, exist_ok=True)
    big = made(args.gen, os.path.join(args.traces, "gen-10M.db"), ["--events", str(EVENTS)])
    ranks = [made(args.gen, os.path.join(args.traces, f"rank-{r}.db"),
                  ["--events", str(RANK_EVENTS), "--rank", str(r), "--seed", str(r + 1)])
             for r in range(RANKS)]
    cases = {
        "json": (lambda rep: [rep, big, "--format", "json", "--no-progress", "-o", os.devnull],
                 [big]),
        "text": (lambda rep: [rep, big, "--format", "text", "--no-progress", "-o", os.devnull],
                 [big]),
        "ranks": (lambda rep: [rep, "--format", "json", "--jobs", "1", "-o", os.devnull] + ranks,
                  ranks),
    }
    cases = {c: cases[c] for c in args.cases.split(",")}
    names = list(reporters)
    cpu = {c: {n: [] for n in names} for c in cases}
    for rnd in range(args.rounds):
        for c, (cmd, inputs) in cases.items():
            for n in names if rnd % 2 == 0 else names[::-1]:
                warm(inputs)
                cpu[c][n].append(round(cpu_of(cmd(reporters[n])), 3))
                print(f"round {rnd}: {c} {n} {cpu[c][n][-1]:.2f} s "
                      f"(load {os.getloadavg()[0]:.1f})", flush=True)
        if args.out:
            with open(args.out, "w") as f:
                json.dump(cpu, f)
    for c in cases:
        first = cpu[c][names[0]]
        for n in names:
            runs = cpu[c][n]
            line = f"{c} {n}: {', '.join('%.2f' % x for x in runs)}: {statistics.median(runs):.2f}"
            if n != names[0]:
                ratio = [b / a for a, b in zip(first, runs)]
                line += (f"; to {names[0]}, run by run: median {statistics.median(ratio):.3f},"
                         f" {sum(r < 1 for r in ratio)} of {len(ratio)} below 1")
            print(line)


if __name__ == "__main__":
    main()
