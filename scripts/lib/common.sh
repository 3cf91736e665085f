# shellcheck shell=bash
# Shared helpers of scripts/demo and scripts/test: messages, the repository
# root, and setting up a meson build directory. Sourced, never run.

# Progress and errors go to stderr, so that stdout carries only what the
# scripts were asked to produce (a report, a test summary).
memtrace_say()
{
	printf 'memtrace: %s\n' "$*" >&2
}

memtrace_die()
{
	printf 'memtrace: %s\n' "$*" >&2
	exit 1
}

# The repository root, found from this file's own path, so the scripts work
# from any working directory.
memtrace_repo_root()
{
	local lib
	lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P) || return 1
	dirname "$(dirname "$lib")"
}

# memtrace_setup_build DIR [MESON-OPTIONS...]
#
# Configures DIR with the given options: a fresh setup when DIR is not yet a
# meson build directory, a reconfigure when it is (which applies changed
# options), and a wipe when the reconfigure fails (a build directory left by
# another meson version, or a broken one).
memtrace_setup_build()
{
	local dir=$1
	shift

	if [[ ! -f $dir/meson-private/coredata.dat ]]; then
		meson setup "$dir" "$@"
		return
	fi
	if meson setup --reconfigure "$dir" "$@"; then
		return 0
	fi
	memtrace_say "reconfiguring $dir failed; wiping it and starting afresh"
	meson setup --wipe "$dir" "$@"
}
