/* Sites, ops, marks and growth: the rules of model-site.c on frame paths
 * and names, and the model fed hand-built events whose sites are set as
 * the reader would set them (docs/report-json.md). */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "model-site.h"
#include "model.h"
#include "suites.h"
#include "trace-schema.h"
#include "trace-user-frame.h"

#define MiB (1024ull * 1024)

static int64_t next_seq;

static struct trace_event ev(int kind, int64_t t)
{
	return (struct trace_event){
		.seq = next_seq++, .time_ns = t, .kind = kind, .api = 1, .device = 0, .module = -1,
	};
}

/* An allocation at a site (kind, id) with an op (0: none). */
static void alloc_at(struct model *m, int64_t t, uint64_t addr, uint64_t bytes, int64_t stack,
		     int kind, int64_t id, int64_t op)
{
	struct trace_event e = ev(MT_EV_ALLOC, t);

	e.address = addr;
	e.has_address = true;
	e.bytes = bytes;
	e.mem = MT_MEM_DEVICE;
	e.stack = stack;
	e.site = (struct site_ref){ .kind = kind, .id = id };
	e.has_op = op != 0;
	e.op = op;
	model_feed(m, &e);
}

static void free_at(struct model *m, int64_t t, uint64_t addr)
{
	struct trace_event e = ev(MT_EV_FREE, t);

	e.address = addr;
	e.has_address = true;
	model_feed(m, &e);
}

static void mark(struct model *m, int64_t t, int64_t label, int kind)
{
	struct trace_event e = ev(MT_EV_MARK, t);

	e.has_op = true;
	e.op = label;
	e.mark_kind = kind;
	model_feed(m, &e);
}

/* An event under a range of the per-build series (build number b). */
static void in_build(struct model *m, int64_t t, uint64_t addr, uint64_t bytes, int64_t op,
		     int64_t b)
{
	struct trace_event e = ev(MT_EV_ALLOC, t);

	e.address = addr;
	e.has_address = true;
	e.bytes = bytes;
	e.mem = MT_MEM_DEVICE;
	e.stack = 1;
	e.has_op = true;
	e.op = op;
	e.has_build = true;
	e.build = b;
	e.site = (struct site_ref){ .kind = SITE_OP, .id = op };
	model_feed(m, &e);
}

static const struct model_site *site_of(const struct model *m, int kind, int64_t id)
{
	for (size_t i = 0; i < m->n_sites; i++) {
		if (m->sites[i].kind == kind && m->sites[i].id == id)
			return &m->sites[i];
	}
	ck_abort_msg("no site %d/%lld", kind, (long long)id);
	return NULL;
}

static void setup(struct model *m)
{
	next_seq = 0;
	model_init(m);
}

/* ---- which frame is the user's ---------------------------------------- */

START_TEST(test_python_user)
{
	ck_assert(trace_python_frame_is_user("/home/u/train.py"));
	ck_assert(trace_python_frame_is_user("<stdin>"));
	ck_assert(trace_python_frame_is_user(NULL));
	ck_assert(!trace_python_frame_is_user("/usr/lib/python3.11/threading.py"));
	ck_assert(!trace_python_frame_is_user("/opt/conda/lib/python3.12/asyncio/base_events.py"));
	ck_assert(!trace_python_frame_is_user("<frozen importlib._bootstrap>"));
	ck_assert(!trace_python_frame_is_user(
		"/venv/lib/python3.11/site-packages/torch/nn/modules/module.py"));
	ck_assert(!trace_python_frame_is_user("/usr/lib/python3/dist-packages/jax/_src/api.py"));
	ck_assert(!trace_python_frame_is_user("/venv/lib/python3.11/site-packages/jaxlib/x.py"));
	ck_assert(!trace_python_frame_is_user("/venv/lib/python3.11/site-packages/cupyx/y.py"));
	ck_assert(!trace_python_frame_is_user("/venv/lib/python3.11/site-packages/keras/z.py"));
	ck_assert(!trace_python_frame_is_user(
		"/venv/lib/python3.11/site-packages/tensorflow/python/ops/a.py"));
	ck_assert(!trace_python_frame_is_user(
		"/venv/lib/python3.11/site-packages/optax/_src/transform.py"));
	ck_assert(!trace_python_frame_is_user("/venv/lib/python3.11/site-packages/flax/linen/a.py"));
	ck_assert(!trace_python_frame_is_user("/venv/lib/python3.11/site-packages/tf_keras/b.py"));
	ck_assert(!trace_python_frame_is_user("/venv/lib/python3.11/site-packages/haiku/c.py"));
	/* other packages are the user's code: their models, their trainers */
	ck_assert(trace_python_frame_is_user("/venv/lib/python3.11/site-packages/optaxx/a.py"));
	ck_assert(trace_python_frame_is_user(
		"/venv/lib/python3.11/site-packages/transformers/models/llama/modeling_llama.py"));
	ck_assert(trace_python_frame_is_user("/venv/lib/python3.11/site-packages/torchvision/a.py"));
	ck_assert(trace_python_frame_is_user("/venv/lib/python3.11/site-packages/mytorch/a.py"));
}
END_TEST

