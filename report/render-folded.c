/* Folded stacks: "main;train;forward 123456" per line, the format of
 * flamegraph.pl (stackcollapse output) that speedscope also reads. A frame
 * must not contain ';' (the separator) or a line break, and the count is
 * after the last space: frames are cleaned of both, and of invalid UTF-8. */
#include <inttypes.h>
#include <string.h>

#include "render.h"
#include "util-mem.h"
#include "util-str.h"

/* The weight WEIGHT_DEFAULT stands for in this model. */
static enum render_weight weight_resolve(const struct model *m, enum render_weight w)
{
	if (w != WEIGHT_DEFAULT)
		return w;
	return render_headline_oom(m) ? WEIGHT_OOM : WEIGHT_PEAK;
}

static void put_frame(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);

	while (n > 0) {
		uint32_t cp;
		size_t len = utf8_decode(p, n, &cp);

		if (cp == 0xFFFD && len == 1)
			fputs("\xef\xbf\xbd", f);
		else if (cp < 0x20 || cp == 0x7F)
			fputc('?', f);
		else if (cp == ';')
			fputc(',', f);
		else
			fwrite(p, 1, len, f);
		p += len;
		n -= len;
	}
}

static void folded_line(FILE *f, const struct trace *t, int64_t stack, uint64_t bytes)
{
	const struct trace_stack *s = trace_find_stack(t, stack);

	if (bytes == 0)
		return;
	if (!s || s->depth == 0) {
		_autofree_ char *label = render_stack_label(t, stack, true);

		put_frame(f, label);
	}
	for (uint32_t i = s ? s->depth : 0; i-- > 0;) {
		_autofree_ char *label = render_frame_label(t, trace_stack_frame(t, s, i), true);

		put_frame(f, label);
		if (i)
			fputc(';', f);
	}
	fprintf(f, " %" PRIu64 "\n", bytes);
}

const char *render_folded_refuse(const struct model *m, const struct render_opts *o)
{
	const struct model_oom *oom = render_headline_oom(m);

	if (weight_resolve(m, o->weight) == WEIGHT_OOM && !(oom && oom->has_holders))
		return "has no out-of-memory failure to weigh stacks by; use --weight peak or "
		       "--weight leaked";
	return NULL;
}

void render_folded(FILE *f, const struct trace *t, const struct model *m,
		   const struct render_opts *o)
{
	const struct model_oom *oom = render_headline_oom(m);

	switch (weight_resolve(m, o->weight)) {
	case WEIGHT_OOM:
		if (!oom || !oom->has_holders)
			return;
		for (size_t i = 0; i < oom->n_holders; i++)
			folded_line(f, t, oom->holders[i].stack, oom->holders[i].bytes);
		return;
	case WEIGHT_LEAKED:
		for (size_t i = 0; i < m->n_leaks; i++) {
			if (model_mem_is_device(m->leaks[i].mem))
				folded_line(f, t, m->leaks[i].stack, m->leaks[i].bytes);
		}
		return;
	case WEIGHT_PEAK:
	case WEIGHT_DEFAULT:
		break;
	}
	for (size_t i = 0; i < m->n_sites; i++)
		folded_line(f, t, m->sites[i].stack, m->sites[i].at_peak);
}
