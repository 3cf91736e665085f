/* Sizes written for people, one way in both halves: the report and the
 * library's out-of-memory answer on stderr say a size alike. Returned by
 * value, so that several can be arguments of one printf:
 * fmt_size(bytes).s. */
#pragma once

#include <stdint.h>

struct fmt_str {
	char s[32];
};

/* "123 B", "1.5 KiB", "96.0 MiB", "1.0 GiB", "2.0 TiB". */
struct fmt_str fmt_size(uint64_t bytes);

/* Exact, with thousands separated: "100,663,552 B". */
struct fmt_str fmt_bytes(uint64_t bytes);

/* fmt_size to two decimals, for a difference that one would round away:
 * "3.75 KiB", "1.5 MiB", "12 B". */
struct fmt_str fmt_size_fine(uint64_t bytes);
