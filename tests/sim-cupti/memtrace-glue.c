/* TEST ONLY, until interpose/preload.c calls the three mt_cupti_* entry
 * points itself: libmemtrace-cupti.so is libmemtrace.so linked again with
 * the writer's start, sync and stop wrapped (ld --wrap, meson.build), so
 * that CUPTI starts once the writer runs, is flushed before every
 * synchronous commit (an out-of-memory event, memtrace_flush) and stops
 * before the writer does. Once preload.c makes these calls, this file and
 * the library go, and the tests preload libmemtrace.so itself
 * (mt_cupti_start is idempotent, so both may run meanwhile). */
#include "cupti.h"

struct mt_writer *__real_mt_writer_start(const struct mt_writer_options *opt);
bool __real_mt_writer_sync(struct mt_writer *w, uint64_t upto, unsigned timeout_ms);
void __real_mt_writer_stop(struct mt_writer *w, bool normal_exit);

struct mt_writer *__wrap_mt_writer_start(const struct mt_writer_options *opt);
bool __wrap_mt_writer_sync(struct mt_writer *w, uint64_t upto, unsigned timeout_ms);
void __wrap_mt_writer_stop(struct mt_writer *w, bool normal_exit);

struct mt_writer *__wrap_mt_writer_start(const struct mt_writer_options *opt)
{
	struct mt_writer *w = __real_mt_writer_start(opt);
	if (w)
		mt_cupti_start(opt->stacks);
	return w;
}

bool __wrap_mt_writer_sync(struct mt_writer *w, uint64_t upto, unsigned timeout_ms)
{
	mt_cupti_flush();
	return __real_mt_writer_sync(w, upto, timeout_ms);
}

void __wrap_mt_writer_stop(struct mt_writer *w, bool normal_exit)
{
	mt_cupti_stop();
	__real_mt_writer_stop(w, normal_exit);
}