START_TEST(test_native_user)
{
	ck_assert(trace_native_frame_is_user("/home/u/app", "main"));
	ck_assert(trace_native_frame_is_user("/home/u/ext/myext.so", NULL));
	ck_assert(trace_native_frame_is_user("/venv/torch/lib/libtorch_cuda.so",
					    "at::native::empty_cuda"));
	ck_assert(!trace_native_frame_is_user("/venv/torch/lib/libtorch_cuda.so",
					     "_ZN3c104cuda20CUDACachingAllocator6mallocEv"));
	ck_assert(!trace_native_frame_is_user("/venv/torch/lib/libc10_cuda.so", "anything"));
	ck_assert(!trace_native_frame_is_user("/usr/lib/libcuda.so.1", NULL));
	ck_assert(!trace_native_frame_is_user("/usr/local/cuda/lib64/libcudart.so.12", "cudaMalloc"));
	ck_assert(!trace_native_frame_is_user("/x/libcublasLt.so.12", "f"));
	ck_assert(!trace_native_frame_is_user("/x/libcupti.so.13", "f"));
	ck_assert(!trace_native_frame_is_user("/lib/x86_64-linux-gnu/libc.so.6", "__libc_start_main"));
	ck_assert(!trace_native_frame_is_user("/lib64/ld-linux-x86-64.so.2", "_dl_start"));
	ck_assert(!trace_native_frame_is_user("/usr/lib/libstdc++.so.6", "f"));
	ck_assert(!trace_native_frame_is_user("/usr/lib/libffi.so.8", "ffi_call"));
	ck_assert(!trace_native_frame_is_user("/usr/lib/libpython3.11.so.1.0", "PyObject_Call"));
	ck_assert(!trace_native_frame_is_user("/usr/bin/python3.11", "_PyEval_EvalFrameDefault"));
	ck_assert(!trace_native_frame_is_user("/usr/bin/python3", "main"));
	ck_assert(!trace_native_frame_is_user("/usr/bin/python3.13t", "main"));
	ck_assert(trace_native_frame_is_user("/usr/bin/python-tool", "main"));
	ck_assert(!trace_native_frame_is_user("/build/libmemtrace.so", "f"));
	ck_assert(!trace_native_frame_is_user("/x/libtensorflow_framework.so.2",
					     "tsl::BFCAllocator::AllocateRaw"));
	ck_assert(trace_native_frame_is_user("/x/libtensorflow_framework.so.2", "tensorflow::Conv"));
	ck_assert(!trace_native_frame_is_user("/x/libtensorflow_framework.so.2",
					     "absl::lts_20250814::log_internal::LogToSinks(...)"));
	ck_assert(!trace_native_frame_is_user("/x/libtensorflow_framework.so.2",
					     "absl::lts_20250814::log_internal::LogMessage::~LogMessage()"));
	/* as the library's OOM summary reads it, not demangled */
	ck_assert(!trace_native_frame_is_user(
		"/x/libtensorflow_framework.so.2",
		"_ZN4absl12lts_2025081412log_internal10LogToSinksERKNS0_8LogEntryENS0_4SpanIPNS0_7LogSinkEEEb"));
	ck_assert(trace_native_frame_is_user(
		"/x/libtensorflow_framework.so.2",
		"_ZN10tensorflow15OpKernelContext15allocate_outputEiRKNS_11TensorShapeEPPNS_6TensorE"));
	ck_assert(!trace_native_frame_is_user("/x/xla_extension.so", "xla::DeviceMemoryAllocator"));
	ck_assert(!trace_native_frame_is_user("/x/libjax_common.so", "f"));
	ck_assert(!trace_native_frame_is_user(
		"/venv/site-packages/cupy/cuda/memory.cpython-311-x86_64-linux-gnu.so", "f"));
	ck_assert(!trace_native_frame_is_user(NULL, "f"));
	/* the interpreter's own extension modules: ctypes' call path */
	ck_assert(!trace_native_frame_is_user(
		"/usr/lib/python3.11/lib-dynload/_ctypes.cpython-311-x86_64-linux-gnu.so",
		"_ctypes_callproc"));
	ck_assert(!trace_native_frame_is_user("/opt/py/_ctypes.cpython-312-x86_64-linux-gnu.so",
					     "PyCFuncPtr_call"));
	ck_assert(trace_native_frame_is_user("/home/u/_ctypes_helpers.so", "f"));
}
END_TEST

