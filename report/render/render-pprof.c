/* pprof's profile.proto (github.com/google/pprof, proto/profile.proto),
 * gzip-compressed, as `go tool pprof`, Pyroscope and Parca read it, and
 * as JAX writes its device memory profile: sample types allocations/count
 * and space/bytes (space the default), one sample per stack of the weight
 * (render-stacks.c) with labels "memory" (the kind, where one) and
 * "device" (where the stack's allocations were on one device), one
 * location per frame, functions by name and file (the symbol as
 * system_name), one mapping per module. Strings go through the string
 * table, index 0 the empty one. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "config.h"
#include "render.h"
#include "trace-schema.h"
#include "util-map.h"
#include "util-mem.h"
#include "util-proto.h"
#include "util-str.h"

/* A table of distinct tuples of up to three integers, by hash: strings
 * (by their text's hash and the text), functions (name, file, symbol). */
struct interned {
	struct map index; /* hash -> index + 1 of its first entry */
	uint32_t *next;	  /* entries of the same hash, chained: index + 1 */
	size_t n, cap;
};

struct pprof {
	const struct trace *t;
	const struct model *m;
	struct proto out, scratch;
	/* the string table */
	char **strings;
	size_t n_strings, cap_strings;
	struct interned string_index;
	/* functions: (name, file, symbol) string indices */
	int64_t (*functions)[3];
	size_t n_functions, cap_functions;
	struct interned function_index;
	struct map locations; /* frame index + 1 -> location id */
	struct map mappings;  /* module index + 1 -> mapping id */
	/* by mapping id - 1: its module, the highest address seen + 1 */
	uint32_t *mapping_module;
	uint64_t *mapping_limit;
	size_t cap_mapping_module, cap_mapping_limit;
	struct proto locs, funcs; /* encoded Location and Function messages */
	uint64_t *ids;
	size_t cap_ids;
};

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* The index of the entry equal to the one asked for (same(i) true), or
 * a new one: *added set, its index returned for the caller to fill. */
static size_t intern(struct interned *in, uint64_t hash, bool (*same)(void *, size_t),
		     void *ctx, bool *added)
{
	bool fresh;
	uint32_t *first = xmap_put(&in->index, hash, &fresh);

	if (!fresh) {
		for (uint32_t i = *first; i; i = in->next[i - 1]) {
			if (same(ctx, i - 1)) {
				*added = false;
				return i - 1;
			}
		}
	}
	grow_array(&in->next, &in->cap, in->n + 1, sizeof(*in->next));
	in->next[in->n] = fresh ? 0 : *first;
	*first = (uint32_t)(in->n + 1);
	*added = true;
	return in->n++;
}

struct string_query {
	struct pprof *p;
	const char *s;
};

static bool same_string(void *ctx, size_t i)
{
	const struct string_query *q = ctx;

	return strcmp(q->p->strings[i], q->s) == 0;
}

/* The string's index in the table; NULL and "" are index 0. */
static int64_t str(struct pprof *p, const char *s)
{
	struct string_query q = { p, s };
	bool added;
	size_t i;

	if (!s || !*s)
		return 0;
	i = intern(&p->string_index, hash_bytes(1469598103934665603ull, s, strlen(s)), same_string,
		   &q, &added);
	if (added) {
		grow_array(&p->strings, &p->cap_strings, p->n_strings + 1, sizeof(*p->strings));
		p->strings[p->n_strings++] = xstrdup(s);
	}
	return (int64_t)i + 1;
}

struct function_query {
	struct pprof *p;
	int64_t key[3];
};

static bool same_function(void *ctx, size_t i)
{
	const struct function_query *q = ctx;

	return memcmp(q->p->functions[i], q->key, sizeof(q->key)) == 0;
}

static uint64_t function_id(struct pprof *p, const char *name, const char *file,
			    const char *symbol)
{
	struct function_query q = { p, { str(p, name), str(p, file), str(p, symbol) } };
	bool added;
	size_t i = intern(&p->function_index, hash_bytes(1469598103934665603ull, q.key, sizeof(q.key)),
			  same_function, &q, &added);

	if (added) {
		grow_array(&p->functions, &p->cap_functions, p->n_functions + 1,
			   sizeof(*p->functions));
		memcpy(p->functions[p->n_functions++], q.key, sizeof(q.key));
		proto_reset(&p->scratch);
		proto_uint(&p->scratch, 1, i + 1);
		proto_int(&p->scratch, 2, q.key[0]);
		proto_int(&p->scratch, 3, q.key[2] ? q.key[2] : q.key[0]);
		proto_int(&p->scratch, 4, q.key[1]);
		proto_msg(&p->funcs, 5, &p->scratch);
	}
	return i + 1;
}

