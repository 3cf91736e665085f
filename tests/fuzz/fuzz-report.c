/* fuzz-report: a libFuzzer target for the reporter. Each input becomes a
 * trace file and memtrace-report's own main() (report/main.c, compiled
 * with -Dmain=memtrace_report_main) renders it in every format, as a user
 * running `memtrace report` on a trace someone sent them would.
 *
 * An input is either the bytes of a database file or, when it starts with
 * the line "-- sql", SQL text run into a fresh database (so mutations reach
 * the schema and the values, not only the pages). The SQL step is bounded:
 * 1 MiB strings, 16 MiB of pages, a budget of virtual machine steps.
 *
 * Every run must end with status 0 or 1, and a report must keep what each
 * format promises (check-corpus.py checks the same on the seed corpus):
 * JSON and Perfetto output is valid JSON; every output is valid UTF-8; the
 * marker "<mt-" never appears unescaped in HTML; text and folded output
 * hold no control character but newline and tab. A broken promise aborts,
 * which libFuzzer reports with the input. Hangs and memory are bounded by
 * libFuzzer's -timeout and -rss_limit_mb (tests/fuzz/run-fuzz.sh). */
#include <sanitizer/common_interface_defs.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int memtrace_report_main(int argc, char **argv);
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

extern int optind;

static char dir[256], db[300], out[300];

static const char *const formats[] = { "text", "json", "html", "folded", "perfetto" };

/* ---- oracles ---- */

/* Said through the sanitizer's report descriptor: libFuzzer's
 * -close_fd_mask=2 silences the reporter's stderr, not that. */
static void broken(const char *format, const char *why)
{
	char msg[256];
	snprintf(msg, sizeof(msg), "fuzz-report: --format %s: %s", format, why);
	__sanitizer_report_error_summary(msg);
	abort();
}

static bool utf8_valid(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t len;
		uint32_t cp, min;
		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xe0) == 0xc0) {
			len = 2, cp = c & 0x1f, min = 0x80;
		} else if ((c & 0xf0) == 0xe0) {
			len = 3, cp = c & 0x0f, min = 0x800;
		} else if ((c & 0xf8) == 0xf0) {
			len = 4, cp = c & 0x07, min = 0x10000;
		} else {
			return false;
		}
		if (i + len > n)
			return false;
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

struct json {
	const char *p, *end;
	int depth;
};

static bool json_value(struct json *j);

static void json_ws(struct json *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
		j->p++;
}

static bool json_string(struct json *j)
{
	if (j->p >= j->end || *j->p != '"')
		return false;
	for (j->p++; j->p < j->end;) {
		unsigned char c = (unsigned char)*j->p++;
		if (c == '"')
			return true;
		if (c < 0x20)
			return false;
		if (c != '\\')
			continue;
		if (j->p >= j->end)
			return false;
		c = (unsigned char)*j->p++;
		if (c == 'u') {
			for (int k = 0; k < 4; k++, j->p++)
				if (j->p >= j->end || !strchr("0123456789abcdefABCDEF", *j->p) || !*j->p)
					return false;
		} else if (!strchr("\"\\/bfnrt", c) || !c) {
			return false;
		}
	}
	return false;
}

static bool json_digits(struct json *j)
{
	const char *start = j->p;
	while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
		j->p++;
	return j->p > start;
}

static bool json_number(struct json *j)
{
	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p < j->end && *j->p == '0')
		j->p++;
	else if (!json_digits(j))
		return false;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (!json_digits(j))
			return false;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (!json_digits(j))
			return false;
	}
	return true;
}

static bool json_word(struct json *j, const char *w)
{
	size_t n = strlen(w);
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n))
		return false;
	j->p += n;
	return true;
}

/* [ values ] or { "key": value, ... } */
static bool json_container(struct json *j, char close, bool object)
{
	if (++j->depth > 512)
		return false;
	j->p++;
	json_ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		j->depth--;
		return true;
	}
	for (;;) {
		json_ws(j);
		if (object) {
			if (!json_string(j))
				return false;
			json_ws(j);
			if (j->p >= j->end || *j->p++ != ':')
				return false;
		}
		if (!json_value(j))
			return false;
		json_ws(j);
		if (j->p >= j->end)
			return false;
		char c = *j->p++;
		if (c == close)
			break;
		if (c != ',')
			return false;
	}
	j->depth--;
	return true;
}

