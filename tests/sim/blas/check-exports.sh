#!/usr/bin/env bash
# Checks that the simulated cuBLAS and cuBLASLt look like NVIDIA's to the
# dynamic linker: sonames, DT_NEEDED (libcublas needs libcublasLt, neither
# the runtime nor the driver), exactly the symbols of the committed version
# scripts, each under its library's version node; each of them with the
# same version in the real libraries found; and, where a torch venv can be
# had (scripts/framework-python torch), every symbol any torch library
# imports from cuBLAS or cuBLASLt, so that a torch needing a new one fails
# here, loudly, and not deep inside torch; the same for the real CUDA
# libraries torch needs that import from cuBLAS themselves (cuSOLVER).
#
# usage: check-exports.sh SIM_CUBLAS SIM_CUBLASLT CUBLAS_MAP CUBLASLT_MAP [REAL_DIR...]
#   REAL_DIR  directories that may hold NVIDIA's libcublas.so.13 and
#             libcublasLt.so.13 (the toolkit's lib64); the torch wheel's
#             nvidia/cu13/lib is added when the venv is there.
# Exits 77 (skipped) without objdump.
set -uo pipefail

if (($# < 4)); then
	echo "usage: $0 SIM_CUBLAS SIM_CUBLASLT CUBLAS_MAP CUBLASLT_MAP [REAL_DIR...]" >&2
	exit 99
fi
cublas=$1 cublaslt=$2 cublas_map=$3 cublaslt_map=$4
shift 4
real_dirs=("$@")
here=$(cd "$(dirname "$0")" && pwd)
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

# The names a version script exports, one a line.
mapped() {
	sed 's,/\*.*\*/,,' "$1" | grep -E '^[[:space:]]+[A-Za-z_][A-Za-z0-9_]*;' | tr -d ' \t;' |
		LC_ALL=C sort -u
}

# check SIM MAP SONAME
check() {
	local lib=$1 map=$2 soname=$3
	objdump -p "$lib" | grep -q "SONAME *${soname//./\\.}\$" || bad "$lib: soname is not $soname"
	objdump -p "$lib" | grep -E 'NEEDED *(libcudart|libcuda)\.' && bad "$lib links the runtime or the driver"
	defined "$lib" >"$tmp/$soname.defined"
	mapped "$map" | sed "s/^/$soname /" >"$tmp/$soname.want"
	[[ -s $tmp/$soname.want ]] || bad "$map names no symbol"
	# exactly the map, each under the soname's version node
	LC_ALL=C comm -13 "$tmp/$soname.defined" "$tmp/$soname.want" | while read -r v s; do
		echo "FAIL: $lib: no $s@@$v"
	done | grep . && fail=1
	LC_ALL=C comm -23 "$tmp/$soname.defined" "$tmp/$soname.want" | while read -r v s; do
		echo "FAIL: $lib exports $s@$v, which $map does not name"
	done | grep . && fail=1
}

check "$cublas" "$cublas_map" libcublas.so.13
check "$cublaslt" "$cublaslt_map" libcublasLt.so.13
objdump -p "$cublas" | grep -q 'NEEDED *libcublasLt\.so\.13$' || bad "$cublas does not link libcublasLt.so.13"

# The torch venv, when there is one: its imports and its wheel's libraries.
py=
if py=$("$here/../../../scripts/framework-python" torch 2>"$tmp/fw.err"); then
	torch_lib=$("$py" -c 'import importlib.util as u; print(u.find_spec("torch").submodule_search_locations[0])')/lib
	wheel_lib=$(dirname "$torch_lib")/../nvidia/cu13/lib
	real_dirs+=("$wheel_lib")
	torch_libs=("$torch_lib"/*.so)
	"$here/../torch-imports.sh" "$py" "${torch_libs[@]##*/}" >"$tmp/imports" ||
		bad "torch-imports.sh failed"
	n=0 missing=0
	while read -r soname sym; do
		case $soname in libcublas.so.13|libcublasLt.so.13) ;; *) continue ;; esac
		n=$((n + 1))
		name=${sym%@*} version=${sym#*@}
		[[ $sym == *@* ]] || version=Base
		grep -qx "$version $name" "$tmp/$soname.defined" && continue
		echo "FAIL: torch imports $name@$version from $soname; the simulated one lacks it (add it to its map and implement it)"
		missing=$((missing + 1))
	done <"$tmp/imports"
	((n > 0)) || bad "torch-imports.sh found no cuBLAS or cuBLASLt import in $torch_lib"
	((missing == 0)) || fail=1
	echo "torch ($py): $((n - missing)) of its $n cuBLAS and cuBLASLt imports exported"
	# The real libraries torch needs that need cuBLAS themselves (cuSOLVER)
	# bind to the simulated ones: what they import must be there too.
	for so in $(readelf -d -W "${torch_libs[@]}" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' | sort -u); do
		[[ $so == libcublas* || ! -f $wheel_lib/$so ]] && continue
		objdump -T "$wheel_lib/$so" | awk '$0 ~ /\*UND\*/ && $(NF-1) ~ /^\(libcublas(Lt)?\.so\.13\)$/ {
			v = $(NF-1); gsub(/[()]/, "", v); print v, $NF }' | sort -u >"$tmp/dep"
		[[ -s $tmp/dep ]] || continue
		n=0 missing=0
		while read -r soname name; do
			n=$((n + 1))
			grep -qx "$soname $name" "$tmp/$soname.defined" && continue
			echo "FAIL: the wheel's $so imports $name@$soname; the simulated $soname lacks it"
			missing=$((missing + 1))
		done <"$tmp/dep"
		((missing == 0)) || fail=1
		echo "$so (needed by torch): $((n - missing)) of its $n cuBLAS and cuBLASLt imports exported"
	done
else
	echo "SKIP (torch part): no torch venv: $(tail -n 1 "$tmp/fw.err")"
fi

# Each export has the same version in every real library found.
for dir in "${real_dirs[@]}"; do
	for soname in libcublas.so.13 libcublasLt.so.13; do
		[[ -r $dir/$soname ]] || continue
		defined "$dir/$soname" >"$tmp/real"
		LC_ALL=C comm -23 "$tmp/$soname.defined" "$tmp/real" | while read -r v s; do
			echo "FAIL: $dir/$soname has no $s@$v"
		done | grep . && fail=1
		echo "compared with $(readlink -f "$dir/$soname")"
	done
done

((fail == 0)) && echo "exports ok: $(wc -l <"$tmp/libcublas.so.13.defined") cuBLAS, $(wc -l <"$tmp/libcublasLt.so.13.defined") cuBLASLt symbols"
exit $fail