/* Mappings are numbered as their modules first come; pprof takes the
 * first for the program, so the executable is made first (prepare). */
static uint64_t module_mapping(struct pprof *p, uint32_t module)
{
	bool added;
	uint64_t *id = xmap_put(&p->mappings, (uint64_t)module + 1, &added);

	if (added) {
		*id = p->mappings.len;
		grow_array(&p->mapping_module, &p->cap_mapping_module, *id, sizeof(uint32_t));
		grow_array(&p->mapping_limit, &p->cap_mapping_limit, *id, sizeof(uint64_t));
		p->mapping_module[*id - 1] = module;
		p->mapping_limit[*id - 1] = 0;
	}
	return *id;
}

static uint64_t mapping_id(struct pprof *p, const struct trace_frame *f)
{
	uint64_t id;

	if (f->module == TRACE_NONE)
		return 0;
	id = module_mapping(p, f->module);
	if (f->ip >= 0 && (uint64_t)f->ip + 1 > p->mapping_limit[id - 1])
		p->mapping_limit[id - 1] = (uint64_t)f->ip + 1;
	return id;
}

static void prepare(struct pprof *p)
{
	const char *exe = trace_meta_get(p->t, "exe");

	for (size_t i = 0; exe && i < p->t->n_modules; i++) {
		if (p->t->modules[i].path && strcmp(p->t->modules[i].path, exe) == 0) {
			module_mapping(p, (uint32_t)i);
			return;
		}
	}
}

/* One location per frame of the trace: its mapping, its address, one
 * line (the function, the line). */
static uint64_t location_id(struct pprof *p, const struct trace_frame *f)
{
	bool added;
	uint64_t *id = xmap_put(&p->locations, (uint64_t)(f - p->t->frames) + 1, &added);
	const struct trace_module *mod = trace_frame_module(p->t, f);

	if (!added)
		return *id;
	*id = p->locations.len;
	{
		_autofree_ char *name = render_frame_name(p->t, f);
		uint64_t fn = function_id(p, name, f->file ? f->file : mod ? mod->path : NULL,
					  f->symbol);
		uint64_t mapping = f->kind == MT_FRAME_NATIVE ? mapping_id(p, f) : 0;
		struct proto line = { 0 };

		proto_uint(&line, 1, fn);
		if (f->line > 0)
			proto_int(&line, 2, f->line);
		proto_reset(&p->scratch);
		proto_uint(&p->scratch, 1, *id);
		if (mapping)
			proto_uint(&p->scratch, 2, mapping);
		if (f->kind == MT_FRAME_NATIVE && f->ip > 0)
			proto_uint(&p->scratch, 3, (uint64_t)f->ip);
		proto_msg(&p->scratch, 4, &line);
		proto_msg(&p->locs, 4, &p->scratch);
		proto_free(&line);
	}
	return *id;
}

/* A stack with no frame to show is one location of its own, named by its
 * label, keyed past every frame index. */
static uint64_t label_location(struct pprof *p, int64_t stack)
{
	bool added;
	uint64_t *id = xmap_put(&p->locations, (1ull << 63) | (uint64_t)stack, &added);

	if (added) {
		_autofree_ char *label = render_stack_label(p->t, stack, true);
		struct proto line = { 0 };

		*id = p->locations.len;
		proto_uint(&line, 1, function_id(p, label, NULL, NULL));
		proto_reset(&p->scratch);
		proto_uint(&p->scratch, 1, *id);
		proto_msg(&p->scratch, 4, &line);
		proto_msg(&p->locs, 4, &p->scratch);
		proto_free(&line);
	}
	return *id;
}

static void label(struct proto *sample, int64_t key, int64_t s, bool num, int64_t v)
{
	struct proto l = { 0 };

	proto_int(&l, 1, key);
	if (num)
		proto_int(&l, 3, v);
	else
		proto_int(&l, 2, s);
	proto_msg(sample, 3, &l);
	proto_free(&l);
}

static void add_sample(void *ctx, const struct model_group *g)
{
	struct pprof *p = ctx;
	const struct trace_stack *st = trace_find_stack(p->t, g->stack);
	uint64_t values[2] = { g->count, g->bytes };
	int device = model_stack_device(p->m, g->stack);
	struct proto sample = { 0 };
	size_t n = 0;

	grow_array(&p->ids, &p->cap_ids, (st ? st->depth : 0) + 1, sizeof(*p->ids));
	for (uint32_t i = 0; st && i < st->depth; i++) { /* the leaf first */
		const struct trace_frame *f = trace_stack_frame(p->t, st, i);

		if (f)
			p->ids[n++] = location_id(p, f);
	}
	if (n == 0)
		p->ids[n++] = label_location(p, g->stack);
	proto_packed(&sample, 1, p->ids, n);
	proto_packed(&sample, 2, values, 2);
	if (g->mem)
		label(&sample, str(p, "memory"), str(p, render_mem_name(g->mem)), false, 0);
	if (device >= 0)
		label(&sample, str(p, "device"), 0, true, device);
	proto_msg(&p->out, 2, &sample);
	proto_free(&sample);
}

