"""torch.cuda.graph captures, repeated and kept. Each capture gets its own
private memory pool in torch's caching allocator; the segments that pool
needs are cudaMalloc'd while the stream is being captured (torch switches
the capture to relaxed mode around them). Three graphs are captured,
replayed and kept alive to the end (with their outputs); a fourth is
captured, replayed and dropped (its pool freed by empty_cache()). Before
each capture the program empties torch's cache, so memory_reserved()
after the capture less before is what that graph's pool took. Prints
those growths and the figures at the end."""
import torch

from common import emit, figures

MiB = 1 << 20
torch.manual_seed(0)
x = torch.randn(1 << 20, device="cuda")


def capture(i):
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    before = torch.cuda.memory_reserved()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = x * 2 + 1
        z = torch.empty((i + 1) * 25 * MiB, dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    return g, (y, z), torch.cuda.memory_reserved() - before


kept, grew = [], []
for i in range(3):
    g, outputs, growth = capture(i)
    g.replay()
    kept.append((g, outputs))
    grew.append(growth)
g, outputs, dropped_growth = capture(3)
g.replay()
torch.cuda.synchronize()
before_drop = torch.cuda.memory_reserved()
del g, outputs
torch.cuda.empty_cache()
dropped_freed = before_drop - torch.cuda.memory_reserved()
# memory_snapshot()'s segments of the graphs' private pools, by pool
pools = {}
for seg in torch.cuda.memory_snapshot():
    pool = tuple(seg["segment_pool_id"])
    if pool != (0, 0):
        pools[pool] = pools.get(pool, 0) + seg["total_size"]
emit(figures(grew=grew, dropped_growth=dropped_growth, dropped_freed=dropped_freed,
             private_pool_bytes=[pools[k] for k in sorted(pools)]))
