#!/bin/sh
# The text report's width: --width N, else $COLUMNS, else the terminal's
# width, else 100 columns; a site's label is shortened to fit, its
# file:line never (report/render/render-common.c, render_frame_label_fit).
#   text-width.sh REPORT SQL-LOAD TESTS-SOURCE-DIR
set -eu

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
report=$(abs "$1")
sqlload=$(abs "$2")
src=$(abs "$3")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
unset COLUMNS
failures=0

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# report OUT COLUMNS ARGS...: the text report of trace.db into OUT, with
# COLUMNS set to the value given (- leaves it unset); exit status 0
report() {
	out=$1
	cols=$2
	shift 2
	if [ "$cols" = - ]; then
		set -- "$report" trace.db --no-progress "$@"
	else
		set -- env COLUMNS="$cols" "$report" trace.db --no-progress "$@"
	fi
	"$@" >"$out" 2>err || {
		fail "$* exited $?: $(cat err)"
		: >"$out"
	}
}

longest() { awk '{ if (length > n) n = length } END { print n + 0 }' "$1"; }

# every location whole, and no line cut short ("<- ..." and ", ..." say
# that entries are left out; a name cut by a line ends in a letter)
locations_whole() {
	for loc in compMalloc.cpp:67 compMalloc.cpp:80 codec.cpp:120 pool.hpp:31 \
		model.cpp:12 legacy.c:5; do
		grep -q "($loc)" "$1" || fail "$1: ($loc) is missing or cut"
	done
	if grep -n '[^ ]\.\.\.$' "$1" >&2; then
		fail "$1: lines cut (above)"
	fi
}

# The labels of the sites table's rows: the text after the numbers.
site_labels() {
	sed -n '/^Top allocation sites/,/^$/p' "$1" |
		grep -E '^ +[0-9.]+ [KMG]?i?B ' | cut -c48-
}

"$sqlload" trace.db "$src/golden/cpp-names.sql"

# (1) two sites of one long C++ function, at two lines of one file
report default.txt -
locations_whole default.txt
[ "$(site_labels default.txt | sort -u | wc -l)" -eq 4 ] ||
	fail "the four sites' labels are not four: $(site_labels default.txt)"
# the parameters go first; then, in the sites table, the namespace too
site_labels default.txt | grep -q '^\.\.\.Cls::allocateCompressible(\.\.\.) (compMalloc.cpp:67)$' ||
	fail "compMalloc.cpp:67 is not ...Cls::allocateCompressible(...): $(site_labels default.txt)"
grep -q '  ns::Cls::allocateCompressible(\.\.\.) (compMalloc.cpp:80)$' default.txt ||
	fail "the leaks' compMalloc.cpp:80 is not ns::Cls::allocateCompressible(...)"
grep -q '  ns::detail::Pool<\.\.\.>::grow(\.\.\.) (pool.hpp:31)$' default.txt ||
	fail "pool.hpp:31 is not ns::detail::Pool<...>::grow(...)"
[ "$(longest default.txt)" -le 100 ] || fail "default.txt: a line longer than 100 columns"

# (2) the width: COLUMNS, --width (which wins), a narrow one
report columns-200.txt 200
report width-200.txt - --width 200
report width-200-over-columns.txt 60 --width 200
cmp -s columns-200.txt width-200.txt || fail "COLUMNS=200 and --width 200 differ"
cmp -s width-200.txt width-200-over-columns.txt || fail "--width 200 does not win over COLUMNS=60"
grep -q 'ns::Cls::allocateCompressible(void\*\*, unsigned long, bool) (compMalloc.cpp:67)$' \
	width-200.txt || fail "--width 200: the whole name does not fit"
n=$(longest width-200.txt)
[ "$n" -gt 100 ] && [ "$n" -le 200 ] || fail "--width 200: the longest line has $n columns"
locations_whole width-200.txt

report width-60.txt - --width 60
locations_whole width-60.txt
[ "$(site_labels width-60.txt | sort -u | wc -l)" -eq 4 ] ||
	fail "--width 60: the four sites' labels are not four"
# only a row whose location does not fit may pass the width
n=$(grep -v -E '\.(c|cpp|hpp):[0-9]+\)' width-60.txt | awk '{ if (length > n) n = length } END { print n + 0 }')
[ "$n" -le 60 ] || fail "--width 60: a line without a location has $n columns"
cmp -s default.txt width-60.txt && fail "--width 60 gives the default report"

# COLUMNS that is no width is ignored
for bad in abc 0 -5 ''; do
	report columns-bad.txt "$bad"
	cmp -s default.txt columns-bad.txt || fail "COLUMNS='$bad' changes the report"
done

# (3) the terminal's width, when standard output is one (and no COLUMNS)
if command -v script >/dev/null && command -v stty >/dev/null &&
	script -qec 'stty cols 150 rows 40' /dev/null >/dev/null 2>&1 </dev/null; then
	script -qec "stty cols 150 rows 40; '$report' trace.db --no-progress" /dev/null \
		</dev/null | tr -d '\r' >tty.txt
	n=$(longest tty.txt)
	[ "$n" -gt 100 ] && [ "$n" -le 150 ] ||
		fail "on a terminal of 150 columns the longest line has $n columns"
	locations_whole tty.txt
else
	echo "terminal width case skipped: no script(1) or no pseudo-terminal"
fi

# (4) the reports of several traces: the rank table's top holder and the
# diff's sites are shortened too, never cut
cp trace.db trace2.db
"$report" trace.db trace2.db --no-progress >ranks.txt 2>err || fail "ranks: $(cat err)"
[ "$(grep -c '(compMalloc.cpp:67)  trace2\{0,1\}\.db$' ranks.txt)" -eq 2 ] ||
	fail "ranks: the top holder's compMalloc.cpp:67 is missing or cut: $(cat ranks.txt)"
"$report" trace.db --diff trace2.db --no-progress >diff.txt 2>err || fail "diff: $(cat err)"
for loc in compMalloc.cpp:67 compMalloc.cpp:80 legacy.c:5 pool.hpp:31; do
	grep -q "($loc)\$" diff.txt || fail "diff: ($loc) is missing or cut: $(cat diff.txt)"
done

if [ "$failures" -ne 0 ]; then
	echo "$failures failure(s)" >&2
	exit 1
fi
echo "text width: all cases pass"
