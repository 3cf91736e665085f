/* A table's rows in the order of its key (trace-rows.h): seq for allocs
 * and frees, id for sites and frames; "seq" below is either. SQLite's row
 * interface costs about 170 ns a row of allocs or frees here, seven times
 * what decoding the same cells from the page costs; so where the file is
 * known to hold exactly what SQLite would read, the table's b-tree is
 * walked and its leaf cells decoded here (the format:
 * https://www.sqlite.org/fileformat2.html, "B-tree Pages" and "Record
 * Format"). The rule is that the rows are SQLite's own, whichever way they
 * are read:
 * - the pages are read only when SQLite reads the main file alone: no
 *   -wal or -journal with data beside it (or the -wal ignored, as SQLite
 *   ignores it when opened immutable); the read transaction trace_open
 *   began keeps the file as it is (a checkpoint waits for readers of the
 *   main file);
 * - a cell this file does not decode (an overflow page, a value that is
 *   not an integer, a record shorter than the table) is read through
 *   SQLite by its seq;
 * - anything unexpected in the tree (a page of the wrong type, an offset
 *   out of the page, seqs out of order, a tree too deep) hands the rest
 *   of the table to SQLite, after the last seq given out, so a damaged
 *   file fails as SQLite fails on it. */
#include "trace-rows.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace-lookup.h"
#include "util-mem.h"

/* SQLite's own limit on the depth of a b-tree (BTCURSOR_MAX_DEPTH) */
#define MAX_DEPTH 20

/* Room past the end of a page's buffer: read_in_order loads 8 bytes for
 * an integer of any size. */
#define PAGE_SLACK 8

enum { PAGE_TABLE_INTERIOR = 5, PAGE_TABLE_LEAF = 13 };

struct level {
	uint8_t *page;
	uint32_t hdr; /* offset of the page header: 100 on page 1, else 0 */
	uint32_t n, next; /* cells, and the next child to visit (n: the right-most) */
};

struct trace_rows_pages {
	int fd;
	uint32_t page_size, usable, n_pages, root;
	/* the record field of each column: field[0] is seq's (NULL in the
	 * record: the rowid stands for it) */
	uint32_t field[TRACE_ROWS_MAX + 1];
	uint32_t n_fields; /* the record must have at least this many */
	bool in_order;	   /* field[i] is i: the columns are the record's first */
	bool utf8;	   /* texts are UTF-8, as sqlite3_column_text gives them */
	struct level up[MAX_DEPTH]; /* interior pages from the root down */
	size_t depth;
	bool started;
	uint8_t *leaf;
	const uint8_t *cells; /* the leaf's cell pointers */
	uint32_t leaf_n;
	/* the rows of the leaf, decoded at once (stride bytes apart), and
	 * the next to give; bad: after them the tree is not as it should be */
	unsigned char *block;
	size_t stride, n_block, cap_block, pos;
	bool bad;
	bool any;	 /* a row was decoded */
	int64_t last; /* the seq of the last */
};

/* The bytes of a row of n columns after the key. */
static size_t row_size(size_t n)
{
	return sizeof(struct trace_row) + (n + 1) * sizeof(int64_t);
}

/* ---- SQLite's rows ---------------------------------------------------- */

static int sql_start(struct trace *t, struct trace_rows *r)
{
	_autofree_ char *sql = r->delivered ? xasprintf("SELECT %s FROM %s WHERE %s > ? ORDER BY %s",
							r->columns, r->table, r->key, r->key)
					    : xasprintf("SELECT %s FROM %s ORDER BY %s", r->columns,
							r->table, r->key);

	if (trace_prepare(t, r->table, sql, &r->s) < 0)
		return -1;
	if (r->delivered)
		sqlite3_bind_int64(r->s, 1, r->last_seq);
	return 0;
}

/* len bytes of text, and a NUL, into r's strings: their offset. */
static int64_t keep_text(struct trace_rows *r, const void *text, size_t len)
{
	size_t at = r->n_strings;

	grow_array(&r->strings, &r->cap_strings, at + len + 1, 1);
	memcpy(r->strings + at, text, len);
	r->strings[at + len] = '\0';
	r->n_strings = at + len + 1;
	return (int64_t)at;
}

