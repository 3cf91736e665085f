/* Symbolization at report time: function names from the ELF symbol table
 * (so static functions resolve) and file:line from DWARF, read with libdwfl
 * from the module files named in the trace. One Dwfl per module file,
 * opened once; one lookup per distinct frame. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct trace;
struct symbolizer;

struct sym_info {
	const char *function; /* NULL when no symbol covers the address */
	const char *file;     /* NULL when there is no line information */
	int line;
};

struct symbolizer *symbolizer_new(void);
void symbolizer_free(struct symbolizer *s);

/* Look up ELF address addr (a file address, as in the ELF program headers;
 * for a return address, pass frames.offset - 1 so it lies in the call) in
 * the object at path. A non-empty build_id (lowercase hex) must match the
 * file's. Returns false when the file cannot be read or does not match.
 * Strings in *out live as long as s. */
bool symbolize_addr(struct symbolizer *s, const char *path, const char *build_id,
		    uint64_t addr, struct sym_info *out);

/* Complete the native frames of t from debug info: a function name from
 * the symbol table replaces dladdr's, file and line are added. Frames of
 * modules that are missing or rebuilt since keep what the trace has. */
void symbolize_trace(struct symbolizer *s, struct trace *t);
