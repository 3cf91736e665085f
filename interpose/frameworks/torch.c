/* PyTorch's caching allocator from outside: the tensors inside the
 * segments. The CUDA calls show only segments; torch's allocator hands
 * each tensor a block of one. c10's allocator trace tracker
 * (CUDACachingAllocator::attachAllocatorTraceTracker) is called with every
 * action of the allocator (block alloc, free requested and completed,
 * segment alloc/free/map/unmap, OOM), on the thread that asked, whether
 * or not _record_memory_history is on (record_trace returns early only
 * when there is neither history nor a tracker). docs/architecture.md,
 * "Tensors inside PyTorch's cache", says why this interface and not
 * another.
 *
 * The library is C and is built without torch: what it needs of c10 is
 * declared here and checked at run time.
 * - The allocator: the exported c10::cuda::CUDACachingAllocator::allocator
 *   (an atomic pointer). Its object must be the native caching allocator:
 *   its vtable pointer is that class's vtable (cudaMallocAsync's has no
 *   tracker, and its attach throws).
 * - NativeCachingAllocator::attachAllocatorTraceTracker and ::initialized
 *   are local symbols: found in libc10_cuda.so's .symtab, read from the
 *   file once. Their mangled names fix the TraceEntry type the tracker
 *   takes (c10::CachingDeviceAllocator::TraceEntry, or the older
 *   c10::cuda::CUDACachingAllocator::TraceEntry).
 * - The tracker is a std::function<void(const TraceEntry&)>: libstdc++'s
 *   layout (16 bytes of functor, the manager, the invoker), stable since
 *   GCC 4.x. Passed by value, it is a pointer to the caller's object.
 * - TraceEntry's first fields: action (int) at 0, device at 4, addr at 8,
 *   context (shared_ptr) at 16, stream at 32, size at 40, and from 2.3 on
 *   the mempool id at 48. The same in every torch from 2.1 to 2.15 (the
 *   versions checked); another version turns the view off, saying so.
 *
 * - Its cap at an OOM: NativeCachingAllocator::getMemoryFraction (local,
 *   in .symtab, 2.11 and 2.15 alike) reads the device allocator's
 *   allowed_memory_maximum over its device_total, 1.0 when no fraction is
 *   set: two loads, no lock, no CUDA call (read off its code in both
 *   versions). Times the device's total it is the cap torch refused the
 *   request by (set_per_process_memory_fraction), exactly. Without the
 *   symbol, the OOM carries no cap.
 *
 * The attach waits for the allocator's init (it attaches to each device's
 * allocator, none before init): it is tried after each allocation until
 * it is done, and while torch is absent every 1024th allocation (the
 * adapter's poll, frameworks.h). */
#include "frameworks.h"
#include "trace-schema.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Where the tracker stands; until on or off, the adapter is polled. */
enum { TORCH_LOOKING, TORCH_ON, TORCH_OFF };
static _Atomic int state = TORCH_LOOKING;
static bool with_pool; /* TraceEntry has mempool_ (torch 2.3 on) */
/* the allocator and its getMemoryFraction, for the cap at an OOM */
typedef double (*fraction_fn)(void *self, signed char device);
static void *allocator_self;
static fraction_fn get_fraction;

#define NATIVE "_ZN3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocator"
#define SYM_ALLOCATOR "_ZN3c104cuda20CUDACachingAllocator9allocatorE"
#define SYM_VTABLE "_ZTVN3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocatorE"
#define SYM_INITIALIZED NATIVE "11initializedEv"
#define SYM_FRACTION NATIVE "17getMemoryFractionEa"
#define SYM_ATTACH_NEW NATIVE "27attachAllocatorTraceTrackerESt8functionIFvRKNS_22CachingDeviceAllocator10TraceEntryEEE"
#define SYM_ATTACH_OLD NATIVE "27attachAllocatorTraceTrackerESt8functionIFvRKNS1_10TraceEntryEEE"

/* The torch versions whose TraceEntry layout is the one above. */
#define KNOWN_MIN 1 /* 2.1 */
#define KNOWN_MAX 15 /* 2.15 */

/* libstdc++'s std::function (bits/std_function.h). */
struct cxx_function {
	void *functor[2];
	bool (*manager)(void *dest, const void *src, int op);
	void (*invoker)(const void *functor, const void *entry);
};
_Static_assert(sizeof(struct cxx_function) == 32, "std::function is 32 bytes");

enum { GET_TYPE_INFO, GET_FUNCTOR_PTR, CLONE_FUNCTOR, DESTROY_FUNCTOR };

/* Our functor has no state: a clone copies nothing that needs owning. */
static bool tracker_manager(void *dest, const void *src, int op)
{
	switch (op) {
	case GET_TYPE_INFO: *(const void **)dest = NULL; break;
	case GET_FUNCTOR_PTR: *(const void **)dest = src; break;
	case CLONE_FUNCTOR: memcpy(dest, src, 2 * sizeof(void *)); break;
	default: break;
	}
	return false;
}

