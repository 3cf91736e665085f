#!/bin/sh
# Runs one test program on the simulated device and checks its exit status,
# its stdout, and where its CUDA libraries came from.
#
# usage: run-on-sim.sh SIM_DIR --cuda|--no-cuda STATUS EXPECTED_STDOUT PROGRAM
#
# The caller's environment puts SIM_DIR first on LD_LIBRARY_PATH (meson:
# sim_env). --cuda: libcudart.so.13 and libcuda.so.1 must both be loaded
# from SIM_DIR, never the toolkit's or a real driver. --no-cuda: neither may
# be loaded at all.
set -u

if [ $# -ne 5 ]; then
	echo "usage: $0 SIM_DIR --cuda|--no-cuda STATUS EXPECTED_STDOUT PROGRAM" >&2
	exit 99
fi
sim_dir=$1 mode=$2 status=$3 expected=$4 program=$5

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

LD_DEBUG=libs LD_DEBUG_OUTPUT="$tmp/ld" "$program" >"$tmp/stdout"
rc=$?
fail=0

if [ "$rc" -ne "$status" ]; then
	echo "FAIL: exit status $rc, expected $status"
	fail=1
fi
if ! diff -u "$expected" "$tmp/stdout"; then
	echo "FAIL: stdout differs from $expected"
	fail=1
fi

# ld.so writes one "calling init: PATH" line per library it initialises.
cat "$tmp"/ld.* >"$tmp/loaded" 2>/dev/null
case $mode in
--cuda)
	for lib in libcudart.so.13 libcuda.so.1; do
		if ! grep -q "calling init: $sim_dir/$lib\$" "$tmp/loaded"; then
			echo "FAIL: $lib was not loaded from $sim_dir:"
			grep "calling init: .*$lib" "$tmp/loaded"
			fail=1
		fi
	done
	;;
--no-cuda)
	if grep "calling init: .*libcuda" "$tmp/loaded"; then
		echo "FAIL: a program without CUDA loaded a CUDA library"
		fail=1
	fi
	;;
*)
	echo "unknown mode $mode" >&2
	exit 99
	;;
esac
exit $fail
