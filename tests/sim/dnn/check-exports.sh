#!/usr/bin/env bash
# Checks that the simulated cuDNN looks like NVIDIA's to the dynamic
# linker: the soname libcudnn.so.9, no DT_NEEDED on the runtime or the
# driver, exactly the symbols of the committed version script, each under
# the version node libcudnn.so.9 and, where the torch venv can be had
# (scripts/framework-python torch), each with the same version in the
# wheel's libcudnn.so.9; and there every symbol any torch library imports
# from libcudnn.so.9 must be exported, so that a torch needing a new one
# fails here, by name, and not at "import torch".
#
# usage: check-exports.sh SIM_CUDNN CUDNN_MAP [REAL_DIR...]
#   REAL_DIR  more directories that may hold NVIDIA's libcudnn.so.9
# Exits 77 (skipped) without objdump.
set -uo pipefail

if (($# < 2)); then
	echo "usage: $0 SIM_CUDNN CUDNN_MAP [REAL_DIR...]" >&2
	exit 99
fi
cudnn=$1 map=$2
shift 2
real_dirs=("$@")
here=$(cd "$(dirname "$0")" && pwd)
soname=libcudnn.so.9
command -v objdump >/dev/null || { echo "objdump not found"; exit 77; }

fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

# "VERSION NAME" for each symbol a library defines, without the symbol
# that names the version node itself.
defined() {
	objdump -T "$1" | grep -E '^[0-9a-f]+ ' | grep -v '\*UND\*' |
		awk '{ v = $(NF-1); gsub(/[()]/, "", v); print v, $NF }' |
		awk '$1 != $2' | LC_ALL=C sort -u
}

objdump -p "$cudnn" | grep -q "SONAME *libcudnn\.so\.9\$" || bad "$cudnn: soname is not $soname"
objdump -p "$cudnn" | grep -E 'NEEDED *(libcudart|libcuda)\.' && bad "$cudnn links the runtime or the driver"
defined "$cudnn" >"$tmp/defined"
sed 's,/\*.*\*/,,' "$map" | grep -E '^[[:space:]]+cudnn[A-Za-z0-9_]*;' | tr -d ' \t;' |
	LC_ALL=C sort -u | sed "s/^/$soname /" >"$tmp/want"
[[ -s $tmp/want ]] || bad "$map names no symbol"
LC_ALL=C comm -13 "$tmp/defined" "$tmp/want" | while read -r v s; do
	echo "FAIL: $cudnn: no $s@@$v"
done | grep . && fail=1
LC_ALL=C comm -23 "$tmp/defined" "$tmp/want" | while read -r v s; do
	echo "FAIL: $cudnn exports $s@$v, which $map does not name"
done | grep . && fail=1

if py=$("$here/../../../scripts/framework-python" torch 2>"$tmp/fw.err"); then
	torch_lib=$("$py" -c 'import importlib.util as u; print(u.find_spec("torch").submodule_search_locations[0])')/lib
	real_dirs+=("$(dirname "$torch_lib")/../nvidia/cudnn/lib")
	torch_libs=("$torch_lib"/*.so)
	"$here/../torch-imports.sh" "$py" "${torch_libs[@]##*/}" >"$tmp/imports" ||
		bad "torch-imports.sh failed"
	n=0 missing=0
	while read -r so sym; do
		[[ $so == "$soname" ]] || continue
		n=$((n + 1))
		grep -qx "${sym#*@} ${sym%@*}" "$tmp/defined" && continue
		echo "FAIL: torch imports $sym from $soname; the simulated one lacks it (add it to $map and implement it)"
		missing=$((missing + 1))
	done <"$tmp/imports"
	((n > 0)) || bad "torch-imports.sh found no cuDNN import in $torch_lib"
	((missing == 0)) || fail=1
	echo "torch ($py): $((n - missing)) of its $n cuDNN imports exported"
else
	echo "SKIP (torch part): no torch venv: $(tail -n 1 "$tmp/fw.err")"
fi

# Each export has the same version in every real library found.
compared=0
for dir in "${real_dirs[@]}"; do
	[[ -r $dir/$soname ]] || continue
	defined "$dir/$soname" >"$tmp/real"
	LC_ALL=C comm -23 "$tmp/defined" "$tmp/real" | while read -r v s; do
		echo "FAIL: $dir/$soname has no $s@$v"
	done | grep . && fail=1
	echo "compared with $(readlink -f "$dir/$soname")"
	compared=$((compared + 1))
done
((compared > 0)) || echo "SKIP (versions): no real $soname found"

((fail == 0)) && echo "exports ok: $(wc -l <"$tmp/defined") cuDNN symbols"
exit $fail
