"""What memtrace adds to a PyTorch training step, against what torch's own
recorder (torch.cuda.memory._record_memory_history) adds: a benchmark,
not a pass/fail test (docs/performance.md, "PyTorch training step", has
the method and the figures).

    python3 tests/bench/torch-step.py [--build BUILD] [--rounds R]
                                      [--steps N] [--capacity SIZE]

Each round runs the same training loop (an MLP with LayerNorm, AdamW,
cross-entropy; WARMUP steps, then N timed steps, each ending with
torch.cuda.synchronize()) once in each variant, in a fresh process on
`scripts/sim-run`, the variants in a new random order every round so
that other load on the machine falls on all of them alike:

  plain          torch's caching allocator
  memtrace       the same under LD_PRELOAD=libmemtrace.so (with torch's
                 allocator actions, the tensor events, as by default)
  memtrace/no-tensors
                 the same with MEMTRACE_TENSORS=0: the CUDA calls only
  torch-history  the same with torch.cuda.memory._record_memory_history()
                 (torch's recorder: every block's alloc and free with its
                 Python and C++ stack, max_entries 100000)
  torch-history/py
                 the same with stacks='python': Python stacks only
  plain/pt, memtrace/pt
                 the same two with memtrace run --per-tensor's setting,
                 PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync (every
                 tensor a cudaMallocAsync); torch's recorder refuses that
                 backend ("cudaMallocAsync does not yet support
                 recordHistory"), so the caching allocator's
                 torch-history is what memtrace/pt is held against

Each run prints its median step time, in wall time and in the process's
CPU time (time.process_time(): every thread of the process, memtrace's
writer and torch's autograd thread among them; it does not count the
time the process waits for a CPU, so it holds far better than wall time
on a loaded machine); the table gives, per variant, the median over the
rounds of those medians, and its ratio to the plain variant with the
same allocator. Kernels are no-ops on the simulated
device, so a step is torch's CPU work alone: the added cost is a larger
share of it than on a GPU, where kernels take time.

Needs scripts/framework-python torch and a build with the simulated
device and cuBLAS (tests/sim): BUILD defaults to $MEMTRACE_BUILD, else
build/ at the top of the source tree."""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WARMUP = 5

VARIANTS = [
    ("plain", False, "", False),
    ("memtrace", True, "", False),
    ("memtrace/no-tensors", True, "", False),
    ("torch-history", False, "all", False),
    ("torch-history/py", False, "python", False),
    ("plain/pt", False, "", True),
    ("memtrace/pt", True, "", True),
]


