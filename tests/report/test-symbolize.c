/* Symbolization against this very test binary (built with -g, without
 * -rdynamic, so dladdr could not name the static functions below): find
 * the module, bias and build id of a return address the way the capture
 * side does, then check the function name and file:line come back. */
#include <check.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "suites.h"
#include "symbolize.h"
#include "trace-schema.h"
#include "trace.h"

struct where {
	uintptr_t addr;
	char path[4096];
	uintptr_t bias;
	char build_id[128];
};

static __attribute__((noinline)) uintptr_t return_address(void)
{
	return (uintptr_t)__builtin_return_address(0);
}

/* The call whose return address we look up; *line is its line. */
static __attribute__((noinline)) uintptr_t static_caller(int *line)
{
	*line = __LINE__; uintptr_t ra = return_address();
	return ra;
}

static void read_build_id(struct dl_phdr_info *info, const ElfW(Phdr) *ph, struct where *w)
{
	const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
	const char *end = p + ph->p_memsz;

	while (p + sizeof(ElfW(Nhdr)) <= end) {
		const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
		const unsigned char *desc = (const unsigned char *)(p + sizeof(*n) + ((n->n_namesz + 3) & ~3u));

		if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
		    memcmp(p + sizeof(*n), "GNU", 4) == 0 && n->n_descsz * 2 < sizeof(w->build_id)) {
			for (unsigned i = 0; i < n->n_descsz; i++)
				sprintf(w->build_id + 2 * i, "%02x", desc[i]);
			return;
		}
		p += sizeof(*n) + ((n->n_namesz + 3) & ~3u) + ((n->n_descsz + 3) & ~3u);
	}
}

static int find_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct where *w = data;
	bool found = false;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && w->addr >= start && w->addr < start + ph->p_memsz)
			found = true;
	}
	if (!found)
		return 0;
	w->bias = info->dlpi_addr;
	if (info->dlpi_name && *info->dlpi_name) {
		snprintf(w->path, sizeof(w->path), "%s", info->dlpi_name);
	} else {
		ssize_t n = readlink("/proc/self/exe", w->path, sizeof(w->path) - 1);

		w->path[n > 0 ? n : 0] = '\0';
	}
	for (int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type == PT_NOTE && !*w->build_id)
			read_build_id(info, &info->dlpi_phdr[i], w);
	}
	return 1;
}

static void locate(uintptr_t addr, struct where *w)
{
	memset(w, 0, sizeof(*w));
	w->addr = addr;
	ck_assert_int_eq(dl_iterate_phdr(find_object, w), 1);
	ck_assert_str_ne(w->path, "");
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

START_TEST(test_static_function)
{
	struct symbolizer *s = symbolizer_new();
	struct sym_info info;
	struct where w;
	int line;
	uintptr_t ra = static_caller(&line);

	locate(ra, &w);
	ck_assert_str_ne(w.build_id, "");
	ck_assert(symbolize_addr(s, w.path, w.build_id, ra - w.bias - 1, &info));
	ck_assert_ptr_nonnull(info.function);
	ck_assert_str_eq(info.function, "static_caller");
	ck_assert_ptr_nonnull(info.file);
	ck_assert_msg(ends_with(info.file, "test-symbolize.c"), "file %s", info.file);
	ck_assert_int_eq(info.line, line);
	/* no build id to compare: accepted */
	ck_assert(symbolize_addr(s, w.path, NULL, ra - w.bias - 1, &info));
	ck_assert_str_eq(info.function, "static_caller");
	symbolizer_free(s);
}
END_TEST

START_TEST(test_mismatch_and_missing)
{
	struct symbolizer *s = symbolizer_new();
	struct sym_info info;
	struct where w;
	int line;
	uintptr_t ra = static_caller(&line);

	locate(ra, &w);
	ck_assert(!symbolize_addr(s, w.path, "00112233445566778899aabbccddeeff00112233",
				  ra - w.bias - 1, &info));
	ck_assert_ptr_null(info.function);
	ck_assert(!symbolize_addr(s, "/nonexistent/libfoo.so", NULL, 0x1000, &info));
	ck_assert(!symbolize_addr(s, "relative/path.so", NULL, 0x1000, &info));
	symbolizer_free(s);
}
END_TEST

/* symbolize_trace completes frames of a hand-made trace in place. */
START_TEST(test_symbolize_trace)
{
	struct symbolizer *s = symbolizer_new();
	struct where w;
	int line;
	uintptr_t ra = static_caller(&line);
	struct trace_module mods[2];
	struct trace_frame frames[3];
	struct trace t = { 0 };

	locate(ra, &w);
	mods[0] = (struct trace_module){ .id = 1, .path = w.path, .base = (int64_t)w.bias,
					 .build_id = w.build_id };
	mods[1] = (struct trace_module){ .id = 2, .path = "/nonexistent/lib.so" };
	frames[0] = (struct trace_frame){ .kind = MT_FRAME_NATIVE, .module = 0,
					  .offset = (int64_t)(ra - w.bias), .has_offset = true };
	frames[1] = (struct trace_frame){ .kind = MT_FRAME_NATIVE, .module = 1, .offset = 0x1234,
					  .has_offset = true, .function = strdup("kept") };
	frames[2] = (struct trace_frame){ .kind = MT_FRAME_PYTHON, .module = TRACE_NONE,
					  .function = strdup("train"), .file = strdup("train.py"),
					  .line = 7 };
	t.modules = mods;
	t.n_modules = 2;
	t.frames = frames;
	t.n_frames = 3;
	symbolize_trace(s, &t);
	ck_assert_str_eq(frames[0].function, "static_caller");
	ck_assert(ends_with(frames[0].file, "test-symbolize.c"));
	ck_assert_int_eq(frames[0].line, line);
	ck_assert_str_eq(frames[1].function, "kept");
	ck_assert_ptr_null(frames[1].file);
	ck_assert_str_eq(frames[2].function, "train");
	ck_assert_int_eq(frames[2].line, 7);
	for (int i = 0; i < 3; i++) {
		free(frames[i].function);
		free(frames[i].file);
	}
	symbolizer_free(s);
}
END_TEST

Suite *symbolize_suite(void)
{
	Suite *s = suite_create("symbolize");
	TCase *tc = tcase_create("symbolize");

	tcase_add_test(tc, test_static_function);
	tcase_add_test(tc, test_mismatch_and_missing);
	tcase_add_test(tc, test_symbolize_trace);
	suite_add_tcase(s, tc);
	return s;
}
