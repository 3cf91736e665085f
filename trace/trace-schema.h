/* The trace schema, shared by the writer (interpose/writer/trace-writer.c) and the
 * reader (report/read/trace-read.c). Keep in step with docs/trace-format.md. */
#pragma once

/* Version 2 keeps successful allocations and frees in narrow tables
 * (allocs, frees, with their repeating columns in sites) and everything
 * else in other_events; the view events gives version 1's rows back.
 * Version 3 adds what the writer keeps beside the events (the live set at
 * the peak, at each OOM and mark) and flight mode's tables (what left the
 * ring). The reporter reads versions 1 to 3. */
#define MT_SCHEMA_VERSION 3
#define MT_SCHEMA_VERSION_MIN 1

enum mt_event_kind {
	MT_EV_ALLOC = 1,
	MT_EV_FREE = 2,
	MT_EV_OOM = 3,
	MT_EV_ALLOC_ERROR = 4,
	MT_EV_FREE_ERROR = 5,
	MT_EV_MAP = 6, /* cuMemMap: address, bytes, handle = physical allocation */
	MT_EV_UNMAP = 7, /* cuMemUnmap: address, bytes (recorded before the call) */
	MT_EV_UNMAP_ERROR = 8, /* the unmap recorded just before failed */
	MT_EV_POOL_CREATE = 9, /* handle = the pool */
	MT_EV_POOL_DESTROY = 10, /* handle = the pool (recorded before the call) */
	MT_EV_POOL_TRIM = 11, /* handle = the pool, bytes = bytes to keep */
	MT_EV_DEVICE = 12, /* first use of a device: bytes = total, handle = free */
	MT_EV_MARK = 13, /* memtrace_mark or nvtxMark: op = the label */
	MT_EV_GRAPH_CREATE = 14, /* handle = the graph */
	MT_EV_GRAPH_CLONE = 15, /* handle = the clone, address = the original */
	MT_EV_GRAPH_DESTROY = 16, /* handle = the graph (recorded before the call) */
	MT_EV_EXEC_CREATE = 17, /* handle = the exec, address = its graph, bytes = flags */
	MT_EV_EXEC_DESTROY = 18, /* handle = the exec (recorded before the call) */
	MT_EV_GRAPH_LAUNCH = 19, /* handle = the exec, stream */
	MT_EV_GRAPH_UPLOAD = 20, /* handle = the exec, stream */
	MT_EV_CAPTURE_BEGIN = 21, /* stream, bytes = mode, handle = the graph (to-graph) */
	MT_EV_CAPTURE_END = 22, /* stream, handle = the graph made */
	MT_EV_GRAPH_MEM_TRIM = 23, /* device */
	MT_EV_GRAPH_FREE_NODE = 24, /* address; handle = the graph, or 0 when captured */
	MT_EV_CAPTURE_JOIN = 25, /* stream joins the capture of the stream in address */
	/* A framework's caching allocator, seen from inside it (PyTorch's
	 * allocator trace, interpose/frameworks/torch.c): the tensors inside the
	 * segments the CUDA calls gave it. address, bytes (the block's or
	 * the segment's), stream, device, handle = the private pool (a CUDA
	 * graph's), 0 for the default pool. Kinds 26 + torch's action. */
	MT_EV_TENSOR_ALLOC = 26, /* a block handed to a tensor */
	MT_EV_TENSOR_FREE_REQUESTED = 27, /* the tensor released it (allocated bytes drop) */
	MT_EV_TENSOR_FREE = 28, /* the block is free in the cache (its streams done) */
	MT_EV_CACHE_SEGMENT_ALLOC = 29, /* the cache took a segment from the device */
	MT_EV_CACHE_SEGMENT_FREE = 30, /* ... gave one back (empty_cache, an OOM retry) */
	MT_EV_CACHE_SEGMENT_MAP = 31, /* expandable segments: pages mapped */
	MT_EV_CACHE_SEGMENT_UNMAP = 32, /* ... unmapped */
	MT_EV_TENSOR_OOM = 33, /* the allocator gave up: bytes = the block asked for,
				* address = the device's free bytes as it read them;
				* its ooms row: the same free, the device's total,
				* the allocator's own cap (limit_bytes) */
	/* A framework's OOM reached the program on this thread, after it was
	 * recorded on another (TensorFlow's executor threads): the stack is
	 * where the exception was raised; it belongs to the OOM before it.
	 * bytes = the request the exception names, 0 when it names none. */
	MT_EV_OOM_RAISED = 34,
};
/* The stream of a MT_EV_CACHE_SEGMENT_ALLOC whose blocks are the sizes their
 * MT_EV_TENSOR_ALLOCs give, not torch's rounding of a request: TensorFlow's
 * BFC regions (interpose/frameworks/tensorflow-bfc.c), whose tensors are recorded
 * with their chunk's size. */
