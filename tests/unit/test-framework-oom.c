/* framework-oom.c: the BFC allocator's "ran out of memory" line, as XLA
 * 0.10 (JAX) writes it on stderr, read into the request and the device;
 * anything else is not one. */
#include <check.h>
#include <string.h>

#include "frameworks.h"

/* One fwrite of absl's, as jax 0.10.2 printed it on the simulated device. */
static const char xla_line[] =
	"W1203 07:19:15.938552   15743 bfc_allocator.cc:514] Allocator (GPU_0_bfc) ran out of "
	"memory trying to allocate 1.00GiB (rounded to 1073741824)requested by op \n";

static bool parse(const char *text, uint64_t *bytes, int *device)
{
	return mt_bfc_oom_parse(text, strlen(text), bytes, device);
}

START_TEST(xla_line_read)
{
	uint64_t bytes = 0;
	int device = 7;
	ck_assert(parse(xla_line, &bytes, &device));
	ck_assert_uint_eq(bytes, 1073741824u);
	ck_assert_int_eq(device, 0);
}
END_TEST

START_TEST(device_from_name)
{
	uint64_t bytes = 0;
	int device = 0;
	ck_assert(parse("Allocator (GPU_12_bfc) ran out of memory trying to allocate 2.0KiB "
			"(rounded to 2048)requested by op MatMul\n",
			&bytes, &device));
	ck_assert_uint_eq(bytes, 2048);
	ck_assert_int_eq(device, 12);
	ck_assert(parse("Allocator (gpu_host_bfc) ran out of memory trying to allocate 1.0KiB "
			"(rounded to 1024)requested by op \n",
			&bytes, &device));
	ck_assert_int_eq(device, -1);
}
END_TEST

START_TEST(not_the_line)
{
	uint64_t bytes = 0;
	int device = 0;
	ck_assert(!parse("", &bytes, &device));
	ck_assert(!parse("memtrace: out of memory: cudaMalloc of 1.0 GiB failed\n", &bytes, &device));
	/* the summary that follows the line, and the line without its size */
	ck_assert(!parse("If the cause is memory fragmentation maybe the environment variable "
			 "'TF_GPU_ALLOCATOR=cuda_malloc_async' will improve the situation.\n",
			 &bytes, &device));
	ck_assert(!parse("Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.00GiB\n",
			 &bytes, &device));
	ck_assert(!parse("Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.00GiB "
			 "(rounded to 0)requested by op\n",
			 &bytes, &device));
	/* a length that stops inside the number reads only what is there */
	ck_assert(mt_bfc_oom_parse(xla_line, strstr(xla_line, "741824") - xla_line, &bytes,
				   &device));
	ck_assert_uint_eq(bytes, 1073);
}
END_TEST

/* XLA's exception message: the size as tsl writes it for people (three
 * figures, a binary unit) or in bytes; anything else is not it. */
static bool raised(const char *text, uint64_t *bytes, bool *exact)
{
	return mt_xla_oom_parse(text, strlen(text), bytes, exact);
}

START_TEST(xla_exception_read)
{
	uint64_t bytes = 0;
	bool exact = true;
	ck_assert(raised("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 3.44GiB. "
			 "[tf-allocator-allocation-error=''] [executable_name='jit_step']",
			 &bytes, &exact));
	ck_assert_uint_eq(bytes, 3693671875u); /* 3.44 x 2^30, to the byte */
	ck_assert(!exact);
	ck_assert(raised("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 512B.", &bytes,
			 &exact));
	ck_assert_uint_eq(bytes, 512);
	ck_assert(exact);
	ck_assert(raised("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 3698532352 "
			 "bytes.",
			 &bytes, &exact));
	ck_assert_uint_eq(bytes, 3698532352u);
	ck_assert(exact);
	ck_assert(raised("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1.50MiB.", &bytes,
			 &exact));
	ck_assert_uint_eq(bytes, 1572864);
	/* not it: another error, no size, no unit, a size past 64 bits */
	ck_assert(!raised("INTERNAL: Out of memory while trying to allocate 3.44GiB.", &bytes,
			  &exact));
	ck_assert(!raised("RESOURCE_EXHAUSTED: Out of memory while trying to allocate ", &bytes,
			  &exact));
	ck_assert(!raised("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 3.44.", &bytes,
			  &exact));
	ck_assert(!raised("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 99999999EiB.",
			  &bytes, &exact));
	ck_assert(!raised("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 16.00EiB.",
			  &bytes, &exact));
	ck_assert(!mt_xla_oom_parse(NULL, 0, &bytes, &exact));
}
END_TEST

/* TensorFlow's ResourceExhaustedError: the tensor it names, its elements
 * times its type's bytes; no shape, or a type not known, is not it. */
static bool tf_raised(const char *text, uint64_t *bytes)
{
	return mt_tf_oom_parse(text, strlen(text), bytes);
}

START_TEST(tf_exception_read)
{
	uint64_t bytes = 0;
	ck_assert(tf_raised("{{function_node __inference_multi_step_on_iterator_453}} OOM when "
			    "allocating tensor with shape[200000,1024] and type float on "
			    "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
			    &bytes));
	ck_assert_uint_eq(bytes, 200000ull * 1024 * 4);
	ck_assert(tf_raised("OOM when allocating tensor with shape[8,3,224,224] and type half on "
			    "/job:localhost",
			    &bytes));
	ck_assert_uint_eq(bytes, 8ull * 3 * 224 * 224 * 2);
	ck_assert(tf_raised("OOM when allocating tensor with shape[1000] and type complex128 ",
			    &bytes));
	ck_assert_uint_eq(bytes, 16000);
	ck_assert(tf_raised("OOM when allocating tensor with shape[] and type int64 on", &bytes));
	ck_assert_uint_eq(bytes, 8);
	/* not it: no tensor named, a type not known, an empty or endless
	 * shape, a size past 64 bits */
	ck_assert(!tf_raised("SameWorkerRecvDone unable to allocate output tensor.", &bytes));
	ck_assert(!tf_raised("OOM when allocating tensor with shape[10,10] and type string on",
			     &bytes));
	ck_assert(!tf_raised("OOM when allocating tensor with shape[10,0] and type float on", &bytes));
	ck_assert(!tf_raised("OOM when allocating tensor with shape[10,,2] and type float on",
			     &bytes));
	ck_assert(!tf_raised("OOM when allocating tensor with shape[10,2", &bytes));
	ck_assert(!tf_raised("OOM when allocating tensor with shape[4294967296,4294967296] and type "
			     "float on",
			     &bytes));
	ck_assert(!tf_raised("OOM when allocating tensor with shape[12345678901234567890] and type "
			     "int8 on",
			     &bytes));
	ck_assert(!mt_tf_oom_parse(NULL, 0, &bytes));
}
END_TEST

Suite *framework_oom_suite(void);
Suite *framework_oom_suite(void)
{
	Suite *s = suite_create("framework-oom");
	TCase *tc = tcase_create("bfc");
	tcase_add_test(tc, xla_line_read);
	tcase_add_test(tc, device_from_name);
	tcase_add_test(tc, not_the_line);
	tcase_add_test(tc, xla_exception_read);
	tcase_add_test(tc, tf_exception_read);
	suite_add_tcase(s, tc);
	return s;
}
