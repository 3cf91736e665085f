# shellcheck shell=bash
# What memtrace needs to build and test, and installing what is missing.
# Sourced by scripts/demo and scripts/test (after common.sh), never run.
#
# memtrace_deps does it all: Debian packages (installed with apt-get when
# running as root, else the exact command is printed and the script stops),
# meson >= 1.0, and the CUDA toolkit headers, whose root it leaves in
# MEMTRACE_CUDA_HOME for -Dcudatoolkit=.

# gcc recommends libc6-dev rather than depending on it, so with
# --no-install-recommends it has to be named. g++: nvcc compiles host code
# with it (tests/gpu/static-alloc.cu), and the C++ test programs need it. libunwind-dev is the nongnu
# libunwind (unw_backtrace); LLVM's libunwind-N-dev is a different library.
# clang and libclang-rt-14-dev build the reporter's libFuzzer target
# (tests/fuzz); without them that test skips.
MEMTRACE_DEB_PACKAGES=(
	gcc g++ libc6-dev pkg-config meson ninja-build
	libunwind-dev libsqlite3-dev sqlite3 check libdw-dev zlib1g-dev
	python3 jq file clang libclang-rt-14-dev
)

# Only the tests need these: python3-venv and python3-mesonpy for the
# wheel installed into a fresh virtual environment (tests/install);
# golang-go for pprof (go tool pprof), which reads the pprof export.
MEMTRACE_TEST_PACKAGES=(python3-venv python3-mesonpy golang-go)

MEMTRACE_APT_UPDATED=

memtrace_pkg_installed()
{
	local status
	status=$(dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null) || return 1
	[[ $status == *" ok installed"* ]]
}

# Prints the packages among the arguments that are not installed.
memtrace_missing_packages()
{
	local pkg
	for pkg in "$@"; do
		memtrace_pkg_installed "$pkg" || printf '%s\n' "$pkg"
	done
}

# LLVM's libunwind-N-dev conflicts with libunwind-dev: apt-get would remove it
# to install ours. Removing someone's packages is not this script's call.
memtrace_check_unwind_conflict()
{
	local llvm
	# dpkg-query exits 1 when no package matches the pattern: that is the
	# good case, not a failure.
	llvm=$({ dpkg-query -W -f='${Package} ${Status}\n' 'libunwind-*-dev' 2>/dev/null || true; } |
		awk '$1 ~ /^libunwind-[0-9]+-dev$/ && / installed$/ { print $1 }')
	[[ -z $llvm ]] && return 0
	memtrace_say "LLVM's libunwind ($llvm) is installed. memtrace needs the nongnu"
	memtrace_say "libunwind (Debian package libunwind-dev), and the two conflict."
	memtrace_say "Installing libunwind-dev removes $llvm; if that is fine, run:"
	printf '    %sapt-get install -y --no-install-recommends libunwind-dev\n' \
		"$(memtrace_sudo)" >&2
	memtrace_die "then run $0 again."
}

memtrace_sudo()
{
	[[ $(id -u) == 0 ]] || printf 'sudo '
}

memtrace_apt_get()
{
	DEBIAN_FRONTEND=noninteractive apt-get -qq -o DPkg::Lock::Timeout=300 \
		-o Dpkg::Use-Pty=0 "$@" </dev/null
}

# Runs apt-get quietly; its whole output is shown only when it fails.
memtrace_apt_get_logged()
{
	local log rc=0
	log=$(mktemp) || return 1
	memtrace_apt_get "$@" >"$log" 2>&1 || rc=$?
	((rc == 0)) || cat "$log" >&2
	rm -f "$log"
	return $rc
}

memtrace_apt_install()
{
	if [[ -z $MEMTRACE_APT_UPDATED ]]; then
		memtrace_say "updating the package lists (apt-get update)"
		memtrace_apt_get_logged update || memtrace_die "apt-get update failed"
		MEMTRACE_APT_UPDATED=1
	fi
	memtrace_say "installing $*"
	memtrace_apt_get_logged install -y --no-install-recommends "$@" ||
		memtrace_die "apt-get install failed"
}

