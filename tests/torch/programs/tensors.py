"""Tensors of several sizes, each made on a line of its own (tagged
"# @NAME"), in torch's caching allocator: an 11 MiB one first (a 12 MiB
segment torch does not split for it), a small one (its 2 MiB segment
shared), a 3 MiB one (split out of a 20 MiB segment), an 11 MiB one
(split out of the rest of that one), one freed (its block back in
the cache), several on one line. Prints torch's figures with every block
of memory_snapshot() (address, size, requested size, state) and
memory_stats()'s allocation count."""
import torch

from common import blocks_by_tag, emit, figures, largest_inactive

MiB = 1 << 20
whole = torch.empty(11 * MiB, dtype=torch.uint8, device="cuda")  # @whole
small = torch.empty(1000, dtype=torch.uint8, device="cuda")  # @small
mid = torch.empty(3 * MiB, dtype=torch.uint8, device="cuda")  # @mid
big = torch.empty(11 * MiB, dtype=torch.uint8, device="cuda")  # @big
gone = torch.empty(5 * MiB, dtype=torch.uint8, device="cuda")  # @gone
del gone
many = [torch.empty(64 * 1024, device="cuda") for _ in range(4)]  # @many
torch.cuda.synchronize()
snapshot = torch.cuda.memory_snapshot()
blocks = sorted([b["address"], b["size"], b["requested_size"], b["state"]]
                for s in snapshot for b in s["blocks"])
stats = torch.cuda.memory_stats()
by_tag = blocks_by_tag(snapshot, {"whole": [whole], "small": [small], "mid": [mid], "big": [big], "many": many})
emit(figures(blocks=blocks, allocations=stats["allocation.all.current"], by_tag=by_tag,
             largest_free=largest_inactive(snapshot)))
