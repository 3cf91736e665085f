/* Writer-side symbol work: which loaded object holds an address, its load
 * bias, its build id, and the dynamic symbol dladdr knows (the static one
 * of the file's .symtab for the out-of-memory summary). Never called on
 * an application thread. The reporter adds file:line and static
 * symbols from debug info later (report/read/symbolize.c). */
#include "core.h"
#include "writer.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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
	mt_dl_iterate_phdr(find_build_id, &q);
}

/* The function symbol of the ELF file at path that holds vaddr (an
 * address less the module's load bias), from its .symtab, which dladdr
 * does not read: the names of a program's own static and unexported
 * functions, for the out-of-memory summary. Reads the file; false when it
 * is gone, stripped or holds no such symbol. */
bool mt_symbol_static(const char *path, uintptr_t vaddr, char *out, size_t outsz)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	bool found = false;
	if (fd < 0)
		return false;
	if (fstat(fd, &st) || (size_t)st.st_size < sizeof(ElfW(Ehdr))) {
		close(fd);
		return false;
	}
	size_t size = (size_t)st.st_size;
	const unsigned char *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return false;
	const ElfW(Ehdr) *eh = (const void *)p;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(ElfW(Shdr)) || eh->e_shoff > size ||
	    (size - eh->e_shoff) / sizeof(ElfW(Shdr)) < eh->e_shnum)
		goto out;
	const ElfW(Shdr) *sh = (const void *)(p + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum && !found; i++) {
		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum ||
		    sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset)
			continue;
		const ElfW(Shdr) *str = &sh[sh[i].sh_link];
		if (str->sh_offset > size || str->sh_size > size - str->sh_offset)
			continue;
		const ElfW(Sym) *sym = (const void *)(p + sh[i].sh_offset);
		const char *names = (const char *)(p + str->sh_offset);
		size_t n = sh[i].sh_size / sizeof(*sym);
		for (size_t k = 0; k < n; k++) {
			if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC || !sym[k].st_value ||
			    vaddr < sym[k].st_value || vaddr - sym[k].st_value >= sym[k].st_size ||
			    sym[k].st_name >= str->sh_size)
				continue;
			const char *name = names + sym[k].st_name;
			size_t len = strnlen(name, str->sh_size - sym[k].st_name);
			if (len == str->sh_size - sym[k].st_name)
				continue; /* not terminated inside the table */
			snprintf(out, outsz, "%s", name);
			found = true;
			break;
		}
	}
out:
	munmap((void *)p, size);
	return found;
}
