/* XLA's BFC arena from outside: JAX's arrays inside it, through the PJRT
 * C API. XLA keeps every array in its own BFC arena (cuMemCreate and
 * cuMemMap chunks), so the CUDA calls show only the arena. jaxlib loads
 * the CUDA plugin (jax_plugins/xla_cuda13/xla_cuda_plugin.so) and gets
 * its function table, struct PJRT_Api, from dlsym(handle, "GetPjrtApi"),
 * which is ours (hook-dl.c asks the adapters: mt_frameworks_symbol). For
 * that name we hand back get_api, which calls the plugin's, copies the
 * table it returns once and replaces, in the copy, the entries that make
 * a device buffer and those that release one:
 * - made: PJRT_Client_BufferFromHostBuffer (jax.device_put, a NumPy
 *   array), PJRT_LoadedExecutable_Execute (every output of every device:
 *   jnp.zeros, a jitted step's results), PJRT_Buffer_CopyToDevice and
 *   _CopyToMemory, PJRT_Client_CreateUninitializedBuffer and the
 *   transfer manager's RetrieveBuffer; after the real call, each new
 *   buffer in device memory ("device", not "pinned_host") is recorded as
 *   MT_EV_TENSOR_ALLOC at its device address (PJRT_Buffer_UnsafePointer)
 *   with its size (PJRT_Buffer_OnDeviceSizeInBytes), on this thread's
 *   stack: the Python line that asked, for a JAX program;
 * - released: PJRT_Buffer_Delete (Array.delete()) and PJRT_Buffer_Destroy
 *   (the array collected), whichever comes first, as MT_EV_TENSOR_FREE,
 *   recorded once the real call returned;
 * - donated (donate_argnums): an execution's input that the plugin says
 *   is deleted once Execute returned (PJRT_Buffer_IsDeleted) is released
 *   there, before the outputs are recorded; and an output at the address
 *   of a buffer still live (the input's memory became the output's, no
 *   allocation in the arena) ends that buffer there too.
 * The pseudo-API is XlaPjrt. The sizes are the arrays' own, not BFC's
 * chunks (rounded to 256 bytes, a chunk not split when the rest is
 * small): docs/frameworks.md says how they compare with
 * jax.Device.memory_stats(). An execution's temporaries are the plugin's
 * own and never reach the API: they are not seen.
 *
 * The layouts used here are facts of the PJRT C API: the offset of each
 * entry in the table and of each field in the argument structs, read
 * from its header (xla/pjrt/c/pjrt_c_api.h at version 0.94; the table
 * and the structs only ever grow at their end, and every entry and field
 * used here was there) and checked against the table jaxlib 0.10.2's
 * CUDA plugin hands out (version 0.112, 138 entries) by tests/jax. A
 * table of another major or minor version, or too short, turns the view
 * off with one message, and the plugin's table is handed back untouched.
 * MEMTRACE_TENSORS=0 turns the view off at load. */
#include "frameworks.h"
#include "trace-schema.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The versions of the API whose layouts are the ones below. */
#define KNOWN_MAJOR 0
#define KNOWN_MINOR_LO 112
#define KNOWN_MINOR_HI 112

/* struct PJRT_Api: struct_size, extension_start, the version struct (24
 * bytes: struct_size, extension_start, major, minor), then the function
 * pointers, each entry at 40 + 8 * its index. */