/* A stack as trace_user_frames reads it: innermost first. */
static const struct trace_frame_view ctypes_stack[] = {
	{ .module_path = "/usr/lib/libffi.so.8" },
	{ .function = "ffi_call", .module_path = "/usr/lib/libffi.so.8" },
	{ .function = "_ctypes_callproc", .module_path = "/x/lib-dynload/_ctypes.so" },
	{ .function = "_PyEval_EvalFrameDefault", .module_path = "/x/libpython3.11.so.1.0" },
	{ .python = true, .function = "alloc", .file = "/home/u/train.py" },
	{ .python = true, .function = "wrapper", .file = "/usr/lib/python3.11/functools.py" },
	{ .python = true, .function = "activations", .file = "/home/u/train.py" },
	{ .python = true, .function = "<module>", .file = "/home/u/train.py" },
	{ .function = "Py_RunMain", .module_path = "/x/libpython3.11.so.1.0" },
	{ .function = "main", .module_path = "/usr/bin/python3.11" },
};

static const struct trace_frame_view native_stack[] = {
	{ .function = "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc",
	  .module_path = "/v/torch/lib/libc10_cuda.so" },
	{ .function = "cudaMalloc<float>", .file = "/usr/local/cuda/include/cuda_runtime.h",
	  .module_path = "/home/u/app", .cuda_header = true },
	{ .module_path = "/home/u/app" },
	{ .function = "load_weights", .module_path = "/home/u/app" },
	{ .function = "main", .module_path = "/home/u/app" },
};

static bool view_at(void *ctx, uint32_t i, struct trace_frame_view *out)
{
	*out = ((const struct trace_frame_view *)ctx)[i];
	return true;
}