/* Torch's action -> the trace's kind; 0: not recorded (snapshot, annotate). */
static unsigned kind_of(int32_t action)
{
	if (action >= 0 && action <= 6)
		return MT_EV_TENSOR_ALLOC + (unsigned)action;
	return action == 8 ? MT_EV_TENSOR_OOM : 0;
}

/* The cap torch's allocator on device had at its OOM, in bytes: the
 * fraction getMemoryFraction gives (the cap over the device's total, a
 * plain read) times the total; 0 when there is none or it cannot be had.
 * The device's total into *total. */
static uint64_t cap_at_oom(int8_t device, uint64_t *total)
{
	uint64_t free_b = 0;

	*total = 0;
	if (!get_fraction || !allocator_self || device < 0)
		return 0;
	double fraction = get_fraction(allocator_self, device);
	if (!mt_framework_mem_info(MT_API_CUDACachingAllocator, &free_b, total))
		return 0;
	if (!(fraction > 0.0 && fraction < 1.0)) /* 1.0: no cap */
		return 0;
	return (uint64_t)(fraction * (double)*total + 0.5);
}

/* Called by torch with its device allocator's lock held: no GIL, no
 * torch call but getMemoryFraction's read, nothing that waits for another
 * thread of torch. */
static void tracker_invoke(const void *functor, const void *entry)
{
	(void)functor;
	const unsigned char *e = entry;
	int32_t action;
	int8_t device;
	uint64_t addr, size, stream, pool[2] = { 0, 0 };

	memcpy(&action, e, sizeof(action));
	memcpy(&device, e + 4, sizeof(device));
	memcpy(&addr, e + 8, sizeof(addr));
	memcpy(&stream, e + 32, sizeof(stream));
	memcpy(&size, e + 40, sizeof(size));
	if (with_pool)
		memcpy(pool, e + 48, sizeof(pool));
	unsigned kind = kind_of(action);
	if (!kind || atomic_load_explicit(&state, memory_order_relaxed) != TORCH_ON ||
	    !mt_enter())
		return;
	bool is_free = kind == MT_EV_TENSOR_FREE_REQUESTED || kind == MT_EV_TENSOR_FREE ||
		       kind == MT_EV_CACHE_SEGMENT_FREE || kind == MT_EV_CACHE_SEGMENT_UNMAP;
	/* inside the guard: the driver's calls under cudaMemGetInfo are ours */
	uint64_t total = 0, cap = kind == MT_EV_TENSOR_OOM ? cap_at_oom(device, &total) : 0;
	mt_record_tensor(&(struct mt_rec){ .api = MT_API_CUDACachingAllocator,
					   .kind = (uint8_t)kind,
					   .no_stack = is_free,
					   .address = addr,
					   .bytes = size,
					   .stream = stream,
					   .handle = pool[0] ? pool[0] : pool[1],
					   .limit = cap,
					   .device_total = total },
			 device);
	mt_leave();
}

/* ---- finding c10 ---- */

struct c10_lib {
	char path[MT_PATH_MAX];
	uintptr_t bias;
};

static int find_c10(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct c10_lib *lib = data;
	const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
	if (!base || strncmp(base + 1, "libc10_cuda.so", 14))
		return 0;
	snprintf(lib->path, sizeof(lib->path), "%s", info->dlpi_name);
	lib->bias = info->dlpi_addr;
	return 1;
}

struct c10_syms {
	uintptr_t allocator, vtable, initialized, attach, fraction;
	bool attach_new;
};

static void match_symbol(struct c10_syms *s, const char *name, uintptr_t value)
{
	if (!strcmp(name, SYM_ALLOCATOR))
		s->allocator = value;
	else if (!strcmp(name, SYM_VTABLE))
		s->vtable = value;
	else if (!strcmp(name, SYM_INITIALIZED))
		s->initialized = value;
	else if (!strcmp(name, SYM_FRACTION))
		s->fraction = value;
	else if (!strcmp(name, SYM_ATTACH_NEW))
		s->attach = value, s->attach_new = true;
	else if (!strcmp(name, SYM_ATTACH_OLD))
		s->attach = value;
}

/* The symbols of the file's .symtab (the local ones are only there). */
static bool read_symtab(const unsigned char *f, size_t len, struct c10_syms *s)
{
	const Elf64_Ehdr *eh = (const void *)f;
	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    eh->e_shoff > len || (len - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum)
		return false;
	const Elf64_Shdr *sh = (const void *)(f + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
			continue;
		const Elf64_Shdr *str = &sh[sh[i].sh_link];
		if (sh[i].sh_offset > len || sh[i].sh_size > len - sh[i].sh_offset ||
		    str->sh_offset > len || str->sh_size > len - str->sh_offset || !str->sh_size)
			return false;
		const Elf64_Sym *sym = (const void *)(f + sh[i].sh_offset);
		const char *names = (const char *)f + str->sh_offset;
		if (names[str->sh_size - 1] != '\0')
			return false;
		for (size_t k = 0; k < sh[i].sh_size / sizeof(*sym); k++)
			if (sym[k].st_name < str->sh_size && sym[k].st_value)
				match_symbol(s, names + sym[k].st_name, sym[k].st_value);
		return true;
	}
	return false;
}