#define API_MAJOR_AT 32
#define API_MINOR_AT 36
#define API_ENTRY(i) (40 + 8 * (i))
enum {
	E_ERROR_DESTROY = 0,
	E_CLIENT_BUFFER_FROM_HOST = 22,
	E_DEVICE_LOCAL_HARDWARE_ID = 31,
	E_MEMORY_KIND = 36,
	E_EXECUTABLE_DESTROY = 40,
	E_EXECUTABLE_NUM_OUTPUTS = 44,
	E_LOADED_DESTROY = 50,
	E_LOADED_GET_EXECUTABLE = 51,
	E_LOADED_EXECUTE = 55,
	E_BUFFER_DESTROY = 58,
	E_BUFFER_ON_DEVICE_SIZE = 64,
	E_BUFFER_DEVICE = 65,
	E_BUFFER_MEMORY = 66,
	E_BUFFER_DELETE = 67,
	E_BUFFER_IS_DELETED = 68,
	E_BUFFER_COPY_TO_DEVICE = 69,
	E_BUFFER_UNSAFE_POINTER = 73,
	E_BUFFER_COPY_TO_MEMORY = 92,
	E_TRANSFER_RETRIEVE_BUFFER = 104,
	E_CLIENT_CREATE_UNINITIALIZED = 112,
	E_COUNT = 113 /* the table must hold at least these */
};

/* Every argument struct begins with its own size and extension_start;
 * the fields used, at their offsets (x86-64). */
struct args_head {
	size_t struct_size;
	void *extension_start;
};
/* PJRT_Error_Destroy_Args, PJRT_Buffer_Destroy_Args, _Delete_Args,
 * PJRT_Executable_Destroy_Args, PJRT_LoadedExecutable_Destroy_Args: the
 * object at 16. */
struct args_one {
	struct args_head h;
	void *object;
};
/* A query of one object, its answer at 24: PJRT_Buffer_OnDeviceSizeInBytes
 * (size_t), _UnsafePointer (uintptr_t), _Device, _Memory,
 * PJRT_LoadedExecutable_GetExecutable, PJRT_Executable_NumOutputs (size_t),
 * PJRT_Device_LocalHardwareId (int), PJRT_Buffer_IsDeleted (bool). */
struct args_query {
	struct args_head h;
	void *object;
	union {
		size_t size;
		uintptr_t pointer;
		void *object;
		int number;
		bool flag;
	} out;
};
_Static_assert(sizeof(struct args_query) == 32, "PJRT query args");
/* PJRT_Memory_Kind_Args */
struct args_kind {
	struct args_head h;
	void *memory;
	const char *kind;
	size_t kind_size;
};
/* Where a creating call's args hold the new buffer, and how large the
 * caller's struct must be to hold it. */
#define FROM_HOST_BUFFER_AT 112	   /* PJRT_Client_BufferFromHostBuffer_Args.buffer */
#define UNINITIALIZED_BUFFER_AT 72 /* PJRT_Client_CreateUninitializedBuffer_Args.buffer */
#define COPY_DST_BUFFER_AT 32 /* PJRT_Buffer_CopyToDevice_Args / _CopyToMemory_Args.dst_buffer */
#define RETRIEVE_BUFFER_AT 32 /* ..._RetrieveBuffer_Args.buffer_out */
/* PJRT_LoadedExecutable_Execute_Args */
struct args_execute {
	struct args_head h;
	void *executable;
	void *options;
	void *const *const *argument_lists;
	size_t num_devices;
	size_t num_args;
	void **const *output_lists;
};
_Static_assert(offsetof(struct args_execute, output_lists) == 56, "Execute args");

typedef void *(*pjrt_fn)(void *args); /* every entry: PJRT_Error *(*)(Args *) */
typedef const void *(*get_api_fn)(void);

static _Atomic bool disabled; /* MEMTRACE_TENSORS=0 */
static get_api_fn _Atomic real_get_api;
static pthread_once_t copied_once = PTHREAD_ONCE_INIT;
static const void *api_real; /* the plugin's table */
static void *api_copy;	     /* ours, handed to jaxlib; NULL: the view is off */
static pjrt_fn real[E_COUNT];

static void *entry(const void *api, unsigned i)
{
	void *p;
	memcpy(&p, (const char *)api + API_ENTRY(i), sizeof(p));
	return p;
}

static void set_entry(void *api, unsigned i, pjrt_fn fn)
{
	memcpy((char *)api + API_ENTRY(i), &fn, sizeof(fn));
}

/* A call of the plugin's own: true when it succeeded (an error is
 * destroyed). */
