/* Native stacks on the application thread: return addresses only (no
 * symbol work here, that is the writer's job). memtrace's own frames are
 * dropped so that frame 0 is the code that called the CUDA function. */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <link.h>
#include <string.h>

#include "core.h"
#include "carry.h"

static uintptr_t self_lo, self_hi;

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t probe = (uintptr_t)data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (probe >= lo && probe < lo + ph->p_memsz) {
			self_lo = lo;
			self_hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

void mt_unwind_init(void)
{
	/* Per-thread caching keeps unw_backtrace lock-free on the hot path.
	 * libunwind initialises here and makes its validation pipe: ours
	 * (fd-guard.c). */
	mt_fdguard_unwinding = 1;
	unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
	mt_fdguard_unwinding = 0;
	mt_dl_iterate_phdr(find_self, (void *)(uintptr_t)&mt_unwind_init);
}

static bool is_self(uintptr_t ip)
{
	return ip >= self_lo && ip < self_hi;
}

/* libunwind fills the caller's array (room for max + MT_UNWIND_SLACK);
 * memtrace's own frames, at the start, stay there and are skipped (*skip):
 * no second buffer, no copy. Past MT_UNWIND_SLACK of them, the frames
 * are moved down to the start, so that *skip never leaves less room
 * after it than max. */
unsigned mt_unwind(uintptr_t *ips, unsigned max, unsigned *skip)
{
	*skip = 0;
	/* The program took the pipe's number (or the trace's): libunwind
	 * would read from and write into its file. */
	if (MT_UNLIKELY(mt_fdguard_lost()))
		return 0;
	/* libunwind may remake its pipe here (closing the old one) */
	mt_fdguard_unwinding = 1;
	_Static_assert(sizeof(void *) == sizeof(uintptr_t), "frames are stored as uintptr_t");
	/* libunwind takes the loader's lock: no fork meanwhile (fork-gate.c) */
	mt_fork_gate_enter();
	int n = unw_backtrace((void **)ips, (int)(max + MT_UNWIND_SLACK));
	mt_fork_gate_leave();
	mt_fdguard_unwinding = 0;
	if (n <= 0)
		return 0;
	unsigned i = 0;
	while (i < (unsigned)n && is_self(ips[i]))
		i++;
	unsigned out = (unsigned)n - i;
	if (out > max)
		out = max;
	if (MT_UNLIKELY(i > MT_UNWIND_SLACK)) {
		memmove(ips, ips + i, out * sizeof(ips[0]));
		i = 0;
	}
	*skip = i;
	return out;
}