def worker(steps, history):
    """The training loop, in the framework's python: prints
    {"median_step_s", "median_cpu_s", "steps", "error"} as one JSON line."""
    import torch

    out = {"steps": steps}
    try:
        if history:
            torch.cuda.memory._record_memory_history(max_entries=100000, stacks=history)
        torch.manual_seed(0)
        model = torch.nn.Sequential(
            torch.nn.Linear(512, 1024), torch.nn.GELU(), torch.nn.LayerNorm(1024),
            torch.nn.Linear(1024, 1024), torch.nn.GELU(), torch.nn.LayerNorm(1024),
            torch.nn.Linear(1024, 10)).cuda()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        x = torch.randn(64, 512, device="cuda")
        y = torch.randint(0, 10, (64,), device="cuda")
        times, cpu = [], []
        for step in range(WARMUP + steps):
            start, start_cpu = time.perf_counter(), time.process_time()
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            torch.cuda.synchronize()
            if step >= WARMUP:
                times.append(time.perf_counter() - start)
                cpu.append(time.process_time() - start_cpu)
        out["median_step_s"] = statistics.median(times)
        out["median_cpu_s"] = statistics.median(cpu)
    except Exception as e:  # a variant torch refuses: said in the table
        out["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    print(json.dumps(out), flush=True)


def run_variant(args, python, name, traced, history, per_tensor, tmp):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MEMTRACE_", "CUDASIM_", "PYTORCH_")) and k != "LD_PRELOAD"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["MEMTRACE_BUILD"] = args.build
    if per_tensor:
        env["PYTORCH_CUDA_ALLOC_CONF"] = "backend:cudaMallocAsync"
    trace = None
    if traced:
        trace = os.path.join(tmp, f"{name.replace('/', '-')}-{time.monotonic_ns()}.db")
        env.update(LD_PRELOAD=os.path.join(args.build, "interpose", "libmemtrace.so"),
                   MEMTRACE_OUTPUT=trace, MEMTRACE_CUPTI="off", MEMTRACE_QUIET="1")
        if name.endswith("/no-tensors"):
            env["MEMTRACE_TENSORS"] = "0"
    cmd = [os.path.join(SOURCE, "scripts", "sim-run"), "--capacity", args.capacity, "--",
           python, os.path.abspath(__file__), "--worker", "--steps", str(args.steps)]
    if history:
        cmd += ["--history", history]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
    if proc.returncode != 0 or not lines:
        sys.exit(f"{name}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    if trace:
        os.unlink(trace)
    return json.loads(lines[-1])


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.environ.get("MEMTRACE_BUILD",
                                                      os.path.join(SOURCE, "build")))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--capacity", default="4G")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--history", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.steps, args.history)
    args.build = os.path.abspath(args.build)
    proc = subprocess.run([os.path.join(SOURCE, "scripts", "framework-python"), "torch"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"torch-step: no torch: {proc.stderr.strip().splitlines()[-1:]}")
    python = proc.stdout.strip()
    samples = {name: [] for name, *_ in VARIANTS}
    cpu = {name: [] for name, *_ in VARIANTS}
    errors = {}
    loads = []
    with tempfile.TemporaryDirectory(prefix="memtrace-torch-step-") as tmp:
        for r in range(args.rounds):
            order = list(VARIANTS)
            random.shuffle(order)
            for name, traced, history, per_tensor in order:
                loads.append(loadavg())
                out = run_variant(args, python, name, traced, history, per_tensor, tmp)
                if "error" in out:
                    errors[name] = out["error"]
                else:
                    samples[name].append(out["median_step_s"])
                    cpu[name].append(out["median_cpu_s"])
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    med = {name: statistics.median(v) for name, v in samples.items() if v}
    med_cpu = {name: statistics.median(v) for name, v in cpu.items() if v}
    print(f"PyTorch training step on the simulated device: {args.rounds} rounds, "
          f"{args.steps} timed steps each (after {WARMUP}); load average "
          f"{min(loads):.1f}-{max(loads):.1f} while it ran")
    print()
    print("| variant | median step (ms) | runs' medians (ms) | vs plain | CPU per step (ms) "
          "| runs' CPU medians (ms) | CPU vs plain |")
    print("|---|---|---|---|---|---|---|")
    for name, *_ in VARIANTS:
        if name in errors and name not in med:
            print(f"| {name} | n/a | {errors[name]} | | | | |")
            continue
        base = "plain/pt" if name.endswith("/pt") else "plain"
        spread = ", ".join(f"{s * 1e3:.2f}" for s in samples[name])
        spread_cpu = ", ".join(f"{s * 1e3:.2f}" for s in cpu[name])
        ratio = f"{med[name] / med[base]:.3f}" if med.get(base) else "n/a"
        ratio_cpu = f"{med_cpu[name] / med_cpu[base]:.3f}" if med_cpu.get(base) else "n/a"
        print(f"| {name} | {med[name] * 1e3:.2f} | {spread} | {ratio} "
              f"| {med_cpu[name] * 1e3:.2f} | {spread_cpu} | {ratio_cpu} |")
    print(json.dumps({"samples": samples, "cpu": cpu, "errors": errors, "loadavg": [min(loads), max(loads)]}),
          file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
