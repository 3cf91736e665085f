/* sql-load DB SQLFILE [--keep-wal]: build a trace from its SQL text (the
 * golden and bad-input tests), without needing the sqlite3 shell.
 * --keep-wal leaves the database in WAL mode with the data still in the
 * -wal file, as a trace looks while its program is running. */
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return NULL;
	do {
		if (len + 4096 + 1 > cap) {
			cap = (cap + 4096) * 2;
			buf = realloc(buf, cap);
			if (!buf)
				exit(1);
		}
		n = fread(buf + len, 1, 4096, f);
		len += n;
	} while (n > 0);
	fclose(f);
	buf[len] = '\0';
	return buf;
}

int main(int argc, char **argv)
{
	bool keep_wal = argc > 3 && strcmp(argv[3], "--keep-wal") == 0;
	sqlite3 *db;
	char *sql, *err = NULL;

	if (argc < 3) {
		fprintf(stderr, "usage: sql-load DB SQLFILE [--keep-wal]\n");
		return 2;
	}
	sql = slurp(argv[2]);
	if (!sql) {
		perror(argv[2]);
		return 1;
	}
	if (sqlite3_open(argv[1], &db) != SQLITE_OK ||
	    (keep_wal && sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0",
				      NULL, NULL, &err) != SQLITE_OK) ||
	    sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "sql-load: %s: %s\n", argv[2], err ? err : sqlite3_errmsg(db));
		return 1;
	}
	free(sql);
	/* exiting without closing leaves the -wal (and -shm) behind */
	if (keep_wal)
		_exit(0);
	sqlite3_close(db);
	return 0;
}
