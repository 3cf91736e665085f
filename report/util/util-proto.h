/* Protocol buffers, the wire format only (varints, tags, length-delimited
 * fields), into a growable buffer: enough to write pprof's profile.proto
 * (render-pprof.c) without a protobuf library. A nested message is built
 * in a buffer of its own and appended with proto_msg(). */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct proto {
	uint8_t *data;
	size_t len, cap;
};

void proto_free(struct proto *b);
void proto_reset(struct proto *b);

/* Field `field` as a varint (uint64, int64 as two's complement, bool). */
void proto_uint(struct proto *b, unsigned field, uint64_t v);
void proto_int(struct proto *b, unsigned field, int64_t v);
/* Length-delimited: bytes, a string, a nested message. */
void proto_bytes(struct proto *b, unsigned field, const void *data, size_t n);
void proto_str(struct proto *b, unsigned field, const char *s);
void proto_msg(struct proto *b, unsigned field, const struct proto *msg);
/* Fields already encoded (messages built apart), appended as they are. */
void proto_append(struct proto *b, const struct proto *fields);
/* A packed repeated varint field. */
void proto_packed(struct proto *b, unsigned field, const uint64_t *v, size_t n);
