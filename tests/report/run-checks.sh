#!/bin/sh
# memtrace run checks the trace's path before it starts the program, and
# refuses (exit 2, one line) a path the library would not write rather
# than run the job untraced; with --report, a program killed by a signal
# keeps its status and its stderr gets no word from bash. The preloaded
# library is libc, as in run-options.sh: these are the script's doings.
#   run-checks.sh SCRIPTS/MEMTRACE
set -eu

memtrace=$1
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
cd "$tmp"
failures=0

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

lib=$(ldd /bin/sh | awk '/libc\.so/ { print $3 }')
[ -e "$lib" ] || { echo "no libc to preload found; skipping"; exit 77; }
export MEMTRACE_LIB="$lib"
unset MEMTRACE_OUTPUT MEMTRACE_QUIET LD_PRELOAD RANK OMPI_COMM_WORLD_RANK SLURM_PROCID

# refused PATTERN-IN-STDERR MEMTRACE-RUN-ARGS...: exit 2, one line, and the
# program (which would make the file "ran") not started
refused() {
	pattern=$1
	shift
	rm -f ran
	set +e
	"$memtrace" run "$@" -- sh -c ': >ran' >out 2>err
	rc=$?
	set -e
	[ "$rc" -eq 2 ] || fail "memtrace run $*: exit $rc, expected 2: $(cat err)"
	[ ! -e ran ] || fail "memtrace run $*: the program ran"
	[ "$(wc -l <err)" -eq 1 ] || fail "memtrace run $*: not one line on stderr: $(cat err)"
	grep -qF -- "$pattern" err || fail "memtrace run $*: stderr lacks '$pattern': $(cat err)"
}

# started MEMTRACE-RUN-ARGS...: the program runs
started() {
	rm -f ran
	"$memtrace" run -q "$@" -- sh -c ': >ran' 2>err || fail "memtrace run $*: exit $?: $(cat err)"
	[ -e ran ] || fail "memtrace run $*: the program did not run"
}

refused "the trace's directory missing does not exist" -o missing/t.db
refused "the trace's directory missing does not exist" -o missing/t-%p.db
refused "the trace's directory missing/x does not exist" --output=missing/x/t.db
: >taken.db
refused "taken.db exists" -o taken.db
MEMTRACE_OUTPUT=taken.db refused "taken.db exists"
: >rank-3.db
RANK=3 refused "rank-3.db exists" -o rank-%r.db
: >100%.db
refused "100%.db exists" -o 100%%.db
if [ "$(id -u)" -ne 0 ]; then
	mkdir locked && chmod a-w locked
	refused "the trace's directory locked is not writable" -o locked/t-%p.db
fi

started -o t-%p.db
started -o taken-%p.db
RANK=4 started -o rank-%r.db
started -o "$tmp/new.db"
started

# --report: a program killed by a signal; its status is 128 + the signal,
# and bash's "Killed" line does not reach its stderr
set +e
"$memtrace" run -q --report text -- sh -c 'echo before >&2; kill -9 $$' >out 2>err
rc=$?
set -e
[ "$rc" -eq 137 ] || fail "run --report, killed: exit $rc, expected 137"
[ "$(cat err)" = before ] || fail "run --report, killed: stderr is not the program's: $(cat err)"

[ "$failures" -eq 0 ] || exit 1
echo "all memtrace run checks passed"
