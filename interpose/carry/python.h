/* Python frames of the calling thread, read without the GIL from the
 * thread's own frame chain, spliced into its native stack where the
 * interpreter's frames are. See python.c. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "core.h" /* a Python frame's token: MT_PYFRAME_BIT */

/* Once, when the trace starts (and again, cheaply, until an interpreter is
 * found: Python may be loaded late by an embedding program). */
void mt_python_init(void);

/* ips[0..n) are native return addresses, innermost first. Replaces the
 * interpreter's evaluation frames with the Python frames they run, in
 * place, keeping at most max entries. Returns the new count. Without
 * Python in the process, or on a thread with no Python state, returns n
 * unchanged. Hot path: no locks, no allocation, no GIL, no refcounts. */
unsigned mt_python_splice(uintptr_t *ips, unsigned n, unsigned max);

/* Frames borrowed from the thread that launched the work
 * (python-launch.c). This thread's innermost Python frame: 0 when it has
 * none (no Python state, no frame, or Python finalizing). */
uintptr_t mt_python_this_frame(void);
/* ips[0..n) are the native frames of a thread with no Python frame:
 * appends marker (MT_LAUNCH_FRAME), then the Python frames from frame
 * down, another thread's, which must not return past frame during the
 * call. Keeps at most max entries; returns the new count (n unchanged
 * when frame has no Python frame to give). */
unsigned mt_python_splice_borrowed(uintptr_t *ips, unsigned n, unsigned max, uintptr_t marker,
				   uintptr_t frame);

/* python-launch.c: a thread entering a framework that may run its work
 * on threads of its own (TensorFlow's TFE_Execute) publishes its Python
 * frames until it leaves; calls nest. */
void mt_launch_enter(void);
void mt_launch_leave(void);
/* The calling thread is a framework's worker: it runs work launched by a
 * thread inside, and its Python frames, when it has any, are a callback
 * of that work (torch's autograd device threads: torch-autograd.c). */
void mt_launch_worker(void);
/* After mt_python_splice: on a thread with no Python frame (or on a
 * worker), while exactly one thread is inside, that thread's Python
 * frames after a marker (mt_python_splice_borrowed). Else n unchanged. */
unsigned mt_launch_splice(uintptr_t *ips, unsigned n, unsigned max);

/* The first cap - 1 bytes of the str object obj (or of an exception
 * object's first argument, when that is a str) as UTF-8, NUL-terminated,
 * read as the frames are (no Python code runs): the length, or -1 when
 * obj is neither or Python is not read here. */
int mt_python_str(const void *obj, char *out, unsigned cap);
/* The same for the first str among the first four items of the tuple
 * obj; -1 when obj is no tuple or has none. */
int mt_python_tuple_str(const void *obj, char *out, unsigned cap);
/* The type object type's name is name (a class's bare name, as
 * "ResourceExhaustedError"); false when Python is not read here. */
bool mt_python_type_named(const void *type, const char *name);

/* The interpreter's own definition of a function this library also
 * exports (PyErr_SetObject: hook-log.c): the next one in the global
 * scope, else a libpython3.* loaded privately; NULL when none. */
void *mt_python_real(const char *name);

/* Writer side: what a token stands for. The strings live as long as the
 * process. */
bool mt_python_frame(uintptr_t token, const char **function, const char **file,
		     unsigned *line);
