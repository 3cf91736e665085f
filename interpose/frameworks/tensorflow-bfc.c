/* TensorFlow's BFC arena from outside: the tensors inside it. By default
 * (and with allow_growth) TensorFlow's GPU allocator is a
 * tensorflow::GPUBFCAllocator, a tsl::BFCAllocator that takes the arena
 * from the device in regions (most of the device at once by default, or
 * region by region under allow_growth) and cuts a chunk of it for each
 * tensor. The CUDA calls show only the regions.
 *
 * libtensorflow_framework.so.2 exports the allocator's entry points and
 * binds them by symbol: its vtables name
 * tsl::BFCAllocator::AllocateRaw(size_t, size_t, const AllocationAttributes&)
 * and ::DeallocateRaw(void*) through R_X86_64_64 relocations against the
 * exported symbols, and the GPU region allocator,
 * stream_executor::DeviceMemAllocator::Alloc/Free (weak, exported), the
 * same way. The preload is first in the global scope, so the definitions
 * here are what every tensor's allocation and free calls (as tensorflow.c's
 * AllocateRawInternal is); each calls the real one, found in the loaded
 * object that defines it (mt_framework_loaded, framework-base.c), with the same
 * arguments, and records after it:
 * - a tensor: MT_EV_TENSOR_ALLOC at the chunk's address with the chunk's
 *   size (BFCAllocator::AllocatedSize, the size TensorFlow counts in
 *   bytes_in_use, asked after the call returned, outside the allocator's
 *   lock), with this thread's stack (the executor thread borrows the
 *   launching thread's Python frames: tensorflow.c);
 * - its free: MT_EV_TENSOR_FREE, its chunk's size asked before the real
 *   free;
 * - a region: MT_EV_CACHE_SEGMENT_ALLOC / _FREE with the bytes the region
 *   allocator returned, stream MT_CACHE_EXACT_BLOCKS (trace-schema.h):
 *   its blocks are the sizes recorded, BFC's chunks, not torch's rounding.
 * Only the GPU allocator's calls are recorded: the object's vtable pointer
 * must be tensorflow::GPUBFCAllocator's (exported), which keeps the host
 * (pinned) BFC and pluggable devices out. The device is the one in the
 * allocator's name ("GPU_<n>_bfc", BFCAllocator::Name, asked once per
 * allocator).
 *
 * Checked once, at the first call: TensorFlow's version (TF_Version, its
 * C API) must be one whose entry points and vtables were read here (2.21);
 * another version, or a missing symbol, turns the view off with one
 * message, and every call then goes straight to the real one. The
 * allocator's OOM is tensorflow.c's (AllocateRawInternal). MEMTRACE_TENSORS=0
 * turns the view off at load (tensorflow.c's init: mt_tf_bfc_disable). */
#include "frameworks.h"
#include "trace-schema.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define SYM_ALLOC _ZN3tsl12BFCAllocator11AllocateRawEmmRKNS_20AllocationAttributesE
#define SYM_FREE _ZN3tsl12BFCAllocator13DeallocateRawEPv
#define SYM_REGION_ALLOC _ZN15stream_executor18DeviceMemAllocator5AllocEmmPm
#define SYM_REGION_FREE _ZN15stream_executor18DeviceMemAllocator4FreeEPvm
#define STR_(x) #x
#define STR(x) STR_(x)
#define SYM_SIZE "_ZNK3tsl12BFCAllocator13AllocatedSizeEPKv"
#define SYM_NAME "_ZN3tsl12BFCAllocator4NameB5cxx11Ev"
#define SYM_GPU_VTABLE "_ZTVN10tensorflow15GPUBFCAllocatorE"

/* The TensorFlow versions whose entry points are the ones above. */
#define KNOWN_VERSION "2.21."

typedef void *(*alloc_fn)(void *self, size_t alignment, size_t bytes, const void *attr);
typedef void (*free_fn)(void *self, void *p);
typedef void *(*region_alloc_fn)(void *self, size_t alignment, size_t bytes, size_t *received);
typedef void (*region_free_fn)(void *self, void *p, size_t bytes);
typedef size_t (*size_fn)(const void *self, const void *p);
typedef const char *(*version_fn)(void);