static void sql_columns(struct trace_rows *r, struct trace_row *row, sqlite3_stmt *s,
			size_t first)
{
	for (size_t i = first; i <= r->n; i++) {
		int col = (int)(i - first);
		int type = sqlite3_column_type(s, col);

		row->null |= (uint32_t)(type == SQLITE_NULL) << i;
		if (r->text >> i & 1) {
			const unsigned char *text = sqlite3_column_text(s, col);

			row->v[i] = text ? keep_text(r, text, strlen((const char *)text)) : 0;
			continue;
		}
		row->v[i] = sqlite3_column_int64(s, col);
		row->other |= (uint32_t)(type != SQLITE_NULL && type != SQLITE_INTEGER) << i;
	}
}

static int sql_next(struct trace *t, struct trace_rows *r)
{
	int rc = sqlite3_step(r->s);

	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return trace_step_failed(t, r->table);
	r->sql_row->null = r->sql_row->other = 0;
	r->n_strings = 0; /* the previous row's */
	sql_columns(r, r->sql_row, r->s, 0);
	r->row = r->sql_row;
	r->from_sql++;
	return 1;
}

/* A row of the pages that only SQLite reads: its columns by its seq. */
static int lookup_row(struct trace *t, struct trace_rows *r, struct trace_row *row, int64_t seq)
{
	int rc;

	if (!r->lookup) {
		_autofree_ char *sql = xasprintf("SELECT %s FROM %s WHERE %s = ?",
						 strchr(r->columns, ',') + 1, r->table, r->key);

		if (trace_prepare(t, r->table, sql, &r->lookup) < 0)
			return -1;
	}
	sqlite3_bind_int64(r->lookup, 1, seq);
	rc = sqlite3_step(r->lookup);
	if (rc == SQLITE_ROW) {
		row->null = row->other = 0;
		row->v[0] = seq;
		sql_columns(r, row, r->lookup, 1);
	}
	sqlite3_reset(r->lookup);
	if (rc != SQLITE_ROW)
		return trace_step_failed(t, r->table);
	r->row_lookups++;
	return 1;
}

/* ---- the pages -------------------------------------------------------- */

static uint32_t get16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A varint at p, not reading at or past end; NULL when it does not fit. */
static inline const uint8_t *varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;

	if (p < end && !(p[0] & 0x80)) { /* the common case: one byte */
		*v = p[0];
		return p + 1;
	}
	for (int i = 0; i < 8; i++, p++) {
		if (p >= end)
			return NULL;
		x = x << 7 | (*p & 0x7f);
		if (!(*p & 0x80)) {
			*v = x;
			return p + 1;
		}
	}
	if (p >= end)
		return NULL;
	*v = x << 8 | *p;
	return p + 1;
}

/* The bytes of a value of serial type st in the record's body (10 and 11
 * are reserved: never in a sound record). */
static inline uint64_t serial_len(uint64_t st)
{
	static const uint8_t sizes[] = { 0, 1, 2, 3, 4, 6, 8, 8, 0, 0 };

	return st >= 12 ? (st - 12) / 2 : st < 10 ? sizes[st] : 0;
}

/* v, n bits wide, sign-extended: (v ^ m) - m, with m its top bit */
static inline int64_t sign_extend(uint64_t v, unsigned bits)
{
	int64_t m = (int64_t)1 << (bits - 1);

	return (int64_t)v - (int64_t)(v & (uint64_t)m) * 2;
}

/* The integer of serial type st (0-6, 8, 9: 0 for NULL) at p, which holds
 * serial_len(st) bytes: big-endian two's complement. */
static inline int64_t int_value(const uint8_t *p, uint64_t st)
{
	switch (st) {
	case 1: return sign_extend(p[0], 8);
	case 2: return sign_extend(get16(p), 16);
	case 3: return sign_extend((uint64_t)get16(p) << 8 | p[2], 24);
	case 4: return sign_extend(get32(p), 32);
	case 5: return sign_extend((uint64_t)get16(p) << 32 | get32(p + 2), 48);
	case 6: return (int64_t)((uint64_t)get32(p) << 32 | get32(p + 4));
	case 9: return 1;
	}
	return 0; /* NULL (0) and 8 */
}

static bool read_page(struct trace_rows_pages *pg, uint32_t pgno, uint8_t *buf)
{
	ssize_t got;

	if (pgno < 1 || pgno > pg->n_pages)
		return false;
	got = pread(pg->fd, buf, pg->page_size, (off_t)(pgno - 1) * pg->page_size);
	return got == (ssize_t)pg->page_size;
}

