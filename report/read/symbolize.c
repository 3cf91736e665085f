/* See symbolize.h. libdwfl is used "offline": no process, each module
 * reported at its own ELF addresses (base 0, p_vaddr added), so a frame's
 * offset from the trace is directly an address in that module. */
#include "symbolize.h"

#include <ctype.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "config.h"
#include "trace-schema.h"
#include "trace.h"
#include "util-demangle.h"
#include "util-mem.h"
#include "util-str.h"

#if HAVE_CXA_DEMANGLE
/* The C++ ABI's demangler, in libstdc++ (cxxabi.h is C++ only). */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);
#endif

struct sym_module {
	char *path;
	char *build_id;
	Dwfl *dwfl;
	Dwfl_Module *mod; /* NULL when the file could not be used */
};

struct symbolizer {
	struct sym_module *mods;
	size_t n_mods, cap_mods;
};

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

struct symbolizer *symbolizer_new(void)
{
#if HAVE_CXA_DEMANGLE
	trace_demangle_use(__cxa_demangle); /* the one we link */
#endif
	return xcalloc(1, sizeof(struct symbolizer));
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_mods; i++) {
		if (s->mods[i].dwfl)
			dwfl_end(s->mods[i].dwfl);
		free(s->mods[i].path);
		free(s->mods[i].build_id);
	}
	free(s->mods);
	free(s);
}

static bool build_id_matches(Dwfl_Module *mod, const char *want)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(mod, &bits, &vaddr);
	size_t n = strlen(want);

	if (len <= 0 || n != (size_t)len * 2)
		return false;
	for (int i = 0; i < len; i++) {
		char hex[3];

		snprintf(hex, sizeof(hex), "%02x", bits[i]);
		if (tolower((unsigned char)want[2 * i]) != hex[0] ||
		    tolower((unsigned char)want[2 * i + 1]) != hex[1])
			return false;
	}
	return true;
}

static void open_module(struct sym_module *m)
{
	struct stat st;

	/* the path comes from the trace: a FIFO or device there must not hang
	 * or feed the reporter */
	if (stat(m->path, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	m->dwfl = dwfl_begin(&offline_callbacks);
	if (!m->dwfl)
		return;
	dwfl_report_begin(m->dwfl);
	m->mod = dwfl_report_elf(m->dwfl, m->path, m->path, -1, 0, true);
	dwfl_report_end(m->dwfl, NULL, NULL);
	/* a different build of the same path would give wrong names: worse
	 * than none */
	if (m->mod && m->build_id && *m->build_id && !build_id_matches(m->mod, m->build_id))
		m->mod = NULL;
}

/* Index of the cached module for (path, build_id), opened on first use.
 * An index, not a pointer: mods moves when it grows. */
static size_t get_module(struct symbolizer *s, const char *path, const char *build_id)
{
	struct sym_module *m;

	for (size_t i = 0; i < s->n_mods; i++) {
		m = &s->mods[i];
		if (strcmp(m->path, path) == 0 &&
		    strcmp(m->build_id ? m->build_id : "", build_id ? build_id : "") == 0)
			return i;
	}
	grow_array(&s->mods, &s->cap_mods, s->n_mods + 1, sizeof(*s->mods));
	m = &s->mods[s->n_mods];
	*m = (struct sym_module){
		.path = xstrdup(path),
		.build_id = build_id ? xstrdup(build_id) : NULL,
	};
	/* a relative path would be looked up in the reporter's directory */
	if (*path == '/')
		open_module(m);
	return s->n_mods++;
}

/* Where an inlined scope was called from: its DW_AT_call_file and
 * DW_AT_call_line, in the file table of its compilation unit. */
static bool call_site(Dwarf_Die *cu, Dwarf_Die *scope, const char **file, int *line)
{
	Dwarf_Attribute attr;
	Dwarf_Word idx, lineno;
	Dwarf_Files *files;
	size_t n;
	const char *src;

	if (!dwarf_attr(scope, DW_AT_call_file, &attr) || dwarf_formudata(&attr, &idx) != 0 ||
	    !dwarf_attr(scope, DW_AT_call_line, &attr) || dwarf_formudata(&attr, &lineno) != 0 ||
	    lineno == 0 || lineno > INT32_MAX || dwarf_getsrcfiles(cu, &files, &n) != 0 ||
	    idx >= n)
		return false;
	src = dwarf_filesrc(files, idx, NULL, NULL);
	if (!src)
		return false;
	*file = src;
	*line = (int)lineno;
	return true;
}

/* The name of the function an inlined scope's call site is in: the next
 * inlined scope out, by its linkage name; the symbol table's (function,
 * which knows clones) when that is the function itself. */
static const char *caller_name(Dwarf_Die *scopes, int n, int from, const char *function)
{
	for (int i = from; i < n; i++) {
		Dwarf_Attribute attr;
		const char *name;

		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
			return function;
		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		name = dwarf_attr_integrate(&scopes[i], DW_AT_linkage_name, &attr)
			       ? dwarf_formstring(&attr)
			       : NULL;
		return name ? name : dwarf_diename(&scopes[i]);
	}
	return function;
}

/* Code inlined from the CUDA toolkit's headers (cudaMalloc<T> and the
 * other templates of cuda_runtime.h, compiled into the program) is CUDA's:
 * the frame is put at the innermost call site outside those headers, in
 * the function that call is in. */
static void outside_cuda_headers(Dwfl_Module *mod, uint64_t addr, struct sym_info *out)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu, *scopes = NULL;
	int n;

	if (!out->file || !path_is_cuda_header(out->file))
		return;
	cu = dwfl_module_addrdie(mod, addr, &bias);
	if (!cu)
		return;
	n = dwarf_getscopes(cu, addr - bias, &scopes);
	for (int i = 0; i < n && path_is_cuda_header(out->file); i++) {
		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		if (!call_site(cu, &scopes[i], &out->file, &out->line))
			break;
		out->function = caller_name(scopes, n, i + 1, out->function);
	}
	free(scopes);
}

static void lookup(Dwfl_Module *mod, uint64_t addr, struct sym_info *out)
{
	GElf_Off off;
	GElf_Sym sym;
	Dwfl_Line *line;

	*out = (struct sym_info){ 0 };
	out->function = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
	line = dwfl_module_getsrc(mod, addr);
	if (line) {
		int lineno = 0;
		const char *src = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);

		if (src && lineno > 0) {
			out->file = src;
			out->line = lineno;
		}
	}
	outside_cuda_headers(mod, addr, out);
}

