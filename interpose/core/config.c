/* Settings from the environment, read once in the library constructor
 * (before the program can change its environment). A bad value gets one
 * message and the default; the program runs on. See docs/usage.md. */
#include "core.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MT_DEFAULT_OUTPUT "memtrace-%p.db"
#define MT_DEFAULT_DEPTH 64
#define MT_MAX_DEPTH 256
#define MT_DEFAULT_FLIGHT (64ull << 20)

static int parse_depth(const char *s)
{
	if (!s || !*s)
		return MT_DEFAULT_DEPTH;
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < 1 || v > MT_MAX_DEPTH) {
		mt_log(MT_USER, "MEMTRACE_DEPTH=%.64s is not a number from 1 to %d; using %d", s,
		       MT_MAX_DEPTH, MT_DEFAULT_DEPTH);
		return MT_DEFAULT_DEPTH;
	}
	return (int)v;
}

static bool parse_bool(const char *name, const char *s, bool def)
{
	if (!s || !*s)
		return def;
	if (!strcmp(s, "0") || !strcmp(s, "no") || !strcmp(s, "false"))
		return false;
	if (!strcmp(s, "1") || !strcmp(s, "yes") || !strcmp(s, "true"))
		return true;
	mt_log(MT_USER, "%s=%.64s is not 0 or 1; using %d", name, s, def);
	return def;
}

static void parse_output(const char *s, char *out, size_t outsz)
{
	if (!s || !*s)
		s = MT_DEFAULT_OUTPUT;
	if (strlen(s) >= outsz) {
		mt_log(MT_USER, "MEMTRACE_OUTPUT is longer than %zu bytes; using %s", outsz - 1,
		       MT_DEFAULT_OUTPUT);
		s = MT_DEFAULT_OUTPUT;
	}
	snprintf(out, outsz, "%s", s);
}

/* MEMTRACE_FLIGHT: a size (bytes, or with K, M, G: KiB, MiB, GiB; an
 * optional "iB" or "B" after), 1/yes/true for the default, 0/no/false or
 * unset for the full trace. */
static uint64_t parse_flight(const char *s)
{
	if (!s || !*s || !strcmp(s, "0") || !strcmp(s, "no") || !strcmp(s, "false"))
		return 0;
	if (!strcmp(s, "1") || !strcmp(s, "yes") || !strcmp(s, "true"))
		return MT_DEFAULT_FLIGHT;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (shift && (!strcmp(end, "iB") || !strcmp(end, "B")))
		end += strlen(end);
	else if (!shift && !strcmp(end, "B"))
		end++;
	if (errno || end == s || *end || *s == '-' || v > (UINT64_MAX >> 30)) {
		mt_log(MT_USER, "MEMTRACE_FLIGHT=%.64s is not a size such as 64M or 1G; using 64M",
		       s);
		return MT_DEFAULT_FLIGHT;
	}
	v <<= shift;
	if (v < MT_FLIGHT_MIN) {
		mt_log(MT_USER, "MEMTRACE_FLIGHT=%.64s is less than the 1M it needs at least; "
				"using 1M",
		       s);
		return MT_FLIGHT_MIN;
	}
	return v;
}

static void parse_report(const char *s, char *out, size_t outsz)
{
	out[0] = '\0';
	if (!s || !*s || !strcmp(s, "0") || !strcmp(s, "no"))
		return;
	if (!strcmp(s, "text") || !strcmp(s, "json") || !strcmp(s, "html")) {
		snprintf(out, outsz, "%s", s);
		return;
	}
	mt_log(MT_USER, "MEMTRACE_REPORT_AT_EXIT=%.64s is not text, json or html; no report at "
			"exit",
	       s);
}

void mt_config_load(struct mt_config *cfg, mt_getenv_fn get)
{
	cfg->quiet = parse_bool("MEMTRACE_QUIET", get("MEMTRACE_QUIET"), false);
	mt_log_set_quiet(cfg->quiet);
	cfg->depth = parse_depth(get("MEMTRACE_DEPTH"));
	cfg->follow = parse_bool("MEMTRACE_FOLLOW", get("MEMTRACE_FOLLOW"), true);
	cfg->what_fits = parse_bool("MEMTRACE_WHAT_FITS", get("MEMTRACE_WHAT_FITS"), false);
	cfg->tensors = parse_bool("MEMTRACE_TENSORS", get("MEMTRACE_TENSORS"), true);
	snprintf(cfg->rank, sizeof(cfg->rank), "%s", mt_config_rank(get));
	parse_output(get("MEMTRACE_OUTPUT"), cfg->output, sizeof(cfg->output));
	cfg->flight = parse_flight(get("MEMTRACE_FLIGHT"));
	parse_report(get("MEMTRACE_REPORT_AT_EXIT"), cfg->report_at_exit,
		     sizeof(cfg->report_at_exit));
}

const char *mt_config_rank(mt_getenv_fn get)
{
	static const char *const vars[] = { "RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID" };
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = get(vars[i]);
		if (v && *v)
			return v;
	}
	return "0";
}

/* Host names and ranks come from the environment and end up in a file
 * name: keep only characters that cannot climb out of the directory. */
static size_t append_safe(char *out, size_t pos, size_t outsz, const char *s)
{
	for (; *s && pos + 1 < outsz; s++) {
		char c = *s;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
		out[pos++] = ok ? c : '_';
	}
	return pos;
}

/* Expands %p (pid), %h (host), %r (rank) and %% in pattern. Returns 0, or
 * -1 when the result does not fit or the pattern has an unknown %x. */
int mt_config_expand_output(const char *pattern, pid_t pid, const char *host, const char *rank,
			    char *out, size_t outsz)
{
	size_t pos = 0;
	char num[24];
	for (const char *p = pattern; *p; p++) {
		if (pos + 1 >= outsz)
			return -1;
		if (*p != '%') {
			out[pos++] = *p;
			continue;
		}
		switch (*++p) {
		case 'p':
			snprintf(num, sizeof(num), "%d", (int)pid);
			pos = append_safe(out, pos, outsz, num);
			break;
		case 'h':
			pos = append_safe(out, pos, outsz, host);
			break;
		case 'r':
			pos = append_safe(out, pos, outsz, rank);
			break;
		case '%':
			out[pos++] = '%';
			break;
		default:
			return -1;
		}
		if (pos + 1 >= outsz)
			return -1;
	}
	out[pos] = '\0';
	return 0;
}