/* The page's type, cell count and header offset, if it is a sound table
 * page: NULL-free header and cell pointers within the usable part. */
static bool page_shape(const struct trace_rows_pages *pg, const uint8_t *page, uint32_t pgno,
		       int *type, uint32_t *hdr, uint32_t *n)
{
	uint32_t h = pgno == 1 ? 100 : 0, size;

	*type = page[h];
	if (*type != PAGE_TABLE_LEAF && *type != PAGE_TABLE_INTERIOR)
		return false;
	size = *type == PAGE_TABLE_LEAF ? 8 : 12;
	*n = get16(page + h + 3);
	*hdr = h;
	return h + size + 2 * *n <= pg->usable;
}

/* Go down from page pgno (read into the level's or the leaf's buffer) to
 * the first leaf; false when the tree is not as it should be. */
static bool descend(struct trace_rows_pages *pg, uint32_t pgno)
{
	for (;;) {
		struct level *l;
		uint32_t hdr, n;
		int type;

		if (!read_page(pg, pgno, pg->leaf) || !page_shape(pg, pg->leaf, pgno, &type, &hdr, &n))
			return false;
		if (type == PAGE_TABLE_LEAF) {
			pg->cells = pg->leaf + hdr + 8;
			pg->leaf_n = n;
			return true;
		}
		if (pg->depth == MAX_DEPTH)
			return false;
		l = &pg->up[pg->depth++];
		if (!l->page)
			l->page = xmalloc(pg->page_size);
		memcpy(l->page, pg->leaf, pg->page_size);
		*l = (struct level){ .page = l->page, .hdr = hdr, .n = n };
		/* the first child: the left pointer of cell 0, or the right-most */
		if (n && get16(l->page + hdr + 12) + 4 > pg->usable)
			return false;
		pgno = n ? get32(l->page + get16(l->page + hdr + 12)) : get32(l->page + hdr + 8);
		l->next = 1;
	}
}

/* The next leaf in key order: 1, 0 after the last, -1 when the tree is
 * not as it should be. */
static int next_leaf(struct trace_rows_pages *pg)
{
	if (!pg->started) {
		pg->started = true;
		return descend(pg, pg->root) ? 1 : -1;
	}
	while (pg->depth) {
		struct level *l = &pg->up[pg->depth - 1];
		uint32_t child, off;

		if (l->next > l->n) {
			pg->depth--;
			continue;
		}
		if (l->next < l->n) {
			off = get16(l->page + l->hdr + 12 + 2 * l->next);
			if (off + 4 > pg->usable)
				return -1;
			child = get32(l->page + off);
		} else {
			child = get32(l->page + l->hdr + 8);
		}
		l->next++;
		return descend(pg, child) ? 1 : -1;
	}
	return 0;
}

enum cell { CELL_ROW, CELL_LOOKUP, CELL_BAD };

/* The bytes of a value of one-byte serial type st, for read_in_order:
 * integers (1-6), NULL (0) and the constants 0 and 1 (8, 9); anything
 * else is TYPE_OTHER, for read_record. */
#define TYPE_OTHER 0x80
static const uint8_t int_type_len[256] = {
	[0] = 0, [1] = 1, [2] = 2, [3] = 3, [4] = 4, [5] = 6, [6] = 8,
	[7] = TYPE_OTHER, [8] = 0, [9] = 0, [10 ... 255] = TYPE_OTHER,
};

/* The value of those types (0-6, 8, 9) from the 8 bytes at its place,
 * big-endian: shifted down to its bytes with their sign, masked (nothing
 * of NULL and the constants) and the constant added, with no branch. */
static const struct {
	uint8_t len, shift;
	int64_t mask, constant;
} int_type[10] = {
	[0] = { 0, 0, 0, 0 },	  [1] = { 1, 56, -1, 0 }, [2] = { 2, 48, -1, 0 },
	[3] = { 3, 40, -1, 0 },	  [4] = { 4, 32, -1, 0 }, [5] = { 6, 16, -1, 0 },
	[6] = { 8, 0, -1, 0 },	  [8] = { 0, 0, 0, 0 },	  [9] = { 0, 0, 0, 1 },
};

