# shellcheck shell=bash
# The inside of scripts/check-fresh, run by it in a mount and PID namespace
# of its own (unshare), never by hand:
#   fresh-root.sh ROOT MIRROR CUDA CUDA_REAL TREE_TAR LOG STEPS
# debootstraps ROOT, mounts what a booted machine has (/proc, /sys, /dev,
# /tmp) and the CUDA toolkit (read-only), extracts the tree into
# ROOT/root/memtrace and runs each of STEPS (comma-separated scripts of
# scripts/) there in a bare environment. Exits 1 at the first that fails.
here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd -P)
# shellcheck source=scripts/lib/common.sh
source "$here/common.sh"
memtrace_strict

root=$1 mirror=$2 cuda=$3 cuda_real=$4 tree=$5 log=$6 steps=$7

t0=$SECONDS
memtrace_say "debootstrap (log: $log)"
if ! debootstrap --variant=minbase bookworm "$root" "$mirror" >"$log" 2>&1; then
	tail -n 20 "$log" >&2
	memtrace_die "debootstrap failed (above: the end of $log)"
fi
memtrace_say "debootstrap took $((SECONDS - t0)) s"

# What the kernel and udev give a booted machine, no more.
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount -t tmpfs -o mode=755 dev "$root/dev"
for node in null zero full random urandom tty; do
	touch "$root/dev/$node"
	mount --bind "/dev/$node" "$root/dev/$node"
done
mkdir -p "$root/dev/shm" "$root/dev/pts"
mount -t tmpfs -o mode=1777 shm "$root/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666 devpts "$root/dev/pts"
ln -s pts/ptmx "$root/dev/ptmx"
ln -s /proc/self/fd "$root/dev/fd"
mount -t tmpfs -o mode=1777 tmp "$root/tmp"

# The toolkit where NVIDIA's packages put it, read-only.
mkdir -p "$root$cuda_real"
mount --bind "$cuda_real" "$root$cuda_real"
mount -o remount,bind,ro "$root$cuda_real"
[[ $cuda_real == "$cuda" ]] || ln -sfn "$cuda_real" "$root$cuda"

cp -L /etc/resolv.conf "$root/etc/resolv.conf"
mkdir -p "$root/root/memtrace"
tar -x -C "$root/root/memtrace" -f "$tree"

IFS=, read -ra list <<<"$steps"
for step in "${list[@]}"; do
	t0=$SECONDS
	memtrace_say "---- in the bare root: ./scripts/$step"
	rc=0
	# the frameworks' tests skip here, saying so: their few GB are
	# fetched by ./scripts/test on the host, not in every bare root
	chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb MEMTRACE_FRAMEWORKS=off \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		/bin/bash -c "cd /root/memtrace && ./scripts/$step" </dev/null || rc=$?
	memtrace_say "---- ./scripts/$step: exit status $rc after $((SECONDS - t0)) s"
	((rc == 0)) || exit 1
done
