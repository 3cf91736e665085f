#!/bin/sh
# The HTML report in a real browser (headless Chromium):
#   browser.sh REPORT SQL-LOAD SRCDIR GEN-TRACE
# - the OOM trace (golden/oom.sql, the demo's story): the page loads with
#   no console message at all (no error, no Content-Security-Policy
#   refusal), the headline and the flame graph render, and at 1280x800 the
#   first screen shows the OOM headline and the flame graph's rows
#   (checked by colour in the screenshot);
# - the graphs trace (golden/graphs.sql): the orphaned graphs and the
#   graph memory never freed render above the timeline;
# - the tensors trace (golden/tensors.sql): the segment view at the OOM
#   draws the segments and blocks the trace's allocator actions held then
#   (check-blocks.py);
# - the hostile trace (browser/hostile.sql): names holding "</script>",
#   quotes, "<img onerror>" and invalid UTF-8 show as text, and none runs;
# - a trace of 10 million events (gen-trace), and two whose live set is
#   spread over 30,000 stacks (of 2 frames, of 40): the page stays within
#   its bounds
#   (check-page.py: at most 5 MiB, the peak and the OOM as they were, at
#   most 2000 stacks, the flame graph at most 2000 rectangles), draws
#   without a console message, and says how long it took to draw.
# Chromium is Debian's "chromium"; installed with apt-get when missing and
# running as root, else the test is skipped (77). Screenshots are left in
# $MEMTRACE_BROWSER_OUT (default: the current directory) for a human eye.
set -eu

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
report=$(abs "$1")
sqlload=$(abs "$2")
src=$(abs "$3")
gen=$(abs "$4")
out=$(abs "${MEMTRACE_BROWSER_OUT:-.}")

find_chromium() {
	for c in chromium chromium-browser; do
		command -v "$c" >/dev/null 2>&1 && { command -v "$c"; return 0; }
	done
	return 1
}

if ! chrome=$(find_chromium); then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "installing chromium (apt-get)"
		export DEBIAN_FRONTEND=noninteractive
		{ apt-get -qq -o DPkg::Lock::Timeout=120 update &&
			apt-get -qq -o DPkg::Lock::Timeout=120 install -y --no-install-recommends chromium; } \
			>apt.log 2>&1 </dev/null || { tail -5 apt.log; echo "SKIP: chromium could not be installed"; exit 77; }
	fi
	chrome=$(find_chromium) || { echo "SKIP: no chromium (apt-get install chromium, as root)"; exit 77; }
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
export HOME="$tmp"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# chrome NAME ARGS...: runs headless Chromium on $tmp/NAME.html with the
# flags that work in containers and CI; the browser's log in NAME.log
chrome() {
	name=$1
	shift
	mkdir -p "profile-$name"
	timeout 60 "$chrome" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--disable-extensions --hide-scrollbars --user-data-dir="$tmp/profile-$name" \
		--enable-logging=stderr --v=0 "$@" "file://$tmp/$name.html" 2>>"$name.log"
}

render() { # render NAME SQL
	"$sqlload" "$1.db" "$2"
	"$report" "$1.db" --format html -o "$1.html" 2>"$1.err" || { cat "$1.err"; fail "$1: the report failed"; }
}

# Console messages are logged as INFO:CONSOLE: errors, CSP refusals, all.
console_clean() {
	if grep -q ':CONSOLE' "$1.log"; then
		fail "$1: the page wrote to the console:"
		grep ':CONSOLE' "$1.log" | head -5
	fi
}

# ---- the OOM report --------------------------------------------------
render oom "$src/golden/oom.sql"
chrome oom --dump-dom >oom.dom || fail "oom: chromium failed (exit $?)"
console_clean oom
grep -q 'OUT OF MEMORY' oom.dom || fail "oom: no OOM headline in the page"
grep -q 'cudaMalloc of <b>96.0 MiB</b> failed' oom.dom || fail "oom: the headline does not say what failed"
# the flame graph is drawn by the script: an svg with a rect per frame
flame=$(sed -n 's/.*<div id="flame">\(.*\)/\1/p' oom.dom | grep -o '<rect' | wc -l)
[ "$flame" -ge 6 ] || fail "oom: the flame graph has $flame rects, expected at least 6"
grep -q '<svg class="tl"' oom.dom || fail "oom: no timeline"
grep -q 'load_weights' oom.dom || fail "oom: the operations table lacks load_weights"

chrome oom --window-size=1280,800 --screenshot="$tmp/oom.png" >/dev/null || fail "oom: no screenshot"
cp oom.png "$out/browser-oom.png" 2>/dev/null || true
# on the first screen: the OOM tag (#c62828), the flame graph's root row
# (#9aa5b1) and its native frames (#f2b36f), the timeline's area edge
python3 "$src/browser/check-png.py" oom.png 1280 800 \
	'#c62828=400' '#9aa5b1=5000' '#f2b36f=5000' '#1f6feb=300' ||
	fail "oom: the first screen (1280x800) lacks the headline or the flame graph"