/* The record at p (size bytes) into r the short way, or false to take
 * read_record's: the columns are the record's first fields, its header
 * is one byte long and their serial types one byte each, integers or
 * NULL (what the writer's rows are). seq must be NULL (the rowid). The
 * types are checked first and the values then read without a check
 * each; inline with n known (read_in_order), the loops unroll. */
static inline __attribute__((always_inline)) bool
read_in_order_n(size_t n, struct trace_row *r, const uint8_t *p, uint64_t size)
{
	const uint8_t *types = p + 2, *body;
	unsigned any_other = 0;
	uint64_t total = 0;
	uint32_t null = 0;

	if (p[0] >= 0x80 || p[0] < n + 2 || p[0] > size || p[1] != 0)
		return false;
	body = p + p[0];
	for (size_t col = 0; col < n; col++) {
		unsigned len = int_type_len[types[col]];

		any_other |= len;
		total += len;
	}
	if ((any_other & TYPE_OTHER) || total > (uint64_t)(p + size - body))
		return false;
	for (size_t col = 0; col < n; col++) {
		unsigned st = types[col];
		uint64_t be;

		/* big-endian two's complement, len bytes: the top of an 8-byte
		 * load, shifted down with its sign (PAGE_SLACK: in the buffer) */
		memcpy(&be, body, sizeof(be));
		be = __builtin_bswap64(be);
		r->v[col + 1] = ((int64_t)be >> int_type[st].shift & int_type[st].mask) |
				int_type[st].constant;
		null |= (uint32_t)(st == 0) << (col + 1);
		body += int_type[st].len;
	}
	r->null = null;
	r->other = 0;
	return true;
}

/* The allocs table's 4 columns and the frees table's 3 (trace-read.c)
 * with n a constant. */
static inline bool read_in_order(size_t n, struct trace_row *r, const uint8_t *p, uint64_t size)
{
	switch (n) {
	case 3: return read_in_order_n(3, r, p, size);
	case 4: return read_in_order_n(4, r, p, size);
	default: return read_in_order_n(n, r, p, size);
	}
}

/* The columns of a record (at p, size bytes) into r: CELL_LOOKUP when
 * SQLite must read them. */
static enum cell read_record(struct trace_rows *rows, size_t n, struct trace_row *r,
			     const uint8_t *p, uint64_t size)
{
	const struct trace_rows_pages *pg = rows->pages;
	const uint8_t *end = p + size, *types, *body;
	uint64_t hl, st, len;
	size_t col = 0;

	if (pg->in_order && size > 0 && read_in_order(n, r, p, size))
		return CELL_ROW;
	types = varint(p, end, &hl);
	if (!types || hl > size || hl < (uint64_t)(types - p))
		return CELL_BAD;
	body = p + hl;
	r->null = r->other = 0;
	for (uint32_t field = 0; col <= n; field++) {
		if (types >= p + hl)
			return CELL_LOOKUP; /* fewer fields than columns: their defaults */
		types = varint(types, p + hl, &st);
		if (!types || st == 10 || st == 11)
			return CELL_BAD;
		len = serial_len(st);
		if (len > (uint64_t)(end - body))
			return CELL_BAD;
		if (field == pg->field[col]) {
			if (col == 0 && st != 0)
				return CELL_BAD; /* seq is in the record: it is not the rowid */
			if (rows->text >> col & 1) {
				/* a text as it is (UTF-8: header_agrees), NULL as
				 * NULL; anything else SQLite converts */
				if (st != 0 && (st < 13 || st % 2 == 0))
					return CELL_LOOKUP;
				r->v[col] = st ? keep_text(rows, body, len) : 0;
				r->null |= (uint32_t)(st == 0) << col;
				col++;
				body += len;
				continue;
			}
			if (st == 7 || st >= 12)
				return CELL_LOOKUP; /* a real, a text or a blob: SQLite converts */
			if (col > 0) {
				r->v[col] = int_value(body, st);
				r->null |= (uint32_t)(st == 0) << col;
			}
			col++;
		}
		body += len;
	}
	return CELL_ROW;
}

/* Leaf cell i into r (CELL_ROW), or only its seq (CELL_LOOKUP), or
 * CELL_BAD. */
