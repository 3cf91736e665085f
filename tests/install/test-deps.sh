#!/usr/bin/env bash
# scripts/lib/deps.sh against stub dpkg-query, apt-get and id on PATH, under
# the same strict mode as scripts/demo (set -eEuo pipefail, the ERR trap):
#   - every package missing, as root: one apt-get update, one install of
#     exactly the missing packages, then success (on a bare machine the
#     LLVM-libunwind check once killed the script silently here);
#   - every package present: no apt-get at all;
#   - LLVM's libunwind-14-dev installed, libunwind-dev missing: stops with
#     a message naming it and the command to run, installs nothing;
#   - every package missing, not root: prints the apt-get command, exits 1;
#   - apt-get install fails: says so, exits 1, never silently.
#   test-deps.sh SOURCE_ROOT
set -uo pipefail

src=${1:?usage: test-deps.sh SOURCE_ROOT}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

mkdir -p "$tmp/bin"
# dpkg-query -W [-f=FORMAT] PATTERN...: the packages listed in $STUB_STATE
# are installed; a pattern that matches none exits 1, as dpkg-query does.
cat >"$tmp/bin/dpkg-query" <<'EOF'
#!/usr/bin/env bash
fmt='${Package}\t${Version}\n'
pats=()
for a in "$@"; do
	case $a in
	-W | --show) ;;
	-f=* | --showformat=*) fmt=${a#*=} ;;
	*) pats+=("$a") ;;
	esac
done
rc=0
for p in "${pats[@]}"; do
	hit=
	while read -r pkg; do
		[[ -n $pkg ]] || continue
		# shellcheck disable=SC2053
		[[ $pkg == $p ]] || continue
		hit=1
		out=${fmt//'${Package}'/$pkg}
		out=${out//'${Status}'/install ok installed}
		out=${out//'${Version}'/1.0}
		printf '%b' "$out"
	done <"$STUB_STATE"
	[[ -n $hit ]] || { echo "dpkg-query: no packages found matching $p" >&2; rc=1; }
done
exit $rc
EOF
# apt-get: logs its arguments; install adds the packages to $STUB_STATE,
# unless $STUB_APT_FAIL is set.
cat >"$tmp/bin/apt-get" <<'EOF'
#!/usr/bin/env bash
printf '%s\n' "$*" >>"$STUB_APT_LOG"
pkgs=()
install=
for a in "$@"; do
	case $a in
	install) install=1 ;;
	-* | *=*) ;;
	*) [[ -n $install ]] && pkgs+=("$a") ;;
	esac
done
if [[ -n $install ]]; then
	[[ -z ${STUB_APT_FAIL:-} ]] || { echo "E: Unable to locate package ${pkgs[0]}" >&2; exit 100; }
	printf '%s\n' "${pkgs[@]}" >>"$STUB_STATE"
fi
exit 0
EOF
cat >"$tmp/bin/id" <<'EOF'
#!/bin/sh
[ "$1" = -u ] && { echo "${STUB_UID:-0}"; exit 0; }
exec /usr/bin/id "$@"
EOF
chmod +x "$tmp/bin/"*

# case NAME: runs memtrace_require_packages with the project's package
# list in a strict child shell; sets $out, $rc, $apt.
run_case()
{
	: >"$tmp/apt.log"
	out=$(PATH="$tmp/bin:$PATH" STUB_STATE="$tmp/state" STUB_APT_LOG="$tmp/apt.log" \
		bash -c 'source "$1/scripts/lib/common.sh"; source "$1/scripts/lib/deps.sh"
			memtrace_strict
			memtrace_require_packages "${MEMTRACE_DEB_PACKAGES[@]}"
			echo "require: returned"' require "$src" 2>&1)
	rc=$?
	apt=$(cat "$tmp/apt.log")
}

check()
{
	local what=$1
	shift
	if "$@"; then
		echo "ok: $what"
	else
		echo "FAIL: $what"
		echo "  exit status $rc; output:"
		sed 's/^/    /' <<<"$out"
		echo "  apt-get calls:"
		sed 's/^/    /' <<<"$apt"
		fail=1
	fi
}

packages=$(bash -c 'source "$1/scripts/lib/deps.sh"; printf "%s\n" "${MEMTRACE_DEB_PACKAGES[@]}"' \
	deps "$src")
all=$(tr '\n' ' ' <<<"$packages" | sed 's/ $//')

# 1. a bare machine, as root
: >"$tmp/state"
run_case
check "bare, root: succeeds" test "$rc" = 0
check "bare, root: the function returns" grep -qx "require: returned" <<<"$out"
check "bare, root: one apt-get update" test "$(grep -c ' update$' <<<"$apt")" = 1
check "bare, root: installs exactly the missing packages" \
	grep -qx -- "-qq -o DPkg::Lock::Timeout=300 -o Dpkg::Use-Pty=0 install -y --no-install-recommends $all" <<<"$apt"
check "bare, root: says what it installs" grep -q "memtrace: installing $all" <<<"$out"

# 2. everything installed
printf '%s\n' "$packages" >"$tmp/state"
run_case
check "all present: succeeds" test "$rc" = 0
check "all present: no apt-get" test -z "$apt"
check "all present: says nothing" test "$out" = "require: returned"

# 3. LLVM's libunwind instead of ours
grep -vx libunwind-dev <<<"$packages" >"$tmp/state"
echo libunwind-14-dev >>"$tmp/state"
run_case
check "LLVM libunwind: stops" test "$rc" = 1
check "LLVM libunwind: does not return" bash -c '! grep -qx "require: returned" <<<"$1"' _ "$out"
check "LLVM libunwind: names it" grep -q "LLVM's libunwind (libunwind-14-dev) is installed" <<<"$out"
check "LLVM libunwind: gives the command" \
	grep -q "apt-get install -y --no-install-recommends libunwind-dev" <<<"$out"
check "LLVM libunwind: installs nothing" bash -c '! grep -q install <<<"$1"' _ "$apt"

# 4. a bare machine, not root
: >"$tmp/state"
export STUB_UID=1000
run_case
unset STUB_UID
check "bare, not root: stops" test "$rc" = 1
check "bare, not root: prints the command" \
	grep -q "sudo apt-get update && sudo apt-get install -y --no-install-recommends $all" <<<"$out"
check "bare, not root: runs no apt-get" test -z "$apt"

# 5. apt-get cannot install
: >"$tmp/state"
export STUB_APT_FAIL=1
run_case
unset STUB_APT_FAIL
check "apt-get fails: stops" test "$rc" = 1
check "apt-get fails: shows apt-get's error" grep -q "E: Unable to locate package" <<<"$out"
check "apt-get fails: says so" grep -q "memtrace: apt-get install failed" <<<"$out"

exit $fail
