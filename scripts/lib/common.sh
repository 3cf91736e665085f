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

# The floor under every specific message: a command that fails where the
# script did not expect it stops the script with its name, status and line,
# never silently. Scripts call memtrace_strict right after sourcing this
# file; expected failures are written as conditions (if, ||), which do not
# trip it.
memtrace_strict()
{
	set -eEuo pipefail
	trap 'memtrace_on_err $? "$BASH_COMMAND" "${BASH_SOURCE[0]:-$0}" "$LINENO"' ERR
}

memtrace_on_err()
{
	local status=$1 cmd=$2 file=$3 line=$4
	trap - ERR
	# In a command substitution, leave the message to the command around it.
	[[ $BASHPID == "$$" ]] || exit "$status"
	file=${file#"$(memtrace_repo_root)/"}
	printf 'memtrace: %s stopped: "%s" failed with status %s (%s, line %s).\n' \
		"${0##*/}" "$cmd" "$status" "$file" "$line" >&2
	printf 'memtrace: the messages above say why; if they do not, run it again with\n' >&2
	printf '  bash -x %s\n' "$0" >&2
	printf 'memtrace: and report the output (this is a bug in the script).\n' >&2
	exit "$status"
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
