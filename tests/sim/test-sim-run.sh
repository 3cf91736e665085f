#!/bin/sh
# scripts/sim-run's own behaviour: a program built against the toolkit's
# runtime runs on the simulated device under it; --capacity reaches the
# device; bad options and a missing build give one clear line and exit 2.
#
# usage: test-sim-run.sh SIM_RUN BUILD_ROOT PROGRAM
#   PROGRAM  a test program that passes on a 1 GiB simulated device
set -u

if [ $# -ne 3 ]; then
	echo "usage: $0 SIM_RUN BUILD_ROOT PROGRAM" >&2
	exit 99
fi
simrun=$1 build=$2 program=$3
fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
unset CUDASIM_DEVICE_MEMORY CUDASIM_DEVICE_COUNT LD_PRELOAD
export MEMTRACE_BUILD="$build"

# expect STATUS PATTERN ARGS...: the exit status, and stderr matching.
expect() {
	want=$1 pattern=$2
	shift 2
	"$simrun" "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	[ $got -eq "$want" ] || bad "sim-run $*: exit $got, want $want"
	[ -z "$pattern" ] || grep -q -- "$pattern" "$tmp/err" ||
		bad "sim-run $*: stderr lacks '$pattern': $(cat "$tmp/err")"
	[ "$want" -ne 2 ] || [ "$(grep -c . "$tmp/err")" -le 2 ] ||
		bad "sim-run $*: more than a line and a hint on stderr"
}

# A plain program on it.
expect 0 "" --capacity 1G -- "$program"
# What the command gets.
expect 0 "" --capacity 3G -- env
grep -qx 'CUDASIM_DEVICE_MEMORY=3G' "$tmp/out" || bad "--capacity 3G did not reach CMD"
grep -q "^LD_PRELOAD=.*/tests/sim/libcudart.so.13 .*/tests/sim/libcuda.so.1 .*/tests/sim/libnvidia-ml.so.1" "$tmp/out" ||
	bad "the simulated libraries are not preloaded: $(grep LD_PRELOAD "$tmp/out")"
expect 0 "" -- env
grep -qx 'CUDASIM_DEVICE_MEMORY=16G' "$tmp/out" || bad "the default capacity is not 16G"
expect 0 "" --capacity=512m -- env
grep -qx 'CUDASIM_DEVICE_MEMORY=512m' "$tmp/out" || bad "--capacity=512m did not reach CMD"
# For JAX: XLA's flags in front of the user's; the device nodes as stat()
# sees them, one per simulated device.
XLA_FLAGS=--mine "$simrun" -- env >"$tmp/out" 2>&1
grep -qx 'XLA_FLAGS=--xla_gpu_enable_command_buffer= --xla_gpu_autotune_level=0 --mine' "$tmp/out" ||
	bad "XLA_FLAGS not set in front of the user's: $(grep XLA_FLAGS "$tmp/out")"
grep -qx 'JAX_SKIP_CUDA_CONSTRAINTS_CHECK=1' "$tmp/out" || bad "JAX_SKIP_CUDA_CONSTRAINTS_CHECK not set"
expect 0 "" -- python3 -c 'import os, stat; assert stat.S_ISCHR(os.stat("/dev/nvidia0").st_mode); assert os.access("/dev/nvidiactl", os.R_OK); assert not os.path.exists("/dev/nvidia1")'
CUDASIM_DEVICE_COUNT=2 expect 0 "" -- python3 -c 'import os; assert os.path.exists("/dev/nvidia1")'
# The simulated cuDNN, for every command (torch links it, XLA dlopens it).
if [ -f "$build/tests/sim/dnn/libcudnn.so.9" ]; then
	expect 0 "" -- python3 -c 'import os; assert "/dnn/libcudnn.so.9" in os.environ["LD_PRELOAD"]'
fi

# An LD_PRELOAD already there stays first.
LD_PRELOAD=/lib/first.so "$simrun" -- env >"$tmp/out" 2>&1
grep -q '^LD_PRELOAD=/lib/first.so .*libcudart.so.13' "$tmp/out" || bad "LD_PRELOAD not kept first"
# Exit status and arguments pass through.
expect 3 "" -- sh -c 'exit 3'
expect 0 "" --help
grep -q 'MEMTRACE_BUILD' "$tmp/out" || bad "--help does not say where the libraries come from"

# The simulated cuBLAS and cuBLASLt are preloaded when the build has them
# (a build made of links to this one's libraries).
fake=$tmp/fake/tests/sim
mkdir -p "$fake/blas"
for lib in libcuda.so.1 libcudart.so.13; do
	ln -s "$build/tests/sim/$lib" "$fake/$lib"
done
ln -s "$build/tests/sim/libcuda.so.1" "$fake/blas/libcublas.so.13"
ln -s "$build/tests/sim/libcuda.so.1" "$fake/blas/libcublasLt.so.13"
MEMTRACE_BUILD=$tmp/fake "$simrun" -- env >"$tmp/out" 2>&1
grep -q '^LD_PRELOAD=.*libcuda.so.1 .*/blas/libcublas.so.13 .*/blas/libcublasLt.so.13$' "$tmp/out" ||
	bad "a built cuBLAS is not preloaded: $(grep LD_PRELOAD "$tmp/out")"

# A torch the simulated device cannot carry is named before CMD runs, in
# one line, and CMD runs as it would: a CPU-only build (no
# libtorch_cuda.so), and one that imports a runtime function the simulated
# libcudart lacks (a newer torch: a stand-in library of an nvidia-* wheel
# and a libtorch_cuda.so that imports cudaMalloc and cudaSimRunMissing
# from it, versioned as NVIDIA's are). Found without importing torch.
mkdir -p "$tmp/cpu/torch/lib"
: >"$tmp/cpu/torch/__init__.py"
PYTHONPATH=$tmp/cpu "$simrun" -- python3 -c 'print("ran")' >"$tmp/out" 2>"$tmp/err"
grep -q 'torch at .*/cpu/torch is a CPU-only build' "$tmp/err" || bad "a CPU-only torch is not named: $(cat "$tmp/err")"
grep -qx ran "$tmp/out" || bad "CMD did not run beside a CPU-only torch"
new=$tmp/new
mkdir -p "$new/torch/lib" "$new/nvidia/cu13/lib"
: >"$new/torch/__init__.py"
printf 'libcudart.so.13 { global: cudaMalloc; cudaSimRunMissing; local: *; };\n' >"$tmp/cudart.ver"
printf 'int cudaMalloc(void **p, unsigned long n) { (void)p; (void)n; return 0; }\nint cudaSimRunMissing(void) { return 0; }\n' >"$tmp/cudart.c"
printf 'int cudaMalloc(void **, unsigned long); int cudaSimRunMissing(void);\nint use(void) { return cudaMalloc(0, 0) + cudaSimRunMissing(); }\n' >"$tmp/torch.c"
# shellcheck disable=SC2016 # $ORIGIN is the linker's
if cc -shared -fPIC -o "$new/nvidia/cu13/lib/libcudart.so.13" -Wl,-soname,libcudart.so.13 \
	-Wl,--version-script,"$tmp/cudart.ver" "$tmp/cudart.c" &&
	cc -shared -fPIC -o "$new/torch/lib/libtorch_cuda.so" "$tmp/torch.c" \
		-L"$new/nvidia/cu13/lib" -l:libcudart.so.13 -Wl,-rpath,'$ORIGIN/../../nvidia/cu13/lib' &&
	cc -shared -fPIC -o "$new/torch/lib/libc10_cuda.so" -x c /dev/null; then
	PYTHONPATH=$new "$simrun" -- python3 -c 'print("ran")' >"$tmp/out" 2>"$tmp/err"
	grep -q 'torch at .*/new/torch needs 1 CUDA function(s) the simulated libraries lack (cudaSimRunMissing@libcudart.so.13)' "$tmp/err" ||
		bad "a torch newer than the simulated libraries is not named: $(cat "$tmp/err")"
	[ "$(grep -c . "$tmp/err")" -eq 1 ] || bad "more than one line for a newer torch: $(cat "$tmp/err")"
	grep -qx ran "$tmp/out" || bad "CMD did not run beside a newer torch"
	# cached: the same answer again
	PYTHONPATH=$new "$simrun" -- python3 -c 'print("ran")' >"$tmp/out" 2>"$tmp/err"
	grep -q 'cudaSimRunMissing@libcudart.so.13' "$tmp/err" || bad "the cached answer lost the missing function: $(cat "$tmp/err")"
else
	bad "cannot build the stand-in torch libraries with cc"
fi

# Wrong use.
expect 2 "is not a size" --capacity 12Q -- true
expect 2 "is not a size" --capacity 0 -- true
expect 2 "needs a SIZE" --capacity
expect 2 "no command given" --capacity 1G --
expect 2 "unknown option" --bogus -- true
mkdir "$tmp/empty"
MEMTRACE_BUILD=$tmp/empty expect 2 "simulated device is not built: no .*libcuda.so.1" -- true
exit $fail
