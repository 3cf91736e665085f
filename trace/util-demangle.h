/* C++ names demangled, one way in both halves: the report's frames and
 * the library's out-of-memory answer name a C++ function alike. */
#pragma once

#include <stddef.h>

/* name as the C++ ABI's demangler writes it (to free), or NULL: not a
 * mangled name ("_Z..."), one past 4 KiB (the demangler recurses, and a
 * trace is untrusted input), or no demangler in the process. It is
 * libstdc++'s __cxa_demangle: the one given to trace_demangle_use (the
 * reporter links libstdc++), else found at run time (the library links
 * no C++ runtime and uses the program's when it has one). */
char *trace_demangle(const char *name);

typedef char *(*trace_demangle_fn)(const char *, char *, size_t *, int *);
void trace_demangle_use(trace_demangle_fn fn);