static bool call(unsigned i, void *args)
{
	void *error = real[i](args);
	if (!error)
		return true;
	struct args_one destroy = { { sizeof(destroy), NULL }, error };
	real[E_ERROR_DESTROY](&destroy);
	return false;
}

/* ---- the buffers recorded and not yet released ---- */

struct held {
	uintptr_t buffer; /* PJRT_Buffer*; 0: empty */
	uint64_t address, bytes;
	int16_t device;
};
/* The buffers held, twice: by buffer and by address, each open
 * addressing with linear probing, under lock. */
struct table {
	struct held *slots;
	size_t n, used;
	bool by_address;
};
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct table by_buffer, by_address = { .by_address = true };

static uint64_t key(const struct table *t, const struct held *h)
{
	return t->by_address ? h->address : h->buffer;
}

static size_t home(const struct table *t, uint64_t k)
{
	return (size_t)((k * 0x9e3779b97f4a7c15ull) >> 32) & (t->n - 1); /* the high bits */
}

static struct held *find_in(struct table *t, uint64_t k)
{
	if (!t->n || !k)
		return NULL;
	for (size_t i = home(t, k);; i = (i + 1) & (t->n - 1)) {
		if (!t->slots[i].buffer)
			return NULL;
		if (key(t, &t->slots[i]) == k)
			return &t->slots[i];
	}
}

static bool put_in(struct table *t, const struct held *h)
{
	if (2 * (t->used + 1) > t->n) {
		struct table g = { .n = t->n ? 2 * t->n : 256,
				   .used = t->used,
				   .by_address = t->by_address };
		g.slots = calloc(g.n, sizeof(*g.slots));
		if (!g.slots)
			return false;
		for (size_t j = 0; j < t->n; j++) {
			if (!t->slots[j].buffer)
				continue;
			size_t i = home(&g, key(&g, &t->slots[j]));
			while (g.slots[i].buffer)
				i = (i + 1) & (g.n - 1);
			g.slots[i] = t->slots[j];
		}
		free(t->slots);
		*t = g;
	}
	size_t i = home(t, key(t, h));
	while (t->slots[i].buffer && key(t, &t->slots[i]) != key(t, h))
		i = (i + 1) & (t->n - 1);
	if (!t->slots[i].buffer)
		t->used++;
	t->slots[i] = *h;
	return true;
}

/* Removes the entry (backward shift: no tombstones). */
static void drop_in(struct table *t, struct held *h)
{
	size_t i = (size_t)(h - t->slots), mask = t->n - 1;
	for (size_t j = (i + 1) & mask; t->slots[j].buffer; j = (j + 1) & mask) {
		size_t k = home(t, key(t, &t->slots[j]));
		/* j's entry may move to i when its home is not in (i, j] */
		if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
			t->slots[i] = t->slots[j];
			i = j;
		}
	}
	t->slots[i].buffer = 0;
	t->used--;
}

/* The buffer held, NULL: none. Under lock. */
static struct held *find(uintptr_t buffer)
{
	return find_in(&by_buffer, buffer);
}

/* Holds h, replacing a buffer at the same address, which is returned in
 * *gone (its buffer 0: none). Under lock. */
static bool put(const struct held *h, struct held *gone)
{
	struct held *old = find_in(&by_address, h->address);
	*gone = old ? *old : (struct held){ 0 };
	if (old) {
		drop_in(&by_address, old);
		struct held *b = find_in(&by_buffer, gone->buffer);
		if (b)
			drop_in(&by_buffer, b);
	}
	if (!put_in(&by_buffer, h))
		return false;
	if (!put_in(&by_address, h)) {
		drop_in(&by_buffer, find_in(&by_buffer, h->buffer));
		return false;
	}
	return true;
}

/* Lets buffer go: its entry in *gone (buffer 0: it was not held). Under
 * lock. */
static void drop(uintptr_t buffer, struct held *gone)
{
	struct held *b = find_in(&by_buffer, buffer);
	*gone = b ? *b : (struct held){ 0 };
	if (!b)
		return;
	drop_in(&by_buffer, b);
	struct held *a = find_in(&by_address, gone->address);
	if (a && a->buffer == buffer)
		drop_in(&by_address, a);
}

