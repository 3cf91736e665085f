/* Escaping of untrusted strings, number formatting, the hash map. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"
#include "util-map.h"
#include "util-mem.h"
#include "util-pickle.h"
#include "util-proto.h"
#include "util-str.h"

typedef void (*escape_fn)(FILE *f, const char *s);

/* Run an escaper into memory; the caller frees the result. */
static char *escaped(escape_fn fn, const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	fn(f, s);
	fclose(f);
	return buf;
}

static void escape_text_80(FILE *f, const char *s)
{
	escape_text(f, s, 80);
}

static void escape_text_8(FILE *f, const char *s)
{
	escape_text(f, s, 8);
}

static void check_escape(escape_fn fn, const char *in, const char *want)
{
	char *got = escaped(fn, in);

	ck_assert_str_eq(got, want);
	free(got);
}

START_TEST(test_json_escape)
{
	check_escape(escape_json, NULL, "null");
	check_escape(escape_json, "", "\"\"");
	check_escape(escape_json, "plain", "\"plain\"");
	check_escape(escape_json, "a\"b\\c/d", "\"a\\\"b\\\\c/d\"");
	check_escape(escape_json, "\n\r\t\b\f", "\"\\n\\r\\t\\b\\f\"");
	check_escape(escape_json, "\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"");
	check_escape(escape_json, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
		     "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
	/* invalid UTF-8 becomes U+FFFD, one per bad byte */
	check_escape(escape_json, "a\xff" "b", "\"a\xef\xbf\xbd" "b\"");
	check_escape(escape_json, "\xc3", "\"\xef\xbf\xbd\"");			/* truncated */
	check_escape(escape_json, "\xc0\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\""); /* overlong */
	check_escape(escape_json, "\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""); /* surrogate */
	check_escape(escape_json, "\xf4\x90\x80\x80",
		     "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""); /* > U+10FFFF */
}
END_TEST

/* escape_json_mem, which takes eight plain bytes a step, writes what
 * escape_json writes, whichever byte of a step needs escaping. */
START_TEST(test_json_escape_mem)
{
	static const char *const odd[] = { "\"", "\\", "\n", "\x01", "\x1f", "\x7f",
					   "\xc3\xa9", "\xe2\x82\xac", "\xff", "\xc3" };

	for (size_t k = 0; k < sizeof(odd) / sizeof(odd[0]); k++) {
		for (size_t at = 0; at <= 20; at++) {
			char in[64], out[ESCAPE_JSON_MAX(sizeof(in))];
			char *want, *end;

			snprintf(in, sizeof(in), "%.*s%s%.*s", (int)at, "abcdefghijklmnopqrstu", odd[k],
				 (int)(20 - at), "ABCDEFGHIJKLMNOPQRSTU");
			want = escaped(escape_json, in);
			end = escape_json_mem(out, in, strlen(in));
			*end = 0;
			ck_assert_str_eq(out, want);
			free(want);
		}
	}
}
END_TEST

START_TEST(test_html_escape)
{
	check_escape(escape_html, "<script>alert('x&y')</script>\"",
		     "&lt;script&gt;alert(&#39;x&amp;y&#39;)&lt;/script&gt;&quot;");
	check_escape(escape_html, "a\x1b[31mb\xfe", "a\xef\xbf\xbd[31mb\xef\xbf\xbd");
	check_escape(escape_html, NULL, "");
}
END_TEST

START_TEST(test_text_escape)
{
	check_escape(escape_text_80, "red \x1b[31m\x07 ok \xc2\x9b", "red ?[31m? ok ?");
	check_escape(escape_text_80, "bad \xff", "bad \xef\xbf\xbd");
	check_escape(escape_text_8, "12345678", "12345678");
	check_escape(escape_text_8, "123456789", "12345...");
	/* cut on code points, never inside a UTF-8 sequence */
	check_escape(escape_text_8, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9",
		     "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9...");
	ck_assert_uint_eq(text_width("\xc3\xa9x\xff"), 3);
}
END_TEST

START_TEST(test_fmt_size)
{
	static const struct {
		uint64_t bytes;
		const char *want;
	} cases[] = {
		{ 0, "0 B" },
		{ 1023, "1023 B" },
		{ 1024, "1.0 KiB" },
		{ 1536, "1.5 KiB" },
		{ 96ull << 20, "96.0 MiB" },
		{ (1ull << 30) - 1, "1.0 GiB" },
		{ 1012ull << 20, "1012.0 MiB" },
		{ 1ull << 30, "1.0 GiB" },
		{ 3ull << 40, "3.0 TiB" },
		{ UINT64_MAX, "16.0 EiB" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_str_eq(fmt_size(cases[i].bytes).s, cases[i].want);
	}
}
END_TEST

START_TEST(test_fmt_seconds)
{
	ck_assert_str_eq(fmt_seconds(1234567890).s, "1.234 s");
	ck_assert_str_eq(fmt_seconds(0).s, "0.000 s");
	ck_assert_str_eq(fmt_seconds(-1500000000).s, "-1.500 s");
	ck_assert_str_eq(fmt_seconds(INT64_MIN).s, "-9223372036.854 s");
	ck_assert_str_eq(path_basename("/a/b/c.so"), "c.so");
	ck_assert_str_eq(path_basename("c.so"), "c.so");
}
END_TEST

/* Random inserts and removes against a plain array, keys colliding on
 * purpose (multiples of a power of two) to exercise backward shifts. */
/* The CUDA toolkit's headers, wherever the toolkit is; never a user's
 * file that merely has "cuda" in its path. */
START_TEST(test_cuda_header)
{
	static const char *const yes[] = {
		"/usr/local/cuda/include/cuda_runtime.h",
		"/usr/local/cuda-13.0/targets/x86_64-linux/include/crt/host_runtime.h",
		"/opt/cuda-12.4/include/thrust/detail/vector.inl",
		"/usr/local/cuda/include/cub/device/device_reduce.cuh",
		"/venv/lib/python3.11/site-packages/nvidia/cuda_runtime/include/driver_types.h",
		"cuda_runtime_api.h",
		"/somewhere/else/cuda_runtime.h",
	};
	static const char *const no[] = {
		"/src/app/cuda_kernels.cu",
		"/home/u/cudaproj/include/model.h",
		"/home/u/cuda/src/model.cc",
		"/home/u/cuda-samples/Samples/streamOrderedAllocation.cu",
		"/usr/include/stdio.h",
		"",
	};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		ck_assert_msg(path_is_cuda_header(yes[i]), "%s", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		ck_assert_msg(!path_is_cuda_header(no[i]), "%s", no[i]);
	ck_assert(!path_is_cuda_header(NULL));
}
END_TEST

/* The pickle writer's bytes, opcode by opcode (Lib/pickletools.py):
 * {"a": 1, "b": [2, 300, 70000, -1, 2**40, 2**63], "c": "\u00e9\ufffd",
 *  "d": {"a": True, "p": (0, 7)}, "e": None, "f": False} */
START_TEST(test_pickle)
{
	static const char a[] = "a", b[] = "b", c[] = "c", d[] = "d", e[] = "e", f[] = "f";
	static const unsigned char want[] = {
		0x80, 4, '}', '(',
		0x8c, 1, 'a', 0x94, 'K', 1,
		0x8c, 1, 'b', 0x94, ']', '(', 'K', 2, 'M', 0x2c, 0x01, 'J', 0x70, 0x11, 0x01, 0x00,
		'J', 0xff, 0xff, 0xff, 0xff, 0x8a, 6, 0, 0, 0, 0, 0, 1,
		0x8a, 9, 0, 0, 0, 0, 0, 0, 0, 0x80, 0, 'e',
		0x8c, 1, 'c', 0x94, 0x8c, 5, 0xc3, 0xa9, 0xef, 0xbf, 0xbd,
		0x8c, 1, 'd', 0x94, '}', '(', 'h', 0, 0x88, 0x8c, 1, 'p', 'K', 0, 'K', 7, 0x86, 'u',
		0x8c, 1, 'e', 0x94, 'N', 0x8c, 1, 'f', 0x94, 0x89,
		'u', '.',
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct pickle p;

	ck_assert_ptr_nonnull(out);
	pickle_begin(&p, out);
	pickle_dict(&p);
	pickle_key(&p, a);
	pickle_int(&p, 1);
	pickle_key(&p, b);
	pickle_list(&p);
	pickle_int(&p, 2);
	pickle_int(&p, 300);
	pickle_int(&p, 70000);
	pickle_int(&p, -1);
	pickle_uint(&p, 1ull << 40);
	pickle_uint(&p, 1ull << 63);
	pickle_close_list(&p);
	pickle_key(&p, c);
	pickle_str(&p, "\xc3\xa9\xff"); /* the invalid byte becomes U+FFFD */
	pickle_key(&p, d);
	pickle_dict(&p);
	pickle_key(&p, a); /* memoized: BINGET 0 */
	pickle_bool(&p, true);
	pickle_str(&p, "p");
	pickle_int_pair(&p, 0, 7);
	pickle_close_dict(&p);
	pickle_key(&p, e);
	pickle_none(&p);
	pickle_key(&p, f);
	pickle_bool(&p, false);
	pickle_close_dict(&p);
	pickle_end(&p);
	fclose(out);
	ck_assert_uint_eq(len, sizeof(want));
	ck_assert_mem_eq(buf, want, sizeof(want));
	free(buf);
}
END_TEST

/* Protocol buffer varints and fields: the encoding examples of the
 * protobuf documentation (150 -> 08 96 01) and a nested, packed field. */
START_TEST(test_proto)
{
	struct proto b = { 0 }, inner = { 0 };
	static const uint64_t packed[] = { 3, 270, 86942 };
	static const uint8_t want[] = {
		0x08, 0x96, 0x01,			 /* field 1 = 150 */
		0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, /* 2 = -1 */
		0x1a, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g', /* 3 = "testing" */
		0x22, 0x08, 0x2a, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05, /* 4 = { 5: [3, 270, 86942] } */
		0x28, 0x00,				 /* 5 = 0 */
	};

	proto_uint(&b, 1, 150);
	proto_int(&b, 2, -1);
	proto_str(&b, 3, "testing");
	proto_packed(&inner, 5, packed, 3);
	proto_msg(&b, 4, &inner);
	proto_uint(&b, 5, 0);
	ck_assert_uint_eq(b.len, sizeof(want));
	ck_assert_mem_eq(b.data, want, sizeof(want));
	proto_free(&b);
	proto_free(&inner);
}
END_TEST

START_TEST(test_map_random)
{
	enum { N = 4096 };
	static uint64_t ref[N];
	static bool present[N];
	struct map m;
	unsigned seed = 12345;

	map_init(&m, sizeof(uint64_t));
	memset(present, 0, sizeof(present));
	for (int round = 0; round < 200000; round++) {
		size_t k = (size_t)rand_r(&seed) % N;
		uint64_t key = (uint64_t)k << 20, out = 0;

		if (rand_r(&seed) % 3) {
			*(uint64_t *)xmap_put(&m, key, NULL) = ref[k] = (uint64_t)round;
			present[k] = true;
		} else {
			ck_assert(map_remove(&m, key, &out) == present[k]);
			if (present[k])
				ck_assert_uint_eq(out, ref[k]);
			present[k] = false;
		}
	}
	size_t count = 0;
	for (size_t k = 0; k < N; k++) {
		uint64_t *v = map_get(&m, (uint64_t)k << 20);

		ck_assert(!!v == present[k]);
		if (v)
			ck_assert_uint_eq(*v, ref[k]);
		count += present[k];
	}
	ck_assert_uint_eq(m.len, count);
	size_t seen = 0;
	for (size_t pos = 0; map_next(&m, &pos, NULL, NULL);)
		seen++;
	ck_assert_uint_eq(seen, count);
	/* any 64-bit key works, 0 and all-ones included */
	*(uint64_t *)xmap_put(&m, 0, NULL) = 7;
	*(uint64_t *)xmap_put(&m, UINT64_MAX, NULL) = 8;
	ck_assert_uint_eq(*(uint64_t *)map_get(&m, 0), 7);
	ck_assert_uint_eq(*(uint64_t *)map_get(&m, UINT64_MAX), 8);
	map_fini(&m);
}
END_TEST

Suite *util_suite(void)
{
	Suite *s = suite_create("util");
	TCase *tc = tcase_create("util");

	tcase_add_test(tc, test_json_escape);
	tcase_add_test(tc, test_json_escape_mem);
	tcase_add_test(tc, test_html_escape);
	tcase_add_test(tc, test_text_escape);
	tcase_add_test(tc, test_fmt_size);
	tcase_add_test(tc, test_fmt_seconds);
	tcase_add_test(tc, test_map_random);
	tcase_add_test(tc, test_cuda_header);
	tcase_add_test(tc, test_pickle);
	tcase_add_test(tc, test_proto);
	suite_add_tcase(s, tc);
	return s;
}
