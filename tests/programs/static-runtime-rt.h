/* The tiny CUDA runtime that static-runtime carries inside itself, the
 * way a program linked with libcudart_static.a (CuPy >= 13, nvcc's
 * default) does: see static-runtime-rt.c. Functions return 0 on success,
 * else the driver's CUresult. */
#pragma once

#include <stddef.h>

typedef struct CUstream_st *srt_stream;

/* static-runtime-rt.c */
int srt_init(void);
int srt_stream_create(srt_stream *stream);
int srt_malloc(void **ptr, size_t size);
int srt_free(void *ptr);
int srt_malloc_async(void **ptr, size_t size, srt_stream stream);
int srt_free_async(void *ptr, srt_stream stream);
