#!/bin/sh
# Builds memtrace and runs every benchmark, printing the tables of
# docs/performance.md. About 8 minutes on 2 cores; --quick about 2.
#
#   tests/bench/run-all.sh [--build DIR] [--quick] [--runs N] [--out DIR]
#                          [--section S]...
#
# DIR defaults to build-bench/ in the source tree, configured with
# -Dbuildtype=release when it does not exist yet. Results are printed and
# written to DIR/bench-results/ (results.md, results.json). The generated
# reporter traces (1M and 10M events, about 500 MB) are kept there for the
# next run. heaptrack's columns are n/a when heaptrack is not installed.
set -eu

src=$(cd "$(dirname "$0")/../.." && pwd -P)
build=${MEMTRACE_BUILD:-$src/build-bench}
args=
while [ $# -gt 0 ]; do
	case $1 in
	--build)
		build=$2
		shift 2
		;;
	-h | --help)
		sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		args="$args $1"
		shift
		;;
	esac
done

if [ ! -f "$build/meson-private/coredata.dat" ]; then
	meson setup "$build" "$src" -Dbuildtype=release -Dwerror=true
fi
ninja -C "$build" >/dev/null
# shellcheck disable=SC2086 # the remaining options, word by word
exec python3 "$src/tests/bench/bench.py" --build "$build" $args
