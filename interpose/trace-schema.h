/* The trace schema, shared by the writer (interpose/trace-writer.c) and the
 * reader (report/trace-read.c). Keep in step with docs/trace-format.md. */
#pragma once

#define MT_SCHEMA_VERSION 1

enum mt_event_kind {
	MT_EV_ALLOC = 1,
	MT_EV_FREE = 2,
	MT_EV_OOM = 3,
	MT_EV_ALLOC_ERROR = 4,
	MT_EV_FREE_ERROR = 5,
};

enum mt_mem_kind {
	MT_MEM_DEVICE = 1,
	MT_MEM_MANAGED = 2,
	MT_MEM_HOST_PINNED = 3,
};

enum mt_frame_kind {
	MT_FRAME_NATIVE = 0,
	MT_FRAME_PYTHON = 1,
	MT_FRAME_OP = 2,
};

#define MT_SCHEMA_SQL                                                              \
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"                      \
	"CREATE TABLE apis(id INTEGER PRIMARY KEY, name TEXT NOT NULL);"            \
	"CREATE TABLE modules(id INTEGER PRIMARY KEY, path TEXT NOT NULL,"          \
	" base INTEGER NOT NULL, build_id TEXT);"                                   \
	"CREATE TABLE frames(id INTEGER PRIMARY KEY, kind INTEGER NOT NULL,"        \
	" ip INTEGER, module INTEGER, offset INTEGER, function TEXT, file TEXT,"    \
	" line INTEGER);"                                                           \
	"CREATE TABLE stack_frames(stack INTEGER NOT NULL, depth INTEGER NOT NULL," \
	" frame INTEGER NOT NULL, PRIMARY KEY(stack, depth)) WITHOUT ROWID;"        \
	"CREATE TABLE threads(id INTEGER PRIMARY KEY, name TEXT);"                  \
	"CREATE TABLE events(seq INTEGER PRIMARY KEY, time_ns INTEGER NOT NULL,"    \
	" kind INTEGER NOT NULL, api INTEGER NOT NULL, thread INTEGER,"             \
	" device INTEGER, stream INTEGER, address INTEGER, bytes INTEGER,"          \
	" mem INTEGER, stack INTEGER, status INTEGER);"                             \
	"CREATE TABLE ooms(seq INTEGER PRIMARY KEY, device_free INTEGER,"           \
	" device_total INTEGER);"
