/* See util-proto.h. Wire types: 0 varint, 2 length-delimited. */
#include "util-proto.h"

#include <stdlib.h>
#include <string.h>

#include "util-mem.h"

void proto_free(struct proto *b)
{
	free(b->data);
	*b = (struct proto){ 0 };
}

void proto_reset(struct proto *b)
{
	b->len = 0;
}

static void put(struct proto *b, const void *data, size_t n)
{
	grow_array(&b->data, &b->cap, b->len + n, 1);
	memcpy(b->data + b->len, data, n);
	b->len += n;
}

static void varint(struct proto *b, uint64_t v)
{
	uint8_t out[10];
	size_t n = 0;

	do {
		out[n] = v & 0x7f;
		v >>= 7;
		if (v)
			out[n] |= 0x80;
		n++;
	} while (v);
	put(b, out, n);
}

static void tag(struct proto *b, unsigned field, unsigned wire)
{
	varint(b, (uint64_t)field << 3 | wire);
}

void proto_uint(struct proto *b, unsigned field, uint64_t v)
{
	tag(b, field, 0);
	varint(b, v);
}

void proto_int(struct proto *b, unsigned field, int64_t v)
{
	proto_uint(b, field, (uint64_t)v);
}

void proto_bytes(struct proto *b, unsigned field, const void *data, size_t n)
{
	tag(b, field, 2);
	varint(b, n);
	if (n)
		put(b, data, n);
}

void proto_str(struct proto *b, unsigned field, const char *s)
{
	proto_bytes(b, field, s ? s : "", s ? strlen(s) : 0);
}

void proto_msg(struct proto *b, unsigned field, const struct proto *msg)
{
	proto_bytes(b, field, msg->data, msg->len);
}

void proto_append(struct proto *b, const struct proto *fields)
{
	if (fields->len)
		put(b, fields->data, fields->len);
}

void proto_packed(struct proto *b, unsigned field, const uint64_t *v, size_t n)
{
	struct proto inner = { 0 };

	for (size_t i = 0; i < n; i++)
		varint(&inner, v[i]);
	proto_msg(b, field, &inner);
	proto_free(&inner);
}
