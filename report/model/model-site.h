/* Sites: which frame of a stack is the user's own code, and what the
 * reader tells the model about each event's site, op and mark
 * (docs/report-json.md, "Sites"). The rules are policy, not trace
 * format: they live here, and the reader is handed them
 * (model_site_rules, passed to trace_open). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "trace-event.h"
#include "trace.h"

/* enum mark_kind of a mark with this label. */
int model_mark_kind(const char *label);

/* Find the series of ranges named per build: names that differ only in a
 * decimal number ("build 1", "build 2"...), in one domain, with at least
 * two numbers. The longest such series wins; its ops get has_build and
 * their number. */
void model_op_builds(struct trace_op *ops, size_t n);

/* Find the user's frames of every stack (t->stack_sites); frames that
 * read the same (function, file, line, module) are made one. Call once
 * the frames are symbolized. */
void model_site_prepare(struct trace *t);

/* The site of ev as t->opts.group_by says: the user's Python frame, the
 * op, the user's native frame or the stack (docs/report-json.md). */
struct site_ref model_site_resolve(const struct trace *t, const struct trace_event *ev);

/* model_mark_kind, model_op_builds, model_site_prepare and
 * model_site_resolve as the reader's rules: what main.c passes to trace_open. */
extern const struct trace_site_rules model_site_rules;