/* libstdc++'s std::string (the cxx11 ABI): returned through a hidden
 * pointer passed before `this` (the Itanium ABI on x86-64). */
struct cxx_string {
	char *p;
	size_t len;
	char buf[16];
};
_Static_assert(sizeof(struct cxx_string) == 32, "std::string is 32 bytes");
typedef void (*name_fn)(struct cxx_string *ret, void *self);

enum { UNTRIED, BUSY, ON, OFF };
static _Atomic int state = UNTRIED;
static _Atomic bool disabled; /* MEMTRACE_TENSORS=0 */
static alloc_fn real_alloc;
static free_fn real_free;
static region_alloc_fn real_region_alloc;
static region_free_fn real_region_free;
static size_fn allocated_size;
static name_fn name_of;
static uintptr_t gpu_vtable; /* the address point of GPUBFCAllocator's vtable */

MT_EXPORT void *SYM_ALLOC(void *self, size_t alignment, size_t bytes, const void *attr);
MT_EXPORT void SYM_FREE(void *self, void *p);
MT_EXPORT void *SYM_REGION_ALLOC(void *self, size_t alignment, size_t bytes, size_t *received);
MT_EXPORT void SYM_REGION_FREE(void *self, void *p, size_t bytes);

static void turn_off(const char *why, const char *version)
{
	atomic_store(&state, OFF);
	mt_log(MT_ENV,
	       "TensorFlow %s: %s; the tensor view of its BFC arena is off (only the CUDA calls "
	       "are traced)",
	       version && version[0] ? version : "(version unknown)", why);
}

/* Finds what the wrappers call; the real entry points always (a caller
 * must reach them, view or no view). */
static void resolve(void)
{
	int s = atomic_load(&state);
	if (MT_LIKELY(s >= ON))
		return;
	if (s == BUSY || !atomic_compare_exchange_strong(&state, &s, BUSY)) {
		while (atomic_load(&state) == BUSY)
			; /* another thread is at it: a few dlsym calls */
		return;
	}
	int saved_errno = errno;
	real_alloc = (alloc_fn)mt_framework_loaded(STR(SYM_ALLOC), (void *)SYM_ALLOC);
	real_free = (free_fn)mt_framework_loaded(STR(SYM_FREE), (void *)SYM_FREE);
	real_region_alloc =
		(region_alloc_fn)mt_framework_loaded(STR(SYM_REGION_ALLOC), (void *)SYM_REGION_ALLOC);
	real_region_free =
		(region_free_fn)mt_framework_loaded(STR(SYM_REGION_FREE), (void *)SYM_REGION_FREE);
	version_fn version = (version_fn)mt_framework_loaded("TF_Version", NULL);
	const char *v = version ? version() : NULL;
	allocated_size = (size_fn)mt_framework_loaded(SYM_SIZE, NULL);
	name_of = (name_fn)mt_framework_loaded(SYM_NAME, NULL);
	void *vt = mt_framework_loaded(SYM_GPU_VTABLE, NULL);
	if (atomic_load(&disabled))
		atomic_store(&state, OFF);
	else if (!v || strncmp(v, KNOWN_VERSION, strlen(KNOWN_VERSION)))
		turn_off("its BFC allocator's entry points are not ones memtrace knows (2.21)", v);
	else if (!real_alloc || !real_free || !real_region_alloc || !real_region_free ||
		 !allocated_size || !name_of || !vt)
		turn_off("libtensorflow_framework.so.2 lacks the BFC allocator's symbols", v);
	else if (atomic_load(&state) == BUSY) {
		/* the address point is past offset-to-top and typeinfo */
		gpu_vtable = (uintptr_t)vt + 2 * sizeof(void *);
		atomic_store(&state, ON);
	}
	errno = saved_errno;
}

/* The device in a GPU allocator's name, per allocator, asked once. */
#define KNOWN_ALLOCATORS 16
static struct {
	void *_Atomic self;
	int device;
} devices[KNOWN_ALLOCATORS];
static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;

