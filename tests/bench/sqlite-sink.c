/* A benchmark shim, preloaded before libmemtrace.so: the writer's inserts
 * into the event tables (allocs, frees, other_events) are discarded
 * (sqlite3_step answers SQLITE_DONE without running them); everything
 * else reaches SQLite. The writer still drains the queue, binds every
 * column and keeps its maps, so what is left on the application threads
 * is the cost of recording, with the writer no longer the bottleneck.
 * Never part of the tool. */
#include <dlfcn.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

typedef int (*step_fn)(sqlite3_stmt *);

/* The writer's event statements seen so far (one row and a batch each). */
#define KNOWN 8
static _Atomic(sqlite3_stmt *) known[KNOWN];

static bool is_event_insert(sqlite3_stmt *s)
{
	static const char *const prefixes[] = { "INSERT INTO allocs(", "INSERT INTO frees(",
						"INSERT INTO other_events(" };
	for (unsigned i = 0; i < KNOWN; i++) {
		sqlite3_stmt *k = atomic_load_explicit(&known[i], memory_order_relaxed);
		if (k == s)
			return true;
		if (!k)
			break;
	}
	const char *sql = sqlite3_sql(s);
	for (unsigned p = 0; sql && p < sizeof(prefixes) / sizeof(prefixes[0]); p++) {
		if (strncmp(sql, prefixes[p], strlen(prefixes[p])))
			continue;
		for (unsigned i = 0; i < KNOWN; i++) {
			sqlite3_stmt *empty = NULL;
			if (atomic_compare_exchange_strong(&known[i], &empty, s))
				break;
		}
		return true;
	}
	return false;
}

__attribute__((visibility("default"))) int
sqlite3_step(sqlite3_stmt *s)
{
	static _Atomic(step_fn) real;
	step_fn f = atomic_load_explicit(&real, memory_order_relaxed);
	if (!f) {
		f = (step_fn)dlsym(RTLD_NEXT, "sqlite3_step");
		atomic_store(&real, f);
	}
	if (is_event_insert(s))
		return SQLITE_DONE;
	return f(s);
}