static enum cell read_cell(struct trace_rows *rows, size_t n, struct trace_row *r, uint32_t i,
			   int64_t *seq)
{
	const struct trace_rows_pages *pg = rows->pages;
	const uint8_t *end = pg->leaf + pg->usable, *p;
	uint32_t off = get16(pg->cells + 2 * i);
	uint64_t payload, rowid;

	if (off < (uint32_t)(pg->cells - pg->leaf) + 2 * pg->leaf_n || off >= pg->usable)
		return CELL_BAD;
	p = varint(pg->leaf + off, end, &payload);
	if (!p || !(p = varint(p, end, &rowid)))
		return CELL_BAD;
	*seq = (int64_t)rowid;
	if (payload > pg->usable - 35) /* the rest is on overflow pages */
		return CELL_LOOKUP;
	if (payload > (uint64_t)(end - p))
		return CELL_BAD;
	r->v[0] = (int64_t)rowid;
	return read_record(rows, n, r, p, payload);
}

static void pages_free(struct trace_rows_pages *pg)
{
	if (!pg)
		return;
	if (pg->fd >= 0)
		close(pg->fd);
	for (size_t i = 0; i < MAX_DEPTH; i++)
		free(pg->up[i].page);
	free(pg->leaf);
	free(pg->block);
	free(pg);
}

/* The pages gave up: SQLite reads the rest, after the last seq given. */
static int hand_over(struct trace *t, struct trace_rows *r)
{
	pages_free(r->pages);
	r->pages = NULL;
	r->from_sql_after_pages = true;
	if (sql_start(t, r) < 0)
		return -1;
	return sql_next(t, r);
}

/* Cell i of the leaf as the next row of the block: 1, 0 when the tree is
 * not as it should be from there on, -1 when SQLite failed. */
static int decode_cell(struct trace *t, struct trace_rows *r, uint32_t i)
{
	struct trace_rows_pages *pg = r->pages;
	struct trace_row *row = (struct trace_row *)(pg->block + pg->n_block * pg->stride);
	enum cell c = read_cell(r, r->n, row, i, &row->v[0]);

	/* seqs only go up: else the tree is damaged */
	if (c == CELL_BAD || (pg->any && row->v[0] <= pg->last))
		return 0;
	if (c == CELL_LOOKUP && lookup_row(t, r, row, row->v[0]) < 0)
		return -1;
	r->from_pages += c == CELL_ROW;
	pg->any = true;
	pg->last = row->v[0];
	pg->n_block++;
	return 1;
}

/* The leaf's cells from i on into the block the short way, as
 * decode_cell would give them, up to the first that is not a cell of one
 * byte of payload size whose record read_in_order reads (decode_cell
 * takes that one, whatever it is): the next cell's index. Inline with n
 * known (fast_cells), the layers of decode_cell, read_cell and
 * read_record and their checks of what n and in_order already say are
 * not paid per row. */
static inline __attribute__((always_inline)) uint32_t
fast_cells_n(size_t n, struct trace_rows *r, uint32_t i)
{
	struct trace_rows_pages *pg = r->pages;
	const uint8_t *leaf = pg->leaf, *end = leaf + pg->usable;
	uint32_t lo = (uint32_t)(pg->cells - leaf) + 2 * pg->leaf_n;

	for (; i < pg->leaf_n; i++) {
		struct trace_row *row = (struct trace_row *)(pg->block + pg->n_block * pg->stride);
		uint32_t off = get16(pg->cells + 2 * i);
		const uint8_t *p;
		uint64_t payload, rowid;

		if (off < lo || off >= pg->usable || (leaf[off] & 0x80) || leaf[off] == 0)
			break;
		payload = leaf[off];
		p = varint(leaf + off + 1, end, &rowid);
		if (!p || payload > (uint64_t)(end - p) ||
		    (pg->any && (int64_t)rowid <= pg->last) ||
		    !read_in_order_n(n, row, p, payload))
			break;
		row->v[0] = (int64_t)rowid;
		r->from_pages++;
		pg->any = true;
		pg->last = (int64_t)rowid;
		pg->n_block++;
	}
	return i;
}

/* fast_cells_n for the allocs table's 4 columns and the frees table's 3
 * (read_in_order's), else i: none, nor after a cell that was not as it
 * should be. */
