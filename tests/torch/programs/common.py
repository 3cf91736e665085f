"""Torch's own figures, printed as one JSON object on stdout by the
programs of tests/torch: what the tests compare with memtrace's report."""
import json
import re
import sys

import torch


def figures(**extra):
    """torch's figures after a synchronize: memory_reserved(),
    max_memory_reserved(), memory_allocated(), the segments of
    memory_snapshot() (how many, their total_size, and each one's address
    and size), memory_stats()'s num_alloc_retries and num_ooms; and extra."""
    torch.cuda.synchronize()
    snapshot = torch.cuda.memory_snapshot()
    stats = torch.cuda.memory_stats()
    out = {
        "memory_reserved": torch.cuda.memory_reserved(),
        "max_memory_reserved": torch.cuda.max_memory_reserved(),
        "memory_allocated": torch.cuda.memory_allocated(),
        "segments": len(snapshot),
        "segments_bytes": sum(s["total_size"] for s in snapshot),
        "segment_list": sorted([s["address"], s["total_size"]] for s in snapshot),
        "num_alloc_retries": stats["num_alloc_retries"],
        "num_ooms": stats["num_ooms"],
    }
    out.update(extra)
    return out


def emit(fig):
    """Prints the figures, then lets autograd's device thread settle."""
    json.dump(fig, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    sys.stdout.flush()
    settle_autograd()


_SETTLED = []  # settle_autograd's tensors, kept to the end (below)


def settle_autograd():
    """Returns once autograd's CUDA thread has let go of every earlier
    backward. Each backward's graph holds a Python object: torch 2.15's
    backward() puts a copy of the caller's contextvars in the graph's
    thread-local state (torch.autograd.graph._engine_run_backward), and
    when a backward fails (out of memory) the nodes' saved Python tensors
    too. Whichever thread drops the graph last releases them, under the
    GIL; should that be autograd's thread while the interpreter is
    finalizing, Python ends the thread and the process aborts ("terminate
    called without an active exception": about one run in fifteen of
    holdout/oom_grow.py on a loaded machine, with or without memtrace; a
    race in torch). That thread takes its tasks in order, so a backward
    through it returns only after it moved past the earlier ones. This one
    has no elements and allocates nothing; it goes to the engine itself,
    so that its graph holds no contextvars, and its tensors stay
    referenced from here: whoever drops its graph releases no Python
    object."""
    if torch.cuda.is_initialized():
        leaf = torch.empty(0, device="cuda", requires_grad=True)
        grad = torch.empty(0, device="cuda")
        out = leaf * 2
        _SETTLED.append((leaf, grad, out))
        torch.autograd.Variable._execution_engine.run_backward(
            (out,), (grad,), False, False, (), allow_unreachable=True, accumulate_grad=True)


class OomObserver:
    """torch's out-of-memory observer (torch._C._cuda_attach_out_of_memory_observer):
    the caching allocator calls it when it gives up on an allocation,
    after freeing its cache and retrying, just before it raises
    OutOfMemoryError, with the size it asked cudaMalloc for and the free
    device memory cudaMemGetInfo then gave. Records those, and
    memory_reserved() at that moment."""

    def __init__(self):
        self.calls = []
        torch._C._cuda_attach_out_of_memory_observer(self)

    def __call__(self, device, alloc, device_total, device_free):
        self.calls.append({"alloc": alloc, "device_total": device_total,
                           "device_free": device_free,
                           "reserved": torch.cuda.memory_reserved()})


def tried_to_allocate(message):
    """The size torch's OOM message names, as it wrote it."""
    m = re.search(r"Tried to allocate ([0-9.]+ (?:bytes|KiB|MiB|GiB))", message)
    return m.group(1) if m else None


def blocks_by_tag(snapshot, tensors):
    """What memory_snapshot() says the tensors of each tag hold: {tag: [the
    sum of their blocks' sizes, how many]}; tensors maps a tag to a list
    of tensors."""
    size = {b["address"]: b["size"] for s in snapshot for b in s["blocks"]}
    return {tag: [sum(size[t.data_ptr()] for t in ts), len(ts)] for tag, ts in tensors.items()}


def largest_inactive(snapshot):
    """The largest free block of memory_snapshot()."""
    return max([b["size"] for s in snapshot for b in s["blocks"] if b["state"] == "inactive"],
               default=0)
