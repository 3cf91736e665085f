"""Marks and flushes for Python programs traced by memtrace.

    import memtrace                    # pip install memtrace-cuda, or put
                                       # scripts/python on sys.path
    memtrace.mark("build 3")           # a named point in the trace
    with memtrace.marked("epoch 2"):   # the same mark, when the block ends
        train_one_epoch()
    memtrace.flush()                   # everything so far is in the trace

All of them do nothing (and cost next to nothing) when the program runs
without memtrace: the functions are looked up in the running process, where
libmemtrace.so puts them only when it is preloaded. The command line
(memtrace run, memtrace report) is `python -m memtrace`, or the `memtrace`
command that pip installs."""
import contextlib
import ctypes

__all__ = ["mark", "marked", "flush", "active"]


def _lookup():
    try:
        process = ctypes.CDLL(None)
        mark_fn = process.memtrace_mark
        flush_fn = process.memtrace_flush
    except (AttributeError, OSError):
        return None, None
    mark_fn.argtypes = [ctypes.c_char_p]
    mark_fn.restype = None
    flush_fn.argtypes = []
    flush_fn.restype = ctypes.c_int
    return mark_fn, flush_fn


_mark, _flush = _lookup()


def active():
    """True when memtrace is preloaded into this process."""
    return _mark is not None


def mark(label):
    """Puts a mark named label (str) in the trace."""
    if _mark is not None:
        _mark(str(label).encode("utf-8", "replace"))


@contextlib.contextmanager
def marked(label):
    """Runs the block, then puts the mark label in the trace, also when the
    block raises: the mark stands for the moment the work is done, as the
    report reads "build 1", "build 2"... (what was live after each, and
    which sites grow from one to the next)."""
    try:
        yield
    finally:
        mark(label)


def flush():
    """Waits until every event so far is in the trace file. Returns True
    when they are, False when memtrace is not tracing this process."""
    return _flush is not None and _flush() == 0
