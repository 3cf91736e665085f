#!/bin/sh
# Runs one test program on the simulated device and checks its exit status,
# its stdout, and where its CUDA libraries came from.
#
# usage: run-on-sim.sh SIM_DIR --cuda|--driver|--no-cuda STATUS EXPECTED_STDOUT
#                      PROGRAM [ARG...]
#
# The caller's environment puts SIM_DIR first on LD_LIBRARY_PATH (meson:
# sim_env). --cuda: libcudart.so.13 and libcuda.so.1 must both be loaded
# from SIM_DIR, never the toolkit's or a real driver. --driver: libcuda.so.1
# from SIM_DIR, and no libcudart at all (the program reaches the driver by
# itself). --no-cuda: neither may be loaded at all. Processes the program
# starts (fork, exec) count too: each writes its own loader log.
set -u

if [ $# -lt 5 ]; then
	echo "usage: $0 SIM_DIR --cuda|--driver|--no-cuda STATUS EXPECTED_STDOUT PROGRAM [ARG...]" >&2
	exit 99
fi
sim_dir=$1 mode=$2 status=$3 expected=$4 program=$5
shift 5

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

LD_DEBUG=libs LD_DEBUG_OUTPUT="$tmp/ld" "$program" "$@" >"$tmp/stdout"
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
# Every library of that name that was loaded must be the simulator's.
from_sim() {
	if ! grep -q "calling init: $sim_dir/$1\$" "$tmp/loaded" ||
	   grep "calling init: .*$1" "$tmp/loaded" | grep -qv "calling init: $sim_dir/$1\$"; then
		echo "FAIL: $1 was not loaded from $sim_dir only:"
		grep "calling init: .*$1" "$tmp/loaded"
		fail=1
	fi
}

case $mode in
--cuda)
	from_sim libcudart.so.13
	from_sim libcuda.so.1
	;;
--driver)
	from_sim libcuda.so.1
	if grep "calling init: .*libcudart" "$tmp/loaded"; then
		echo "FAIL: a program that reaches the driver by itself loaded a runtime"
		fail=1
	fi
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