#define MT_CACHE_EXACT_BLOCKS UINT64_MAX
#define MT_EV_TENSOR_FIRST MT_EV_TENSOR_ALLOC
#define MT_EV_TENSOR_LAST MT_EV_TENSOR_OOM

enum mt_mem_kind {
	MT_MEM_DEVICE = 1,
	MT_MEM_MANAGED = 2,
	MT_MEM_HOST_PINNED = 3,
	MT_MEM_POOL = 4, /* from an explicit pool (cu/cudaMallocFromPoolAsync) */
	MT_MEM_VMM_PHYSICAL = 5, /* cuMemCreate: address = the allocation handle */
	MT_MEM_VMM_RESERVED = 6, /* cuMemAddressReserve: address space, not memory */
	MT_MEM_IMPORTED = 7, /* cuIpcOpenMemHandle: another process's memory */
	MT_MEM_ARRAY = 8, /* CUDA arrays: address = the array handle */
	MT_MEM_HOST_REGISTERED = 9, /* cuMemHostRegister: pinned, not allocated */
	MT_MEM_GRAPH = 10, /* graph-allocated: an alloc node, or a capture's alloc */
};

enum mt_source {
	MT_SOURCE_HOOK = 0, /* a hooked call (stored as NULL) */
	MT_SOURCE_CUPTI = 1, /* a CUPTI activity record or callback */
};

enum mt_frame_kind {
	MT_FRAME_NATIVE = 0,
	MT_FRAME_PYTHON = 1,
	/* Not a frame: the frames after it are the Python frames of the
	 * thread that launched this thread's work (ip: that thread's id), as
	 * for an op TensorFlow runs on its executor threads while the
	 * calling thread waits in TFE_Execute. */
	MT_FRAME_LAUNCH = 2,
};

/* Mark labels memtrace writes itself (ops.name of a mark): they start with
 * MT_MARK_PREFIX, which the reporter keeps apart from the program's own.
 * CUPTI watched from the "on" mark to the "off" mark (docs/cupti.md). */
#define MT_MARK_PREFIX "memtrace: "
#define MT_CUPTI_ON_MARK MT_MARK_PREFIX "CUPTI on"
#define MT_CUPTI_OFF_MARK MT_MARK_PREFIX "CUPTI off"

/* The tables every version has. */
#define MT_SCHEMA_COMMON_SQL                                                       \
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
	"CREATE TABLE ooms(seq INTEGER PRIMARY KEY, device_free INTEGER,"           \
	" device_total INTEGER, limit_bytes INTEGER);"                              \
	"CREATE TABLE devices(id INTEGER PRIMARY KEY, total_bytes INTEGER,"         \
	" free_bytes_at_first_use INTEGER, first_seq INTEGER);"                     \
	"CREATE TABLE ops(id INTEGER PRIMARY KEY, name TEXT NOT NULL, domain TEXT);" \
	"CREATE TABLE cupti(seq INTEGER PRIMARY KEY, correlation_id INTEGER,"        \
	" pc INTEGER);"

/* The columns of a version-1 event row, in its order (the view's too). */
#define MT_EVENT_COLUMNS                                                           \
	"seq,time_ns,kind,api,thread,device,stream,address,bytes,mem,stack,status," \
	"handle,op,source"

/* Version 2's events. A site is every column of an allocation or a free
 * but its seq, time, address and bytes; a free names the allocation it
 * releases, which gives its address and bytes. */
#define MT_SCHEMA_EVENTS_SQL                                                        \
	"CREATE TABLE sites(id INTEGER PRIMARY KEY, kind INTEGER NOT NULL,"          \
	" stack INTEGER, api INTEGER NOT NULL, thread INTEGER, device INTEGER,"     \
	" mem INTEGER, stream INTEGER, op INTEGER, status INTEGER, handle INTEGER,"  \
	" source INTEGER);"                                                          \
	"CREATE TABLE allocs(seq INTEGER PRIMARY KEY, time_ns INTEGER NOT NULL,"     \
	" site INTEGER NOT NULL, address INTEGER NOT NULL, bytes INTEGER NOT NULL);" \
	"CREATE TABLE frees(seq INTEGER PRIMARY KEY, time_ns INTEGER NOT NULL,"      \
	" site INTEGER NOT NULL, alloc INTEGER NOT NULL);"                           \
	"CREATE TABLE other_events(seq INTEGER PRIMARY KEY, time_ns INTEGER NOT NULL," \
	" kind INTEGER NOT NULL, api INTEGER NOT NULL, thread INTEGER,"              \
	" device INTEGER, stream INTEGER, address INTEGER, bytes INTEGER,"           \
	" mem INTEGER, stack INTEGER, status INTEGER, handle INTEGER, op INTEGER,"   \
	" source INTEGER);"