START_TEST(test_user_frames)
{
	struct trace_user_frames u;
	uint32_t caller;

	trace_user_frames(10, view_at, (void *)ctypes_stack, &u);
	ck_assert_uint_eq(u.python, 4);
	ck_assert_uint_eq(u.python_caller, 6); /* the standard library's is skipped */
	ck_assert_uint_eq(u.native, TRACE_USER_NONE);
	ck_assert_uint_eq(trace_user_frame(&u, &caller), 4);
	ck_assert_uint_eq(caller, 6);

	/* no Python: the named native frame before the unnamed one, not the
	 * allocator's nor CUDA's header's */
	trace_user_frames(5, view_at, (void *)native_stack, &u);
	ck_assert_uint_eq(u.python, TRACE_USER_NONE);
	ck_assert_uint_eq(trace_user_frame(&u, &caller), 3);
	ck_assert_uint_eq(caller, 4);

	/* only the unnamed frame is the user's */
	trace_user_frames(3, view_at, (void *)native_stack, &u);
	ck_assert_uint_eq(trace_user_frame(&u, &caller), 2);
	ck_assert_uint_eq(caller, TRACE_USER_NONE);

	/* nothing of the user's */
	trace_user_frames(1, view_at, (void *)native_stack, &u);
	ck_assert_uint_eq(trace_user_frame(&u, NULL), TRACE_USER_NONE);
}
END_TEST

START_TEST(test_group_by_names)
{
	enum report_group_by g;
	static const char *const names[] = { "site", "python", "op", "native", "stack" };

	for (size_t i = 0; i < 5; i++) {
		ck_assert(report_parse_group_by(names[i], &g));
		ck_assert_int_eq(g, (int)i);
		ck_assert_str_eq(report_group_by_name(g), names[i]);
	}
	ck_assert(!report_parse_group_by("frames", &g));
	ck_assert(!report_parse_group_by("", &g));
	ck_assert(!report_parse_group_by(NULL, &g));
}
END_TEST

START_TEST(test_mark_kinds)
{
	ck_assert_int_eq(model_mark_kind("build 1"), MARK_USER);
	ck_assert_int_eq(model_mark_kind("memtrace: CUPTI on"), MARK_CUPTI_ON);
	ck_assert_int_eq(model_mark_kind("memtrace: CUPTI off"), MARK_CUPTI_OFF);
	ck_assert_int_eq(model_mark_kind("memtrace: something"), MARK_INTERNAL);
	ck_assert_int_eq(model_mark_kind(NULL), MARK_USER);
}
END_TEST

/* The longest series of names that differ in one number, in one domain. */
START_TEST(test_op_builds)
{
	struct trace_op ops[] = {
		{ .id = 1, .same = 1, .name = "aten::mm" },
		{ .id = 2, .same = 2, .name = "layer 1" },
		{ .id = 3, .same = 3, .name = "build[1]" },
		{ .id = 4, .same = 4, .name = "build[2]" },
		{ .id = 5, .same = 5, .name = "build[10]" },
		{ .id = 6, .same = 6, .name = "layer 2" },
		{ .id = 7, .same = 7, .name = "build[3]", .domain = "other" },
		{ .id = 8, .same = 3, .name = "build[1]" }, /* a second id of op 3 */
	};

	model_op_builds(ops, 8);
	ck_assert(!ops[0].has_build);
	ck_assert(!ops[1].has_build && !ops[5].has_build); /* a shorter series */
	ck_assert(ops[2].has_build && ops[2].build == 1);
	ck_assert(ops[3].has_build && ops[3].build == 2);
	ck_assert(ops[4].has_build && ops[4].build == 10);
	ck_assert(!ops[6].has_build); /* another domain */
	ck_assert(!ops[7].has_build); /* events name op 3 */
}
END_TEST

/* ---- grouping, ops ------------------------------------------------------ */

/* One site per (kind, id): two stacks with one user frame are one site;
 * the site's op is the one it allocated most under. */
