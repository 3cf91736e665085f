/* Folded stacks: "main;train;forward 123456" per line, the format of
 * flamegraph.pl (stackcollapse output) that speedscope also reads. A frame
 * must not contain ';' (the separator) or a line break, and the count is
 * after the last space: frames are cleaned of both, and of invalid UTF-8. */
#include <inttypes.h>
#include <string.h>

#include "render.h"
#include "util-mem.h"
#include "util-str.h"

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

struct folded {
	FILE *f;
	const struct trace *t;
};

static void folded_line(void *ctx, const struct model_group *g)
{
	const struct folded *fo = ctx;
	const struct trace_stack *s = trace_find_stack(fo->t, g->stack);

	if (!s || s->depth == 0) {
		_autofree_ char *label = render_stack_label(fo->t, g->stack, true);

		put_frame(fo->f, label);
	}
	for (uint32_t i = s ? s->depth : 0; i-- > 0;) {
		_autofree_ char *label = render_frame_label(fo->t, trace_stack_frame(fo->t, s, i),
							    true);

		put_frame(fo->f, label);
		if (i)
			fputc(';', fo->f);
	}
	fprintf(fo->f, " %" PRIu64 "\n", g->bytes);
}

void render_folded(FILE *f, const struct trace *t, const struct model *m,
		   const struct render_opts *o)
{
	struct folded fo = { f, t };

	render_weighted_stacks(m, o->weight, folded_line, &fo);
}
