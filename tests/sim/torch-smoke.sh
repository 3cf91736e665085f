#!/bin/sh
# Unmodified PyTorch (scripts/framework-python torch) on the simulated
# device through scripts/sim-run: torch-smoke.py on a 1 GiB device (the
# out-of-memory case), on sim-run's default 16 GiB, and with torch's
# expandable segments (VMM) on 1 GiB. Skips (77) when the torch
# environment cannot be had.
#
# usage: torch-smoke.sh SOURCE_ROOT BUILD_ROOT
set -u

if [ $# -ne 2 ]; then
	echo "usage: $0 SOURCE_ROOT BUILD_ROOT" >&2
	exit 99
fi
src=$1 build=$2

python=$("$src/scripts/framework-python" torch)
rc=$?
[ $rc -eq 77 ] && { echo "torch is not available here: skipped"; exit 77; }
[ $rc -eq 0 ] || { echo "FAIL: scripts/framework-python torch exited $rc"; exit 1; }

# The OOM at 1 GiB, the figures at the default size; numpy's absence is
# warned about by torch, not a failure.
export MEMTRACE_BUILD="$build"
unset CUDASIM_DEVICE_MEMORY CUDASIM_DEVICE_COUNT CUDASIM_RESERVED_MEMORY PYTORCH_CUDA_ALLOC_CONF
"$src/scripts/sim-run" --capacity 1G -- "$python" -W ignore "$src/tests/sim/torch-smoke.py" \
	$((1 << 30)) || { echo "FAIL: torch-smoke.py on a 1G device"; exit 1; }
"$src/scripts/sim-run" -- "$python" -W ignore "$src/tests/sim/torch-smoke.py" \
	$((16 << 30)) || { echo "FAIL: torch-smoke.py on the default 16G device"; exit 1; }
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \
	"$src/scripts/sim-run" --capacity 1G -- "$python" -W ignore "$src/tests/sim/torch-smoke.py" \
	$((1 << 30)) || { echo "FAIL: torch-smoke.py with expandable segments"; exit 1; }