bool symbolize_addr(struct symbolizer *s, const char *path, const char *build_id,
		    uint64_t addr, struct sym_info *out)
{
	size_t i = get_module(s, path, build_id); /* before reading s->mods: it moves */

	*out = (struct sym_info){ 0 };
	if (!s->mods[i].mod)
		return false;
	lookup(s->mods[i].mod, addr, out);
	return true;
}

static void replace(char **dst, const char *src)
{
	free(*dst);
	*dst = xstrdup(src);
}

static void symbolize_frame(struct symbolizer *s, struct trace *t,
			    size_t *by_index, struct trace_frame *f)
{
	const struct trace_module *tm = trace_frame_module(t, f);
	struct sym_module *m;
	struct sym_info info;

	/* offset 0 cannot be a return address; and offset - 1 must not wrap */
	if (f->kind != MT_FRAME_NATIVE || !tm || !f->has_offset || f->offset <= 0)
		return;
	/* by_index[module] is 1 + the cached module's index, 0 before first use */
	if (!by_index[f->module])
		by_index[f->module] = 1 + get_module(s, tm->path, tm->build_id);
	m = &s->mods[by_index[f->module] - 1];
	if (!m->mod)
		return;
	lookup(m->mod, (uint64_t)f->offset - 1, &info);
	if (info.function)
		replace(&f->function, info.function);
	if (info.file) {
		replace(&f->file, info.file);
		f->line = info.line;
	}
}

/* A C++ name is shown demangled (Model<float>::weights(unsigned long));
 * the symbol stays in f->symbol. Names past 4 KiB are left as they are:
 * the demangler recurses, and a trace is untrusted input. */
static void demangle_frame(struct trace_frame *f)
{
	char *name;

	if (f->kind != MT_FRAME_NATIVE || !(name = trace_demangle(f->function)))
		return;
	free(f->symbol);
	f->symbol = f->function;
	f->function = name;
}

void symbolize_trace(struct symbolizer *s, struct trace *t)
{
	_autofree_ size_t *by_index = xcalloc(t->n_modules, sizeof(*by_index));

	for (size_t i = 0; i < t->n_frames; i++) {
		symbolize_frame(s, t, by_index, &t->frames[i]);
		demangle_frame(&t->frames[i]);
	}
}
