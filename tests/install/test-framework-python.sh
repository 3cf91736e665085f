#!/usr/bin/env bash
# scripts/framework-python without the network: what it says and how it
# exits, and how it treats its cache, with a stub python3 on PATH where it
# would make an environment:
#   - --help exits 0 and names what it installs and where;
#   - no name, an unknown name, two names: exit 2 with a clear message;
#   - an unusable cache directory, or a python3 without venv: exit 77 with
#     one line on stderr, nothing on stdout;
#   - a complete environment (marker written) is reused: only its path on
#     stdout, nothing on stderr, no python3 -m venv;
#   - a half-made one (no marker) is removed and made again, the marker
#     written last; so is a broken one (its python, or its framework's
#     module, gone);
#   - pip failing: exit 77, the environment removed, the cause in the line.
#   test-framework-python.sh SOURCE_ROOT
set -uo pipefail
# the cases set it themselves (check-fresh's bare root exports it)
unset MEMTRACE_FRAMEWORKS

src=${1:?usage: test-framework-python.sh SOURCE_ROOT}
script=$src/scripts/framework-python
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# A python3 that makes "environments" whose bin/python is this same stub:
# -m venv DIR makes DIR/bin/python (unless $STUB_NO_VENV), -m pip install
# logs its arguments and fails as pip does without a matching wheel when
# $STUB_PIP_FAIL is set, -c runs nothing (fails the import check of venv and
# ensurepip when $STUB_NO_VENV is set).
mkdir -p "$tmp/bin"
cat >"$tmp/bin/python3" <<'EOF'
#!/usr/bin/env bash
printf '%s\n' "$*" >>"$STUB_LOG"
case $1 in
-c)
	[[ -n ${STUB_NO_VENV:-} && $2 == *ensurepip* ]] && exit 1
	[[ -n ${STUB_NO_MODULE:-} && $2 == *find_spec* ]] && exit 1
	exit 0
	;;