static void record(unsigned kind, const struct held *h)
{
	if (!mt_enter())
		return;
	mt_record_tensor(&(struct mt_rec){ .api = MT_API_XlaPjrt,
					   .kind = (uint8_t)kind,
					   .no_stack = kind == MT_EV_TENSOR_FREE,
					   .address = h->address,
					   .bytes = h->bytes },
			 h->device);
	mt_leave();
}

/* A buffer the plugin just made: recorded when it is in device memory. */
static void made(void *buffer)
{
	if (!buffer)
		return;
	struct args_query q = { { sizeof(q), NULL }, buffer, { 0 } };
	if (!call(E_BUFFER_MEMORY, &q) || !q.out.object)
		return;
	struct args_kind k = { { sizeof(k), NULL }, q.out.object, NULL, 0 };
	if (!call(E_MEMORY_KIND, &k) || !k.kind || k.kind_size != 6 || memcmp(k.kind, "device", 6))
		return;
	struct held h = { .buffer = (uintptr_t)buffer };
	q = (struct args_query){ { sizeof(q), NULL }, buffer, { 0 } };
	if (!call(E_BUFFER_UNSAFE_POINTER, &q) || !q.out.pointer)
		return;
	h.address = q.out.pointer;
	q = (struct args_query){ { sizeof(q), NULL }, buffer, { 0 } };
	if (!call(E_BUFFER_ON_DEVICE_SIZE, &q))
		return;
	h.bytes = q.out.size;
	q = (struct args_query){ { sizeof(q), NULL }, buffer, { 0 } };
	if (call(E_BUFFER_DEVICE, &q) && q.out.object) {
		void *device = q.out.object;
		q = (struct args_query){ { sizeof(q), NULL }, device, { 0 } };
		h.device = call(E_DEVICE_LOCAL_HARDWARE_ID, &q) ? (int16_t)q.out.number : 0;
	}
	struct held gone;
	pthread_mutex_lock(&lock);
	bool kept = put(&h, &gone);
	pthread_mutex_unlock(&lock);
	if (gone.buffer)
		record(MT_EV_TENSOR_FREE, &gone);
	if (kept)
		record(MT_EV_TENSOR_ALLOC, &h);
}

/* A buffer released (its memory, or the buffer and its memory). */
static void *released(unsigned i, void *args)
{
	struct args_one *a = args;
	void *buffer = a && a->h.struct_size >= sizeof(*a) ? a->object : NULL;
	void *error = real[i](args);
	if (!buffer)
		return error;
	struct held gone;
	pthread_mutex_lock(&lock);
	drop((uintptr_t)buffer, &gone);
	pthread_mutex_unlock(&lock);
	if (gone.buffer)
		record(MT_EV_TENSOR_FREE, &gone);
	return error;
}

static void *buffer_destroy(void *args)
{
	return released(E_BUFFER_DESTROY, args);
}

static void *buffer_delete(void *args)
{
	return released(E_BUFFER_DELETE, args);
}

/* A call whose args hold one new buffer at `at`. */
static void *making(unsigned i, void *args, size_t at)
{
	void *error = real[i](args);
	if (!error && args && ((struct args_head *)args)->struct_size >= at + sizeof(void *)) {
		void *buffer;
		memcpy(&buffer, (char *)args + at, sizeof(buffer));
		made(buffer);
	}
	return error;
}

static void *from_host_buffer(void *args)
{
	return making(E_CLIENT_BUFFER_FROM_HOST, args, FROM_HOST_BUFFER_AT);
}

static void *create_uninitialized(void *args)
{
	return making(E_CLIENT_CREATE_UNINITIALIZED, args, UNINITIALIZED_BUFFER_AT);
}

static void *copy_to_device(void *args)
{
	return making(E_BUFFER_COPY_TO_DEVICE, args, COPY_DST_BUFFER_AT);
}

