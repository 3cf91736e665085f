/* XLA's adapter (JAX's): its BFC allocator's out-of-memory failure, which
 * no CUDA call reports. jaxlib's BFC allocator is its own, not exported:
 * what shows is the warning it logs on stderr, one fwrite per line,
 * before it returns the failure (framework-oom.c has the line and why it
 * is the evidence). A write to stderr that is that line becomes an OOM
 * event of the pseudo-API BFCAllocator, with the request's bytes, this
 * thread's stack (the Python frames of the code that asked, when it is a
 * Python thread) and the device's free memory, committed before the
 * allocator returns, as for a CUDA OOM (record.c, rule 6). TensorFlow's
 * BFC allocator logs the same line; its failing call is seen first
 * (tensorflow.c, whose row comes before this one), and the line is then
 * that call's.
 *
 * A program that silences the log (TF_CPP_MIN_LOG_LEVEL=2) has no such
 * line; the same failure then shows as the exception XLA raises into
 * Python: jaxlib sets it with PyErr_SetObject(type, message), which
 * resolves to this library's (hook-log.c). Its message (framework-oom.c)
 * becomes the same OOM event, the request to the three figures the
 * message gives. One failure, one event: an exception after a logged
 * line is that line's failure. */
#include "frameworks.h"
#include "python.h"

static bool stderr_line(const char *text, size_t len)
{
	uint64_t bytes;
	int device;
	if (!mt_bfc_oom_parse(text, len, &bytes, &device))
		return false;
	if (!mt_enter())
		return true;
	atomic_fetch_add_explicit(&mt_bfc_unmatched, 1, memory_order_relaxed);
	mt_bfc_oom(bytes);
	return true;
}

static bool raised(const void *type, const void *value)
{
	char text[160];
	uint64_t bytes;
	bool exact;
	(void)type;
	int n = mt_python_str(value, text, sizeof(text));
	if (n <= 0 || !mt_xla_oom_parse(text, (size_t)n, &bytes, &exact))
		return false;
	if (atomic_exchange_explicit(&mt_bfc_unmatched, 0, memory_order_relaxed))
		return true; /* the line came first: recorded then, exactly */
	if (!mt_enter())
		return true;
	mt_bfc_oom(bytes);
	return true;
}

const struct mt_framework mt_framework_xla = { .stderr_line = stderr_line, .raised = raised };
