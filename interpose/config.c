/* Settings from the environment, read once in the library constructor
 * (before the program can change its environment). A bad value gets one
 * message and the default; the program runs on. See docs/usage.md. */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MT_DEFAULT_OUTPUT "memtrace-%p.db"
#define MT_DEFAULT_DEPTH 64
#define MT_MAX_DEPTH 256

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

void mt_config_load(struct mt_config *cfg, mt_getenv_fn get)
{
	cfg->quiet = parse_bool("MEMTRACE_QUIET", get("MEMTRACE_QUIET"), false);
	mt_log_set_quiet(cfg->quiet);
	cfg->depth = parse_depth(get("MEMTRACE_DEPTH"));
	cfg->follow = parse_bool("MEMTRACE_FOLLOW", get("MEMTRACE_FOLLOW"), true);
	snprintf(cfg->rank, sizeof(cfg->rank), "%s", mt_config_rank(get));
	parse_output(get("MEMTRACE_OUTPUT"), cfg->output, sizeof(cfg->output));
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
