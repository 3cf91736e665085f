"""Opens a torch-snapshot export (memtrace report --format torch-snapshot)
as torch's own memory viewer does: torch.cuda._memory_viz reads the
pickle, and its summary (segsum, which checks that each segment's blocks
add up to it), its trace printout and its two HTML plots are made from
it. Prints, as one JSON line, the segments as torch read them (address,
total_size), their blocks (address, size, requested_size, state), what
segsum counted, and the trace's length.
Usage: read_snapshot.py FILE"""
import json
import pickle
import sys

from torch.cuda import _memory_viz

with open(sys.argv[1], "rb") as f:
    data = pickle.load(f)
summary = _memory_viz.segsum(data)
printout = _memory_viz.trace(data)
plots = [_memory_viz.trace_plot(data), _memory_viz.segment_plot(data)]
segments_line = [l for l in summary.splitlines() if l.startswith("segments: ")]
json.dump({
    "segments": sorted([s["address"], s["total_size"]] for s in data["segments"]),
    "blocks": sorted([b["address"], b["size"], b["requested_size"], b["state"]]
                     for s in data["segments"] for b in s["blocks"]),
    "segsum_segments": int(segments_line[0].split()[1]),
    "trace_actions": sum(len(t) for t in data["device_traces"]),
    "trace_printout_lines": len(printout.splitlines()),
    "plots_bytes": [len(p) for p in plots],
}, sys.stdout, sort_keys=True)
sys.stdout.write("\n")