static int device_of(void *self)
{
	for (int i = 0; i < KNOWN_ALLOCATORS; i++) {
		void *s = atomic_load_explicit(&devices[i].self, memory_order_acquire);
		if (s == self)
			return devices[i].device;
		if (!s)
			break;
	}
	struct cxx_string name;
	int device = 0;
	name_of(&name, self);
	if (sscanf(name.p, "GPU_%d_bfc", &device) != 1)
		device = 0;
	/* a short name is in the string's own buffer; a long one (not
	 * TensorFlow's GPU names) is left, once per allocator */
	pthread_mutex_lock(&devices_lock);
	for (int i = 0; i < KNOWN_ALLOCATORS; i++) {
		void *s = atomic_load_explicit(&devices[i].self, memory_order_relaxed);
		if (s == self)
			break;
		if (!s) {
			devices[i].device = device; /* published by the store below */
			atomic_store_explicit(&devices[i].self, self, memory_order_release);
			break;
		}
	}
	pthread_mutex_unlock(&devices_lock);
	return device;
}

static bool is_gpu(const void *self)
{
	return *(const uintptr_t *)self == gpu_vtable;
}

/* The device of the GPU allocator this thread is inside, for its regions;
 * -1: none. */
static MT_TLS int inside_device = -1;

static void record(unsigned kind, uint64_t address, uint64_t bytes, uint64_t stream, int device)
{
	if (!mt_enter())
		return;
	mt_record_tensor(&(struct mt_rec){ .api = MT_API_TensorFlowBFC,
					   .kind = (uint8_t)kind,
					   .no_stack = kind == MT_EV_TENSOR_FREE ||
						       kind == MT_EV_CACHE_SEGMENT_FREE,
					   .address = address,
					   .bytes = bytes,
					   .stream = stream },
			 (int16_t)device);
	mt_leave();
}

MT_EXPORT void *SYM_ALLOC(void *self, size_t alignment, size_t bytes, const void *attr)
{
	resolve();
	if (MT_UNLIKELY(!real_alloc))
		return NULL; /* cannot be: only TensorFlow's library calls it */
	if (atomic_load_explicit(&state, memory_order_relaxed) != ON || !is_gpu(self))
		return real_alloc(self, alignment, bytes, attr);
	int device = device_of(self), outer = inside_device;
	inside_device = device;
	void *p = real_alloc(self, alignment, bytes, attr);
	inside_device = outer;
	if (p)
		record(MT_EV_TENSOR_ALLOC, (uintptr_t)p, allocated_size(self, p), 0, device);
	return p;
}

MT_EXPORT void SYM_FREE(void *self, void *p)
{
	resolve();
	if (MT_UNLIKELY(!real_free))
		return;
	if (!p || atomic_load_explicit(&state, memory_order_relaxed) != ON || !is_gpu(self)) {
		real_free(self, p);
		return;
	}
	size_t size = allocated_size(self, p);
	int device = device_of(self);
	/* recorded once the real free returned: the chunk counts until then */
	real_free(self, p);
	record(MT_EV_TENSOR_FREE, (uintptr_t)p, size, 0, device);
}

MT_EXPORT void *SYM_REGION_ALLOC(void *self, size_t alignment, size_t bytes, size_t *received)
{
	resolve();
	if (MT_UNLIKELY(!real_region_alloc))
		return NULL;
	void *p = real_region_alloc(self, alignment, bytes, received);
	int device = inside_device;
	if (p && device >= 0 && atomic_load_explicit(&state, memory_order_relaxed) == ON)
		record(MT_EV_CACHE_SEGMENT_ALLOC, (uintptr_t)p, received ? *received : bytes,
		       MT_CACHE_EXACT_BLOCKS, device);
	return p;
}

MT_EXPORT void SYM_REGION_FREE(void *self, void *p, size_t bytes)
{
	resolve();
	if (MT_UNLIKELY(!real_region_free))
		return;
	real_region_free(self, p, bytes);
	if (p && atomic_load_explicit(&state, memory_order_relaxed) == ON)
		record(MT_EV_CACHE_SEGMENT_FREE, (uintptr_t)p, bytes, MT_CACHE_EXACT_BLOCKS,
		       inside_device);
}

void mt_tf_bfc_disable(void)
{
	atomic_store(&disabled, true);
}