static void value_type(struct pprof *p, unsigned field, const char *type, const char *unit)
{
	proto_reset(&p->scratch);
	proto_int(&p->scratch, 1, str(p, type));
	proto_int(&p->scratch, 2, str(p, unit));
	proto_msg(&p->out, field, &p->scratch);
}

static void mappings(struct pprof *p)
{
	for (size_t i = 0; i < p->mappings.len; i++) {
		const struct trace_module *mod = &p->t->modules[p->mapping_module[i]];
		uint64_t base = mod->base > 0 ? (uint64_t)mod->base : 0;
		uint64_t limit = p->mapping_limit[i];

		proto_reset(&p->scratch);
		proto_uint(&p->scratch, 1, i + 1);
		proto_uint(&p->scratch, 2, base);
		proto_uint(&p->scratch, 3, limit > base ? limit : base + 1);
		proto_int(&p->scratch, 5, str(p, mod->path));
		proto_int(&p->scratch, 6, str(p, mod->build_id));
		proto_uint(&p->scratch, 7, 1); /* has_functions */
		proto_uint(&p->scratch, 8, 1); /* has_filenames */
		proto_uint(&p->scratch, 9, 1); /* has_line_numbers */
		proto_msg(&p->out, 3, &p->scratch);
	}
}

/* gzip of the encoded profile, by zlib (windowBits 15 + 16: a gzip
 * header and trailer). */
static void write_gzip(FILE *f, const struct proto *b)
{
	z_stream z = { 0 };
	unsigned char buf[1 << 16];
	int rc;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY))
		return;
	z.next_in = b->data;
	z.avail_in = (uInt)b->len;
	do {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		rc = deflate(&z, Z_FINISH);
		fwrite(buf, 1, sizeof(buf) - z.avail_out, f);
	} while (rc == Z_OK);
	deflateEnd(&z);
}

static void profile_comment(struct pprof *p, enum render_weight w)
{
	_autofree_ char *c = xasprintf("memtrace %s: device memory %s", MEMTRACE_VERSION,
				       w == WEIGHT_OOM	   ? "live at the last out-of-memory failure"
				       : w == WEIGHT_LEAKED ? "still live at the end of the trace"
							    : "held at the peak, by site");

	proto_int(&p->out, 13, str(p, c));
}

void render_pprof(FILE *f, const struct trace *t, const struct model *m,
		  const struct render_opts *o)
{
	struct pprof p = { .t = t, .m = m };
	enum render_weight w = render_weight_resolve(m, o->weight);
	int64_t start = 0;

	map_init(&p.string_index.index, sizeof(uint32_t));
	map_init(&p.function_index.index, sizeof(uint32_t));
	map_init(&p.locations, sizeof(uint64_t));
	map_init(&p.mappings, sizeof(uint64_t));
	value_type(&p, 1, "allocations", "count");
	value_type(&p, 1, "space", "bytes");
	prepare(&p);
	render_weighted_stacks(m, w, add_sample, &p);
	mappings(&p);
	proto_append(&p.out, &p.locs); /* fields 4 and 5, built as they came */
	proto_append(&p.out, &p.funcs);
	if (render_meta_int(t, "start_realtime_ns", &start))
		proto_int(&p.out, 9, start);
	proto_int(&p.out, 10, render_duration_ns(t, m));
	profile_comment(&p, w);
	proto_int(&p.out, 14, str(&p, "space")); /* default_sample_type */
	proto_str(&p.out, 6, "");
	for (size_t i = 0; i < p.n_strings; i++) {
		_autofree_ char *clean = utf8_clean(p.strings[i]); /* protobuf strings */

		proto_str(&p.out, 6, clean);
		free(p.strings[i]);
	}
	write_gzip(f, &p.out);
	free(p.strings);
	free(p.string_index.next);
	free(p.function_index.next);
	free(p.functions);
	free(p.mapping_module);
	free(p.mapping_limit);
	free(p.ids);
	map_fini(&p.string_index.index);
	map_fini(&p.function_index.index);
	map_fini(&p.locations);
	map_fini(&p.mappings);
	proto_free(&p.out);
	proto_free(&p.scratch);
	proto_free(&p.locs);
	proto_free(&p.funcs);
}
