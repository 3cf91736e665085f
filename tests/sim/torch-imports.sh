#!/usr/bin/env bash
# Prints what a PyTorch CUDA build imports from the CUDA libraries, one
# "SONAME SYMBOL@VERSION" line per symbol, sorted: the list the simulated
# libraries' exports are derived from and checked against (docs/frameworks.md).
#
# usage: torch-imports.sh PYTHON [LIB...]
#   PYTHON  an interpreter with torch installed (scripts/framework-python torch)
#   LIB     libraries of torch/lib to read (default: libtorch_cuda.so
#           libc10_cuda.so)
#
# A CUDA library is a DT_NEEDED entry of LIB that its RUNPATH finds in one of
# the nvidia-* wheels (site-packages/nvidia/...), or libcuda.so.1 (the
# driver, which no wheel ships). A symbol imported with a version
# (cudaMalloc@libcudart.so.13) belongs to the library whose version needs
# name that version; one imported without (the libraries with no version
# nodes: NCCL, cuSPARSELt, cuFile) to the CUDA library that defines it, and
# is printed without @VERSION. Unversioned cu* symbols no wheel defines are
# the driver's. torch is found without being imported.
set -uo pipefail

if (($# < 1)); then
	echo "usage: $0 PYTHON [LIB...]" >&2
	exit 2
fi
python=$1
shift
libs=("$@")
((${#libs[@]})) || libs=(libtorch_cuda.so libc10_cuda.so)
command -v readelf >/dev/null || { echo "$0: readelf not found (binutils)" >&2; exit 1; }

torch=$("$python" -c 'import importlib.util as u; s = u.find_spec("torch"); print(s.submodule_search_locations[0] if s else "")') ||
	{ echo "$0: $python does not run" >&2; exit 1; }
[[ -n $torch ]] || { echo "$0: $python has no torch module" >&2; exit 1; }

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# needed_cuda LIB: "SONAME PATH" for each CUDA library LIB needs (PATH "-"
# for the driver).
needed_cuda()
{
	local lib=$1 origin runpath soname dir found
	origin=$(dirname "$lib")
	runpath=$(readelf -d -W "$lib" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]$/\1/p; s/.*(RPATH).*\[\(.*\)\]$/\1/p')
	# shellcheck disable=SC2016 # the literal $ORIGIN of the dynamic linker
	runpath=${runpath//'$ORIGIN'/$origin}
	readelf -d -W "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' | while read -r soname; do
		if [[ $soname == libcuda.so.1 ]]; then
			echo "$soname -"
			continue
		fi
		found=
		IFS=: read -ra dirs <<<"$runpath"
		for dir in "${dirs[@]}"; do
			[[ -e $dir/$soname ]] && { found=$(readlink -f "$dir/$soname"); break; }
		done
		[[ $found == */nvidia/* ]] && echo "$soname $found"
	done
}

# Each CUDA library's defined C symbols, "SYMBOL SONAME", for the
# unversioned imports. C++ names are left out: libcufile.so.0 exports parts
# of libstdc++ it carries, which torch takes from libstdc++.
defined()
{
	readelf --dyn-syms -W "$2" | awk -v so="$1" '$7 != "UND" && $8 != "" && $8 !~ /^_/ {
		sub(/@.*/, "", $8); print $8, so }'
}

status=0
: >"$tmp/imports"
for name in "${libs[@]}"; do
	lib=$torch/lib/$name
	if [[ ! -f $lib ]]; then
		echo "$0: no $lib (a CPU-only torch?)" >&2
		status=1
		continue
	fi
	needed_cuda "$lib" >"$tmp/needed"
	: >"$tmp/defined"
	while read -r soname path; do
		[[ $path == - ]] || defined "$soname" "$path" >>"$tmp/defined"
	done <"$tmp/needed"
	# version name -> soname, from the version needs of the CUDA libraries
	readelf -V -W "$lib" | awk '/File:/ { file = $5 } /Name:/ && file != "" { print $3, file }' |
		grep -Ff <(awk '{ print " " $1 }' "$tmp/needed") >"$tmp/versions" || true
	readelf --dyn-syms -W "$lib" | awk '$7 == "UND" && $8 != "" { print $8 }' |
		awk -v versions="$tmp/versions" -v defs="$tmp/defined" -v driver="$(grep -c '^libcuda.so.1 ' "$tmp/needed")" '
			BEGIN {
				while ((getline l < versions) > 0) { split(l, f, " "); ver[f[1]] = f[2] }
				while ((getline l < defs) > 0) { split(l, f, " "); if (!(f[1] in def)) def[f[1]] = f[2] }
			}
			{
				at = index($0, "@")
				if (at) {
					v = substr($0, at + 1)
					if (v in ver) print ver[v], $0
				} else if ($0 in def) {
					print def[$0], $0
				} else if (driver && $0 ~ /^cu[A-Z]/) {
					print "libcuda.so.1", $0
				}
			}' >>"$tmp/imports"
done
LC_ALL=C sort -u "$tmp/imports"
exit $status
