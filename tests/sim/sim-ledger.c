/* The device's own record of what it served, in the order it served it:
 * the truth a test holds memtrace's order against when threads race.
 * With CUDASIM_LEDGER=PATH, every cuMemAlloc* and cuMemFree* of device or
 * managed memory appends one line, written under the driver's lock, so
 * the file's order is the order the calls took effect:
 *
 *     a ADDRESS BYTES TID     an allocation (BYTES as charged)
 *     f ADDRESS BYTES TID     a free
 *
 * ADDRESS in hex, BYTES and TID in decimal. A write that fails is
 * ignored: the ledger is for tests, never for the program. */
#include "sim-driver.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static int ledger_fd = -1;
static bool ledger_read;

/* Lock held. */
void
sim_ledger_note(char op, uintptr_t addr, size_t bytes)
{
	char line[96];
	int n;

	if (!ledger_read) {
		const char *path = getenv("CUDASIM_LEDGER");

		ledger_read = true;
		if (path && *path)
			ledger_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	}
	if (ledger_fd < 0)
		return;
	n = snprintf(line, sizeof(line), "%c %#lx %zu %ld\n", op, (unsigned long)addr, bytes,
		     (long)syscall(SYS_gettid));
	if (n > 0 && write(ledger_fd, line, (size_t)n) < 0)
		return;
}
