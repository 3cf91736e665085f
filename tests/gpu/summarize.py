"""One row of tests/gpu/run.sh's table from a trace: what the hooks saw,
what CUPTI saw, how many matched (the rule of docs/cupti.md, applied by
tests/sim-cupti/reconcile.py), the peak and the OOMs (memtrace report).

usage: summarize.py TRACE REPORTER   prints: hooks cupti matched alone
not_confirmed peak_bytes ooms cupti_on (space-separated)"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sim-cupti"))
import reconcile  # noqa: E402


def main():
    trace, reporter = sys.argv[1], sys.argv[2]
    r = reconcile.reconcile(trace)
    a = r["allocations"]
    proc = subprocess.run([reporter, trace, "--format", "json"], capture_output=True, text=True,
                          timeout=600)
    totals = json.loads(proc.stdout)["totals"] if proc.returncode == 0 else {}
    print(a["hooks"], a["cupti"], a["matched"], a["cupti_alone"]["count"],
          a["not_confirmed"]["count"], totals.get("peak_bytes", "?"), totals.get("ooms", "?"),
          "on" if r["cupti_on"] else "off")


if __name__ == "__main__":
    main()
