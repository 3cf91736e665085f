/* The witnesses (layer 6, interpose/hooks/): what the wrappers share
 * beyond hook-real.h and hook-common.h. See core/core.h. */
#pragma once

#include "frameworks.h"
#include "record.h"

/* ---- hook-fd.c: close, close_range, closefrom, dup2, dup3, pipe, pipe2 ---- */
/* Finds the real functions (called at load). */
void mt_hook_fd_init(void);