/* Version 2's view: every event as version 1's row. */
#define MT_EVENTS_VIEW_V2_SQL                                                       \
	"CREATE VIEW events(" MT_EVENT_COLUMNS ") AS"                                \
	" SELECT a.seq,a.time_ns,s.kind,s.api,s.thread,s.device,s.stream,"           \
	"a.address,a.bytes,s.mem,s.stack,s.status,s.handle,s.op,s.source"            \
	" FROM allocs a LEFT JOIN sites s ON s.id=a.site"                            \
	" UNION ALL"                                                                 \
	" SELECT f.seq,f.time_ns,s.kind,s.api,s.thread,s.device,s.stream,"           \
	"a.address,a.bytes,s.mem,s.stack,s.status,s.handle,s.op,s.source"            \
	" FROM frees f LEFT JOIN sites s ON s.id=f.site"                             \
	" LEFT JOIN allocs a ON a.seq=f.alloc"                                       \
	" UNION ALL"                                                                 \
	" SELECT " MT_EVENT_COLUMNS " FROM other_events"                             \
	" ORDER BY 1;"

/* Version 3's: the ring's allocations and frees too. */
#define MT_EVENTS_VIEW_SQL                                                          \
	"CREATE VIEW events(" MT_EVENT_COLUMNS ") AS"                                \
	" SELECT a.seq,a.time_ns,s.kind,s.api,s.thread,s.device,s.stream,"           \
	"a.address,a.bytes,s.mem,s.stack,s.status,s.handle,s.op,s.source"            \
	" FROM allocs a LEFT JOIN sites s ON s.id=a.site"                            \
	" UNION ALL"                                                                 \
	" SELECT f.seq,f.time_ns,s.kind,s.api,s.thread,s.device,s.stream,"           \
	"a.address,a.bytes,s.mem,s.stack,s.status,s.handle,s.op,s.source"            \
	" FROM frees f LEFT JOIN sites s ON s.id=f.site"                             \
	" LEFT JOIN allocs a ON a.seq=f.alloc"                                       \
	" UNION ALL"                                                                 \
	" SELECT " MT_EVENT_COLUMNS " FROM other_events"                             \
	" UNION ALL"                                                                 \
	" SELECT a.seq,a.time_ns,s.kind,s.api,s.thread,s.device,s.stream,"           \
	"a.address,a.bytes,s.mem,s.stack,s.status,s.handle,s.op,s.source"            \
	" FROM ring_allocs a LEFT JOIN sites s ON s.id=a.site"                       \
	" UNION ALL"                                                                 \
	" SELECT f.seq,f.time_ns,s.kind,s.api,s.thread,s.device,s.stream,"           \
	"f.address,f.bytes,s.mem,s.stack,s.status,s.handle,s.op,s.source"            \
	" FROM ring_frees f LEFT JOIN sites s ON s.id=f.site"                        \
	" ORDER BY 1;"

/* Version 3: what the writer keeps beside the events, in both modes: the
 * live set by allocation site (sites.id) at the device peak, at each OOM
 * (ooms.seq) and at each mark (its event's seq), as the writer counts it
 * (hooked allocations of the device-side kinds but graph memory at the
 * peak: device, managed, pool, vmm_physical, array; every kind at OOMs and
 * marks); every allocs and frees row counted by site and every
 * other_events row by kind, so that a flight trace's reader knows what
 * left the ring. Flight mode: ring holds the recent allocations and
 * frees, MT_RING_ALLOC_FIELDS or MT_RING_FREE_FIELDS integers an event in
 * one JSON array per commit; allocs holds the allocations still live that
 * left it; kept lists the other_events rows kept below the ring's start
 * (marks, mappings still mapped, each exec's first launch); timeline and
 * live_at_time are the whole run's device bytes live, in
 * MT_TIMELINE_BUCKETS buckets of meta timeline_width_ns, and its live set
 * at MT_TIMELINE_SNAPSHOTS moments evenly spread (the reporter's own
 * timeline, report/model/model-timeline.h, is made the same way, with these
 * two numbers). */
