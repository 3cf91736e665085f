"""The frame of the what-fits programs (issue 50): the batch size from
the command line (--batch), a few training steps; prints, as one JSON
object, whether the program ran out of memory and torch's own
max_memory_allocated() and max_memory_reserved(): the truth that
tests/torch/test_what_fits.py checks memtrace's prediction against."""
import argparse
import contextlib
import functools
import gc
import json
import sys

import torch


def by_role(snapshot):
    """MemTracker's snapshot of one device: {its role's name: bytes}."""
    return {getattr(k, "value", k): v for k, v in snapshot.items()}


def state_blocks(state):
    """torch's own blocks (memory_snapshot()) of the model's parameters and
    buffers and of the optimizer's state, each storage once: what
    memory_allocated() counts for them, where MemTracker counts the
    request rounded to 512 bytes (a block holds more when the allocator
    does not split off a remainder under 1 MiB)."""
    blocks = {}
    for seg in torch.cuda.memory_snapshot():
        addr = seg["address"]
        for b in seg["blocks"]:
            blocks[addr] = b["size"]
            addr += b["size"]

    def total(tensors):
        ptrs = {t.untyped_storage().data_ptr() for t in tensors if t.is_cuda}
        return sum(blocks[p] for p in ptrs)

    model, opt = state["model"], state["opt"]
    return {"parameters": total(list(model.parameters()) + list(model.buffers())),
            "optimizer_state": total(v for st in opt.state.values() for v in st.values()
                                     if torch.is_tensor(v))}


def run(build, step, steps=3):
    """build(batch) -> state; step(state) trains one step, its forward and
    loss under `with state["amp"]():` (torch.autocast with --autocast)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--autocast", action="store_true",
                    help="the forward and the loss under torch.autocast with bfloat16")
    ap.add_argument("--memtracker", action="store_true",
                    help="train under torch's MemTracker and print its split by role at its peak")
    args = ap.parse_args()
    torch.manual_seed(0)
    oom = False
    out = {}
    try:
        state = build(args.batch)
        state["amp"] = (functools.partial(torch.autocast, "cuda", dtype=torch.bfloat16)
                        if args.autocast else contextlib.nullcontext)
        if args.memtracker:
            from torch.distributed._tools.mem_tracker import MemTracker
            tracker = MemTracker()
            tracker.track_external(state["model"], state["opt"])
            cuda = torch.device("cuda", 0)
            with tracker:
                try:
                    for _ in range(steps):
                        step(state)
                        tracker.reset_mod_stats()  # it takes one iteration at a time
                except torch.cuda.OutOfMemoryError:  # what was live as it ran out
                    out["memtracker_at_oom"] = by_role(tracker.get_tracker_snapshot()[cuda])
                    raise
            out["memtracker"] = by_role(tracker.get_tracker_snapshot("peak")[cuda])
            out["blocks"] = state_blocks(state)
        else:
            for _ in range(steps):
                step(state)
        torch.cuda.synchronize()
    except torch.cuda.OutOfMemoryError:
        oom = True
    out.update({"oom": oom, "max_memory_allocated": torch.cuda.max_memory_allocated(),
                "max_memory_reserved": torch.cuda.max_memory_reserved()})
    json.dump(out, sys.stdout)
    print()
    sys.stdout.flush()
    # The model, its optimizer and what a step kept (the LSTM's hidden
    # state holds its graph) released now, not while the interpreter
    # finalizes: autograd's device thread taking the GIL then is made to
    # exit by Python, which aborts the process ("terminate called without
    # an active exception") now and then on a loaded machine.
    state = None
    gc.collect()
    torch.cuda.synchronize()
    settle_autograd()


_SETTLED = []


def settle_autograd():
    """Returns once autograd's CUDA thread has dropped every earlier
    backward's graph, each of which holds a Python object (torch 2.15 puts
    the caller's contextvars in it); one dropped there while the
    interpreter finalizes aborts the process. The thread takes its tasks
    in order; this backward, through the engine itself (no contextvars)
    and with its tensors kept, releases nothing Python owns (as
    tests/torch/programs/common.py's)."""
    leaf = torch.empty(0, device="cuda", requires_grad=True)
    grad = torch.empty(0, device="cuda")
    out = leaf * 2
    _SETTLED.append((leaf, grad, out))
    torch.autograd.Variable._execution_engine.run_backward(
        (out,), (grad,), False, False, (), allow_unreachable=True, accumulate_grad=True)
