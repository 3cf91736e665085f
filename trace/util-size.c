/* Sizes written for people (util-size.h). */
#include "util-size.h"

#include <inttypes.h>
#include <stdio.h>

struct fmt_str fmt_size(uint64_t bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	struct fmt_str r;
	double v = (double)bytes;
	size_t u = 0;

	if (bytes < 1024) {
		snprintf(r.s, sizeof(r.s), "%" PRIu64 " B", bytes);
		return r;
	}
	v /= 1024.0;
	/* 1023.95 and up would print as "1024.0": use the next unit */
	while (v >= 1023.95 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024.0;
		u++;
	}
	snprintf(r.s, sizeof(r.s), "%.1f %s", v, units[u]);
	return r;
}

struct fmt_str fmt_bytes(uint64_t bytes)
{
	char digits[24];
	struct fmt_str r;
	size_t n = (size_t)snprintf(digits, sizeof(digits), "%" PRIu64, bytes), k = 0;

	for (size_t i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			r.s[k++] = ',';
		r.s[k++] = digits[i];
	}
	snprintf(r.s + k, sizeof(r.s) - k, " B");
	return r;
}

struct fmt_str fmt_size_fine(uint64_t bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	struct fmt_str r;
	double v = (double)bytes / 1024.0;
	size_t u = 0, n;

	if (bytes < 1024)
		return fmt_size(bytes);
	while (v >= 1023.995 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024.0;
		u++;
	}
	n = (size_t)snprintf(r.s, sizeof(r.s), "%.2f", v);
	if (r.s[n - 1] == '0') /* 1.50 as 1.5, 4.00 as 4.0 */
		n--;
	snprintf(r.s + n, sizeof(r.s) - n, " %s", units[u]);
	return r;
}