#define MT_SCHEMA_LIVE_SQL                                                          \
	"CREATE TABLE live_at_peak(site INTEGER PRIMARY KEY, bytes INTEGER NOT NULL,"  \
	" count INTEGER NOT NULL);"                                                   \
	"CREATE TABLE live_at_oom(oom INTEGER NOT NULL, site INTEGER NOT NULL,"       \
	" bytes INTEGER NOT NULL, count INTEGER NOT NULL, PRIMARY KEY(oom, site))"    \
	" WITHOUT ROWID;"                                                             \
	"CREATE TABLE live_at_mark(mark INTEGER NOT NULL, site INTEGER NOT NULL,"     \
	" bytes INTEGER NOT NULL, count INTEGER NOT NULL, PRIMARY KEY(mark, site))"   \
	" WITHOUT ROWID;"                                                             \
	"CREATE TABLE site_totals(site INTEGER PRIMARY KEY, allocs INTEGER NOT NULL,"  \
	" alloc_bytes INTEGER NOT NULL, frees INTEGER NOT NULL,"                       \
	" free_bytes INTEGER NOT NULL);"                                              \
	"CREATE TABLE kind_totals(kind INTEGER PRIMARY KEY, count INTEGER NOT NULL);"  \
	"CREATE TABLE ring(first_seq INTEGER PRIMARY KEY, last_seq INTEGER NOT NULL,"  \
	" events TEXT NOT NULL);"                                                     \
	"CREATE TABLE kept(seq INTEGER PRIMARY KEY);"                                 \
	"CREATE TABLE timeline(bucket INTEGER PRIMARY KEY, min INTEGER NOT NULL,"      \
	" max INTEGER NOT NULL, last INTEGER NOT NULL, t_max INTEGER NOT NULL,"        \
	" t_last INTEGER NOT NULL, drops INTEGER NOT NULL);"                          \
	"CREATE TABLE live_at_time(time_ns INTEGER NOT NULL, site INTEGER NOT NULL,"   \
	" bytes INTEGER NOT NULL, count INTEGER NOT NULL, PRIMARY KEY(time_ns, site))" \
	" WITHOUT ROWID;"                                                             \
	"CREATE VIEW ring_allocs(seq,time_ns,site,address,bytes) AS"                  \
	" SELECT json_extract(e.value,'$[0]'),json_extract(e.value,'$[1]'),"          \
	"json_extract(e.value,'$[2]'),json_extract(e.value,'$[3]'),"                  \
	"json_extract(e.value,'$[4]') FROM ring r, json_each(r.events) e"             \
	" WHERE json_array_length(e.value) = 5;"                                      \
	"CREATE VIEW ring_frees(seq,time_ns,site,alloc,address,bytes) AS"             \
	" SELECT json_extract(e.value,'$[0]'),json_extract(e.value,'$[1]'),"          \
	"json_extract(e.value,'$[2]'),json_extract(e.value,'$[3]'),"                  \
	"json_extract(e.value,'$[4]'),json_extract(e.value,'$[5]')"                   \
	" FROM ring r, json_each(r.events) e WHERE json_array_length(e.value) = 6;"

#define MT_TIMELINE_BUCKETS 2048
#define MT_TIMELINE_SNAPSHOTS 64

/* A ring event: an allocation [seq, time_ns, site, address, bytes], a free
 * [seq, time_ns, site, alloc, address, bytes] (alloc: the seq it frees). */
#define MT_RING_ALLOC_FIELDS 5
#define MT_RING_FREE_FIELDS 6

/* The event kinds flight mode never takes out of other_events: the OOMs,
 * the devices, pool and graph lifetimes, captures and graph memory
 * nodes, where an OOM was raised, a framework allocator's OOMs. */
#define MT_FLIGHT_KEPT_KINDS "3,9,10,12,14,15,16,17,18,21,22,24,25,33,34"

/* How many live sets at OOMs and marks both halves keep:
 * TRACE_LIVE_OOMS_KEPT, TRACE_LIVE_MARKS_KEPT (trace-live-set.h). */

#define MT_SCHEMA_SQL \
	MT_SCHEMA_COMMON_SQL MT_SCHEMA_EVENTS_SQL MT_SCHEMA_LIVE_SQL MT_EVENTS_VIEW_SQL