static void *copy_to_memory(void *args)
{
	return making(E_BUFFER_COPY_TO_MEMORY, args, COPY_DST_BUFFER_AT);
}

static void *retrieve_buffer(void *args)
{
	return making(E_TRANSFER_RETRIEVE_BUFFER, args, RETRIEVE_BUFFER_AT);
}

/* ---- an execution's outputs: how many each device has, per executable ---- */

#define KNOWN_EXECUTABLES 64
static struct {
	void *executable;
	size_t outputs;
} outputs_of[KNOWN_EXECUTABLES];

static size_t slot_of(const void *loaded)
{
	return (size_t)(((uintptr_t)loaded * 0x9e3779b97f4a7c15ull) >> 32) % KNOWN_EXECUTABLES;
}

/* Under lock. SIZE_MAX: not known. */
static size_t num_outputs(void *loaded)
{
	size_t slot = slot_of(loaded);
	if (outputs_of[slot].executable == loaded)
		return outputs_of[slot].outputs;
	struct args_query q = { { sizeof(q), NULL }, loaded, { 0 } };
	if (!call(E_LOADED_GET_EXECUTABLE, &q) || !q.out.object)
		return SIZE_MAX;
	void *executable = q.out.object;
	q = (struct args_query){ { sizeof(q), NULL }, executable, { 0 } };
	size_t n = call(E_EXECUTABLE_NUM_OUTPUTS, &q) ? q.out.size : SIZE_MAX;
	struct args_one destroy = { { sizeof(destroy), NULL }, executable };
	call(E_EXECUTABLE_DESTROY, &destroy);
	if (n != SIZE_MAX) {
		outputs_of[slot].executable = loaded;
		outputs_of[slot].outputs = n;
	}
	return n;
}

/* The inputs of an execution that it consumed (donated), released. */
static void donated(const struct args_execute *a)
{
	for (size_t d = 0; a->argument_lists && d < a->num_devices; d++) {
		void *const *inputs = a->argument_lists[d];
		for (size_t j = 0; inputs && j < a->num_args; j++) {
			pthread_mutex_lock(&lock);
			bool held = inputs[j] && find((uintptr_t)inputs[j]);
			pthread_mutex_unlock(&lock);
			struct args_query q = { { sizeof(q), NULL }, inputs[j], { 0 } };
			if (!held || !call(E_BUFFER_IS_DELETED, &q) || !q.out.flag)
				continue;
			struct held gone;
			pthread_mutex_lock(&lock);
			drop((uintptr_t)inputs[j], &gone);
			pthread_mutex_unlock(&lock);
			if (gone.buffer)
				record(MT_EV_TENSOR_FREE, &gone);
		}
	}
}

static void *execute(void *args)
{
	struct args_execute *a = args;
	void *error = real[E_LOADED_EXECUTE](args);
	if (error || !a || a->h.struct_size < sizeof(*a) || !a->output_lists)
		return error;
	donated(a);
	pthread_mutex_lock(&lock);
	size_t n = num_outputs(a->executable);
	pthread_mutex_unlock(&lock);
	if (n == SIZE_MAX)
		return error;
	for (size_t d = 0; d < a->num_devices; d++) {
		void **outputs = a->output_lists[d];
		for (size_t i = 0; outputs && i < n; i++)
			made(outputs[i]);
	}
	return error;
}

/* An executable gone: its entry in outputs_of with it (its address may
 * be another's next). */
static void *loaded_destroy(void *args)
{
	struct args_one *a = args;
	void *loaded = a && a->h.struct_size >= sizeof(*a) ? a->object : NULL;
	if (loaded) {
		pthread_mutex_lock(&lock);
		size_t slot = slot_of(loaded);
		if (outputs_of[slot].executable == loaded)
			outputs_of[slot].executable = NULL;
		pthread_mutex_unlock(&lock);
	}
	return real[E_LOADED_DESTROY](args);
}

/* ---- the table ---- */