static bool c10_symbols(const char *path, struct c10_syms *s)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	bool ok = false;
	if (fd < 0)
		return false;
	if (!fstat(fd, &st) && st.st_size > 0) {
		void *f = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (f != MAP_FAILED) {
			ok = read_symtab(f, (size_t)st.st_size, s);
			munmap(f, (size_t)st.st_size);
		}
	}
	close(fd);
	return ok;
}

/* torch's version from torch/version.py beside torch/lib/libc10_cuda.so:
 * the minor of 2.x, -1 when it is not 2.x or cannot be read. */
static int torch_minor(const char *c10_path, char *version, size_t vsz)
{
	char path[MT_PATH_MAX + 16], buf[4096];
	snprintf(path, sizeof(path), "%s", c10_path);
	for (int up = 0; up < 2; up++) {
		char *slash = strrchr(path, '/');
		if (!slash)
			return -1;
		*slash = '\0';
	}
	strcat(path, "/version.py");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	const char *v = strstr(buf, "__version__ = '");
	if (!v)
		return -1;
	v += 15;
	size_t k = strcspn(v, "'\n");
	snprintf(version, vsz, "%.*s", (int)(k < vsz ? k : vsz - 1), v);
	unsigned major, minor;
	if (sscanf(version, "%u.%u", &major, &minor) != 2 || major != 2)
		return -1;
	return (int)minor;
}

/* ---- attaching ---- */

static void turn_off(const char *why, const char *version)
{
	atomic_store(&state, TORCH_OFF);
	mt_log(MT_ENV, "PyTorch %s: %s; the tensor view is off (only the CUDA calls are traced)",
	       version[0] ? version : "(version unknown)", why);
}

typedef bool (*initialized_fn)(void *self);
typedef void (*attach_fn)(void *self, struct cxx_function *tracker);

/* ABSENT, WAITING (not initialized yet), or SETTLED (on or off). */
static enum mt_framework_poll try_attach(void)
{
	struct c10_lib lib = { "", 0 };
	struct c10_syms s = { 0 };
	char version[32] = "";

	if (!mt_dl_iterate_phdr(find_c10, &lib))
		return MT_FRAMEWORK_ABSENT;
	int minor = torch_minor(lib.path, version, sizeof(version));
	if (minor < KNOWN_MIN || minor > KNOWN_MAX) {
		turn_off("its allocator trace's layout is not one memtrace knows (2.1 to 2.15)",
			 version);
		return MT_FRAMEWORK_SETTLED;
	}
	if (!c10_symbols(lib.path, &s) || !s.allocator || !s.vtable || !s.attach ||
	    !s.initialized) {
		turn_off("libc10_cuda.so has no symbol table with its allocator's trace tracker",
			 version);
		return MT_FRAMEWORK_SETTLED;
	}
	with_pool = s.attach_new || minor >= 3;
	void *self = atomic_load((void *_Atomic *)(lib.bias + s.allocator));
	if (!self)
		return MT_FRAMEWORK_WAITING;
	/* the vtable's address point is past offset-to-top and typeinfo */
	if (*(uintptr_t *)self != lib.bias + s.vtable + 2 * sizeof(void *)) {
		turn_off("its allocator is not the native caching allocator (backend:cudaMallocAsync "
			 "or a pluggable one: each tensor is a CUDA allocation already)",
			 version);
		return MT_FRAMEWORK_SETTLED;
	}
	if (!((initialized_fn)(lib.bias + s.initialized))(self))
		return MT_FRAMEWORK_WAITING;
	/* on before the attach: the first action may come from another
	 * thread as soon as the tracker is in */
	allocator_self = self;
	get_fraction = s.fraction ? (fraction_fn)(lib.bias + s.fraction) : NULL;
	atomic_store(&state, TORCH_ON);
	struct cxx_function tracker = { { NULL, NULL }, tracker_manager, tracker_invoke };
	((attach_fn)(lib.bias + s.attach))(self, &tracker);
	tracker.manager(tracker.functor, tracker.functor, DESTROY_FUNCTOR);
	return MT_FRAMEWORK_SETTLED;
}

static enum mt_framework_poll torch_poll(void)
{
	if (atomic_load(&state) == TORCH_OFF)
		return MT_FRAMEWORK_SETTLED;
	return try_attach();
}

/* MEMTRACE_TENSORS=0: never looked for. */
static void torch_init(const struct mt_frameworks_options *opt)
{
	if (!opt->tensors)
		atomic_store(&state, TORCH_OFF);
}

/* PyTorch's adapter: the tracker, attached by the poll; autograd's entry
 * point is torch-autograd.c's. */
const struct mt_framework mt_framework_torch = { .init = torch_init, .poll = torch_poll };
