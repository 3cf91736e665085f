#!/bin/sh
# run-fuzz.sh FUZZER SECONDS [--full] SQLFILE...: runs the libFuzzer target
# FUZZER for SECONDS with a fixed seed, on the seed corpus make-corpus.py
# builds from SQLFILEs (--small unless --full). Exit status 0 when nothing
# broke, 1 with the failing input's path when something did, 77 (skipped)
# when there is no fuzzer (clang with libFuzzer was not found at setup).
#
# MEMTRACE_FUZZ_CORPUS=DIR keeps the corpus in DIR (it grows from run to
# run: scripts/fuzz); MEMTRACE_FUZZ_ARTIFACTS=DIR keeps crashing inputs
# there (default: the temporary directory, printed on failure).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 3 ]; then
	echo "usage: $0 FUZZER SECONDS [--full] SQLFILE..." >&2
	exit 99
fi
fuzzer=$1 seconds=$2
shift 2
small=--small
if [ "${1:-}" = --full ]; then
	small=
	shift
fi
if [ -z "$fuzzer" ] || [ ! -x "$fuzzer" ]; then
	echo "no fuzzer built: clang with libFuzzer (Debian: clang, libclang-rt-NN-dev) was not found when the build was set up"
	exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
corpus=${MEMTRACE_FUZZ_CORPUS:-$tmp/corpus}
artifacts=${MEMTRACE_FUZZ_ARTIFACTS:-$tmp/artifacts}
mkdir -p "$corpus" "$artifacts"
seeds=$tmp/seeds
python3 "$here/make-corpus.py" $small "$seeds" "$@"

# -timeout: a hang; -rss_limit_mb: unbounded memory; both are failures.
# -close_fd_mask=3: the reporter's own output and warnings are not wanted
# (sanitizer reports and the target's oracle still get through).
set +e
TMPDIR=$tmp "$fuzzer" -max_total_time="$seconds" -seed=1 -timeout=10 -rss_limit_mb=2048 \
	-max_len=65536 -close_fd_mask=3 -dict="$here/trace.dict" -print_final_stats=1 \
	-artifact_prefix="$artifacts/" "$corpus" "$seeds" >"$tmp/log" 2>&1
rc=$?
set -e
grep -E '^(INFO: Seed|#[0-9]+[[:space:]]+(INITED|DONE)|Done|stat::)' "$tmp/log" || true
if [ "$rc" -ne 0 ]; then
	tail -n 60 "$tmp/log"
	echo "fuzz-report failed (status $rc); inputs that broke it:"
	ls -l "$artifacts"
	if [ -z "${MEMTRACE_FUZZ_ARTIFACTS:-}" ]; then
		kept=$(mktemp -d /tmp/memtrace-fuzz-artifacts-XXXXXX)
		cp "$artifacts"/* "$kept"/ 2>/dev/null || true
		echo "copied to $kept; reproduce with: $fuzzer $kept/<file>"
	fi
	exit 1
fi
exit 0