static void copy_table(void)
{
	get_api_fn get = atomic_load(&real_get_api);
	const char *api = get ? get() : NULL;
	api_real = api;
	if (!api || atomic_load(&disabled))
		return;
	size_t size;
	int major, minor;
	memcpy(&size, api, sizeof(size));
	memcpy(&major, api + API_MAJOR_AT, sizeof(major));
	memcpy(&minor, api + API_MINOR_AT, sizeof(minor));
	if (major != KNOWN_MAJOR || minor < KNOWN_MINOR_LO || minor > KNOWN_MINOR_HI ||
	    size < API_ENTRY(E_COUNT)) {
		mt_log(MT_ENV,
		       "XLA's PJRT plugin: API version %d.%d (table of %zu bytes), not one memtrace "
		       "knows (%d.%d to %d.%d); the view of the arrays in XLA's arena is off (only "
		       "the CUDA calls are traced)",
		       major, minor, size, KNOWN_MAJOR, KNOWN_MINOR_LO, KNOWN_MAJOR,
		       KNOWN_MINOR_HI);
		return;
	}
	void *copy = malloc(size);
	if (!copy)
		return;
	memcpy(copy, api, size);
	for (unsigned i = 0; i < E_COUNT; i++)
		real[i] = (pjrt_fn)entry(api, i);
	static const struct {
		unsigned i;
		pjrt_fn fn;
	} ours[] = {
		{ E_CLIENT_BUFFER_FROM_HOST, from_host_buffer },
		{ E_LOADED_DESTROY, loaded_destroy },
		{ E_LOADED_EXECUTE, execute },
		{ E_BUFFER_DESTROY, buffer_destroy },
		{ E_BUFFER_DELETE, buffer_delete },
		{ E_BUFFER_COPY_TO_DEVICE, copy_to_device },
		{ E_BUFFER_COPY_TO_MEMORY, copy_to_memory },
		{ E_TRANSFER_RETRIEVE_BUFFER, retrieve_buffer },
		{ E_CLIENT_CREATE_UNINITIALIZED, create_uninitialized },
	};
	for (size_t j = 0; j < sizeof(ours) / sizeof(ours[0]); j++) {
		if (!real[ours[j].i]) {
			free(copy);
			return; /* the plugin lacks one it replaces: no view */
		}
		set_entry(copy, ours[j].i, ours[j].fn);
	}
	static const unsigned asked[] = { E_ERROR_DESTROY,
					  E_DEVICE_LOCAL_HARDWARE_ID,
					  E_MEMORY_KIND,
					  E_EXECUTABLE_DESTROY,
					  E_EXECUTABLE_NUM_OUTPUTS,
					  E_LOADED_GET_EXECUTABLE,
					  E_BUFFER_ON_DEVICE_SIZE,
					  E_BUFFER_DEVICE,
					  E_BUFFER_MEMORY,
					  E_BUFFER_IS_DELETED,
					  E_BUFFER_UNSAFE_POINTER };
	for (size_t j = 0; j < sizeof(asked) / sizeof(asked[0]); j++) {
		if (!real[asked[j]]) {
			free(copy);
			return; /* one memtrace asks is missing: no view */
		}
	}
	api_copy = copy;
}

static const void *get_api(void)
{
	int saved_errno = errno;
	pthread_once(&copied_once, copy_table);
	errno = saved_errno;
	return api_copy ? api_copy : api_real;
}

static void *symbol(const char *name, void *p)
{
	if (!p || strcmp(name, "GetPjrtApi"))
		return p;
	get_api_fn expected = NULL;
	/* the first plugin's; another's goes through untouched */
	if (!atomic_compare_exchange_strong(&real_get_api, &expected, (get_api_fn)p) &&
	    expected != (get_api_fn)p)
		return p;
	return (void *)get_api;
}

static void init(const struct mt_frameworks_options *opt)
{
	if (!opt->tensors)
		atomic_store(&disabled, true);
}

const struct mt_framework mt_framework_xla_pjrt = { .init = init, .symbol = symbol };