static uint32_t fast_cells(struct trace_rows *r, uint32_t i)
{
	if (!r->pages->in_order || r->pages->bad)
		return i;
	switch (r->n) {
	case 3: return fast_cells_n(3, r, i);
	case 4: return fast_cells_n(4, r, i);
	}
	return i;
}

/* The rows of the next leaf with rows: 1, 0 after the last leaf, -1 when
 * SQLite failed, -2 when the tree is not as it should be. */
static int fill_block(struct trace *t, struct trace_rows *r)
{
	struct trace_rows_pages *pg = r->pages;
	int rc;

	pg->n_block = pg->pos = 0;
	r->n_strings = 0; /* the previous leaf's texts */
	while (pg->n_block == 0) {
		if (pg->bad || (rc = next_leaf(pg)) < 0)
			return -2;
		if (rc == 0)
			return 0;
		grow_array(&pg->block, &pg->cap_block, pg->leaf_n, pg->stride);
		for (uint32_t i = fast_cells(r, 0); i < pg->leaf_n && !pg->bad;
		     i = fast_cells(r, i + 1)) {
			rc = decode_cell(t, r, i);
			if (rc < 0)
				return -1;
			pg->bad = rc == 0;
		}
	}
	return 1;
}

static int pages_next(struct trace *t, struct trace_rows *r)
{
	struct trace_rows_pages *pg = r->pages;

	if (pg->pos == pg->n_block) {
		switch (fill_block(t, r)) {
		case 0: return 0;
		case -1: return -1;
		case -2: return hand_over(t, r);
		}
	}
	r->row = (const struct trace_row *)(pg->block + pg->pos++ * pg->stride);
	return 1;
}

const struct trace_row *trace_rows_ahead(const struct trace_rows *r, size_t k)
{
	const struct trace_rows_pages *pg = r->pages;

	return pg && pg->pos + k - 1 < pg->n_block
		       ? (const struct trace_row *)(pg->block + (pg->pos + k - 1) * pg->stride)
		       : NULL;
}

/* ---- when the pages may be read -------------------------------------- */

static bool sidecar_has_data(const char *path, const char *suffix)
{
	_autofree_ char *side = xasprintf("%s%s", path, suffix);
	struct stat st;

	return stat(side, &st) == 0 && st.st_size > 0;
}

static bool query_int(sqlite3 *db, const char *sql, const char *arg, int64_t *out)
{
	sqlite3_stmt *s = NULL;
	bool ok = false;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return false;
	if (arg)
		sqlite3_bind_text(s, 1, arg, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) == SQLITE_INTEGER) {
		*out = sqlite3_column_int64(s, 0);
		ok = true;
	}
	sqlite3_finalize(s);
	return ok;
}

/* The file's header says what SQLite's connection sees: its page size,
 * page count and schema cookie. */
static bool header_agrees(struct trace *t, struct trace_rows_pages *pg)
{
	uint8_t h[100];
	int64_t size, count, cookie;
	struct stat st;

	if (pread(pg->fd, h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h, "SQLite format 3", 16) != 0 || fstat(pg->fd, &st) < 0)
		return false;
	pg->page_size = get16(h + 16) == 1 ? 65536 : get16(h + 16);
	pg->usable = pg->page_size - h[20];
	if (!query_int(t->db, "PRAGMA page_size", NULL, &size) ||
	    !query_int(t->db, "PRAGMA page_count", NULL, &count) ||
	    !query_int(t->db, "PRAGMA schema_version", NULL, &cookie))
		return false;
	if (size != pg->page_size || pg->page_size < 512 || pg->usable < 480 || count < 1 ||
	    count > UINT32_MAX || (uint32_t)cookie != get32(h + 40) ||
	    st.st_size < count * (int64_t)pg->page_size)
		return false;
	pg->n_pages = (uint32_t)count;
	pg->utf8 = get32(h + 56) == 1; /* the text encoding */
	return true;
}

/* key is the rowid (an INTEGER PRIMARY KEY: no index of its own, no
 * other key column), no column is generated, and each column named has a
 * record field. */
