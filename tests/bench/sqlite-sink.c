/* A benchmark shim, preloaded before libmemtrace.so: the writer's inserts
 * into the events table are discarded (sqlite3_step answers SQLITE_DONE
 * without running them); everything else reaches SQLite. The writer still
 * drains the queue, binds every column and keeps its maps, so what is
 * left on the application threads is the cost of recording, with the
 * writer no longer the bottleneck. Never part of the tool. */
#include <dlfcn.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <string.h>

typedef int (*step_fn)(sqlite3_stmt *);

__attribute__((visibility("default"))) int
sqlite3_step(sqlite3_stmt *s)
{
	static _Atomic(step_fn) real;
	static _Atomic(sqlite3_stmt *) events;
	step_fn f = atomic_load_explicit(&real, memory_order_relaxed);
	if (!f) {
		f = (step_fn)dlsym(RTLD_NEXT, "sqlite3_step");
		atomic_store(&real, f);
	}
	if (s == atomic_load_explicit(&events, memory_order_relaxed))
		return SQLITE_DONE;
	const char *sql = sqlite3_sql(s);
	if (sql && !strncmp(sql, "INSERT INTO events(", strlen("INSERT INTO events("))) {
		atomic_store(&events, s);
		return SQLITE_DONE;
	}
	return f(s);
}