START_TEST(test_sites_group)
{
	struct model m;
	const struct model_site *s;

	setup(&m);
	alloc_at(&m, 1, 0x1000, 10, 1, SITE_PYTHON, 40, 7);
	alloc_at(&m, 2, 0x2000, 30, 2, SITE_PYTHON, 40, 8);
	alloc_at(&m, 3, 0x3000, 5, 2, SITE_PYTHON, 40, 7);
	alloc_at(&m, 4, 0x4000, 1, 3, SITE_OP, 7, 7);
	alloc_at(&m, 5, 0x5000, 2, 4, SITE_UNSET, 0, 0); /* by its stack */
	model_finish(&m);

	ck_assert_uint_eq(m.n_sites, 3);
	s = site_of(&m, SITE_PYTHON, 40);
	ck_assert_uint_eq(s->total_bytes, 45);
	ck_assert_uint_eq(s->count, 3);
	ck_assert_uint_eq(s->stacks, 2);
	ck_assert_int_eq(s->stack, 1); /* its first allocation's */
	ck_assert(s->has_op);
	ck_assert_int_eq(s->op, 8);
	ck_assert_uint_eq(s->op_bytes, 30);
	s = site_of(&m, SITE_STACK, 4);
	ck_assert(!s->has_op);
	ck_assert_uint_eq(site_of(&m, SITE_OP, 7)->total_bytes, 1);
	/* a stack maps to the site of its first allocation */
	ck_assert_uint_eq(model_site_key(&m, 2), site_of(&m, SITE_PYTHON, 40)->key);
	ck_assert_uint_eq(model_site_key(&m, 99), 0);
	model_fini(&m);
}
END_TEST

START_TEST(test_ops)
{
	struct model m;

	setup(&m);
	alloc_at(&m, 1, 0x1000, 100, 1, SITE_STACK, 1, 7);
	alloc_at(&m, 2, 0x2000, 50, 1, SITE_STACK, 1, 8);
	free_at(&m, 3, 0x1000);
	alloc_at(&m, 4, 0x3000, 20, 1, SITE_STACK, 1, 7);
	alloc_at(&m, 5, 0x4000, 40, 1, SITE_STACK, 1, 0); /* no op */
	model_finish(&m);

	/* peak 150 at t=2: op 7 held 100, op 8 50 */
	ck_assert_uint_eq(m.device.peak_bytes, 150);
	ck_assert_uint_eq(m.n_ops, 2);
	ck_assert_int_eq(m.ops[0].id, 7);
	ck_assert_uint_eq(m.ops[0].at_peak, 100);
	ck_assert_uint_eq(m.ops[0].total_bytes, 120);
	ck_assert_uint_eq(m.ops[0].count, 2);
	ck_assert_uint_eq(m.ops[0].live, 20);
	ck_assert_int_eq(m.ops[1].id, 8);
	ck_assert_uint_eq(m.ops[1].at_peak, 50);
	ck_assert_uint_eq(m.ops[1].live, 50);
	model_fini(&m);
}
END_TEST

/* ---- marks and growth --------------------------------------------------- */

START_TEST(test_marks)
{
	struct model m;
	const struct model_mark *mk;

	setup(&m);
	mark(&m, 1, 100, MARK_USER); /* nothing live */
	alloc_at(&m, 2, 0x1000, 10, 1, SITE_STACK, 1, 0);
	alloc_at(&m, 3, 0x2000, 30, 2, SITE_STACK, 2, 0);
	mark(&m, 4, 101, MARK_USER);
	free_at(&m, 5, 0x2000);
	alloc_at(&m, 6, 0x3000, 5, 3, SITE_STACK, 3, 0); /* born after the mark */
	mark(&m, 7, 102, MARK_INTERNAL);
	model_finish(&m);

	ck_assert_uint_eq(m.n_marks, 3);
	mk = &m.marks[0];
	ck_assert_uint_eq(mk->n_sites, 0);
	ck_assert_uint_eq(m.points[mk->point].live_bytes, 0);
	mk = &m.marks[1];
	ck_assert_uint_eq(m.points[mk->point].live_bytes, 40);
	ck_assert_uint_eq(m.points[mk->point].live_count, 2);
	ck_assert_uint_eq(mk->n_sites, 2);
	ck_assert_int_eq(m.sites[mk->sites[0].site].stack, 2);
	ck_assert_uint_eq(mk->sites[0].bytes, 30);
	ck_assert_uint_eq(mk->sites[1].bytes, 10);
	mk = &m.marks[2];
	ck_assert_int_eq(m.points[mk->point].op, 102);
	ck_assert_uint_eq(mk->n_sites, 2);
	ck_assert_uint_eq(mk->sites[0].bytes, 10);
	ck_assert_uint_eq(mk->sites[1].bytes, 5);
	/* memtrace's own mark is no point of growth: two marks, no third */
	ck_assert_int_eq(m.growth.basis, MODEL_POINT_MARK);
	ck_assert_uint_eq(m.growth.n_points, 2);
	model_fini(&m);
}
END_TEST

