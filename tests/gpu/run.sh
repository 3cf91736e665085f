#!/bin/sh
# The real-GPU check: short programs run with and without memtrace on an
# NVIDIA GPU, and one table of what the hooks and CUPTI saw.
#
# usage: tests/gpu/run.sh [BUILD_DIR]     (default: $MEMTRACE_BUILD, else ./build)
#
# It builds nothing: it runs the build it is given (libmemtrace, the
# reporter, tests/gpu/static-alloc made by nvcc at build time). Python
# programs need torch, cupy, jax in $PYTHON (default python3), tensorflow
# in $TF_PYTHON (default $PYTHON); a missing one makes its rows "skipped". Traces are kept in $MEMTRACE_GPU_OUT
# (default BUILD_DIR/gpu-results). docs/gpu-validation.md shows the
# expected table and how to read it.
#
# Exit status: 77 where there is no GPU; 1 when a program's exit status
# changed under memtrace, a trace could not be read, or an OOM row found
# no OOM; 0 otherwise.
set -u

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-${MEMTRACE_BUILD:-build}}
python=${PYTHON:-python3}
tf_python=${TF_PYTHON:-$python}

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
	echo "tests/gpu: no NVIDIA GPU here (nvidia-smi -L lists none): skipped"
	exit 77
fi

dir=$build
build=$(cd "$dir" 2>/dev/null && pwd) || { echo "tests/gpu: no build directory $dir"; exit 1; }
reporter=$build/report/memtrace-report
lib=$build/interpose/libmemtrace.so
if [ ! -f "$lib" ] || [ ! -x "$reporter" ]; then
	echo "tests/gpu: $build has no libmemtrace or memtrace-report: build first (elsewhere is fine)"
	exit 1
fi
out=${MEMTRACE_GPU_OUT:-$build/gpu-results}
mkdir -p "$out" || exit 1

failed=0
notes=""

now_ms() {
	date +%s%3N
}

seconds() {
	awk -v ms="$1" 'BEGIN { printf "%.2f s", ms / 1000 }'
}

# row LABEL OOM VARS CMD...: CMD run plainly, then under memtrace with the
# environment VARS (space-separated NAME=VALUE, may be empty). OOM: yes
# when the program must provoke an out-of-memory failure.
row() {
	label=$1 want_oom=$2 vars=$3
	shift 3
	name=$(printf '%s' "$label" | tr -c 'a-zA-Z0-9' '-')
	rm -f "$out/$name".*
	t0=$(now_ms)
	# shellcheck disable=SC2086 # VARS are words on purpose
	env $vars "$@" >"$out/$name.plain.log" 2>&1
	rc_plain=$?
	t1=$(now_ms)
	if [ "$rc_plain" -eq 77 ]; then
		printf '%-34s %s\n' "$label" "skipped: $(head -n 1 "$out/$name.plain.log")"
		return
	fi
	# shellcheck disable=SC2086
	env $vars LD_PRELOAD="$lib" MEMTRACE_OUTPUT="$out/$name.db" MEMTRACE_CUPTI=on \
		"$@" >"$out/$name.traced.log" 2>&1
	rc=$?
	t2=$(now_ms)
	if [ "$rc" -ne "$rc_plain" ]; then
		notes="$notes
$label: exit status $rc under memtrace, $rc_plain without ($out/$name.traced.log)"
		failed=1
	fi
	if ! summary=$("$python" "$here/summarize.py" "$out/$name.db" "$reporter" 2>"$out/$name.err"); then
		printf '%-34s %s\n' "$label" "no trace read ($out/$name.err)"
		failed=1
		return
	fi
	# shellcheck disable=SC2086
	set -- $summary
	hooks=$1 cupti=$2 matched=$3 alone=$4 unconfirmed=$5 peak=$6 ooms=$7 on=$8
	if [ "$on" != on ]; then
		cupti=off
		notes="$notes
$label: CUPTI was off: $(grep -m 1 'memtrace: .*CUPTI' "$out/$name.traced.log")"
	fi
	oom=no
	[ "$ooms" != "?" ] && [ "$ooms" -gt 0 ] && oom="yes ($ooms)"
	if [ "$want_oom" = yes ] && [ "$oom" = no ]; then
		notes="$notes
$label: no OOM event in $out/$name.db"
		failed=1
	fi
	[ "$alone" != 0 ] && notes="$notes
$label: $alone allocations seen by CUPTI alone ($out/$name.db; tests/sim-cupti/reconcile.py lists them)"
	[ "$unconfirmed" != 0 ] && notes="$notes
$label: $unconfirmed hooked allocations CUPTI did not confirm"
	peak_mib=$(awk -v b="$peak" 'BEGIN { if (b == "?") print "?"; else printf "%.1f MiB", b / 1048576 }')
	printf '%-34s %6s %6s %7s %12s %-8s %9s %9s\n' "$label" "$hooks" "$cupti" "$matched" \
		"$peak_mib" "$oom" "$(seconds $((t2 - t1)))" "$(seconds $((t1 - t0)))"
}

w="$here/workloads.py"
nvidia-smi -L | head -n 1
printf '%-34s %6s %6s %7s %12s %-8s %9s %9s\n' program hooks cupti matched peak OOM with without
row "torch (caching allocator)" no "" "$python" "$w" torch-alloc
row "torch backend:cudaMallocAsync" no "PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync" \
	"$python" "$w" torch-alloc
row "torch expandable_segments:True" no "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" \
	"$python" "$w" torch-alloc
row "torch CUDA graph" no "" "$python" "$w" torch-graph
row "torch OOM" yes "" "$python" "$w" torch-oom
row "cupy" no "" "$python" "$w" cupy
row "jax" no "" "$python" "$w" jax
row "keras Conv2D (cuDNN graph API)" no "" "$tf_python" "$w" keras-conv
row "tensorflow OOM (BFC arena)" yes "" "$tf_python" "$w" tf-oom
if [ -x "$build/tests/gpu/static-alloc" ]; then
	row "CUDA C, static runtime (nvcc)" yes "" "$build/tests/gpu/static-alloc"
else
	printf '%-34s %s\n' "CUDA C, static runtime (nvcc)" "not built (no nvcc at build time)"
fi
[ -n "$notes" ] && printf '%s\n' "$notes"
echo "traces and logs: $out"
exit $failed
