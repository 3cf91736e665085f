#!/bin/sh
# memtrace run --per-tensor and --no-follow set the environment the program
# gets, and only what the user has not set already. The program is env, so
# the environment is what it prints; the preloaded library is libc (any
# shared object would do: the options are the script's, not the library's).
#   run-options.sh SCRIPTS/MEMTRACE
set -eu

memtrace=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

lib=$(ldd /bin/sh | awk '/libc\.so/ { print $3 }')
[ -e "$lib" ] || { echo "no libc to preload found; skipping"; exit 77; }
export MEMTRACE_LIB="$lib"
for v in PYTORCH_CUDA_ALLOC_CONF TF_GPU_ALLOCATOR XLA_PYTHON_CLIENT_ALLOCATOR \
	XLA_PYTHON_CLIENT_PREALLOCATE MEMTRACE_FOLLOW MEMTRACE_TENSORS MEMTRACE_QUIET LD_PRELOAD; do
	unset "$v"
done

# run [VAR=VALUE...] -- MEMTRACE-RUN-ARGS...: env's output in out, stderr in err
run() {
	vars=
	while [ "$1" != -- ]; do
		vars="$vars $1"
		shift
	done
	shift
	# shellcheck disable=SC2086 # word splitting of VAR=VALUE is wanted
	env $vars "$memtrace" run "$@" -- env >"$tmp/out" 2>"$tmp/err" ||
		fail "memtrace run $*: exit $?: $(cat "$tmp/err")"
}

has() { # has VAR=VALUE: env printed exactly that line
	grep -qxF -- "$1" "$tmp/out" || fail "$2: the program did not get $1"
}

lacks() { # lacks VAR: env printed no such variable
	! grep -q "^$1=" "$tmp/out" || fail "$2: the program got $(grep "^$1=" "$tmp/out")"
}

said() { # said TEXT: stderr has a line with it
	grep -qF -- "$1" "$tmp/err" || fail "$2: stderr lacks '$1': $(cat "$tmp/err")"
}

# nothing set: all three, each said on stderr; TensorFlow's allocator is
# left alone (its BFC arena's tensors are seen as they are, and
# cuda_malloc_async would not hold it to its memory limit)
run -- --per-tensor
lacks TF_GPU_ALLOCATOR "--per-tensor"
for kv in PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync \
	XLA_PYTHON_CLIENT_ALLOCATOR=platform XLA_PYTHON_CLIENT_PREALLOCATE=false; do
	has "$kv" "--per-tensor"
	said "--per-tensor: set $kv" "--per-tensor"
done
has "LD_PRELOAD=$(readlink -f "$lib")" "--per-tensor"
lacks MEMTRACE_FOLLOW "--per-tensor"

# what the user set stays; a PyTorch configuration without a backend gets it
run PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True TF_GPU_ALLOCATOR=bfc \
	XLA_PYTHON_CLIENT_ALLOCATOR=default XLA_PYTHON_CLIENT_PREALLOCATE=true -- --per-tensor
has PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,backend:cudaMallocAsync "user settings"
has TF_GPU_ALLOCATOR=bfc "user settings"
! grep -qF "TF_GPU_ALLOCATOR" "$tmp/err" || fail "user settings: --per-tensor spoke of TF_GPU_ALLOCATOR"
has XLA_PYTHON_CLIENT_ALLOCATOR=default "user settings"
has XLA_PYTHON_CLIENT_PREALLOCATE=true "user settings"

# ... and one that names a backend is left as it is
run PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128,backend:native -- --per-tensor
has PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128,backend:native "backend set"

# --quiet (or MEMTRACE_QUIET=1): the same, silently
run -- --quiet --per-tensor
has PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync "--quiet"
[ ! -s "$tmp/err" ] || fail "--quiet --per-tensor wrote to stderr: $(cat "$tmp/err")"
run MEMTRACE_QUIET=1 -- --per-tensor
[ ! -s "$tmp/err" ] || fail "MEMTRACE_QUIET=1 --per-tensor wrote to stderr: $(cat "$tmp/err")"

# without --per-tensor nothing of the frameworks' is touched
run -- -q
lacks PYTORCH_CUDA_ALLOC_CONF "no --per-tensor"
lacks TF_GPU_ALLOCATOR "no --per-tensor"
lacks XLA_PYTHON_CLIENT_ALLOCATOR "no --per-tensor"
lacks XLA_PYTHON_CLIENT_PREALLOCATE "no --per-tensor"

# --no-follow
run -- --no-follow
has MEMTRACE_FOLLOW=0 "--no-follow"
lacks PYTORCH_CUDA_ALLOC_CONF "--no-follow"
lacks MEMTRACE_TENSORS "--no-follow"

# --no-tensors: the CUDA calls only, the caching allocator untouched
run -- --no-tensors
has MEMTRACE_TENSORS=0 "--no-tensors"
lacks PYTORCH_CUDA_ALLOC_CONF "--no-tensors"

# the help says it all
"$memtrace" run --help >"$tmp/out"
for word in --per-tensor --no-follow --no-tensors MEMTRACE_TENSORS MEMTRACE_FOLLOW PYTORCH_CUDA_ALLOC_CONF TF_GPU_ALLOCATOR \
	XLA_PYTHON_CLIENT_ALLOCATOR XLA_PYTHON_CLIENT_PREALLOCATE; do
	grep -q -- "$word" "$tmp/out" || fail "run --help does not mention $word"
done

if [ "$failures" -ne 0 ]; then
	echo "$failures run-option checks failed" >&2
	exit 1
fi
echo "all run-option checks passed"
