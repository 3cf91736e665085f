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

# Wrong use.
expect 2 "is not a size" --capacity 12Q -- true
expect 2 "is not a size" --capacity 0 -- true
expect 2 "needs a SIZE" --capacity
expect 2 "no command given" --capacity 1G --
expect 2 "unknown option" --bogus -- true
mkdir "$tmp/empty"
MEMTRACE_BUILD=$tmp/empty expect 2 "simulated device is not built: no .*libcuda.so.1" -- true
exit $fail