-m)
	case $2 in
	venv)
		[[ -z ${STUB_NO_VENV:-} ]] || exit 1
		mkdir -p "$3/bin" && cp "$0" "$3/bin/python"
		;;
	pip)
		log=
		while (($#)); do
			[[ $1 == --log ]] && log=$2
			shift
		done
		if [[ -n ${STUB_PIP_FAIL:-} ]]; then
			echo "ERROR: No matching distribution found for torch==2.15.0" | tee -a "$log" >&2
			exit 1
		fi
		echo "Successfully installed torch-2.15.0"
		;;
	esac
	;;
esac
exit 0
EOF
chmod +x "$tmp/bin/python3"

# run_case ARGS...: runs the script; sets $out (stdout), $err (stderr), $rc.
run_case()
{
	: >"$tmp/calls"
	PATH="$tmp/bin:$PATH" STUB_LOG="$tmp/calls" "$script" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	out=$(<"$tmp/out") err=$(<"$tmp/err")
}

check()
{
	local what=$1
	shift
	if "$@"; then
		echo "ok: $what"
	else
		echo "FAIL: $what"
		echo "  exit status $rc; stdout:"
		sed 's/^/    /' "$tmp/out"
		echo "  stderr:"
		sed 's/^/    /' "$tmp/err"
		fail=1
	fi
}

# The predicates below are called through check.
# shellcheck disable=SC2317
lines()
{
	[[ -n $1 && $(printf '%s\n' "$1" | wc -l) == "$2" ]]
}

# shellcheck disable=SC2317
made_nothing()
{
	! grep -qE -- '-m (venv|pip)' "$tmp/calls"
}

# shellcheck disable=SC2317
last_line_starts()
{
	[[ $(tail -n 1 <<<"$err") == "$1"* ]]
}

export XDG_CACHE_HOME=$tmp/cache
venv=$tmp/cache/memtrace/venv-torch-2.15.0

# 1. --help
run_case --help
check "--help: exits 0" test "$rc" = 0
check "--help: names the pin" grep -q 'torch==2.15.0' <<<"$out"
check "--help: names jax's pin and its CUDA 13 plugin" grep -q 'jax\[cuda13\]==0.10.2 jax-cuda13-plugin==0.10.2' <<<"$out"
check "--help: names the environment" grep -qF "$venv" <<<"$out"
check "--help: nothing on stderr" test -z "$err"
check "--help: names the GPU machine's torch, 2.11" grep -qF 'torch==2.11.0' <<<"$out"
check "--help: names keras over torch's environment" grep -q "over torch's environment" <<<"$out"
check "--help: names tensorflow's pin with its CUDA 12 libraries" grep -qF 'tensorflow[and-cuda]==2.21.0' <<<"$out"
check "--help: names tensorflow's environment" grep -qF "$tmp/cache/memtrace/venv-tensorflow-2.21.0" <<<"$out"

# 2. wrong arguments
run_case
check "no name: exits 2" test "$rc" = 2
check "no name: says so" grep -q 'which framework' <<<"$err"
run_case tensorflowx
check "unknown name: exits 2" test "$rc" = 2
check "unknown name: names it and the known ones" \
	grep -q 'unknown framework: tensorflowx (known: .*torch' <<<"$err"
check "unknown name: one line" lines "$err" 1
check "unknown name: nothing on stdout" test -z "$out"
run_case torch torch
check "two names: exits 2" test "$rc" = 2

# 3. a cache that cannot be made
XDG_CACHE_HOME=/proc/nonexistent run_case torch
check "unusable cache: exits 77" test "$rc" = 77
check "unusable cache: one line" lines "$err" 1
check "unusable cache: names the directory and XDG_CACHE_HOME" \
	grep -q '/proc/nonexistent/memtrace.*XDG_CACHE_HOME' <<<"$err"
check "unusable cache: nothing on stdout" test -z "$out"

# 3b. frameworks turned off (check-fresh's bare root)
MEMTRACE_FRAMEWORKS=off run_case torch
check "frameworks off: exits 77" test "$rc" = 77
check "frameworks off: one line naming the switch" grep -q 'MEMTRACE_FRAMEWORKS=off' <<<"$err"
check "frameworks off: one line" lines "$err" 1
check "frameworks off: runs no python" test ! -s "$tmp/calls"

# 3b. required (CI): the same failure is exit 1, not a skip
MEMTRACE_FRAMEWORKS=required STUB_NO_VENV=1 run_case torch
check "required: exits 1" test "$rc" = 1
check "required: one line" lines "$err" 1
check "required: says it fails rather than skips" grep -q 'MEMTRACE_FRAMEWORKS=required: a failure, not a skip' <<<"$err"

# 4. no venv module
STUB_NO_VENV=1 run_case torch
check "no python3-venv: exits 77" test "$rc" = 77
check "no python3-venv: one line" lines "$err" 1
check "no python3-venv: names the package" grep -q 'python3-venv' <<<"$err"
check "no python3-venv: makes nothing" test ! -e "$venv"

# 5. a half-made environment is made again
mkdir -p "$venv/bin"
touch "$venv/stale"
run_case torch
check "half-made: exits 0" test "$rc" = 0
check "half-made: prints the interpreter" test "$out" = "$venv/bin/python"
check "half-made: says so" grep -q 'half-made' <<<"$err"
check "half-made: removed first" test ! -e "$venv/stale"
check "half-made: runs pip" grep -q -- '-m pip install .*torch==2.15.0' "$tmp/calls"
check "half-made: checks the CUDA version" grep -qF 'torch.version.cuda' "$tmp/calls"
check "half-made: writes the marker" grep -qx 'torch==2.15.0' "$venv/.memtrace-complete"

# 6. a complete one is reused
run_case torch
check "complete: exits 0" test "$rc" = 0
check "complete: prints the interpreter alone" test "$out" = "$venv/bin/python"
check "complete: nothing on stderr" test -z "$err"
check "complete: no venv, no pip" made_nothing

# 6b. a complete one whose framework no longer loads is made again
touch "$venv/stale"
STUB_NO_MODULE=1 run_case torch
check "broken: exits 0" test "$rc" = 0
check "broken: says so" grep -q 'is broken (its python does not start, or has no torch module): making it again' <<<"$err"
check "broken: removed first" test ! -e "$venv/stale"
check "broken: runs pip" grep -q -- '-m pip install .*torch==2.15.0' "$tmp/calls"
check "broken: writes the marker" grep -qx 'torch==2.15.0' "$venv/.memtrace-complete"

# 7. pip fails
rm -f "$venv/.memtrace-complete"
STUB_PIP_FAIL=1 run_case torch
check "pip fails: exits 77" test "$rc" = 77
check "pip fails: shows pip's output" grep -q '^ERROR: No matching distribution' <<<"$err"
check "pip fails: ends with the cause" \
	last_line_starts "memtrace: pip could not install torch==2.15.0: the package index has no torch==2.15.0"
check "pip fails: removes the environment" test ! -e "$venv"
check "pip fails: nothing on stdout" test -z "$out"

# 8. tensorflow: its own environment, its CUDA 12 build checked
tfvenv=$tmp/cache/memtrace/venv-tensorflow-2.21.0
run_case tensorflow
check "tensorflow: exits 0" test "$rc" = 0
check "tensorflow: prints its interpreter" test "$out" = "$tfvenv/bin/python"
check "tensorflow: pip installs the and-cuda extra" grep -qF -- '-m pip install --disable-pip-version-check --no-input --log '"$tfvenv"'.log tensorflow[and-cuda]==2.21.0' "$tmp/calls"
check "tensorflow: checks the CUDA 12 build" grep -qF 'get_build_info().get("cuda_version"' "$tmp/calls"
check "tensorflow: writes the marker" grep -qxF 'tensorflow[and-cuda]==2.21.0' "$tfvenv/.memtrace-complete"
MEMTRACE_FRAMEWORKS=required STUB_PIP_FAIL=1 run_case tensorflow
check "tensorflow: still complete, reused" test "$rc" = 0
rm -f "$tfvenv/.memtrace-complete"
MEMTRACE_FRAMEWORKS=required STUB_PIP_FAIL=1 run_case tensorflow
check "tensorflow, required, pip fails: exits 1" test "$rc" = 1
check "tensorflow, required, pip fails: says it fails rather than skips" \
	grep -q 'could not install tensorflow\[and-cuda\]==2.21.0.*MEMTRACE_FRAMEWORKS=required: a failure, not a skip' <<<"$err"

exit $fail
