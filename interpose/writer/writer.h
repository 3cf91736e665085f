/* The writer (layer 2, interpose/writer/): the writer thread and the
 * SQLite file, symbols and the event columns it interns. Its live set is
 * trace-live.h. It calls the core only; names of the layers above come
 * through callbacks (struct mt_writer_options). See core/core.h. */
#pragma once

#include "core.h"

/* ---- symbols.c: writer side, turns addresses into modules and names ---- */
struct mt_symbol {
	const char *module_path; /* never NULL; "" when unknown */
	uintptr_t module_base; /* load bias */
	const char *function; /* NULL when none */
};
bool mt_symbol_lookup(uintptr_t ip, struct mt_symbol *sym);
/* The function of the file's .symtab that holds vaddr (ip less the load
 * bias): names dladdr does not know. Reads the file: the writer only. */
bool mt_symbol_static(const char *path, uintptr_t vaddr, char *out, size_t outsz);
/* Writes the hex GNU build id of the object loaded at base; "" if none. */
void mt_symbol_build_id(uintptr_t base, const char *path, char *out, size_t outsz);

/* ---- site-table.c: the writer's interned event sites (sites table) ---- */
/* The columns of an allocation or free row that repeat: every one but
 * seq, time, address and bytes. Compared whole: zero it before filling. */
struct mt_site_key {
	uint64_t stream;
	uint64_t handle;
	uint32_t stack;
	uint32_t tid;
	uint32_t op;
	int32_t status;
	int16_t device;
	uint16_t api;
	uint8_t kind;
	uint8_t mem;
	uint8_t source;
	uint8_t pad;
};
_Static_assert(sizeof(struct mt_site_key) % 8 == 0, "site keys are hashed 8 bytes at a time");
struct mt_site_table;
struct mt_site_table *mt_site_table_new(void);
void mt_site_table_free(struct mt_site_table *t);
/* The site's id (>= 1; *added when new), or 0 when out of memory. */
uint32_t mt_site_intern(struct mt_site_table *t, const struct mt_site_key *k, bool *added);

/* ---- trace-writer.c: the writer thread and the SQLite file ---- */
struct mt_writer;
struct mt_writer_options {
	const char *path;
	struct mt_queue *queue;
	struct mt_stack_table *stacks;
	int depth;
	unsigned interval_ms;
	uint64_t start_ns; /* CLOCK_MONOTONIC at trace start */
	const char *rank;
	uint64_t flight; /* MEMTRACE_FLIGHT in bytes; 0: the full trace */
	bool what_fits;	 /* MEMTRACE_WHAT_FITS: meta what_fits 1 */
	/* The queue's cells are the ring file TRACE-ring with this id
	 * (ring-file.c; meta ring_id): the writer notes in each cell the seq
	 * it wrote, releases cells as their events are committed, and removes
	 * the file at a clean close. 0: no ring file. */
	uint64_t ring_id;
	/* Names the capture side interned (NULL: none): NVTX operations and
	 * marks, Python frames. */
	bool (*op_name)(uint32_t id, char *out, size_t outsz, char *domain, size_t domainsz);
	bool (*pyframe)(uintptr_t token, const char **function, const char **file,
			unsigned *line);
};
struct mt_writer *mt_writer_start(const struct mt_writer_options *opt);
/* Waits until every event with seq <= upto is committed (bounded). */
bool mt_writer_sync(struct mt_writer *w, uint64_t upto, unsigned timeout_ms);
/* Stops the thread and closes the file; w stays valid (see mt_writer_free). */
/* normal_exit: the library's destructor runs (exit, return from main);
 * exit_status: the status passed to exit(), & 0377, or -1 when unknown. */
void mt_writer_stop(struct mt_writer *w, bool normal_exit, int exit_status);
/* Asks the writer thread to drain the queue, write the end (exit_status
 * as for mt_writer_stop) and close the file, and waits while it makes
 * progress, at most timeout_ms without; true when it is closed. Takes no
 * lock it waits for: for _exit, also from a signal handler. */
bool mt_writer_finish(struct mt_writer *w, int exit_status, unsigned timeout_ms);
/* Waits, by the same rules, until every event pushed so far is
 * committed; the writer goes on. For exec. */
bool mt_writer_commit_now(struct mt_writer *w, unsigned timeout_ms);
/* Whether the caller is the writer thread. */
bool mt_writer_is_self(const struct mt_writer *w);
void mt_writer_free(struct mt_writer *w);
/* The file could not be written: events are dropped from then on. */
bool mt_writer_failed(const struct mt_writer *w);
void mt_writer_lock(struct mt_writer *w); /* around fork */
void mt_writer_unlock(struct mt_writer *w);
uint64_t mt_writer_committed(const struct mt_writer *w);