# Without dpkg (not Debian or Ubuntu) nothing can be installed for the user:
# go on if the tools and libraries are there, else say what is missing.
memtrace_check_without_dpkg()
{
	local missing=() cmd mod
	for cmd in gcc pkg-config meson ninja sqlite3 python3 jq file; do
		command -v "$cmd" >/dev/null || missing+=("$cmd")
	done
	for mod in libunwind sqlite3 check libdw zlib; do
		pkg-config --exists "$mod" 2>/dev/null || missing+=("$mod (pkg-config)")
	done
	[[ ${#missing[@]} == 0 ]] && return 0
	memtrace_say "this is not a Debian system (no dpkg-query), and these are missing:"
	memtrace_say "  ${missing[*]}"
	memtrace_say "install them with your package manager; on Debian 12 they come with:"
	printf '    sudo apt-get install -y --no-install-recommends %s\n' \
		"${MEMTRACE_DEB_PACKAGES[*]}" >&2
	exit 1
}

# memtrace_require_packages PKG...: installs those of PKG that are missing,
# or prints the command that would and exits 1.
memtrace_require_packages()
{
	local missing
	if ! command -v dpkg-query >/dev/null; then
		memtrace_check_without_dpkg
		return
	fi
	mapfile -t missing < <(memtrace_missing_packages "$@")
	[[ ${#missing[@]} == 0 ]] && return 0

	[[ " ${missing[*]} " == *" libunwind-dev "* ]] && memtrace_check_unwind_conflict
	if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
		memtrace_say "missing Debian packages: ${missing[*]}"
		if [[ $(id -u) != 0 ]]; then
			memtrace_say "not running as root, so not installing them; run:"
		else
			memtrace_say "apt-get is not available to install them; the command is:"
		fi
		printf '    %sapt-get update && %sapt-get install -y --no-install-recommends %s\n' \
			"$(memtrace_sudo)" "$(memtrace_sudo)" "${missing[*]}" >&2
		memtrace_die "then run $0 again."
	fi

	memtrace_apt_install "${missing[@]}"
	mapfile -t missing < <(memtrace_missing_packages "${missing[@]}")
	[[ ${#missing[@]} == 0 ]] ||
		memtrace_die "still not installed after apt-get: ${missing[*]}"
}

memtrace_require_meson()
{
	local version
	version=$(meson --version 2>/dev/null) || memtrace_die "meson does not run"
	if [[ ! $version =~ ^([0-9]+)\. ]] || ((BASH_REMATCH[1] < 1)); then
		memtrace_say "meson $version is too old: memtrace needs meson >= 1.0"
		memtrace_say "(Debian 12 has 1.0.1; elsewhere: python3 -m pip install --user 'meson>=1.0')"
		exit 1
	fi
}

# Sets MEMTRACE_CUDA_HOME to the CUDA toolkit root: $CUDA_HOME, else
# $CUDA_PATH, else /usr/local/cuda (the same order as meson.build). The
# headers are needed to build, and the tests link against the toolkit's real
# libcudart.so for its symbol references; nothing runs on a GPU.
memtrace_find_cuda()
{
	local dir from
	if [[ -n ${CUDA_HOME:-} ]]; then
		dir=$CUDA_HOME from="CUDA_HOME"
	elif [[ -n ${CUDA_PATH:-} ]]; then
		dir=$CUDA_PATH from="CUDA_PATH"
	else
		dir=/usr/local/cuda from="the default location"
	fi
	if [[ -f $dir/include/cuda.h && -e $dir/lib64/libcudart.so ]]; then
		MEMTRACE_CUDA_HOME=$(cd "$dir" && pwd)
		return 0
	fi

	memtrace_say "the CUDA toolkit was not found in $dir ($from):"
	memtrace_say "  need $dir/include/cuda.h and $dir/lib64/libcudart.so."
	memtrace_say "memtrace needs the toolkit's headers to build, and its tests link against"
	memtrace_say "the real libcudart.so (they run on a simulated device: no GPU is needed)."
	memtrace_say "Debian's main archive has no CUDA toolkit: install NVIDIA's (for Debian 12,"
	memtrace_say "https://developer.nvidia.com/cuda-downloads, package cuda-toolkit), or,"
	memtrace_say "if it is installed elsewhere, point CUDA_HOME at the directory holding"
	memtrace_say "include/cuda.h and lib64/libcudart.so, e.g.:"
	printf '    CUDA_HOME=/opt/cuda-13.0 %s\n' "$0" >&2
	exit 1
}

memtrace_deps()
{
	memtrace_say "checking dependencies"
	memtrace_require_packages "${MEMTRACE_DEB_PACKAGES[@]}"
	memtrace_require_meson
	memtrace_find_cuda
	memtrace_say "CUDA toolkit: $MEMTRACE_CUDA_HOME"
}