static bool json_value(struct json *j)
{
	json_ws(j);
	if (j->p >= j->end)
		return false;
	switch (*j->p) {
	case '{': return json_container(j, '}', true);
	case '[': return json_container(j, ']', false);
	case '"': return json_string(j);
	case 't': return json_word(j, "true");
	case 'f': return json_word(j, "false");
	case 'n': return json_word(j, "null");
	default: return json_number(j);
	}
}

static bool json_valid(const char *s, size_t n)
{
	struct json j = { s, s + n, 0 };
	if (!json_value(&j))
		return false;
	json_ws(&j);
	return j.p == j.end;
}

static void check_output(const char *format)
{
	FILE *f = fopen(out, "rb");
	if (!f)
		broken(format, "status 0 and no output file");
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		abort();
	fclose(f);
	buf[n] = '\0';
	if (!utf8_valid((const unsigned char *)buf, (size_t)n))
		broken(format, "invalid UTF-8 in the output");
	if (!strcmp(format, "json") || !strcmp(format, "perfetto")) {
		if (!json_valid(buf, (size_t)n))
			broken(format, "the output is not valid JSON");
	} else if (!strcmp(format, "html")) {
		if (memmem(buf, (size_t)n, "<mt-", 4))
			broken(format, "the marker <mt- is unescaped in the HTML");
	} else {
		for (long i = 0; i < n; i++) {
			unsigned char c = (unsigned char)buf[i];
			if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
				broken(format, "a control character in the output");
		}
	}
	free(buf);
}

/* ---- the input as a database ---- */

static int budget_left;

static int out_of_budget(void *arg)
{
	(void)arg;
	return --budget_left < 0;
}

static void from_sql(const uint8_t *data, size_t size)
{
	sqlite3 *d;
	char *sql = malloc(size + 1);

	if (!sql)
		abort();
	memcpy(sql, data, size);
	sql[size] = '\0';
	if (sqlite3_open_v2(db, &d, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) == SQLITE_OK) {
		sqlite3_limit(d, SQLITE_LIMIT_LENGTH, 1 << 20);
		sqlite3_limit(d, SQLITE_LIMIT_ATTACHED, 0);
		budget_left = 20000; /* x 1000 virtual machine steps */
		sqlite3_progress_handler(d, 1000, out_of_budget, NULL);
		sqlite3_exec(d, "PRAGMA max_page_count = 4096; PRAGMA synchronous = OFF", NULL, NULL,
			     NULL);
		sqlite3_exec(d, sql, NULL, NULL, NULL);
	}
	sqlite3_close(d);
	free(sql);
}

static void from_bytes(const uint8_t *data, size_t size)
{
	FILE *f = fopen(db, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		abort();
}

static void clear(void)
{
	static const char *const suffixes[] = { "", "-wal", "-shm", "-journal" };
	char path[320];

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", db, suffixes[i]);
		unlink(path);
	}
	unlink(out);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	(void)argc, (void)argv;
	snprintf(dir, sizeof(dir), "%s/memtrace-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		abort();
	snprintf(db, sizeof(db), "%s/t.db", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	/* the reporter must not reach out to the network */
	unsetenv("DEBUGINFOD_URLS");
	unsetenv("MEMTRACE_DEBUGINFOD");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	clear();
	if (size >= 7 && !memcmp(data, "-- sql\n", 7))
		from_sql(data + 7, size - 7);
	else
		from_bytes(data, size);
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		char *argv[] = { "memtrace-report", db,	  "--format", (char *)formats[i],
				 "-o",		    out,  "--weight", "peak",
				 NULL };
		int argc = !strcmp(formats[i], "folded") ? 8 : 6;
		argv[argc] = NULL;
		optind = 0; /* getopt starts over */
		int rc = memtrace_report_main(argc, argv);
		if (rc != 0 && rc != 1)
			broken(formats[i], "exit status neither 0 nor 1");
		if (rc == 0)
			check_output(formats[i]);
		unlink(out);
	}
	clear();
	return 0;
}
