/* Writer-side symbol work: which loaded object holds an address, its load
 * bias, its build id, and the dynamic symbol dladdr knows. Never called
 * on an application thread. The reporter adds file:line and static
 * symbols from debug info later (report/symbolize.c). */
#include "internal.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char exe_path[MT_PATH_MAX];

static const char *main_exe_path(void)
{
	if (!exe_path[0]) {
		ssize_t n = readlink("/proc/self/exe", exe_path, sizeof(exe_path) - 1);
		exe_path[n > 0 ? n : 0] = '\0';
	}
	return exe_path;
}

bool mt_symbol_lookup(uintptr_t ip, struct mt_symbol *sym)
{
	Dl_info info;
	struct link_map *lm = NULL;
	/* ip is a return address: ip - 1 lies in the call instruction. */
	if (!dladdr1((void *)(ip - 1), &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm) {
		sym->module_path = "";
		sym->module_base = 0;
		sym->function = NULL;
		return false;
	}
	sym->module_base = lm->l_addr;
	sym->module_path = (lm->l_name && lm->l_name[0]) ? lm->l_name : main_exe_path();
	sym->function = info.dli_sname;
	return true;
}

struct build_id_query {
	uintptr_t base;
	const char *path;
	char *out;
	size_t outsz;
};

static void hex(const unsigned char *p, size_t n, char *out, size_t outsz)
{
	size_t pos = 0;
	for (size_t i = 0; i < n && pos + 3 <= outsz; i++)
		pos += (size_t)snprintf(out + pos, outsz - pos, "%02x", p[i]);
}

static bool note_build_id(const char *note, size_t size, char *out, size_t outsz)
{
	size_t off = 0;
	while (off + sizeof(ElfW(Nhdr)) <= size) {
		const ElfW(Nhdr) *nh = (const void *)(note + off);
		size_t name_off = off + sizeof(*nh);
		size_t desc_off = name_off + ((nh->n_namesz + 3) & ~3u);
		size_t next = desc_off + ((nh->n_descsz + 3) & ~3u);
		if (next > size)
			return false;
		if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
		    !memcmp(note + name_off, "GNU", 4)) {
			hex((const unsigned char *)note + desc_off, nh->n_descsz, out, outsz);
			return true;
		}
		off = next;
	}
	return false;
}

static int find_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
	struct build_id_query *q = data;
	if (info->dlpi_addr != q->base)
		return 0;
	const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name
								  : main_exe_path();
	if (strcmp(name, q->path))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_NOTE &&
		    note_build_id((const char *)(info->dlpi_addr + ph->p_vaddr), ph->p_memsz,
				  q->out, q->outsz))
			return 1;
	}
	return 1;
}

void mt_symbol_build_id(uintptr_t base, const char *path, char *out, size_t outsz)
{
	struct build_id_query q = { base, path, out, outsz };
	out[0] = '\0';
	dl_iterate_phdr(find_build_id, &q);
}