# ---- CUDA graphs left behind (golden/graphs.sql) ---------------------
# graphs are the story: the orphans and the graph memory never freed
# render, right under the headline (before the timeline), and the page
# stays quiet in the console
render graphs "$src/golden/graphs.sql"
chrome graphs --dump-dom >graphs.dom || fail "graphs: chromium failed (exit $?)"
console_clean graphs
grep -q '<h2>Orphaned CUDA graphs</h2>' graphs.dom || fail "graphs: no orphaned-graphs section"
grep -q 'exec <code>0xe2</code>' graphs.dom || fail "graphs: the orphaned exec 0xe2 is not listed"
grep -q 'Graph memory never freed (1 of 1)' graphs.dom || fail "graphs: no graph memory never freed"
sed -n '/id="graphs"/,$p' graphs.dom | grep -q 'id="timeline"' ||
	fail "graphs: the graphs section is not above the timeline"
grep -q 'CUDA graphs left behind' graphs.dom || fail "graphs: what to try does not name the graphs"
chrome graphs --window-size=1280,800 --screenshot="$tmp/graphs.png" >/dev/null || fail "graphs: no screenshot"
cp graphs.png "$out/browser-graphs.png" 2>/dev/null || true

# ---- tensors inside PyTorch's cache (golden/tensors.sql) -------------
# the segment view at the OOM: the segments and blocks drawn are those the
# trace's allocator actions held then (check-blocks.py replays the rows)
render tensors "$src/golden/tensors.sql"
"$report" tensors.db --format json -o tensors.json 2>>tensors.err || fail "tensors: no JSON report"
chrome tensors --dump-dom >tensors.dom || fail "tensors: chromium failed (exit $?)"
console_clean tensors
python3 "$src/browser/check-blocks.py" tensors.db tensors.dom tensors.json ||
	fail "tensors: the blocks drawn are not the trace's"
grep -q "Inside PyTorch's cache at OOM 1" tensors.dom || fail "tensors: no segment view at the OOM"
chrome tensors --window-size=1280,1400 --screenshot="$tmp/tensors.png" >/dev/null || fail "tensors: no screenshot"
cp tensors.png "$out/browser-tensors.png" 2>/dev/null || true

# ---- hostile strings -------------------------------------------------
render hostile "$src/browser/hostile.sql"
grep -qi '<script>document' hostile.html && fail "hostile: a trace string reached the page as markup"
grep -q '<img' hostile.html && fail "hostile: <img onerror> reached the page as markup"
chrome hostile --dump-dom >hostile.dom || fail "hostile: chromium failed (exit $?)"
console_clean hostile
grep -q '<title>PWNED' hostile.dom && fail "hostile: a script from the trace ran (title)"
grep -Eq '<[a-z]+ [^>]*data-pwned=' hostile.dom && fail "hostile: an onerror handler from the trace ran"
grep -Eq '<img|<b>dom' hostile.dom && fail "hostile: an element from the trace is in the page"
grep -q 'OUT OF MEMORY' hostile.dom || fail "hostile: no OOM headline"
grep -q '&lt;/script&gt;&lt;script&gt;document.title' hostile.dom ||
	fail "hostile: the </script> function name is not shown as text"
grep -q 'step"'"'"'&gt;&lt;img src=x onerror=' hostile.dom ||
	fail "hostile: the <img onerror> function name is not shown as text"
grep -q 'bad-�-fn' hostile.dom || fail "hostile: invalid UTF-8 is not shown as U+FFFD"
chrome hostile --window-size=1280,800 --screenshot="$tmp/hostile.png" >/dev/null || fail "hostile: no screenshot"
cp hostile.png "$out/browser-hostile.png" 2>/dev/null || true
python3 "$src/browser/check-png.py" hostile.png 1280 800 '#c62828=400' '#9aa5b1=5000' ||
	fail "hostile: the first screen lacks the headline or the flame graph"

# ---- big traces: the page keeps its bounds ---------------------------
# big NAME GEN-TRACE-ARGS -- CHECK-PAGE-ARGS
big() {
	name=$1
	shift
	args=
	while [ "$1" != -- ]; do
		args="$args $1"
		shift
	done
	shift
	# shellcheck disable=SC2086 # the generator's options, word by word
	"$gen" --out "$name.db" $args || { fail "$name: gen-trace failed"; return; }
	"$report" "$name.db" --format html -o "$name.html" 2>"$name.err" &&
		"$report" "$name.db" --format json -o "$name.json" 2>>"$name.err" ||
		{ cat "$name.err"; fail "$name: the report failed"; return; }
	chrome "$name" --dump-dom >"$name.dom" || fail "$name: chromium failed (exit $?)"
	console_clean "$name"
	python3 "$src/browser/check-page.py" "$name.html" "$name.dom" "$name.json" "$@" ||
		fail "$name: the page is not within its bounds"
	rm -f "$name.db"
}
big events-10M --events 10000000 -- 
# 2 frames a stack, so that the stacks, not their frames' labels, reach
# the budget: exactly 2000 stacks, the rest summed
big stacks-30k --events 300000 --stacks 30000 --depth 2 --live 8192 -- --stacks 2000 --left-out
# 40 frames a stack: the frames' labels reach the budget first (the
# page without it was 17 MB)
big deep-30k --events 300000 --stacks 30000 --depth 40 --live 8192 -- --left-out

[ "$failures" = 0 ] || exit 1
echo "browser: all checks passed ($chrome)"