static bool columns_agree(struct trace *t, struct trace_rows_pages *pg, const char *table,
			  const char *key, const char *const *cols, size_t n)
{
	sqlite3_stmt *s = NULL;
	int64_t autoindex = 0;
	bool ok = true;
	size_t found = 0;

	if (query_int(t->db, "SELECT count(*) FROM pragma_index_list(?) WHERE origin = 'pk'", table,
		      &autoindex) == false ||
	    autoindex != 0)
		return false;
	if (sqlite3_prepare_v2(t->db, "SELECT cid, name, type, pk, hidden FROM pragma_table_xinfo(?)",
			       -1, &s, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC);
	while (ok && sqlite3_step(s) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(s, 1);
		const char *type = (const char *)sqlite3_column_text(s, 2);
		int64_t cid = sqlite3_column_int64(s, 0);
		bool is_seq = name && strcmp(name, key) == 0;

		ok = sqlite3_column_int64(s, 4) == 0 && cid >= 0 && cid < 1000 &&
		     (sqlite3_column_int64(s, 3) != 0) == is_seq &&
		     (!is_seq || (type && strcasecmp(type, "INTEGER") == 0));
		for (size_t i = 0; ok && name && i <= n; i++) {
			if (strcmp(name, i ? cols[i - 1] : key) == 0) {
				pg->field[i] = (uint32_t)cid;
				found |= (size_t)1 << i;
			}
		}
	}
	sqlite3_finalize(s);
	if (!ok || found != ((size_t)1 << (n + 1)) - 1)
		return false;
	for (size_t i = 1; i <= n; i++) /* read in record order */
		if (pg->field[i] <= pg->field[i - 1])
			return false;
	pg->n_fields = pg->field[n] + 1;
	pg->in_order = pg->field[n] == n;
	return true;
}

/* The pages of table, or NULL when SQLite must read it. */
static struct trace_rows_pages *pages_open(struct trace *t, const char *table, const char *key,
					   const char *const *cols, size_t n, uint32_t text)
{
	struct trace_rows_pages *pg = xcalloc(1, sizeof(*pg));
	int64_t root = 0;

	pg->fd = -1;
	if ((!t->immutable && sidecar_has_data(t->path, "-wal")) ||
	    sidecar_has_data(t->path, "-journal"))
		goto no;
	pg->fd = open(t->path, O_RDONLY | O_CLOEXEC);
	if (pg->fd < 0 || !header_agrees(t, pg) ||
	    !query_int(t->db, "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?",
		       table, &root) ||
	    root < 1 || root > pg->n_pages || !columns_agree(t, pg, table, key, cols, n) ||
	    (text && !pg->utf8))
		goto no;
	pg->in_order = pg->in_order && !text; /* read_in_order reads no text */
	pg->root = (uint32_t)root;
	pg->leaf = xcalloc(1, pg->page_size + PAGE_SLACK);
	pg->stride = row_size(n);
	return pg;
no:
	pages_free(pg);
	return NULL;
}

/* ---- the rows --------------------------------------------------------- */

int trace_rows_open(struct trace_rows *r, struct trace *t, const char *table, const char *key,
		    const char *const *cols, size_t n, uint32_t text, bool pages)
{
	char *columns = xstrdup(key);

	*r = (struct trace_rows){ .table = table, .key = key, .n = n, .text = text << 1 };
	if (n > TRACE_ROWS_MAX) {
		free(columns);
		return trace_fail(t, "memtrace report reads at most %d columns a table (a bug)",
			    TRACE_ROWS_MAX);
	}
	for (size_t i = 0; i < n; i++) {
		char *longer = xasprintf("%s, %s", columns, cols[i]);

		free(columns);
		columns = longer;
	}
	r->columns = columns;
	r->sql_row = xcalloc(1, row_size(n));
	r->pages = pages ? pages_open(t, table, key, cols, n, text) : NULL;
	return r->pages ? 0 : sql_start(t, r);
}

const char *trace_rows_text(const struct trace_rows *r, const struct trace_row *row, size_t col)
{
	return row->null >> col & 1 ? NULL : r->strings + row->v[col];
}

int trace_rows_next(struct trace *t, struct trace_rows *r)
{
	int rc = r->pages ? pages_next(t, r) : sql_next(t, r);

	if (rc == 1) {
		r->delivered = true;
		r->last_seq = r->row->v[0];
	}
	return rc;
}

void trace_rows_close(struct trace_rows *r)
{
	sqlite3_finalize(r->s);
	sqlite3_finalize(r->lookup);
	pages_free(r->pages);
	free(r->columns);
	free(r->sql_row);
	free(r->strings);
	*r = (struct trace_rows){ 0 };
}
