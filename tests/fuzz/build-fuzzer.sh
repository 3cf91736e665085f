#!/bin/sh
# build-fuzzer.sh --probe CLANG: exit 0 when CLANG can link a libFuzzer
# target with AddressSanitizer and UBSan, else 77 and say why.
# build-fuzzer.sh CLANG SOURCE_ROOT BUILD_ROOT OUTPUT: the libFuzzer target
# (fuzz-report.c) with every report/*.c, report/*/*.c and trace/*.c, memtrace-report's main() included,
# compiled by clang with -fsanitize=fuzzer,address,undefined. The meson
# build uses gcc; this is the one clang build. BUILD_ROOT supplies the
# generated headers (config/config.h, report/render-html-assets.h).
# Exit status 77 (meson: skipped) when clang cannot link a fuzzer.
set -eu
probe_only=
if [ $# -eq 2 ] && [ "$1" = --probe ]; then
	probe_only=1
	shift
	set -- "$1" "" "" ""
fi
if [ $# -ne 4 ]; then
	echo "usage: $0 --probe CLANG | $0 CLANG SOURCE_ROOT BUILD_ROOT OUTPUT" >&2
	exit 99
fi
cc=$1 src=$2 build=$3 output=$4
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

probe="$tmp/probe.c"
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
	>"$probe"
if ! "$cc" -fsanitize=fuzzer,address,undefined -o "$tmp/probe" "$probe" >"$tmp/log" 2>&1; then
	echo "$cc cannot link a libFuzzer target (Debian: libclang-rt-NN-dev):" >&2
	sed 's/^/    /' "$tmp/log" >&2
	exit 77
fi
[ -z "$probe_only" ] || exit 0

flags="-g -O1 -std=gnu11 -D_GNU_SOURCE -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
# shellcheck disable=SC2046,SC2086 # $flags and pkg-config's words are meant to split
"$cc" $flags -I"$src/report/util" -I"$src/report/read" -I"$src/report/model" \
	-I"$src/report/render" -I"$src/trace" -I"$build/config" -I"$build/report" \
	-Dmain=memtrace_report_main \
	-o "$output" "$here/fuzz-report.c" "$src"/report/*.c "$src"/report/*/*.c "$src"/trace/*.c \
	$(pkg-config --cflags --libs sqlite3 libdw zlib) -lm