static const struct model_growth_site *growth_of(const struct model *m, int64_t stack)
{
	for (size_t i = 0; i < m->growth.n_sites; i++) {
		if (m->sites[m->growth.sites[i].site].stack == stack)
			return &m->growth.sites[i];
	}
	ck_abort_msg("stack %lld not in growth", (long long)stack);
	return NULL;
}

/* Sets what stack s holds: its one block is freed and one of bytes made. */
static void set_live(struct model *m, int64_t t, int s, uint64_t bytes)
{
	static uint64_t blocks[8], next = 0x10000;

	if (blocks[s])
		free_at(m, t, blocks[s]);
	blocks[s] = 0;
	if (bytes) {
		blocks[s] = next += 0x100;
		alloc_at(m, t, blocks[s], bytes, s, SITE_STACK, s, 0);
	}
}

/* A leak every build and one every other build grow; one flat step in
 * four is allowed; a step down, or one rise in four steps, is no growth.
 * per_point is the least-squares slope, rounded half away from zero. */
START_TEST(test_growth_rules)
{
	static const uint64_t want[5][5] = {
		{ 0, 10, 20, 30, 40 }, /* every build: 10 */
		{ 0, 0, 10, 10, 20 },  /* every other build: 5 */
		{ 5, 5, 5, 10, 15 },   /* two rises in four steps: 2.5 -> 3 */
		{ 0, 10, 20, 15, 30 }, /* a step down: 6.5 -> 7 */
		{ 0, 0, 0, 0, 50 },    /* one jump: 10 */
	};
	static const int64_t slope[5] = { 10, 5, 3, 7, 10 };
	static const bool grows[5] = { true, true, true, false, false };
	static const int64_t order[5] = { 1, 2, 3, 5, 4 };
	struct model m;

	setup(&m);
	for (int p = 0; p < 5; p++) {
		for (int s = 0; s < 5; s++)
			set_live(&m, 10 * p + s, s + 1, want[s][p]);
		mark(&m, 10 * p + 9, 200 + p, MARK_USER);
	}
	model_finish(&m);

	ck_assert_int_eq(m.growth.basis, MODEL_POINT_MARK);
	ck_assert_uint_eq(m.growth.n_points, 5);
	ck_assert_uint_eq(m.growth.n_sites, 5);
	for (int s = 0; s < 5; s++) {
		const struct model_growth_site *g = growth_of(&m, s + 1);

		for (int p = 0; p < 5; p++)
			ck_assert_uint_eq(g->live[p], want[s][p]);
		ck_assert_int_eq(g->per_point, slope[s]);
		ck_assert_int_eq(g->growing, grows[s]);
		ck_assert_int_eq(m.sites[m.growth.sites[s].site].stack, order[s]);
	}
	model_fini(&m);
}
END_TEST

/* Two points: never growing; fewer than two of any kind: no basis. */
START_TEST(test_growth_few_points)
{
	struct model m;

	setup(&m);
	set_live(&m, 1, 6, 10);
	mark(&m, 2, 300, MARK_USER);
	set_live(&m, 3, 6, 20);
	mark(&m, 4, 301, MARK_USER);
	model_finish(&m);
	ck_assert_int_eq(m.growth.basis, MODEL_POINT_MARK);
	ck_assert_uint_eq(m.growth.n_sites, 1);
	ck_assert(!m.growth.sites[0].growing);
	ck_assert_int_eq(m.growth.sites[0].per_point, 10);
	model_fini(&m);

	setup(&m);
	set_live(&m, 1, 7, 10);
	mark(&m, 2, 300, MARK_USER);
	model_finish(&m);
	ck_assert_int_eq(m.growth.basis, 0);
	ck_assert_uint_eq(m.growth.n_sites, 0);
	model_fini(&m);
}
END_TEST

/* Past the caps: the sites of the first marks and of the last are kept;
 * growth looks at evenly spaced points, the first and the last among them. */
START_TEST(test_marks_caps)
{
	const size_t n = MODEL_MARK_SNAPSHOTS + 100;
	struct model m;

	setup(&m);
	for (size_t i = 0; i < n; i++) {
		set_live(&m, 10 * (int64_t)i, 1, (i + 1) * 8);
		mark(&m, 10 * (int64_t)i + 1, 1000 + (int64_t)i, MARK_USER);
	}
	model_finish(&m);
	ck_assert_uint_eq(m.n_marks, n);
	ck_assert(m.marks[MODEL_MARK_SNAPSHOTS - 2].has_sites);
	ck_assert(!m.marks[MODEL_MARK_SNAPSHOTS - 1].has_sites);
	ck_assert_uint_eq(m.marks[MODEL_MARK_SNAPSHOTS - 1].n_sites, 0);
	ck_assert(m.marks[n - 1].has_sites);
	ck_assert_uint_eq(m.marks[n - 1].sites[0].bytes, n * 8);
	ck_assert_uint_eq(m.growth.n_points, MODEL_GROWTH_POINTS);
	ck_assert_uint_eq(m.growth.thinned_from, n);
	ck_assert_uint_eq(m.growth.sites[0].live[0], 8);
	ck_assert_uint_eq(m.growth.sites[0].live[MODEL_GROWTH_POINTS - 1], n * 8);
	ck_assert(m.growth.sites[0].growing);
	model_fini(&m);
}
END_TEST

START_TEST(test_growth_ranges)
{
	struct model m;

	setup(&m);
	in_build(&m, 1, 0x1000, 10, 31, 1);
	in_build(&m, 2, 0x2000, 10, 32, 2);
	in_build(&m, 3, 0x3000, 10, 33, 3);
	model_finish(&m);
	/* the end of build 1 at build 2's first event, of 2 at 3's, of 3 at the end */
	ck_assert_int_eq(m.growth.basis, MODEL_POINT_RANGE);
	ck_assert_uint_eq(m.growth.n_points, 3);
	ck_assert_int_eq(m.points[m.growth.points[0]].op, 31);
	ck_assert_uint_eq(m.points[m.growth.points[0]].live_bytes, 10);
	ck_assert_int_eq(m.points[m.growth.points[2]].op, 33);
	ck_assert_uint_eq(m.points[m.growth.points[2]].live_bytes, 30);
	model_fini(&m);

	/* a number seen again: ranges per layer, not per build */
	setup(&m);
	in_build(&m, 1, 0x1000, 10, 31, 1);
	in_build(&m, 2, 0x2000, 10, 32, 2);
	in_build(&m, 3, 0x3000, 10, 31, 1);
	model_finish(&m);
	ck_assert_int_eq(m.growth.basis, 0);
	model_fini(&m);
}
END_TEST

Suite *sites_suite(void)
{
	Suite *s = suite_create("sites");
	TCase *tc = tcase_create("sites");

	tcase_add_test(tc, test_python_user);
	tcase_add_test(tc, test_native_user);
	tcase_add_test(tc, test_user_frames);
	tcase_add_test(tc, test_group_by_names);
	tcase_add_test(tc, test_mark_kinds);
	tcase_add_test(tc, test_op_builds);
	tcase_add_test(tc, test_sites_group);
	tcase_add_test(tc, test_ops);
	tcase_add_test(tc, test_marks);
	tcase_add_test(tc, test_growth_rules);
	tcase_add_test(tc, test_growth_few_points);
	tcase_add_test(tc, test_growth_ranges);
	tcase_add_test(tc, test_marks_caps);
	suite_add_tcase(s, tc);
	return s;
}
